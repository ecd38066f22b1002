//! The rows the shared store holds, read back from its file: how many copies of each published
//! step were persisted (rows and quarantined rows alike), and the order rows were committed in.

use std::collections::BTreeMap;
use std::path::Path;

/// What the shared store holds, by step.
#[derive(Clone, Debug, Default)]
pub struct StoredSteps {
    /// Copies of each step (rows and quarantined rows).
    pub copies: BTreeMap<u32, u32>,
    /// The steps of the `rows` table in commit order (a step once, at its first copy).
    pub commit_order: Vec<u32>,
    /// Steps only in quarantine.
    pub quarantined: Vec<u32>,
}

/// A row whose event id nobody published is counted under this step.
pub const UNKNOWN_STEP: u32 = u32::MAX;

/// What the store at `path` (histsim's own SQLite file) holds, by the `event_id` each row
/// carries; `event_steps` maps the event ids the agents published to their steps.
pub fn stored_steps(
    path: &Path,
    event_steps: &BTreeMap<String, u32>,
) -> Result<StoredSteps, String> {
    let read = || -> rusqlite::Result<[Vec<Vec<u8>>; 2]> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let table = |table: &str| -> rusqlite::Result<Vec<Vec<u8>>> {
            let mut stmt = conn.prepare(&format!("SELECT bytes FROM {table} ORDER BY seq"))?;
            let rows = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))?;
            rows.collect()
        };
        Ok([table("rows")?, table("quarantine")?])
    };
    let [rows, quarantined] =
        read().map_err(|e| format!("cannot read the shared store {}: {e}", path.display()))?;
    Ok(tally(&rows, &quarantined, event_steps))
}

/// What a store holding `rows` and `quarantined` (each in commit order) holds, by step.
pub fn tally<R: AsRef<[u8]>>(
    rows: &[R],
    quarantined: &[R],
    event_steps: &BTreeMap<String, u32>,
) -> StoredSteps {
    let mut stored = StoredSteps::default();
    for (bytes, in_rows) in
        (rows.iter().map(|r| (r, true))).chain(quarantined.iter().map(|r| (r, false)))
    {
        let step = event_id_of(bytes.as_ref())
            .and_then(|id| event_steps.get(&id).copied())
            .unwrap_or(UNKNOWN_STEP);
        let copies = stored.copies.entry(step).or_default();
        *copies += 1;
        let order = match in_rows {
            true => &mut stored.commit_order,
            false => &mut stored.quarantined,
        };
        if *copies == 1 && step != UNKNOWN_STEP {
            order.push(step);
        }
    }
    stored
}

/// A row's top-level `event_id`, if it has one that is a string.
fn event_id_of(bytes: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Identity {
        event_id: Option<serde_json::Value>,
    }
    let identity: Identity = serde_json::from_slice(bytes).ok()?;
    match identity.event_id? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_event_id_is_read_from_its_top_level() {
        assert_eq!(
            event_id_of(br#"{"event_id":"abc","event_data":{"event_id":"x"}}"#),
            Some("abc".into())
        );
        assert_eq!(event_id_of(br#"{"event_id":""}"#), Some(String::new()));
        assert_eq!(event_id_of(br#"{"event_id":7}"#), None);
        assert_eq!(event_id_of(b"not json"), None);
    }
}
