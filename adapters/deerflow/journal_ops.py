"""The published run journal (deerflow-kernel 0.1.7, `deerflow/runtime/journal.py` `RunJournal`)
behind histsim's journal ops (docs/sut-protocol.md, "Journal operations").

histsim hands the journal what LangChain would: an invocation's start, end and failure
(`on_chain_start`, `on_chain_end`, `on_chain_error`, with a run id and the parent's), and a model
call's start with its messages (`on_chat_model_start`, with the caller's tags). Each callback is
made on the published `RunJournal` itself, one journal a run, with real `langchain_core`
messages: a hidden message carries `additional_kwargs={"hide_from_ui": True}` as 0.1.7's
middlewares write it, a middleware's own call carries its tag (`middleware:title`) as 0.1.7's
title middleware passes it. The journal keeps what it records in its write buffer (its store is
never reached: the callbacks run outside an event loop and the flush threshold is never met);
the adapter answers each callback with the entries it added there, translated to histsim's
event names (README.md, "The run journal"), and empties the buffer. Which entries a callback
makes is the journal's own decision; only names and contents' shapes are translated.

ADAPTER: the journal stamps each entry with `datetime.now(UTC)`; the answer carries no time
(histsim stamps a record with the callback's simulated time), so the wall clock never reaches
histsim.
"""

import importlib.util
import uuid

# The journal ops, declared in hello when the journal's imports (langchain_core, langgraph) are
# installed (the pinned wheel's virtualenv has them; `--source head`'s has not).
JOURNAL_OPS = ["journal_chain_start", "journal_model_start", "journal_chain_end", "journal_chain_error"]
JOURNAL_FIELDS = {
    "journal_chain_start": ["thread_id", "run_id", "invocation", "content", "created_at_ns"],
    "journal_model_start": ["thread_id", "run_id", "caller", "messages", "created_at_ns"],
    "journal_chain_end": ["thread_id", "run_id", "invocation", "created_at_ns"],
    "journal_chain_error": ["thread_id", "run_id", "invocation", "error", "created_at_ns"],
}
# A flush threshold no run reaches: the journal's buffer holds every entry until the adapter
# takes it.
NEVER_FLUSH = 2**31 - 1
# histsim's names for the entries 0.1.7's journal makes of these callbacks (event type, category).
TRANSLATED = {
    "llm.human.input": ("human_message", "message"),
    "run.start": ("run_start", "lifecycle"),
    "run.end": ("run_end", "lifecycle"),
    "run.error": ("run_error", "lifecycle"),
}


def journal_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("langchain_core", "langgraph"))


def _uuid(name: str) -> uuid.UUID:
    """A LangChain run id for one of histsim's invocation ids (a name-based UUID: no randomness)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, "histsim-invocation:" + name)


class Journals:
    """The published RunJournal, one a run (thread_id, run_id) of the session."""

    def __init__(self, refusal) -> None:
        from deerflow.runtime.journal import RunJournal

        self._journal_class = RunJournal
        self._refusal = refusal
        self._journals = {}
        self._calls = {}

    def answer(self, op: str, request: dict) -> dict:
        thread_id, run_id = request["thread_id"], request["run_id"]
        if not isinstance(thread_id, str) or not isinstance(run_id, str):
            raise self._refusal("invalid", f"{op}: thread_id and run_id must be strings")
        key = (thread_id, run_id)
        journal = self._journals.get(key)
        if journal is None:
            journal = self._journal_class(run_id, thread_id, None, track_token_usage=False, flush_threshold=NEVER_FLUSH)
            self._journals[key] = journal
        if op == "journal_model_start":
            self._model_start(journal, key, request)
        else:
            self._chain(journal, op, request)
        return {"records": self._take(journal, request)}

    def _invocation(self, request: dict):
        inv = request["invocation"]
        if not isinstance(inv, dict) or set(inv) != {"id", "parent"} or not isinstance(inv["id"], str):
            raise self._refusal("invalid", "`invocation` must be {id, parent}")
        parent = inv["parent"]
        if parent is not None and not isinstance(parent, str):
            raise self._refusal("invalid", "`invocation.parent` must be a string or null")
        return inv["id"], parent

    def _chain(self, journal, op: str, request: dict) -> None:
        inv_id, parent = self._invocation(request)
        ids = {"run_id": _uuid(inv_id), "parent_run_id": _uuid(parent) if parent is not None else None}
        if op == "journal_chain_start":
            journal.on_chain_start({"name": inv_id}, request["content"], **ids)
        elif op == "journal_chain_end":
            journal.on_chain_end({}, **ids)
        else:
            journal.on_chain_error(RuntimeError(str(request["error"])), **ids)

    def _model_start(self, journal, key, request: dict) -> None:
        caller, messages = request["caller"], request["messages"]
        if caller is not None and not isinstance(caller, str):
            raise self._refusal("invalid", "`caller` must be a string or null")
        if not isinstance(messages, list):
            raise self._refusal("invalid", "`messages` must be an array")
        batch = [self._message(m) for m in messages]
        n = self._calls.get(key, 0)
        self._calls[key] = n + 1
        call_id = _uuid(f"{key[0]}/{key[1]}/model-call-{n}")
        journal.on_chat_model_start({}, [batch], run_id=call_id, tags=[caller] if caller else None)

    def _message(self, wire):
        """A LangChain message for one of the call's messages. A rewritten copy's original has no
        place in 0.1.7's messages (it has no input-sanitization middleware): the model-side copy
        is handed over alone."""
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        if not isinstance(wire, dict) or not isinstance(wire.get("message"), dict):
            raise self._refusal("invalid", "a call's message must be {message, hide_from_ui, original}")
        m = wire["message"]
        kind, content, msg_id = m.get("type"), m.get("content"), m.get("id")
        extra = {"hide_from_ui": True} if wire.get("hide_from_ui") else {}
        if kind == "human":
            return HumanMessage(content=content, id=msg_id, additional_kwargs=extra)
        if kind == "ai":
            calls = [{"name": c["name"], "args": c.get("args") or {}, "id": c["id"]} for c in m.get("tool_calls", [])]
            return AIMessage(content=content, id=msg_id, tool_calls=calls, additional_kwargs=extra)
        if kind == "tool":
            return ToolMessage(content=content, id=msg_id, tool_call_id=m.get("tool_call_id") or "", additional_kwargs=extra)
        raise self._refusal("invalid", f"a call's message of type {kind!r}")

    def _take(self, journal, request: dict) -> list:
        """The entries the callback added to the journal's buffer, in histsim's names."""
        taken = list(journal._buffer)
        journal._buffer.clear()
        return [self._translated(e, request) for e in taken]

    @staticmethod
    def _translated(entry: dict, request: dict) -> dict:
        event_type, category = TRANSLATED.get(entry["event_type"], (entry["event_type"], entry["category"]))
        content = entry["content"]
        if event_type == "human_message":
            # The recorded message's dump, in histsim's message shape (type, content, id).
            content = {"type": "human", "content": content.get("content"), "id": content.get("id")}
        elif event_type == "run_start":
            # 0.1.7 stores {"chain": name}; histsim's lifecycle start carries the start's input.
            content = request.get("content")
        elif event_type == "run_end":
            content = {}
        elif event_type == "run_error":
            content = {"error": str(content)}
        return {"event_type": event_type, "category": category, "content": content, "metadata": {}}
