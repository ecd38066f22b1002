#!/usr/bin/env bash
# Time and executions to detection of every planted bug by coverage-guided fuzzing, from an empty
# corpus and from the repository corpus, beside random seeds (`histsim bugs --jobs 1`): the
# table issue 14 asks for, as markdown on stdout (progress on stderr).
#
#   [REPEATS=K] [DEV=1] fuzz/detection_table.sh [HISTSIM] [CAP_S] [IDS...]
#
# HISTSIM: the histsim binary (default target/release/histsim); CAP_S: the budget of one fuzzing
# run in seconds (default 600, the issue's ten minutes); IDS: only these (default every planted
# bug). Run from the repository root; needs cargo-fuzz and jq. Each fuzzing run is a
# `histsim fuzz run` of the release build (DEV=1: the `--dev` build CI uses) with one libFuzzer
# process; the reports go to reports/table-<ID>-*, replaced by every run.
# Fuzzing seconds are the target's run (its start-up included, cargo's build check not); random
# seeds' seconds are the hunt inside `histsim bugs`, and the last column the whole command.
# A cell "S / N, as ID2" means the first crash named another ID than the one planted (the
# planted bug showed first as a broader or narrower invariant on that input).
#
# REPEATS=K (default 1) samples every cell K times and prints the medians: fuzzing runs with
# libFuzzer's `-seed=1..K`, random seeds from seeds 0, 100000, ... (`histsim bugs --first-seed`).
# One sample of each is luck: a bug that fires on one seed in twenty can be found at seed 0.
# The last lines are the medians of every column over the bugs.
set -euo pipefail
histsim=${1:-target/release/histsim}
cap=${2:-600}
shift $(( $# > 2 ? 2 : $# ))
repeats=${REPEATS:-1}
only=()
for id in "$@"; do only+=(--only "$id"); done

median() { # numbers on stdin, one a line -> their median ("-" for none)
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-";
    else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
first_seed() { echo $(( ($1 - 1) * 100000 )); } # sample r (1-based) -> its first seed

# Random seeds first: per sample, one line per ID (ID, workload, seeds, seconds, fired, message).
random=()
for r in $(seq 1 "$repeats"); do
  # `|| true`: the command fails when a bug fired first under another ID; the row says which.
  random+=("$("$histsim" bugs --jobs 1 --clean-seeds 1 --first-seed "$(first_seed "$r")" "${only[@]}" |
    awk '$1 ~ /^[PRJM][0-9]+$/' || true)")
done

fuzz_once() { # ID WORKLOAD MODE(empty|repo) SAMPLE -> "seconds executions found-id"
  local id=$1 workload=$2 mode=$3 name="table-$1-$3" flags=()
  [ "$mode" = empty ] && flags+=(--empty-corpus)
  # A run of a name grows that name's corpus folder, and the next run would start from it.
  rm -rf "reports/$name"
  [ "${DEV:-0}" = 1 ] && flags+=(--dev)
  "$histsim" fuzz run --workload "$workload" --planted "$id" --budget-s "$cap" \
    --name "$name" "${flags[@]}" --libfuzzer-arg=-seed="$4" >/dev/null 2>&1 || true
  jq -r '[(.elapsed_s * 100 | round / 100), (.libfuzzer.executions // "-"),
          (.violations[0].id // "none")] | map(tostring) | join(" ")' \
    "reports/$name/summary.json" 2>/dev/null || echo "- - failed"
}

# The whole `histsim bugs` command for one ID, wall seconds: random seeds paying their process's
# start-up, as a fuzzing run pays its target's.
whole_command() { # ID SAMPLE -> seconds
  { /usr/bin/time -f "%e" "$histsim" bugs --only "$1" --jobs 1 --clean-seeds 1 \
      --first-seed "$(first_seed "$2")" >/dev/null; } 2>&1 | tail -1 || true
}

as_others() { # " P9 P9 R3" -> "as P9 in 2 of K, R3 in 1 of K": the samples that fired another ID first
  tr ' ' '\n' <<<"$1" | grep . | sort | uniq -c |
    awk -v k="$repeats" '{ printf "%s%s in %d of %d", (NR > 1 ? ", " : "as "), $2, $1, k }'
}

fuzz_cell() { # ID WORKLOAD MODE -> the cell: median seconds / median executions, over the samples
  local id=$1 runs=() r s e f others="" missed=0
  for r in $(seq 1 "$repeats"); do
    read -r s e f <<<"$(fuzz_once "$id" "$2" "$3" "$r")"
    case "$f" in
      "$id") runs+=("$s $e") ;;
      none | failed) missed=$((missed + 1)) ;;
      *) runs+=("$s $e"); others="$others $f" ;;
    esac
  done
  if [ "${#runs[@]}" -eq 0 ]; then echo "not found in ${cap} s"; return; fi
  local ms me
  ms=$(printf '%s\n' "${runs[@]}" | awk '{print $1}' | median)
  me=$(printf '%s\n' "${runs[@]}" | awk '{print $2}' | median)
  echo "$ms / $me$( [ -n "$others" ] && echo ", $(as_others "$others")")$( [ "$missed" -gt 0 ] && echo ", $missed of $repeats not found in ${cap} s")"
}

echo "| ID | workload | fuzz, empty corpus: s / execs | fuzz, repository corpus: s / execs | random seeds: s / seeds | random seeds, whole command: s |"
echo "|---|---|---|---|---|---|"
columns=$(mktemp)
while read -r id workload _; do
  echo "fuzzing $id ($workload)" >&2
  empty=$(fuzz_cell "$id" "$workload" empty)
  repo=$(fuzz_cell "$id" "$workload" repo)
  # Samples that found something (seeds, seconds, the ID that fired first).
  seeds=$(for r in $(seq 0 $((repeats - 1))); do
    awk -v id="$id" '$1 == id && $3 != "-" { print $3, $4, $5 }' <<<"${random[$r]}"; done)
  rs=$(awk '{print $2}' <<<"$seeds" | median)
  rn=$(awk '{print $1}' <<<"$seeds" | median)
  rother=$(awk -v id="$id" '$3 != id { printf " %s", $3 }' <<<"$seeds")
  rfound=$(grep -c . <<<"$seeds" || true)
  whole=$(for r in $(seq 1 "$repeats"); do whole_command "$id" "$r"; done | median)
  random_cell="$rs / $rn"
  if [ -n "$rother" ]; then random_cell="$random_cell, $(as_others "$rother")"; fi
  if [ "$rfound" -lt "$repeats" ]; then
    random_cell="$random_cell, $((repeats - rfound)) of $repeats not found"
  fi
  echo "| $id | $workload | $empty | $repo | $random_cell | $whole |"
  echo "${empty%% *} ${repo%% *} $rs $whole" >>"$columns"
done <<<"${random[0]}"
echo
echo "Medians over the bugs (seconds; a bug not found counts as the cap): fuzz from an empty corpus" \
  "$(awk -v c="$cap" '{print ($1 == "not" ? c : $1)}' "$columns" | median)," \
  "from the repository corpus $(awk -v c="$cap" '{print ($2 == "not" ? c : $2)}' "$columns" | median)," \
  "random seeds in the process $(awk '{print $3}' "$columns" | median)," \
  "random seeds' whole command $(awk '{print $4}' "$columns" | median)."
rm -f "$columns"
