"""The published aihub (swiss-ai-hub 0.323.4) history projector behind histsim's SUT protocol v1.

One JSON request a line on stdin, one JSON response a line on stdout (docs/sut-protocol.md).
Nothing else is ever written to stdout: logging goes to stderr, and the real projector's warnings
are captured and answered as protocol warnings.

The projector, the persisted entity (`PersistedAgentEventEntity`, a mongoengine Document), the
topic constants and the `Message` model are the published ones; `aihub_shims` replaces only the
two modules that cannot be imported on Python 3.11 (README.md lists them and why). The store
behind `append` and `reconstruct` mirrors the real MongoDB-backed one (`AgentEventStore` below
says how, and where it differs).
"""

import json
import logging
import os
import struct
import sys
import traceback
from typing import Any

import aihub_shims
from protocol_server import Refusal, serve

aihub_shims.install()

import bson  # noqa: E402  (pymongo's BSON codec, what the real service writes with)
from bson import ObjectId  # noqa: E402
from mongoengine.errors import FieldDoesNotExist, ValidationError as MongoValidationError  # noqa: E402
from swiss_ai_hub.api.routes.thread import conversation_history_projector as projector_module  # noqa: E402
from swiss_ai_hub.core.persistence.messaging.entities import persisted_agent_event_entity as entity_module  # noqa: E402
from swiss_ai_hub.core.persistence.messaging.entities.persisted_agent_event_entity import (  # noqa: E402
    PersistedAgentEventEntity,
)
from swiss_ai_hub.core.topic_managers.agents.agent_topic_manager import AgentTopicManager  # noqa: E402

PROTOCOL = 1
SYSTEM = "aihub"
VERSION = "0.323.4"
OPS = ["hello", "open", "close", "append", "reconstruct", "project"]
# The known differences of docs/display-projection.md this system has, declared in `hello` so
# that histsim's model expects this projector's documented behaviour there (and says so):
# D1: a block of a class the projector does not convert (e.g. `video`) is dropped without a
# warning; D2: so is an image block without a url; D3: a primary stop without `output_messages`
# is read as an empty answer, without a warning.
DIFFERENCES = ["D1", "D2", "D3"]

# The entity's ten declared fields: what the real persister (`PersistedAgentEventEntity.persist_event`)
# writes, and all a read loads.
ENTITY_FIELDS = [
    "agent_class",
    "agent_id",
    "thread_id",
    "display_id",
    "run_id",
    "event_id",
    "event_type",
    "event_name",
    "event_data",
    "event_parents",
]
# The store's two stage query, as `PersistedAgentEventEntity.conversation_events_for_thread` writes it.
VISIBLE_MARKER_PARENTS = {"UserMessageEvent", "HumanInTheLoopResponseEvent"}
PROJECTABLE_PARENTS = {
    "UserMessageEvent",
    "HumanInTheLoopResponseEvent",
    "ChunkEvent",
    "HumanInTheLoopRequestEvent",
    "StopEvent",
}
STORE_FILE = "aihub-agent-events.bson"


# ---------------------------------------------------------------------------------------------
# Warnings: the real projector logs them; the adapter turns each log record into a protocol
# warning (code, event_id, display_id, field, text), built from ids and field names only.
# ---------------------------------------------------------------------------------------------

# The payload field each family's branch of the projector reads.
FAMILY_FIELD = [
    ("UserMessageEvent", "messages"),
    ("HumanInTheLoopResponseEvent", "response"),
    ("ChunkEvent", "content"),
    ("HumanInTheLoopRequestEvent", "question"),
    ("StopEvent", "output_messages"),
]


