#!/usr/bin/env python3
"""An in-memory run-event store speaking histsim's SUT protocol (docs/sut-protocol.md): one JSON
request a line on stdin, one JSON answer a line on stdout, in order. Standard library only.

Everything lives in memory, so `open` declares durability `none` (histsim then never crashes it).
The rules histsim checks: every read is ascending by seq; `before`/`after` are EXCLUSIVE bounds; a
deletion of a run never lowers a thread's numbering, a deletion of the whole thread restarts it
and fences the runs it removed: a later write of one of them on the thread is refused.
"""
import json
import sys

SEQ_MAX = 2**63 - 1  # the largest seq a SQL store can hold; every backend accepts the same writes
OPS = ["hello", "open", "close", "put_batch", "insert_numbered", "max_seq", "list_messages",
       "count_messages", "list_events", "dump", "delete_by_run", "put_if_absent",
       "list_messages_by_run", "list_events_filtered", "get_last_visible_ai_seq_by_run",
       "list_messages_as", "count_messages_as", "delete_by_thread", "count_events",
       "thread_fence"]  # a capability, not an op: thread deletions fence their writers


class Refused(Exception):
    """An `err` answer: Refused(kind, message), kind invalid, conflict, thread_deleted,
    unsupported or internal."""


class Thread:
    def __init__(self):  # one conversation thread's rows
        self.rows = []     # stored events (dicts with a seq), ascending by seq
        self.max_seq = 0   # the high-water mark: deleting a run does not lower it


class Store:
    def __init__(self):
        self.threads = {}  # thread_id -> Thread
        self.fenced = set()  # (thread_id, run_id) a thread deletion removed: never written again

    def admit(self, events):
        """Refuse a write carrying a run its thread's deletion removed; nothing is written."""
        for e in events:
            if (e["thread_id"], e["run_id"]) in self.fenced:
                raise Refused("thread_deleted", f"thread deleted: thread `{e['thread_id']}` "
                              f"was deleted with run `{e['run_id']}`")

    def put_batch(self, events):
        """Number each event above its thread's maximum, in batch order; all or nothing."""
        room = {}
        self.admit(events)
        for e in events:
            validate(e)
            room[e["thread_id"]] = room.get(e["thread_id"], 0) + 1
        for tid, n in room.items():
            if self.max_seq(tid) + n > SEQ_MAX:
                raise Refused("invalid", f"thread `{tid}` has no room for {n} more events")
        seqs = []
        for e in events:
            seq = self.max_seq(e["thread_id"]) + 1
            self.append(dict(e, seq=seq))
            seqs.append(seq)
        return seqs

    def insert_numbered(self, events):
        """Caller-numbered rows: each seq above its thread's maximum, else nothing is written."""
        top = {}
        self.admit(events)
        for e in events:
            if not 1 <= e["seq"] <= SEQ_MAX:
                raise Refused("invalid", f"seq {e['seq']} is outside 1..={SEQ_MAX}")
            validate(e)
            tid = e["thread_id"]
            top.setdefault(tid, self.max_seq(tid))
            if e["seq"] <= top[tid]:
                raise Refused("conflict", f"seq {e['seq']} of `{tid}` is not above {top[tid]}")
            top[tid] = e["seq"]
        for e in events:
            self.append(dict(e))

    def append(self, row):
        thread = self.threads.setdefault(row["thread_id"], Thread())
        thread.rows.append(row)  # seqs only grow, so the list stays sorted
        thread.max_seq = max(thread.max_seq, row["seq"])

    def put_if_absent(self, event):
        """Write unless the run already has an event of this type; answer the kept record."""
        validate(event)
        self.admit([event])
        for row in self.rows(event["thread_id"]):
            if row["run_id"] == event["run_id"] and row["event_type"] == event["event_type"]:
                return {"event": row, "created": False}
        self.put_batch([event])
        return {"event": self.threads[event["thread_id"]].rows[-1], "created": True}

    def delete_by_run(self, thread_id, run_id):
        thread = self.threads.get(thread_id, Thread())
        kept = [r for r in thread.rows if r["run_id"] != run_id]
        count, thread.rows = len(thread.rows) - len(kept), kept
        return count  # max_seq stays: later rows are numbered above every seq ever used

    def delete_by_thread(self, thread_id):
        thread = self.threads.pop(thread_id, None)  # forgotten: its numbering restarts at 1
        self.fenced.update((thread_id, r["run_id"]) for r in (thread.rows if thread else []))
        return len(thread.rows) if thread else 0

    def rows(self, thread_id):
        return self.threads.get(thread_id, Thread()).rows

    def max_seq(self, thread_id):
        return self.threads.get(thread_id, Thread()).max_seq

    def messages(self, thread_id, run_id=None, user_id=None, scoped=False):
        """Message rows, optionally of one run and (scoped) of exactly one user, or all if None."""
        return [r for r in self.rows(thread_id) if r["category"] == "message"
                and (run_id is None or r["run_id"] == run_id)
                and (not scoped or user_id is None or r["user_id"] == user_id)]

    def events_filtered(self, thread_id, run_id, event_types, task_id, after_seq, limit):
        """Conditions first, then the limit (a reader paging one task never loses its tail)."""
        return [r for r in self.rows(thread_id) if r["run_id"] == run_id
                and (event_types is None or r["event_type"] in event_types)
                and (task_id is None or meta_of(r).get("task_id") == task_id)
                and (after_seq is None or r["seq"] > after_seq)][:limit]

    def last_visible_ai_seqs(self, thread_id, run_ids):
        """Per run, the seq of its last AI answer a reader may show (not a middleware's)."""
        seqs = {}
        for r in self.messages(thread_id):
            caller = meta_of(r).get("caller")
            by_middleware = isinstance(caller, str) and caller.startswith("middleware:")
            if (r["run_id"] in run_ids and not by_middleware
                    and r["event_type"] in ("ai_message", "llm.ai.response")):
                seqs[r["run_id"]] = r["seq"]
        return seqs

    def dump(self):
        return [r for tid in sorted(self.threads) for r in self.threads[tid].rows]


