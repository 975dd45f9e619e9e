"""One behavioural suite for every `SessionStore`: in memory and in a real Redis server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
import pytest

from ferrotool import (
    EMPTY_STATE,
    InMemorySessionStore,
    PendingToolCall,
    PermissionBehavior,
    PermissionContextState,
    PermissionMode,
    PermissionRule,
    SessionConflict,
    SessionKey,
    SessionStore,
    SuspensionKind,
    ToolContextState,
    ToolUseBlock,
    update_session,
)

if TYPE_CHECKING:
    from ferrotool.redis import RedisSessionStore

# Marked here as well as by tests/conftest.py: anyio's plugin drops the parameters of an async
# test whose mark is only added after collection.
pytestmark = pytest.mark.anyio

KEY = SessionKey("user-1", "session-1")
# redis-py's client (`redis.asyncio`), which `RedisSessionStore` is built on, runs on asyncio only.
REDIS_NEEDS_ASYNCIO = "RedisSessionStore is built on redis.asyncio, which runs on asyncio only"


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, anyio_backend: str) -> AsyncIterator[SessionStore]:
    """Each store kind the suite runs against."""
    if request.param == "memory":
        yield InMemorySessionStore()
        return
    if anyio_backend != "asyncio":
        pytest.skip(REDIS_NEEDS_ASYNCIO)
    from ferrotool.redis import RedisSessionStore

    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    async with RedisSessionStore.from_url(url, prefix=prefix) as redis_store:
        yield redis_store


@pytest.fixture
def make_redis_store(
    redis_url: str, redis_prefix: str, anyio_backend: str
) -> Callable[..., RedisSessionStore]:
    """Redis stores under this test's prefix; the test closes them (``async with``)."""
    if anyio_backend != "asyncio":
        pytest.skip(REDIS_NEEDS_ASYNCIO)
    from ferrotool.redis import RedisSessionStore

    def make(*, ttl: float | None = None, decode_responses: bool = False) -> RedisSessionStore:
        return RedisSessionStore.from_url(
            redis_url, prefix=redis_prefix, ttl=ttl, decode_responses=decode_responses
        )

    return make


class CountingStore:
    """Delegates to a store; yields to other tasks between load and compare-and-set, and counts
    the compare-and-sets that lost."""

    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner
        self.conflicts = 0
        self.writes = 0

    async def load(self, key: SessionKey) -> ToolContextState:
        state = await self.inner.load(key)
        await anyio.lowlevel.checkpoint()
        return state

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        stored = await self.inner.compare_and_set(key, expected_revision, state)
        if stored is None:
            self.conflicts += 1
        else:
            self.writes += 1
        return stored


class AlwaysConflicting:
    """A store where another writer always comes first."""

    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner
        self.attempts = 0

    async def load(self, key: SessionKey) -> ToolContextState:
        return await self.inner.load(key)

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        self.attempts += 1
        return None


def full_state() -> ToolContextState:
    return (
        EMPTY_STATE.with_groups({"files": True, "shell": False, "ünïcode": True})
        .with_skills(["pdf", "spreadsheets"])
        .with_pending(
            [
                PendingToolCall(
                    call=ToolUseBlock("call_1", "read_file", '{"path": "/tmp/ä b.txt"}'),
                    kind=SuspensionKind.EXTERNAL,
                    reply_id="r1",
                ),
                PendingToolCall(
                    call=ToolUseBlock("call_2", "run", '{"argv": ["ls", "-l"], "n": 3}'),
                    kind=SuspensionKind.CONFIRM,
                    reply_id="r1",
                    message="Permission required for run",
                    suggestions=(
                        PermissionRule(
                            tool_name="run", behavior=PermissionBehavior.ALLOW, source="suggested"
                        ),
                    ),
                ),
                PendingToolCall(
                    call=ToolUseBlock("call_3", "noop", ""),
                    kind=SuspensionKind.EXTERNAL,
                    reply_id="r1",
                ),
            ]
        )
    )


# --- both stores -------------------------------------------------------------------------------


async def test_is_a_session_store(store: SessionStore) -> None:
    assert isinstance(store, SessionStore)


