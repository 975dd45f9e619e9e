"""Request views and session state: the cases of the ``view_*`` and ``reset_tools`` groups.

- ``view_build``: ``registry.view(state, config)`` with 20 external tools over registries of 10,
  1,000 and 100,000 backend tools, alone and followed by ``.names()``.
- ``view_schemas``: a view's provider tool list for 100 visible tools, warm (every cache filled)
  and on the first call on a fresh registry.
- ``reset_tools``: one session's round trip through a store: ``open_view`` (load the state),
  then ``reset_tools`` with a JSON of booleans (validate, load + compare-and-set, result), with
  `InMemorySessionStore` and with `RedisSessionStore`.

Everything here is built before any clock starts; `benches.run` times it and
`benches.test_bench_smoke` checks it once.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import orjson

import ferrotool
from benches import tools as t
from ferrotool import (
    EMPTY_STATE,
    InMemorySessionStore,
    Registry,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    SessionStore,
    ToolContextState,
    Toolkit,
    ToolkitConfig,
    ToolMergeMode,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    ToolView,
)

# --- view construction over registries of every size -------------------------------------------

BACKEND_SIZES: Final = (10, 1_000, 100_000)
GROUPS: Final = ("db", "deploy", "search", "admin")
"""The backend's session-scoped groups (besides ``basic``, always visible)."""
PLACEMENT: Final = ("basic", *GROUPS)
"""Backend tool ``i`` joins ``PLACEMENT[i % 5]``: a fifth of the tools in each."""
ACTIVE: Final = ("db", "search")
"""The groups active in the measured session: ``basic`` plus these is 3/5 of the backend."""
EXTERNAL_COUNT: Final = 20
SHADOWED: Final = "tool_000000"
"""A backend tool in ``basic`` that the request's first external tool replaces."""

_STUB_PARAMETERS: Final = orjson.dumps(
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
)


def size_case(size: int) -> str:
    """The case label of a registry size: ``"100,000 tools"``."""
    return f"{size:,} tools"


def backend_name(index: int) -> str:
    return f"tool_{index:06d}"


class StubTool:
    """The least an `AgentTool` is: a prebuilt `ToolSpec`, an argument parser and a call.

    Registering it compiles nothing (no schema derivation, no validator), so a registry of
    100,000 of them is quick to build; only what a view does with the registry is measured.
    """

    __slots__ = ("_spec",)

    def __init__(self, spec: ToolSpec) -> None:
        self._spec = spec

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def parse_arguments(self, arguments: str | bytes) -> object:
        return orjson.loads(arguments or b"{}")

    async def call(self, param: Any) -> str:
        return self._spec.name


def backend_registry(size: int) -> Registry:
    """A snapshot of ``size`` `StubTool`\\ s spread over ``basic`` and `GROUPS` (meta tool on)."""
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    for group in GROUPS:
        kit.create_group(group, f"The {group} tools.")
    register, placement = kit.register, PLACEMENT
    for i in range(size):
        name = backend_name(i)
        spec = ToolSpec(name=name, description=f"Stub tool {i}.", parameters_json=_STUB_PARAMETERS)
        register(StubTool(spec), group=placement[i % len(placement)])
    return kit.snapshot()