def meta_of(row):
    return row["metadata"] if isinstance(row["metadata"], dict) else {}


def validate(e):
    for field in ("thread_id", "run_id", "event_type"):
        if e[field] == "":
            raise Refused("invalid", f"invalid event: {field} empty")


def page(rows, req):
    """A message page, ascending by seq; `before` and `after` are exclusive bounds. With no
    cursor, or `before` alone, the LATEST `limit` rows; with `after`, the FIRST `limit` above it."""
    limit, before, after = req["limit"], req["before"], req["after"]
    if after is not None:
        rows = [r for r in rows if r["seq"] > after and (before is None or r["seq"] < before)]
        return rows[:limit]
    if before is not None:
        rows = [r for r in rows if r["seq"] < before]
    return rows[len(rows) - min(limit, len(rows)):]


# op -> how the open store answers it: add an op by adding a line (and its name to OPS).
HANDLERS = {
    "put_batch": lambda s, q: {"seqs": s.put_batch(q["events"])},
    "insert_numbered": lambda s, q: s.insert_numbered(q["events"]) or {},  # answers {}
    "max_seq": lambda s, q: {"max_seq": s.max_seq(q["thread_id"])},
    "list_messages": lambda s, q: {"events": page(s.messages(q["thread_id"]), q)},
    "count_messages": lambda s, q: {"count": len(s.messages(q["thread_id"]))},
    "list_events": lambda s, q: {
        "events": [r for r in s.rows(q["thread_id"]) if r["run_id"] == q["run_id"]]},
    "dump": lambda s, q: {"events": s.dump()},
    "delete_by_run": lambda s, q: {"count": s.delete_by_run(q["thread_id"], q["run_id"])},
    "delete_by_thread": lambda s, q: {"count": s.delete_by_thread(q["thread_id"])},
    "put_if_absent": lambda s, q: s.put_if_absent(q["event"]),
    "list_messages_by_run": lambda s, q: {
        "events": page(s.messages(q["thread_id"], run_id=q["run_id"]), q)},
    "list_events_filtered": lambda s, q: {"events": s.events_filtered(
        q["thread_id"], q["run_id"], q["event_types"], q["task_id"], q["after_seq"], q["limit"])},
    "get_last_visible_ai_seq_by_run": lambda s, q: {
        "seqs": s.last_visible_ai_seqs(q["thread_id"], set(q["run_ids"]))},
    "list_messages_as": lambda s, q: {
        "events": page(s.messages(q["thread_id"], user_id=q["user_id"], scoped=True), q)},
    "count_messages_as": lambda s, q: {
        "count": len(s.messages(q["thread_id"], user_id=q["user_id"], scoped=True))},
    "count_events": lambda s, q: {"count": len(s.rows(q["thread_id"]))},
}


def answer(store, req):
    op = req["op"]
    if op == "hello":
        if req["protocol"] != 1:
            raise Refused("invalid", f"protocol {req['protocol']}: this store speaks 1")
        return {"system": "python-runs-store", "version": "0.1.0", "protocol": 1, "ops": OPS}
    if op == "open":  # each seed opens a fresh data directory: start empty
        store.threads, store.fenced = {}, set()
        return {"durability": "none"}  # in memory only: nothing survives a kill
    if op == "close":
        return {}
    if op not in HANDLERS:
        raise Refused("unsupported", f"unknown op `{op}`")
    return HANDLERS[op](store, req)


def main():
    store = Store()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply = {"id": req["id"], "ok": answer(store, req)}
        except Refused as e:
            kind, message = e.args
            reply = {"id": req["id"], "err": {"kind": kind, "message": message}}
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
