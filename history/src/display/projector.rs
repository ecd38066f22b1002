//! The pure projector: persisted rows and the request's primary agent in, chat history out.
//!
//! No I/O, no `Result`, no panics: a malformed relevant row is skipped with a metadata-only
//! warning, an irrelevant row is never parsed beyond its envelope (contract, "Projection").
//!
//! Steps: (0) keep only rows on displays that the given rows themselves mark visible (defence in
//! depth: the stores already query only those) [P2]; (1) keep rows of the five families, check
//! their 8-field identity and read `created_at` as a JSON integer [P8], then drop later copies of
//! an identity [P4] (validation first, so a malformed copy never hides a valid one); (2) sort by
//! `(created_at, event_id, identity)`; (3) walk the rows, keeping per display the text streamed
//! since the last user turn (chunks, HITL questions, recovered stop text), which a primary stop
//! can complete [P5, P6]; (4) merge consecutive contributions of one role on one display: user
//! parts side by side, assistant text concatenated.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::chat::ChatMessage;
use super::envelope::{self, Envelope, EnvelopeFields, FamilyData, KeptEnvelope, IDENTITY_FIELDS};
use super::family::Family;
use super::identity::AgentIdentity;
use super::json;
use super::store::StoredRow;
use super::visible::{visible_displays, Visible};
use super::walk::{Ordered, Walk};
use super::warning::{with_raw_data, Warning, WarningCode};
use crate::{BugId, Planted};

/// How to project.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProjectorOptions {
    /// Planted legacy behaviours (none in production).
    pub planted: Planted,
}

/// The reconstructed history and what was skipped on the way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    pub messages: Vec<ChatMessage>,
    /// Identity and `created_at` warnings in input order, then payload and media warnings in
    /// projection order.
    pub warnings: Vec<Warning>,
}

/// Projects `rows` (raw persisted bytes, any order, duplicates allowed) into a chat history.
pub fn project<R: AsRef<[u8]>>(
    rows: &[R],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    let mut parsed = Vec::with_capacity(rows.len());
    parsed.extend(rows.iter().filter_map(|row| read_envelope(row.as_ref())));
    let order: Vec<usize> = (0..parsed.len()).collect();
    // Pre-condition of the steps: a row is read at most once.
    debug_assert!(parsed.len() <= rows.len());
    project_envelopes(&parsed, &order, primary, options)
}

/// Projects stored rows as [`project`] projects their bytes, reading the envelope a store kept
/// with a row instead of parsing the row again.
pub(crate) fn project_stored(
    rows: &[StoredRow],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    // Each distinct envelope is read once; `order` names, row by row, the envelope each row has.
    // Stored copies of one row share their kept envelope (the in-memory store keeps one per
    // distinct bytes, and every replica stores its own copy of a delivery), and the steps decide
    // a row by its envelope alone, so a copy is decided as its original was (see
    // `project_envelopes`). The map is only asked membership; an address is a key that lives as
    // long as `rows`.
    let mut parsed = Vec::with_capacity(rows.len());
    let mut order = Vec::with_capacity(rows.len());
    let mut first_reading: HashMap<*const KeptEnvelope, usize, crate::fixed_hash::FixedState> =
        HashMap::default();
    for row in rows {
        match &row.kept {
            Some(kept) => {
                let next = parsed.len();
                let index = *first_reading.entry(Arc::as_ptr(kept)).or_insert(next);
                if index == next {
                    parsed.push(kept.fields());
                }
                order.push(index);
            }
            None => {
                if let Some(fields) = read_envelope(&row.bytes) {
                    order.push(parsed.len());
                    parsed.push(fields);
                }
            }
        }
    }
    // Post-condition: every row that parses is named once, and every envelope read is named by
    // the first row that has it.
    debug_assert!(order.len() <= rows.len() && parsed.len() <= order.len());
    debug_assert!(order.iter().all(|&i| i < parsed.len()));
    project_envelopes(&parsed, &order, primary, options)
}

/// The envelope of a row that parses as one and has a class chain.
fn read_envelope(bytes: &[u8]) -> Option<EnvelopeFields<'_>> {
    Envelope::parse(bytes).ok()?.fields()
}

