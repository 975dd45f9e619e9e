"""`InMemorySessionStore`: the default store, in this process's memory."""

from __future__ import annotations

import threading
from typing import final

from ferrotool._session.state import EMPTY_STATE, SessionKey, ToolContextState


@final
class InMemorySessionStore:
    """The default store: session states in this process's memory, safe across threads.

    States are values, so readers share them; writes take a short lock.
    """

    __slots__ = ("_lock", "_states")

    def __init__(self) -> None:
        self._states: dict[SessionKey, ToolContextState] = {}
        self._lock = threading.Lock()

    async def load(self, key: SessionKey) -> ToolContextState:
        """The session's state (`EMPTY_STATE` if never stored)."""
        return self._states.get(key, EMPTY_STATE)

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        """Store ``state`` if the session is still at ``expected_revision``."""
        with self._lock:
            current = self._states.get(key, EMPTY_STATE)
            if current.revision != expected_revision:
                return None
            stored = state.with_revision(expected_revision + 1)
            self._states[key] = stored
            return stored

    def __len__(self) -> int:
        return len(self._states)


__all__ = ["InMemorySessionStore"]
