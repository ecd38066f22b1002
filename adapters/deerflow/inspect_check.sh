#!/usr/bin/env bash
# `histsim runs inspect` on stores the published DeerFlow code wrote: the adapter's JSONL and DB
# backends (deerflow-kernel 0.1.7) write two runs into a fresh data directory, one ended with
# `run.end` and one cut off; inspect must read both stores, find exactly the run without an end,
# and leave the files unchanged.
#
# Usage: inspect_check.sh [HISTSIM...]   (default: `cargo run --quiet --release -p sim --`)
# Prints "SKIPPED: <why>" and exits 0 when Python 3.11 or the package index cannot be had.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../histsim_command.sh" "$@"

source "$HERE/../skip_or_setup.sh" "$HERE" "inspect_check (deerflow)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

event() { # run event_type category content_json created_at_ns
    printf '{"thread_id":"t1","run_id":"%s","user_id":"u1","event_type":"%s","category":"%s","content":%s,"metadata":{},"created_at_ns":%s}' "$@"
}
requests() { # data_dir
    local batch1 batch2
    batch1="$(event r1 run.start lifecycle '""' 1700000000000000000),$(event r1 llm.human.input message '{"type":"human","id":"h1","content":"hi"}' 1700000000001000000),$(event r1 llm.ai.response message '{"type":"ai","id":"a1","content":"hello"}' 1700000000002000000),$(event r1 run.end lifecycle '{}' 1700000000003000000)"
    batch2="$(event r2 run.start lifecycle '""' 1700000000004000000),$(event r2 llm.human.input message '{"type":"human","id":"h2","content":"again"}' 1700000000005000000)"
    printf '%s\n' \
        '{"id":1,"op":"hello","protocol":1}' \
        "{\"id\":2,\"op\":\"open\",\"data_dir\":\"$1\",\"options\":{\"store\":\"sqlite\",\"planted\":null}}" \
        "{\"id\":3,\"op\":\"put_batch\",\"events\":[$batch1]}" \
        "{\"id\":4,\"op\":\"put_batch\",\"events\":[$batch2]}" \
        '{"id":5,"op":"close"}'
}

failed=0
for backend in db jsonl; do
    dir="$work/$backend"
    mkdir -p "$dir"
    requests "$dir" | "$HERE/run" --backend "$backend" >"$work/$backend.out" 2>"$work/$backend.err"
    if grep -q '"err"' "$work/$backend.out"; then
        cat "$work/$backend.out" "$work/$backend.err" >&2
        echo "inspect_check ($backend): the adapter refused a request" >&2
        failed=1
        continue
    fi
    if [[ $backend == db ]]; then store="$dir/deerflow-run-events.sqlite"; else store="$dir/deerflow-jsonl"; fi
    before="$(find "$store" -type f -exec sha256sum {} + | sort)"
    set +e
    report="$("${HISTSIM[@]}" runs inspect "$store" --json)"
    rc=$?
    set -e
    after="$(find "$store" -type f -exec sha256sum {} + | sort)"
    kinds="$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["events"], ",".join(f["kind"] for t in r["threads"] for f in t["findings"]), len(r["unreadable"]))' <<<"$report")"
    if [[ $rc -eq 1 && $kinds == "6 run_without_end 0" && $before == "$after" ]] && grep -q '"r2 (from seq 5)\|r2 (from seq 5)' <<<"$report"; then
        echo "inspect_check ($backend): ok: 6 events read, run r2 has no end event, the store unchanged"
    else
        echo "inspect_check ($backend): FAILED (exit $rc; events, kinds, unreadable: $kinds)" >&2
        echo "$report" >&2
        failed=1
    fi
done
exit $failed