/// How steps 0 and 1 decided a row's envelope, so that a later row with the same envelope (a
/// stored copy) is decided alike without reading it again.
#[derive(Clone, Copy)]
enum Decided {
    /// Not read yet.
    Unread,
    /// Skipped without a warning (not on a visible display, or of no family).
    Skipped,
    /// Warned about: the warning at this index of the identity or the `created_at` list.
    BadIdentity(usize),
    BadCreatedAt(usize),
    /// Kept for the walk, at this index of `ordered`.
    Kept(usize),
}

impl Decided {
    fn is_read(self) -> bool {
        !matches!(self, Decided::Unread)
    }
}

/// Steps 0 to 4 over the rows `order` names, each by the index of its envelope in `parsed`
/// (rows with the same envelope name the same index).
fn project_envelopes(
    parsed: &[EnvelopeFields<'_>],
    order: &[usize],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    debug_assert!(
        order.iter().all(|&i| i < parsed.len()),
        "order names parsed rows"
    );
    let planted = options.planted;
    let visible = visible_displays(parsed, planted);
    let (ordered, warnings) = admitted_rows(parsed, order, &visible, planted);
    let admitted = ordered.len();
    let mut ordered = deduplicated(ordered, planted);
    // Step 1c only drops copies (P4 keeps them all).
    debug_assert!(
        ordered.len() <= admitted && (!planted.is(BugId::P4) || ordered.len() == admitted)
    );
    ordered.sort_by(|a, b| {
        (a.created_at, a.event_id(), a.identity()).cmp(&(b.created_at, b.event_id(), b.identity()))
    });
    // Step 2's order: by created_at, then event id; two rows with one identity only where
    // planted P4 keeps copies.
    debug_assert!(ordered.windows(2).all(|pair| {
        (pair[0].created_at, pair[0].event_id()) <= (pair[1].created_at, pair[1].event_id())
            && (planted.is(BugId::P4) || pair[0].identity() != pair[1].identity())
    }));
    let warned = warnings.len();
    let mut walk = Walk {
        primary,
        planted,
        messages: Vec::new(),
        streamed: BTreeMap::new(),
        warnings,
    };
    for row in &ordered {
        walk.apply(row);
    }
    // Post-condition: a row adds one message at most (P3 renders a HITL row twice), so there are
    // no more messages than rows kept; and the walk only appends to steps 0 and 1's warnings.
    debug_assert!(
        walk.messages.len() <= ordered.len()
            || (planted.is(BugId::P3) && walk.messages.len() <= 2 * ordered.len())
    );
    debug_assert!(walk.warnings.len() >= warned);
    // Post-condition: no message comes from a display no `UserAgent` marker made visible (the
    // rows of step 0 are all local, so a hidden display is always known as such here).
    if let Visible::Displays(shown) = &visible {
        debug_assert!(
            walk.messages
                .iter()
                .all(|(_, d)| shown.contains(d.as_str())),
            "a message from a hidden display"
        );
    }
    // Post-condition: no message is empty, and two adjacent messages never share role and
    // display (step 4 merged them).
    debug_assert!(walk.messages.iter().all(|(m, _)| !m.content.is_empty()));
    debug_assert!(walk
        .messages
        .windows(2)
        .all(|pair| (pair[0].0.role, &pair[0].1) != (pair[1].0.role, &pair[1].1)));
    Projection {
        messages: walk.messages.into_iter().map(|(m, _)| m).collect(),
        warnings: walk.warnings,
    }
}

/// Steps 0, 1a and 1b over the rows `order` names: the rows kept for the walk, in input order,
/// and the warnings of the others (identity warnings of every row before `created_at` ones, the
/// steps' order).
fn admitted_rows<'p, 'a>(
    parsed: &'p [EnvelopeFields<'a>],
    order: &[usize],
    visible: &Visible<'_>,
    planted: Planted,
) -> (Vec<Ordered<'p, 'a>>, Vec<Warning>) {
    let mut identity_warnings: Vec<Warning> = Vec::new();
    let mut created_at_warnings: Vec<Warning> = Vec::new();
    let mut ordered: Vec<Ordered<'p, 'a>> = Vec::with_capacity(parsed.len());
    let mut decided = vec![Decided::Unread; parsed.len()];
    for &index in order {
        // A row whose envelope was read before is decided as that row was: every step here
        // reads the envelope and the planted bugs only. Its warning repeats where this row
        // stands. A kept copy is one step 1c drops (the earlier row comes first with the same
        // identity), so it goes on only where planted P4 keeps copies.
        match decided[index] {
            Decided::Unread => {}
            Decided::Skipped => continue,
            Decided::BadIdentity(w) => {
                identity_warnings.push(identity_warnings[w].clone());
                continue;
            }
            Decided::BadCreatedAt(w) => {
                created_at_warnings.push(created_at_warnings[w].clone());
                continue;
            }
            Decided::Kept(k) => {
                if planted.is(BugId::P4) {
                    ordered.push(ordered[k]);
                }
                continue;
            }
        }
        let env = &parsed[index];
        decided[index] = Decided::Skipped;
        if !visible.admits(env) {
            continue;
        }
        let warned = identity_warnings.len();
        let Some(family) = identified(env, planted, &mut identity_warnings) else {
            if identity_warnings.len() > warned {
                decided[index] = Decided::BadIdentity(warned);
            }
            continue;
        };
        let warned = created_at_warnings.len();
        match with_created_at(env, family, planted, &mut created_at_warnings) {
            Some(row) => {
                decided[index] = Decided::Kept(ordered.len());
                ordered.push(row);
            }
            None => decided[index] = Decided::BadCreatedAt(warned),
        }
    }
    // Post-condition: every row named was decided (a later copy reads its decision), every
    // kept row lies on a visible display, its identity complete (8 non-empty strings, which the
    // walk reads without looking), and no row was both kept and warned about.
    debug_assert!(order.iter().all(|&i| decided[i].is_read()));
    debug_assert!(ordered.iter().all(|r| visible.admits(r.env)));
    debug_assert!(ordered.iter().all(|r| r
        .identity()
        .iter()
        .all(|f| f.as_deref().is_some_and(|s| !s.is_empty()))));
    debug_assert!(
        ordered.len() + identity_warnings.len() + created_at_warnings.len() <= order.len(),
        "one outcome at most a row"
    );
    identity_warnings.append(&mut created_at_warnings);
    (ordered, identity_warnings)
}

