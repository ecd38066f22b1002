//! A fuzzing campaign: `cargo fuzz run` on one workload's target for a time budget, its figures
//! read back, every crash imported as a scenario file, and a report beside `histsim run`'s
//! (`reports/<name>/summary.json`, `summary.md`).

use super::corpus::target_name;
use super::cpu::children_cpu_s;
use super::import::import;
use super::progress::FuzzProgress;
use super::stats::{parse, LibFuzzerStats};
pub use super::summary::{markdown, FuzzSummary, FuzzViolation, ReplayText};
use super::target::{violation_id_in, PLANTED_ENV, VIOLATION_PREFIX};
use crate::workload::DynWorkload;
use history::BugId;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to run one campaign.
pub struct CampaignOptions {
    pub workload: &'static dyn DynWorkload,
    pub budget_s: u64,
    pub planted: Option<BugId>,
    /// libFuzzer processes (`-fork=K` above 1).
    pub jobs: u32,
    /// The cargo-fuzz crate (`fuzz/`).
    pub fuzz_dir: PathBuf,
    /// Read-only seed inputs (`fuzz/corpus/sim_<workload>`); `None`: an empty corpus.
    pub seeds: Option<PathBuf>,
    /// The report folder; the corpus the campaign grows, the crash inputs, libFuzzer's log and
    /// the imported scenario files go in it.
    pub run_dir: PathBuf,
    /// More libFuzzer flags (`-use_value_profile=1`).
    pub libfuzzer_args: Vec<String>,
    pub import_cap: Duration,
    /// Build and run the debug build (`cargo fuzz --dev`): no release build to wait for, slower
    /// executions; what CI's short runs use.
    pub dev: bool,
    /// Build the target with libFuzzer's comparison tracing (`-sanitizer-coverage-trace-compares`).
    /// Off by default: the hooks were half of an execution, and a generator-mode input's bytes
    /// seed random streams, whose draws no comparison can steer (docs/fuzzing.md).
    pub trace_compares: bool,
}

/// The `cargo fuzz` flags that choose the build, the same for `build` and `run` (a difference
/// would make `run` build again).
fn build_flags(o: &CampaignOptions) -> Vec<String> {
    let mut flags = vec!["--sanitizer".to_string(), "none".to_string()];
    if o.dev {
        flags.push("--dev".into());
    }
    if !o.trace_compares {
        flags.push("--no-trace-compares".into());
    }
    flags
}

/// Builds the target, then fuzzes for the budget; returns the summary (not yet written).
pub fn run(name: &str, o: &CampaignOptions) -> Result<FuzzSummary, String> {
    let target = target_name(o.workload.name());
    let corpus = o.run_dir.join("corpus");
    let artifacts = o.run_dir.join("artifacts");
    for dir in [&corpus, &artifacts] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let resumed_inputs = earlier_inputs(name, o, &corpus)?;
    let build_args = build(o, &target)?;
    let build_args: Vec<&str> = build_args.iter().map(String::as_str).collect();
    let libfuzzer_args = libfuzzer_args(o, &corpus, &artifacts)?;
    let log_path = o.run_dir.join("libfuzzer.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let (mut cmd, command) = target_command(o, &target, &build_args, &libfuzzer_args);
    match o.planted {
        Some(p) => cmd.env(PLANTED_ENV, p.as_str()),
        None => cmd.env_remove(PLANTED_ENV),
    };
    let cpu_before = children_cpu_s();
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    let progress = FuzzProgress::start(log_path.clone(), o.budget_s);
    let status = child.wait().map_err(|e| format!("{command}: {e}"));
    let elapsed_s = start.elapsed().as_secs_f64();
    let mut coverage_over_time = progress.finish();
    let status = status?;
    let cpu_s = cpu_before.zip(children_cpu_s()).map(|(b, a)| a - b);
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    let libfuzzer = parse(&output);
    if let Some(end) = super::progress::point_of(&libfuzzer, elapsed_s.ceil() as u64) {
        coverage_over_time.finish(end);
    }
    let violations = violations(o, &output, &libfuzzer);
    let failure = (!status.success() && violations.is_empty()).then(|| {
        format!(
            "the fuzz target ended with {status}; see {}",
            log_path.display()
        )
    });
    let exec_per_cpu_s = per_cpu_second(libfuzzer.executions, cpu_s);
    Ok(FuzzSummary {
        name: name.to_string(),
        workload: o.workload.name().to_string(),
        target,
        planted: o.planted,
        budget_s: o.budget_s,
        jobs: o.jobs,
        seeds: o.seeds.as_ref().map(|s| s.display().to_string()),
        resumed_inputs,
        elapsed_s,
        cpu_s,
        exec_per_cpu_s,
        played_per_cpu_s: super::summary::played_per_cpu_second(exec_per_cpu_s, &libfuzzer),
        libfuzzer,
        coverage_over_time: coverage_over_time.points,
        corpus_files: count_files(&corpus),
        violations,
        failure,
        command,
    })
}

/// Builds `target`; returns the `cargo fuzz` arguments that did.
fn build(o: &CampaignOptions, target: &str) -> Result<Vec<String>, String> {
    let mut build_args = vec!["build".to_string()];
    build_args.extend(build_flags(o));
    build_args.push(target.to_string());
    let args: Vec<&str> = build_args.iter().map(String::as_str).collect();
    let build = cargo_fuzz(&o.fuzz_dir, &args)
        .status()
        .map_err(|e| format!("cargo fuzz build: {e} (is cargo-fuzz installed?)"))?;
    if !build.success() {
        return Err(format!("cargo fuzz build {target} failed ({build})"));
    }
    Ok(build_args)
}

/// Where `cargo fuzz build` puts its binaries: `CARGO_TARGET_DIR` (relative to the fuzz crate,
/// as cargo reads it there) or the fuzz crate's `target/`.
fn fuzz_target_dir(o: &CampaignOptions) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => o.fuzz_dir.join(dir),
        None => o.fuzz_dir.join("target"),
    }
}

