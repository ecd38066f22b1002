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

pub(crate) mod bounds;
mod location;

/// The version this build reads and writes.
pub(crate) const SCENARIO_FORMAT: u32 = 1;

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
    /// The user's own system this regression was shrunk from, as the `--sut` command that drove
    /// it (`histsim run --sut CMD` writes it): nothing is planted, and the file must pass once
    /// that system is fixed, so it stays in the user's suite as a regression test. Never with
    /// `system`, whose finding must instead still fail.
    pub found_in: Option<String>,
    /// The script, in the table its workload owns (`[display]`, `[runs]`, ...).
    pub scenario: AnyScenario,
}

/// A scenario file that cannot be used, with the file, the line, the field and what was
/// expected.
#[derive(Debug)]
pub struct ScenarioError {
    pub path: PathBuf,
    /// The line (from 1) the error is on: the field's own line where the file has the field.
    /// `None` for a file that could not be read.
    pub line: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        match (self.line, &self.field) {
            (Some(line), Some(field)) => write!(f, ": line {line}, field `{field}`")?,
            (Some(line), None) => write!(f, ": line {line}")?,
            (None, Some(field)) => write!(f, ": field `{field}`")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// Builds the errors of one file's text, each with its field's line.
struct Errors<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Errors<'_> {
    /// An error at `field` (its line from the text, or `line` where the text lacks it).
    fn at(&self, field: &str, line: usize, message: String) -> ScenarioError {
        ScenarioError {
            path: self.path.to_path_buf(),
            line: Some(location::line_of(self.text, field).unwrap_or(line)),
            field: Some(field.to_string()),
            message,
        }
    }

    /// An error of the whole file, at `line`.
    fn whole(&self, line: usize, message: String) -> ScenarioError {
        ScenarioError {
            path: self.path.to_path_buf(),
            line: Some(line),
            field: None,
            message,
        }
    }

    /// A header field the file lacks: reported at line 1, where the header goes.
    fn missing(&self, field: &str) -> ScenarioError {
        self.at(
            field,
            1,
            "missing field (the header at the top of the file names it)".into(),
        )
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
        let errors = Errors { path, text };
        let raw = parse_raw(&errors)?;
        let format = raw.format.ok_or_else(|| errors.missing("format"))?;
        if format != SCENARIO_FORMAT {
            return Err(errors.at(
                "format",
                1,
                format!(
                    "expected format {SCENARIO_FORMAT}, found {format} (written by another version of histsim)"
                ),
            ));
        }
        let id = raw.id.ok_or_else(|| errors.missing("id"))?;
        let title = raw.title.ok_or_else(|| errors.missing("title"))?;
        if raw.system.is_some() && raw.found_in.is_some() {
            return Err(errors.at(
                "found_in",
                1,
                "a file has `system` (an upstream finding, which must still fail there) or \
                 `found_in` (a regression of your system, which must pass once it is fixed), \
                 not both"
                    .into(),
            ));
        }
        let scenario = checked_script(&errors, raw.scenario)?;
        let w = scenario.workload();
        if !w.covers(id) {
            let ids: Vec<String> = registry::ids_of(w).iter().map(|i| i.to_string()).collect();
            return Err(errors.at(
                "id",
                1,
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
            found_in: raw.found_in,
            scenario,
        })
    }

    /// Reads only the script of a file, checked like any other; the header may lack `id` (the
    /// difference files `histsim diff` writes reproduce a difference, not a catalog ID).
    pub fn load_script(path: &Path) -> Result<AnyScenario, ScenarioError> {
        let text = read(path)?;
        let errors = Errors { path, text: &text };
        let raw = parse_raw(&errors)?;
        checked_script(&errors, raw.scenario)
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
        let mut st = s.serialize_struct("ScenarioFile", 8)?;
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
        match &self.found_in {
            Some(found_in) => st.serialize_field("found_in", found_in)?,
            None => st.skip_field("found_in")?,
        }
        st.serialize_field(w.section(), w.serializable(&self.scenario))?;
        st.end()
    }
}

fn read(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| ScenarioError {
        path: path.to_path_buf(),
        line: None,
        field: None,
        message: format!("cannot read: {e}"),
    })
}

/// The TOML of a file, read into its fields, each error located at its field's line.
fn parse_raw(errors: &Errors<'_>) -> Result<RawFile, ScenarioError> {
    let text = errors.text;
    if text.trim().is_empty() {
        return Err(errors.whole(
            1,
            format!(
                "the file is empty: a scenario file holds format, id, title and one of {}",
                tables()
            ),
        ));
    }
    let de = toml::de::Deserializer::parse(text).map_err(|e| {
        let line = e.span().map(|s| location::line_at(text, s.start));
        errors.whole(line.unwrap_or(1), e.message().trim().to_string())
    })?;
    let raw: RawFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // toml ends a message with `in `key`` after a blank line: the field named below says
        // where, better.
        let message = inner.message().trim();
        let message = message
            .split("\n\nin `")
            .next()
            .unwrap_or(message)
            .trim()
            .to_string();
        // The error's own span is often the table being read (its header); the field's path
        // finds the field's line.
        let span_line = inner.span().map(|s| location::line_at(text, s.start));
        let field = field_of_error(&path, &message);
        match field {
            Some(field) => errors.at(&field, span_line.unwrap_or(1), message),
            None => errors.whole(span_line.unwrap_or(1), message),
        }
    })?;
    if let Some(key) = &raw.unknown {
        return Err(errors.at(
            key,
            1,
            format!(
                "unknown field `{key}`, expected format, id, title, description, origin, system, found_in or one of {}",
                tables()
            ),
        ));
    }
    if let Some(key) = &raw.second_table {
        return Err(errors.at(
            key,
            1,
            format!("expected one workload table, found several of {}", tables()),
        ));
    }
    Ok(raw)
}

