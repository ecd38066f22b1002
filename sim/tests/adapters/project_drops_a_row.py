#!/usr/bin/env python3
"""A misbehaving pure projector: histsim's reference adapter behind a wrapper that drops the
first row of every `project` request before passing it on, so the answer is the history of
rows other than those given.

    project_drops_a_row.py -- CMD [ARG...]

histsim must find that `project` is not the history of exactly the rows given (P2), never pass
it in silence.
"""
import json
import subprocess
import sys


def main() -> None:
    assert sys.argv[1] == "--", "usage: project_drops_a_row.py -- CMD [ARG...]"
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "project" and request.get("rows"):
            request["rows"] = request["rows"][1:]
            line = json.dumps(request) + "\n"
        child.stdin.write(line)
        child.stdin.flush()
        answer = child.stdout.readline()
        if not answer:
            break
        sys.stdout.write(answer)
        sys.stdout.flush()
    child.stdin.close()
    child.wait()


if __name__ == "__main__":
    main()
