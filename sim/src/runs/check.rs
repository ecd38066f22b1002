//! The invariant checkers of the runs workload, R1 to R11.
//!
//! Checkers only check: they read the scenario (what the agents meant), the world's ground truth
//! (what each run emitted and how it stopped, replayed into [`model::runs`]), the world's record of
//! what reached the store, and the answers both backends gave, and name every difference by its
//! catalog ID. Texts are unique per thread, so a rendered message names the emission it came from.
//!
//! Violations come out in a fixed priority order, most specific first, so that a world with one
//! defect reports that defect's ID first even when its effects also break broader invariants: a
//! store changed by a read (R3) also makes the backends disagree (R9); duplicate seqs (R5) also
//! duplicate ids (R10); lost buffers (R4) also shorten the history (R1).

use super::scenario::RunsScenario;
use super::script::expand;
use super::truth::Snapshots;
use super::world::{Answer, Both, EmittedEvent, RatedFrom, ReadKind, WorldRecord};
use crate::display::StoreKind;
use crate::outcome::Violation;
use history::runs::{content_text, MessageKind as Shape, RunEvent};
use history::BugId;
use model::runs::{ExpectedMessage, MessageKind, RatingTruth, RunOutcome, RunTruth};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The opening of the summary message summarization puts in the checkpoint (the seed's text).
const SUMMARY_OPENING: &str = "Here is a summary of the conversation to date";

/// The priority of each finding: most specific first.
const PRIORITY: [BugId; 11] = [
    BugId::R3,
    BugId::R5,
    BugId::R4,
    BugId::R9,
    BugId::R11,
    BugId::R1,
    BugId::R2,
    BugId::R7,
    BugId::R10,
    BugId::R6,
    BugId::R8,
];

/// Findings by ID; the catch-all goes last.
#[derive(Default)]
struct Findings {
    by_id: BTreeMap<BugId, Vec<String>>,
    catch_all: Vec<String>,
}

impl Findings {
    fn add(&mut self, id: BugId, message: String) {
        let list = self.by_id.entry(id).or_default();
        if list.len() < 3 {
            list.push(message);
        }
    }

    fn has(&self, id: BugId) -> bool {
        self.by_id.contains_key(&id)
    }

    fn into_violations(mut self) -> Vec<Violation> {
        let mut out = Vec::new();
        for id in PRIORITY {
            if let Some(messages) = self.by_id.remove(&id) {
                out.push(Violation::safety(id, messages.join("; ")));
            }
        }
        if !self.catch_all.is_empty() {
            self.catch_all.truncate(3);
            // The broadest invariant: a thread's history is every message its runs emitted.
            out.push(Violation::safety(
                BugId::R1,
                format!(
                    "history differs from the model: {}",
                    self.catch_all.join("; ")
                ),
            ));
        }
        out
    }
}

fn short(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(40).collect::<String>())
    }
}

/// A rendered message dump as the model compares it.
fn of_rendered(m: &Value) -> ExpectedMessage {
    let text = content_text(m.get("content").unwrap_or(&Value::Null));
    let has_calls = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    let kind = match m.get("type").and_then(Value::as_str) {
        Some("human") => MessageKind::Human,
        Some("ai") if has_calls => MessageKind::AiToolCall,
        Some("ai") => MessageKind::Ai,
        Some("tool") => MessageKind::Tool,
        // An unknown type never matches an emission (none has this text).
        other => {
            return ExpectedMessage {
                run_id: String::new(),
                kind: MessageKind::Human,
                text: format!("<type {other:?}> {text}"),
            }
        }
    };
    ExpectedMessage {
        run_id: m
            .get("run_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind,
        text,
    }
}

/// A stored message row as the model compares it.
fn of_row(row: &RunEvent) -> ExpectedMessage {
    let text = content_text(row.content.get("content").unwrap_or(&Value::Null));
    match MessageKind::from_event_type(&row.event_type) {
        Some(kind) => ExpectedMessage {
            run_id: row.run_id.clone(),
            kind,
            text,
        },
        None => ExpectedMessage {
            run_id: row.run_id.clone(),
            kind: MessageKind::Human,
            text: format!("<event type {}> {text}", row.event_type),
        },
    }
}

/// Whether every run the observed list differs on only lost its oldest messages: the observed
/// messages of such a run are a proper suffix of what it emitted (a window starting past its
/// head, for a run still allowed to miss its tail), and every such run started before every
/// intact run that shows messages. The shape of a capped "latest N" read.
fn only_oldest_missing(truth: &RunTruth, thread_id: &str, observed: &[ExpectedMessage]) -> bool {
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

struct Context<'a> {
    scenario: &'a RunsScenario,
    record: &'a WorldRecord,
    primary: StoreKind,
    /// Per (thread key, text): the id the message was emitted with (`None`: none, the views
    /// must fill uuid5).
    emitted_ids: BTreeMap<(String, String), Option<String>>,
}

impl Context<'_> {
    fn thread_id(&self, key: &str) -> &str {
        self.scenario
            .threads
            .get(key)
            .map(String::as_str)
            .unwrap_or("")
    }
}

