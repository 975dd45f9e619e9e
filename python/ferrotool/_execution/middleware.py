"""Middleware: the onion around every call (`ToolkitConfig.middleware`).

The onion is built once (per toolkit for its own middleware, per view for a view's own), not
per call: its core is one function for every call, and the rest of each call (the view's
dispatch of the call's scope, `ferrotool._execution.pipeline.CallScope`) reaches the core
through a context variable that `through` sets for the call. A middleware's ``next`` is
therefore the same object for every call; called inside its call (twice, or from a task the
middleware starts) it runs that call, with the call and context it is given.

A middleware is one step of its call: what it raises, or a value it returns that is no
`ToolResultBlock`, is that call's error result (the ``middleware`` step), never an exception
out of the call or its batch. Only a programmer's mistake inside the call (an
`InjectionError`, arguments that are not JSON text) goes on through it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TypeAlias, final

from ferrotool._execution import outcomes
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
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


_PENDING: ContextVar[Next] = ContextVar("ferrotool_call_through_middleware")


def _core(call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
    """The innermost ``next`` of every onion: the call, run as `through` was asked to."""
    try:
        rest = _PENDING.get()
    except LookupError:
        raise RuntimeError(
            "a middleware called next outside its call: call it while the middleware runs "
            "(in its own task, or in one it starts)"
        ) from None
    return rest(call, context)


def onion(middleware: Sequence[Middleware]) -> Next | None:
    """``middleware`` composed once, around the core of every call run `through` it.

    ``None`` without middleware: calls go straight to their dispatch.
    """
    return compose(middleware, _core) if middleware else None


async def through(
    onion: Next, rest: Next, call: ToolUseBlock, context: RuntimeContext
) -> ToolResultBlock:
    """Run one call through an onion built by `onion`; its core goes on with ``rest``.

    Returns:
        The call's result in its final state (`outcomes.final`: a middleware's own ``RUNNING``
        result that does not wait is a success), or the ``middleware`` step's error result
        when a middleware raised or returned something else.

    Raises:
        InjectionError: The tool needs a value the context lacks (a programmer's mistake).
        TypeError: The call's arguments are not JSON text (a programmer's mistake).
    """
    token = _PENDING.set(rest)
    try:
        result = await onion(call, context)
    except (InjectionError, NotJsonText):
        raise
    except Exception as exc:
        return outcomes.step_failed(call, "middleware", exc)
    finally:
        _PENDING.reset(token)
    if type(result) is not ToolResultBlock:
        problem = TypeError(f"a middleware returned a {type(result).__name__}, not a result")
        return outcomes.step_failed(call, "middleware", problem)
    return outcomes.final(result)


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
