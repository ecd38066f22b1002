"""The published DeerFlow run-event stores (deerflow-kernel 0.1.7) behind histsim's SUT protocol v1.

One JSON request a line on stdin, one JSON response a line on stdout (docs/sut-protocol.md, "Runs
operations"). Nothing else is ever written to stdout: logging and tracebacks go to stderr.

    python adapter.py [--backend memory|jsonl|db] [--user-scope none|owner] [--pair memory,db]
                      [--mask user_id,content_flags,id_fill,put_return,put_input,events_fill,feedback]
                      [--claim thread_fence]

The stores are the published classes, imported from the installed wheel:
`MemoryRunEventStore` (deerflow/runtime/events/store/memory.py), `JsonlRunEventStore`
(jsonl.py) and `DbRunEventStore` (db.py, on SQLite through SQLAlchemy + aiosqlite, with the
engine set up by the published `deerflow.persistence.engine.init_engine`). Their methods are
coroutines; the adapter runs each one to completion on one private asyncio event loop before
it answers, so requests are handled strictly one after another.

Where the protocol asks for something the store's API does not have (`insert_numbered`,
`max_seq`, `dump`), the adapter builds it on the store's own storage; README.md says exactly how
for each backend. Every such place is marked `ADAPTER:` below.
"""

import argparse
import asyncio
import contextlib
import copy
import importlib.metadata
import importlib.util
import inspect
import json
import logging
import os
import re
import sys
import traceback
import types
import uuid
from datetime import datetime, timedelta, timezone

import journal_ops
from protocol_server import Refusal, serve

PROTOCOL = 1
SYSTEM = "deerflow-kernel"
VERSION = "0.1.7"
# `run --source head` installs the repository's own package, `deerflow-harness` (README.md,
# "The repository's HEAD"); hello then names it and its version.
HEAD_SYSTEM = "deerflow-harness"
OPS = [
    "hello",
    "open",
    "close",
    "put_batch",
    "insert_numbered",
    "max_seq",
    "list_messages",
    "count_messages",
    "list_events",
    "dump",
    # The store's wider API as 0.1.7 has it: delete_by_run and list_messages_by_run, but no
    # put_if_absent (a later release adds it), so histsim leaves its receipts out; nor
    # list_events_filtered (0.1.7's list_events has no task_id or after_seq) or
    # get_last_visible_ai_seq_by_run, so its filtered and last-answer reads are left out too.
    "delete_by_run",
    "list_messages_by_run",
    # Every 0.1.7 store has delete_by_thread (it returns the count; a thread left empty is
    # numbered from 1 again: memory and JSONL drop their counter, DB takes MAX(seq) of no row).
    # Not declared: the capability `thread_fence`. No 0.1.7 deletion fences the thread's
    # writers (nothing is recorded, and the DB store's deletions take none of the locks its
    # writers take), so histsim leaves its late writes after a deletion out, counted (R28).
    "delete_by_thread",
]
# The user-scoped message reads: in 0.1.7 only the DB store's list_messages and count_messages
# take a user_id (memory and JSONL have no user column), so hello declares them only when
# --backend db fixes the store; otherwise histsim leaves the client's user-scoped reads out.
DB_USER_SCOPED_OPS = ["list_messages_as", "count_messages_as"]
BACKENDS = ["memory", "jsonl", "db"]
# The known differences with histsim's contract (docs/reported-bugs.md, "Known differences with
# the published stores"), declared in hello (docs/sut-protocol.md, `hello`). S1 to
# S3: the DB store marks structured contents (`content_is_json`, `content_is_dict`); declared
# when the DB store may be opened and `--mask content_flags` takes the marks out of the answers
# (without the mask the marks are shown, finding F3). S4 to S6: the JSONL store refuses thread
# ids with a dot, naming a parent directory (`../`) or over 64 characters, where histsim's stores
# take any non-empty id; declared when the JSONL store may be opened, so histsim leaves the ops
# on such threads out, counted, instead of failing on the refusals.
CONTENT_MARK_DIFFERENCES = ["S1", "S2", "S3"]
THREAD_ID_DIFFERENCES = ["S4", "S5", "S6"]
# The protocol's categories (docs/sut-protocol.md): the seed era's four and the ones DeerFlow's
# journal and subagents write (0.1.7's journal.py writes `outputs` and `error`). Every 0.1.7
# store takes any string (the DB column is String(16), which each of these fits).
CATEGORIES = ["message", "trace", "lifecycle", "middleware", "outputs", "error", "context", "subagent", "workspace"]
# What the protocol's list_events means: every event of the run. The store's list_events has
# only a `limit` (default 500; the HTTP route caps it at 2000), so the adapter asks for more
# rows than any run can hold.
EVENTS_LIMIT_ALL = 2**31 - 1
# What --mask may hide: a recorded finding (user_id F2, content_flags F3), or one of the caller's
# steps that show R3 (README.md, "R3"): id_fill (F1), put_return, put_input, events_fill,
# feedback.
# journal: hello does not declare the journal ops, and histsim's own journal hears the callbacks
# (FINDINGS.md F15, F16 are then not shown).
MASKS = ["user_id", "content_flags", "id_fill", "put_return", "put_input", "events_fill", "feedback", "journal"]
# What --claim may declare in hello although no 0.1.7 store has it (never the default):
# thread_fence, so that histsim sends the late writes after a thread deletion that it otherwise
# leaves out, and the store's acceptance of them shows (R28; FINDINGS.md F14).
CLAIMS = ["thread_fence"]
JSONL_DIR = "deerflow-jsonl"
DB_FILE = "deerflow-run-events.sqlite"
# ADAPTER state, not the store's: the user_ids --mask user_id answers with for the JSONL store,
# kept beside its files so that they survive a restart of the process (README.md, "Durability").
MASKED_USERS_FILE = "deerflow-adapter-masked-users.jsonl"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# ---------------------------------------------------------------------------------------------
# Loading the published modules.
#
# SHIM (README.md, "Shims"): two package __init__ files of the wheel re-export modules that need
# the rest of DeerFlow (LangGraph, LangChain, ...): `deerflow/runtime/__init__.py` (checkpointer,
# runs, stream bridge) and `deerflow/persistence/models/__init__.py` (the run, thread and user
# repositories, which import deerflow.runtime.runs). Neither is on the store's code path. They are
# registered as bare packages pointing at the installed directories, so that the store modules
# themselves (events/store/*.py, persistence/models/run_event.py, persistence/engine.py,
# runtime/user_context.py) are imported unchanged from the wheel.
# ---------------------------------------------------------------------------------------------


