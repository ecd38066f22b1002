//! The rules about what reads show, R1, R2, R7, R10, R6 and R8: both views and paging are every
//! message the runs emitted, in order, as the model says as of the read; ids are uuid5 or the
//! model's and stable; every rating lands on its run.

use super::context::{of_rendered, of_row, short, Context};
use super::truth::Snapshots;
use super::wording::{at_rating, listed, or_none, Asked};
use crate::outcome::{Findings, Pointer};
use crate::runs::record::{Answer, RatedFrom, Read, ReadKind};
use history::runs::{content_text, MessageView, RunEvent, ThreadHistory};
use history::BugId;
use model::runs::{ExpectedMessage, HistoryMismatch, RunOutcome, RunTruth};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The opening of the summary message summarization puts in the checkpoint (the seed's text).
const SUMMARY_OPENING: &str = "Here is a summary of the conversation to date";

/// R1, R2, R7: every full read (both views, paging) is every message the runs emitted, in
/// order, as the model says as of the read.
pub fn reads_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for read in cx.record.log.reads() {
        match &read.kind {
            ReadKind::Views {
                count,
                history,
                messages,
            } => {
                let count = count.primary(cx.primary).as_ref().ok().copied();
                let of = ViewsOf::of(cx, read, snapshots.before(read.op), count);
                let (history, messages) =
                    (history.primary(cx.primary), messages.primary(cx.primary));
                views_match(&Asked::of(cx, read), &of, history, messages, f);
            }
            ReadKind::Paginate {
                limit,
                backward,
                count,
                rows,
            } => {
                let truth = snapshots.before(read.op);
                if let (Ok(rows), Ok(count)) = (rows.primary(cx.primary), count.primary(cx.primary))
                {
                    let of = ViewsOf::of(cx, read, truth, Some(*count));
                    let direction = if *backward { "backward" } else { "forward" };
                    paging_matches(&Asked::of(cx, read), &of, (*limit, direction), rows, f);
                }
            }
            ReadKind::Page { .. }
            | ReadKind::Events { .. }
            | ReadKind::RunMessages { .. }
            | ReadKind::FilteredEvents { .. }
            | ReadKind::LastAnswers { .. }
            | ReadKind::UserMessages { .. }
            | ReadKind::DefaultScopeMessages { .. } => {}
        }
    }
}

/// What a full read (both views, or paging) is judged against: the thread (its key `t` and id
/// `tid`), the model's truth as of the read and the count `count_messages` gave (`None`: it
/// failed).
struct ViewsOf<'a> {
    t: &'a str,
    tid: &'a str,
    truth: &'a RunTruth,
    count: Option<u64>,
}

impl<'a> ViewsOf<'a> {
    fn of(cx: &'a Context<'_>, read: &'a Read, truth: &'a RunTruth, count: Option<u64>) -> Self {
        ViewsOf {
            t: &read.thread,
            tid: cx.thread_id(&read.thread),
            truth,
            count,
        }
    }
}

/// Both views of one read: each is every message, and they agree with each other.
fn views_match(
    at: &Asked,
    of: &ViewsOf<'_>,
    history: &Answer<Option<ThreadHistory>>,
    messages: &Answer<Vec<MessageView>>,
    f: &mut Findings,
) {
    let t = of.t;
    if of.count == Some(0) {
        // No message row yet: /history falls back to the checkpoint, as documented for threads
        // older than the store; the model must require nothing.
        agrees_with_the_model(at, of, &[], |pointer, m, _| {
            let why = format!("{at}: {t}: the store has no message but the model says {m}");
            f.unexplained_at(BugId::R1, pointer, why);
        });
        return;
    }
    let from_history = history.as_ref().map(|h| {
        h.as_ref()
            .map_or_else(Vec::new, |h| h.messages.iter().map(of_rendered).collect())
    });
    let from_views = messages
        .as_ref()
        .map(|views| views.iter().map(|v| of_rendered(&v.message)).collect());
    let history_ok = view_passes(at, of, View::History, from_history, f);
    let messages_ok = view_passes(at, of, View::Messages, from_views, f);
    if let (true, true, Ok(Some(h)), Ok(views)) = (history_ok, messages_ok, history, messages) {
        views_agree(at, t, views, h, f);
    }
}

/// The two views of a thread.
#[derive(Clone, Copy)]
enum View {
    History,
    Messages,
}

