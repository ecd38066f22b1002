#!/usr/bin/env python3
"""A misbehaving system under test: histsim's own reference adapter behind a wrapper that
answers `{"err":{"kind":KIND}}` to every request of the named ops (the request still reaches
the reference adapter, so it stays in step, and its answer is thrown away).

    err_on.py KIND OP[,OP...] -- CMD [ARG...]

histsim must judge each such error as its catalog says (R24 for the runs ops, P1 for a display
reconstruction), never pass it in silence.
"""
import json
import sys

from relay import relay


def main() -> None:
    kind, ops = sys.argv[1], set(sys.argv[2].split(","))
    assert sys.argv[3] == "--", "usage: err_on.py KIND OP[,OP...] -- CMD [ARG...]"

    def refused(line, answer):
        request = json.loads(line)
        if request.get("op") not in ops:
            return answer
        refusal = {"kind": kind, "message": f"{request['op']} refused by err_on.py"}
        return json.dumps({"id": request["id"], "err": refusal}) + "\n"

    relay(sys.argv[4:], answer_line=refused)


if __name__ == "__main__":
    main()
