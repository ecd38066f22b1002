//! The seed corpus: every scenario file of the repository as a scenario-mode input of its
//! workload's target, so fuzzing starts from the states the catalog already knows to matter.

use super::input::scenario_input;
use crate::scenario_file::{discover, ScenarioFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The fuzz target that plays `workload`'s scenarios (`sim_display`).
pub fn target_name(workload: &str) -> String {
    format!("sim_{workload}")
}

/// Writes one input per scenario file under `scenarios` into `out/sim_<workload>/` (named after
/// the file, its folder kept: `display-p04_every_replica_persists_a_copy`). Returns how many
/// inputs each target got. A file that does not read is an error naming it: a seed corpus
/// missing files in silence would start campaigns from less than it claims.
pub fn write_seed_corpus(scenarios: &Path, out: &Path) -> Result<BTreeMap<String, usize>, String> {
    let files = discover(scenarios).map_err(|e| format!("{}: {e}", scenarios.display()))?;
    if files.is_empty() {
        return Err(format!("{}: no scenario files", scenarios.display()));
    }
    let mut counts = BTreeMap::new();
    for path in files {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = ScenarioFile::parse(&path, &text).map_err(|e| e.to_string())?;
        let target = target_name(file.workload().name());
        let dir = out.join(&target);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dest = dir.join(input_name(scenarios, &path));
        std::fs::write(&dest, scenario_input(&text))
            .map_err(|e| format!("{}: {e}", dest.display()))?;
        *counts.entry(target).or_insert(0) += 1;
    }
    Ok(counts)
}

/// `scenarios/display/p04.toml` under `scenarios` -> `display-p04`.
fn input_name(root: &Path, path: &Path) -> PathBuf {
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    PathBuf::from(parts.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_names_keep_the_folder() {
        let root = Path::new("scenarios");
        assert_eq!(
            input_name(root, Path::new("scenarios/display/p04.toml")),
            PathBuf::from("display-p04")
        );
        assert_eq!(
            input_name(root, Path::new("scenarios/regressions/r3-seed-1.toml")),
            PathBuf::from("regressions-r3-seed-1")
        );
    }
}
