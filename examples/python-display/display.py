#!/usr/bin/env python3
"""A display-event store and history projector speaking histsim's SUT protocol (display workload):
`append` stores rows (quarantining what it cannot index), `reconstruct` answers a thread's history
with warnings. Rules: docs/display-projection.md, whose sections the comments name. Stdlib only.
"""
import base64
import json
import re
import sys

FAMILIES = ["UserMessageEvent", "HumanInTheLoopRequestEvent", "HumanInTheLoopResponseEvent",
            "ChunkEvent", "StopEvent"]
USER_TURNS = ("UserMessageEvent", "HumanInTheLoopResponseEvent")
IDENTITY = ["agent_class", "agent_id", "thread_id", "display_id", "run_id", "event_type",
            "event_name", "event_id"]
HELLO = {"system": "python-display", "version": "0.1.0", "protocol": 1,
         "ops": ["hello", "open", "close", "append", "reconstruct"]}
BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")

class Bad(Exception):
    """A row's payload (or one block of it) is malformed: Bad(code, field)."""

def family(row):  # "Families and membership": the first family its chain names
    return next((p for p in row["event_parents"] if p in FAMILIES), None)

def is_marker(row):  # a UserAgent user turn makes its display visible, whatever its payload
    return row["agent_class"] == "UserAgent" and family(row) in USER_TURNS

def warning(code, row=None, field=None):  # "Warnings": metadata only, never payload text
    event, display = (row.get(k) if row and isinstance(row.get(k), str) and row.get(k) else None
                      for k in ("event_id", "display_id"))
    text = f"{code}: event {event}, display {display}, field {field}"
    return {"code": code, "event_id": event, "display_id": display, "field": field, "text": text}

def admit(raw):
    """"Store admission": a row the thread query cannot index is quarantined, never dropped."""
    try:
        row = json.loads(raw, parse_constant=lambda name: {}[name])  # NaN is not JSON
    except (ValueError, KeyError):
        return None
    keys = ("thread_id", "display_id", "event_type", "agent_class")
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
        return None
    parents = row.get("event_parents")
    ok = isinstance(parents, list) and all(isinstance(p, str) for p in parents)
    return row if ok else None

def is_integer(v):  # created_at: a JSON integer that fits an i64 or a u64
    return isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**64

def byte_list_ok(v):  # media bytes: absent, null, a string or a list of integers 0..=255
    return v is None or isinstance(v, str) or isinstance(v, list) and all(
        isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in v)

def audio_payload(raw):  # "Media": strict base64 text stands for what it encodes
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    text = data.decode("ascii", "replace")
    if len(data) % 4 == 0 and BASE64.fullmatch(text):
        data = base64.b64decode(text)
    return base64.b64encode(data).decode()

def part_of(block):
    """One user block as an OpenAI content part, None for nothing, Bad("bad_media", field)."""
    kind = block.get("block_type") if isinstance(block, dict) else None
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise Bad("bad_media", "text")
        return {"type": "text", "text": block["text"]} if block["text"] else None
    if kind == "image":
        if not isinstance(block.get("url"), str) or not block["url"]:
            raise Bad("bad_media", "url")
        return {"type": "image_url", "image_url": {"url": block["url"]}}
    if kind == "audio":
        if block.get("format") not in ("wav", "mp3"):
            raise Bad("bad_media", "format")
        if block.get("audio") is None:
            raise Bad("bad_media", "audio")
        return {"type": "input_audio",
                "input_audio": {"data": audio_payload(block["audio"]), "format": block["format"]}}
    raise Bad("bad_media", "block_type")

def user_blocks(data):  # UserMessageEvent: the blocks of the last ChatMessage
    messages = data.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    blocks = last.get("blocks") if isinstance(last, dict) else None
    if not isinstance(blocks, list):
        raise Bad("bad_payload", "messages")
    for b in blocks:  # malformed media bytes fail the whole message, before any block converts
        if isinstance(b, dict) and b.get("block_type") in ("audio", "image"):
            if not byte_list_ok(b.get(b["block_type"])):  # the `image` or `audio` field
                raise Bad("bad_payload", "messages")
    return blocks

def stop_answer(data):  # StopEvent: the text of the last output message
    outputs = data.get("output_messages")
    last = outputs[-1] if isinstance(outputs, list) and outputs else None
    contents = last.get("contents", 0) if isinstance(last, dict) else 0
    if contents is None:
        return ""
    ok = isinstance(contents, list) and all(isinstance(c, dict) for c in contents)
    texts = [c.get("text") for c in contents if c.get("type") == "text"] if ok else [None]
    if not all(isinstance(t, str) for t in texts):
        raise Bad("bad_payload", "output_messages")
    return "".join(texts)

