//! A system under test as a live run's shared store (`histsim live --sut CMD`): each replica
//! process opens it on the run's directory through the SUT protocol, and after the run the judge
//! opens it once more and asks `stored_rows` for every row the store holds, in commit order,
//! instead of reading histsim's own SQLite file.

use super::store_rows::{tally, StoredSteps};
use crate::sut::protocol::{Durability, OpenOptions, Opened, Request, StoredRows};
use crate::sut::{SutOptions, SutProcess};
use history::Planted;
use std::collections::BTreeMap;
use std::path::Path;

/// The ops a live run needs of a system: its replicas' persisters append, their request
/// handlers reconstruct, and the judge lists what the store holds.
pub const LIVE_OPS: [&str; 3] = ["append", "reconstruct", "stored_rows"];

/// The store kind a live run opens: one file several processes write.
const LIVE_STORE: &str = "sqlite";

/// Starts `command` and opens it on `dir` with `planted`.
pub fn open_on(command: &str, dir: &Path, planted: Planted) -> Result<SutProcess, String> {
    let mut process = SutProcess::start(SutOptions::new(command)).map_err(|e| e.to_string())?;
    let request = Request::Open {
        data_dir: dir.display().to_string(),
        options: OpenOptions {
            store: LIVE_STORE.into(),
            planted: planted.active().map(|b| b.to_string()),
            crashes: true,
        },
    };
    let opened: Opened = match process.call(&request).map_err(|e| e.to_string())? {
        Ok(answer) => serde_json::from_value(answer).map_err(|e| format!("open: {e}"))?,
        Err(refused) => return Err(format!("open refused: {}", refused.message)),
    };
    if opened.durability != Durability::Restart {
        return Err(format!(
            "`{command}` declares no durability in its `open` answer: its replicas' processes \
             would not share one store, and a killed replica's rows would be lost \
             (docs/sut-protocol.md, `open`)"
        ));
    }
    Ok(process)
}

/// Checks, before a live run starts anything, that `command` declares every op of
/// [`LIVE_OPS`] and opens a store that outlives its process (on a scratch directory): `Err`
/// says what is missing, a usage error. A planted bug asks for the system's planted switches.
pub fn check(command: &str, planted: Option<history::BugId>) -> Result<(), String> {
    let process =
        SutProcess::start(SutOptions::new(command)).map_err(|e| format!("--sut {command}: {e}"))?;
    let missing: Vec<&str> = (LIVE_OPS.iter().copied())
        .filter(|op| !process.supports(op))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "--sut {command}: `{}` does not declare {missing:?} in its hello; a live run needs {LIVE_OPS:?} \
             (`stored_rows` lists the rows the store holds, in commit order, for the judge: \
             docs/sut-protocol.md)",
            process.hello().system
        ));
    }
    if let (Some(id), false) = (planted, process.hello().planted) {
        return Err(format!(
            "--sut {command} --planted {id}: `{}` does not declare `planted` in its hello, so \
             it would run without the bug (docs/sut-protocol.md, `hello`)",
            process.hello().system
        ));
    }
    drop(process);
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    open_on(command, scratch.path(), Planted::none()).map(drop)
}

/// What the store holds, by step, as `command` opened on `dir` lists it (`stored_rows`).
pub fn stored_steps(
    command: &str,
    dir: &Path,
    planted: Planted,
    event_steps: &BTreeMap<String, u32>,
) -> Result<StoredSteps, String> {
    let failed = |e: String| format!("cannot read the shared store through `{command}`: {e}");
    let mut process = open_on(command, dir, planted).map_err(failed)?;
    let answer = process.call(&Request::StoredRows {});
    let listed: StoredRows = match answer.map_err(|e| failed(e.to_string()))? {
        Ok(answer) => serde_json::from_value(answer).map_err(|e| failed(e.to_string()))?,
        Err(refused) => return Err(failed(format!("stored_rows refused: {}", refused.message))),
    };
    let _ = process.call(&Request::Close {});
    Ok(tally(&listed.rows, &listed.quarantined, event_steps))
}
