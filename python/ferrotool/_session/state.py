"""Per-session tool state: `ToolContextState`, and the `SessionStore` that keeps it.

A session's state is a value: read it, make a changed copy, and store the copy with a
compare-and-set on the revision it was read at. Two writers that change one session at once never
lose an update: the loser re-reads and re-applies its change (`update_session`), or, after too
many attempts, gets a `SessionConflict`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, Protocol, final, runtime_checkable

import anyio
import orjson

from ferrotool._permissions.state import EMPTY_PERMISSIONS, PermissionContextState
from ferrotool._session.pending import PendingToolCall, apart
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import SessionConflict

STATE_FORMAT: Final = 2
"""The version of `ToolContextState`'s JSON form."""

_EMPTY_FLAGS: Final[Mapping[str, bool]] = MappingProxyType({})
_EMPTY_DATA: Final[Mapping[str, JsonValue]] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True, order=True)
class SessionKey:
    """Which session a state belongs to.

    Attributes:
        user_id: The user (``""`` when there is none).
        session_id: The session within the user's.
    """

    user_id: str
    session_id: str

    def __str__(self) -> str:
        return f"{self.user_id}/{self.session_id}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContextState:
    """The tool state of one session: an immutable value.

    Attributes:
        groups: Group activation set for this session, by group name; a group not listed has
            its declared initial activation.
        skills: Skills loaded in this session.
        pending_calls: Calls waiting for a person's approval or for external execution, in
            the order they were suspended.
        permissions: The session's permission mode, working directories and rules (sticky
            decisions join its rules).
        data: JSON values tools keep in the session, by key (the todo list of ``todo_write``
            under ``"todos"``, say); read-only.
        revision: The store's revision this value was read at (0: never stored). Not part of
            the value's identity: two states with the same content are equal.
    """

    groups: Mapping[str, bool] = field(default_factory=lambda: _EMPTY_FLAGS)
    skills: frozenset[str] = frozenset()
    pending_calls: tuple[PendingToolCall, ...] = ()
    permissions: PermissionContextState = EMPTY_PERMISSIONS
    data: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY_DATA)
    revision: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        # Defensive, canonical copies: a state never shares a mutable mapping with its caller.
        if not isinstance(self.groups, MappingProxyType):
            object.__setattr__(self, "groups", MappingProxyType(dict(sorted(self.groups.items()))))
        if not isinstance(self.data, MappingProxyType):
            object.__setattr__(self, "data", MappingProxyType(dict(sorted(self.data.items()))))

    def is_active(self, group: str, default: bool) -> bool:
        """Whether ``group`` is active in this session (``default``: its initial activation)."""
        return self.groups.get(group, default)

    def with_groups(self, flags: Mapping[str, bool]) -> ToolContextState:
        """A copy with these groups switched on or off (others unchanged)."""
        merged = dict(self.groups)
        merged.update(flags)
        return replace(self, groups=MappingProxyType(dict(sorted(merged.items()))))

    def with_skills(self, skills: Iterable[str]) -> ToolContextState:
        """A copy with these skills loaded as well."""
        return replace(self, skills=self.skills | frozenset(skills))

    def with_data(self, key: str, value: JsonValue | None) -> ToolContextState:
        """A copy with a tool's value set under ``key`` (``None`` removes it).

        The value must be JSON (it is stored with the state): build it fresh, never share a
        mutable value with the caller.
        """
        data = dict(self.data)
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        return replace(self, data=MappingProxyType(dict(sorted(data.items()))))

    def with_pending(self, calls: Iterable[PendingToolCall]) -> ToolContextState:
        """A copy with these calls waiting as well."""
        return replace(self, pending_calls=(*self.pending_calls, *calls))

    def without_pending(self, call_ids: Iterable[str]) -> ToolContextState:
        """A copy where these calls no longer wait."""
        done = set(call_ids)
        return replace(self, pending_calls=tuple(c for c in self.pending_calls if c.id not in done))

    def pending(self, call_id: str) -> PendingToolCall | None:
        """The waiting call of this id, if any."""
        return next((pending for pending in self.pending_calls if pending.id == call_id), None)

    def with_permissions(self, permissions: PermissionContextState) -> ToolContextState:
        """A copy with another permission state."""
        return replace(self, permissions=permissions)

    def with_revision(self, revision: int) -> ToolContextState:
        """The same state, read at another revision."""
        return replace(self, revision=revision)

    def to_json(self) -> bytes:
        """The versioned JSON form (orjson); `from_json` reads it back.

        The revision is not part of it: the store keeps the revision beside the value.
        """
        return orjson.dumps(
            {
                "format": STATE_FORMAT,
                "groups": dict(self.groups),
                "skills": sorted(self.skills),
                "pending_calls": [pending.to_dict() for pending in self.pending_calls],
                "permissions": self.permissions.to_dict(),
                "data": dict(self.data),
            }
        )

    @classmethod
    def from_json(cls, data: str | bytes, *, revision: int = 0) -> ToolContextState:
        """Read the JSON form (this format, or format 1, whose waiting calls were external).

        Raises:
            ValueError: Not a tool state, or a format this version cannot read.
        """
        raw = orjson.loads(data)
        form = raw.get("format") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or form not in (1, STATE_FORMAT):
            raise ValueError(f"not a format {STATE_FORMAT} (or 1) tool state")
        groups, skills = raw.get("groups", {}), raw.get("skills", [])
        pending = raw.get("pending_calls", [])
        values = raw.get("data", {})
        if not (
            isinstance(groups, dict)
            and all(isinstance(v, bool) for v in groups.values())
            and isinstance(skills, list)
            and all(isinstance(s, str) for s in skills)
            and isinstance(pending, list)
            and isinstance(values, dict)
        ):
            raise ValueError("malformed tool state")
        if form == 1:  # waiting calls were external ones of no suspension; sticky decisions
            pending = [
                {**item, "reply_id": ""} if isinstance(item, dict) else item for item in pending
            ]
            permissions = EMPTY_PERMISSIONS  # were free-form strings, never read: dropped
        else:
            permissions = PermissionContextState.from_dict(raw.get("permissions", {}))
        return cls(
            groups=MappingProxyType(dict(sorted(groups.items()))),
            skills=frozenset(skills),
            pending_calls=tuple(PendingToolCall.from_dict(item) for item in pending),
            permissions=permissions,
            data=MappingProxyType(dict(sorted(values.items()))),
            revision=revision,
        )