def installed_system() -> dict:
    """What hello names: the pinned wheel (deerflow-kernel 0.1.7), or the package a checkout of
    the repository installs (`run --source head`: deerflow-harness, its version)."""
    try:
        return {"system": HEAD_SYSTEM, "version": importlib.metadata.version(HEAD_SYSTEM)}
    except importlib.metadata.PackageNotFoundError:
        return {"system": SYSTEM, "version": VERSION}


def _bare_package(name: str, *parts: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec("deerflow")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the deerflow package is not installed")
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(spec.submodule_search_locations[0], *parts)]
    package.__package__ = name
    sys.modules[name] = package


def load_backend(backend: str):
    """The published modules a backend needs (the DB ones only for `db`)."""
    _bare_package("deerflow.runtime", "runtime")
    if backend == "memory":
        from deerflow.runtime.events.store.memory import MemoryRunEventStore

        return MemoryRunEventStore
    if backend == "jsonl":
        from deerflow.runtime.events.store.jsonl import JsonlRunEventStore

        return JsonlRunEventStore
    import deerflow.persistence  # noqa: F401  (engine: SQLAlchemy only)

    _bare_package("deerflow.persistence.models", "persistence", "models")
    from deerflow.runtime.events.store.db import DbRunEventStore

    return DbRunEventStore


# ---------------------------------------------------------------------------------------------
# Time: histsim's created_at_ns <-> DeerFlow's ISO-8601 created_at. No clock is ever read: every
# write passes created_at, so the stores' `datetime.now(UTC)` fallbacks are never reached.
# ---------------------------------------------------------------------------------------------


def iso_of_ns(ns: int) -> str:
    """created_at_ns as DeerFlow writes created_at (`datetime.isoformat()` in UTC), exactly.

    Whole microseconds (all histsim's simulated clock produces) give exactly the format the
    journal writes, `datetime.now(UTC).isoformat()`. A sub-microsecond remainder cannot be held by
    a `datetime`: the fraction is then written with nine digits (the memory and JSONL stores keep
    the string verbatim; the DB store's `datetime.fromisoformat` drops the last three digits).
    """
    micros, nanos = divmod(ns, 1000)
    dt = EPOCH + timedelta(microseconds=micros)
    if nanos == 0:
        return dt.isoformat()
    base = dt.replace(microsecond=0).isoformat()
    head, tz = base[:-6], base[-6:]
    return f"{head}.{dt.microsecond:06d}{nanos:03d}{tz}"


_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?$")


def ns_of_iso(text) -> int:
    """A created_at the store returned, back to integer nanoseconds, exactly.

    The DB store on SQLite returns naive datetimes (SQLite keeps no zone; what was written was
    UTC), so a created_at without an offset is read as UTC.
    """
    if not isinstance(text, str):
        raise Refusal("internal", f"the store returned created_at {text!r}, not an ISO-8601 string")
    m = _ISO.match(text)
    if m is None:
        raise Refusal("internal", f"the store returned created_at {text!r}, not an ISO-8601 time")
    whole, fraction, tz = m.groups()
    dt = datetime.fromisoformat(whole + (tz if tz and tz != "Z" else "+00:00"))
    delta = dt - EPOCH
    seconds = delta.days * 86400 + delta.seconds
    frac_ns = int((fraction or "").ljust(9, "0"))
    return seconds * 1_000_000_000 + frac_ns


# ---------------------------------------------------------------------------------------------
# Events: histsim's shape <-> DeerFlow's records.
# ---------------------------------------------------------------------------------------------

