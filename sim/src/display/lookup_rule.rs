//! P16: a history read finds the thread under the id persistence stored it under. A thread's
//! rows are stored under its canonical id (docs/display-projection.md, "Thread ids": surrounding
//! whitespace trimmed, a UUID in any spelling as its lower-case hyphenated form), and a read that
//! names the thread in any accepted spelling must find them. A read of a thread that has a
//! visible display, answering that it has none, did not find it.
//!
//! The canonical form is computed here from the rule's words, with the `uuid` parser, never with
//! the code under test.

use super::context::Context;
use super::departure::settled_pointer;
use crate::outcome::Findings;
use history::BugId;
use model::display as m;

/// The thread id as the rule says persistence stores it.
fn canonical(thread_id: &str) -> String {
    let trimmed = thread_id.trim();
    match uuid::Uuid::try_parse(trimmed) {
        Ok(parsed) => parsed.hyphenated().to_string(),
        Err(_) => trimmed.to_string(),
    }
}

/// P16: the settled read of a thread spelled otherwise than its canonical id found it.
pub fn reads_find_the_thread(cx: &Context<'_>, f: &mut Findings) {
    let Some((projection, _)) = &cx.answer else {
        return;
    };
    let sent = &cx.scenario.thread_id;
    let stored_under = canonical(sent);
    if stored_under == *sent {
        return;
    }
    let expects_no_display = cx.expects_no_display();
    let found_none = projection
        .warnings
        .iter()
        .any(|w| w.code.as_str() == m::code::NO_VISIBLE_DISPLAY);
    if found_none && !expects_no_display {
        f.add_at(
            BugId::P16,
            settled_pointer(cx, &[]),
            format!(
                "the read of thread {sent:?} found no visible display: its rows are stored under the canonical id {stored_under:?}, which the read must look up"
            ),
        );
    }
}
