//! Every command the README shows works as written: each `sh` block's lines are run (with
//! smaller seed ranges) in an empty directory that holds only a link to `scenarios/`, with the
//! `histsim` this build made first on `PATH`, and must exit as the README says. A command in
//! the README that this table does not know fails the test, and so does an entry the README
//! no longer shows: the two stay in step.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one README command must do.
struct Expected {
    /// The line exactly as the README shows it.
    readme: &'static str,
    /// How the test runs it: the README's line with a smaller seed range, or another form of
    /// the same command; `None`: not run, and why in `why_not`.
    run: Option<&'static str>,
    code: i32,
    /// Text its output must hold (what the README says it prints).
    prints: &'static str,
    why_not: &'static str,
}

const COMMANDS: &[Expected] = &[
    Expected {
        readme: "cargo install --locked --path sim",
        run: None,
        code: 0,
        prints: "",
        why_not: "a release build of minutes; the tests run the `histsim` cargo built",
    },
    Expected {
        readme: "cargo run --release -p sim -- run",
        run: Some("histsim run --seeds 0..40"),
        code: 0,
        prints: "ok: 40 seeds, 0 violations",
        why_not: "",
    },
    Expected {
        readme: "cargo test --workspace",
        run: None,
        code: 0,
        prints: "",
        why_not: "the command running this test",
    },
    Expected {
        readme: "histsim run --workload runs --seeds 0..200 --sut \"histsim serve runs\"",
        run: Some("histsim run --workload runs --seeds 0..12 --sut \"histsim serve runs\""),
        code: 0,
        prints: "ok: 12 seeds, 0 violations",
        why_not: "",
    },
    Expected {
        readme: "histsim run --workload display --seeds 0..200 --sut \"histsim serve display\" --check-determinism 10",
        run: Some("histsim run --workload display --seeds 0..20 --sut \"histsim serve display\" --check-determinism 10"),
        code: 0,
        prints: "every trace hash matched",
        why_not: "",
    },
    Expected {
        readme: "histsim run --seeds 0..200 --planted P4 --no-shrink",
        run: Some("histsim run --seeds 0..20 --planted P4 --no-shrink"),
        code: 1,
        prints: "replay --seed 1 --planted P4",
        why_not: "",
    },
    Expected {
        readme: "histsim replay --seed 1 --planted P4 --trace",
        run: Some("histsim replay --seed 1 --planted P4 --trace"),
        code: 1,
        prints: "trace-hash:",
        why_not: "",
    },
    Expected {
        readme: "histsim shrink --seed 1 --planted P4 --out target/regressions",
        run: Some("histsim shrink --seed 1 --planted P4 --out target/regressions"),
        code: 0,
        prints: "target/regressions/",
        why_not: "",
    },
    Expected {
        readme: "histsim replay --scenario scenarios/display/p04_every_replica_persists_a_copy.toml --planted P4",
        run: Some("histsim replay --scenario scenarios/display/p04_every_replica_persists_a_copy.toml --planted P4"),
        code: 1,
        prints: "violation [P4]",
        why_not: "",
    },
    Expected {
        readme: "histsim scenarios",
        run: Some("histsim scenarios"),
        code: 0,
        prints: "0 failed",
        why_not: "",
    },
    Expected {
        readme: "histsim bugs --only P4",
        run: Some("histsim bugs --only P4 --clean-seeds 30"),
        code: 0,
        prints: "detected 1/1 planted bugs",
        why_not: "",
    },
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The lines of the README's `sh` blocks.
fn readme_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        match (inside, line.trim()) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, l) if !l.is_empty() && !l.starts_with('#') => out.push(l.to_string()),
            _ => {}
        }
    }
    out
}

#[test]
fn the_readme_and_this_table_show_the_same_commands() {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let shown = readme_commands(&text);
    for line in &shown {
        assert!(
            COMMANDS.iter().any(|c| c.readme == line),
            "README command `{line}` has no entry in sim/tests/sim/readme.rs: add it, with the exit code and output it must give"
        );
    }
    for c in COMMANDS {
        assert!(
            shown.iter().any(|l| l == c.readme),
            "`{}` is no longer in the README: remove its entry",
            c.readme
        );
        assert!(c.run.is_some() || !c.why_not.is_empty(), "{}", c.readme);
    }
}

#[test]
fn every_readme_command_works_as_written() {
    let histsim = PathBuf::from(env!("CARGO_BIN_EXE_histsim"));
    let bin = histsim.parent().expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("a PATH");
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::os::unix::fs::symlink(repo().join("scenarios"), dir.path().join("scenarios"))
        .expect("a link to scenarios/");
    let mut failures = Vec::new();
    for c in COMMANDS {
        let Some(run) = c.run else { continue };
        let out = Command::new("sh")
            .arg("-c")
            .arg(run)
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(c.code) || !text.contains(c.prints) {
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            failures.push(format!(
                "`{run}` (README: `{}`) exited {:?}, expected {}, and must print `{}`; its last lines:\n{}",
                c.readme,
                out.status.code(),
                c.code,
                c.prints,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