def warning_text(code: str, event_id: str | None, display_id: str | None, field: str | None) -> str:
    text = code
    if event_id is not None:
        text += f": event {json.dumps(event_id)}"
    if display_id is not None:
        text += f" on display {json.dumps(display_id)}"
    if field is not None:
        text += f": field `{field}`"
    text += {
        "bad_identity": " is missing, not a string, or empty; row skipped (aihub)",
        "bad_created_at": " is not an integer; row skipped (aihub)",
        "bad_payload": " is missing or malformed; row skipped (aihub)",
        "bad_media": " has an unsupported format; block dropped (aihub)",
        "no_visible_display": ": no visible display; history is empty (aihub)",
    }[code]
    return text


def make_warning(code: str, event_id: Any = None, display_id: Any = None, field: str | None = None) -> dict:
    event_id = event_id if isinstance(event_id, str) and event_id else None
    display_id = display_id if isinstance(display_id, str) and display_id else None
    return {
        "code": code,
        "event_id": event_id,
        "display_id": display_id,
        "field": field,
        "text": warning_text(code, event_id, display_id, field),
    }


def _frame_local(func_name: str, local: str) -> tuple[bool, Any]:
    """The value of `local` in the innermost live frame of the projector function `func_name`."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == func_name and frame.f_globals.get("__name__") == projector_module.__name__:
            return True, frame.f_locals.get(local)
        frame = frame.f_back
    return False, None


class WarningCapture(logging.Handler):
    """Collects the real projector's and the real repository's warnings while one request runs.

    The projector logs every skip with the same message, "Skipping malformed visible history
    event", and an `error_type`; which check failed is told by where it was logged from: inside
    `_ordered_unique_events` the identity key (ValueError, "Missing <field>") or `created_at`
    (TypeError) failed; inside the projection loop the family's payload did. The exception object
    is read from that frame only to name the identity field (its message is "Missing <field>",
    never a payload value); payload values are never read.
    """

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.warnings: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        event_id = getattr(record, "event_id", None)
        display_id = getattr(record, "display_id", None)
        if message == "Skipping malformed visible history event":
            in_dedup, error = _frame_local("_ordered_unique_events", "error")
            if in_dedup:
                if isinstance(error, ValueError) and str(error).startswith("Missing "):
                    field = str(error)[len("Missing ") :]
                    self.warnings.append(make_warning("bad_identity", event_id, display_id, field))
                else:
                    self.warnings.append(make_warning("bad_created_at", event_id, display_id, "created_at"))
                return
            found, event = _frame_local("project", "event")
            field = None
            if found and event is not None:
                parents = projector_module.ConversationHistoryProjector._parent_names(event)
                field = next((f for family, f in FAMILY_FIELD if family in parents), None)
            self.warnings.append(make_warning("bad_payload", event_id, display_id, field))
        elif message == "Skipping visible history audio block with unsupported format":
            self.warnings.append(make_warning("bad_media", event_id, display_id, "format"))
        elif message == "No client-visible display marker found for thread history":
            self.warnings.append(make_warning("no_visible_display"))
        else:
            # A warning this adapter does not know: keep it visible on stderr, never on stdout.
            print(f"aihub adapter: unmapped warning from {record.name}: {message}", file=sys.stderr)


def capture_warnings(run):
    handler = WarningCapture()
    loggers = [logging.getLogger(projector_module.__name__), logging.getLogger(entity_module.__name__)]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.WARNING)
        lg.propagate = False
    try:
        result = run()
    finally:
        for lg, (level, propagate) in zip(loggers, saved):
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
    return result, handler.warnings


def run_projector(entities: list, primary: dict | None) -> list:
    primary_class = primary["agent_class"] if primary else None
    primary_id = primary["agent_id"] if primary else None
    return projector_module.ConversationHistoryProjector.project(
        entities,
        primary_agent_class=primary_class,
        primary_agent_id=primary_id,
    )


def to_json_messages(messages: list) -> list:
    """The projector returns OpenAI `ChatCompletion*MessageParam` TypedDicts, i.e. plain dicts
    already in the protocol's shape ({"role", "content": [parts]}); only the containers are made
    plain JSON values. No field is renamed, added or dropped."""
    return json.loads(json.dumps(messages, allow_nan=False))


# ---------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------


def parse_row(row: Any) -> dict | None:
    """A row's bytes as a document, or None when they cannot be a MongoDB document (not JSON, or
    JSON that is not an object)."""
    if not isinstance(row, str):
        raise Refusal("invalid", "every row must be a JSON string holding the row's bytes")
    try:
        value = json.loads(row)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def load_entity(document: dict) -> PersistedAgentEventEntity:
    """A stored document as the real read path loads it: mongoengine's `_from_son`, which is what
    `cls.objects(...)` does for every document a query returns (no validation on read)."""
    return PersistedAgentEventEntity._from_son(document)


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------


def _bson_sort_key(value: Any, missing: bool = False) -> tuple:
    """MongoDB's ascending sort order for a field value (BSON comparison order): missing and
    null < numbers < strings < objects < arrays < booleans. Numbers compare by value across
    int/float (NaN lowest), strings by their UTF-8 bytes (simple binary comparison), objects
    field by field, an array by its smallest element (an empty array before null)."""
    if missing or value is None:
        return (1,)
    if isinstance(value, bool):
        return (8, value)
    if isinstance(value, (int, float)):
        if value != value:  # NaN
            return (2, 0, 0)
        return (2, 1, value)
    if isinstance(value, str):
        return (3, value.encode("utf-8", "surrogatepass"))
    if isinstance(value, dict):
        return (4, tuple((k.encode("utf-8", "surrogatepass"), _bson_sort_key(v)) for k, v in value.items()))
    if isinstance(value, list):
        if not value:
            return (0,)
        return min(_bson_sort_key(v) for v in value)
    if isinstance(value, ObjectId):
        return (7, value.binary)
    return (9, repr(value))


class AgentEventStore:
    """The `agent_events` collection as the real service uses it, kept in one file.

    Writes (the persister, `PersistedAgentEventEntity.persist_event` then `save()`):
    - every delivery is a new document with a fresh `_id`; nothing is de-duplicated on write
      (duplicates are removed by the projector, by its delivery key);
    - `save()` runs mongoengine's validation first: the ten fields are required, the eight string
      fields must be strings (an empty string passes), `event_data` a non-empty dict whose keys do
      not start with "$", `event_parents` a non-empty list of strings. A row that fails it is
      never written; the adapter answers it `quarantined`. The document must also encode as BSON
      (e.g. an integer beyond 64 bits does not): else `quarantined` as well.
    - what is written is the entity's `to_mongo()`: the ten fields only.
    Reads (`conversation_events_for_thread`):
    - visible displays: distinct `display_id` of documents with `thread_id` = T, `event_type` =
      "display_event" (`AgentTopicManager.DISPLAY_EVENT`), `agent_class` = "UserAgent" and an
      element of `event_parents` in {UserMessageEvent, HumanInTheLoopResponseEvent}; none: the
      repository logs a warning and returns no rows (answered as `no_visible_display`);
    - rows: documents of T, "display_event", `display_id` among those, an `event_parents` element
      in the five projectable families, sorted by `event_data.created_at` then `event_id` in
      MongoDB's sort order; each is loaded with `_from_son` and the list goes to the projector.

    Where it differs from the MongoDB-backed one:
    - documents whose sort keys tie come back in insertion order (MongoDB leaves that order
      unspecified; in practice it is also the natural order of a collection scan);
    - `_id` is a counter (ObjectId of the write's sequence number) instead of a time-and-random
      ObjectId, for determinism; no query reads `_id`;
    - durability: each written document is appended to `data_dir/aihub-agent-events.bson` and
      flushed before the answer; a write cut short by a crash (a partial record at the end) is
      dropped on open. MongoDB's acknowledged, journaled write gives the same outcome for a
      process crash. Replicas share this one store, as the real replicas share one database.
    - a rejected write: the real persister's `save()` raises inside the NATS handler and the
      event is not stored (how the subscriber then acknowledges or redelivers it is outside
      this store); the adapter keeps nothing and answers `quarantined`.
    """

    def __init__(self, data_dir: str) -> None:
        self.path = os.path.join(data_dir, STORE_FILE)
        self.documents: list[dict] = []
        if os.path.exists(self.path):
            with open(self.path, "rb") as f:
                data = f.read()
            offset = 0
            while offset + 4 <= len(data):
                (length,) = struct.unpack_from("<i", data, offset)
                if length < 5 or offset + length > len(data):
                    break
                self.documents.append(bson.decode(data[offset : offset + length]))
                offset += length
            if offset != len(data):
                with open(self.path, "r+b") as f:
                    f.truncate(offset)
        self.file = open(self.path, "ab")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def admit(self, row: Any) -> str:
        document = parse_row(row)
        if document is None:
            return "quarantined"
        fields = {name: document[name] for name in ENTITY_FIELDS if name in document}
        try:
            entity = PersistedAgentEventEntity(id=ObjectId(len(self.documents).to_bytes(12, "big")), **fields)
            entity.validate()
            encoded = bson.encode(entity.to_mongo())
        except (MongoValidationError, FieldDoesNotExist, bson.errors.InvalidDocument, OverflowError, UnicodeError):
            return "quarantined"
        self.file.write(encoded)
        self.file.flush()
        self.documents.append(bson.decode(encoded))
        return "stored"

    def conversation_events_for_thread(self, thread_id: str) -> list:
        display = AgentTopicManager.DISPLAY_EVENT

        def on_thread(doc: dict) -> bool:
            return doc.get("thread_id") == thread_id and doc.get("event_type") == display

        def parents_in(doc: dict, names: set) -> bool:
            parents = doc.get("event_parents")
            return isinstance(parents, list) and any(p in names for p in parents)

        visible = set()
        for doc in self.documents:
            if on_thread(doc) and doc.get("agent_class") == "UserAgent" and parents_in(doc, VISIBLE_MARKER_PARENTS):
                visible.add(doc.get("display_id"))
        if not visible:
            logging.getLogger(entity_module.__name__).warning(
                "No client-visible display marker found for thread history",
                extra={"thread_id": thread_id},
            )
            return []
        selected = [
            (index, doc)
            for index, doc in enumerate(self.documents)
            if on_thread(doc) and doc.get("display_id") in visible and parents_in(doc, PROJECTABLE_PARENTS)
        ]

        def sort_key(item: tuple) -> tuple:
            index, doc = item
            data = doc.get("event_data")
            has_created = isinstance(data, dict) and "created_at" in data
            created = data.get("created_at") if has_created else None
            return (
                _bson_sort_key(created, missing=not has_created),
                _bson_sort_key(doc.get("event_id"), missing="event_id" not in doc),
                index,
            )

        return [load_entity(doc) for _, doc in sorted(selected, key=sort_key)]


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------

REQUEST_FIELDS = {
    "hello": {"protocol"},
    "open": {"data_dir", "options"},
    "close": set(),
    "append": {"node", "rows"},
    "reconstruct": {"node", "thread_id", "primary"},
    "project": {"rows", "primary"},
}


def _require_fields(request: dict, op: str) -> None:
    given = set(request) - {"id", "op"}
    expected = REQUEST_FIELDS[op]
    if given != expected:
        missing = sorted(expected - given)
        unknown = sorted(given - expected)
        raise Refusal("invalid", f"{op}: missing fields {missing}, unknown fields {unknown}")


def _node(request: dict) -> int:
    node = request["node"]
    if isinstance(node, bool) or not isinstance(node, int) or node < 0:
        raise Refusal("invalid", "node must be an unsigned integer")
    return node


def _primary(value: Any) -> dict | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or set(value) != {"agent_class", "agent_id"}
        or not all(isinstance(value[k], str) for k in value)
    ):
        raise Refusal("invalid", "primary must be null or {agent_class: string, agent_id: string}")
    return value


def _rows(value: Any) -> list:
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise Refusal("invalid", "rows must be an array of JSON strings")
    return value


class Server:
    def __init__(self) -> None:
        self.store: AgentEventStore | None = None
        # The last answer of each (thread, primary) read and how many documents the store held
        # then. A read and the projector are pure functions of the stored documents, so an
        # answer stays right until the next stored row; replicas re-reading a settled thread
        # (most reads of a campaign) are answered without running the projector again.
        self.answers: dict[tuple, tuple[int, dict]] = {}

    def answer(self, request: dict) -> Any:
        op = request.get("op")
        if not isinstance(op, str) or op not in REQUEST_FIELDS:
            raise Refusal("unsupported", f"op {json.dumps(op)} is not implemented by the aihub adapter")
        _require_fields(request, op)
        return getattr(self, "op_" + op)(request)

    def op_hello(self, request: dict) -> dict:
        if request["protocol"] != PROTOCOL:
            raise Refusal("invalid", f"protocol {json.dumps(request['protocol'])}: this system speaks {PROTOCOL}")
        return {"system": SYSTEM, "version": VERSION, "protocol": PROTOCOL, "ops": OPS, "differences": DIFFERENCES}

    def op_open(self, request: dict) -> dict:
        data_dir, options = request["data_dir"], request["options"]
        if not isinstance(data_dir, str) or not isinstance(options, dict):
            raise Refusal("invalid", "open: data_dir must be a string and options an object")
        # `store` and `planted` select histsim's own backends and planted bugs: this system has
        # one store (MongoDB, mirrored) and no planted bugs, so both are read and ignored.
        if self.store is not None:
            self.store.close()
            self.store = None
        self.answers.clear()
        try:
            os.makedirs(data_dir, exist_ok=True)
            self.store = AgentEventStore(data_dir)
        except OSError as e:
            raise Refusal("internal", f"open: {e}") from e
        return {}

    def op_close(self, request: dict) -> dict:
        if self.store is not None:
            self.store.close()
            self.store = None
        self.answers.clear()
        return {}

    def _open_store(self) -> AgentEventStore:
        if self.store is None:
            raise Refusal("conflict", "not open: send `open` first")
        return self.store

    def op_append(self, request: dict) -> dict:
        _node(request)
        rows = _rows(request["rows"])
        store = self._open_store()
        return {"admitted": [store.admit(row) for row in rows]}

    def op_reconstruct(self, request: dict) -> dict:
        _node(request)
        thread_id = request["thread_id"]
        if not isinstance(thread_id, str):
            raise Refusal("invalid", "thread_id must be a string")
        primary = _primary(request["primary"])
        store = self._open_store()
        key = (thread_id, None if primary is None else (primary["agent_class"], primary["agent_id"]))
        cached = self.answers.get(key)
        if cached is not None and cached[0] == len(store.documents):
            return cached[1]

        def run():
            return run_projector(store.conversation_events_for_thread(thread_id), primary)

        answer = self._project(run)
        self.answers[key] = (len(store.documents), answer)
        return answer

    def op_project(self, request: dict) -> dict:
        rows = _rows(request["rows"])
        primary = _primary(request["primary"])
        entities = []
        for row in rows:
            document = parse_row(row)
            # Bytes that are not a JSON object cannot be a MongoDB document: no read can return
            # them, so the projector never sees them. Skipped without a warning.
            if document is not None:
                entities.append(load_entity(document))
        return self._project(lambda: run_projector(entities, primary))

    @staticmethod
    def _project(run) -> dict:
        try:
            messages, warnings = capture_warnings(run)
        except Exception as e:  # the real projector (or the read) failed: the system's own answer
            traceback.print_exc(file=sys.stderr)
            raise Refusal("internal", f"{type(e).__name__}: {e}") from e
        return {"messages": to_json_messages(messages), "warnings": warnings}


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    serve(Server(), sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
