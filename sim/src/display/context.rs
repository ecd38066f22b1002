//! What the display checker rules share about one played world: the scenario, the model, the
//! answers, where each word came from, and the settled answer the settled rules compare.

use super::faults::FaultPlan;
use super::provenance::{is_decoy_marker, provenance, Kind, Provenance};
use super::record::{AppendError, WorldRecord};
use super::scenario::{DisplayScenario, Event, Step};
use super::view::{view_of_model, view_of_projection, words, ViewMessage};
use super::word_diff::WordDiff;
use history::display::Projection;
use model::display as m;
use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// One answer of a replica, as the world recorded it.
pub use super::world::Read;

/// What a read before settling must show.
/// Reads between the same two deliveries expect the same model: each is shared, not copied.
pub struct EarlyExpectation {
    /// The model of the rows in the shared store by then: what the read must equal.
    pub shared: Rc<Vec<ViewMessage>>,
    /// The model of the rows the reading replica's own persister had received by then: a read
    /// equal to this (and not to `shared`) came from a replica-local view (P12).
    pub own: Rc<Vec<ViewMessage>>,
}

/// A settled answer's view (or the error it answered with), and how many trailing messages of a
/// live buffer were cut off it.
pub type SettledView = (Result<Vec<ViewMessage>, String>, Option<usize>);

/// The played world and what the checker rules share about it.
pub struct Context<'a> {
    pub scenario: &'a DisplayScenario,
    pub conversation: &'a m::Conversation,
    pub transcript: &'a m::Transcript,
    pub reads: &'a [Read],
    pub early_expected: &'a [Option<EarlyExpectation>],
    /// Every delivery a replica's store answered with an error (P15).
    pub append_errors: &'a [AppendError],
    /// What the system's `project` made of the rows the store holds, once the world ended.
    pub projected: Option<&'a Result<Projection, String>>,
    pub provenance: Provenance<'a>,
    /// Display keys visible per the model.
    pub visible: BTreeSet<String>,
    /// Display keys holding a look-alike marker.
    pub decoy_marker_displays: BTreeSet<String>,
    /// Display keys where the user spoke (a user message or a HITL answer, of any agent class).
    pub interactive_displays: BTreeSet<String>,
    /// The reads of the last round of polls.
    pub settled: Vec<&'a Read>,
    /// Per settled read: its view, with a live buffer's trailing messages (P14) cut off, and the
    /// number cut.
    pub settled_views: Vec<SettledView>,
    pub expected: Vec<ViewMessage>,
    /// The first settled answer, when it succeeded: what the settled rules compare.
    pub answer: Option<(&'a Projection, Vec<ViewMessage>)>,
    /// The settled answer's words against the model's, once a word rule made them.
    pub word_diff: OnceCell<Option<WordDiff>>,
    /// Where findings about the settled history point, once one asked
    /// ([`super::departure::settled_pointer`]).
    pub departure: OnceCell<crate::outcome::Pointer>,
}

impl<'a> Context<'a> {
    /// Whether the model expects the thread to show no visible display (P9's warning).
    pub fn expects_no_display(&self) -> bool {
        (self.transcript.expected_warnings.iter()).any(|w| w.code == m::code::NO_VISIBLE_DISPLAY)
    }

    pub fn new(
        scenario: &'a DisplayScenario,
        plan: &FaultPlan,
        conversation: &'a m::Conversation,
        transcript: &'a m::Transcript,
        record: &'a WorldRecord,
        early_expected: &'a [Option<EarlyExpectation>],
    ) -> Self {
        let reads = &record.reads[..];
        let visible_ids = m::visible_displays(conversation);
        let user_spoke = |s: &&Step| {
            matches!(
                s.event,
                Event::UserMessage { .. } | Event::HitlAnswer { .. }
            )
        };
        let mut cx = Context {
            scenario,
            conversation,
            transcript,
            reads,
            early_expected,
            append_errors: &record.append_errors,
            projected: record.projected.as_ref(),
            provenance: provenance(scenario, plan),
            visible: scenario
                .displays
                .iter()
                .filter(|(_, id)| visible_ids.contains(*id))
                .map(|(k, _)| k.clone())
                .collect(),
            decoy_marker_displays: scenario
                .steps()
                .filter(|s| is_decoy_marker(scenario, s))
                .map(|s| s.display.clone())
                .collect(),
            interactive_displays: scenario
                .steps()
                .filter(user_spoke)
                .map(|s| s.display.clone())
                .collect(),
            settled: reads.iter().filter(|r| r.settled).collect(),
            settled_views: Vec::new(),
            expected: view_of_model(&transcript.messages),
            answer: None,
            word_diff: OnceCell::new(),
            departure: OnceCell::new(),
        };
        cx.settled_views = cx.settled.iter().map(|r| cx.settled_view(r)).collect();
        if let (Some(&first), Some((Ok(actual), _))) =
            (cx.settled.first(), cx.settled_views.first())
        {
            if let Ok(projection) = &first.result {
                cx.answer = Some((projection, actual.clone()));
            }
        }
        cx
    }

    /// A settled answer's view; one that is the model's plus trailing messages repeating earlier
    /// text is a live buffer that outlived its run (P14), not a replica reading a different
    /// store, so it is compared as the model's.
    fn settled_view(&self, read: &Read) -> SettledView {
        match &read.result {
            Ok(p) => {
                let view = view_of_projection(&p.messages);
                match overlay_tail(self, &view, &self.expected) {
                    Some(extra) => (Ok(self.expected.clone()), Some(extra)),
                    None => (Ok(view), None),
                }
            }
            Err(e) => (Err(e.clone()), None),
        }
    }
}

pub fn turn_label(read: &Read) -> String {
    match (read.turn, read.settled) {
        (Some(t), _) => format!("turn {t}"),
        (None, true) => "settled".into(),
        (None, false) => "poll after healing".into(),
    }
}

/// When `answered` is `expected` followed by assistant messages made only of streamed chunk text
/// (a live buffer's signature), the number of those messages.
pub fn overlay_tail(
    cx: &Context<'_>,
    answered: &[ViewMessage],
    expected: &[ViewMessage],
) -> Option<usize> {
    if answered.len() <= expected.len() || answered[..expected.len()] != *expected {
        return None;
    }
    let tail = &answered[expected.len()..];
    let earlier: BTreeSet<String> = words(expected).into_iter().map(|(_, w)| w).collect();
    let repeats_chunks = tail.iter().all(|m| m.role == "assistant")
        && words(tail).iter().all(|(_, w)| {
            let chunk = cx
                .provenance
                .sources(w)
                .iter()
                .any(|s| s.kind == Kind::Chunk);
            let skipped = cx
                .provenance
                .sources(w)
                .iter()
                .any(|s| s.kind == Kind::Chunk && s.defective);
            chunk && (earlier.contains(w) || skipped)
        });
    repeats_chunks.then_some(tail.len())
}