/// Whether one view (its messages as `observed`, or the error it failed with) passed: a failed
/// `/history` is R1 (no known bug makes it fail), a failed `/messages` R7.
fn view_passes(
    at: &Asked,
    of: &ViewsOf<'_>,
    view: View,
    observed: Result<Vec<ExpectedMessage>, &String>,
    f: &mut Findings,
) -> bool {
    let (path, shows) = match view {
        View::History => ("/history", "history"),
        View::Messages => ("/messages", "messages"),
    };
    match (observed, view) {
        (Err(e), _) => {
            let pointer = at.answers(format!("error {e}"), format!("the thread's {shows}"));
            let why = format!("{at}: {path} of {} failed: {e}", of.t);
            match view {
                View::History => f.unexplained_at(BugId::R1, pointer, why),
                View::Messages => f.add_at(BugId::R7, pointer, why),
            }
            false
        }
        (Ok(observed), View::History) => check_history_view(&at.on(path), of, &observed, f),
        (Ok(observed), View::Messages) => check_messages_view(&at.on(path), of, &observed, f),
    }
}

/// R7: `/messages` shows what `/history` shows, message for message.
fn views_agree(at: &Asked, t: &str, views: &[MessageView], h: &ThreadHistory, f: &mut Findings) {
    let from_views: Vec<&Value> = views.iter().map(|v| &v.message).collect();
    let from_history: Vec<&Value> = h.messages.iter().collect();
    if from_views != from_history {
        f.add_at(
            BugId::R7,
            at.answers(
                format!("/messages: {} messages", from_views.len()),
                format!("as /history: {} messages", from_history.len()),
            ),
            format!(
                "{at}: {t}: /messages and /history disagree ({} and {} messages)",
                from_views.len(),
                from_history.len()
            ),
        );
    }
}

/// R2: paging through a thread (by `limit`, in `direction`) returns every message.
fn paging_matches(
    at: &Asked,
    of: &ViewsOf<'_>,
    (limit, direction): (usize, &str),
    rows: &[RunEvent],
    f: &mut Findings,
) {
    let how = format!("{at}: paging through {} by {limit} ({direction})", of.t);
    let every = |n, c| {
        format!(
            "{how} returned {n} rows, count_messages {c}: a full read must return every message"
        )
    };
    if let Some(c) = of.count {
        if at.count_differs(BugId::R2, "rows", (rows.len(), c), every, f) {
            return;
        }
    }
    let observed: Vec<ExpectedMessage> = rows.iter().map(of_row).collect();
    agrees_with_the_model(at, of, &observed, |pointer, m, _| {
        f.add_at(BugId::R2, pointer, format!("{how}: {m}"));
    });
}

/// `/history`: R1 when it shows the checkpoint (a summary, messages without run_id), R2 when it
/// lost the oldest messages. Returns whether it passed.
fn check_history_view(
    at: &Asked,
    of: &ViewsOf<'_>,
    observed: &[ExpectedMessage],
    f: &mut Findings,
) -> bool {
    let t = of.t;
    if read_from_the_checkpoint(at, of, observed, f) {
        return false;
    }
    if let Some(c) = of.count {
        if observed.is_empty() && c > 0 {
            // Not a capped read (that keeps the latest messages): the view did not read the
            // event store at all (an empty or missing checkpoint).
            f.add_at(
                BugId::R1,
                at.answers("no message", format!("{c} messages")),
                format!("{at}: /history of {t} shows no message, the event store holds {c}: read from the checkpoint"),
            );
            return false;
        }
        let full = |n, c| {
            format!("{at}: /history of {t} returned {n} of {c} messages (count_messages): a full read must return every message")
        };
        if at.count_differs(BugId::R2, "messages", (observed.len(), c), full, f) {
            return false;
        }
    }
    agrees_with_the_model(at, of, observed, |pointer, m, oldest_missing| {
        if oldest_missing {
            f.add_at(
                BugId::R2,
                pointer,
                format!("{at}: /history of {t} lost its oldest messages: {m}"),
            );
        } else {
            f.unexplained_at(BugId::R1, pointer, format!("{at}: /history of {t}: {m}"));
        }
    })
}

