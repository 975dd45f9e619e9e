"""`Registry`, the immutable snapshot a request uses, and the read and call side it shares.

`ToolSet` is what a `Registry` and a `Toolkit` have in common: lookups, provider schemas,
request views and calls, all read from the table they hold. `call_tool` is a call through the
default view (every group at its default activation, and the request config the context
carries, if any). A plain tool's call goes from `call_tool` (a Rust method of the base class,
`_core.ToolCaller`) straight to its Rust direct call; every other call runs the pipeline of
`ferrotool._execution.pipeline` through a `ToolView`, which holds the table and the runner.
"""

from __future__ import annotations

from collections.abc import (
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, final

from ferrotool import _core
from ferrotool._definitions.formats import ProviderFormat
from ferrotool._execution.batch import ToolBatch
from ferrotool._execution.events import EventSink, ToolEvent
from ferrotool._execution.middleware import Middleware
from ferrotool._execution.pipeline import ResultSink, compile_tool
from ferrotool._execution.resume import Reply
from ferrotool._execution.runner import Runner
from ferrotool._execution.stream import EventStream
from ferrotool._registry.listing import ToolLists
from ferrotool._registry.table import Table
from ferrotool._registry.view import ToolView
from ferrotool._requests.config import NO_REQUEST_CONFIG, ToolRequestConfig
from ferrotool._requests.resolve import backend_allowed, external_wins
from ferrotool._session.state import (
    EMPTY_STATE,
    SessionKey,
    SessionStore,
    ToolContextState,
    session_key,
)
from ferrotool._tools.base import AgentTool
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import EMPTY_CONTEXT, ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.groups import BASIC, ToolGroup
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import RegistrationError


class ToolSet(_core.ToolCaller, ToolLists):
    """The read and call side shared by `Toolkit` and `Registry`."""

    __slots__ = ("_default_view", "_runner", "_table")

    _table: Table
    _runner: Runner
    _default_view: ToolView | None

    def _use(self, table: Table) -> None:
        """Hold ``table`` from now on.

        `call_tool` and `call_tool_sync` (the Rust base class) run the default view's direct
        calls themselves: the answers of `ToolView.route` for the plain tools visible by
        default (`Table.direct`, `Table.direct_sync` for a sync caller), none when middleware
        must see every call. `tests/property/test_routing.py` checks
        that it takes this shortcut exactly when the route is direct.
        """
        self._table = table
        self._default_view = None
        onion = self._runner.onion
        layered = None
        if (
            onion is not None
        ):  # a plain route goes through the onion in Rust, its core the direct calls
            view = self._default_view = ToolSet.view(self)
            layered = (onion, view.bare, EMPTY_CONTEXT)
        self._bind(
            table.direct,
            ToolSet._call_slow,
            layered,
            direct_sync=table.direct_sync if onion is None else {},
            pipeline_sync=ToolSet._call_slow_sync,
        )

    # - lookup -

    def get_tool(self, name: str, config: ToolRequestConfig | None = None) -> AgentTool | None:
        """The tool registered under ``name``, or ``None``.

        With a request ``config``, the tool the request would resolve ``name`` to: the
        config's external tool, the registry's, or none (group activation is a session
        matter: see `view`).
        """
        if config is not None:
            external = config.tools.get(name)
            if external is not None and external_wins(config.mode, name in self):
                return external
            if not backend_allowed(config.mode):
                return None
        entry = self._table.entries.get(name)
        return None if entry is None else entry.tool

    def get_spec(self, name: str) -> ToolSpec | None:
        """The spec the model sees for ``name`` (presets hidden), or ``None``."""
        entry = self._table.entries.get(name)
        return None if entry is None else entry.spec

    def is_external_tool(self, name: str) -> bool:
        """Whether ``name`` is a registered external tool.

        An external tool is one the client runs: its calls suspend for the client's result.
        """
        spec = self.get_spec(name)
        return spec is not None and spec.external

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._table.entries)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The specs, in registration order."""
        return tuple(entry.spec for entry in self._table.entries.values())

    def groups(self) -> tuple[ToolGroup, ...]:
        """The tool groups, in the order they were added."""
        return tuple(self._table.groups.values())

    def switch_groups(
        self, state: ToolContextState, flags: Mapping[str, bool], *, exact: bool = False
    ) -> ToolContextState:
        """``state`` with these groups of this registry switched on or off.

        With ``exact``, every other group of the registry is switched off: the session's
        active groups become exactly those ``flags`` turns on. A session's state is a value:
        store the result (`update_session`) for later requests to see it.

        Raises:
            RegistrationError: A name is not a group of this registry (nothing is switched).
        """
        known = self._table.groups
        unknown = sorted(name for name in flags if name not in known)
        if unknown:
            raise RegistrationError(
                f"Tool group {', '.join(map(repr, unknown))} does not exist "
                f"(groups: {', '.join(known) or 'none'})"
            )
        if exact:
            flags = {name: bool(flags.get(name, False)) for name in known}
        return state.with_groups(flags)

    def group_of(self, name: str) -> frozenset[str]:
        """The groups a tool belongs to (``{"basic"}`` for an ungrouped one).

        Raises:
            KeyError: No tool has that name.
        """
        return self._table.entries[name].groups or frozenset({BASIC})

    def __len__(self) -> int:
        return len(self._table.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._table.entries

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._table.entries))

    # - views -

    def view(
        self,
        state: ToolContextState = EMPTY_STATE,
        config: ToolRequestConfig | None = None,
        *,
        store: SessionStore | None = None,
        key: SessionKey | None = None,
        middleware: Sequence[Middleware] = (),
    ) -> ToolView:
        """The tools one request may see and call: these tools, a request config, a session.

        Built in time independent of the number of registered tools.

        Args:
            state: The session's tool state (active groups, permissions, waiting calls).
            config: External tools of the request and how they merge with these.
            store: Where the session's new state is stored (by ``reset_tools``, a batch that
                suspends, a resume).
            key: The session.
            middleware: Wraps this view's calls, inside the toolkit's middleware.
        """
        return ToolView(
            self._table,
            self._runner,
            state,
            config or NO_REQUEST_CONFIG,
            store,
            key,
            middleware,
        )

    async def open_view(
        self,
        context: RuntimeContext,
        store: SessionStore,
        config: ToolRequestConfig | None = None,
        *,
        middleware: Sequence[Middleware] = (),
    ) -> ToolView:
        """Load the session of ``context`` from ``store`` and build its view.

        The session is the context's user and session ids; the request config defaults to the
        one the context holds, if any.
        """
        key = session_key(context)
        state = await store.load(key)
        request = config or context.get(ToolRequestConfig)
        return self.view(state, request, store=store, key=key, middleware=middleware)

    def _view_for(self, context: RuntimeContext | None) -> ToolView:
        """The view a call through this toolkit runs in.

        Every group is at its default activation, and the request config is the one the
        context carries, if any.
        """
        config = None if context is None else context.get(ToolRequestConfig)
        if config is not None:
            return ToolSet.view(self, EMPTY_STATE, config)
        view = self._default_view
        if view is None:
            view = self._default_view = ToolSet.view(self)
        return view

    # - schemas -

    def definitions(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> tuple[bytes, ...]:
        """Each tool's definition for a provider, as JSON bytes, in registration order.

        Built once per tool, format and strictness, then served from the tool's cache.
        """
        return self._table.definitions(self._table.entries.values(), format, strict)

    def schemas_json(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> bytes:
        """The tool list for a provider request, as JSON bytes (cached)."""
        key = (format, strict)
        caches = self._table.caches
        cached = caches.schemas.get(key)
        if cached is None:
            joined = b"[" + b",".join(self.definitions(format, strict=strict)) + b"]"
            cached = caches.remember(caches.schemas, key, joined)
        return cached

    # - calls -

    # `call_tool` and `call_tool_sync` are the base class's (`_core.ToolCaller`): a plain
    # tool's call goes from there straight to its Rust direct call; every other call comes
    # back here.

    def _call_slow(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
        on_result: ResultSink | None = None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """`call_tool` for every call that is not a plain tool's: through the default view."""
        return self._view_for(context).call_tool(
            call, context, agent=agent, on_progress=on_progress, on_result=on_result
        )

    def _call_slow_sync(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> ToolResultBlock:
        """`call_tool_sync` for every call that is not a plain tool's: through the default view."""
        return self._view_for(context).call_tool_sync(
            call, context, agent=agent, on_progress=on_progress
        )

    async def call_tools(
        self,
        calls: Sequence[ToolUseBlock],
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> ToolBatch:
        """`ToolView.call_tools` in the default view.

        The default view has no session: a suspension is returned but not stored. Open a view
        with a store (`open_view`) to resume it later.
        """
        return await self._view_for(context).call_tools(
            calls, context, agent=agent, config=config, parallel=parallel, on_event=on_event
        )

    def stream_tools(
        self,
        calls: Sequence[ToolUseBlock],
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> EventStream[ToolEvent]:
        """`ToolView.stream_tools` in the default view."""
        return self._view_for(context).stream_tools(
            calls, context, agent=agent, config=config, parallel=parallel, on_event=on_event
        )

    async def resume(
        self,
        context: RuntimeContext,
        store: SessionStore,
        replies: Sequence[Reply],
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> ToolBatch:
        """Settle calls waiting in the session of ``context`` (see `ToolView.resume`).

        Raises:
            ResumeError: A reply was refused; nothing was accepted then.
        """
        view = await self.open_view(context, store)
        return await view.resume(
            replies, context, agent=agent, config=config, parallel=parallel, on_event=on_event
        )

    def stream_resume(
        self,
        context: RuntimeContext,
        store: SessionStore,
        replies: Sequence[Reply],
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> EventStream[ToolEvent]:
        """`resume` as an async iterator of its events (see `ToolView.stream_resume`)."""

        async def start(sink: EventSink) -> ToolBatch:
            view = await self.open_view(context, store)
            return await view.resume(
                replies, context, agent=agent, config=config, parallel=parallel, on_event=sink
            )

        return EventStream(start, on_event)


@final
class Registry(ToolSet):
    """An immutable snapshot of a toolkit: later registrations do not change it.

    It looks tools up, serves their provider schemas, builds request views and runs calls,
    exactly like the toolkit it was taken from (sharing its worker threads and progress sinks).
    """

    __slots__ = ()

    def __init__(self, table: Table, runner: Runner) -> None:
        self._runner = runner
        self._use(table)

    def with_tools(self, *tools: AgentTool) -> Registry:
        """A new registry: these tools added ungrouped (replacing tools of their names).

        This registry is unchanged; the new one shares its groups, worker threads and sinks.
        Costs a copy of the table (a skill view is built once per set of skills).
        """
        table = self._table.copy()
        for item in tools:
            table.put(compile_tool(item, None, self._runner.config))
        return Registry(table, self._runner)

    def __repr__(self) -> str:
        return f"<Registry of {len(self._table.entries)} tools>"


__all__ = ["Registry", "ToolSet"]