/// Checks one played world.
pub fn check(scenario: &RunsScenario, record: &WorldRecord, primary: StoreKind) -> Vec<Violation> {
    let mut emitted_ids = BTreeMap::new();
    for run in &scenario.runs {
        for e in expand(run) {
            emitted_ids.insert((run.thread.clone(), e.text.clone()), e.message.id.clone());
        }
    }
    let cx = Context {
        scenario,
        record,
        primary,
        emitted_ids,
    };
    let mut f = Findings::default();
    let mut snapshots = Snapshots::new(scenario, &record.truth);
    store_unchanged_by_reads(&cx, &mut f);
    seqs_unique_and_increasing(&cx, &mut f);
    runs_fully_stored(&cx, snapshots.at_end(), &mut f);
    backends_agree(&cx, &mut f);
    summaries_keep_tool_pairs(&cx, &mut f);
    let mut snapshots = Snapshots::new(scenario, &record.truth);
    reads_match_the_model(&cx, &mut snapshots, &mut f);
    ids_are_stable(&cx, &mut f);
    let mut snapshots = Snapshots::new(scenario, &record.truth);
    ratings_land_on_their_run(&cx, &mut snapshots, &mut f);
    f.into_violations()
}

/// Rows sorted as both stores dump them: by thread, then seq, then write order.
fn written_in_dump_order(record: &WorldRecord) -> Vec<&RunEvent> {
    let mut rows: Vec<&RunEvent> = record.written.iter().map(|w| &w.event).collect();
    rows.sort_by(|a, b| (&a.thread_id, a.seq).cmp(&(&b.thread_id, b.seq)));
    rows
}

/// The top-level fields of two contents that differ, e.g. `id, run_id`.
fn changed_fields(a: &Value, b: &Value) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .filter(|k| x.get(*k) != y.get(*k))
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
        _ => "the whole content".to_string(),
    }
}

/// R3: the store holds exactly what was written; reads never change it.
fn store_unchanged_by_reads(cx: &Context, f: &mut Findings) {
    let written = written_in_dump_order(cx.record);
    let backends = [
        (StoreKind::Memory, "memory", &cx.record.dumps.memory),
        (StoreKind::Sqlite, "sqlite", &cx.record.dumps.sqlite),
    ];
    for (kind, name, dump) in backends {
        // A backend that refused a write the primary accepted is R9's business.
        if kind != cx.primary && !cx.record.write_disagreements.is_empty() {
            continue;
        }
        let Ok(dump) = dump else { continue };
        if dump.len() != written.len() {
            f.add(
                BugId::R3,
                format!(
                    "the {name} store holds {} rows but {} were written",
                    dump.len(),
                    written.len()
                ),
            );
            continue;
        }
        if let Some((stored, w)) = dump.iter().zip(&written).find(|(s, w)| s != *w) {
            f.add(
                BugId::R3,
                format!(
                    "a read changed the {name} store: row seq {} of {} ({}) now differs in {}",
                    w.seq,
                    w.run_id,
                    w.event_type,
                    changed_fields(&w.content, &stored.content)
                ),
            );
        }
    }
}

