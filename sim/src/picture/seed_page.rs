//! One played world as a page: the verdict and the violation on top (linked to the first read
//! that departed from the model), the options, the replay command, then the timeline with each
//! read, crash strip and recovered history in its place.

use super::facts::{Facts, ReadBox, Recovered};
use super::html::{escape, lines_block, ms, page};
use super::strip::strip_html;
use super::timeline::{Row, Timeline};
use crate::outcome::Violation;
use std::fmt::Write as _;

/// The width of one lane, in CSS pixels.
pub(super) const LANE_PX: usize = 150;
/// The longest event text a row shows; its tooltip shows more, up to the second bound (a
/// protocol line may carry a thousand rows).
const LABEL_CHARS_MAX: usize = 110;
const TOOLTIP_CHARS_MAX: usize = 1000;

/// What a seed's page shows.
pub struct SeedPicture<'a> {
    /// `seed 7` or `scenario scenarios/display/p4.toml`.
    pub title: String,
    pub workload: &'a str,
    pub options: &'a str,
    pub violations: &'a [Violation],
    pub failure: Option<&'a str>,
    pub replay_command: String,
    pub trace: &'a [String],
    pub facts: &'a Facts,
}

/// The whole page of `p`.
pub fn seed_page(p: &SeedPicture<'_>) -> String {
    let timeline = Timeline::of_trace(p.trace);
    let first = p.facts.reads.iter().position(ReadBox::departs);
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>histsim: {} ({} workload)</h1>",
        escape(&p.title),
        escape(p.workload)
    );
    body.push_str(&verdict_html(p, first));
    let _ = write!(
        body,
        "<h2>Replay</h2><code class=\"cmd\" id=\"replay\">{}</code>",
        escape(&p.replay_command)
    );
    let _ = write!(
        body,
        "<details id=\"options\"><summary>Options the seed derived</summary><pre>{}</pre></details>",
        escape(if p.options.is_empty() { "(a scenario file: no derived options)" } else { p.options })
    );
    let _ = write!(
        body,
        "<h2>Timeline</h2><p>{} events in {} rows (repeats folded, ×N), {} reads, {} of them departing from the model. \
         Time runs down the page in simulated ms.</p>",
        timeline.events,
        timeline.rows.len(),
        p.facts.reads.len(),
        p.facts.reads.iter().filter(|r| r.departs()).count()
    );
    body.push_str(LEGEND);
    body.push_str(&timeline_html(timeline, p.facts, first));
    page(&p.title, &body)
}

const LEGEND: &str = "<p class=\"legend\"><span class=\"row fault\">fault</span>\
<span style=\"color:#b00020\">drop</span><span style=\"color:#7b1fa2\">duplicate</span>\
<span style=\"color:#8d6e00\">held</span><span><mark>differs from the model</mark></span>\
<span class=\"strip\" style=\"display:inline-flex;height:auto\"><span class=\"synced\">synced</span>\
<span class=\"unsynced\">unsynced</span><span class=\"torn\">torn</span><span class=\"lost\">lost</span></span></p>\
<svg width=\"0\" height=\"0\" style=\"position:absolute\"><defs><marker id=\"ah\" viewBox=\"0 0 10 10\" \
refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">\
<path d=\"M0,0L10,5L0,10z\" fill=\"#333\"/></marker></defs></svg>";

/// The verdict box: each violation, and a link to the first read that departed.
fn verdict_html(p: &SeedPicture<'_>, first: Option<usize>) -> String {
    let mut out = String::new();
    let failed = !p.violations.is_empty() || p.failure.is_some();
    let _ = write!(
        out,
        "<div class=\"verdict {}\" id=\"verdict\">",
        if failed { "fail" } else { "pass" }
    );
    if !failed {
        out.push_str("<b>passed</b>: every answer matched the model.");
    }
    for v in p.violations {
        let _ = write!(
            out,
            "<div class=\"violation\" data-id=\"{}\"><b>violation {}</b>{}</div>",
            v.id,
            escape(&v.to_string()),
            first_wrong_html(v, p.facts)
        );
    }
    if let Some(f) = p.failure {
        let _ = write!(
            out,
            "<div class=\"failure\"><b>broken world</b>: {}</div>",
            escape(f)
        );
    }
    let first_recovered = p
        .facts
        .recovered
        .iter()
        .position(|r| r.recovered != r.model);
    match first {
        None if first_recovered.is_some() => {
            let i = first_recovered.unwrap_or_default();
            let r = &p.facts.recovered[i];
            let _ = write!(
                out,
                "<div><a href=\"#recovered-{i}\" id=\"first-departure-link\">the first history recovered unlike the model's: {} ({})</a></div>",
                escape(&r.label),
                escape(&r.lane)
            );
        }
        Some(i) => {
            let r = &p.facts.reads[i];
            let _ = write!(
                out,
                "<div><a href=\"#read-{i}\" id=\"first-departure-link\">the first read where the answer departed from the model: {} of {} at {}</a></div>",
                escape(&r.label),
                escape(&r.lane),
                ms(r.at_us)
            );
        }
        None if failed => out.push_str(
            "<div>No read departed from the model in what this page shows: the violation is in the checks' message above and the strips and histories below.</div>",
        ),
        None => {}
    }
    out.push_str("</div>");
    out
}

