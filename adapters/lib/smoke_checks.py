"""The checks of the adapters' smoke tests (adapters/*/smoke.sh): each test writes the adapter's
responses to WORK/NAME.out, then checks them in a Python script that imports this module (the
smoke scripts put this directory on PYTHONPATH)."""

import json
import sys


class Checks:
    def __init__(self, work: str) -> None:
        self.work = work
        self.passed = 0
        self.failed = 0

    def check(self, name: str, condition: bool, detail="") -> None:
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name} {str(detail)[:400]}")

    def answers(self, name: str) -> dict:
        """The responses of WORK/NAME.out by request id; each line must be one response."""
        out = {}
        for line in open(f"{self.work}/{name}.out").read().splitlines():
            r = json.loads(line)  # every stdout line is a JSON response
            self.check(f"{name}: one of ok/err", ("ok" in r) != ("err" in r), line)
            out[r["id"]] = r
        return out

    def finish(self, label: str) -> None:
        """Prints the tally and exits: 1 when a check failed."""
        print(f"{label}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
