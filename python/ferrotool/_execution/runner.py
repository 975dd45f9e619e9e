"""What calls run with: `ToolkitConfig`, and the `Runner` that a toolkit shares.

The toolkit, its snapshots and their views share one runner: worker threads, progress sinks,
middleware.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, final

import anyio
import sniffio

from ferrotool._execution.middleware import Middleware, Next, onion
from ferrotool._values.context import ProgressSink
from ferrotool._values.execution import UNSET, ExecutionConfig


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolkitConfig:
    """How a toolkit runs its tools.

    Attributes:
        max_threads: Worker threads for sync tools (a bounded pool shared by the toolkit's
            snapshots).
        execution: How calls run (timeout, retries, a batch's concurrency) where neither the
            tool nor the call says otherwise (see `ExecutionConfig`).
        max_concurrent_calls: How many calls of all batches of the toolkit (and its registries
            and views) run at the same time.
        allow_removal: Whether tools and groups may be removed after registration.
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
class Runner:
    """What a toolkit's calls run with, shared by the toolkit, its registries and their views.

    The limits are kept per async library (asyncio, trio): a limiter belongs to the event loop
    of the library that first used it, and one toolkit may serve both in one process.

    Attributes:
        config: The toolkit's configuration.
        progress: Sinks that receive every call's progress chunks.
        onion: The toolkit's middleware, composed once for every view without middleware of
            its own (``None`` without middleware).
    """

    __slots__ = ("_limits", "config", "onion", "progress")

    def __init__(self, config: ToolkitConfig, progress: tuple[ProgressSink, ...] = ()) -> None:

        self.config = config
        self.progress = progress
        self.onion: Final[Next | None] = onion(config.middleware)
        self._limits: dict[str, tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]] = {}

    def _limiters(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        library = sniffio.current_async_library()
        limits = self._limits.get(library)
        if limits is None:
            limits = self._limits.setdefault(
                library,
                (
                    anyio.CapacityLimiter(self.config.max_threads),
                    anyio.CapacityLimiter(self.config.max_concurrent_calls),
                ),
            )
        return limits

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """Bounds the worker threads of sync tools."""
        return self._limiters()[0]

    @property
    def calls(self) -> anyio.CapacityLimiter:
        """Bounds the calls of all batches running at once."""
        return self._limiters()[1]

    def sinks(self, on_progress: ProgressSink | None) -> tuple[ProgressSink, ...]:
        """The progress sinks of one call: the toolkit's, and the call's own."""
        return self.progress if on_progress is None else (*self.progress, on_progress)


__all__ = ["Runner", "ToolkitConfig"]