async def test_absent_session_loads_empty_at_revision_0(store: SessionStore) -> None:
    state = await store.load(SessionKey("nobody", "nothing"))
    assert state == EMPTY_STATE
    assert state.revision == 0


async def test_compare_and_set_increments_the_revision(store: SessionStore) -> None:
    first = await store.compare_and_set(KEY, 0, EMPTY_STATE.with_groups({"a": True}))
    assert first is not None
    assert first.revision == 1
    assert first.groups == {"a": True}
    loaded = await store.load(KEY)
    assert loaded == first
    assert loaded.revision == 1

    second = await store.compare_and_set(KEY, 1, loaded.with_groups({"b": False}))
    assert second is not None
    assert second.revision == 2
    loaded = await store.load(KEY)
    assert loaded.groups == {"a": True, "b": False}
    assert loaded.revision == 2


async def test_compare_and_set_conflict_writes_nothing(store: SessionStore) -> None:
    assert await store.compare_and_set(KEY, 0, EMPTY_STATE.with_skills(["x"])) is not None
    # A writer that read revision 0 too loses, and so does one from the future.
    assert await store.compare_and_set(KEY, 0, EMPTY_STATE.with_skills(["y"])) is None
    assert await store.compare_and_set(KEY, 7, EMPTY_STATE.with_skills(["z"])) is None
    loaded = await store.load(KEY)
    assert loaded.skills == {"x"}
    assert loaded.revision == 1
    # An absent session is at revision 0, nothing else.
    other = SessionKey("user-1", "other")
    assert await store.compare_and_set(other, 1, EMPTY_STATE) is None
    assert (await store.load(other)).revision == 0


async def test_the_revision_of_the_given_state_is_ignored(store: SessionStore) -> None:
    stored = await store.compare_and_set(KEY, 0, EMPTY_STATE.with_revision(41))
    assert stored is not None
    assert stored.revision == 1


async def test_json_round_trip_of_a_full_state(store: SessionStore) -> None:
    state = full_state()
    state = ToolContextState(
        groups=state.groups,
        skills=state.skills,
        pending_calls=state.pending_calls,
        permissions=PermissionContextState(mode=PermissionMode.ACCEPT_EDITS).with_rules(
            [
                PermissionRule(
                    tool_name="shell", rule_content="rm", behavior=PermissionBehavior.DENY
                ),
                PermissionRule(tool_name="files", behavior=PermissionBehavior.ALLOW),
                # No tool is named in Chinese (such a rule can never match): the text is
                # the rule's content and source.
                PermissionRule(
                    tool_name="net",
                    rule_content="网络",
                    behavior=PermissionBehavior.ASK,
                    source="会话",
                ),
            ]
        ),
    )
    assert await store.compare_and_set(KEY, 0, state) is not None
    loaded = await store.load(KEY)
    assert loaded == state
    assert loaded.revision == 1
    assert dict(loaded.groups) == {"files": True, "shell": False, "ünïcode": True}
    assert loaded.skills == frozenset({"pdf", "spreadsheets"})
    assert [c.id for c in loaded.pending_calls] == ["call_1", "call_2", "call_3"]
    assert loaded.pending_calls[0].call == ToolUseBlock(
        "call_1", "read_file", '{"path": "/tmp/ä b.txt"}'
    )
    assert loaded.pending_calls[1].call.input == {"argv": ["ls", "-l"], "n": 3}
    assert loaded.pending_calls[1].suggestions == state.pending_calls[1].suggestions
    assert loaded.pending_calls[2].call.arguments == ""
    assert loaded.permissions == state.permissions
    assert [rule.rule_content for rule in loaded.permissions.deny_rules["shell"]] == ["rm"]

    done = await store.compare_and_set(KEY, 1, loaded.without_pending(["call_2"]))
    assert done is not None
    assert [c.id for c in (await store.load(KEY)).pending_calls] == ["call_1", "call_3"]


async def test_update_session_applies_the_change(store: SessionStore) -> None:
    stored = await update_session(store, KEY, lambda s: s.with_skills(["a"]))
    assert stored.revision == 1
    stored = await update_session(store, KEY, lambda s: s.with_skills(["b"]))
    assert stored.revision == 2
    assert (await store.load(KEY)).skills == {"a", "b"}


