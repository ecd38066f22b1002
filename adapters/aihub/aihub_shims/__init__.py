"""Shims for the parts of swiss-ai-hub-core 0.323.4 that cannot be imported on Python 3.11.

The published wheels declare Python 3.13. The projector module itself compiles on 3.11, and so do
the entity, the topic constants and the `Message` model it reaches, which are used as published.
Two modules on its import path cannot be used here; each is replaced, under its exact dotted
name, by a module written for this adapter from reading the published source (see README.md):

- `swiss_ai_hub.core.infrastructure.opentelemetry.tracing.decorators.trace_fn`: uses PEP 695
  generic syntax (`def trace_fn[**P, T]`, 3.12+), so it does not compile on 3.11.
- `swiss_ai_hub.core.routes.chat.chat_service`: imports FastAPI, NATS, the subscribers, the
  thread entity and event modules that use 3.12+ syntax (e.g. the HITL response event). The
  projector needs two pure static methods of `ChatService` from it.

`install()` must run before anything under `swiss_ai_hub` is imported. The real package
`__init__` modules still run; they import lazily, so a registered shim is what they find.
"""

import sys

SHIMMED = {
    "swiss_ai_hub.core.infrastructure.opentelemetry.tracing.decorators.trace_fn": "aihub_shims.trace_fn",
    "swiss_ai_hub.core.routes.chat.chat_service": "aihub_shims.chat_service",
}


def install() -> None:
    from importlib import import_module

    for real_name, shim_name in SHIMMED.items():
        if real_name in sys.modules and sys.modules[real_name].__name__ != shim_name:
            raise RuntimeError(f"{real_name} was imported before the shims were installed")
        sys.modules[real_name] = import_module(shim_name)
