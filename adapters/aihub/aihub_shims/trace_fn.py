"""Shim of `swiss_ai_hub.core.infrastructure.opentelemetry.tracing.decorators.trace_fn`.

The published decorator wraps a function (sync or async) in an OpenTelemetry span named after the
function, records its inputs, output and any exception as span attributes, and re-raises every
exception unchanged; it never alters arguments or the return value. Spans are observability only,
and no tracer is configured in this adapter, so this shim returns the function itself: same
results, same exceptions, no span.
"""

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def trace_fn(func: F) -> F:
    return func
