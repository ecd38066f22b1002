//! A campaign as a page (`reports/<name>/index.html`): the verdict, the speed and seeds a
//! second over time, every coverage probe with its count, the convergence times after healing
//! as a histogram, and the failing seeds with their pages.

use super::html::{escape, page};
use crate::report::Summary;
use std::fmt::Write as _;

/// The longest violation message the table of failing seeds shows.
const MESSAGE_CHARS_MAX: usize = 200;
/// How many bars the convergence histogram has at most.
const BINS_MAX: u64 = 20;
/// About how wide the chart of seeds over time is, in CSS pixels.
const CHART_PX: u64 = 800;

/// What the page shows of a campaign: its summary and which failing seeds have a page.
pub struct CampaignPicture<'a> {
    pub summary: &'a Summary,
    /// Failing seeds whose page (`seed-N.html`) was written beside the index.
    pub pages: &'a [u64],
}

/// The whole page.
pub fn campaign_page(c: &CampaignPicture<'_>) -> String {
    let s = c.summary;
    let failed = s.seeds_failed > 0
        || s.determinism
            .as_ref()
            .is_some_and(|d| !d.mismatches.is_empty());
    let verdict = match (s.seeds_run, failed) {
        (0, _) => "FAILED: no seed ran",
        (_, true) => "FAILED",
        _ => "passed",
    };
    let mut body = format!(
        "<h1>histsim campaign {}</h1><div class=\"verdict {}\" id=\"verdict\"><b>{verdict}</b>: {} seeds run ({}..{}), {} failed; workload {}, store {}{}</div>",
        escape(&s.campaign),
        if failed || s.seeds_run == 0 { "fail" } else { "pass" },
        s.seeds_run,
        s.seeds_start,
        s.seeds_end,
        s.seeds_failed,
        escape(&s.config.workload),
        escape(&s.config.store),
        s.config.planted.as_ref().map(|p| format!(", planted {}", escape(p))).unwrap_or_default()
    );
    let _ = write!(
        body,
        "<h2>Speed</h2><p id=\"speed\">{:.1} seeds/s, {:.0} steps/s over {:.1} s (wall clock: varies with the machine's load)</p>",
        s.seeds_per_second, s.steps_per_second, s.elapsed_s
    );
    body.push_str(&seeds_over_time_html(s));
    body.push_str(&histogram_html(s));
    body.push_str(&failures_html(c));
    body.push_str(&coverage_html(s));
    page(&format!("histsim campaign {}", s.campaign), &body)
}

fn failures_html(c: &CampaignPicture<'_>) -> String {
    let mut out = String::from("<h2>Failing seeds</h2>");
    if c.summary.failures.is_empty() {
        out.push_str("<p id=\"failures\">none</p>");
        return out;
    }
    out.push_str("<table id=\"failures\"><tr><th>seed</th><th>workload</th><th>first violation</th><th>page</th></tr>");
    for f in &c.summary.failures {
        let first = f
            .violations
            .first()
            .map(|v| v.to_string())
            .or_else(|| f.failure.clone())
            .unwrap_or_default();
        let mut first: String = first.chars().take(MESSAGE_CHARS_MAX).collect();
        if first.len() < f.violations.first().map_or(0, |v| v.to_string().len()) {
            first.push_str(" …");
        }
        let link = if c.pages.contains(&f.seed) {
            format!("<a href=\"seed-{0}.html\">seed-{0}.html</a>", f.seed)
        } else {
            "-".to_string()
        };
        let _ = write!(
            out,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{link}</td></tr>",
            f.seed,
            escape(&f.workload),
            escape(&first)
        );
    }
    out.push_str("</table>");
    out
}

