"""The line loop of histsim's SUT protocol v1, shared by the adapters (docs/sut-protocol.md).

One JSON request a line on stdin, one JSON response a line on stdout; nothing else is ever written
to stdout. An adapter supplies the server: `answer(request) -> dict` (raising `Refusal` for the
protocol's error kinds) and `op_close(request)`, called once more when stdin ends. The adapters'
`run` scripts put this directory on PYTHONPATH.
"""

import json
import sys
import traceback


class Refusal(Exception):
    """An error answer of the protocol: its kind (invalid, conflict, unsupported, internal, ...)
    and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def response_for(server, line: bytes) -> dict:
    try:
        request = json.loads(line)
    except ValueError as e:
        return {"id": 0, "err": {"kind": "invalid", "message": f"not JSON: {e}"}}
    if not isinstance(request, dict):
        return {"id": 0, "err": {"kind": "invalid", "message": "a request is a JSON object"}}
    raw_id = request.get("id")
    if not isinstance(raw_id, int) or isinstance(raw_id, bool) or raw_id < 0:
        return {"id": 0, "err": {"kind": "invalid", "message": "`id` is not an unsigned integer"}}
    try:
        return {"id": raw_id, "ok": server.answer(request)}
    except Refusal as r:
        return {"id": raw_id, "err": {"kind": r.kind, "message": r.message}}
    except Exception as e:  # never crash, never write anything but a response
        traceback.print_exc(file=sys.stderr)
        return {"id": raw_id, "err": {"kind": "internal", "message": f"{type(e).__name__}: {e}"}}


def serve(server, stdin, stdout) -> None:
    """Answers every non-blank line of stdin (bytes) on stdout (bytes), then closes the server."""
    for line in stdin:
        if not line.strip():
            continue
        response = response_for(server, line)
        try:
            text = json.dumps(response, sort_keys=True, allow_nan=False, ensure_ascii=True, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            failed = {"kind": "internal", "message": f"the answer is not representable as JSON: {e}"}
            text = json.dumps({"id": response["id"], "err": failed}, sort_keys=True, separators=(",", ":"))
        stdout.write(text.encode("ascii") + b"\n")
        stdout.flush()
    server.op_close({})
