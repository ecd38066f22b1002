//! The rules about what the stores hold, R3, R5, R4, R9, R11 and R12: every row written and no
//! other, seqs unique and increasing, every event of a finished run, both backends alike,
//! summaries that keep tool pairs, acknowledged writes that survive a restart of the store.

use super::context::{short, Context};
use super::store_rules::is_deleted;
use super::thread_rules::era_start;
use super::truth::Snapshots;
use super::wording::{
    alike, answered, apart, at_write, client_store, cursor as cursor_words, listed, or_none, when,
    Asked,
};
use crate::divergence::TraceMark;
use crate::outcome::{Findings, Pointer};
use crate::runs::observations::WorldRecord;
use crate::runs::record::{Answer, Both, EmittedEvent, Read, ReadKind, Written};
use crate::workload::StoreKind;
use history::runs::{Category, MessageKind as Shape, RunEvent};
use history::BugId;
use model::runs::{brief_json, RunOutcome};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Rows sorted as both stores dump them: by thread, then seq, then write order; rows a
/// deletion removed are not among them.
fn written_in_dump_order(record: &WorldRecord) -> Vec<&RunEvent> {
    let mut rows: Vec<&RunEvent> = record
        .log
        .written()
        .iter()
        .filter(|w| !is_deleted(record, w))
        .map(|w| &w.event)
        .collect();
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

/// R3: the store holds exactly what was written; reads never change it. About a whole store
/// rather than one request: the final dump and event counts hold rows that differ from the
/// writes, and which read changed a row is not recorded (a read answers what it shows, not
/// what it wrote), so a finding names no first wrong answer; the reads and writes its rows
/// came from are in the trace.
pub fn store_unchanged_by_reads(cx: &Context<'_>, f: &mut Findings) {
    let written = written_in_dump_order(cx.record);
    event_counts_match_written(cx, &written, f);
    let stores = alike(&cx.record.dumps, cx.record.first_slot);
    let alone = stores.len() == 1;
    for (i, (name, dump)) in stores.into_iter().enumerate() {
        // A backend that refused a write the primary accepted is R9's business.
        let is_primary = alone || (i == 1) == (cx.primary == StoreKind::Sqlite);
        if !is_primary && !cx.record.log.write_disagreements().is_empty() {
            continue;
        }
        let Ok(dump) = dump else { continue };
        // A whole-state rule: the dump at the end is compared with every write, so which read
        // changed a row is not known (the reads answer what the store holds, not what they did
        // to it).
        let state = format!("the rows {name} holds at the end");
        if dump.len() != written.len() {
            f.add_whole_state(
                BugId::R3,
                state,
                format!(
                    "{name}: {} rows held but {} were written",
                    dump.len(),
                    written.len()
                ),
            );
            continue;
        }
        if let Some((stored, w)) = dump.iter().zip(&written).find(|(s, w)| s != *w) {
            f.add_whole_state(
                BugId::R3,
                state,
                format!(
                    "a read or a caller's edit changed {name}: row seq {} of {} ({}) now differs in {}{}",
                    w.seq,
                    w.run_id,
                    w.event_type,
                    changed_fields(&w.content, &stored.content),
                    super::caller_edit_rows::reached(dump, &written)
                ),
            );
        }
    }
}

/// R3, counted: each thread's `count_events` at the end is the number of its rows written and
/// not deleted, on every backend R3 judges (an error answer is R24's).
fn event_counts_match_written(cx: &Context<'_>, written: &[&RunEvent], f: &mut Findings) {
    let Some(counts) = &cx.record.event_counts else {
        return;
    };
    let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
    for row in written {
        *expected.entry(row.thread_id.as_str()).or_default() += 1;
    }
    for (name, answer) in judged_answers(cx, counts) {
        let Ok(counts) = answer else { continue };
        for (thread_id, count) in counts {
            let want = expected.get(thread_id.as_str()).copied().unwrap_or(0);
            if *count != want {
                // A whole-state rule: the counts are read once, when the world ended.
                f.add_whole_state(
                    BugId::R3,
                    format!("the {name} store's event counts at the end"),
                    format!("the {name} store counts {count} events in thread {thread_id} but {want} were written and not deleted"),
                );
            }
        }
    }
}

/// The answers of a read at the end that the whole-store comparison (R3) judges, each with its
/// store's name: the primary's, and the other backend's unless the two answered a write
/// differently (R9's business: that backend holds other rows).
pub(super) fn judged_answers<'a, T>(
    cx: &Context<'_>,
    both: &'a Both<Answer<T>>,
) -> Vec<(&'static str, &'a Answer<T>)> {
    let backends = [
        (
            cx.primary != StoreKind::Sqlite,
            cx.record.first_slot,
            &both.memory,
        ),
        (cx.primary == StoreKind::Sqlite, "sqlite", &both.sqlite),
    ];
    let disagreed = !cx.record.log.write_disagreements().is_empty();
    (backends.into_iter())
        .filter(|(is_primary, _, _)| *is_primary || !disagreed)
        .map(|(_, name, answer)| (name, answer))
        .collect()
}