EMPTY_STATE: Final = ToolContextState()
"""The state of a session nothing has changed yet."""


def session_key(context: RuntimeContext) -> SessionKey:
    """The session a context belongs to.

    Raises:
        ValueError: The context has no session id.
    """
    if not context.session_id:
        raise ValueError("the runtime context has no session_id: a session needs one")
    return SessionKey(context.user_id or "", context.session_id)


@runtime_checkable
class SessionStore(Protocol):
    """Where session states live: in process, in Redis, or anywhere with a compare-and-set."""

    async def load(self, key: SessionKey) -> ToolContextState:
        """The session's state, with the revision it was read at.

        A session never stored is `EMPTY_STATE` at revision 0.
        """
        ...

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        """Store ``state`` if the session is still at ``expected_revision``.

        Returns:
            The stored state with its new revision, or ``None`` if another writer came first.
        """
        ...


DEFAULT_ATTEMPTS: Final = 16
"""How many times `update_session` tries before a `SessionConflict`."""


async def update_session(
    store: SessionStore,
    key: SessionKey,
    change: Callable[[ToolContextState], ToolContextState],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    current: ToolContextState | None = None,
    backoff: float = 0.002,
    max_backoff: float = 0.25,
) -> ToolContextState:
    """Apply ``change`` to a session's state with compare-and-set, re-reading on conflict.

    ``change`` must be a pure function of the state it is given: it may run more than once.
    ``current``, a state already read (with its revision), saves the first read: when nobody
    wrote since, the update is a single compare-and-set. After a lost compare-and-set the next
    attempt waits a random time up to ``backoff`` seconds, doubled after every loss up to
    ``max_backoff`` ("full jitter"), so writers contending for one session spread out instead
    of colliding again in lockstep.

    Returns:
        The stored state.

    Raises:
        SessionConflict: Every attempt lost to another writer.
        ValueError: ``attempts`` is not positive.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    ceiling = backoff
    for attempt in range(attempts):
        if attempt:
            await anyio.sleep(random.uniform(0, ceiling))
            ceiling = min(max_backoff, ceiling * 2)
        if current is None:
            current = await store.load(key)
        stored = await store.compare_and_set(key, current.revision, change(current))
        if stored is not None:
            return stored
        current = None
    raise SessionConflict(f"session {key} changed under {attempts} update attempts in a row")


async def store_waiting(
    store: SessionStore,
    key: SessionKey,
    asked: Sequence[PendingToolCall],
    placeholders: Sequence[ToolResultBlock],
    calls: Iterable[ToolUseBlock],
    replacing: str | None = None,
) -> tuple[PendingToolCall, ...]:
    """Add waiting calls to a session, with ids no call waiting there shares.

    The ids are chosen in the compare-and-set that stores the calls (see
    `ferrotool._session.pending.apart`), so two writers at once never pick the same.

    Args:
        store: The session store.
        key: The session.
        asked: The waiting calls, in call order.
        placeholders: The result of each, in the same order.
        calls: Every call of their batch.
        replacing: A reply id whose waiting calls these replace: an earlier attempt to store
            the same suspension, which a crash interrupted before it was recorded.

    Returns:
        The waiting calls as stored.
    """
    batch = tuple(calls)
    stored = tuple(asked)

    def add(state: ToolContextState) -> ToolContextState:
        nonlocal stored
        if replacing is not None:
            state = state.without_pending(
                p.id for p in state.pending_calls if p.reply_id == replacing
            )
        stored = apart(asked, placeholders, batch, state.pending_calls)
        return state.with_pending(stored)

    await update_session(store, key, add)
    return stored


__all__ = [
    "DEFAULT_ATTEMPTS",
    "EMPTY_STATE",
    "STATE_FORMAT",
    "SessionKey",
    "SessionStore",
    "ToolContextState",
    "session_key",
    "store_waiting",
    "update_session",
]
