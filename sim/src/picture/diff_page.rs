//! A seed where two systems answered differently (`histsim diff`): each system a lane, each
//! read a row with both answers side by side and the differing lines marked.

use super::facts::ReadBox;
use super::html::{escape, lines_block, ms, page};
use std::fmt::Write as _;

/// The page of seed `seed` of `workload`, where `why` is the first difference, with each side's
/// name and reads.
pub fn diff_page(
    seed: u64,
    workload: &str,
    why: &str,
    replay_command: &str,
    sides: [(&str, &[ReadBox]); 2],
) -> String {
    let [(a, reads_a), (b, reads_b)] = sides;
    let mut body = format!(
        "<h1>histsim diff: seed {seed} ({} workload)</h1><div class=\"verdict fail\" id=\"verdict\"><b>different</b>:<pre>{}</pre></div>\
         <h2>Replay</h2><code class=\"cmd\" id=\"replay\">{}</code><h2>Answers</h2>",
        escape(workload),
        escape(why),
        escape(replay_command)
    );
    let _ = write!(
        body,
        "<div class=\"lanes\"><span class=\"t\">sim time</span><div class=\"lane-head\" data-lane=\"{}\" style=\"width:45%\">{}</div>\
         <div class=\"lane-head\" data-lane=\"{}\" style=\"width:45%\">{}</div></div>",
        escape(a),
        escape(a),
        escape(b),
        escape(b)
    );
    let mut first = None;
    for i in 0..reads_a.len().max(reads_b.len()) {
        let (ra, rb) = (reads_a.get(i), reads_b.get(i));
        let differ = ra.map(|r| &r.answer) != rb.map(|r| &r.answer);
        if differ && first.is_none() {
            first = Some(i);
        }
        body.push_str(&pair_html(i, ra, rb, differ));
    }
    if let Some(i) = first {
        body = body.replacen(
            "<h2>Answers</h2>",
            &format!("<h2>Answers</h2><p><a href=\"#read-{i}\" id=\"first-departure-link\">the first read the two systems answered differently</a></p>"),
            1,
        );
    }
    page(&format!("histsim diff seed {seed}"), &body)
}

fn pair_html(i: usize, a: Option<&ReadBox>, b: Option<&ReadBox>, differ: bool) -> String {
    let empty: Vec<String> = Vec::new();
    let la = a.map_or(&empty, |r| &r.answer);
    let lb = b.map_or(&empty, |r| &r.answer);
    let head = a.or(b).map_or(String::new(), |r| {
        format!(
            "{} {} at {}",
            escape(&r.lane),
            escape(&r.label),
            ms(r.at_us)
        )
    });
    format!(
        "<div class=\"box read{}\" id=\"read-{i}\"><h4>{head}{}</h4><div class=\"pair\"><div class=\"answer side-a\">{}</div><div class=\"answer side-b\">{}</div></div></div>",
        if differ { " departs" } else { "" },
        if differ { " — the systems differ" } else { "" },
        lines_block(la, &|k| lb.get(k) != la.get(k), "answer"),
        lines_block(lb, &|k| la.get(k) != lb.get(k), "answer"),
    )
}