NEW_EVENT_FIELDS = ["thread_id", "run_id", "user_id", "event_type", "category", "content", "metadata", "created_at_ns"]
NUMBERED_FIELDS = NEW_EVENT_FIELDS + ["seq"]


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_event(raw, numbered: bool) -> dict:
    """Checks one event of a request against the protocol's shape; `invalid` when malformed."""
    fields = NUMBERED_FIELDS if numbered else NEW_EVENT_FIELDS
    if not isinstance(raw, dict):
        raise Refusal("invalid", "an event is a JSON object")
    missing = [f for f in fields if f not in raw]
    extra = sorted(set(raw) - set(fields))
    if missing or extra:
        raise Refusal("invalid", f"event fields: missing {missing}, unknown {extra}")
    for f in ["thread_id", "run_id", "event_type"]:
        if not isinstance(raw[f], str):
            raise Refusal("invalid", f"event `{f}` must be a string")
    if raw["user_id"] is not None and not isinstance(raw["user_id"], str):
        raise Refusal("invalid", "event `user_id` must be a string or null")
    if raw["category"] not in CATEGORIES:
        raise Refusal("invalid", f"event `category` must be one of {CATEGORIES}")
    if not _is_int(raw["created_at_ns"]):
        raise Refusal("invalid", "event `created_at_ns` must be an integer")
    if numbered and (not _is_int(raw["seq"]) or raw["seq"] < 1):
        raise Refusal("invalid", "event `seq` must be a positive integer")
    return raw


def to_deerflow(event: dict, keep_user: bool) -> dict:
    """A histsim event as the keyword arguments of the store's put/put_batch.

    `user_id` is passed only to the DB store: it is the only one with the column (its put_batch
    reads `e.get("user_id", <the request's user>)`); the memory and JSONL stores' put takes no
    user_id argument at all (passing one is a TypeError), so there it is not kept.
    """
    out = {
        "thread_id": event["thread_id"],
        "run_id": event["run_id"],
        "event_type": event["event_type"],
        "category": event["category"],
        "content": event["content"],
        "metadata": event["metadata"],
        "created_at": iso_of_ns(event["created_at_ns"]),
    }
    if keep_user:
        out["user_id"] = event["user_id"]
    return out


def from_deerflow(record: dict) -> dict:
    """A record the store returned, in histsim's shape. A deep copy: the answer never shares an
    object with the store. Fields are taken as the store returned them (a missing user_id, as in
    the memory and JSONL stores, is null)."""
    try:
        out = {
            "thread_id": record["thread_id"],
            "run_id": record["run_id"],
            "user_id": record.get("user_id"),
            "event_type": record["event_type"],
            "category": record["category"],
            "content": copy.deepcopy(record.get("content")),
            "metadata": copy.deepcopy(record.get("metadata")),
            "seq": record["seq"],
            "created_at_ns": ns_of_iso(record.get("created_at")),
        }
    except KeyError as e:
        raise Refusal("internal", f"the store returned a record without {e}") from e
    extra = {k: copy.deepcopy(v) for k, v in record.items() if k not in RECORD_FIELDS}
    if extra:
        out["metadata"] = {**(out["metadata"] if isinstance(out["metadata"], dict) else {}), RECORD_EXTRA: extra}
    return out


# The top-level fields of a store record (0.1.7's memory, JSONL and DB stores all return these,
# `user_id` only the DB store). Any other key was put there by a caller writing into a record the
# store still holds (README.md, "R3": the /messages route's `feedback` key).
RECORD_FIELDS = {"thread_id", "run_id", "user_id", "event_type", "category", "content", "metadata", "seq", "created_at"}
# Where an answer shows such a key: inside `metadata`, under this name, so that the dump differs
# from what was written and histsim's R3 check names it.
RECORD_EXTRA = "_record_extra"


def fill_ids_in_place(record: dict) -> None:
    """The history view's id fill (issue 12, R3), done where the real caller does it: on the
    objects list_messages returned. A message dump (a dict) without an id gets
    uuid5(NAMESPACE_URL, "{thread_id}:{seq}") and every one gets the run's run_id. Writes into
    `record["content"]` itself, not into a copy."""
    content = record.get("content")
    if isinstance(content, dict):
        if content.get("id") is None:
            content["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{record['thread_id']}:{record['seq']}"))
        content["run_id"] = record["run_id"]


# ---------------------------------------------------------------------------------------------
# The stores.
# ---------------------------------------------------------------------------------------------


def _store_error(e: Exception, what: str) -> Refusal:
    """An exception of the published store, as the protocol's refusal."""
    traceback.print_exc(file=sys.stderr)
    name = type(e).__name__
    text = str(e).splitlines()[0] if str(e) else ""
    if name == "IntegrityError":
        return Refusal("conflict", f"{what}: {name}: {text}")
    if isinstance(e, ValueError):
        # e.g. JsonlRunEventStore._validate_id: the store refuses the event.
        return Refusal("invalid", f"{what}: {name}: {text}")
    return Refusal("internal", f"{what}: {name}: {text}")