async def test_update_session_loses_no_update_under_contention(store: SessionStore) -> None:
    counting = CountingStore(store)
    tasks = 50

    async def flip(i: int) -> None:
        # Every task reads before any writes, so each round has one winner: the last task
        # needs up to `tasks` attempts, more than update_session's default.
        await update_session(
            counting, KEY, lambda s: s.with_groups({f"g{i:02}": True}), attempts=tasks
        )

    async with anyio.create_task_group() as group:
        for i in range(tasks):
            group.start_soon(flip, i)

    final = await store.load(KEY)
    assert dict(final.groups) == {f"g{i:02}": True for i in range(tasks)}
    assert final.revision == tasks
    assert counting.writes == tasks
    assert counting.conflicts > 0, "the tasks never collided: the test tested nothing"


async def test_session_conflict_when_attempts_run_out(store: SessionStore) -> None:
    assert await store.compare_and_set(KEY, 0, EMPTY_STATE.with_skills(["kept"])) is not None
    losing = AlwaysConflicting(store)
    with pytest.raises(SessionConflict, match="3 update attempts"):
        await update_session(losing, KEY, lambda s: s.with_skills(["lost"]), attempts=3)
    assert losing.attempts == 3
    loaded = await store.load(KEY)
    assert loaded.skills == {"kept"}
    assert loaded.revision == 1


TRICKY_KEYS = [
    SessionKey("a:b", "c"),
    SessionKey("a", "b:c"),
    SessionKey("a:b:c", ""),
    SessionKey("", "a:b:c"),
    SessionKey("a%3Ab", "c"),
    SessionKey("a/b", "c"),
    SessionKey("a", "b/c"),
    SessionKey("ü", "会话"),
    SessionKey("u\u0308", "会话"),
    SessionKey("*", "?"),
    SessionKey("x", "*"),
    SessionKey("🦀 user", "session\n2"),
]


async def test_keys_with_colons_and_unicode_do_not_collide(store: SessionStore) -> None:
    for i, key in enumerate(TRICKY_KEYS):
        assert await store.compare_and_set(key, 0, EMPTY_STATE.with_skills([f"s{i}"])) is not None
    for i, key in enumerate(TRICKY_KEYS):
        loaded = await store.load(key)
        assert loaded.skills == {f"s{i}"}, key
        assert loaded.revision == 1


# --- Redis only --------------------------------------------------------------------------------


def test_redis_keys_are_distinct_and_prefixed() -> None:
    pytest.importorskip("redis")
    from ferrotool.redis import RedisSessionStore

    store = RedisSessionStore.from_url("redis://127.0.0.1:1/0", prefix="p:")
    names = [store.redis_key(key) for key in TRICKY_KEYS]
    assert len(set(names)) == len(names)
    assert all(name.startswith("p:") for name in names)
    assert store.redis_key(SessionKey("a:b", "c")) == "p:a%3Ab:c"
    assert store.redis_key(SessionKey("ü", "x y")) == "p:%C3%BC:x%20y"


@pytest.mark.parametrize("ttl", [0, -1.0, float("nan"), float("inf")])
def test_redis_ttl_must_be_positive(ttl: float) -> None:
    pytest.importorskip("redis")
    from ferrotool.redis import RedisSessionStore

    with pytest.raises(ValueError, match="ttl must be a positive number"):
        RedisSessionStore.from_url("redis://127.0.0.1:1/0", ttl=ttl)


async def test_redis_ttl_expires_the_session(
    make_redis_store: Callable[..., RedisSessionStore],
) -> None:
    async with make_redis_store(ttl=0.2) as store:
        assert store.ttl == 0.2
        assert await store.compare_and_set(KEY, 0, EMPTY_STATE.with_skills(["a"])) is not None
        assert (await store.load(KEY)).skills == {"a"}
        await anyio.sleep(0.45)
        gone = await store.load(KEY)
        assert gone == EMPTY_STATE
        assert gone.revision == 0
        # A writer that read the expired session loses; one that reads again wins.
        assert await store.compare_and_set(KEY, 1, EMPTY_STATE) is None
        stored = await update_session(store, KEY, lambda s: s.with_skills(["b"]))
        assert stored.revision == 1


