"""`ExpiringSessionStore`: ``ferrotool serve``'s in-memory tool state, forgotten when idle.

The default `ferrotool.InMemorySessionStore` keeps every session's state for the life of the
process; a server open to many clients (and to stateless ones, each call of which may start a
session) would grow without end. This store forgets a session that has seen no load or write
for ``ttl`` seconds, as the SDK closes an idle handshake-era session and a Redis store lets a
session's key expire.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final, final

from ferrotool._session.state import EMPTY_STATE, SessionKey, ToolContextState


@final
class ExpiringSessionStore:
    """Session states in this process's memory, each forgotten ``ttl`` seconds after its last use.

    Args:
        ttl: Seconds a session's state outlives its last load or write.
        clock: The monotonic clock (seconds).
    """

    __slots__ = ("_clock", "_lock", "_next_sweep", "_states", "_ttl")

    def __init__(self, ttl: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not ttl > 0:
            raise ValueError(f"ttl must be more than 0 seconds, got {ttl!r}")
        self._ttl: Final = ttl
        self._clock: Final = clock
        self._states: dict[SessionKey, tuple[ToolContextState, float]] = {}
        self._lock = threading.Lock()
        self._next_sweep = clock() + ttl

    async def load(self, key: SessionKey) -> ToolContextState:
        """The session's state (`EMPTY_STATE` if never stored, or forgotten)."""
        now = self._clock()
        with self._lock:
            self._sweep(now)
            current = self._live(key, now)
            if current is not EMPTY_STATE:
                self._states[key] = (current, now)
            return current

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        """Store ``state`` if the session is still at ``expected_revision``."""
        now = self._clock()
        with self._lock:
            self._sweep(now)
            current = self._live(key, now)
            if current.revision != expected_revision:
                return None
            stored = state.with_revision(expected_revision + 1)
            self._states[key] = (stored, now)
            return stored

    def _live(self, key: SessionKey, now: float) -> ToolContextState:
        """The session's state, unless it has been idle longer than the ttl (then forgotten)."""
        entry = self._states.get(key)
        if entry is None:
            return EMPTY_STATE
        if entry[1] < now - self._ttl:
            del self._states[key]
            return EMPTY_STATE
        return entry[0]

    def _sweep(self, now: float) -> None:
        """Forget the sessions idle longer than the ttl (at most once per ttl)."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + self._ttl
        oldest = now - self._ttl
        for key in [key for key, (_, used) in self._states.items() if used < oldest]:
            del self._states[key]

    def __len__(self) -> int:
        return len(self._states)


__all__ = ["ExpiringSessionStore"]