/// Whether a view's messages (`observed`) are the thread's history as the model has it as of
/// the read; if not, `differs` reports the difference: the finding's pointer, the difference
/// in words, and whether only the oldest messages are missing (a capped read).
fn agrees_with_the_model(
    at: &Asked,
    &ViewsOf { tid, truth, .. }: &ViewsOf<'_>,
    observed: &[ExpectedMessage],
    differs: impl FnOnce(Pointer, HistoryMismatch, bool),
) -> bool {
    let Err(m) = truth.check_history(tid, observed) else {
        return true;
    };
    let (answered, expected) = m.sides();
    let oldest_missing = only_oldest_missing(truth, tid, observed);
    differs(at.answers(answered, expected), m, oldest_missing);
    false
}

/// R1: `/history` shows the checkpoint (a summary, messages without run_id) instead of the
/// event store's messages; whether it does.
fn read_from_the_checkpoint(
    at: &Asked,
    &ViewsOf { t, tid, truth, .. }: &ViewsOf<'_>,
    observed: &[ExpectedMessage],
    f: &mut Findings,
) -> bool {
    if let Some(i) = observed.iter().position(is_summary) {
        let history = truth.expected_history(tid);
        let first_lost = history.first().map_or_else(String::new, |m| short(&m.text));
        f.add_at(
            BugId::R1,
            at.answers(
                format!("message {i}: a summary"),
                format!("message {i}: `{}`", history.get(i).map_or_else(String::new, |m| short(&m.text))),
            ),
            format!(
                "{at}: /history of {t} shows a summary as message {i} of {}, the original messages (first: `{first_lost}`) are gone",
                observed.len()
            ),
        );
        return true;
    }
    let without_run = observed.iter().filter(|m| m.run_id.is_empty()).count();
    if without_run > 0 {
        f.add_at(
            BugId::R1,
            at.answers(
                format!("{without_run} messages without a run_id"),
                "every message with its run_id",
            ),
            format!(
                "{at}: /history of {t}: {without_run} of {} messages carry no run_id: read from the checkpoint, not the event store",
                observed.len()
            ),
        );
        return true;
    }
    false
}

/// `/messages`: R7 whenever it is not every message (a cap, another filter).
fn check_messages_view(
    at: &Asked,
    of: &ViewsOf<'_>,
    observed: &[ExpectedMessage],
    f: &mut Findings,
) -> bool {
    let t = of.t;
    if let Some(c) = of.count {
        let every = |n, c| {
            format!("{at}: /messages of {t} returned {n} of {c} messages: both views must read everything")
        };
        if at.count_differs(BugId::R7, "messages", (observed.len(), c), every, f) {
            return false;
        }
    }
    agrees_with_the_model(at, of, observed, |pointer, m, oldest_missing| {
        let what = if oldest_missing {
            "lost its oldest messages"
        } else {
            "differs from the model"
        };
        f.add_at(
            BugId::R7,
            pointer,
            format!("{at}: /messages of {t} {what}: {m}"),
        );
    })
}

fn is_summary(m: &ExpectedMessage) -> bool {
    m.text.starts_with(SUMMARY_OPENING)
}

pub fn uuid5(thread_id: &str, seq: u64) -> String {
    uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_URL,
        format!("{thread_id}:{seq}").as_bytes(),
    )
    .to_string()
}

