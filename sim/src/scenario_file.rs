//! Scenario files: a hand-readable, versioned TOML format for a scripted run.
//!
//! A file names the catalog ID it reproduces and holds one workload's script in the table that
//! workload owns ([`crate::workload::Workload::SECTION`]): `[display]` for a P ID, `[runs]` for an
//! R ID, `[journal]` for a J ID but J14, `[spool]` for J14 (exactly one of them). Each format is
//! documented in its workload's `scenario.rs` (`sim/src/{display,runs,journal,spool}/scenario.rs`). `histsim scenarios`
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

use crate::registry;
use crate::workload::{AnyScenario, DynWorkload};
use history::BugId;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::{Path, PathBuf};

/// The version this build reads and writes.
pub const SCENARIO_FORMAT: u32 = 1;

/// A scenario file: a header, and one workload's script in that workload's table.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioFile {
    /// Format version: 1.
    pub format: u32,
    /// The catalog ID this scenario reproduces.
    pub id: BugId,
    pub title: String,
    pub description: String,
    /// Where it came from, e.g. `shrunk from seed 42 with --planted P4`.
    pub origin: Option<String>,
    /// The published system this scenario fails against, as the `--sut` command that drives it
    /// from the repository root (an upstream finding: the ID fires with no bug planted, and
    /// histsim's own components pass it). `None`: the scenario reproduces histsim's planted bug.
    pub system: Option<String>,
    /// The script, in the table its workload owns (`[display]`, `[runs]`, ...).
    pub scenario: AnyScenario,
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

/// The workload tables a file may hold, for messages: `[display], [runs], ...`.
fn tables() -> String {
    registry::REGISTRY
        .iter()
        .map(|w| format!("[{}]", w.section()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ScenarioFile {
    /// The workload whose script this file holds.
    pub fn workload(&self) -> &'static dyn DynWorkload {
        self.scenario.workload()
    }

    /// Parses `text` (the contents of `path`).
    pub fn parse(path: &Path, text: &str) -> Result<ScenarioFile, ScenarioError> {
        let err = |field: Option<String>, message: String| ScenarioError {
            path: path.to_path_buf(),
            field,
            message,
        };
        let raw = parse_raw(path, text)?;
        let missing = |name: &str| err(Some(name.into()), "missing field".to_string());
        let format = raw.format.ok_or_else(|| missing("format"))?;
        if format != SCENARIO_FORMAT {
            return Err(err(
                Some("format".into()),
                format!(
                    "expected format {SCENARIO_FORMAT}, found {format} (written by another version of histsim)"
                ),
            ));
        }
        let id = raw.id.ok_or_else(|| missing("id"))?;
        let title = raw.title.ok_or_else(|| missing("title"))?;
        let scenario = checked_script(path, raw.scenario)?;
        let w = scenario.workload();
        if !w.covers(id) {
            let ids: Vec<String> = registry::ids_of(w).iter().map(|i| i.to_string()).collect();
            return Err(err(
                Some("id".into()),
                format!(
                    "a [{}] scenario reproduces one of {}, found {id}",
                    w.section(),
                    ids.join(" ")
                ),
            ));
        }
        Ok(ScenarioFile {
            format,
            id,
            title,
            description: raw.description.unwrap_or_default(),
            origin: raw.origin,
            system: raw.system,
            scenario,
        })
    }

    /// Reads only the script of a file, checked like any other; the header may lack `id` (the
    /// difference files `histsim diff` writes reproduce a difference, not a catalog ID).
    pub fn load_script(path: &Path) -> Result<AnyScenario, ScenarioError> {
        let text = read(path)?;
        let raw = parse_raw(path, &text)?;
        checked_script(path, raw.scenario)
    }

    pub fn load(path: &Path) -> Result<ScenarioFile, ScenarioError> {
        ScenarioFile::parse(path, &read(path)?)
    }

    pub fn to_toml(&self) -> Result<String, String> {
        toml::to_string_pretty(self).map_err(|e| e.to_string())
    }
}

impl Serialize for ScenarioFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let w = self.workload();
        let mut st = s.serialize_struct("ScenarioFile", 7)?;
        st.serialize_field("format", &self.format)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("title", &self.title)?;
        st.serialize_field("description", &self.description)?;
        match &self.origin {
            Some(origin) => st.serialize_field("origin", origin)?,
            None => st.skip_field("origin")?,
        }
        match &self.system {
            Some(system) => st.serialize_field("system", system)?,
            None => st.skip_field("system")?,
        }
        st.serialize_field(w.section(), w.serializable(&self.scenario))?;
        st.end()
    }
}

