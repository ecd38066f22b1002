"""Runs a conformance corpus through the aihub adapter's `project` op, over the protocol.

    adapters/aihub/run --conformance DIR [--verbose] [--strict] [--sut CMD]

Every `*.json` file of DIR is one case: {"about", "source", "primary", "rows", "expected":
{"messages", "warning_codes"}}. A row is a JSON object (sent as its JSON text) or a JSON string
(sent as is: raw row bytes). The adapter is started as a child process (`adapter.py` under this
interpreter) and spoken to line by line, exactly as histsim does. With `--sut CMD`, any other
system speaking the protocol is started instead (`sh -c CMD`), e.g. `--sut "histsim serve
display"` to see how histsim's own projector fares on the same files.

A case passes when the answer's messages equal `expected.messages` and the codes of its warnings,
in order, equal `expected.warning_codes`. The files named `upstream-*.json` transcribe the
upstream projector's own unit tests: all of them must pass (exit 1 otherwise). The other files are
histsim's rules; a failure there is a difference between histsim's contract and the real
projector, listed and counted, and fails the run only with --strict.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Adapter:
    def __init__(self, command: str | None = None) -> None:
        argv = ["sh", "-c", command] if command else [sys.executable, "-u", os.path.join(HERE, "adapter.py")]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 1

    def call(self, request: dict) -> dict:
        request = {"id": self.next_id, **request}
        self.next_id += 1
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the adapter closed its stdout at request {request['id']}")
        response = json.loads(line)
        if response.get("id") != request["id"]:
            raise RuntimeError(f"answer to id {response.get('id')} for request {request['id']}")
        return response

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def row_text(row) -> str:
    return row if isinstance(row, str) else json.dumps(row)


def run_case(adapter: Adapter, case: dict) -> tuple[bool, str]:
    response = adapter.call(
        {"op": "project", "rows": [row_text(r) for r in case["rows"]], "primary": case["primary"]}
    )
    if "err" in response:
        return False, f"err {response['err']['kind']}: {response['err']['message']}"
    got = response["ok"]
    expected = case["expected"]
    codes = [w["code"] for w in got["warnings"]]
    problems = []
    if got["messages"] != expected["messages"]:
        problems.append(
            "messages differ:\n      expected "
            + json.dumps(expected["messages"])
            + "\n      got      "
            + json.dumps(got["messages"])
        )
    if codes != expected.get("warning_codes", []):
        problems.append(f"warning codes differ: expected {expected.get('warning_codes', [])}, got {codes}")
    return not problems, "\n    ".join(problems)


def main(argv: list[str]) -> int:
    argv = list(argv)
    command = None
    if "--sut" in argv:
        at = argv.index("--sut")
        if at + 1 >= len(argv):
            print("--sut needs a command", file=sys.stderr)
            return 2
        command = argv[at + 1]
        del argv[at : at + 2]
    args = [a for a in argv if not a.startswith("--")]
    verbose = "--verbose" in argv
    strict = "--strict" in argv
    if len(args) != 1:
        print("usage: run --conformance DIR [--verbose] [--strict] [--sut CMD]", file=sys.stderr)
        return 2
    directory = args[0]
    names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    adapter = Adapter(command)
    hello = adapter.call({"op": "hello", "protocol": 1})
    print(f"system: {json.dumps(hello.get('ok'))}")
    counts = {"upstream": [0, 0], "other": [0, 0]}
    failures = []
    for name in names:
        with open(os.path.join(directory, name)) as f:
            case = json.load(f)
        group = "upstream" if name.startswith("upstream-") else "other"
        passed, why = run_case(adapter, case)
        counts[group][0 if passed else 1] += 1
        if not passed:
            failures.append((group, name, why))
        if verbose or not passed:
            print(f"{'PASS' if passed else 'FAIL'} {name}" + ("" if passed else f"\n    {why}"))
    adapter.close()
    up, other = counts["upstream"], counts["other"]
    if other[0] + other[1]:
        print(
            f"histsim rule files through the real projector: {other[0]} agree, {other[1]} differ"
            + (" (differences listed above)" if other[1] else "")
        )
    system = (hello.get("ok") or {}).get("system", "?")
    print(f"conformance ({system}, upstream-transcribed): {up[0]} passed, {up[1]} failed")
    if up[1] or (strict and other[1]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