def external_tools() -> tuple[SchemaOnlyTool, ...]:
    """20 distinct client tools (new objects on each call); the first is named `SHADOWED`."""
    out = []
    for i in range(EXTERNAL_COUNT):
        name = SHADOWED if i == 0 else f"client_{i:02d}"
        properties: dict[str, object] = {
            "query": {"type": "string", "description": f"What client tool {i} looks for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50 + i},
        }
        definition = {
            "name": name,
            "description": f"Client-side tool {i}: the caller runs it.",
            "parameters": {"type": "object", "properties": properties, "required": ["query"]},
        }
        out.append(SchemaOnlyTool(definition))
    return tuple(out)


def request_config(externals: Sequence[SchemaOnlyTool]) -> ToolRequestConfig:
    return ToolRequestConfig(externals, ToolMergeMode.MERGE_EXTERNAL_PRIORITY)


def view_state() -> ToolContextState:
    """The measured session: `ACTIVE` on, the other groups at their default (off)."""
    return EMPTY_STATE.with_groups(dict.fromkeys(ACTIVE, True))


def expected_view_names(size: int) -> tuple[str, ...]:
    """What `view_state` + `request_config` must show over `backend_registry(size)`.

    Worked out from the placement rule, not from ferrotool: the meta tool (registered with the
    first group, so first), the backend tools of ``basic`` and `ACTIVE` in registration order
    minus the one an external tool replaces, then the 20 external tools in order.
    """
    shown = {"basic", *ACTIVE}
    externals = [SHADOWED, *(f"client_{i:02d}" for i in range(1, EXTERNAL_COUNT))]
    backend = [backend_name(i) for i in range(size) if PLACEMENT[i % len(PLACEMENT)] in shown]
    return (ferrotool.RESET_TOOLS, *(n for n in backend if n not in externals), *externals)


# --- a view's provider tool list ---------------------------------------------------------------

SCHEMA_VISIBLE: Final = 100
SCHEMA_FORMAT: Final = "openai_chat"
_SCHEMA_PLACEMENT: Final = (("basic", 40), ("db", 39), ("ops", 20))
"""The function tools of the schemas registry: 40 in ``basic``, 39 in ``db`` (active), 20 in
``ops`` (inactive, hidden). Visible: 40 + 39 + the meta tool + 20 external tools = 100."""
SCHEMA_ACTIVE: Final = ("db",)


def schema_function_tools() -> list[Any]:
    """99 distinct ``tool(fn)`` function tools (S1's shape), derived once."""
    count = sum(n for _, n in _SCHEMA_PLACEMENT)
    return [ferrotool.tool(fn) for fn in t.distinct_functions(count, tag="v")]


def schema_registry(function_tools: Sequence[Any]) -> Registry:
    """A fresh registry of the function tools in ``basic``, ``db`` and ``ops`` (meta tool on).

    Its entries are new, so their provider definitions are not built yet.
    """
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    kit.create_group("db", "Database tools.")
    kit.create_group("ops", "Operations tools.")
    items = iter(function_tools)
    for group, count in _SCHEMA_PLACEMENT:
        for _ in range(count):
            kit.register(next(items), group=group)
    return kit.snapshot()


def schema_state() -> ToolContextState:
    return EMPTY_STATE.with_groups(dict.fromkeys(SCHEMA_ACTIVE, True))


def fresh_schema_view(function_tools: Sequence[Any]) -> ToolView:
    """A view of 100 tools on which nothing has been served: a fresh registry, fresh externals.

    The external tools are new objects too: a client tool object caches its compiled entry
    (and so its definitions) on itself.
    """
    registry = schema_registry(function_tools)
    return registry.view(schema_state(), request_config(external_tools()))


def expected_schema_names(function_tools: Sequence[Any]) -> list[str]:
    """The 100 tools a `schema_state` view shows, in order: the meta tool (registered with the
    first group, so first), the ``basic`` and ``db`` function tools, the external tools."""
    shown = sum(count for group, count in _SCHEMA_PLACEMENT if group in ("basic", *SCHEMA_ACTIVE))
    names = [item.name for item in function_tools[:shown]]
    externals = [tool.spec.name for tool in external_tools()]
    return [ferrotool.RESET_TOOLS, *names, *externals]


# --- the reset_tools round trip ----------------------------------------------------------------

DEFAULT_REDIS_URL: Final = "redis://127.0.0.1:6379/15"
RESET_ARGUMENTS: Final = '{"db": true, "ops": false}'
RESET_GROUPS: Final = {"db": True, "ops": False}
"""The session's groups after the call."""
RESET_ACTIVE: Final = ["db"]
"""The active groups ``reset_tools`` reports after the call."""

StoreOpener = Callable[[], AbstractAsyncContextManager[SessionStore]]


def redis_url() -> str:
    return os.environ.get("FERROTOOL_REDIS_URL") or DEFAULT_REDIS_URL


def redis_required() -> bool:
    """CI sets ``FERROTOOL_REQUIRE_REDIS=1``: a missing server is then an error, not a skip."""
    return os.environ.get("FERROTOOL_REQUIRE_REDIS") == "1"


def redis_problem(url: str) -> str | None:
    """Why the Redis case cannot run (no client package, no server answering), or ``None``."""
    try:
        import redis

        import ferrotool.redis  # noqa: F401
    except ImportError as exc:
        return f"the redis package is not installed ({exc}; pip install 'redis>=5')"
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        return f"no Redis server answers at {url}: {exc}"
    finally:
        client.close()
    return None


@asynccontextmanager
async def memory_store() -> AsyncIterator[SessionStore]:
    yield InMemorySessionStore()


def redis_store(url: str, prefix: str) -> StoreOpener:
    """Opens a `RedisSessionStore` on a client of its own, with keys under ``prefix``.

    On exit every key under the prefix is deleted and the client closed, inside the event loop
    that used it.
    """

    @asynccontextmanager
    async def opened() -> AsyncIterator[SessionStore]:
        import redis.asyncio as aioredis

        from ferrotool.redis import RedisSessionStore

        client = aioredis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        try:
            yield RedisSessionStore(client, prefix=prefix)
        finally:
            try:
                keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
                if keys:
                    await client.delete(*keys)
            finally:
                await client.aclose()

    return opened


def redis_prefix() -> str:
    """A key prefix of this run alone."""
    return f"ferrotool-bench:{uuid.uuid4().hex}:"


class ResetRoundTrip:
    """One session's ``reset_tools`` round trip over one store.

    `opened` opens the store inside the running event loop (a Redis client's connections belong
    to the loop that made them) and closes it on exit; the calls are bound methods, ready to
    time while it is open.
    """

    def __init__(self, registry: Registry, open_store: StoreOpener, session: str) -> None:
        self.registry = registry
        self._open_store = open_store
        self.context = RuntimeContext(user_id="bench", session_id=session)
        self.key = SessionKey("bench", session)
        self.direct_key = SessionKey("bench", f"{session}-direct")
        self.block = ToolUseBlock("call_reset", ferrotool.RESET_TOOLS, RESET_ARGUMENTS)
        self._store: SessionStore | None = None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            raise RuntimeError("the round trip's store is not open (use `opened()`)")
        return self._store

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[ResetRoundTrip]:
        async with self._open_store() as store:
            self._store = store
            try:
                yield self
            finally:
                self._store = None

    async def round_trip(self) -> ToolResultBlock:
        """Open the session's view from the store and call ``reset_tools`` through it."""
        view = await self.registry.open_view(self.context, self.store)
        return await view.call_tool(self.block, self.context)

    async def store_only(self) -> ToolContextState | None:
        """The store's part alone, on a session of its own: one load, one compare-and-set."""
        store = self.store
        state = await store.load(self.direct_key)
        return await store.compare_and_set(
            self.direct_key, state.revision, state.with_groups(RESET_GROUPS)
        )


def round_trip_problem(result: ToolResultBlock, revision: int) -> str | None:
    """What is wrong with a round trip's result (the ``revision``-th write), or ``None``."""
    if result.state is not ToolResultState.SUCCESS:
        return f"reset_tools did not succeed: {result.state.name}: {result.content!r:.160}"
    if result.structured != {"active_groups": RESET_ACTIVE}:
        return f"unexpected active groups: {result.structured!r}"
    if result.metadata.get("revision") != revision:
        return f"stored at revision {result.metadata.get('revision')!r}, expected {revision}"
    return None


async def check_round_trip(trip: ResetRoundTrip, calls: int = 2) -> str | None:
    """Run ``calls`` round trips and one direct write and check what the store holds after.

    Returns:
        What went wrong, or ``None``.
    """
    async with trip.opened():
        for revision in range(1, calls + 1):
            problem = round_trip_problem(await trip.round_trip(), revision)
            if problem is not None:
                return problem
        state = await trip.store.load(trip.key)
        if dict(state.groups) != RESET_GROUPS or state.revision != calls:
            return f"the store holds {dict(state.groups)} at revision {state.revision}"
        view = await trip.registry.open_view(trip.context, trip.store)
        if view.active_groups != frozenset(RESET_ACTIVE):
            return f"the session's view has the groups {sorted(view.active_groups)} active"
        direct = await trip.store_only()
        if direct is None or dict(direct.groups) != RESET_GROUPS or direct.revision != 1:
            return f"the direct compare-and-set stored {direct!r}"
    return None
