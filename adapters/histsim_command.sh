# Sourced by the adapters' scripts that drive histsim (campaign, inspect and findings checks), with
# the script's arguments, never run on its own:
#   source "$HERE/../histsim_command.sh" "$@"
# Makes the repository root the working directory (the scripts name the adapters and scenario
# folders from there) and sets HISTSIM, the histsim command to run: the arguments given, or
# `cargo run --quiet --release -p sim --` without any.

cd "$HERE/../.."
if [[ $# -gt 0 ]]; then HISTSIM=("$@"); else HISTSIM=(cargo run --quiet --release -p sim --); fi
