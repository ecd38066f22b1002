//! The seed corpus: every scenario file of the repository as a scenario-mode input of its
//! workload's target, so fuzzing starts from the states the catalog already knows to matter.

use super::input::scenario_input;
use crate::scenario_file::{discover, ScenarioFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The fuzz target that plays `workload`'s scenarios (`sim_display`).
pub fn target_name(workload: &str) -> String {
    format!("sim_{workload}")
}

/// Writes one input per scenario file under `scenarios` into `out/sim_<workload>/` (named after
/// the file, its folder kept: `display-p04_every_replica_persists_a_copy`). Returns how many
/// inputs each target got. A file that does not read is an error naming it: a seed corpus
/// missing files in silence would start campaigns from less than it claims.
///
/// No two inputs of a target have the same size: a file whose input would tie with an earlier
/// one (in path order) gets trailing newlines until it does not. libFuzzer stable-sorts its seed
/// files by size alone, so inputs of one size would run in the directory's order, which differs
/// between file systems, and a fixed `-seed` would take another path on another machine.
pub fn write_seed_corpus(scenarios: &Path, out: &Path) -> Result<BTreeMap<String, usize>, String> {
    // In path order: `discover` sorts.
    let files = discover(scenarios).map_err(|e| format!("{}: {e}", scenarios.display()))?;
    if files.is_empty() {
        return Err(format!("{}: no scenario files", scenarios.display()));
    }
    let mut counts = BTreeMap::new();
    let mut sizes: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for path in files {
        let mut text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = ScenarioFile::parse(&path, &text).map_err(|e| e.to_string())?;
        let target = target_name(file.workload().name());
        // An input is its text behind one mode byte: texts tie exactly when inputs do.
        let taken = sizes.entry(target.clone()).or_default();
        while !taken.insert(text.len()) {
            text.push('\n');
        }
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
    fn inputs_of_one_target_never_tie_in_size_and_still_read_as_their_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scenarios = dir.path().join("scenarios");
        std::fs::create_dir_all(scenarios.join("display")).expect("mkdir");
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../scenarios/display/p04_every_replica_persists_a_copy.toml"),
        )
        .expect("a display scenario file");
        for name in ["a", "b", "c"] {
            std::fs::write(
                scenarios.join("display").join(format!("{name}.toml")),
                &text,
            )
            .expect("write");
        }
        let out = dir.path().join("corpus");
        let counts = write_seed_corpus(&scenarios, &out).expect("written");
        assert_eq!(counts.get("sim_display"), Some(&3));
        let mut sizes = BTreeSet::new();
        for name in ["display-a", "display-b", "display-c"] {
            let bytes = std::fs::read(out.join("sim_display").join(name)).expect("input");
            assert!(sizes.insert(bytes.len()), "{name} ties in size");
            let written = std::str::from_utf8(&bytes[1..]).expect("text");
            assert_eq!(
                written.trim_end(),
                text.trim_end(),
                "only newlines were added"
            );
            let parsed = ScenarioFile::parse(Path::new(name), written).expect("parses");
            let original = ScenarioFile::parse(Path::new(name), &text).expect("parses");
            assert_eq!(
                format!("{:?}", parsed.scenario),
                format!("{:?}", original.scenario)
            );
        }
        assert_eq!(sizes.len(), 3);
    }

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
