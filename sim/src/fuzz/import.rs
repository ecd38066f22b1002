//! A crash input to a regression scenario: decode it as its target did, play it, shrink the
//! scenario while the same ID still fires, and write a scenario file `histsim scenarios`
//! replays.

use super::input;
use super::target::{play, Played};
use crate::scenario_file::ScenarioFile;
use crate::shrink::{shrink, ShrinkOptions, Shrunk};
use crate::workload::{DynWorkload, StoreKind, WorldConfig};
use history::{BugId, Planted};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an import wrote.
pub struct Imported {
    pub id: BugId,
    pub path: PathBuf,
    /// What was written at `path`.
    pub text: String,
    pub shrunk: Shrunk,
}

/// Turns the crash input `crash` of `workload`'s target (played with `planted`, as the target
/// was) into a shrunk scenario file under `out`. An input that passes, or that does not decode,
/// is an error saying so: there is nothing to import.
pub fn import(
    crash: &Path,
    workload: &'static dyn DynWorkload,
    planted: Option<BugId>,
    out: &Path,
    time_cap: Duration,
) -> Result<Imported, String> {
    let data = std::fs::read(crash).map_err(|e| format!("{}: {e}", crash.display()))?;
    let id = match play(workload, &data, planted) {
        Played::Violated(v) => v.id,
        Played::Rejected(why) => {
            return Err(format!(
                "{}: not a {} input: {why}",
                crash.display(),
                workload.name()
            ))
        }
        Played::Passed => return Err(format!("{}: the input passes", crash.display())),
        Played::Broken(why) => {
            return Err(format!(
                "{}: the world broke down ({why}), no invariant to reproduce; replay it with the fuzz target",
                crash.display()
            ))
        }
    };
    let scenario = input::decode(workload, &data).map_err(|e| e.to_string())?;
    let shrunk = shrink(
        &scenario,
        &ShrinkOptions {
            target: id,
            world: WorldConfig::new(StoreKind::Memory, Planted::from_option(planted)),
            time_cap,
        },
    );
    let name = crash
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".into());
    let file = scenario_file(&shrunk, id, &name, planted);
    let how = planted.map(|p| format!("-planted-{p}")).unwrap_or_default();
    let short: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let short = &short[short.len().saturating_sub(12)..];
    let path = out.join(format!(
        "{}-fuzz-{}-{short}{how}.toml",
        id.as_str().to_lowercase(),
        workload.name()
    ));
    let text = file.to_toml()?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Imported {
        id,
        path,
        text,
        shrunk,
    })
}

fn scenario_file(shrunk: &Shrunk, id: BugId, input: &str, planted: Option<BugId>) -> ScenarioFile {
    let how = planted
        .map(|p| format!(" with {p} planted"))
        .unwrap_or_default();
    shrunk.regression(
        id,
        &format!("fuzz input {input}"),
        &format!("Imported by histsim fuzz import from libFuzzer crash input {input}{how}"),
        format!("fuzz crash input {input}{how}"),
    )
}