fn read(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| ScenarioError {
        path: path.to_path_buf(),
        field: None,
        message: format!("cannot read: {e}"),
    })
}

/// The TOML of `path`, read into its fields, each error located.
fn parse_raw(path: &Path, text: &str) -> Result<RawFile, ScenarioError> {
    let err = |field: Option<String>, message: String| ScenarioError {
        path: path.to_path_buf(),
        field,
        message,
    };
    let de = toml::de::Deserializer::parse(text).map_err(|e| err(None, locate(text, &e)))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        err((field != ".").then_some(field), locate(text, &inner))
    })
}

/// The one workload table of a file, validated by its workload.
fn checked_script(
    path: &Path,
    scenario: Option<AnyScenario>,
) -> Result<AnyScenario, ScenarioError> {
    let err = |field: Option<String>, message: String| ScenarioError {
        path: path.to_path_buf(),
        field,
        message,
    };
    let Some(scenario) = scenario else {
        return Err(err(
            None,
            format!("expected a workload table: one of {}", tables()),
        ));
    };
    let w = scenario.workload();
    w.validate(&scenario)
        .map_err(|m| err(Some(format!("{}.{}", w.section(), field_of(&m))), m))?;
    Ok(scenario)
}

/// A file as read, before the checks that need all of it.
#[derive(Default)]
struct RawFile {
    format: Option<u32>,
    id: Option<BugId>,
    title: Option<String>,
    description: Option<String>,
    origin: Option<String>,
    system: Option<String>,
    scenario: Option<AnyScenario>,
}

impl<'de> Deserialize<'de> for RawFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RawFileVisitor)
    }
}

struct RawFileVisitor;

impl<'de> Visitor<'de> for RawFileVisitor {
    type Value = RawFile;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a scenario file: format, id, title, description, origin, system and one workload table",
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFile, A::Error> {
        let mut file = RawFile::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => file.format = Some(map.next_value()?),
                "id" => file.id = Some(map.next_value()?),
                "title" => file.title = Some(map.next_value()?),
                "description" => file.description = Some(map.next_value()?),
                "origin" => file.origin = Some(map.next_value()?),
                "system" => file.system = Some(map.next_value()?),
                other => {
                    let Some(w) = registry::by_section(other) else {
                        return Err(de::Error::custom(format!(
                            "unknown field `{other}`, expected format, id, title, description, origin, system or one of {}",
                            tables()
                        )));
                    };
                    if file.scenario.is_some() {
                        return Err(de::Error::custom(format!(
                            "expected one workload table, found several of {}",
                            tables()
                        )));
                    }
                    file.scenario = Some(map.next_value_seed(Section(w))?);
                }
            }
        }
        Ok(file)
    }
}