@contextlib.contextmanager
def store_errors(what: str):
    """Runs the block with the published store's exceptions answered as refusals (`_store_error`);
    a refusal the block raises itself passes unchanged."""
    try:
        yield
    except Refusal:
        raise
    except Exception as e:
        raise _store_error(e, what) from e


class MaskedUsers:
    """MASK user_id only: the user_id each written event carried, by (thread_id, seq), for the
    stores that keep none (memory, JSONL: finding F2). With a `path` (the JSONL store), every
    change is also appended to that file and the file closed before the adapter answers, as the
    JSONL store writes its own lines, so a process killed after an answer leaves it complete and
    a new process on the same data_dir reads it back (README.md, "Durability"). Lines:
    {"thread_id", "seq", "user_id"} (a later line for the same seq wins: a seq handed out again)
    and {"thread_id", "forget": true} (delete_by_thread)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.users: dict = {}
        if path is not None and os.path.exists(path):
            self._load(path)

    def _load(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for number, line in enumerate(lines, 1):
            if not line:
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as e:
                # Only the last line can be cut short (a process killed inside a write, before
                # it answered: nothing acknowledged is lost); anything else is a broken file.
                if number == len(lines):
                    break
                raise Refusal("internal", f"{path}: line {number}: {e}") from e
            if entry.get("forget"):
                self._forget(entry["thread_id"])
            else:
                self.users[(entry["thread_id"], entry["seq"])] = entry["user_id"]

    def _append(self, entries: list) -> None:
        if self.path is None or not entries:
            return
        with open(self.path, "a", encoding="utf-8") as f:
            f.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))

    def record(self, written: list) -> None:
        """written: (thread_id, seq, user_id) of every event the store just stored."""
        for thread_id, seq, user_id in written:
            self.users[(thread_id, seq)] = user_id
        self._append([{"thread_id": t, "seq": s, "user_id": u} for t, s, u in written])

    def _forget(self, thread_id: str) -> None:
        for key in [k for k in self.users if k[0] == thread_id]:
            del self.users[key]

    def forget_thread(self, thread_id: str) -> None:
        self._forget(thread_id)
        self._append([{"thread_id": thread_id, "forget": True}])

    def get(self, thread_id: str, seq: int):
        return self.users.get((thread_id, seq))


class Backend:
    """One opened published store, and the adapter's additions on its storage."""

    def __init__(self, kind: str, data_dir: str, loop: asyncio.AbstractEventLoop, user_scope: str, mask: set) -> None:
        self.kind = kind
        self.loop = loop
        self.user_scope = user_scope
        self.mask = mask
        # MASK user_id only (memory, JSONL); kept in a file beside the JSONL store's.
        users_file = os.path.join(data_dir, MASKED_USERS_FILE) if kind == "jsonl" and "user_id" in mask else None
        self.written_users = MaskedUsers(users_file)
        cls = load_backend(kind)
        if kind == "memory":
            self.store = cls()
        elif kind == "jsonl":
            self.store = cls(base_dir=os.path.join(data_dir, JSONL_DIR))
        else:
            from deerflow.persistence.engine import get_session_factory, init_engine

            url = "sqlite+aiosqlite:///" + os.path.join(os.path.abspath(data_dir), DB_FILE)
            self.run(init_engine("sqlite", url=url, sqlite_dir=os.path.abspath(data_dir)))
            self.store = cls(get_session_factory())

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def durability(self) -> str:
        """What `open` declares this store keeps when the process is killed (SIGKILL, no close)
        and a new one opens the same data_dir (README.md, "Durability"). JSONL: every put
        appends its lines and closes the file before it returns, and a new store reloads the
        seq counters from the files. DB: every put_batch commits before it returns (WAL); the
        engine's synchronous=NORMAL may lose commits to a power cut, not to a killed process.
        Memory: nothing survives. The masked user_ids (--mask user_id, JSONL) are appended to
        MASKED_USERS_FILE and the file closed before the answer, so they survive as the store's
        lines do."""
        if self.kind == "memory":
            return "none"
        return "restart"

    def close(self) -> None:
        if self.kind == "db":
            from deerflow.persistence.engine import close_engine

            self.run(close_engine())

    # -- reads of the DB store: which user ---------------------------------------------------

    def _user_kwargs(self, thread_id: str) -> dict:
        """The DB store's reads take user_id (AUTO: the request's user from a contextvar, which
        raises without one; a string: that user; None: no filter). --user-scope none passes
        None; --user-scope owner passes the thread's owner (README.md)."""
        if self.kind != "db":
            return {}
        if self.user_scope == "none":
            return {"user_id": None}
        return {"user_id": self.run(self._thread_owner(thread_id))}

    async def _thread_owner(self, thread_id: str):
        # ADAPTER: the thread's owner, as the gateway's owner check knows it, is the user of the
        # thread's first stored row that has one; a thread without one has no owner (None: no
        # filter, as for a migration path).
        from deerflow.persistence.models.run_event import RunEventRow
        from sqlalchemy import select

        stmt = (
            select(RunEventRow.user_id)
            .where(RunEventRow.thread_id == thread_id, RunEventRow.user_id.is_not(None))
            .order_by(RunEventRow.seq.asc(), RunEventRow.id.asc())
            .limit(1)
        )
        async with self.store._sf() as session:
            return await session.scalar(stmt)

    # -- the store's own API -----------------------------------------------------------------

    def put_batch(self, events: list) -> list:
        batch = [to_deerflow(e, keep_user=self.kind == "db") for e in events]
        with store_errors("put_batch"):
            records = self.run(self.store.put_batch(batch))
        if len(records) != len(batch):
            raise Refusal("internal", f"put_batch returned {len(records)} records for {len(batch)} events")
        if "user_id" in self.mask and self.kind != "db":
            self.written_users.record([(e["thread_id"], r["seq"], e["user_id"]) for e, r in zip(events, records)])
        seqs = [r["seq"] for r in records]
        # ADAPTER (R3, README.md): the caller's steps after a write. It keeps what put_batch
        # returned as its own (the view's id fill on the returned records), and it goes on using
        # the dicts it passed in (the same fill on its own input, numbered as the store answered).
        if "put_return" not in self.mask:
            for r in records:
                fill_ids_in_place(r)
        if "put_input" not in self.mask:
            for e, seq in zip(batch, seqs):
                fill_ids_in_place({**e, "seq": seq})
        return seqs

    def answer_of(self, record: dict) -> dict:
        """A store record as the answer shows it: from_deerflow, then the masks asked for (never
        by default; README.md, "Masks")."""
        out = from_deerflow(record)
        if "user_id" in self.mask and self.kind != "db":
            out["user_id"] = self.written_users.get(out["thread_id"], out["seq"])
        if "content_flags" in self.mask and self.kind == "db" and isinstance(out["metadata"], dict):
            for key in ("content_is_json", "content_is_dict"):
                out["metadata"].pop(key, None)
        return out

    def list_messages(self, thread_id: str, limit: int, before, after) -> list:
        kwargs = self._user_kwargs(thread_id)
        with store_errors("list_messages"):
            records = self.run(self.store.list_messages(thread_id, limit=limit, before_seq=before, after_seq=after, **kwargs))
        answer = [self.answer_of(r) for r in records]
        # ADAPTER (R3, README.md): the caller's step, on the very objects the store returned.
        if "id_fill" not in self.mask:
            for r in records:
                fill_ids_in_place(r)
        # ... and the gateway's /threads/{id}/messages step in 0.1.7: `msg["feedback"] = ...` on
        # every returned record (None: no rating; the protocol's ratings are not the store's).
        if "feedback" not in self.mask:
            for r in records:
                r["feedback"] = None
        return answer

    def list_messages_as(self, thread_id: str, limit: int, before, after, user_id) -> list:
        """The DB store's list_messages with an explicit user_id (a string: that user's rows;
        None: its documented "no filter"). No caller's step: the R3 step belongs to the view."""
        with store_errors("list_messages_as"):
            records = self.run(
                self.store.list_messages(thread_id, limit=limit, before_seq=before, after_seq=after, user_id=user_id)
            )
        return [self.answer_of(r) for r in records]

    def count_messages_as(self, thread_id: str, user_id) -> int:
        with store_errors("count_messages_as"):
            return self.run(self.store.count_messages(thread_id, user_id=user_id))

    def count_messages(self, thread_id: str) -> int:
        kwargs = self._user_kwargs(thread_id)
        with store_errors("count_messages"):
            return self.run(self.store.count_messages(thread_id, **kwargs))

    def list_events(self, thread_id: str, run_id: str) -> list:
        kwargs = self._user_kwargs(thread_id)
        with store_errors("list_events"):
            records = self.run(self.store.list_events(thread_id, run_id, limit=EVENTS_LIMIT_ALL, **kwargs))
        answer = [self.answer_of(r) for r in records]
        # ADAPTER (R3, README.md): the events route's caller fills ids on the rows it got.
        if "events_fill" not in self.mask:
            for r in records:
                fill_ids_in_place(r)
        return answer

    def delete_by_run(self, thread_id: str, run_id: str) -> int:
        # Every user's rows, as the protocol asks: the DB store's default (AUTO) would need a
        # request user in its context variable; None is its documented "no filter".
        kwargs = {"user_id": None} if self.kind == "db" else {}
        with store_errors("delete_by_run"):
            return self.run(self.store.delete_by_run(thread_id, run_id, **kwargs))

    def delete_by_thread(self, thread_id: str) -> int:
        # Every user's rows, as the protocol asks (DB: user_id=None, as for delete_by_run).
        kwargs = {"user_id": None} if self.kind == "db" else {}
        with store_errors("delete_by_thread"):
            count = self.run(self.store.delete_by_thread(thread_id, **kwargs))
        # The user_ids kept for the masked stores: the thread's rows are gone, and its seqs
        # will be handed out again.
        if "user_id" in self.mask and self.kind != "db":
            self.written_users.forget_thread(thread_id)
        return count

    def list_messages_by_run(self, thread_id: str, run_id: str, limit: int, before, after) -> list:
        kwargs = self._user_kwargs(thread_id)
        with store_errors("list_messages_by_run"):
            records = self.run(
                self.store.list_messages_by_run(thread_id, run_id, limit=limit, before_seq=before, after_seq=after, **kwargs)
            )
        return [self.answer_of(r) for r in records]

    # -- ADAPTER: what the store's API lacks -------------------------------------------------

    def _ensure_seq_loaded(self, thread_id: str) -> None:
        """The JSONL store's counter load: a plain method in 0.1.7, a coroutine in the
        repository's HEAD (which reads the files on a worker thread)."""
        loaded = self.store._ensure_seq_loaded(thread_id)
        if inspect.isawaitable(loaded):
            self.run(loaded)

    def max_seq(self, thread_id: str) -> int:
        """The number the store's next put on the thread would be one above."""
        with store_errors("max_seq"):
            if self.kind == "memory":
                return self.store._seq_counters.get(thread_id, 0)
            if self.kind == "jsonl":
                self._ensure_seq_loaded(thread_id)
                return self.store._seq_counters[thread_id]
            return self.run(self._db_max_seq(thread_id))

    async def _db_max_seq(self, thread_id: str) -> int:
        async with self.store._sf() as session:
            async with session.begin():
                return (await self.store._max_seq_for_thread(session, thread_id)) or 0

    def insert_numbered(self, events: list) -> None:
        # The guard: every seq above its thread's stored maximum and above the batch's earlier
        # events of that thread; else conflict and nothing is written.
        top: dict = {}
        for e in events:
            t = e["thread_id"]
            if t not in top:
                top[t] = self.max_seq(t)
            if e["seq"] <= top[t]:
                raise Refusal("conflict", f"insert_numbered: thread {t}: seq {e['seq']} is not above {top[t]}")
            top[t] = e["seq"]
        with store_errors("insert_numbered"):
            if self.kind == "db":
                self.run(self._db_insert_numbered(events))
                return
            for e in events:
                # The store's put numbers an event one above its per-thread counter: set the
                # counter to seq - 1, then the published put builds and keeps the record.
                if self.kind == "jsonl":
                    self._ensure_seq_loaded(e["thread_id"])
                self.store._seq_counters[e["thread_id"]] = e["seq"] - 1
                record = self.run(self.store.put(**to_deerflow(e, keep_user=False)))
                if record["seq"] != e["seq"]:
                    raise Refusal("internal", f"insert_numbered: the store numbered {record['seq']}, not {e['seq']}")
                if "user_id" in self.mask:
                    self.written_users.record([(e["thread_id"], e["seq"], e["user_id"])])

    async def _db_insert_numbered(self, events: list) -> None:
        # Rows built as DbRunEventStore.put_batch builds them (its own _truncate_trace and
        # _content_to_db), with the caller's seq, in one transaction (UNIQUE(thread_id, seq)
        # still guards: a duplicate is an IntegrityError -> conflict).
        from deerflow.persistence.models.run_event import RunEventRow

        async with self.store._sf() as session:
            async with session.begin():
                for e in events:
                    content, metadata = self.store._truncate_trace(e["category"], e["content"], e["metadata"])
                    db_content, metadata = self.store._content_to_db(content, metadata)
                    session.add(
                        RunEventRow(
                            thread_id=e["thread_id"],
                            run_id=e["run_id"],
                            user_id=e["user_id"],
                            event_type=e["event_type"],
                            category=e["category"],
                            content=db_content,
                            event_metadata=metadata,
                            seq=e["seq"],
                            created_at=datetime.fromisoformat(iso_of_ns(e["created_at_ns"])),
                        )
                    )

    def dump(self) -> list:
        """Every stored row by (thread_id, seq, write order), read from the store's storage."""
        with store_errors("dump"):
            if self.kind == "memory":
                rows = []
                for t in sorted(self.store._events):
                    rows.extend(sorted(self.store._events[t], key=lambda r: r["seq"]))
                return [self.answer_of(r) for r in rows]
            if self.kind == "jsonl":
                threads_dir = os.path.join(str(self.store._base_dir), "threads")
                rows = []
                if os.path.isdir(threads_dir):
                    for t in sorted(os.listdir(threads_dir)):
                        rows.extend(self.store._read_thread_events(t))
                return [self.answer_of(r) for r in rows]
            return [self.answer_of(r) for r in self.run(self._db_dump())]

    async def _db_dump(self) -> list:
        from deerflow.persistence.models.run_event import RunEventRow
        from sqlalchemy import select

        stmt = select(RunEventRow).order_by(RunEventRow.thread_id.asc(), RunEventRow.seq.asc(), RunEventRow.id.asc())
        async with self.store._sf() as session:
            result = await session.execute(stmt)
            return [self.store._row_to_dict(r) for r in result.scalars()]