/// The rows the stores must hold at the end, as the model takes them: every row written and
/// not deleted, by thread and run.
pub(super) fn rows_to_hold(record: &WorldRecord) -> model::runs::StoredRows {
    let rows = written_in_dump_order(record)
        .into_iter()
        .map(|e| model::runs::StoredRow {
            thread_id: e.thread_id.clone(),
            run_id: e.run_id.clone(),
        });
    model::runs::StoredRows::new(rows.collect())
}

/// R5: per thread, every written seq is above every seq written before it since the thread
/// was last emptied (its era: a thread deletion restarts its numbering at 1, R23).
pub fn seqs_unique_and_increasing(cx: &Context<'_>, f: &mut Findings) {
    let mut max: BTreeMap<(&str, u64), (u64, &str)> = BTreeMap::new();
    for w in cx.record.log.written() {
        let e = &w.event;
        let era = (
            e.thread_id.as_str(),
            era_start(cx.record, &e.thread_id, w.op),
        );
        if let Some(&(m, by)) = max.get(&era) {
            if e.seq <= m {
                f.add_at(
                    BugId::R5,
                    at_write(w, client_store(cx), format!("seq {}", e.seq), format!("a seq above {m}")),
                    format!(
                        "thread {}: {} wrote seq {} after {by} had written seq {m}: seqs not unique and increasing",
                        e.thread_id, e.run_id, e.seq
                    ),
                );
                continue;
            }
        }
        max.insert(era, (e.seq, &e.run_id));
    }
}

/// Whether `row` is what the journal stores of the emitted event `e`: the same event, a trace's
/// content and metadata as the model keeps them under the journals' bound (`max_bytes`).
fn same_event(e: &EmittedEvent, row: &RunEvent, max_bytes: Option<usize>) -> bool {
    let same_content = if e.category == Category::Trace {
        let (content, metadata) = model::runs::kept_trace(&e.content, &e.metadata, max_bytes);
        content == *row.content && metadata == row.metadata
    } else {
        *e.content == *row.content
    };
    e.event_type == row.event_type
        && e.category == row.category
        && same_content
        && e.created_at_ns == row.created_at_ns
}

