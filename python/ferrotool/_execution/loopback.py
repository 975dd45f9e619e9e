"""Sinks called on their event loop's thread, whoever calls them: `on_loop`.

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

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

import sniffio

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


def poster() -> Callable[..., object]:
    """The running loop's thread-safe "run this soon" (first in, first out).

    Raises ``RuntimeError`` when called after the loop has ended.
    """
    if sniffio.current_async_library() == "trio":
        import trio  # imported only when trio runs: it is no dependency

        return trio.lowlevel.current_trio_token().run_sync_soon
    return asyncio.get_running_loop().call_soon_threadsafe


def _deliver(sink: Callable[[T], object], item: T) -> None:
    """Hand ``item`` to ``sink`` on the loop; a failing sink is logged, never fatal to the loop."""
    try:
        sink(item)
    except Exception:
        _log.exception("sink %r failed on an item sent from a worker thread", sink)


__all__ = ["on_loop", "poster"]
