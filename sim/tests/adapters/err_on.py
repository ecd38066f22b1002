#!/usr/bin/env python3
"""A misbehaving system under test: histsim's own reference adapter behind a wrapper that
answers `{"err":{"kind":KIND}}` to every request of the named ops (the request still reaches
the reference adapter, so it stays in step, and its answer is thrown away).

    err_on.py KIND OP[,OP...] -- CMD [ARG...]

histsim must judge each such error as its catalog says (R24 for the runs ops, P1 for a display
reconstruction), never pass it in silence.
"""
import json
import subprocess
import sys


def main() -> None:
    kind, ops = sys.argv[1], set(sys.argv[2].split(","))
    assert sys.argv[3] == "--", "usage: err_on.py KIND OP[,OP...] -- CMD [ARG...]"
    child = subprocess.Popen(sys.argv[4:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        request = json.loads(line)
        child.stdin.write(line)
        child.stdin.flush()
        answer = child.stdout.readline()
        if not answer:
            break
        if request.get("op") in ops:
            refusal = {"kind": kind, "message": f"{request['op']} refused by err_on.py"}
            answer = json.dumps({"id": request["id"], "err": refusal}) + "\n"
        sys.stdout.write(answer)
        sys.stdout.flush()
    child.stdin.close()
    child.wait()


if __name__ == "__main__":
    main()