/// R4: a run that ended, errored or was cancelled has every event it emitted stored, in order;
/// a killed run has a prefix of them. About a whole run rather than one request (what the store
/// holds of it once the world ended): a finding points at no request, only at the trace lines
/// of the run's writes, stop and crashes.
pub fn runs_fully_stored(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    let truth = snapshots.at_end();
    let mut by_run: BTreeMap<&str, Vec<&RunEvent>> = BTreeMap::new();
    for w in cx.record.log.written() {
        // A receipt is the client's write (`put_if_absent`), not one the run emitted.
        if w.event.event_type != history::runs::current::RUN_DELIVERY {
            by_run.entry(&w.event.run_id).or_default().push(&w.event);
        }
    }
    for (r, spec) in cx.scenario.runs.iter().enumerate() {
        let emitted = cx.record.log.emitted_by(r);
        let stored = by_run.get(spec.id.as_str()).map_or(&[][..], Vec::as_slice);
        let outcome = truth.outcome(cx.thread_id(&spec.thread), &spec.id);
        let matching = emitted
            .iter()
            .zip(stored)
            .take_while(|(e, s)| same_event(e, s, cx.scenario.max_trace_content_bytes))
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
            let marks = vec![
                TraceMark::any_time(format!(" {} n=", spec.id)),
                TraceMark::any_time(format!("stop {} ", spec.id)),
                TraceMark::any_time("crash worker-"),
            ];
            // A whole-state rule: what a run left in the store is read once its world ended;
            // its writes and its stop are the lines shown.
            f.add_at(
                BugId::R4,
                Pointer::lines(marks).of_whole_state(format!("the rows stored of {}", spec.id)),
                format!("{} ({}): {how}", spec.id, or_none(outcome)),
            );
        }
    }
}

/// R9: both backends answer every operation identically.
pub fn backends_agree(cx: &Context<'_>, f: &mut Findings) {
    for w in cx.record.log.write_disagreements() {
        let request = crate::divergence::Divergence::of(
            w.call.clone(),
            w.op,
            w.at_us,
            format!("the {} and sqlite stores", w.first_slot),
        )
        .answers(
            format!("sqlite: {}", w.sqlite),
            format!("{}, as the {} store answered", w.first, w.first_slot),
        );
        let mark = request.trace_mark("backends disagree: ");
        f.add_at(
            BugId::R9,
            Pointer::request(request, mark),
            format!(
                "backends disagree on a write: {}: {} {}, sqlite {}",
                w.call, w.first_slot, w.first, w.sqlite
            ),
        );
    }
    for read in cx.record.log.reads() {
        for message in read_disagreements(cx, read) {
            let (sqlite, first) = apart(&message);
            f.add_at(
                BugId::R9,
                Asked::of(cx, read).answers(sqlite, first),
                format!("{}: {message}", when(read)),
            );
        }
    }
    if !cx.record.dumps.agree() {
        // A whole-state rule: the stores' rows, dumped once the world ended.
        f.add_whole_state(
            BugId::R9,
            "the rows each store holds at the end",
            format!(
                "the stores hold different rows: {}",
                rows_differ(cx, &cx.record.dumps.memory, &cx.record.dumps.sqlite)
            ),
        );
    }
}

/// Where the two backends answered one read differently, in words.
fn read_disagreements(cx: &Context<'_>, read: &Read) -> Vec<String> {
    let t = &read.thread;
    let first = cx.record.first_slot;
    let mut out = Vec::new();
    match &read.kind {
        ReadKind::Views {
            count,
            history,
            messages,
        } => {
            if !count.agree() {
                out.push(format!(
                    "count_messages({t}): {first} {} vs sqlite {}",
                    answered(&count.memory),
                    answered(&count.sqlite)
                ));
            }
            if !messages.agree() {
                out.push(format!(
                    "/messages of {t}: {first} {} rows vs sqlite {}",
                    len_of(&messages.memory),
                    len_of(&messages.sqlite)
                ));
            }
            if !history.agree() {
                let n = |h: &Answer<Option<history::runs::ThreadHistory>>| match h {
                    Ok(Some(h)) => h.messages.len().to_string(),
                    Ok(None) => "none".into(),
                    Err(e) => format!("error {e}"),
                };
                out.push(format!(
                    "/history of {t}: {first} {} messages vs sqlite {}",
                    n(&history.memory),
                    n(&history.sqlite)
                ));
            }
        }
        ReadKind::Page {
            limit,
            cursor,
            rows,
        } if !rows.agree() => out.push(format!(
            "list_messages({t}, {limit}, {}): {}",
            cursor_words(cursor),
            rows_differ(cx, &rows.memory, &rows.sqlite)
        )),
        ReadKind::Paginate {
            limit,
            backward,
            count,
            rows,
        } if !rows.agree() || !count.agree() => out.push(format!(
            "paging {t} by {limit} (backward {backward}): {}",
            rows_differ(cx, &rows.memory, &rows.sqlite)
        )),
        ReadKind::Events { run, rows } if !rows.agree() => out.push(format!(
            "list_events({}): {}",
            cx.scenario.runs[*run].id,
            rows_differ(cx, &rows.memory, &rows.sqlite)
        )),
        _ => {}
    }
    out
}

