#!/usr/bin/env bash
# The published aihub projector as histsim's second system under test, in short: a campaign of
# the display workload with the determinism check, the differential against histsim's own
# components, and every projector-level planted bug shown as a difference from the real
# projector (issue 16, section 3). Long runs take the same commands with more seeds.
#
# Usage: campaign.sh [HISTSIM...]   (default: `cargo run --quiet --release -p sim --`)
# Prints "SKIPPED: <why>" and exits 0 when Python 3.11 or the package index cannot be had.
# Environment: HISTSIM_SUT_TIMEOUT_MS (each request, default 10000) and
# HISTSIM_SUT_START_TIMEOUT_MS (start, `hello` and each `open`, default 60000), passed to every
# histsim command as --sut-timeout-ms and --sut-start-timeout-ms (docs/sut-protocol.md,
# "Transport": a system still computing is waited for until it used the timeout in CPU time).
# AIHUB_CAMPAIGN_SEEDS and AIHUB_DIFF_SEEDS set the seeds of the first two parts;
# AIHUB_SHRINK_CAP_S (default 5) the seconds each planted bug's difference may be shrunk.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../histsim_command.sh" "$@"
SEEDS_CAMPAIGN="${AIHUB_CAMPAIGN_SEEDS:-0..100}"
SEEDS_DIFF="${AIHUB_DIFF_SEEDS:-0..200}"
SUT="adapters/aihub/run"
LIMITS=(--sut-timeout-ms "${HISTSIM_SUT_TIMEOUT_MS:-10000}"
        --sut-start-timeout-ms "${HISTSIM_SUT_START_TIMEOUT_MS:-60000}")

source "$HERE/../skip_or_setup.sh" "$HERE" "campaign (aihub)"

echo "== campaign: display workload, seeds $SEEDS_CAMPAIGN, through the published projector"
"${HISTSIM[@]}" run --workload display --sut "$SUT" "${LIMITS[@]}" --seeds "$SEEDS_CAMPAIGN" \
    --check-determinism 5 --quiet --name ci-aihub

echo "== differential: histsim's own components against the published projector, seeds $SEEDS_DIFF"
"${HISTSIM[@]}" diff --workload display --sut in-process --sut "$SUT" "${LIMITS[@]}" \
    --seeds "$SEEDS_DIFF"

# The planted bugs that live in histsim's projector (history/src/display/{projector,media,family}.rs)
# and in its thread lookup (P16, history/src/display/service.rs: the published service finds a
# thread under the spelling its rows carry): each must make histsim's answers differ from the
# published system's.
echo "== every projector-level planted bug is a difference from the published projector"
missed=()
for bug in P3 P4 P5 P6 P7 P8 P9 P10 P11 P13 P16; do
    set +e
    out="$("${HISTSIM[@]}" diff --workload display --planted "$bug" --sut in-process --sut "$SUT" "${LIMITS[@]}" \
        --seeds 0..300 --shrink-cap-s "${AIHUB_SHRINK_CAP_S:-5}" --out "reports/diff-planted/$bug" 2>&1)"
    rc=$?
    set -e
    if [[ $rc -eq 1 ]]; then
        echo "$bug: $(grep -m1 '^DIFFERENT' <<<"$out" | cut -c1-40)... $(grep -m1 '^shrunk' <<<"$out" | cut -d';' -f1)"
    else
        echo "$bug: NOT shown as a difference (exit $rc)"
        echo "$out" | tail -5
        missed+=("$bug")
    fi
done
if [[ ${#missed[@]} -gt 0 ]]; then
    echo "campaign (aihub): planted bugs not shown as a difference: ${missed[*]}" >&2
    exit 1
fi
echo "campaign (aihub): passed"