# ---------------------------------------------------------------------------------------------
# The protocol.
# ---------------------------------------------------------------------------------------------

REQUEST_FIELDS = {
    "hello": ["protocol"],
    "open": ["data_dir", "options"],
    "close": [],
    "put_batch": ["events"],
    "insert_numbered": ["events"],
    "max_seq": ["thread_id"],
    "list_messages": ["thread_id", "limit", "before", "after"],
    "count_messages": ["thread_id"],
    "list_events": ["thread_id", "run_id"],
    "dump": [],
    "delete_by_run": ["thread_id", "run_id"],
    "list_messages_by_run": ["thread_id", "run_id", "limit", "before", "after"],
    "delete_by_thread": ["thread_id"],
    "list_messages_as": ["thread_id", "limit", "before", "after", "user_id"],
    "count_messages_as": ["thread_id", "user_id"],
    **journal_ops.JOURNAL_FIELDS,
}


def _string(request: dict, field: str) -> str:
    v = request[field]
    if not isinstance(v, str):
        raise Refusal("invalid", f"`{field}` must be a string")
    return v


def _cursor(request: dict, field: str):
    v = request[field]
    if v is not None and (not _is_int(v) or v < 0):
        raise Refusal("invalid", f"`{field}` must be a non-negative integer or null")
    return v