/// Step 1a: the family of a row whose identity is complete (8 non-empty strings); `None`, and a
/// warning for a family row, otherwise.
fn identified(
    env: &EnvelopeFields<'_>,
    planted: Planted,
    warnings: &mut Vec<Warning>,
) -> Option<Family> {
    let family = Family::of_parents(&env.parents, planted)?;
    let present = |i: usize| env.identity[i].as_deref().filter(|s| !s.is_empty());
    let Some(bad) = (0..IDENTITY_FIELDS.len()).find(|&i| present(i).is_none()) else {
        return Some(family);
    };
    let warning = Warning::new(
        WarningCode::BadIdentity,
        present(envelope::EVENT_ID).map(str::to_owned),
        present(envelope::DISPLAY_ID).map(str::to_owned),
        Some(IDENTITY_FIELDS[bad]),
    );
    warnings.push(with_raw_data(warning, env.data, planted));
    None
}

/// Step 1c: the first valid row of each identity, in input order.
fn deduplicated<'p, 'a>(
    candidates: Vec<Ordered<'p, 'a>>,
    planted: Planted,
) -> Vec<Ordered<'p, 'a>> {
    if planted.is(BugId::P4) {
        // planted P4: the legacy reader trusted the store to hold each event once.
        return candidates;
    }
    // Only membership is asked of the set, never its order; the hasher's keys are fixed (no
    // OS randomness), so even its layout is the same at every run.
    // A kept row's envelope reaches the cell its payload's reading is kept in, which clippy
    // takes for a key that may change; `ByEventId` hashes and compares identity fields only.
    #[allow(clippy::mutable_key_type)]
    let mut seen: HashSet<ByEventId<'_, '_>, crate::fixed_hash::FixedState> =
        HashSet::with_capacity_and_hasher(candidates.len(), Default::default());
    let mut candidates = candidates;
    candidates.retain(|c| seen.insert(ByEventId(c.env)));
    // Post-condition: one row per identity.
    debug_assert_eq!(seen.len(), candidates.len());
    candidates
}

/// A complete identity in a hash set: equal when every field is, hashed by its event id only
/// (equal identities have equal event ids), which tells rows apart at a fraction of the hashing.
struct ByEventId<'p, 'a>(&'p EnvelopeFields<'a>);

impl PartialEq for ByEventId<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.identity == other.0.identity
    }
}

impl Eq for ByEventId<'_, '_> {}