/// R5: per thread, every written seq is above every seq written before it.
fn seqs_unique_and_increasing(cx: &Context, f: &mut Findings) {
    let mut max: BTreeMap<&str, (u64, &str)> = BTreeMap::new();
    for w in &cx.record.written {
        let e = &w.event;
        if let Some(&(m, by)) = max.get(e.thread_id.as_str()) {
            if e.seq <= m {
                f.add(
                    BugId::R5,
                    format!(
                        "thread {}: {} wrote seq {} after {by} had written seq {m}: seqs not unique and increasing",
                        e.thread_id, e.run_id, e.seq
                    ),
                );
                continue;
            }
        }
        max.insert(&e.thread_id, (e.seq, &e.run_id));
    }
}

fn same_event(e: &EmittedEvent, row: &RunEvent) -> bool {
    e.event_type == row.event_type
        && e.category == row.category
        && e.content == row.content
        && e.created_at_ns == row.created_at_ns
}

/// R4: a run that ended, errored or was cancelled has every event it emitted stored, in order;
/// a killed run has a prefix of them.
fn runs_fully_stored(cx: &Context, truth: &RunTruth, f: &mut Findings) {
    let mut by_run: BTreeMap<&str, Vec<&RunEvent>> = BTreeMap::new();
    for w in &cx.record.written {
        by_run.entry(&w.event.run_id).or_default().push(&w.event);
    }
    for (r, spec) in cx.scenario.runs.iter().enumerate() {
        let emitted = cx.record.emitted.get(r).map_or(&[][..], Vec::as_slice);
        let stored = by_run.get(spec.id.as_str()).map_or(&[][..], Vec::as_slice);
        let outcome = truth.outcome(cx.thread_id(&spec.thread), &spec.id);
        let matching = emitted
            .iter()
            .zip(stored)
            .take_while(|(e, s)| same_event(e, s))
            .count();
        let complete = outcome.is_some_and(RunOutcome::is_complete);
        let ok = if complete {
            matching == emitted.len() && stored.len() == emitted.len()
        } else {
            matching == stored.len()
        };
        if !ok {
            let how = if matching < stored.len().min(emitted.len()) {
                format!("the stored events differ from the emitted ones at position {matching}")
            } else {
                format!("{} of {} events stored", stored.len(), emitted.len())
            };
            f.add(BugId::R4, format!("{} ({outcome:?}): {how}", spec.id));
        }
    }
}

fn differ<T: PartialEq>(both: &Both<Answer<T>>) -> bool {
    both.memory != both.sqlite
}

/// Two answers of row lists, in words: their seqs, or that only their contents differ.
fn rows_differ(a: &Answer<Vec<RunEvent>>, b: &Answer<Vec<RunEvent>>) -> String {
    let (x, y) = (seqs_of(a), seqs_of(b));
    if x == y {
        format!("the same rows {x} with different contents")
    } else {
        format!("memory {x} vs sqlite {y}")
    }
}

fn seqs_of(rows: &Answer<Vec<RunEvent>>) -> String {
    match rows {
        Ok(rows) => {
            let seqs: Vec<u64> = rows.iter().map(|r| r.seq).collect();
            if seqs.len() <= 8 {
                format!("{seqs:?}")
            } else {
                format!(
                    "{} rows {:?}..{:?}",
                    seqs.len(),
                    seqs.first().unwrap_or(&0),
                    seqs.last().unwrap_or(&0)
                )
            }
        }
        Err(e) => format!("error {e}"),
    }
}

fn len_of<T>(a: &Answer<Vec<T>>) -> String {
    match a {
        Ok(v) => v.len().to_string(),
        Err(e) => format!("error {e}"),
    }
}

