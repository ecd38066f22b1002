"""Checks the adapter's store against the upstream repository tests of the thread query.

    adapters/aihub/run --store-check

`store_cases.json` transcribes, as data, the upstream tests of
`PersistedAgentEventEntity.conversation_events_for_thread` (run against MongoDB upstream): rows
written through the persister path (`append`), then the event ids the query returns for a thread.
Each case runs on a fresh store in a temporary directory, in process.
"""

import json
import logging
import os
import sys
import tempfile

import adapter

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    with open(os.path.join(HERE, "store_cases.json")) as f:
        cases = json.load(f)["cases"]
    passed = failed = 0
    for case in cases:
        with tempfile.TemporaryDirectory() as data_dir:
            store = adapter.AgentEventStore(data_dir)
            admitted = [store.admit(json.dumps(row)) for row in case["rows"]]
            events, warnings = adapter.capture_warnings(lambda: store.conversation_events_for_thread(case["thread_id"]))
            store.close()
        ids = [e.event_id for e in events]
        expected = case["expected_event_ids"]
        ok = admitted == ["stored"] * len(case["rows"])
        ok = ok and (ids == expected if case["ordered"] else sorted(ids) == sorted(expected))
        codes = [w["code"] for w in warnings]
        ok = ok and codes == ([case["expected_warning"]] if case["expected_warning"] else [])
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {case['name']}: admitted {admitted}, ids {ids}, warnings {codes}")
    print(f"store (aihub, upstream-transcribed): {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    sys.exit(main())