/// A violation's first wrong answer, linked to its read's box when the page draws one (a
/// departing read answered at the same simulated time); empty when the violation names none.
fn first_wrong_html(v: &Violation, facts: &Facts) -> String {
    let Some(d) = &v.first_divergence else {
        return v.first_wrong_answer().map_or(String::new(), |w| {
            format!(
                "<div class=\"first-wrong\">{}</div>",
                escape(&format!("first wrong answer: {w}"))
            )
        });
    };
    let text = escape(&format!("first wrong answer: {d}"));
    let read = facts
        .reads
        .iter()
        .position(|r| r.at_us == d.at_us && r.departs());
    match read {
        Some(i) => format!(
            "<div class=\"first-wrong\"><a href=\"#read-{i}\" class=\"first-wrong-link\">{text}</a></div>"
        ),
        None => format!("<div class=\"first-wrong\">{text}</div>"),
    }
}

/// The lane heads and every row, with the facts placed by their time.
fn timeline_html(t: Timeline, facts: &Facts, first: Option<usize>) -> String {
    let width = t.lanes.len().max(1) * LANE_PX;
    let mut out = String::from("<div class=\"lanes\"><span class=\"t\">sim time</span>");
    for (i, lane) in t.lanes.iter().enumerate() {
        let _ = write!(
            out,
            "<div class=\"lane-head\" data-lane=\"{}\" id=\"lane-{i}\" style=\"width:{LANE_PX}px\">{}</div>",
            escape(lane),
            escape(lane)
        );
    }
    let _ = write!(
        out,
        "</div><div class=\"timeline\" style=\"background:repeating-linear-gradient(to right,transparent 0 {half}px,#ddd {half}px {px}px,transparent {px}px {LANE_PX}px);background-position-x:104px;background-repeat:repeat-y;background-size:{w}px 100%\">",
        half = LANE_PX / 2,
        px = LANE_PX / 2 + 1,
        w = width + 104,
    );
    let mut placed = Placed::default();
    for (k, row) in t.rows.iter().enumerate() {
        placed.before(Some(row), facts, first, &mut out);
        out.push_str(&row_html(k, row, &t, width));
    }
    placed.before(None, facts, first, &mut out);
    out.push_str("</div>");
    out
}

/// How many of each kind of fact are already placed in the timeline.
#[derive(Default)]
struct Placed {
    reads: usize,
    strips: usize,
    recovered: usize,
    /// Per lane, the last read drawn in full: a read answering and expecting the same is
    /// drawn as one line (polling repeats its answer).
    last_read: std::collections::BTreeMap<String, usize>,
}

impl Placed {
    /// Places every fact due before `row` (every one left, at the end) not yet placed.
    fn before(&mut self, row: Option<&Row>, facts: &Facts, first: Option<usize>, out: &mut String) {
        let due = |at_us: u64, after_events: Option<u64>| match (row, after_events) {
            (None, _) => true,
            (Some(row), Some(n)) => n <= row.first_event,
            (Some(row), None) => at_us <= row.at_us,
        };
        while let Some(r) = facts.reads.get(self.reads).filter(|r| due(r.at_us, None)) {
            let last = self.last_read.get(&r.lane).map(|&i| &facts.reads[i]);
            if last.is_some_and(|l| l.answer == r.answer && l.expected == r.expected) {
                out.push_str(&repeated_read_html(self.reads, r));
            } else {
                out.push_str(&read_html(self.reads, r, first == Some(self.reads)));
                self.last_read.insert(r.lane.clone(), self.reads);
            }
            self.reads += 1;
        }
        while let Some(s) = (facts.strips.get(self.strips)).filter(|s| due(s.at_us, s.after_events))
        {
            out.push_str(&strip_html(self.strips, s));
            self.strips += 1;
        }
        while let Some(r) =
            (facts.recovered.get(self.recovered)).filter(|r| due(r.at_us, r.after_events))
        {
            out.push_str(&recovered_html(self.recovered, r));
            self.recovered += 1;
        }
    }
}

