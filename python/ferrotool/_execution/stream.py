"""Events of work running in a task of its own, as an async iterator: `EventStream`.

A batch's events (`ToolView.stream_tools`) and an agent run's (`ferrotool.agent.AgentRun`)
stream through it; below, "the batch" stands for either.

The batch runs in a task of the stream's own, started by the first ``__anext__``: never in its
consumer's task, so nothing the batch does (a cancellation, a failure) can reach the consumer
except through ``__anext__`` and ``aclose``. A consumer that stops iterating, even one that
drops the stream without closing it, is left alone: the dropped stream's batch is cancelled
when the stream is collected (its running calls end ``INTERRUPTED``, reported to ``on_event``),
and the consumer's task never hears of it.

The events go through an anyio memory object stream, which belongs to the event loop: an event
sent from a worker thread (a sync tool's progress) is handed back to the loop first
(`ferrotool._execution.loopback`), so the consumer and ``on_event`` see every event on the loop's
thread, in order.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Final, Generic, Self, TypeVar, final

import anyio

from ferrotool._execution.loopback import on_loop, poster, spawn

_log: Final = logging.getLogger("ferrotool")

E = TypeVar("E")


@final
class _Producer(Generic[E]):
    """The work of one stream, running in its own task.

    Attributes:
        receive: Where the consumer reads the events.
        scope: Cancels the batch.
        finished: Set once the batch's task has ended.
        failure: What went on out of the batch (a programmer's mistake, a tool's
            `BaseException`), for the consumer.
    """

    __slots__ = ("failure", "finished", "post", "receive", "scope")

    def __init__(
        self,
        start: Callable[[Callable[[E], None]], Awaitable[object]],
        on_event: Callable[[E], object] | None,
    ) -> None:
        send, self.receive = anyio.create_memory_object_stream[E](math.inf)
        self.scope = anyio.CancelScope()
        self.finished = anyio.Event()
        self.failure: BaseException | None = None
        self.post = poster()

        def both(event: E) -> None:
            if on_event is not None:
                on_event(event)
            # A consumer that left gets nothing more; the sink (if any) still gets every event.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                send.send_nowait(event)

        async def run() -> None:
            try:
                with self.scope, send:
                    await start(on_loop(both))
            except BaseException as exc:  # for the consumer: this task raises nothing
                self.failure = exc
            finally:
                self.finished.set()

        spawn(run)

    async def stop(self) -> None:
        """Cancel the batch (if it still runs) and wait until its task has ended."""
        self.scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.finished.wait()
        self.receive.close()

    def take_failure(self) -> BaseException | None:
        """What went on out of the batch, once."""
        failure, self.failure = self.failure, None
        return failure

    def abandon(self) -> None:
        """Cancel the batch from anywhere (a collected stream): queued on its loop."""
        try:
            self.post(self.scope.cancel)
            self.post(self.receive.close)
        except RuntimeError:  # the loop is gone, and the batch with it
            pass
        failure = self.failure
        if failure is not None:
            _log.warning("a stream dropped unread had failed", exc_info=failure)


class EventStream(Generic[E]):
    """Events of work that runs in a task of the stream's own, as they happen.

    An async iterator, and an async context manager that closes it (cancelling what still
    runs) on leaving. ``start(sink)`` begins with the first ``__anext__`` and runs in a task of
    the stream's own; every event it hands ``sink`` (from any thread) reaches ``on_event`` and
    the consumer, in order, on the loop's thread. A consumer cancelled while it waits for an
    event stops the work (a batch's running calls end ``INTERRUPTED``, reported to
    ``on_event``) before its cancellation goes on; a stream dropped without being closed stops
    its work once it is collected, and never touches its consumer's task. What ``start``
    raises reaches the consumer from ``__anext__`` (or ``aclose``) as it was raised.

    Prefer ``async with view.stream_tools(calls) as events: async for event in events: ...``.
    """

    __slots__ = ("_closed", "_on_event", "_producer", "_start")

    def __init__(
        self,
        start: Callable[[Callable[[E], None]], Awaitable[object]],
        on_event: Callable[[E], object] | None = None,
    ) -> None:
        self._start = start
        self._on_event = on_event
        self._producer: _Producer[E] | None = None
        self._closed = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> E:
        producer = self._producer
        if producer is None:
            if self._closed:
                raise StopAsyncIteration
            producer = self._producer = _Producer(self._start, self._on_event)
        try:
            return await producer.receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
        except BaseException:  # the consumer was cancelled while it waited: stop the batch
            self._closed = True
            await producer.stop()
            raise
        self._closed = True
        await producer.stop()
        failure = producer.take_failure()
        if failure is not None:
            raise failure
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop the work (a batch's running calls end ``INTERRUPTED``) and the stream.

        Raises:
            BaseException: What went on out of the work and was not raised to the consumer
                yet (a programmer's mistake, a tool's own `BaseException`).
        """
        self._closed = True
        producer = self._producer
        if producer is None:
            return
        await producer.stop()
        failure = producer.take_failure()
        if failure is not None:
            raise failure

    def __del__(self) -> None:
        producer = self._producer
        if producer is not None and not self._closed:
            producer.abandon()

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