async def test_redis_every_write_renews_the_ttl(
    make_redis_store: Callable[..., RedisSessionStore],
) -> None:
    async with make_redis_store(ttl=0.4) as store:
        for _ in range(4):
            await update_session(store, KEY, lambda s: s.with_skills([str(s.revision)]))
            await anyio.sleep(0.15)
        assert (await store.load(KEY)).revision == 4


async def test_redis_without_ttl_never_expires(
    make_redis_store: Callable[..., RedisSessionStore],
) -> None:
    async with make_redis_store() as store:
        assert store.ttl is None
        await update_session(store, KEY, lambda s: s.with_skills(["a"]))
        assert await store._client.pttl(store.redis_key(KEY)) == -1


async def test_redis_stores_share_sessions_and_conflicts(
    make_redis_store: Callable[..., RedisSessionStore],
) -> None:
    async with make_redis_store() as one, make_redis_store(decode_responses=True) as two:
        first = await one.compare_and_set(KEY, 0, EMPTY_STATE.with_groups({"one": True}))
        assert first is not None
        seen = await two.load(KEY)
        assert seen == first
        assert seen.revision == 1
        assert await two.compare_and_set(KEY, 1, seen.with_groups({"two": True})) is not None
        # `one` still believes revision 1.
        assert await one.compare_and_set(KEY, 1, first.with_groups({"lost": True})) is None
        assert dict((await one.load(KEY)).groups) == {"one": True, "two": True}


async def test_redis_delete(make_redis_store: Callable[..., RedisSessionStore]) -> None:
    async with make_redis_store() as store:
        await update_session(store, KEY, lambda s: s.with_skills(["a"]))
        assert await store.delete(KEY) is True
        assert await store.delete(KEY) is False
        assert await store.load(KEY) == EMPTY_STATE
        assert (await update_session(store, KEY, lambda s: s)).revision == 1


@pytest.mark.parametrize(
    ("mapping", "why"),
    [
        ({"revision": "1", "state": "not json"}, "does not hold a ferrotool session state"),
        ({"revision": "1", "state": '{"format": 99}'}, "not a format 2"),
        ({"revision": "one", "state": "{}"}, "invalid literal"),
        ({"revision": "0", "state": '{"format": 1}'}, "not positive"),
        ({"state": '{"format": 1}'}, "not both there"),
        ({"revision": "3"}, "not both there"),
    ],
)
async def test_redis_corrupt_value_raises_value_error_naming_the_key(
    make_redis_store: Callable[..., RedisSessionStore], mapping: dict[str, str], why: str
) -> None:
    async with make_redis_store() as store:
        name = store.redis_key(KEY)
        await store._client.hset(name, mapping=mapping)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=why) as raised:
            await store.load(KEY)
        assert repr(name) in str(raised.value)


@pytest.mark.parametrize("revision", ["one", "-2", "1.5"])
async def test_redis_corrupt_revision_fails_compare_and_set(
    make_redis_store: Callable[..., RedisSessionStore], revision: str
) -> None:
    async with make_redis_store() as store:
        name = store.redis_key(KEY)
        await store._client.hset(name, mapping={"revision": revision, "state": "{}"})
        with pytest.raises(ValueError, match="corrupt session revision") as raised:
            await store.compare_and_set(KEY, 0, EMPTY_STATE)
        assert repr(name) in str(raised.value)


async def test_redis_key_of_another_type_raises_value_error(
    make_redis_store: Callable[..., RedisSessionStore],
) -> None:
    async with make_redis_store() as store:
        name = store.redis_key(KEY)
        await store._client.set(name, "a string, not a hash")
        with pytest.raises(ValueError, match="WRONGTYPE") as raised:
            await store.load(KEY)
        assert repr(name) in str(raised.value)
        with pytest.raises(ValueError, match="WRONGTYPE"):
            await store.compare_and_set(KEY, 0, EMPTY_STATE)
