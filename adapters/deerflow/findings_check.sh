#!/usr/bin/env bash
# The recorded findings in the published DeerFlow stores still reproduce: every scenario file
# under scenarios/upstream/deerflow/ names the adapter command it fails against (`system = ...`);
# `histsim scenarios --systems` plays each on histsim's own components (which must pass it) and
# against that command (which must still fail it with the file's ID). A finding that stops
# reproducing (fixed upstream, or a changed adapter) fails this check: update FINDINGS.md.
#
# Usage: findings_check.sh [HISTSIM...]   (default: `cargo run --quiet --release -p sim --`)
# Prints "SKIPPED: <why>" and exits 0 when Python 3.11 or the package index cannot be had.
# Environment: HISTSIM_SUT_TIMEOUT_MS (each request, default 60000) and
# HISTSIM_SUT_START_TIMEOUT_MS (start, `hello` and each `open`, default 60000), passed on as
# --sut-timeout-ms and --sut-start-timeout-ms (docs/sut-protocol.md, "Transport").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../histsim_command.sh" "$@"

source "$HERE/../skip_or_setup.sh" "$HERE" "findings_check (deerflow)"
# The adapter starts an interpreter per host, and a scenario's crashes start it again: allow
# each start and each request what a loaded CI machine needs.
"${HISTSIM[@]}" scenarios scenarios/upstream/deerflow --systems \
    --sut-timeout-ms "${HISTSIM_SUT_TIMEOUT_MS:-60000}" \
    --sut-start-timeout-ms "${HISTSIM_SUT_START_TIMEOUT_MS:-60000}"
