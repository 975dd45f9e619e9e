"""Middleware: the onion around every call (`ToolkitConfig.middleware`)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import final

from ferrotool._execution.runner import Middleware, Next
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import RuntimeContext


@final
class _Layer:
    """One middleware with the rest of the onion inside it."""

    __slots__ = ("inner", "middleware")

    def __init__(self, middleware: Middleware, inner: Next) -> None:
        self.middleware = middleware
        self.inner = inner

    def __call__(self, call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
        return self.middleware(call, context, self.inner)


def compose(middleware: Sequence[Middleware], core: Next) -> Next:
    """``core`` wrapped in ``middleware``, the first outermost."""
    wrapped = core
    for layer in reversed(middleware):
        wrapped = _Layer(layer, wrapped)
    return wrapped


__all__ = ["compose"]