/// R9: both backends answer every operation identically.
fn backends_agree(cx: &Context, f: &mut Findings) {
    for w in &cx.record.write_disagreements {
        f.add(BugId::R9, format!("backends disagree on a write: {w}"));
    }
    for read in &cx.record.reads {
        let t = &read.thread;
        match &read.kind {
            ReadKind::Views {
                count,
                history,
                messages,
            } => {
                if differ(count) {
                    f.add(
                        BugId::R9,
                        format!(
                            "count_messages({t}): memory {:?} vs sqlite {:?}",
                            count.memory, count.sqlite
                        ),
                    );
                }
                if differ(messages) {
                    f.add(
                        BugId::R9,
                        format!(
                            "/messages of {t}: memory {} rows vs sqlite {}",
                            len_of(&messages.memory),
                            len_of(&messages.sqlite)
                        ),
                    );
                }
                if differ(history) {
                    let n = |h: &Answer<Option<history::runs::ThreadHistory>>| match h {
                        Ok(Some(h)) => h.messages.len().to_string(),
                        Ok(None) => "none".into(),
                        Err(e) => format!("error {e}"),
                    };
                    f.add(
                        BugId::R9,
                        format!(
                            "/history of {t}: memory {} messages vs sqlite {}",
                            n(&history.memory),
                            n(&history.sqlite)
                        ),
                    );
                }
            }
            ReadKind::Page {
                limit,
                cursor,
                rows,
            } => {
                if differ(rows) {
                    f.add(
                        BugId::R9,
                        format!(
                            "list_messages({t}, {limit}, {cursor:?}): {}",
                            rows_differ(&rows.memory, &rows.sqlite)
                        ),
                    );
                }
            }
            ReadKind::Paginate {
                limit,
                backward,
                count,
                rows,
            } => {
                if differ(rows) || differ(count) {
                    f.add(
                        BugId::R9,
                        format!(
                            "paging {t} by {limit} (backward {backward}): {}",
                            rows_differ(&rows.memory, &rows.sqlite)
                        ),
                    );
                }
            }
            ReadKind::Events { run, rows } => {
                if differ(rows) {
                    f.add(
                        BugId::R9,
                        format!(
                            "list_events({}): {}",
                            cx.scenario.runs[*run].id,
                            rows_differ(&rows.memory, &rows.sqlite)
                        ),
                    );
                }
            }
        }
    }
    if differ(&cx.record.dumps) {
        f.add(
            BugId::R9,
            format!(
                "the stores hold different rows: {}",
                rows_differ(&cx.record.dumps.memory, &cx.record.dumps.sqlite)
            ),
        );
    }
}

/// R11: no summarized checkpoint keeps a tool result without the AI message that called it.
fn summaries_keep_tool_pairs(cx: &Context, f: &mut Findings) {
    for s in &cx.record.summaries {
        let mut calls: BTreeSet<&str> = BTreeSet::new();
        for (i, m) in s.messages.iter().enumerate() {
            match m.kind {
                Shape::Ai => calls.extend(m.tool_calls.iter().map(|c| c.id.as_str())),
                Shape::Tool => {
                    let id = m.tool_call_id.as_deref().unwrap_or("");
                    if !calls.contains(id) {
                        f.add(
                            BugId::R11,
                            format!(
                                "{} summarized its checkpoint and kept tool result `{}` (position {i} of {}) without its call {id}",
                                cx.scenario.runs[s.run].id,
                                short(&m.text()),
                                s.messages.len()
                            ),
                        );
                        break;
                    }
                }
                Shape::Human => {}
            }
        }
    }
}

fn is_summary(m: &ExpectedMessage) -> bool {
    m.text.starts_with(SUMMARY_OPENING)
}