fn row_html(k: usize, row: &Row, t: &Timeline, width: usize) -> String {
    let x = |lane: usize| lane * LANE_PX + LANE_PX / 2;
    // A fault that names its hosts is a band across their lanes only; else across the row.
    let class = if row.fault_lanes.is_empty() {
        row.kind.class()
    } else {
        "fault-lanes"
    };
    let mut out = format!(
        "<div class=\"row {class}\" id=\"e{k}\" data-lane=\"{}\"><span class=\"t\">{}</span><div class=\"cells\" style=\"width:{width}px\">",
        escape(&t.lanes[row.lane]),
        ms(row.at_us)
    );
    for lane in &row.fault_lanes {
        let _ = write!(
            out,
            "<div class=\"band\" data-lane=\"{}\" style=\"left:{}px;width:{LANE_PX}px\"></div>",
            escape(&t.lanes[*lane]),
            lane * LANE_PX
        );
    }
    if let Some((from, to)) = row.arrow.filter(|(from, to)| from != to) {
        let _ = write!(
            out,
            "<svg class=\"arrow\" data-from=\"{}\" data-to=\"{}\" width=\"{width}\" height=\"18\"><line x1=\"{}\" y1=\"16\" x2=\"{}\" y2=\"16\" stroke=\"{}\" marker-end=\"url(#ah)\"/></svg>",
            escape(&t.lanes[from]),
            escape(&t.lanes[to]),
            x(from),
            x(to),
            if row.kind == super::timeline::Kind::Duplicate { "#7b1fa2" } else { "#999" }
        );
    }
    let text: String = row.text.chars().take(LABEL_CHARS_MAX).collect();
    let tooltip: String = row.text.chars().take(TOOLTIP_CHARS_MAX).collect();
    let repeat = if row.count > 1 {
        format!(
            " <span class=\"rep\">×{} until {}</span>",
            row.count,
            ms(row.last_us)
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "<span class=\"lbl\" style=\"left:{}px\" title=\"{}\">{}{repeat}</span></div></div>",
        row.lane * LANE_PX + 4,
        escape(&tooltip),
        escape(&text)
    );
    out
}

/// A read's box: the answer beside the model's expectation, differing lines marked.
fn read_html(i: usize, r: &ReadBox, first: bool) -> String {
    let departs = r.departs();
    let class = match (departs, first) {
        (true, true) => "box read departs first",
        (true, false) => "box read departs",
        _ => "box read",
    };
    let differs = |mine: &[String], other: &[String], k: usize| other.get(k) != mine.get(k);
    format!(
        "<div class=\"{class}\" id=\"read-{i}\" data-lane=\"{}\"><h4>{} {} at {}{}</h4><div class=\"pair\">\
         <div class=\"answer\"><h4>the system answered</h4>{}</div><div class=\"expected\"><h4>{}</h4>{}</div></div></div>",
        escape(&r.lane),
        escape(&r.lane),
        escape(&r.label),
        ms(r.at_us),
        if departs { " — departs from the model" } else { "" },
        lines_block(&r.answer, &|k| differs(&r.answer, &r.expected, k), "answer"),
        escape(&r.expected_label),
        lines_block(&r.expected, &|k| differs(&r.expected, &r.answer, k), "expected"),
    )
}

/// A read that answered and expected what the lane's previous read did: one line.
fn repeated_read_html(i: usize, r: &ReadBox) -> String {
    format!(
        "<div class=\"row read-again\" id=\"read-{i}\" data-lane=\"{}\"><span class=\"t\">{}</span><span class=\"rep\">{} {}: the same answer and expectation as its previous read{}</span></div>",
        escape(&r.lane),
        ms(r.at_us),
        escape(&r.lane),
        escape(&r.label),
        if r.departs() { " (departs from the model)" } else { "" }
    )
}

/// A history a restart recovered beside the model's.
fn recovered_html(i: usize, r: &Recovered) -> String {
    let differs = |mine: &[String], other: &[String], k: usize| other.get(k) != mine.get(k);
    let departs = r.recovered != r.model;
    format!(
        "<div class=\"box recovered{}\" id=\"recovered-{i}\" data-lane=\"{}\"><h4>{} {} at {}</h4><div class=\"pair\">\
         <div class=\"answer\"><h4>recovered</h4>{}</div><div class=\"expected\"><h4>{}</h4>{}</div></div></div>",
        if departs { " departs" } else { "" },
        escape(&r.lane),
        escape(&r.lane),
        escape(&r.label),
        ms(r.at_us),
        lines_block(&r.recovered, &|k| differs(&r.recovered, &r.model, k), "answer"),
        escape(&r.model_label),
        lines_block(&r.model, &|k| differs(&r.model, &r.recovered, k), "expected"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(at_us: u64, lane: &str, answer: &[&str], expected: &[&str]) -> ReadBox {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ReadBox {
            at_us,
            lane: lane.into(),
            label: format!("read at {at_us}"),
            answer: lines(answer),
            expected_label: "the model".into(),
            expected: lines(expected),
            departs: answer != expected,
        }
    }

    fn picture<'a>(trace: &'a [String], facts: &'a Facts) -> SeedPicture<'a> {
        SeedPicture {
            title: "seed 1".into(),
            workload: "display",
            options: "replicas = 3\n",
            violations: &[],
            failure: None,
            replay_command: "histsim replay --seed 1".into(),
            trace,
            facts,
        }
    }

    #[test]
    fn the_link_lands_on_the_first_departing_read_and_repeats_are_one_line() {
        let trace = vec!["      10us client poll".to_string(); 3];
        let facts = Facts {
            reads: vec![
                read(10, "replica-0", &["user a"], &["user a"]),
                read(20, "replica-0", &["user a", "user a"], &["user a"]),
                read(30, "replica-0", &["user a", "user a"], &["user a"]),
            ],
            ..Facts::default()
        };
        let html = seed_page(&picture(&trace, &facts));
        assert!(html.contains("href=\"#read-1\" id=\"first-departure-link\""));
        assert!(html.contains("class=\"box read departs first\" id=\"read-1\""));
        assert!(html.contains("class=\"row read-again\" id=\"read-2\""));
        assert!(
            html.contains("<mark>user a</mark>"),
            "the extra line is marked"
        );
    }

    #[test]
    fn a_ten_thousand_event_seed_with_long_polled_answers_stays_under_5_mb() {
        let trace: Vec<String> = (0..10_000u64)
            .map(|i| match i % 4 {
                0 => format!(
                    "{:>9}us agents emit step={i} event_id=6553f{i:019x} bytes=500",
                    i * 100
                ),
                1 => format!(
                    "{:>9}us replica-{} persist step={i} copy={} stored",
                    i * 100,
                    i % 5,
                    i % 3
                ),
                _ => format!(
                    "{:>9}us replica-{} answer turn=settled ok=true shows=e492dd32",
                    i * 100,
                    i % 5
                ),
            })
            .collect();
        let answer: Vec<String> = (0..400).map(|k| format!("assistant c{k}a c{k}b")).collect();
        let answer: Vec<&str> = answer.iter().map(String::as_str).collect();
        let reads = (0..2_000u64)
            .map(|i| {
                read(
                    i * 500,
                    &format!("replica-{}", i % 5),
                    &answer,
                    &answer[1..],
                )
            })
            .collect();
        let facts = Facts {
            reads,
            ..Facts::default()
        };
        let html = seed_page(&picture(&trace, &facts));
        assert!(html.len() < 5_000_000, "{} bytes", html.len());
    }

    #[test]
    fn a_violation_shows_its_first_wrong_answer_linked_to_its_read() {
        let trace = vec!["      20us client poll".to_string()];
        let facts = Facts {
            reads: vec![
                read(10, "replica-0", &["a"], &["a"]),
                read(20, "replica-1", &["a", "a"], &["a"]),
            ],
            ..Facts::default()
        };
        let d = crate::divergence::Divergence::of("history read", 7, 20, "replica-1")
            .answers("a, a", "a");
        let violations = [Violation::safety(history::BugId::P4, "twice").diverged_at(d)];
        let page = seed_page(&SeedPicture {
            violations: &violations,
            ..picture(&trace, &facts)
        });
        let verdict = page.split("id=\"verdict\"").nth(1).expect("a verdict");
        assert!(
            verdict.contains("<a href=\"#read-1\" class=\"first-wrong-link\">first wrong answer: history read (request 7 at 20us, replica-1)"),
            "{verdict}"
        );
        let elsewhere =
            crate::divergence::Divergence::of("delete_by_run", 9, 99, "the sqlite store");
        let violations = [Violation::safety(history::BugId::R15, "left").diverged_at(elsewhere)];
        let page = seed_page(&SeedPicture {
            violations: &violations,
            ..picture(&trace, &facts)
        });
        assert!(
            page.contains(
                "<div class=\"first-wrong\">first wrong answer: delete_by_run (request 9 at 99us"
            ),
            "{page}"
        );
    }
}
