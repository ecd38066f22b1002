#!/usr/bin/env python3
"""A misbehaving pure projector: histsim's reference adapter behind a wrapper that drops the
first row of every `project` request before passing it on, so the answer is the history of
rows other than those given.

    project_drops_a_row.py -- CMD [ARG...]

histsim must find that `project` is not the history of exactly the rows given (P2), never pass
it in silence.
"""
import json
import sys

from relay import relay


def first_row_dropped(line):
    request = json.loads(line)
    if request.get("op") == "project" and request.get("rows"):
        request["rows"] = request["rows"][1:]
        return json.dumps(request) + "\n"
    return line


def main() -> None:
    assert sys.argv[1] == "--", "usage: project_drops_a_row.py -- CMD [ARG...]"
    relay(sys.argv[2:], request_line=first_row_dropped)


if __name__ == "__main__":
    main()
