//! What a display world's page shows beside its trace: every answer of a replica with the
//! expectation the checks hold it to (the rows stored by then for an early read, the model's
//! transcript once settled).

use super::context::EarlyExpectation;
use super::view::{view_of_model, view_of_projection, ViewMessage, ViewPart};
use super::world::Read;
use crate::picture::{Facts, ReadBox};
use model::display as m;

/// The facts of a played display world; `early` is empty when the world broke.
pub fn facts(
    reads: &[Read],
    early: &[Option<EarlyExpectation>],
    transcript: &m::Transcript,
) -> Facts {
    let settled = lines(&view_of_model(&transcript.messages));
    let reads = reads
        .iter()
        .enumerate()
        .map(|(i, read)| {
            let (expected_label, expected) = match early.get(i).and_then(Option::as_ref) {
                Some(e) => ("the model of the rows stored by then", lines(&e.shared)),
                None => ("the model's transcript", settled.clone()),
            };
            let label = match (read.turn, read.settled) {
                (Some(t), _) => format!("turn {t}"),
                (None, true) => "settled read".to_string(),
                (None, false) => "poll after healing".to_string(),
            };
            // The messages are what the checks compare with the model; the warnings are shown
            // after them.
            let (answer, departs) = match &read.result {
                Ok(p) => {
                    let mut l = lines(&view_of_projection(&p.messages));
                    let departs = l != expected;
                    l.extend(p.warnings.iter().map(|w| format!("warning   {}", w.text)));
                    (l, departs)
                }
                Err(e) => (vec![format!("error     {e}")], true),
            };
            ReadBox {
                departs,
                at_us: read.at_us,
                lane: format!("replica-{}", read.replica),
                label,
                answer,
                expected_label: expected_label.to_string(),
                expected,
            }
        })
        .collect();
    Facts {
        reads,
        ..Facts::default()
    }
}

/// One line a message: its role and its parts.
fn lines(view: &[ViewMessage]) -> Vec<String> {
    view.iter()
        .map(|m| {
            let parts: Vec<String> = m
                .parts
                .iter()
                .map(|p| match p {
                    ViewPart::Text(t) => t.trim_end().to_string(),
                    ViewPart::Image(u) => format!("[image {u}]"),
                    ViewPart::Audio { format, data } => format!("[audio {format} {data}]"),
                })
                .collect();
            format!("{:<9} {}", m.role, parts.join(" "))
        })
        .collect()
}