/// Two answers of row lists, in words: their seqs, or that only their contents differ.
fn rows_differ(cx: &Context<'_>, a: &Answer<Vec<RunEvent>>, b: &Answer<Vec<RunEvent>>) -> String {
    let (x, y) = (seqs_of(a), seqs_of(b));
    if x == y {
        let first = match (a, b) {
            (Ok(a), Ok(b)) => first_difference(cx.record.first_slot, a, b),
            _ => String::new(),
        };
        format!("the same rows ({x}) with different contents{first}")
    } else {
        format!("{} {x} vs sqlite {y}", cx.record.first_slot)
    }
}

/// The first row two answers with the same seqs hold differently, and the field that differs
/// with both values (empty when none does).
fn first_difference(first_slot: &str, a: &[RunEvent], b: &[RunEvent]) -> String {
    let Some((x, y)) = a.iter().zip(b).find(|(x, y)| x != y) else {
        return String::new();
    };
    let (field, mine, theirs) = if x.content != y.content {
        ("content", brief_json(&x.content), brief_json(&y.content))
    } else if x.event_type != y.event_type {
        ("event_type", x.event_type.clone(), y.event_type.clone())
    } else if x.metadata != y.metadata {
        ("metadata", brief_json(&x.metadata), brief_json(&y.metadata))
    } else if x.run_id != y.run_id {
        ("run_id", x.run_id.clone(), y.run_id.clone())
    } else if x.user_id != y.user_id {
        (
            "user_id",
            or_none(x.user_id.as_ref()),
            or_none(y.user_id.as_ref()),
        )
    } else {
        (
            "created_at",
            x.created_at_ns.to_string(),
            y.created_at_ns.to_string(),
        )
    };
    format!(
        ", first at seq {}: {field} {first_slot} {mine} vs sqlite {theirs}",
        x.seq
    )
}