/// One workload's table, read by that workload through the registry.
struct Section(&'static dyn DynWorkload);

impl<'de> DeserializeSeed<'de> for Section {
    type Value = AnyScenario;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AnyScenario, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(d);
        self.0
            .deserialize_section(&mut erased)
            .map_err(de::Error::custom)
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
    use crate::display::{generate::generate, DisplayOptions, DisplayWorkload};
    use crate::journal::{JournalScenario, JournalWorkload};
    use crate::registry::REGISTRY;
    use crate::rng::SeedRng;
    use crate::runs::RunsWorkload;
    use crate::workload::OptionOverrides;

    fn sample() -> ScenarioFile {
        let seed = SeedRng::new(9);
        ScenarioFile {
            format: SCENARIO_FORMAT,
            id: BugId::P4,
            title: "t".into(),
            description: "d".into(),
            origin: None,
            system: None,
            scenario: AnyScenario::new::<DisplayWorkload>(generate(
                seed,
                &DisplayOptions::from_seed(seed, None),
            )),
        }
    }

    fn round_trip(file: &ScenarioFile, what: &str) {
        let text = file.to_toml().expect("serializes");
        let back = ScenarioFile::parse(Path::new("x.toml"), &text)
            .unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
        assert_eq!(&back, file, "{what}");
    }

    #[test]
    fn generated_scenarios_of_every_workload_round_trip_through_toml() {
        for w in REGISTRY {
            let id = registry::ids_of(*w)[0];
            for s in 0..40 {
                let file = ScenarioFile {
                    id,
                    scenario: w.scenario_of(SeedRng::new(s), &OptionOverrides::default()),
                    ..sample()
                };
                round_trip(&file, &format!("{} seed {s}", w.name()));
            }
        }
    }

    #[test]
    fn a_file_is_written_with_its_header_first_and_its_workload_table() {
        let text = sample().to_toml().expect("serializes");
        assert!(text.starts_with("format = 1\nid = \"P4\"\n"), "{text}");
        assert!(text.contains("\n[display]\n"), "{text}");
    }

    fn journal_file(id: BugId, j: &JournalScenario) -> ScenarioFile {
        ScenarioFile {
            id,
            scenario: AnyScenario::new::<JournalWorkload>(j.clone()),
            ..sample()
        }
    }

    #[test]
    fn journal_and_spool_tables_name_their_ids_and_fields() {
        let seed = SeedRng::new(3);
        let mut j = crate::journal::generate::generate(
            seed,
            &crate::journal::JournalSimOptions::from_seed(seed),
        );
        let e = ScenarioFile::parse(
            Path::new("w.toml"),
            &journal_file(BugId::J14, &j).to_toml().expect("toml"),
        )
        .expect_err("J14 is the spool's");
        assert!(e.to_string().contains("field `id`"), "{e}");
        j.sessions[0].ops[0].action = crate::journal::scenario::Action::Switch {
            to: "nowhere".into(),
            arrivals: Vec::new(),
        };
        let e = ScenarioFile::parse(
            Path::new("s.toml"),
            &journal_file(BugId::J4, &j).to_toml().expect("toml"),
        )
        .expect_err("no such copy");
        assert!(
            e.to_string()
                .contains("journal.sessions[0].ops[0].action.to"),
            "{e}"
        );
    }

    #[test]
    fn two_workload_tables_are_refused() {
        let display = sample().to_toml().expect("toml");
        let seed = SeedRng::new(3);
        let j = crate::journal::generate::generate(
            seed,
            &crate::journal::JournalSimOptions::from_seed(seed),
        );
        let journal = journal_file(BugId::J4, &j).to_toml().expect("toml");
        let table = &journal[journal.find("[journal]").expect("a journal table")..];
        let both = format!("{display}\n{table}");
        let e = ScenarioFile::parse(Path::new("b.toml"), &both).expect_err("two tables");
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

        let e = ScenarioFile::parse(
            Path::new("k.toml"),
            "format = 1\nid = \"P1\"\ntitle = \"t\"\n[displays]\n",
        )
        .expect_err("must fail");
        assert!(e.to_string().contains("unknown field `displays`"), "{e}");

        let e = ScenarioFile::parse(Path::new("g.toml"), "format = = 1").expect_err("must fail");
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn reference_errors_name_the_field() {
        let mut file = sample();
        if let Some(d) = file.scenario.get_mut::<DisplayWorkload>() {
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
    fn a_script_for_another_workloads_id_is_refused() {
        let seed = SeedRng::new(4);
        let runs =
            crate::runs::generate::generate(seed, &crate::runs::RunsOptions::from_seed(seed));
        let wrong = ScenarioFile {
            id: BugId::P1,
            scenario: AnyScenario::new::<RunsWorkload>(runs),
            ..sample()
        };
        let e = ScenarioFile::parse(Path::new("w.toml"), &wrong.to_toml().expect("serializes"))
            .expect_err("an R script for a P ID");
        assert!(e.to_string().contains("field `id`"), "{e}");
    }

    #[test]
    fn runs_reference_errors_name_the_field() {
        use crate::runs::{generate::generate as generate_runs, RunsOptions};
        let seed = SeedRng::new(4);
        let mut runs = generate_runs(seed, &RunsOptions::from_seed(seed));
        runs.runs[0].thread = "nowhere".into();
        let file = ScenarioFile {
            id: BugId::R4,
            scenario: AnyScenario::new::<RunsWorkload>(runs),
            ..sample()
        };
        let text = file.to_toml().expect("serializes");
        let e = ScenarioFile::parse(Path::new("r.toml"), &text).expect_err("must fail");
        assert!(e.to_string().contains("runs.runs[0].thread"), "{e}");
    }
}