impl std::hash::Hash for ByEventId<'_, '_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.str_field(envelope::EVENT_ID).hash(state);
    }
}

/// Step 1b: `created_at` as a JSON integer, else the row is skipped with a warning.
fn with_created_at<'p, 'a>(
    env: &'p EnvelopeFields<'a>,
    family: Family,
    planted: Planted,
    warnings: &mut Vec<Warning>,
) -> Option<Ordered<'p, 'a>> {
    debug_assert_eq!(
        Family::of_parents(&env.parents, planted),
        Some(family),
        "the family step 1a found"
    );
    let data = match env.family_data {
        Some(kept) if kept.family == family => kept,
        _ => FamilyData::read(family, env.data),
    };
    let [raw_created_at, payload] = data.fields;
    let created_at = match data.created_at {
        Some(n) => n,
        // planted P8: the legacy sort coerced whatever it found to a number.
        None if planted.is(BugId::P8) => lenient_created_at(raw_created_at),
        None => {
            let field = |i: usize| env.str_field(i).map(str::to_owned);
            let warning = Warning::new(
                WarningCode::BadCreatedAt,
                field(envelope::EVENT_ID),
                field(envelope::DISPLAY_ID),
                Some("created_at"),
            );
            warnings.push(with_raw_data(warning, env.data, planted));
            return None;
        }
    };
    // Post-condition: a kept row's family data is the family step 1a found (a stored reading
    // of another family is read again).
    debug_assert_eq!(data.family, family);
    Some(Ordered {
        created_at,
        family,
        env,
        payload,
        reading: data.reading,
    })
}