/// R1, R2, R7: every full read (both views, paging) is every message the runs emitted, in
/// order, as the model says as of the read.
fn reads_match_the_model(cx: &Context, snapshots: &mut Snapshots, f: &mut Findings) {
    for read in &cx.record.reads {
        let tid = cx.thread_id(&read.thread);
        let t = &read.thread;
        match &read.kind {
            ReadKind::Views {
                count,
                history,
                messages,
            } => {
                let truth = snapshots.before(read.op);
                let count = count.primary(cx.primary).as_ref().ok().copied();
                let history = history.primary(cx.primary);
                let messages = messages.primary(cx.primary);
                if count == Some(0) {
                    // No message row yet: /history falls back to the checkpoint, as documented
                    // for threads older than the store; the model must require nothing.
                    if let Err(m) = truth.check_history(tid, &[]) {
                        f.catch_all.push(format!(
                            "{t}: the store has no message but the model says {m:?}"
                        ));
                    }
                    continue;
                }
                let history_ok = match history {
                    Err(e) => {
                        f.catch_all.push(format!("/history of {t} failed: {e}"));
                        false
                    }
                    Ok(h) => {
                        let rendered: Vec<Value> =
                            h.as_ref().map(|h| h.messages.clone()).unwrap_or_default();
                        let observed: Vec<ExpectedMessage> =
                            rendered.iter().map(of_rendered).collect();
                        check_history_view(t, tid, truth, count, &observed, f)
                    }
                };
                let messages_ok = match messages {
                    Err(e) => {
                        f.add(BugId::R7, format!("/messages of {t} failed: {e}"));
                        false
                    }
                    Ok(views) => {
                        let observed: Vec<ExpectedMessage> =
                            views.iter().map(|v| of_rendered(&v.message)).collect();
                        check_messages_view(t, tid, truth, count, &observed, f)
                    }
                };
                if let (true, true, Ok(Some(h)), Ok(views)) =
                    (history_ok, messages_ok, history, messages)
                {
                    let from_views: Vec<&Value> = views.iter().map(|v| &v.message).collect();
                    let from_history: Vec<&Value> = h.messages.iter().collect();
                    if from_views != from_history {
                        f.add(
                            BugId::R7,
                            format!(
                                "{t}: /messages and /history disagree ({} and {} messages)",
                                from_views.len(),
                                from_history.len()
                            ),
                        );
                    }
                }
            }
            ReadKind::Paginate {
                limit,
                backward,
                count,
                rows,
            } => {
                let truth = snapshots.before(read.op);
                let (Ok(rows), Ok(count)) = (rows.primary(cx.primary), count.primary(cx.primary))
                else {
                    continue;
                };
                let how = format!("paging through {t} by {limit} (backward {backward})");
                if rows.len() as u64 != *count {
                    f.add(
                        BugId::R2,
                        format!(
                            "{how} returned {} rows, count_messages {count}: a full read must return every message",
                            rows.len()
                        ),
                    );
                    continue;
                }
                let observed: Vec<ExpectedMessage> = rows.iter().map(of_row).collect();
                if let Err(m) = truth.check_history(tid, &observed) {
                    f.add(BugId::R2, format!("{how}: {m:?}"));
                }
            }
            ReadKind::Page { .. } | ReadKind::Events { .. } => {}
        }
    }
}

/// `/history`: R1 when it shows the checkpoint (a summary, messages without run_id), R2 when it
/// lost the oldest messages. Returns whether it passed.
fn check_history_view(
    t: &str,
    tid: &str,
    truth: &RunTruth,
    count: Option<u64>,
    observed: &[ExpectedMessage],
    f: &mut Findings,
) -> bool {
    if let Some(i) = observed.iter().position(is_summary) {
        let first_lost = truth
            .expected_history(tid)
            .first()
            .map(|m| short(&m.text))
            .unwrap_or_default();
        f.add(
            BugId::R1,
            format!(
                "/history of {t} shows a summary as message {i} of {}, the original messages (first: `{first_lost}`) are gone",
                observed.len()
            ),
        );
        return false;
    }
    let without_run = observed.iter().filter(|m| m.run_id.is_empty()).count();
    if without_run > 0 {
        f.add(
            BugId::R1,
            format!(
                "/history of {t}: {without_run} of {} messages carry no run_id: read from the checkpoint, not the event store",
                observed.len()
            ),
        );
        return false;
    }
    if let Some(c) = count {
        if observed.is_empty() && c > 0 {
            // Not a capped read (that keeps the latest messages): the view did not read the
            // event store at all (an empty or missing checkpoint).
            f.add(
                BugId::R1,
                format!("/history of {t} shows no message, the event store holds {c}: read from the checkpoint"),
            );
            return false;
        }
        if observed.len() as u64 != c {
            f.add(
                BugId::R2,
                format!(
                    "/history of {t} returned {} of {c} messages (count_messages): a full read must return every message",
                    observed.len()
                ),
            );
            return false;
        }
    }
    match truth.check_history(tid, observed) {
        Ok(()) => true,
        Err(m) => {
            if only_oldest_missing(truth, tid, observed) {
                f.add(
                    BugId::R2,
                    format!("/history of {t} lost its oldest messages: {m:?}"),
                );
            } else {
                f.catch_all.push(format!("/history of {t}: {m:?}"));
            }
            false
        }
    }
}

