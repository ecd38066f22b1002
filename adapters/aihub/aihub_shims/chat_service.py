"""Shim of `swiss_ai_hub.core.routes.chat.chat_service`: only what the history projector uses.

The projector calls two static methods of `ChatService`. Their published behaviour (0.323.4),
restated for this adapter:

- `terminal_output_text(output_messages)`: "" when the list is None or empty. Otherwise the last
  element decides: a llama_index `ChatMessage` gives its `content` (or "" when that is None); a
  core `Message` gives its `content`; anything else (a persisted dict) is validated with
  `Message.model_validate` (a pydantic `ValidationError` escapes to the caller) and gives that
  message's `content`, the concatenation of its text blocks.
- `missing_suffix(streamed, full_answer)`: when `full_answer` is non-empty and starts with
  `streamed`, the rest of `full_answer`; otherwise "" when something was streamed and
  `full_answer` (possibly "") when nothing was.

The real `Message` model and llama_index `ChatMessage` are used, not copies.
"""

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from swiss_ai_hub.core.events.agent.semantic.llm.message import Message


class ChatService:
    @staticmethod
    def terminal_output_text(output_messages: list[Any] | None) -> str:
        if not output_messages:
            return ""
        last = output_messages[-1]
        if isinstance(last, ChatMessage):
            return last.content or ""
        if isinstance(last, Message):
            return last.content
        return Message.model_validate(last).content

    @staticmethod
    def missing_suffix(streamed: str, full_answer: str) -> str:
        if full_answer and full_answer.startswith(streamed):
            return full_answer[len(streamed) :]
        if streamed:
            return ""
        return full_answer
