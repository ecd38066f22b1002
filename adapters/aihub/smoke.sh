#!/usr/bin/env bash
# Smoke test of the aihub adapter over the protocol: hello, open, append, reconstruct, project,
# close, a restart on the same data directory, and the error kinds. Then the conformance corpus.
# Prints "SKIPPED: <why>" and exits 0 when Python 3.11 or the package index cannot be had.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
source "$HERE/../skip_or_setup.sh" "$HERE" "smoke (aihub)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The requests, one a line. Rows are in the persisted shape (event_type "display_event").
"$PYTHON" - "$work" <<'EOF'
import json, sys
work = sys.argv[1]

def row(eid, agent_class, agent_id, parents, created_at, data, display="d1", thread="t1"):
    return json.dumps({
        "agent_class": agent_class, "agent_id": agent_id, "thread_id": thread, "display_id": display,
        "run_id": "r1", "event_id": eid, "event_type": "display_event", "event_name": parents[0],
        "event_data": {"created_at": created_at, **data}, "event_parents": parents,
    })

user = row("e1", "UserAgent", "u1", ["UserMessageEvent", "StartEvent"], 1,
           {"messages": [{"role": "user", "blocks": [{"block_type": "text", "text": "hi"}], "additional_kwargs": {}}]})
chunk = row("e2", "LeadAgent", "lead", ["ChunkEvent", "DisplayEvent"], 2, {"content": "hel"})
stop = row("e3", "LeadAgent", "lead", ["CustomStopEvent", "StopEvent"], 3,
           {"output_messages": [{"role": "assistant", "contents": [{"type": "text", "text": "hello"}]}]})
hidden = row("e4", "LeadAgent", "lead", ["ChunkEvent"], 4, {"content": "hidden"}, display="d2")
bad_type = json.dumps({**json.loads(chunk), "event_id": "e5", "agent_id": 5})
bad_chunk = row("e6", "LeadAgent", "lead", ["ChunkEvent"], 5, {"content": 12345})
primary = {"agent_class": "LeadAgent", "agent_id": "lead"}
data_dir = work + "/data"

first = [
    {"id": 1, "op": "hello", "protocol": 1},
    {"id": 2, "op": "append", "node": 0, "rows": [user]},
    {"id": 3, "op": "open", "data_dir": data_dir, "options": {"store": "memory", "planted": None}},
    {"id": 4, "op": "append", "node": 0, "rows": [user, chunk, "not json", bad_type, hidden]},
    {"id": 5, "op": "append", "node": 1, "rows": [chunk, stop, bad_chunk]},
    {"id": 6, "op": "reconstruct", "node": 1, "thread_id": "t1", "primary": primary},
    {"id": 7, "op": "reconstruct", "node": 0, "thread_id": "t-none", "primary": None},
    {"id": 8, "op": "project", "rows": [user, chunk, stop, "[1]"], "primary": primary},
    {"id": 9, "op": "project", "rows": [user, chunk, stop], "primary": None},
    {"id": 10, "op": "drop_all"},
    {"id": 11, "op": "project", "rows": "nope", "primary": None},
    {"id": 12, "op": "hello", "protocol": 2},
    {"id": 13, "op": "close"},
]
second = [
    {"id": 1, "op": "hello", "protocol": 1},
    {"id": 2, "op": "open", "data_dir": data_dir, "options": {"store": "sqlite", "planted": None}},
    {"id": 3, "op": "reconstruct", "node": 2, "thread_id": "t1", "primary": primary},
    {"id": 4, "op": "close"},
]
for name, requests in [("first", first), ("second", second)]:
    with open(f"{work}/{name}.in", "w") as f:
        for r in requests:
            f.write(json.dumps(r) + "\n")
EOF

"$HERE/run" <"$work/first.in" >"$work/first.out" 2>"$work/first.err"
# A restart on the same data directory, as after a simulated crash.
"$HERE/run" <"$work/second.in" >"$work/second.out" 2>"$work/second.err"

PYTHONPATH="$HERE/../lib" "$PYTHON" - "$work" <<'EOF'
import sys
from smoke_checks import Checks
checks = Checks(sys.argv[1])
check, answers = checks.check, checks.answers

a = answers("first")
check("hello", a[1].get("ok") == {"system": "aihub", "version": "0.323.4", "protocol": 1,
      "ops": ["hello", "open", "close", "append", "reconstruct", "project"], "differences": ["D1", "D2", "D3"]}, a[1])
check("append before open is a conflict", a[2].get("err", {}).get("kind") == "conflict", a[2])
check("open", a[3].get("ok") == {}, a[3])
check("admission", a[4].get("ok") == {"admitted": ["stored", "stored", "quarantined", "quarantined", "stored"]}, a[4])
check("admission, other node", a[5].get("ok") == {"admitted": ["stored", "stored", "stored"]}, a[5])
history = {"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
r6 = a[6].get("ok", {})
check("reconstruct: messages", r6.get("messages") == list(history), a[6])
check("reconstruct: warnings", [(w["code"], w["event_id"], w["field"]) for w in r6.get("warnings", [])] == [("bad_payload", "e6", "content")], a[6])
r7 = a[7].get("ok", {})
check("no visible display", r7.get("messages") == [] and [w["code"] for w in r7.get("warnings", [])] == ["no_visible_display"], a[7])
check("project", a[8].get("ok") == {"messages": list(history), "warnings": []}, a[8])
check("project without primary ignores the stop", a[9].get("ok", {}).get("messages") == [history[0], {"role": "assistant", "content": [{"type": "text", "text": "hel"}]}], a[9])
check("unknown op", a[10].get("err", {}).get("kind") == "unsupported", a[10])
check("bad request", a[11].get("err", {}).get("kind") == "invalid", a[11])
check("other protocol", a[12].get("err", {}).get("kind") == "invalid", a[12])
check("close", a[13].get("ok") == {}, a[13])
b = answers("second")
check("restart keeps the store", b[3].get("ok") == r6, b[3])
checks.finish("smoke (aihub)")
EOF

"$HERE/run" --conformance "$ROOT/history/tests/conformance/display"
"$HERE/run" --store-check