/// R10: a message stored without an id shows uuid5(NAMESPACE_URL, "{thread_id}:{seq}"), an AI
/// message the id its model gave it; ids are unique in a read and never change between reads.
pub fn ids_are_stable(cx: &Context<'_>, f: &mut Findings) {
    // Per thread, per text: the id the first read showed. Nested and looked up by borrowed
    // strings: a long thread's every message is looked up at every read.
    let mut first_seen: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    for (read, history, messages) in cx.record.log.views_reads() {
        let t = read.thread.as_str();
        let tid = cx.thread_id(t);
        let at = Asked::of(cx, read);
        let emitted_on_thread = cx.emitted_ids.get(t);
        let on_thread = first_seen.entry(t).or_default();
        if let Ok(views) = messages.primary(cx.primary) {
            let mut seen = BTreeSet::new();
            for v in views {
                let text = content_text(v.message.get("content").unwrap_or(&Value::Null));
                let id = v.message.get("id").and_then(Value::as_str).unwrap_or("");
                if let Some(emitted) = emitted_on_thread.and_then(|m| m.get(&text)) {
                    let as_emitted = match emitted {
                        Some(emitted) => id == emitted,
                        None => id == uuid5(tid, v.seq),
                    };
                    if !as_emitted {
                        let want = emitted.clone().unwrap_or_else(|| uuid5(tid, v.seq));
                        f.add_at(
                            BugId::R10,
                            at.answers(format!("seq {}: id {id}", v.seq), format!("seq {}: id {want}", v.seq)),
                            format!(
                                "{at}: {t}: `{}` (seq {}) has id {id}, expected {want}: ids are not uuid5/model ids",
                                short(&text),
                                v.seq
                            ),
                        );
                    }
                }
                if !seen.insert(id) {
                    f.add_at(
                        BugId::R10,
                        at.answers(format!("id {id} twice"), format!("id {id} once")),
                        format!("{at}: {t}: id {id} appears twice in one read of /messages"),
                    );
                }
                same_id_as_before(f, &at, t, on_thread, text, id);
            }
        }
        if let Ok(Some(h)) = history.primary(cx.primary) {
            for m in &h.messages {
                if m.get("run_id").is_none() {
                    continue; // not from the event store: R1's business
                }
                let text = content_text(m.get("content").unwrap_or(&Value::Null));
                let id = m.get("id").and_then(Value::as_str).unwrap_or("");
                same_id_as_before(f, &at, t, on_thread, text, id);
            }
        }
    }
}

/// R10: the id `text` shows on thread `t` is the one its first read showed (remembered in
/// `first_ids`, the thread's texts to their first id).
fn same_id_as_before(
    f: &mut Findings,
    at: &Asked,
    t: &str,
    first_ids: &mut BTreeMap<String, String>,
    text: String,
    id: &str,
) {
    match first_ids.get(&text) {
        Some(before) if before != id => f.add_at(
            BugId::R10,
            at.answers(
                format!("id {id}"),
                format!("id {before}, as the first read showed"),
            ),
            format!(
                "{at}: {t}: the id of `{}` changed between reads: {before} then {id}",
                short(&text)
            ),
        ),
        Some(_) => {}
        None => {
            first_ids.insert(text, id.to_string());
        }
    }
}

/// R6, R8: every rating lands on the run that produced the rated message; a rating right after
/// a run ended targets that run (a mapping refreshed at that instant would have found it). A
/// message the client only knows from the checkpoint fallback (no message of the thread was
/// stored when it read /history) may map to no run, never to a wrong one.
pub fn ratings_land_on_their_run(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    let mut all_right = true;
    for r in cx.record.log.ratings() {
        let tid = cx.thread_id(&r.thread);
        let truth = snapshots.before(r.op);
        let emitted = truth.run_emitting(tid, &r.text);
        let Some(expected) =
            emitted.or_else(|| deleted_run_emitting(cx, truth, &r.thread, &r.text))
        else {
            all_right = false;
            let rated = short(&r.text);
            f.unexplained_at(
                BugId::R1,
                at_rating(r, "")
                    .answered_instead(format!("a message a run emitted, not `{rated}`")),
                format!(
                    "{}: the client rated `{rated}`, which no run emitted",
                    r.thread
                ),
            );
            continue;
        };
        if r.source == RatedFrom::Checkpoint && r.client.is_none() {
            continue; // dropped, not misdirected: nothing was rated
        }
        if r.source != RatedFrom::View && r.client.is_none() && truth.is_deleted(tid, &expected) {
            // A message rendered before its run was deleted, without its run_id: no store
            // read names its run any more, and the mapper never guesses.
            continue;
        }
        if r.client.as_deref() == Some(expected.as_str()) {
            continue;
        }
        all_right = false;
        let user = r.user.as_deref().unwrap_or("an anonymous user");
        let (op, rated, mapped) = (r.op, short(&r.text), or_none(r.client.as_ref()));
        let stale = r.source == RatedFrom::Stream && r.fresh.as_deref() == Some(expected.as_str());
        let (id, why) = if stale {
            let why = format!("op {op}: {user} rated `{rated}` right after {expected} ended: it went to {mapped}, the run mapping was stale (a refreshed one says {expected})");
            (BugId::R8, why)
        } else {
            let why = format!("op {op}: {user} rated `{rated}`, produced by {expected}: the rating maps to {mapped}");
            (BugId::R6, why)
        };
        f.add_at(id, at_rating(r, &expected), why);
    }
    if !all_right || f.has(BugId::R6) {
        return;
    }
    feedback_store_holds_what_stands(cx, f);
}

