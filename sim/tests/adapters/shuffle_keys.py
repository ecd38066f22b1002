#!/usr/bin/env python3
"""A system under test that means what another says, spelled differently.

Usage: shuffle_keys.py CMD...  (e.g. shuffle_keys.py /path/to/histsim serve runs)

Runs CMD as a child, forwards every request line to it unchanged, and re-emits each of its
answers with the keys of every JSON object in a random order and random insignificant
whitespace, from a random generator seeded by the operating system (so another process orders
them another way). The answers mean exactly what the child's do: histsim compares answers as
canonical JSON (docs/sut-protocol.md, "Transport"), so this adapter must pass
`--check-determinism` wherever the child does. A line that is not JSON is passed on as it is.
"""

import json
import os
import random
import sys

from relay import relay

RNG = random.Random(os.urandom(16))


def shuffled(value):
    """`value` with the keys of every object in a random order (arrays keep theirs: it is meaning)."""
    if isinstance(value, dict):
        keys = list(value)
        RNG.shuffle(keys)
        return {k: shuffled(value[k]) for k in keys}
    if isinstance(value, list):
        return [shuffled(v) for v in value]
    return value


def respelled(line):
    try:
        value = json.loads(line)
    except ValueError:
        return line
    # Spaces after the separators, or none, chosen per answer.
    separators = RNG.choice([(",", ":"), (", ", ": ")])
    return json.dumps(shuffled(value), separators=separators, ensure_ascii=RNG.random() < 0.5)


def main():
    if len(sys.argv) < 2:
        print("usage: shuffle_keys.py CMD...", file=sys.stderr)
        return 2
    return relay(sys.argv[1:], answer_line=lambda _, answer: respelled(answer.rstrip("\n")) + "\n")


if __name__ == "__main__":
    sys.exit(main())
