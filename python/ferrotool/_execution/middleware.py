"""Middleware: the onion around every call (`ToolkitConfig.middleware`).

The onion is built once (per toolkit for its own middleware, per view for a view's own), not
per call: its core is one function for every call, and what differs from call to call besides
the call and the context (the agent, the progress sink, the execution settings, an approval,
and the view that resolves the call) reaches the core through a context variable that `through`
sets for the call. A middleware's ``next`` is therefore the same object for every call; called
inside its call (twice, or from a task the middleware starts) it runs that call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Protocol, TypeAlias, final

from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig

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


class Dispatch(Protocol):
    """Resolves and runs one call, past the middleware (`ToolView`'s)."""

    def __call__(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
        execution: ExecutionConfig | None,
        approved: bool,
    ) -> Awaitable[ToolResultBlock]:
        """The call's result."""
        ...


_Pending: TypeAlias = tuple[Dispatch, object, ProgressSink | None, ExecutionConfig | None, bool]

_PENDING: ContextVar[_Pending] = ContextVar("ferrotool_call_through_middleware")


def _core(call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
    """The innermost ``next`` of every onion: the call, run as `through` was asked to."""
    try:
        dispatch, agent, on_progress, execution, approved = _PENDING.get()
    except LookupError:
        raise RuntimeError(
            "a middleware called next outside its call: call it while the middleware runs "
            "(in its own task, or in one it starts)"
        ) from None
    return dispatch(call, context, agent, on_progress, execution, approved)


def onion(middleware: Sequence[Middleware]) -> Next | None:
    """``middleware`` composed once, around the core of every call run `through` it.

    ``None`` without middleware: calls go straight to their dispatch.
    """
    return compose(middleware, _core) if middleware else None


async def through(
    onion: Next,
    dispatch: Dispatch,
    call: ToolUseBlock,
    context: RuntimeContext,
    agent: object | None,
    on_progress: ProgressSink | None,
    execution: ExecutionConfig | None,
    approved: bool,
) -> ToolResultBlock:
    """Run one call through an onion built by `onion`; its core runs it with ``dispatch``."""
    token = _PENDING.set((dispatch, agent, on_progress, execution, approved))
    try:
        return await onion(call, context)
    finally:
        _PENDING.reset(token)


__all__ = ["Dispatch", "Middleware", "Next", "compose", "onion", "through"]