/// Convergence after healing (simulated ms), one bar per bin, as an SVG.
fn histogram_html(s: &Summary) -> String {
    let times: Vec<u64> = s
        .seeds
        .iter()
        .filter_map(|l| l.converged_after_ms)
        .collect();
    let mut out = String::from("<h2>Convergence after healing (liveness)</h2>");
    if times.is_empty() {
        out.push_str("<p id=\"liveness\">no seed of this campaign has a healing phase (display and runs seeds do)</p>");
        return out;
    }
    let max = times.iter().copied().max().unwrap_or(0);
    let width = (max / BINS_MAX + 1).max(1);
    let bins = max / width + 1;
    let mut counts = vec![0u64; bins as usize];
    for t in &times {
        counts[(t / width) as usize] += 1;
    }
    let tallest = counts.iter().copied().max().unwrap_or(1).max(1);
    let (bar, height) = (36u64, 160u64);
    let _ = write!(
        out,
        "<p>{} seeds converged; simulated ms from healing every fault until every answer matched the model, in bins of {width} ms.</p>\
         <svg class=\"hist\" id=\"liveness\" width=\"{}\" height=\"{}\" role=\"img\">",
        times.len(),
        bins * bar + 20,
        height + 40
    );
    for (i, n) in counts.iter().enumerate() {
        let h = n * height / tallest;
        let x = i as u64 * bar + 10;
        let _ = write!(
            out,
            "<rect class=\"bin\" data-count=\"{n}\" x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{h}\"><title>{}–{} ms: {n} seeds</title></rect>\
             <text x=\"{x}\" y=\"{}\">{n}</text><text x=\"{x}\" y=\"{}\">{}</text>",
            height + 10 - h,
            bar - 4,
            i as u64 * width,
            (i as u64 + 1) * width - 1,
            height + 8 - h,
            height + 24,
            i as u64 * width
        );
    }
    out.push_str("</svg>");
    out
}

/// Seeds a second over the campaign, one bar per bucket of wall time, as an SVG.
fn seeds_over_time_html(s: &Summary) -> String {
    let Some(pace) = s.seeds_over_time.as_ref().filter(|p| !p.seeds.is_empty()) else {
        return "<p id=\"seeds-per-second\">no seeds over time: this report keeps none (written before they were kept)</p>".to_string();
    };
    let rates: Vec<f64> = pace.per_second().collect();
    let top = rates.iter().copied().fold(0.0, f64::max).max(1e-9);
    let bar = (CHART_PX / rates.len() as u64).clamp(3, 36);
    let height = 120u64;
    let mut out = format!(
        "<p>Seeds finished a second, in buckets of {} s of wall time (highest {top:.1} seeds/s).</p>\
         <svg class=\"hist pace\" id=\"seeds-per-second\" width=\"{}\" height=\"{}\" role=\"img\">",
        pace.bucket_s,
        rates.len() as u64 * bar + 60,
        height + 30
    );
    for (i, (rate, n)) in rates.iter().zip(&pace.seeds).enumerate() {
        let h = ((rate / top) * height as f64).round() as u64;
        let from_s = i as u64 * pace.bucket_s;
        let _ = write!(
            out,
            "<rect class=\"pace-bar\" data-seeds=\"{n}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{h}\"><title>{from_s}–{} s: {n} seeds, {rate:.1} seeds/s</title></rect>",
            i as u64 * bar + 50,
            height + 5 - h,
            bar.saturating_sub(1).max(1),
            from_s + pace.bucket_s
        );
    }
    let _ = write!(
        out,
        "<text x=\"0\" y=\"14\">{top:.1}/s</text><text x=\"0\" y=\"{}\">0</text><text x=\"50\" y=\"{}\">0 s</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} s</text></svg>",
        height + 5,
        height + 22,
        rates.len() as u64 * bar + 50,
        height + 22,
        rates.len() as u64 * pace.bucket_s
    );
    out
}

fn coverage_html(s: &Summary) -> String {
    let mut out = format!(
        "<h2>Coverage probes</h2><p>{} probes, {} never fired.</p><table id=\"coverage\"><tr><th>probe</th><th>fired</th></tr>",
        s.coverage.len(),
        s.coverage_never_fired.len()
    );
    for (probe, n) in &s.coverage {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n{}\">{n}</td></tr>",
            escape(probe),
            if *n == 0 { " zero" } else { "" }
        );
    }
    out.push_str("</table>");
    out
}
