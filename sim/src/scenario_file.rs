//! Scenario files: a hand-readable, versioned TOML format for a scripted run.
//!
//! A file names the catalog ID it reproduces and holds one workload's script: a `[display]` table
//! for a P ID, a `[runs]` table for an R ID, a `[journal]` table for a J ID but J14, a `[spool]`
//! table for J14 (exactly one of them). Each format is documented in its workload's
//! `scenario.rs` (`sim/src/{display,runs,journal,spool}/scenario.rs`). `histsim scenarios`
//! runs each file twice: with that ID's planted bug on it must report a violation of that ID (the
//! bug reproduces), and with it off it must pass (the fix holds).
//!
//! ```toml
//! format = 1
//! id = "P4"
//! title = "Every replica persists its own copy"
//! description = "..."
//! [display]
//! thread_id = "..."
//! ...
//! ```

use crate::display::DisplayScenario;
use crate::journal::JournalScenario;
use crate::runs::RunsScenario;
use crate::spool::SpoolScenario;
use history::BugId;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The version this build reads and writes.
pub const SCENARIO_FORMAT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Format version: 1.
    pub format: u32,
    /// The catalog ID this scenario reproduces.
    pub id: BugId,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Where it came from, e.g. `shrunk from seed 42 with --planted P4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The display workload's script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<DisplayScenario>,
    /// The runs workload's script (an R ID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsScenario>,
    /// The journal workload's script (a J ID but J14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalScenario>,
    /// The spool workload's script (J14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spool: Option<SpoolScenario>,
}

/// A scenario file that cannot be used, with the file, the field and what was expected.
#[derive(Debug)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(
                f,
                "{}: field `{field}`: {}",
                self.path.display(),
                self.message
            ),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The workload of a scenario file.
pub enum Script<'a> {
    Display(&'a DisplayScenario),
    Runs(&'a RunsScenario),
    Journal(&'a JournalScenario),
    Spool(&'a SpoolScenario),
}

impl ScenarioFile {
    /// The file's one workload script (`None` when it has none or several).
    pub fn script(&self) -> Option<Script<'_>> {
        match (&self.display, &self.runs, &self.journal, &self.spool) {
            (Some(d), None, None, None) => Some(Script::Display(d)),
            (None, Some(r), None, None) => Some(Script::Runs(r)),
            (None, None, Some(j), None) => Some(Script::Journal(j)),
            (None, None, None, Some(s)) => Some(Script::Spool(s)),
            _ => None,
        }
    }

    /// Parses `text` (the contents of `path`).
    pub fn parse(path: &Path, text: &str) -> Result<ScenarioFile, ScenarioError> {
        let err = |field: Option<String>, message: String| ScenarioError {
            path: path.to_path_buf(),
            field,
            message,
        };
        let de = toml::de::Deserializer::parse(text).map_err(|e| err(None, locate(text, &e)))?;
        let file: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            err((field != ".").then_some(field), locate(text, &inner))
        })?;
        if file.format != SCENARIO_FORMAT {
            return Err(err(
                Some("format".into()),
                format!(
                    "expected format {SCENARIO_FORMAT}, found {} (written by another version of histsim)",
                    file.format
                ),
            ));
        }
        let tables = [
            file.display.is_some(),
            file.runs.is_some(),
            file.journal.is_some(),
            file.spool.is_some(),
        ];
        match tables.iter().filter(|t| **t).count() {
            0 => {
                return Err(err(
                    None,
                    "expected a workload table: [display], [runs], [journal] or [spool]".to_string(),
                ))
            }
            1 => {}
            _ => return Err(err(
                None,
                "expected one workload table, found several of [display], [runs], [journal], [spool]"
                    .to_string(),
            )),
        }
        let (family, j14) = (file.id.family(), file.id == BugId::J14);
        match file.script() {
            Some(Script::Display(d)) if family == 'P' => d
                .validate()
                .map_err(|m| err(Some(format!("display.{}", field_of(&m))), m))?,
            Some(Script::Runs(r)) if family == 'R' => r
                .validate()
                .map_err(|m| err(Some(format!("runs.{}", field_of(&m))), m))?,
            Some(Script::Journal(j)) if family == 'J' && !j14 => j
                .validate()
                .map_err(|m| err(Some(format!("journal.{}", field_of(&m))), m))?,
            Some(Script::Spool(s)) if j14 => s
                .validate()
                .map_err(|m| err(Some(format!("spool.{}", field_of(&m))), m))?,
            Some(Script::Display(_)) => {
                return Err(err(
                    Some("id".into()),
                    format!("a [display] scenario reproduces a P ID, found {}", file.id),
                ))
            }
            Some(Script::Runs(_)) => {
                return Err(err(
                    Some("id".into()),
                    format!("a [runs] scenario reproduces an R ID, found {}", file.id),
                ))
            }
            Some(Script::Journal(_)) => {
                return Err(err(
                    Some("id".into()),
                    format!(
                        "a [journal] scenario reproduces a J ID other than J14, found {}",
                        file.id
                    ),
                ))
            }
            Some(Script::Spool(_)) => {
                return Err(err(
                    Some("id".into()),
                    format!("a [spool] scenario reproduces J14, found {}", file.id),
                ))
            }
            None => return Err(err(None, "expected one workload table".to_string())),
        }
        Ok(file)
    }

    pub fn load(path: &Path) -> Result<ScenarioFile, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.to_path_buf(),
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        ScenarioFile::parse(path, &text)
    }

    pub fn to_toml(&self) -> Result<String, String> {
        toml::to_string_pretty(self).map_err(|e| e.to_string())
    }
}

fn field_of(message: &str) -> &str {
    message.split(':').next().unwrap_or("")
}

/// A TOML error with its line and column, when it has a span.
fn locate(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
            format!("line {line}, column {col}: {message}")
        }
        None => message,
    }
}

/// Every `.toml` file under `path` (or `path` itself), sorted.
pub fn discover(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{generate::generate, DisplayOptions};
    use crate::rng::SeedRng;

    fn sample() -> ScenarioFile {
        let seed = SeedRng::new(9);
        ScenarioFile {
            format: SCENARIO_FORMAT,
            id: BugId::P4,
            title: "t".into(),
            description: "d".into(),
            origin: None,
            display: Some(generate(seed, &DisplayOptions::from_seed(seed, None))),
            runs: None,
            journal: None,
            spool: None,
        }
    }

    #[test]
    fn a_generated_scenario_round_trips_through_toml() {
        for s in 0..40 {
            let seed = SeedRng::new(s);
            let file = ScenarioFile {
                display: Some(generate(seed, &DisplayOptions::from_seed(seed, None))),
                ..sample()
            };
            let text = file.to_toml().expect("serializes");
            let back = ScenarioFile::parse(Path::new("x.toml"), &text)
                .unwrap_or_else(|e| panic!("seed {s}: {e}\n{text}"));
            assert_eq!(back, file, "seed {s}");
        }
    }

    #[test]
    fn generated_journal_and_spool_scenarios_round_trip_through_toml() {
        use crate::journal::{generate::generate as journal, JournalSimOptions};
        use crate::spool::{generate::generate as spool, SpoolSimOptions};
        for s in 0..40 {
            let seed = SeedRng::new(s);
            let files = [
                ScenarioFile {
                    id: BugId::J2,
                    display: None,
                    journal: Some(journal(seed, &JournalSimOptions::from_seed(seed))),
                    ..sample()
                },
                ScenarioFile {
                    id: BugId::J14,
                    display: None,
                    spool: Some(spool(seed, &SpoolSimOptions::from_seed(seed))),
                    ..sample()
                },
            ];
            for file in files {
                let text = file.to_toml().expect("serializes");
                let back = ScenarioFile::parse(Path::new("x.toml"), &text)
                    .unwrap_or_else(|e| panic!("seed {s}: {e}\n{text}"));
                assert_eq!(back, file, "seed {s}");
            }
        }
    }

    #[test]
    fn journal_and_spool_tables_name_their_ids_and_fields() {
        let seed = SeedRng::new(3);
        let mut j = crate::journal::generate::generate(
            seed,
            &crate::journal::JournalSimOptions::from_seed(seed),
        );
        let file = |id, j: &crate::journal::JournalScenario| ScenarioFile {
            id,
            display: None,
            journal: Some(j.clone()),
            ..sample()
        };
        let e = ScenarioFile::parse(
            Path::new("w.toml"),
            &file(BugId::J14, &j).to_toml().expect("toml"),
        )
        .expect_err("J14 is the spool's");
        assert!(e.to_string().contains("field `id`"), "{e}");
        j.sessions[0].ops[0].action = crate::journal::scenario::Action::Switch {
            to: "nowhere".into(),
            arrivals: Vec::new(),
        };
        let e = ScenarioFile::parse(
            Path::new("s.toml"),
            &file(BugId::J4, &j).to_toml().expect("toml"),
        )
        .expect_err("no such copy");
        assert!(
            e.to_string()
                .contains("journal.sessions[0].ops[0].action.to"),
            "{e}"
        );
        let both = ScenarioFile {
            journal: Some(j.clone()),
            ..sample()
        };
        let e = ScenarioFile::parse(Path::new("b.toml"), &both.to_toml().expect("toml"))
            .expect_err("two tables");
        assert!(e.to_string().contains("one workload table"), "{e}");
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let text = sample()
            .to_toml()
            .expect("serializes")
            .replace("replicas = ", "replicas = \"x\" # ");
        let e = ScenarioFile::parse(Path::new("bad.toml"), &text).expect_err("must fail");
        let shown = e.to_string();
        assert!(
            shown.starts_with("bad.toml: field `display.replicas`"),
            "{shown}"
        );

        let e = ScenarioFile::parse(
            Path::new("v.toml"),
            "format = 2\nid = \"P4\"\ntitle = \"t\"\n",
        )
        .expect_err("must fail");
        assert!(e.to_string().contains("field `format`"), "{e}");

        let e = ScenarioFile::parse(
            Path::new("u.toml"),
            "format = 1\nid = \"P99\"\ntitle = \"t\"\n",
        )
        .expect_err("must fail");
        assert!(e.to_string().contains("`id`"), "{e}");

        let e = ScenarioFile::parse(
            Path::new("n.toml"),
            "format = 1\nid = \"P1\"\ntitle = \"t\"\n",
        )
        .expect_err("must fail");
        assert!(e.to_string().contains("[display]"), "{e}");

        let e = ScenarioFile::parse(Path::new("g.toml"), "format = = 1").expect_err("must fail");
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn reference_errors_name_the_field() {
        let mut file = sample();
        if let Some(d) = file.display.as_mut() {
            d.turns[0].steps[0].agent = "nobody".into();
        }
        let text = file.to_toml().expect("serializes");
        let e = ScenarioFile::parse(Path::new("r.toml"), &text).expect_err("must fail");
        assert!(
            e.to_string().contains("display.turns[0].steps[0].agent"),
            "{e}"
        );
    }

    #[test]
    fn a_generated_runs_scenario_round_trips_through_toml() {
        use crate::runs::{generate::generate as generate_runs, RunsOptions};
        for s in 0..40 {
            let seed = SeedRng::new(s);
            let file = ScenarioFile {
                id: BugId::R1,
                display: None,
                runs: Some(generate_runs(seed, &RunsOptions::from_seed(seed))),
                ..sample()
            };
            let text = file.to_toml().expect("serializes");
            let back = ScenarioFile::parse(Path::new("x.toml"), &text)
                .unwrap_or_else(|e| panic!("seed {s}: {e}\n{text}"));
            assert_eq!(back, file, "seed {s}");
            let wrong = ScenarioFile {
                id: BugId::P1,
                ..file
            };
            let e = ScenarioFile::parse(Path::new("w.toml"), &wrong.to_toml().expect("serializes"))
                .expect_err("an R script for a P ID");
            assert!(e.to_string().contains("field `id`"), "{e}");
        }
    }

    #[test]
    fn runs_reference_errors_name_the_field() {
        use crate::runs::{generate::generate as generate_runs, RunsOptions};
        let seed = SeedRng::new(4);
        let mut runs = generate_runs(seed, &RunsOptions::from_seed(seed));
        runs.runs[0].thread = "nowhere".into();
        let file = ScenarioFile {
            id: BugId::R4,
            display: None,
            runs: Some(runs),
            ..sample()
        };
        let text = file.to_toml().expect("serializes");
        let e = ScenarioFile::parse(Path::new("r.toml"), &text).expect_err("must fail");
        assert!(e.to_string().contains("runs.runs[0].thread"), "{e}");
    }
}
