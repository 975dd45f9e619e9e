"""A batch's events as an async iterator: `EventStream`.

The events go through an anyio memory object stream, which belongs to the event loop: an event
sent from a worker thread (a sync tool's progress) is handed back to the loop first
(`ferrotool._execution.loopback`), so the consumer and ``on_event`` see every event on the loop's
thread, in order.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncGenerator, Awaitable, Callable
from types import TracebackType
from typing import Self, final

import anyio

from ferrotool._execution.events import EventSink, ToolEvent
from ferrotool._execution.loopback import on_loop


async def _events(
    start: Callable[[EventSink], Awaitable[object]], on_event: EventSink | None
) -> AsyncGenerator[ToolEvent, None]:
    send, receive = anyio.create_memory_object_stream[ToolEvent](math.inf)

    def both(event: ToolEvent) -> None:
        if on_event is not None:
            on_event(event)
        # A consumer that left gets nothing more; the sink (if any) still gets every event.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            send.send_nowait(event)

    async def run() -> None:
        with send:
            await start(on_loop(both))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            with receive:
                async for event in receive:
                    yield event
        except GeneratorExit:  # closed by its consumer: stop what still runs, then end
            group.cancel_scope.cancel()
            return


@final
class EventStream:
    """A batch's events, as they happen.

    An async iterator, and an async context manager that closes it (cancelling what still
    runs) on leaving.

    Prefer ``async with view.stream_tools(calls) as events: async for event in events: ...``:
    a stream left without being closed is closed only when it is collected, by the event loop.
    """

    __slots__ = ("_events",)

    def __init__(
        self,
        start: Callable[[EventSink], Awaitable[object]],
        on_event: EventSink | None = None,
    ) -> None:
        self._events = _events(start, on_event)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ToolEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop the batch (its running calls end ``INTERRUPTED``) and the stream."""
        await self._events.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


__all__ = ["EventStream"]