/// The field a deserialization error is about: its path, and for an unknown field the field
/// itself (serde names it in the message, the path stops at the table that holds it).
fn field_of_error(path: &str, message: &str) -> Option<String> {
    let unknown = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name);
    let path = (path != ".").then_some(path);
    match (path, unknown) {
        (Some(p), Some(u)) if p != u && !p.ends_with(&format!(".{u}")) => Some(format!("{p}.{u}")),
        (None, Some(u)) => Some(u.to_string()),
        (p, _) => p.map(str::to_string),
    }
}

/// The one workload table of a file, validated by its workload.
fn checked_script(
    errors: &Errors<'_>,
    scenario: Option<AnyScenario>,
) -> Result<AnyScenario, ScenarioError> {
    let Some(scenario) = scenario else {
        let last_line = location::line_at(errors.text, errors.text.trim_end().len());
        return Err(errors.whole(
            last_line,
            format!("expected a workload table: one of {}", tables()),
        ));
    };
    let w = scenario.workload();
    w.validate(&scenario).map_err(|m| {
        // A validator's message starts with the field it is about; the error names it already.
        let field = field_of(&m);
        let why = m.strip_prefix(field).and_then(|r| r.strip_prefix(": "));
        let message = why.unwrap_or(&m).to_string();
        errors.at(&format!("{}.{field}", w.section()), 1, message)
    })?;
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
    found_in: Option<String>,
    scenario: Option<AnyScenario>,
    /// A top-level key that is no field of the format (kept to report it at its line).
    unknown: Option<String>,
    /// A second workload table (kept to report it at its line).
    second_table: Option<String>,
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
            "a scenario file: format, id, title, description, origin, system, found_in and one workload table",
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
                "found_in" => file.found_in = Some(map.next_value()?),
                other => {
                    // An unknown key or a second table is skipped here and reported by
                    // `parse_raw`, which knows the text and so the key's line.
                    let w = registry::by_section(other);
                    match w {
                        Some(w) if file.scenario.is_none() => {
                            file.scenario = Some(map.next_value_seed(Section(w))?);
                        }
                        Some(_) => {
                            file.second_table.get_or_insert_with(|| other.to_string());
                            map.next_value::<de::IgnoredAny>()?;
                        }
                        None => {
                            file.unknown.get_or_insert_with(|| other.to_string());
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
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
            found_in: None,
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
    fn a_regression_of_a_users_system_round_trips_and_excludes_system() {
        let file = ScenarioFile {
            found_in: Some("./my-adapter --fast".into()),
            ..sample()
        };
        round_trip(&file, "found_in");
        let both = ScenarioFile {
            system: Some("upstream".into()),
            ..file
        };
        let e = ScenarioFile::parse(Path::new("b.toml"), &both.to_toml().expect("serializes"))
            .expect_err("system and found_in together");
        assert!(e.to_string().contains("field `found_in`"), "{e}");
        assert!(e.to_string().contains("not both"), "{e}");
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
        let line = text
            .lines()
            .position(|l| l.starts_with("replicas = "))
            .expect("a replicas line")
            + 1;
        let e = ScenarioFile::parse(Path::new("bad.toml"), &text).expect_err("must fail");
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("bad.toml: line {line}, field `display.replicas`")),
            "{shown}"
        );

        // Each file's text, and what its error must start with or hold.
        enum Said {
            Starts(&'static str),
            Holds(&'static str),
        }
        use Said::{Holds, Starts};
        let cases = [
            (
                "v.toml",
                "format = 2\nid = \"P4\"\ntitle = \"t\"\n",
                Holds("field `format`"),
            ),
            (
                "u.toml",
                "format = 1\nid = \"P99\"\ntitle = \"t\"\n",
                Holds("`id`"),
            ),
            (
                "n.toml",
                "format = 1\nid = \"P1\"\ntitle = \"t\"\n",
                Holds("[display]"),
            ),
            (
                "k.toml",
                "format = 1\nid = \"P1\"\ntitle = \"t\"\n[displays]\n",
                Holds("unknown field `displays`"),
            ),
            ("g.toml", "format = = 1", Starts("g.toml: line 1: ")),
            ("e.toml", " \n", Starts("e.toml: line 1: the file is empty")),
            (
                "t.toml",
                "format = 1\ncolour = 2\nid = \"P1\"\ntitle = \"t\"\n",
                Starts("t.toml: line 2, field `colour`: unknown field `colour`"),
            ),
        ];
        for (name, text, said) in cases {
            let e = ScenarioFile::parse(Path::new(name), text).expect_err("must fail");
            let shown = e.to_string();
            match said {
                Starts(start) => assert!(shown.starts_with(start), "{e}"),
                Holds(part) => assert!(shown.contains(part), "{e}"),
            }
        }
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
        let runs = crate::runs::generate::of_seed(4);
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
        let mut runs = crate::runs::generate::of_seed(4);
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