fn seqs_of(rows: &Answer<Vec<RunEvent>>) -> String {
    match rows {
        Ok(rows) => {
            let seqs: Vec<u64> = rows.iter().map(|r| r.seq).collect();
            if seqs.len() <= 8 {
                format!("seqs {}", listed(&seqs))
            } else {
                format!(
                    "{} rows, seqs {}..{}",
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

/// What identifies a stored row across a restart: its place, its run, what it is and when,
/// and its message text (a read of planted R3 may have changed the rest of its content).
type RowKey = (String, u64, String, String, i64, String);

fn row_key(row: &RunEvent) -> RowKey {
    (
        row.thread_id.clone(),
        row.seq,
        row.run_id.clone(),
        row.event_type.clone(),
        row.created_at_ns,
        row.content
            .get("content")
            .map_or_else(String::new, Value::to_string),
    )
}

/// R12: every row the `sqlite` store acknowledged before a crash of its host is still there
/// after the restart: its final dump (a read after every restart) holds it. The same of the
/// `jsonl` store when it plays the first slot and is crashed with it: its acknowledged rows
/// are the `sqlite` store's (R9 says where the two answered apart).
pub fn acknowledged_writes_survive_restarts(cx: &Context<'_>, f: &mut Findings) {
    for slot in [cx.record.first_slot, "sqlite"] {
        let mut restarts = cx
            .record
            .log
            .store_restarts()
            .iter()
            .filter(|r| r.slot == slot);
        let Some(last) = restarts.next_back() else {
            continue;
        };
        let dump = if slot == "sqlite" {
            &cx.record.dumps.sqlite
        } else {
            &cx.record.dumps.memory
        };
        let Ok(dump) = dump else {
            continue;
        };
        let held: BTreeSet<RowKey> = dump.iter().map(row_key).collect();
        let lost: Vec<&Written> = cx
            .record
            .log
            .durable_acked()
            .iter()
            .filter(|w| {
                w.op < last.op && !is_deleted(cx.record, w) && !held.contains(&row_key(&w.event))
            })
            .collect();
        if let Some(w) = lost.first() {
            let first = &w.event;
            let pointer = at_write(
                w,
                format!("the {slot} store"),
                format!(
                    "seq {} gone after the restart at {}us",
                    first.seq, last.at_us
                ),
                format!("seq {} held, as acknowledged", first.seq),
            )
            .and(TraceMark::at(last.at_us, "store crash"));
            f.add_at(
                BugId::R12,
                pointer,
                format!(
                    "the {slot} store acknowledged {} rows before its host restarted (last restart at {}us) that it no longer holds, first seq {} of {} ({}) on thread {}",
                    lost.len(),
                    last.at_us,
                    first.seq,
                    first.run_id,
                    first.event_type,
                    first.thread_id
                ),
            );
        }
    }
}

/// R11: no summarized checkpoint keeps a tool result without the AI message that called it.
pub fn summaries_keep_tool_pairs(cx: &Context<'_>, f: &mut Findings) {
    for s in cx.record.log.summaries() {
        let mut calls: BTreeSet<&str> = BTreeSet::new();
        for (i, m) in s.messages.iter().enumerate() {
            match m.kind {
                Shape::Ai => calls.extend(m.tool_calls.iter().map(|c| c.id.as_str())),
                Shape::Tool => {
                    let id = m.tool_call_id.as_deref().unwrap_or("");
                    if !calls.contains(id) {
                        let pointer = super::summary_rules::at_summary(
                            cx,
                            s,
                            format!("tool result at {i} without its call {id}"),
                            format!("call {id} kept before its result"),
                        );
                        f.add_at(
                            BugId::R11,
                            pointer,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn emitted(content: Value) -> EmittedEvent {
        EmittedEvent {
            event_type: "llm_response".into(),
            category: Category::Trace,
            content: Arc::new(content),
            metadata: json!({}),
            created_at_ns: 7,
        }
    }

    fn row(content: Value, metadata: Value) -> RunEvent {
        RunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "llm_response".into(),
            category: Category::Trace,
            content: Arc::new(content),
            metadata,
            seq: 1,
            created_at_ns: 7,
        }
    }

    /// R4's comparison knows the journals' bound: a long trace must be stored cut and marked
    /// under a bound, and whole without one.
    #[test]
    fn a_stored_trace_is_judged_against_the_bound() {
        let e = emitted(json!("x".repeat(10)));
        let cut = row(
            json!("xxxx"),
            json!({"content_truncated": true, "original_byte_length": 10}),
        );
        let whole = row(json!("x".repeat(10)), json!({}));
        assert!(same_event(&e, &cut, Some(4)));
        assert!(
            !same_event(&e, &whole, Some(4)),
            "a journal that ignores its bound"
        );
        assert!(same_event(&e, &whole, None));
        assert!(
            !same_event(&e, &cut, None),
            "a journal that cuts without a bound"
        );
        let unmarked = row(json!("xxxx"), json!({}));
        assert!(
            !same_event(&e, &unmarked, Some(4)),
            "a cut without its marks"
        );
    }
}