class Server:
    def __init__(self, backend: str | None, user_scope: str, mask: set, pair: dict, claims: set = frozenset()) -> None:
        self.backend_override = backend
        # Capabilities claimed with --claim though the stores lack them (CLAIMS), so that histsim
        # sends the calls that show it.
        self.claims = claims
        self.pair = pair
        self.user_scope = user_scope
        self.mask = mask
        self.loop = asyncio.new_event_loop()
        self.open_backend: Backend | None = None
        # The published run journals of the session (journal_ops.py), one a run; a new session
        # (`open`) starts without any.
        self.journals = None

    def answer(self, request: dict):
        op = request.get("op")
        if not isinstance(op, str) or op not in REQUEST_FIELDS:
            raise Refusal("unsupported", f"op {json.dumps(op)} is not implemented by the deerflow adapter")
        want = set(REQUEST_FIELDS[op]) | {"id", "op"}
        missing = sorted(want - set(request))
        extra = sorted(set(request) - want)
        if missing or extra:
            raise Refusal("invalid", f"{op}: missing fields {missing}, unknown fields {extra}")
        return getattr(self, "op_" + op)(request)

    def op_hello(self, request: dict) -> dict:
        if request["protocol"] != PROTOCOL:
            raise Refusal("invalid", f"protocol {json.dumps(request['protocol'])}: this system speaks {PROTOCOL}")
        greeting = {**installed_system(), "protocol": PROTOCOL, "ops": self.ops()}
        differences = self.differences()
        if differences:
            greeting["differences"] = differences
        return greeting

    def differences(self) -> list:
        """What hello declares of S1 to S6: each difference of a store this process may open."""
        may_open = {self.backend_override} if self.backend_override else set(self.pair.values())
        declared = []
        if "db" in may_open and "content_flags" in self.mask:
            declared += CONTENT_MARK_DIFFERENCES
        if "jsonl" in may_open:
            declared += THREAD_ID_DIFFERENCES
        return declared

    def ops(self) -> list:
        """What hello declares: OPS, and the user-scoped reads when the store is the DB one."""
        return (
            OPS
            + (DB_USER_SCOPED_OPS if self.backend_override == "db" else [])
            + (journal_ops.JOURNAL_OPS if self.hosts_journal() else [])
            + [c for c in CLAIMS if c in self.claims]
        )

    def hosts_journal(self) -> bool:
        """The published RunJournal hears the journal ops: its imports are installed (README.md,
        "The run journal") and --mask journal does not leave it out."""
        return "journal" not in self.mask and journal_ops.journal_available()

    def _journal_op(self, request: dict) -> dict:
        op = request["op"]
        if not self.hosts_journal():
            raise Refusal("unsupported", f"{op}: the journal is not hosted (--mask journal, or no LangChain installed)")
        if self.journals is None:
            _bare_package("deerflow.runtime", "runtime")
            self.journals = journal_ops.Journals(Refusal)
        return self.journals.answer(op, request)

    op_journal_chain_start = op_journal_model_start = _journal_op
    op_journal_chain_end = op_journal_chain_error = _journal_op

    def op_open(self, request: dict) -> dict:
        data_dir, options = request["data_dir"], request["options"]
        if not isinstance(data_dir, str) or not isinstance(options, dict):
            raise Refusal("invalid", "open: data_dir must be a string and options an object")
        # `planted` selects histsim's own legacy behaviours: this system has none (ignored).
        if self.backend_override is not None:
            kind = self.backend_override
        else:
            store = options.get("store")
            if store not in self.pair:
                raise Refusal("invalid", f"open: store {json.dumps(store)}: expected memory or sqlite")
            kind = self.pair[store]
        self.op_close({})
        with store_errors("open"):
            os.makedirs(data_dir, exist_ok=True)
            self.open_backend = Backend(kind, data_dir, self.loop, self.user_scope, self.mask)
        return {"durability": self.open_backend.durability()}

    def op_close(self, request: dict) -> dict:
        self.journals = None
        if self.open_backend is not None:
            backend, self.open_backend = self.open_backend, None
            backend.close()
        return {}

    def _b(self) -> Backend:
        if self.open_backend is None:
            raise Refusal("conflict", "not open: send `open` first")
        return self.open_backend

    def _events(self, request: dict, numbered: bool) -> list:
        events = request["events"]
        if not isinstance(events, list):
            raise Refusal("invalid", "`events` must be an array")
        return [parse_event(e, numbered) for e in events]

    def op_put_batch(self, request: dict) -> dict:
        events = self._events(request, numbered=False)
        return {"seqs": self._b().put_batch(events)}

    def op_insert_numbered(self, request: dict) -> dict:
        events = self._events(request, numbered=True)
        self._b().insert_numbered(events)
        return {}

    def op_max_seq(self, request: dict) -> dict:
        return {"max_seq": self._b().max_seq(_string(request, "thread_id"))}

    def op_list_messages(self, request: dict) -> dict:
        thread_id = _string(request, "thread_id")
        limit = request["limit"]
        if not _is_int(limit) or limit < 0:
            raise Refusal("invalid", "`limit` must be a non-negative integer")
        before, after = _cursor(request, "before"), _cursor(request, "after")
        return {"events": self._b().list_messages(thread_id, limit, before, after)}

    def op_count_messages(self, request: dict) -> dict:
        return {"count": self._b().count_messages(_string(request, "thread_id"))}

    def op_list_events(self, request: dict) -> dict:
        b = self._b()
        return {"events": b.list_events(_string(request, "thread_id"), _string(request, "run_id"))}

    def op_dump(self, request: dict) -> dict:
        return {"events": self._b().dump()}

    def op_delete_by_run(self, request: dict) -> dict:
        b = self._b()
        return {"count": b.delete_by_run(_string(request, "thread_id"), _string(request, "run_id"))}

    def op_delete_by_thread(self, request: dict) -> dict:
        return {"count": self._b().delete_by_thread(_string(request, "thread_id"))}

    def op_list_messages_by_run(self, request: dict) -> dict:
        thread_id, run_id = _string(request, "thread_id"), _string(request, "run_id")
        limit = request["limit"]
        if not _is_int(limit) or limit < 0:
            raise Refusal("invalid", "`limit` must be a non-negative integer")
        before, after = _cursor(request, "before"), _cursor(request, "after")
        return {"events": self._b().list_messages_by_run(thread_id, run_id, limit, before, after)}

    def _scoped_backend(self, request: dict) -> Backend:
        """The open backend for a user-scoped read, which only the DB store of 0.1.7 has."""
        if request["op"] not in self.ops():
            raise Refusal("unsupported", f"{request['op']}: 0.1.7's memory and JSONL stores take no user_id")
        user_id = request["user_id"]
        if user_id is not None and not isinstance(user_id, str):
            raise Refusal("invalid", "`user_id` must be a string or null")
        return self._b()

    def op_list_messages_as(self, request: dict) -> dict:
        b = self._scoped_backend(request)
        thread_id = _string(request, "thread_id")
        limit = request["limit"]
        if not _is_int(limit) or limit < 0:
            raise Refusal("invalid", "`limit` must be a non-negative integer")
        before, after = _cursor(request, "before"), _cursor(request, "after")
        return {"events": b.list_messages_as(thread_id, limit, before, after, request["user_id"])}

    def op_count_messages_as(self, request: dict) -> dict:
        b = self._scoped_backend(request)
        return {"count": b.count_messages_as(_string(request, "thread_id"), request["user_id"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=BACKENDS, default=None)
    parser.add_argument("--user-scope", choices=["none", "owner"], default="none")
    parser.add_argument(
        "--pair",
        default="memory,db",
        help="without --backend: the backends open's store memory and sqlite select (default memory,db)",
    )
    parser.add_argument(
        "--mask",
        default="",
        help="comma-separated recorded findings or caller steps to mask: " + ", ".join(MASKS) + " (README.md)",
    )
    parser.add_argument(
        "--claim",
        default="",
        help="comma-separated capabilities to declare although the stores lack them: " + ", ".join(CLAIMS) + " (README.md)",
    )
    args = parser.parse_args()
    claims = {c for c in args.claim.split(",") if c}
    if claims - set(CLAIMS):
        parser.error(f"--claim: unknown {sorted(claims - set(CLAIMS))}")
    mask = {m for m in args.mask.split(",") if m}
    unknown = sorted(mask - set(MASKS))
    if unknown:
        parser.error(f"--mask: unknown {unknown}")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    pair = args.pair.split(",")
    if len(pair) != 2 or any(b not in BACKENDS for b in pair):
        parser.error(f"--pair: two of {BACKENDS}, comma-separated")
    pair = {"memory": pair[0], "sqlite": pair[1]}
    serve(Server(args.backend, args.user_scope, mask, pair, claims), sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