def project(rows, primary):
    """"Projection": validate, dedup, order, walk, merge."""
    warnings, kept, seen = [], [], set()
    for row in rows:  # 1. validation, then dedup (the first copy of an identity wins)
        bad = next((k for k in IDENTITY if not isinstance(row.get(k), str) or not row[k]), None)
        data = row.get("event_data")
        if bad:
            warnings.append(warning("bad_identity", row, bad))
        elif not isinstance(data, dict) or not is_integer(data.get("created_at")):
            warnings.append(warning("bad_created_at", row, "created_at"))
        elif tuple(row[k] for k in IDENTITY) not in seen:
            seen.add(tuple(row[k] for k in IDENTITY))
            kept.append(row)
    kept.sort(key=lambda r: (r["event_data"]["created_at"], r["event_id"], *map(r.get, IDENTITY)))
    who = primary and (primary["agent_class"], primary["agent_id"])
    messages, streamed = [], {}  # 3. the walk; streamed: per display, text since its last user turn

    def emit(role, display, parts):  # 4. merging: a user's parts stay apart, assistant text joins
        if not messages or messages[-1][:2] != (role, display):
            messages.append((role, display, parts))
        elif role == "user":
            messages[-1][2].extend(parts)
        else:
            messages[-1][2][-1]["text"] += parts[0]["text"]

    for row in kept:
        fam, d, data = family(row), row["display_id"], row["event_data"]
        try:
            if fam in USER_TURNS:
                if row["agent_class"] != "UserAgent":
                    continue  # another agent's user-turn family: ignored, resets nothing
                streamed[d] = ""
                if fam == "UserMessageEvent":
                    parts = []
                    for block in user_blocks(data):
                        try:
                            parts += [p for p in [part_of(block)] if p]
                        except Bad as e:  # a bad block drops alone, the rest stays
                            warnings.append(warning(e.args[0], row, e.args[1]))
                else:
                    answer = data.get("response")
                    answer = ("true" if answer else "false") if isinstance(answer, bool) else answer
                    if not isinstance(answer, str) or not answer:  # an empty answer is malformed
                        raise Bad("bad_payload", "response")
                    parts = [{"type": "text", "text": answer}]
                if parts:
                    emit("user", d, parts)
                continue
            if fam == "StopEvent":
                if primary is None or (row["agent_class"], row["agent_id"]) != who:
                    continue
                answer, so_far = stop_answer(data), streamed.get(d, "")
                text = answer[len(so_far):] if answer.startswith(so_far) else ""
            else:
                field = "content" if fam == "ChunkEvent" else "question"
                text = data.get(field)
                if not isinstance(text, str) or not text:  # an empty chunk or question too
                    raise Bad("bad_payload", field)
            if text:
                streamed[d] = streamed.get(d, "") + text
                emit("assistant", d, [{"type": "text", "text": text}])
        except Bad as e:
            warnings.append(warning(e.args[0], row, e.args[1]))
    return {"messages": [{"role": r, "content": p} for r, _, p in messages], "warnings": warnings}

def main():
    stored = []  # every admitted row, in insertion order; one store shared by every replica
    for line in sys.stdin:
        req = json.loads(line)
        op, result = req["op"], None
        if op == "hello":
            result = HELLO
        elif op in ("open", "close"):  # each seed opens a fresh data directory: start empty
            stored, result = [], {}
        elif op == "append":
            rows = [admit(raw) for raw in req["rows"]]
            stored += [r for r in rows if r is not None]
            result = {"admitted": ["stored" if r is not None else "quarantined" for r in rows]}
        elif op == "reconstruct":  # "The two-stage thread query", then the projection
            mine = [r for r in stored if r["thread_id"] == req["thread_id"]
                    and r["event_type"] == "display_event"]
            visible = {r["display_id"] for r in mine if is_marker(r)}
            rows = [r for r in mine if r["display_id"] in visible and family(r)]
            result = project(rows, req["primary"]) if visible else \
                {"messages": [], "warnings": [warning("no_visible_display")]}
        reply = {"id": req["id"], "ok": result} if result is not None else \
            {"id": req["id"], "err": {"kind": "unsupported", "message": f"unknown op `{op}`"}}
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
