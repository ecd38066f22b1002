//! A fuzzing campaign as a page (`index.html` beside `histsim fuzz run`'s summary): what it
//! found, its figures, and its coverage (edges and features) over time as two line charts.

use super::html::{escape, page};
use crate::fuzz::coverage_series::CoveragePoint;
use crate::fuzz::summary::FuzzSummary;
use std::fmt::Write as _;

/// The charts' plotting area, in CSS pixels.
const CHART_W: u64 = 640;
const CHART_H: u64 = 140;
/// Room left of and below the plotting area for the axis labels.
const MARGIN_LEFT: u64 = 60;
const MARGIN_BOTTOM: u64 = 20;

/// The whole page.
pub fn fuzz_page(s: &FuzzSummary) -> String {
    let found = !s.violations.is_empty() || s.failure.is_some();
    let verdict = match (s.violations.len(), &s.failure) {
        (0, Some(f)) => format!("FAILED: the fuzzer failed: {}", escape(f)),
        (0, None) => "no violation".to_string(),
        (n, _) => {
            let ids: Vec<String> = (s.violations.iter())
                .map(|v| v.id.map_or("a broken world".into(), |i| i.to_string()))
                .collect();
            format!("FAILED: {n} violation(s): {}", escape(&ids.join(", ")))
        }
    };
    let figure = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut body = format!(
        "<h1>histsim fuzz run {}</h1><div class=\"verdict {}\" id=\"verdict\"><b>{verdict}</b>; target {}, workload {}, {:.1} s of a {} s budget</div>\
         <p id=\"figures\">{} executions, {} edges, {} features, corpus {} inputs ({} files)</p>",
        escape(&s.name),
        if found { "fail" } else { "pass" },
        escape(&s.target),
        escape(&s.workload),
        s.elapsed_s,
        s.budget_s,
        figure(s.libfuzzer.executions),
        figure(s.libfuzzer.edges),
        figure(s.libfuzzer.features),
        figure(s.libfuzzer.corpus_size),
        s.corpus_files,
    );
    body.push_str("<h2>Coverage over time</h2>");
    if s.coverage_over_time.is_empty() {
        body.push_str("<p id=\"coverage-over-time\">libFuzzer's log showed no coverage figures while it ran</p>");
    } else {
        let _ = write!(
            body,
            "<p>libFuzzer's figures as its log showed them, sampled on the wall clock ({} points).</p><div id=\"coverage-over-time\">{}{}</div>",
            s.coverage_over_time.len(),
            line_chart("edges", &s.coverage_over_time, |p| p.edges),
            line_chart("features", &s.coverage_over_time, |p| p.features),
        );
    }
    let _ = write!(
        body,
        "<h2>Command</h2><code class=\"cmd\">{}</code>",
        escape(&s.command)
    );
    page(&format!("histsim fuzz run {}", s.name), &body)
}

/// One figure over time as an SVG line, its axis from 0 to the highest value.
fn line_chart(name: &str, points: &[CoveragePoint], value: fn(&CoveragePoint) -> u64) -> String {
    let last_s = points.iter().map(|p| p.at_s).max().unwrap_or(0).max(1);
    let top = points.iter().map(value).max().unwrap_or(0).max(1);
    let xy: Vec<String> = points
        .iter()
        .map(|p| {
            let x = MARGIN_LEFT + p.at_s * CHART_W / last_s;
            let y = CHART_H - value(p) * CHART_H / top;
            format!("{x},{}", y + 5)
        })
        .collect();
    format!(
        "<h3>{name}</h3><svg class=\"line-chart\" id=\"{name}-over-time\" width=\"{}\" height=\"{}\" role=\"img\">\
         <polyline class=\"series\" data-points=\"{}\" fill=\"none\" stroke=\"#3949ab\" stroke-width=\"2\" points=\"{}\"><title>{name}: {top} at most</title></polyline>\
         <line x1=\"{MARGIN_LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\
         <text x=\"0\" y=\"14\">{top}</text><text x=\"0\" y=\"{}\">0</text>\
         <text x=\"{MARGIN_LEFT}\" y=\"{}\">0 s</text><text x=\"{}\" y=\"{}\">{last_s} s</text></svg>",
        MARGIN_LEFT + CHART_W + 40,
        CHART_H + MARGIN_BOTTOM + 10,
        points.len(),
        xy.join(" "),
        CHART_H + 5,
        MARGIN_LEFT + CHART_W,
        CHART_H + 5,
        CHART_H + 5,
        CHART_H + MARGIN_BOTTOM + 5,
        MARGIN_LEFT + CHART_W - 20,
        CHART_H + MARGIN_BOTTOM + 5,
    )
}
