"""What calls run with: `ToolkitConfig`, and the `Runner` that a toolkit shares.

The toolkit, its snapshots and their views share one runner: worker threads, progress sinks,
middleware.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

import anyio
import anyio.to_thread

from ferrotool import _core
from ferrotool._execution.loopback import poster, running_loop, running_trio, spawn
from ferrotool._execution.middleware import Middleware, onion
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import ProgressSink
from ferrotool._values.execution import DEFAULTS, UNSET, ExecutionConfig
from ferrotool.errors import StuckToolWarning

_log: Final = logging.getLogger("ferrotool")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolkitConfig:
    """How a toolkit runs its tools.

    Attributes:
        max_threads: Worker threads for sync tools, per event loop (a bounded pool shared by
            the toolkit's snapshots); a thread counts until its tool returns, also after its
            call timed out.
        execution: How calls run (timeout, retries, a batch's concurrency) where neither the
            tool nor the call says otherwise (see `ExecutionConfig`).
        max_concurrent_calls: How many calls of all batches of the toolkit (and its registries
            and views) run at the same time.
        allow_removal: Whether tools and groups may be removed after registration. When not,
            `Toolkit.remove`, `remove_group` and `remove_if_same` are no-ops that log a
            warning (the chapter's behaviour); `remove_mcp` still raises.
        meta_tool: Register the ``reset_tools`` meta tool while a session-scoped group exists,
            so the model can switch groups on and off in its session.
        middleware: Wraps every call (see `Middleware`), the first outermost.
        session_attempts: How many compare-and-set attempts a session update (such as
            ``reset_tools``) makes before it gives up with an error result.
    """

    max_threads: int = 40
    execution: ExecutionConfig = UNSET
    max_concurrent_calls: int = 256
    allow_removal: bool = True
    meta_tool: bool = False
    middleware: Sequence[Middleware] = field(default=())
    session_attempts: int = 16

    def __post_init__(self) -> None:
        if self.max_threads < 1:
            raise ValueError(f"max_threads must be at least 1, got {self.max_threads}")
        if self.max_concurrent_calls < 1:
            raise ValueError(
                f"max_concurrent_calls must be at least 1, got {self.max_concurrent_calls}"
            )
        if self.session_attempts < 1:
            raise ValueError(f"session_attempts must be at least 1, got {self.session_attempts}")
        object.__setattr__(self, "middleware", tuple(self.middleware))


@final
class _Limits:
    """The limits of one event loop.

    Attributes:
        threads: Worker slots of sync tools, ``max_threads`` of them; a slot is held from the
            call's start until its thread has returned (also when the call ended before).
        calls: The calls of all batches running at once, ``max_concurrent_calls`` of them.
        pool: What anyio's thread pool is handed: unbounded, since ``threads`` bounds it.
    """

    __slots__ = ("calls", "pool", "threads")

    def __init__(self, config: ToolkitConfig) -> None:
        self.threads = anyio.CapacityLimiter(config.max_threads)
        self.calls = anyio.CapacityLimiter(config.max_concurrent_calls)
        self.pool = anyio.CapacityLimiter(math.inf)


@final
class _Job:
    """A sync tool's invocation on a worker thread, awaited by a task of its own.

    For a call with a timeout: the task, not the call's, awaits the thread, so the call may
    end (time out, be cancelled) while the thread goes on, and the slot is given back only
    once anyio has the thread back, never before: no more than ``max_threads`` threads ever
    run sync tools of a loop.
    """

    __slots__ = ("done", "error", "value", "work")

    def __init__(self, work: Callable[[], object]) -> None:
        self.work = work
        self.done = anyio.Event()
        self.value: object = None
        self.error: BaseException | None = None

    async def run(self, limits: _Limits, borrower: object) -> None:
        try:
            self.value = await anyio.to_thread.run_sync(
                self.work, limiter=limits.pool, abandon_on_cancel=True
            )
        except BaseException as exc:  # handed to the call: this task raises nothing
            self.error = exc
        finally:
            limits.threads.release_on_behalf_of(borrower)
            self.done.set()


@final
class _Slot:
    """The worker slot of a call without a timeout, awaited in the call's own task.

    Such a call ends before its thread only when its caller is cancelled: then the slot goes
    back when the tool returns, handed to the loop from the thread (or at once, when the tool
    had not started: it never will).
    """

    __slots__ = ("_borrower", "_finished", "_left", "_limits", "_lock", "_post", "_started")

    def __init__(self, limits: _Limits, borrower: object) -> None:
        self._limits = limits
        self._borrower = borrower
        self._post = poster()
        self._lock = threading.Lock()
        self._started = self._finished = self._left = False

    def run(self, work: Callable[[], object]) -> object:
        """On the worker thread: run ``work`` unless the call has already ended."""
        if not self._start():
            return None
        try:
            return work()
        finally:
            if self._finish():
                with contextlib.suppress(RuntimeError):  # the loop is gone, and its limits
                    self._post(self.release)

    def _start(self) -> bool:
        with self._lock:
            self._started = not self._left
            return self._started

    def _finish(self) -> bool:
        """The tool returned: whether its call has ended already."""
        with self._lock:
            self._finished = True
            return self._left

    def leave(self) -> bool:
        """The call ends: whether its thread is done with the tool (or never started it)."""
        with self._lock:
            self._left = True
            return self._finished or not self._started

    def release(self) -> None:
        """Give the slot back (on the loop's thread)."""
        self._limits.threads.release_on_behalf_of(self._borrower)


@final
class Runner:
    """What a toolkit's calls run with, shared by the toolkit, its registries and their views.

    The limits are kept per event loop (an asyncio loop, a trio run): one toolkit may serve
    loops in many threads, each with ``max_threads`` worker slots and ``max_concurrent_calls``
    calls of its own. A loop's limits go when the loop is collected.

    Attributes:
        config: The toolkit's configuration.
        progress: Sinks that receive every call's progress chunks.
        onion: The toolkit's middleware, composed once for every view without middleware of
            its own (``None`` without middleware).
        execution: The toolkit's execution settings over the defaults, every field set: what
            a batch without settings of its own runs with.
    """

    __slots__ = ("_limits", "_lock", "_strong", "config", "execution", "onion", "progress")

    def __init__(self, config: ToolkitConfig, progress: tuple[ProgressSink, ...] = ()) -> None:
        self.config: Final[ToolkitConfig] = config
        self.progress: Final[tuple[ProgressSink, ...]] = progress
        self.onion: Final[_core.Onion | None] = onion(config.middleware)
        self.execution: Final[ExecutionConfig] = config.execution.over(DEFAULTS)
        self._limits: weakref.WeakKeyDictionary[object, _Limits] = weakref.WeakKeyDictionary()
        self._strong: dict[object, _Limits] = {}  # loops that cannot be weakly referenced
        self._lock = threading.Lock()

    def _limiters(self) -> _Limits:
        loop = _current_loop()
        try:
            limits = self._limits.get(loop)
        except TypeError:  # no weak references to this kind of loop
            limits = self._strong.get(loop)
        if limits is None:
            with self._lock:
                limits = _Limits(self.config)
                try:
                    limits = self._limits.setdefault(loop, limits)
                except TypeError:
                    limits = self._strong.setdefault(loop, limits)
        return limits

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """Bounds the worker threads of sync tools on the running loop."""
        return self._limiters().threads

    @property
    def calls(self) -> anyio.CapacityLimiter:
        """Bounds the calls of all batches running at once on the running loop."""
        return self._limiters().calls

    @property
    def loops(self) -> int:
        """How many event loops hold limits now (a collected loop's are gone)."""
        return len(self._limits) + len(self._strong)

    async def in_thread(
        self, work: Callable[[], object], call: ToolUseBlock, *, timed: bool = False
    ) -> object:
        """Run a sync tool's invocation on a worker thread, holding one of its loop's slots.

        The slot is held until the thread returns, also when the call ends before (its
        timeout, a cancellation): the call ends at once, the thread goes on alone, and a
        `StuckToolWarning` names the tool. A call with a timeout (``timed``) awaits its thread
        through a task of its own, so that the slot goes back only once anyio has the thread
        back; one without, which ends early only when its caller is cancelled, awaits it in
        its own task (a hop less).

        Returns:
            What ``work`` returned.

        Raises:
            Exception: What ``work`` raised.
        """
        limits = self._limiters()
        borrower = object()
        await limits.threads.acquire_on_behalf_of(borrower)
        if not timed:
            slot = _Slot(limits, borrower)
            try:
                return await anyio.to_thread.run_sync(
                    slot.run, work, limiter=limits.pool, abandon_on_cancel=True
                )
            finally:
                if slot.leave():
                    slot.release()
                else:
                    _stuck(call, self.config.max_threads)
        job = _Job(work)
        try:
            spawn(functools.partial(job.run, limits, borrower))
        except BaseException:
            limits.threads.release_on_behalf_of(borrower)
            raise
        try:
            await job.done.wait()
        except BaseException:
            if not job.done.is_set():
                _stuck(call, self.config.max_threads)
            raise
        if job.error is not None:
            raise job.error
        return job.value

    def sinks(self, on_progress: ProgressSink | None) -> tuple[ProgressSink, ...]:
        """The progress sinks of one call: the toolkit's, and the call's own."""
        return self.progress if on_progress is None else (*self.progress, on_progress)


def _current_loop() -> object:
    """The running event loop: the asyncio loop, or the trio run's token."""
    trio = running_trio()
    if trio is not None:
        return trio.lowlevel.current_trio_token()
    return running_loop()


def _stuck(call: ToolUseBlock, max_threads: int) -> None:
    message = (
        f"sync tool {call.name!r} (call {call.id}) still runs on its worker thread after its "
        f"call ended; the thread keeps one of the {max_threads} worker slots until it returns"
    )
    _log.warning(message)
    with contextlib.suppress(Warning):  # warnings made errors: the call's own end goes on
        warnings.warn(message, StuckToolWarning, stacklevel=3)


__all__ = ["Runner", "ToolkitConfig"]