/// The binary `cargo fuzz build` made for `target`, if it is where cargo puts it:
/// `<target dir>/<triple>/<release|debug>/<target>`. Of several triples, the newest binary.
fn built_target(target_dir: &Path, dev: bool, target: &str) -> Option<PathBuf> {
    let profile = if dev { "debug" } else { "release" };
    std::fs::read_dir(target_dir)
        .ok()?
        .filter_map(|entry| {
            let binary = entry.ok()?.path().join(profile).join(target);
            let modified = binary.metadata().ok()?.modified().ok()?;
            Some((modified, binary))
        })
        .max()
        .and_then(|(_, binary)| std::path::absolute(binary).ok())
}

/// The command that fuzzes, and how the report shows it.
fn target_command(
    o: &CampaignOptions,
    target: &str,
    build_args: &[&str],
    libfuzzer_args: &[String],
) -> (Command, String) {
    // The built target is run itself: `cargo fuzz run` would first check the build again, about
    // a second of cargo before every run, which a short run (and its time to a crash) paid in
    // full. Where the binary is not found (an unusual target directory), cargo runs it.
    match built_target(&fuzz_target_dir(o), o.dev, target) {
        Some(binary) => {
            let mut cmd = Command::new(&binary);
            cmd.args(libfuzzer_args);
            let command = format!(
                "(cd {} && cargo fuzz {}) && {} {}",
                o.fuzz_dir.display(),
                build_args.join(" "),
                binary.display(),
                libfuzzer_args.join(" ")
            );
            (cmd, command)
        }
        None => {
            let args = cargo_run_args(o, target, libfuzzer_args);
            let cmd = cargo_fuzz(
                &o.fuzz_dir,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            let command = format!(
                "(cd {} && cargo fuzz {})",
                o.fuzz_dir.display(),
                args.join(" ")
            );
            (cmd, command)
        }
    }
}

fn cargo_fuzz(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.arg("fuzz").args(args).current_dir(dir);
    cmd
}

/// `cargo fuzz run` with the same build flags and `libfuzzer_args` (corpus folders first).
fn cargo_run_args(o: &CampaignOptions, target: &str, libfuzzer_args: &[String]) -> Vec<String> {
    let mut args = vec!["run".to_string()];
    args.extend(build_flags(o));
    args.push(target.into());
    let (folders, flags): (Vec<&String>, Vec<&String>) =
        libfuzzer_args.iter().partition(|a| !a.starts_with('-'));
    args.extend(folders.into_iter().cloned());
    args.push("--".into());
    args.extend(flags.into_iter().cloned());
    args
}

/// What libFuzzer is given: the corpus folders (the one it grows first), then its flags.
fn libfuzzer_args(
    o: &CampaignOptions,
    corpus: &Path,
    artifacts: &Path,
) -> Result<Vec<String>, String> {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .map(|a| a.display().to_string())
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut args = vec![abs(corpus)?];
    if let Some(seeds) = &o.seeds {
        args.push(abs(seeds)?);
    }
    args.push(format!("-max_total_time={}", o.budget_s));
    args.push("-print_final_stats=1".into());
    // libFuzzer grows its length limit from 4 bytes when it thinks inputs are cheap; a
    // generator-mode input needs 41 bytes before every stream has its own seed, so an empty
    // corpus spent minutes on inputs too short to steer the world. Use the full length at once
    // (a later `--libfuzzer-arg=-len_control=N` overrides it: libFuzzer takes the last).
    args.push("-len_control=0".into());
    // The workload's `FuzzTuning::entropic`; `--libfuzzer-arg=-entropic=0` or `=1` decides
    // otherwise: libFuzzer takes the last.
    if !o.workload.fuzz_tuning().entropic {
        args.push("-entropic=0".into());
    }
    args.push(format!("-artifact_prefix={}/", abs(artifacts)?));
    if o.jobs > 1 {
        args.push(format!("-fork={}", o.jobs));
    }
    args.extend(o.libfuzzer_args.iter().cloned());
    Ok(args)
}

fn violations(o: &CampaignOptions, output: &str, stats: &LibFuzzerStats) -> Vec<FuzzViolation> {
    let Some(crash) = &stats.crash_input else {
        return Vec::new();
    };
    let id = output.lines().find_map(violation_id_in);
    let message = panic_message(output);
    let out = o.run_dir.join("scenarios");
    let imported = import(Path::new(crash), o.workload, o.planted, &out, o.import_cap);
    let (scenario_file, import_error, replay_text) = match imported {
        Ok(i) => (
            Some(i.path.display().to_string()),
            None,
            Some(ReplayText::ScenarioFile(i.text)),
        ),
        Err(e) => {
            let input = std::fs::read(crash).ok();
            (None, Some(e), input.map(|b| ReplayText::InputHex(hex(&b))))
        }
    };
    vec![FuzzViolation {
        id,
        crash_input: crash.clone(),
        scenario_file,
        import_error,
        message,
        replay_text,
    }]
}

/// Two lowercase hex digits a byte, 32 bytes a line: what `xxd -r -p` reads back.
fn hex(bytes: &[u8]) -> String {
    let lines: Vec<String> = (bytes.chunks(32))
        .map(|line| line.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    lines.join("\n")
}

/// The target's message: its violation line (`histsim violation ID: ...`), or else the line
/// after the first `panicked at` (a panic of the harness itself).
fn panic_message(output: &str) -> Option<String> {
    if let Some(line) = output.lines().find(|l| l.starts_with(VIOLATION_PREFIX)) {
        return Some(line.trim().to_string());
    }
    let mut lines = output.lines();
    lines.find(|l| l.contains("panicked at"))?;
    lines.next().map(|l| l.trim().to_string())
}

/// Executions over CPU seconds; none below a tenth of a second of CPU (a few ticks of
/// `/proc`'s clock), where the ratio would be mostly rounding.
fn per_cpu_second(executions: Option<u64>, cpu_s: Option<f64>) -> Option<u64> {
    let cpu_s = cpu_s.filter(|s| *s >= 0.1)?;
    Some((executions? as f64 / cpu_s).round() as u64)
}

/// The inputs an earlier run of this name left in its corpus folder, which libFuzzer starts
/// from: that continues a campaign (said on stdout), but is no empty corpus (an error).
fn earlier_inputs(name: &str, o: &CampaignOptions, corpus: &Path) -> Result<usize, String> {
    let earlier = count_files(corpus);
    if earlier > 0 {
        if o.seeds.is_none() {
            return Err(format!(
                "--empty-corpus: {} holds inputs of an earlier run named {name} ({earlier}), \
                 which libFuzzer would start from; give this run another --name, or remove that \
                 folder",
                corpus.display()
            ));
        }
        println!(
            "continuing from the {earlier} inputs of an earlier run in {}",
            corpus.display()
        );
    }
    Ok(earlier)
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter(|e| e.is_ok()).count())
        .unwrap_or(0)
}

/// Writes `summary.json`, `summary.md`, `junit.xml` and the page `index.html` into `dir`.
pub fn write(dir: &Path, s: &FuzzSummary) -> Result<(), String> {
    let json = serde_json::to_string_pretty(s).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("summary.json"), json + "\n").map_err(|e| e.to_string())?;
    std::fs::write(dir.join("summary.md"), markdown(s)).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("junit.xml"), super::junit::junit(s)).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("index.html"), crate::picture::fuzz_page(s)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_input_in_hex_is_two_digits_a_byte_32_bytes_a_line() {
        assert_eq!(hex(&[0x00, 0x01, 0xff]), "0001ff");
        let input: Vec<u8> = (0..33).collect();
        let text = hex(&input);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0].len(), 64);
        assert_eq!(lines[1], "20");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn the_built_target_is_the_newest_of_its_profile() {
        let dir = tempfile::tempdir().unwrap();
        let put = |triple: &str, profile: &str| {
            let folder = dir.path().join(triple).join(profile);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("sim_runs"), b"binary").unwrap();
            // Distinct modification times, in the order written.
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(built_target(dir.path(), false, "sim_runs"), None);
        put("x86_64-unknown-linux-gnu", "release");
        put("aarch64-unknown-linux-gnu", "release");
        put("x86_64-unknown-linux-gnu", "debug");
        let found = |dev| built_target(dir.path(), dev, "sim_runs").unwrap();
        assert!(found(false).ends_with("aarch64-unknown-linux-gnu/release/sim_runs"));
        assert!(found(true).ends_with("x86_64-unknown-linux-gnu/debug/sim_runs"));
        assert!(found(false).is_absolute());
        assert_eq!(built_target(dir.path(), false, "sim_display"), None);
        assert_eq!(
            built_target(&dir.path().join("absent"), false, "sim_runs"),
            None
        );
    }

    #[test]
    fn executions_a_cpu_second_need_a_tenth_of_a_second_of_cpu() {
        assert_eq!(per_cpu_second(Some(61_800), Some(60.0)), Some(1_030));
        assert_eq!(per_cpu_second(Some(30), Some(0.05)), None);
        assert_eq!(per_cpu_second(None, Some(60.0)), None);
        assert_eq!(per_cpu_second(Some(30), None), None);
    }

    #[test]
    fn the_message_is_the_violation_line_or_the_line_after_a_panic() {
        let violation = "INFO: Seed: 7\n#3\tNEW cov: 1\nhistsim violation P4: [P4] two copies\n\
                         ==1== ERROR: libFuzzer: deadly signal\n";
        assert_eq!(
            panic_message(violation).as_deref(),
            Some("histsim violation P4: [P4] two copies")
        );
        assert_eq!(
            violation_id_in(violation.lines().nth(2).unwrap()),
            Some(BugId::P4)
        );
        let harness =
            "thread '<unnamed>' panicked at sim/src/x.rs:1:1:\n  histsim broken world: why\n";
        assert_eq!(
            panic_message(harness).as_deref(),
            Some("histsim broken world: why")
        );
        assert_eq!(panic_message("#3\tDONE cov: 1\n"), None);
    }

    /// A five-second debug campaign of `workload` with no flags of its own.
    fn options(workload: &str) -> CampaignOptions {
        CampaignOptions {
            workload: crate::registry::by_name(workload).unwrap(),
            budget_s: 5,
            planted: None,
            jobs: 1,
            fuzz_dir: PathBuf::from("fuzz"),
            seeds: None,
            run_dir: PathBuf::from("reports/x"),
            libfuzzer_args: Vec::new(),
            import_cap: Duration::from_secs(1),
            dev: true,
            trace_compares: false,
        }
    }

    /// The `-entropic=` flags a campaign passes libFuzzer, in order.
    fn entropic_flags(o: &CampaignOptions) -> Vec<String> {
        libfuzzer_args(o, Path::new("reports/x/corpus"), Path::new("reports/x/a"))
            .unwrap()
            .into_iter()
            .filter(|a| a.starts_with("-entropic="))
            .collect()
    }

    #[test]
    fn entropic_is_off_for_display_and_journal_unless_the_user_turns_it_back_on() {
        for workload in ["display", "journal"] {
            let mut o = options(workload);
            assert_eq!(entropic_flags(&o), ["-entropic=0"], "{workload}");
            o.libfuzzer_args = vec!["-entropic=1".into()];
            // libFuzzer takes the last of a flag given twice: the user's.
            assert_eq!(entropic_flags(&o), ["-entropic=0", "-entropic=1"]);
        }
        for workload in ["runs", "spool"] {
            assert!(entropic_flags(&options(workload)).is_empty(), "{workload}");
        }
    }

    #[test]
    fn cargo_gets_the_folders_before_its_separator_and_the_flags_after_in_order() {
        let o = options("runs");
        let given: Vec<String> = [
            "/c",
            "/s",
            "-max_total_time=5",
            "-len_control=0",
            "-len_control=9",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            cargo_run_args(&o, "sim_runs", &given),
            [
                "run",
                "--sanitizer",
                "none",
                "--dev",
                "--no-trace-compares",
                "sim_runs",
                "/c",
                "/s",
                "--",
                "-max_total_time=5",
                "-len_control=0",
                "-len_control=9"
            ]
        );
    }
}
