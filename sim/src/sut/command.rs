//! How a `--sut` command line is run: as a plain list of words without a shell, or by `sh -c`
//! (docs/sut-protocol.md, "Transport"), and the check, before a campaign starts, that its
//! program exists and may be run (a missing program is usage, exit 2, not a broken world).

use std::process::Command;

/// Whether `text` is plain words (letters, digits, `-_./:,+@` and spaces): run without a shell.
fn plain(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" -_./:,+@".contains(&b))
}

/// The command line as a process: words split on spaces when it is a plain list of words (one
/// process fewer a seed), else run by `sh -c` (pipes, quotes, variables, redirections).
pub(super) fn command_of(line: &str) -> Command {
    let mut words = line.split_whitespace();
    match (plain(line), words.next()) {
        (true, Some(program)) => {
            let mut command = Command::new(program);
            command.args(words);
            command
        }
        _ => {
            let mut command = Command::new("sh");
            command.arg("-c").arg(line);
            command
        }
    }
}

/// Words `sh` reads as its own (keywords and builtins), never looked up as a program.
const SHELL_WORDS: &[&str] = &[
    "!", ".", ":", "[", "{", "}", "alias", "bg", "break", "case", "cd", "command", "continue",
    "do", "done", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg",
    "fi", "for", "getopts", "hash", "if", "in", "jobs", "kill", "local", "newgrp", "printf", "pwd",
    "read", "readonly", "return", "set", "shift", "source", "test", "then", "times", "trap",
    "true", "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while", "echo",
];

/// Checks, before a campaign starts, that the program `line` runs exists and may be run: a
/// path (a word with a `/`) must name an executable file, another word an executable file on
/// `PATH`. A line run by `sh -c` is checked only through its first word, and only when that word
/// is plain and not the shell's own (`exec`, `read`, `cd`, ...): the shell may make anything of
/// the rest. `Err` says what is missing.
pub fn check_command(line: &str) -> Result<(), String> {
    let Some(first) = line.split_whitespace().next() else {
        return Err("the command is empty".into());
    };
    if !plain(first) || (!plain(line) && SHELL_WORDS.contains(&first)) {
        return Ok(());
    }
    if first.contains('/') {
        return match executable(std::path::Path::new(first)) {
            Ok(()) => Ok(()),
            Err(why) => Err(format!("`{first}` {why}")),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(first)).is_ok()) {
        return Ok(());
    }
    Err(format!("`{first}` is not a program on PATH"))
}

/// `Ok` when `path` is a file someone may execute; `Err` says what it is instead.
fn executable(path: &std::path::Path) -> Result<(), &'static str> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Err(_) => Err("does not exist"),
        Ok(m) if !m.is_file() => Err("is not a file"),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err("is not executable"),
        Ok(_) => Ok(()),
    }
}
