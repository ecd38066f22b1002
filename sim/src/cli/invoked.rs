//! The help text in the name histsim was invoked by: its examples (`histsim run`, `--sut
//! "histsim serve display"`) are written for an installed `histsim`, and are rewritten for a
//! histsim started by `cargo run`, so every command it shows runs where it was shown.

use crate::run::{histsim_command, histsim_program};
use clap::Command;

/// `cmd` with its help, at every level, in the words of this invocation.
pub(super) fn in_invoked_names(cmd: Command) -> Command {
    let command = histsim_command();
    if command == "histsim" {
        return cmd;
    }
    let program = histsim_program();
    rewritten(cmd.bin_name(&command), &|text: &str| {
        reworded(text, &command, &program)
    })
}

/// The examples of `text` for this invocation: a `--sut` line names the program to start
/// (`histsim serve` needs a binary, not cargo), every other example the command.
fn reworded(text: &str, command: &str, program: &str) -> String {
    text.replace("histsim serve", &format!("{program} serve"))
        .replace("`histsim ", &format!("`{command} "))
        .replace("\"histsim ", &format!("\"{command} "))
}

fn rewritten(cmd: Command, f: &dyn Fn(&str) -> String) -> Command {
    let about = cmd.get_about().map(|a| f(&a.to_string()));
    let long_about = cmd.get_long_about().map(|a| f(&a.to_string()));
    let mut cmd = cmd.mut_args(|arg| {
        let help = arg.get_help().map(|h| f(&h.to_string()));
        let long_help = arg.get_long_help().map(|h| f(&h.to_string()));
        let arg = match help {
            Some(h) => arg.help(h),
            None => arg,
        };
        match long_help {
            Some(h) => arg.long_help(h),
            None => arg,
        }
    });
    if let Some(a) = about {
        cmd = cmd.about(a);
    }
    if let Some(a) = long_about {
        cmd = cmd.long_about(a);
    }
    cmd.mut_subcommands(|sub| rewritten(sub, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_name_the_command_and_a_sut_names_the_binary() {
        let text = "e.g. `--sut \"histsim serve display\"`; see `histsim run`";
        assert_eq!(
            reworded(text, "cargo run --release -p sim --", "target/release/histsim"),
            "e.g. `--sut \"target/release/histsim serve display\"`; see `cargo run --release -p sim -- run`"
        );
    }
}
