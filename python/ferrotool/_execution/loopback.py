"""The event loop's side of threads and tasks: `on_loop`, `poster`, `spawn`.

`on_loop` makes sinks that are called on their event loop's thread, whoever calls them;
`spawn` starts a task of the loop's own, outside every task group.

A sync tool runs on a worker thread, and its progress chunks are emitted there. What receives
them further (a batch's ``on_event``, an `EventStream`'s memory stream) belongs to the event loop
and is not thread-safe: an item sent from a worker thread may wake nobody, or break the loop's
bookkeeping (trio refuses outright). `on_loop` captures the loop when the sink is made and hands
every item from another thread back to it, in the order they were sent.

The hand-off does not block the worker: the item is queued on the loop (asyncio's
``call_soon_threadsafe``, trio's ``TrioToken.run_sync_soon``, both first in, first out). A worker
thread reports its tool's return value through the same queue, so every chunk a tool emitted
reaches the sink before the batch sees the tool finish.
"""

from __future__ import annotations

import contextvars
import importlib
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    import asyncio

_log = logging.getLogger("ferrotool")

T = TypeVar("T")


def on_loop(sink: Callable[[T], object]) -> Callable[[T], None]:
    """``sink``, called on the thread of the event loop running now, whoever calls the result.

    Call it inside the event loop (asyncio or trio). From the loop's thread the item goes to
    ``sink`` at once (and what it raises goes to the caller); from any other thread it is queued
    on the loop, and what ``sink`` raises there is logged. An item sent after the loop ended is
    dropped: nobody is left to receive it.
    """
    home = threading.get_ident()
    post = poster()

    def routed(item: T) -> None:
        if threading.get_ident() == home:
            sink(item)
            return
        try:
            post(_deliver, sink, item)
        except RuntimeError:  # the loop is closed, or trio's run has finished
            _log.debug("event loop gone: an item for %r was dropped", sink)

    return routed


def running_trio() -> ModuleType | None:
    """The ``trio`` module when the calling code runs inside a trio run; else ``None``.

    trio is no dependency: it is looked up among the loaded modules, never imported (code in a
    trio run has loaded it). anyio answers the same question through sniffio, which this
    package does not need for it.
    """
    trio = sys.modules.get("trio")
    if trio is None:
        return None
    try:
        trio.lowlevel.current_task()
    except RuntimeError:  # no trio run on this thread
        return None
    return trio


def poster() -> Callable[..., object]:
    """The running loop's thread-safe "run this soon" (first in, first out).

    Raises ``RuntimeError`` when called after the loop has ended.
    """
    trio = running_trio()
    if trio is not None:
        return cast("Callable[..., object]", trio.lowlevel.current_trio_token().run_sync_soon)
    return running_loop().call_soon_threadsafe


# The tasks `spawn` started on asyncio: a task the loop holds only weakly must be held here.
_spawned: set[asyncio.Task[None]] = set()


def spawn(run: Callable[[], Awaitable[None]]) -> None:
    """Start ``run()`` in a task of its own on the running loop, in a copy of this context.

    The task belongs to no task group: it is not the caller's, so nothing it does reaches the
    caller's task. ``run`` must raise nothing (whatever it has to report, it hands over itself);
    it is cancelled only when the loop shuts down.
    """
    trio = running_trio()
    if trio is not None:
        trio.lowlevel.spawn_system_task(run, context=contextvars.copy_context())
        return

    async def task() -> None:
        await run()

    started = running_loop().create_task(task())
    _spawned.add(started)
    started.add_done_callback(_spawned.discard)


def _deliver(sink: Callable[[T], object], item: T) -> None:
    """Hand ``item`` to ``sink`` on the loop; a failing sink is logged, never fatal to the loop."""
    try:
        sink(item)
    except Exception:
        _log.exception("sink %r failed on an item sent from a worker thread", sink)


def running_loop() -> asyncio.AbstractEventLoop:
    """``asyncio.get_running_loop()``, with ``asyncio`` found where the running loop loaded it.

    ``import ferrotool`` does not import ``asyncio`` (a tenth of the import's time); whoever
    runs an asyncio loop has.
    """
    module = sys.modules.get("asyncio") or importlib.import_module("asyncio")
    return cast("asyncio.AbstractEventLoop", module.get_running_loop())


__all__ = ["on_loop", "poster", "running_loop", "spawn"]