/// Every rating mapped right: the feedback store must hold exactly the ratings that stand after
/// the client's calls (ratings, withdrawals).
fn feedback_store_holds_what_stands(cx: &Context<'_>, f: &mut Findings) {
    let expected_ratings = super::feedback_rules::replayed_ratings(cx);
    for (key, tid) in &cx.scenario.threads {
        let want = expected_ratings.expected(tid);
        let got: Vec<(String, Option<String>, i8)> = cx
            .record
            .feedback
            .iter()
            .filter(|fb| &fb.thread_id == tid)
            .map(|fb| (fb.run_id.clone(), fb.user_id.clone(), fb.rating.value()))
            .collect();
        if got != want {
            // A whole-state rule: the feedback store's rows are read once the world ended.
            f.add_whole_state(
                BugId::R6,
                "the feedback store's rows at the end",
                format!(
                    "{key}: the feedback store holds {}, the ratings given were {}",
                    ratings(&got),
                    ratings(&want)
                ),
            );
        }
    }
}

/// Ratings as `+1 by user-1 on run-1`, comma separated.
fn ratings(rows: &[(String, Option<String>, i8)]) -> String {
    listed(rows.iter().map(|(run, user, value)| {
        format!(
            "{value:+} by {} on {run}",
            user.as_deref().unwrap_or("anonymous")
        )
    }))
}

/// The deleted run of the thread (by key) whose script emits `text`: the model forgets a
/// deleted run's messages, a rating of one the client still shows is still the run's.
fn deleted_run_emitting(
    cx: &Context<'_>,
    truth: &RunTruth,
    thread: &str,
    text: &str,
) -> Option<String> {
    let tid = cx.thread_id(thread);
    cx.scenario
        .runs
        .iter()
        .enumerate()
        .filter(|(_, run)| run.thread == thread && truth.is_deleted(tid, &run.id))
        .find(|(i, _)| cx.scripts.run(*i).iter().any(|e| e.text == text))
        .map(|(_, run)| run.id.clone())
}

/// Whether every run the observed list differs on only lost its oldest messages: the observed
/// messages of such a run are a proper suffix of what it emitted (a window starting past its
/// head, for a run still allowed to miss its tail), and every such run started before every
/// intact run that shows messages. The shape of a capped "latest N" read.
pub fn only_oldest_missing(
    truth: &RunTruth,
    thread_id: &str,
    observed: &[ExpectedMessage],
) -> bool {
    let mut emitted: BTreeMap<&str, Vec<&ExpectedMessage>> = BTreeMap::new();
    let expected = truth.expected_history(thread_id);
    for m in &expected {
        emitted.entry(&m.run_id).or_default().push(m);
    }
    let mut seen: BTreeMap<&str, Vec<&ExpectedMessage>> = BTreeMap::new();
    for m in observed {
        if !emitted.contains_key(m.run_id.as_str()) {
            return false;
        }
        seen.entry(&m.run_id).or_default().push(m);
    }
    let order = truth.runs(thread_id);
    let started = |run: &str| order.iter().position(|r| r == run).unwrap_or(usize::MAX);
    let mut cut: Vec<usize> = Vec::new();
    let mut intact: Vec<usize> = Vec::new();
    for (run, all) in &emitted {
        let got = seen.get(run).map_or(&[][..], Vec::as_slice);
        let complete = truth
            .outcome(thread_id, run)
            .is_some_and(RunOutcome::is_complete);
        if (got.len() == all.len() && got == all.as_slice()) || (!complete && all.starts_with(got))
        {
            if !got.is_empty() {
                intact.push(started(run));
            }
            continue;
        }
        // A window starting past the head.
        let window = (1..=all.len()).any(|k| {
            let rest = &all[k..];
            rest.starts_with(got) && (!complete || rest.len() == got.len())
        });
        if !window {
            return false;
        }
        cut.push(started(run));
    }
    let last_cut = cut.iter().max();
    let first_intact = intact.iter().min();
    match (last_cut, first_intact) {
        (None, _) => false,
        (Some(c), Some(i)) => c < i,
        (Some(_), None) => true,
    }
}
