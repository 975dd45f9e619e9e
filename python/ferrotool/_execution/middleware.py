"""Middleware: the onion around every call (`ToolkitConfig.middleware`).

The onion is built once (per toolkit for its own middleware, per view for a view's own), not
per call, and runs in Rust (`ferrotool._core.Onion`): a middleware's ``next`` is a small Rust
object holding the rest of its call (the next layer, then the view's dispatch of the call's
scope, `ferrotool._execution.pipeline.CallScope`); called (twice, or from a task the
middleware starts) it runs that call, with the call and context it is given. A layer that
declares a cheap synchronous ``active()`` is asked first at each call, and left out of the
call when it says no (`ferrotool.telemetry.Tracing` while no tracer provider is set): it
costs that one question, or one dictionary lookup when ``active`` is a `ferrotool._core.IsSet`.

A middleware is one step of its call: what it raises, or a value it returns that is no
`ToolResultBlock`, is that call's error result (the ``middleware`` step), never an exception
out of the call or its batch. Only a programmer's mistake inside the call (an
`InjectionError`, arguments that are not JSON text) goes on through it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias, final

from ferrotool import _core
from ferrotool._execution import outcomes
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool.errors import InjectionError

Next: TypeAlias = Callable[[ToolUseBlock, RuntimeContext], Awaitable[ToolResultBlock]]
"""The rest of the call, as middleware sees it: call it to go on."""

Middleware: TypeAlias = Callable[[ToolUseBlock, RuntimeContext, Next], Awaitable[ToolResultBlock]]
"""``async def middleware(call, context, next) -> ToolResultBlock``.

Middleware wraps every call like an onion (the first outermost): it may read or rewrite the
call and the context (its scratch layer carries messages to tools), call ``next`` (or not, to
short-circuit with its own result), and read or rewrite the result.
"""


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


def onion(middleware: Sequence[Middleware]) -> _core.Onion | None:
    """``middleware`` composed once, the first outermost (``None`` without middleware).

    The onion runs in Rust (`ferrotool._core.Onion`): ``onion.run(call, context, rest)`` calls
    the layers that take part now (a layer with an ``active()`` method that says no is left
    out for that call, with no frame of its own), each with a ``next`` going on to the next
    layer and, after the innermost, to ``rest(call, context)``, which runs the call itself. The
    call's result is settled as `through` describes.
    """
    if not middleware:
        return None
    return _core.Onion(
        tuple(middleware),
        settle=_settle,
        failed=_failed,
        result_type=ToolResultBlock,
        running=ToolResultState.RUNNING,
    )


def through(
    onion: _core.Onion, rest: Next, call: ToolUseBlock, context: RuntimeContext
) -> Awaitable[ToolResultBlock]:
    """Run one call through an onion built by `onion`; its core goes on with ``rest``.

    The awaitable gives the call's result in its final state (`outcomes.final`: a middleware's
    own ``RUNNING`` result that does not wait is a success), or the ``middleware`` step's error
    result when a middleware raised or returned something else.

    Raises (when awaited):
        InjectionError: The tool needs a value the context lacks (a programmer's mistake).
        TypeError: The call's arguments are not JSON text (a programmer's mistake).
    """
    return onion.run(call, context, rest)


def _settle(call: ToolUseBlock, value: object) -> ToolResultBlock:
    """The result of a call whose outermost middleware returned ``value``."""
    if type(value) is not ToolResultBlock:
        problem = TypeError(f"a middleware returned a {type(value).__name__}, not a result")
        return outcomes.step_failed(call, "middleware", problem)
    return outcomes.final(value)


def _failed(call: ToolUseBlock, exc: Exception) -> ToolResultBlock:
    """The result of a call whose middleware raised ``exc``; a programmer's mistake goes on."""
    if isinstance(exc, (InjectionError, NotJsonText)):
        raise exc
    return outcomes.step_failed(call, "middleware", exc)


class NotJsonText(TypeError):
    """A call's arguments are not JSON text (a programmer's mistake: it goes on, uncontained)."""


def not_text(call: ToolUseBlock) -> NotJsonText:
    """The error for a call whose arguments are not JSON text."""
    return NotJsonText(
        f"the arguments of call {call.id!r} are a {type(call.arguments).__name__}, not JSON "
        "text; build the call with ToolUseBlock.of(id, name, input) to pass parsed arguments"
    )


__all__ = [
    "Middleware",
    "Next",
    "NotJsonText",
    "compose",
    "not_text",
    "onion",
    "through",
]