/// `/messages`: R7 whenever it is not every message (a cap, another filter).
fn check_messages_view(
    t: &str,
    tid: &str,
    truth: &RunTruth,
    count: Option<u64>,
    observed: &[ExpectedMessage],
    f: &mut Findings,
) -> bool {
    if let Some(c) = count {
        if observed.len() as u64 != c {
            f.add(
                BugId::R7,
                format!(
                    "/messages of {t} returned {} of {c} messages: both views must read everything",
                    observed.len()
                ),
            );
            return false;
        }
    }
    match truth.check_history(tid, observed) {
        Ok(()) => true,
        Err(m) => {
            let what = if only_oldest_missing(truth, tid, observed) {
                "lost its oldest messages"
            } else {
                "differs from the model"
            };
            f.add(BugId::R7, format!("/messages of {t} {what}: {m:?}"));
            false
        }
    }
}

fn uuid5(thread_id: &str, seq: u64) -> String {
    uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_URL,
        format!("{thread_id}:{seq}").as_bytes(),
    )
    .to_string()
}

/// R10: a message stored without an id shows uuid5(NAMESPACE_URL, "{thread_id}:{seq}"), an AI
/// message the id its model gave it; ids are unique in a read and never change between reads.
fn ids_are_stable(cx: &Context, f: &mut Findings) {
    let mut first_seen: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut stable = |f: &mut Findings, t: &str, text: &str, id: &str| {
        let key = (t.to_string(), text.to_string());
        match first_seen.get(&key) {
            Some(before) if before != id => f.add(
                BugId::R10,
                format!(
                    "{t}: the id of `{}` changed between reads: {before} then {id}",
                    short(text)
                ),
            ),
            Some(_) => {}
            None => {
                first_seen.insert(key, id.to_string());
            }
        }
    };
    for read in &cx.record.reads {
        let ReadKind::Views {
            history, messages, ..
        } = &read.kind
        else {
            continue;
        };
        let t = read.thread.as_str();
        let tid = cx.thread_id(t);
        if let Ok(views) = messages.primary(cx.primary) {
            let mut seen = BTreeSet::new();
            for v in views {
                let text = content_text(v.message.get("content").unwrap_or(&Value::Null));
                let id = v.message.get("id").and_then(Value::as_str).unwrap_or("");
                if let Some(emitted) = cx.emitted_ids.get(&(t.to_string(), text.clone())) {
                    let want = emitted.clone().unwrap_or_else(|| uuid5(tid, v.seq));
                    if id != want {
                        f.add(
                            BugId::R10,
                            format!(
                                "{t}: `{}` (seq {}) has id {id}, expected {want}: ids are not uuid5/model ids",
                                short(&text),
                                v.seq
                            ),
                        );
                    }
                }
                if !seen.insert(id.to_string()) {
                    f.add(
                        BugId::R10,
                        format!("{t}: id {id} appears twice in one read of /messages"),
                    );
                }
                stable(f, t, &text, id);
            }
        }
        if let Ok(Some(h)) = history.primary(cx.primary) {
            for m in &h.messages {
                if m.get("run_id").is_none() {
                    continue; // not from the event store: R1's business
                }
                let text = content_text(m.get("content").unwrap_or(&Value::Null));
                let id = m.get("id").and_then(Value::as_str).unwrap_or("");
                stable(f, t, &text, id);
            }
        }
    }
}