/// The legacy coercion of planted bug P8: numeric strings parsed, bools 0/1, anything else 0.
fn lenient_created_at(raw: Option<&RawValue>) -> i128 {
    let Some(raw) = raw else { return 0 };
    json::as_str(raw)
        .and_then(|s| s.trim().parse::<i128>().ok())
        .or_else(|| json::as_bool(raw).map(i128::from))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::json::tests::raw;
    use crate::display::payload;
    use crate::display::{DisplayEventStore, MemoryDisplayStore};

    fn display_row(
        agent: (&str, &str),
        run: &str,
        event_id: &str,
        parents: &[&str],
        data: serde_json::Value,
    ) -> Vec<u8> {
        serde_json::json!({
            "agent_class": agent.0, "agent_id": agent.1, "thread_id": "t1", "display_id": "d1",
            "run_id": run, "event_type": "display_event", "event_name": parents[0],
            "event_id": event_id, "event_parents": parents, "event_data": data,
        })
        .to_string()
        .into_bytes()
    }

    /// Rows with copies of good and bad rows interleaved, as replicas store them.
    fn rows_with_copies() -> Vec<Vec<u8>> {
        let user = ("UserAgent", "u0");
        let lead = ("LeadAgent", "a1");
        let message = |t: &str| serde_json::json!([{"role": "user", "blocks": [{"block_type": "text", "text": t}]}]);
        let turn = display_row(
            user,
            "r0",
            "e1",
            &["UserMessageEvent"],
            serde_json::json!({"created_at": 1, "messages": message("hi")}),
        );
        // A chunk of the lead's: `created_at` as given (the string one is a bad row).
        let chunk_of = |run: &str, event_id: &str, created_at: serde_json::Value, text: &str| {
            let data = serde_json::json!({"created_at": created_at, "content": text});
            display_row(lead, run, event_id, &["ChunkEvent"], data)
        };
        let chunk = chunk_of("r1", "e2", 2.into(), "Hel");
        let no_run = chunk_of("", "e3", 3.into(), "x");
        let late = chunk_of("r1", "e4", "4".into(), "lo");
        let stop = display_row(
            lead,
            "r1",
            "e5",
            &["StopEvent"],
            serde_json::json!({"created_at": 5, "output_messages": []}),
        );
        let other = display_row(
            lead,
            "r1",
            "e6",
            &["SomethingElse"],
            serde_json::json!({"created_at": 6}),
        );
        vec![
            late.clone(),
            turn.clone(),
            no_run.clone(),
            chunk.clone(),
            turn.clone(),
            late.clone(),
            other.clone(),
            no_run.clone(),
            stop.clone(),
            chunk.clone(),
            late,
            other,
            stop,
            no_run,
            turn,
        ]
    }

    /// Copies that share their kept envelope are decided as the rows were: the same projection,
    /// warnings in the same places, as reading every row's bytes, with and without the planted
    /// bugs that see copies (P4), coerce `created_at` (P8) or print a warning's data (P10).
    #[test]
    fn copies_sharing_an_envelope_project_as_their_bytes_do() {
        let primary = AgentIdentity::new("LeadAgent", "a1");
        #[allow(unused_mut)]
        let mut settings = vec![Planted::none()];
        #[cfg(feature = "planted")]
        settings.extend([BugId::P4, BugId::P8, BugId::P10].map(Planted::only));
        for planted in settings {
            let store = MemoryDisplayStore::new(planted);
            let rows = rows_with_copies();
            for row in &rows {
                store.append(row).unwrap();
            }
            let stored = store.rows_on_displays("t1", &["d1".to_string()]).unwrap();
            // The store answers the rows of a family: all but the two of none.
            assert_eq!(stored.len(), rows.len() - 2);
            assert!(stored.iter().all(|r| r.kept.is_some()));
            let options = ProjectorOptions { planted };
            let from_kept = project_stored(&stored, Some(&primary), &options);
            let bytes: Vec<&[u8]> = stored.iter().map(|r| &*r.bytes).collect();
            let from_bytes = project(&bytes, Some(&primary), &options);
            assert_eq!(from_kept, from_bytes, "planted {planted:?}");
            let codes: Vec<WarningCode> = from_bytes.warnings.iter().map(|w| w.code).collect();
            let count = |code: WarningCode| codes.iter().filter(|&&c| c == code).count();
            assert_eq!(count(WarningCode::BadIdentity), 3, "{codes:?}");
            if !planted.is(BugId::P8) {
                assert_eq!(count(WarningCode::BadCreatedAt), 3, "{codes:?}");
            }
            assert!(!from_bytes.messages.is_empty());
        }
    }

    #[test]
    fn the_legacy_coercion_turns_anything_into_a_number() {
        assert_eq!(lenient_created_at(Some(&raw("\"42\""))), 42);
        assert_eq!(lenient_created_at(Some(&raw("\"soon\""))), 0);
        assert_eq!(lenient_created_at(Some(&raw("true"))), 1);
        assert_eq!(lenient_created_at(Some(&raw("1.5"))), 0);
        assert_eq!(lenient_created_at(None), 0);
    }

    #[test]
    fn warnings_keep_their_metadata_text_without_p10() {
        let w = Warning::new(
            WarningCode::BadPayload,
            Some("e".into()),
            None,
            Some("content"),
        );
        let data = raw(r#"{"content":"private"}"#);
        let same = with_raw_data(w.clone(), Some(&data), Planted::none());
        assert_eq!(same, w);
    }

    #[test]
    fn a_stop_answer_is_the_text_of_its_contents() {
        // A stop's answer is its last output message's.
        let answer = |m: &str| payload::stop_answer(Some(&raw(&format!("[{{}},{m}]"))));
        assert_eq!(
            answer(
                r#"{"role":"assistant","contents":[{"type":"text","text":"Hel"},{"type":"image","url":null},{"type":"text","text":"lo"}],"content":"Hello"}"#
            ),
            Ok("Hello".to_string())
        );
        assert_eq!(
            answer(r#"{"contents":null,"content":""}"#),
            Ok(String::new())
        );
        assert_eq!(answer(r#"{"contents": null }"#), Ok(String::new()));
        assert_eq!(answer(r#"{"content":"legacy"}"#), Ok("legacy".to_string()));
        for bad in [
            r#"{"contents":"x"}"#,
            r#"{"contents":[1]}"#,
            r#"{"contents":[{"type":"text","text":5}]}"#,
            r#"{"content":5}"#,
            r#"{}"#,
            r#""x""#,
        ] {
            assert_eq!(answer(bad), Err(()), "{bad}");
        }
    }

    #[test]
    fn rows_of_no_family_and_garbage_produce_nothing() {
        let rows: [&[u8]; 4] = [
            b"",
            b"{\"event_parents\":[\"Custom\"],\"event_data\":\"x\"}",
            b"{\"event_parents\":\"ChunkEvent\"}",
            b"[\"ChunkEvent\"]",
        ];
        let p = project(&rows, None, &ProjectorOptions::default());
        assert!(p.messages.is_empty() && p.warnings.is_empty());
    }
}