/// R6, R8: every rating lands on the run that produced the rated message; a rating right after
/// a run ended targets that run (a mapping refreshed at that instant would have found it). A
/// message the client only knows from the checkpoint fallback (no message of the thread was
/// stored when it read /history) may map to no run, never to a wrong one.
fn ratings_land_on_their_run(cx: &Context, snapshots: &mut Snapshots, f: &mut Findings) {
    let mut all_right = true;
    let mut expected_ratings = RatingTruth::new();
    for r in &cx.record.ratings {
        let tid = cx.thread_id(&r.thread);
        let truth = snapshots.before(r.op);
        let Some(expected) = truth.run_emitting(tid, &r.text) else {
            all_right = false;
            f.catch_all.push(format!(
                "{}: the client rated `{}`, which no run emitted",
                r.thread,
                short(&r.text)
            ));
            continue;
        };
        if r.source == RatedFrom::Checkpoint && r.client.is_none() {
            continue; // dropped, not misdirected: nothing was rated
        }
        expected_ratings.rate(tid, &expected, &r.user, if r.up { 1 } else { -1 });
        if r.client.as_deref() == Some(expected.as_str()) {
            continue;
        }
        all_right = false;
        if r.source == RatedFrom::Stream && r.fresh.as_deref() == Some(expected.as_str()) {
            f.add(
                BugId::R8,
                format!(
                    "{} rated `{}` right after {expected} ended: it went to {:?}, the run mapping was stale (a refreshed one says {expected})",
                    r.user,
                    short(&r.text),
                    r.client
                ),
            );
        } else {
            f.add(
                BugId::R6,
                format!(
                    "{} rated `{}`, produced by {expected}: the rating maps to {:?}",
                    r.user,
                    short(&r.text),
                    r.client
                ),
            );
        }
    }
    if !all_right || f.has(BugId::R6) {
        return;
    }
    // Every rating mapped right: the feedback store must hold exactly the ratings given.
    for (key, tid) in &cx.scenario.threads {
        let want = expected_ratings.expected(tid);
        let got: Vec<(String, String, i8)> = cx
            .record
            .feedback
            .iter()
            .filter(|fb| &fb.thread_id == tid)
            .map(|fb| (fb.run_id.clone(), fb.user_id.clone(), fb.rating.value()))
            .collect();
        if got != want {
            f.add(
                BugId::R6,
                format!("{key}: the feedback store holds {got:?}, the ratings given were {want:?}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(run: &str, kind: MessageKind, text: &str) -> ExpectedMessage {
        ExpectedMessage {
            run_id: run.into(),
            kind,
            text: text.into(),
        }
    }

    fn truth() -> RunTruth {
        let mut t = RunTruth::new();
        for (run, texts) in [("a", ["a1", "a2", "a3"]), ("b", ["b1", "b2", "b3"])] {
            t.start_run("t", run);
            for x in texts {
                t.emit("t", run, MessageKind::Human, x);
            }
            t.stop_run("t", run, RunOutcome::Ended);
        }
        t
    }

    #[test]
    fn a_latest_n_read_is_recognised_as_missing_the_oldest() {
        let t = truth();
        let all = t.expected_history("t");
        assert!(!only_oldest_missing(&t, "t", &all), "nothing missing");
        assert!(only_oldest_missing(&t, "t", &all[2..]));
        assert!(only_oldest_missing(&t, "t", &all[4..]));
        // A lost tail is not a lost head, nor is a later run lost whole.
        assert!(!only_oldest_missing(&t, "t", &all[..5]));
        assert!(!only_oldest_missing(&t, "t", &all[..3]));
        let mut gap = all.clone();
        gap.remove(4);
        assert!(!only_oldest_missing(&t, "t", &gap));
        let stranger = vec![msg("z", MessageKind::Human, "z1")];
        assert!(!only_oldest_missing(&t, "t", &stranger));
    }

    #[test]
    fn rendered_dumps_become_model_messages() {
        let v = serde_json::json!({"type": "ai", "content": "x", "tool_calls": [{"id": "c"}], "run_id": "r"});
        assert_eq!(of_rendered(&v), msg("r", MessageKind::AiToolCall, "x"));
        let v = serde_json::json!({"type": "human", "content": "q"});
        assert_eq!(of_rendered(&v), msg("", MessageKind::Human, "q"));
        assert_eq!(
            uuid5("6d30913e-dcd4-41c8-8941-f66c716cf359", 1),
            "e1c4656e-8a62-555e-9148-c76d07df49a5"
        );
    }

    #[test]
    fn findings_come_out_in_priority_order() {
        let mut f = Findings::default();
        f.add(BugId::R8, "late".into());
        f.add(BugId::R3, "first".into());
        f.catch_all.push("broad".into());
        let v = f.into_violations();
        let ids: Vec<BugId> = v.iter().map(|v| v.id).collect();
        assert_eq!(ids, vec![BugId::R3, BugId::R8, BugId::R1]);
    }
}
