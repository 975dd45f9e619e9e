"""`ToolView`: what one request may see and call.

A view is table + runner + request config + session state. Building one costs O(external
tools + groups), never O(registered tools): it keeps references to the registry's immutable
table and the request's tools, and computes the visible backend names lazily (cached on the
table per set of active groups). Nothing in a view can change the registry or another session.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import Any, Final, TypeAlias, cast, final

import anyio

from ferrotool import _core
from ferrotool._definitions.formats import ProviderFormat
from ferrotool._execution import outcomes
from ferrotool._execution.batch import ToolBatch, run_batch
from ferrotool._execution.compiled import CompiledTool
from ferrotool._execution.events import EventSink, ToolEvent
from ferrotool._execution.middleware import Middleware, onion, through
from ferrotool._execution.pipeline import (
    CallScope,
    ResultSink,
    compile_tool,
    finish,
    run_call,
    run_call_sync,
)
from ferrotool._execution.resume import Reply, resume
from ferrotool._execution.runner import Runner, ToolkitConfig
from ferrotool._execution.stream import EventStream
from ferrotool._registry.derived import RESET_TOOLS, SessionHandle, uses_session
from ferrotool._registry.listing import ToolLists
from ferrotool._registry.table import Table
from ferrotool._requests.config import ToolRequestConfig
from ferrotool._requests.resolve import backend_allowed, external_wins
from ferrotool._session.state import SessionKey, SessionStore, ToolContextState
from ferrotool._tools.base import AgentTool
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock, misused
from ferrotool._values.context import ProgressSink, RuntimeContext, misused_context
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.groups import BASIC
from ferrotool._values.spec import ToolSpec

_EXTERNAL_CONFIG: Final = ToolkitConfig()
_NO_DIRECT_CALLS: Final[dict[str, _core.DirectCall]] = {}
# An external tool never runs here, so its compiled form does not depend on any toolkit: a
# client tool object reused across requests is compiled once (weakly held: never on the tool).
_compiled_externals: weakref.WeakKeyDictionary[AgentTool, CompiledTool] = (
    weakref.WeakKeyDictionary()
)


def compile_external(tool: AgentTool) -> CompiledTool:
    """The compiled form of a request's external tool (cached per tool object)."""
    try:
        cached = _compiled_externals.get(tool)
    except TypeError:  # a tool class that cannot be weakly referenced: compile per view
        return compile_tool(tool, None, _EXTERNAL_CONFIG)
    if cached is None:
        cached = compile_tool(tool, None, _EXTERNAL_CONFIG)
        _compiled_externals[tool] = cached
    return cached


def _uses_session(tool: CompiledTool) -> bool:
    """Whether a tool writes its session: the view hands it a `SessionHandle` in its context.

    Every tool whose ``uses_session`` attribute is ``True`` does (the meta tool, the skill
    loader, ``todo_write``).
    """
    return uses_session(tool.tool)


def _is_name(name: object) -> bool:
    """Whether a call's name is a name at all (a model may send a null, a provider a list)."""
    return isinstance(name, str)


async def _done(result: ToolResultBlock) -> ToolResultBlock:
    return result


async def _awaited(running: Awaitable[ToolResultBlock]) -> ToolResultBlock:
    return await running


async def _timed(
    running: Awaitable[ToolResultBlock], call: ToolUseBlock, timeout: float
) -> ToolResultBlock:
    """A direct call under a batch's timeout."""
    with anyio.move_on_after(timeout) as deadline:
        return await running
    del deadline
    return outcomes.timed_out(call, timeout)


async def _call(view: ToolView, scope: CallScope) -> ToolResultBlock:
    return await view.run_one(scope)


Route: TypeAlias = "_core.DirectCall | CompiledTool | ToolResultBlock"
"""Where one call goes (`ToolView.route`): its direct call, the pipeline of its tool, or the
result of a name the view does not resolve."""


@final
class ToolView(ToolLists):
    """The tools one request may see and call. Immutable; build it with `Registry.view`.

    Attributes:
        state: The session state the view was built from.
        config: The request's config.
        active_groups: The groups active in this view's session (``basic`` not included).
    """

    __slots__ = (
        "_direct",
        "_externals",
        "_key",
        "_middleware",
        "_names",
        "_onion",
        "_plain",
        "_runner",
        "_shadowed",
        "_store",
        "_table",
        "active_groups",
        "config",
        "state",
    )

    def __init__(
        self,
        table: Table,
        runner: Runner,
        state: ToolContextState,
        config: ToolRequestConfig,
        store: SessionStore | None = None,
        key: SessionKey | None = None,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        self._table = table
        self._runner = runner
        own = tuple(middleware)
        self._middleware = (*runner.config.middleware, *own)
        self._onion = onion(self._middleware) if own else runner.onion
        self.state: Final[ToolContextState] = state
        self.config: Final[ToolRequestConfig] = config
        self._store = store
        self._key = key
        self.active_groups: Final[frozenset[str]] = table.active_groups(state)
        externals: dict[str, CompiledTool] = {}
        shadowed: set[str] = set()
        for name, tool in config.tools.items():
            if external_wins(config.mode, self._backend_visible(name)):
                externals[name] = compile_external(tool)
                if name in table.entries:
                    shadowed.add(name)
        self._externals = externals
        self._shadowed = frozenset(shadowed)
        # The request's half of the routing decision (`route`): its calls may skip the gate.
        self._plain = (
            backend_allowed(config.mode) and not externals and state.permissions.is_trivial
        )
        self._names: tuple[str, ...] | None = None
        self._direct: dict[str, _core.DirectCall] | None = None  # on the first call

    # - visibility -

    def _backend_visible(self, name: str) -> bool:
        tool = self._table.entries.get(name)
        if tool is None:
            return False
        groups = tool.groups
        return not groups or not groups.isdisjoint(self.active_groups)

    def resolve(self, name: str) -> CompiledTool | None:
        """The compiled tool ``name`` resolves to in this view, or ``None``.

        A name that is no ``str`` (a model's null, say) resolves to nothing.
        """
        if not _is_name(name):
            return None
        external = self._externals.get(name)
        if external is not None:
            return external
        if not backend_allowed(self.config.mode) or not self._backend_visible(name):
            return None
        return self._table.entries[name]

    def names(self) -> tuple[str, ...]:
        """The visible tools' names.

        The backend's come first, in registration order, then the external ones in the
        config's order.
        """
        names = self._names
        if names is None:
            names = (*self._backend_names(), *self._externals)
            self._names = names
        return names

    def _backend_names(self) -> tuple[str, ...]:
        if not backend_allowed(self.config.mode):
            return ()
        return self._table.visible(self.active_groups, self._shadowed)

    def get_tool(self, name: str) -> AgentTool | None:
        """The tool ``name`` resolves to in this view, or ``None`` if it is not visible."""
        tool = self.resolve(name)
        return None if tool is None else tool.tool

    def get_spec(self, name: str) -> ToolSpec | None:
        """The spec the model sees for ``name`` in this view, or ``None``."""
        tool = self.resolve(name)
        return None if tool is None else tool.spec

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    # - schemas -

    def schemas_json(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> bytes:
        """The visible tools' definitions for a provider, as one JSON array.

        Each definition comes from its tool's cache, and the order is stable (backend tools in
        registration order, then external ones), so provider prompt caches keep hitting.
        """
        table = self._table
        caches = table.caches
        key = (format, strict, self.active_groups, self._shadowed)
        backend = caches.view_schemas.get(key)
        if backend is None:
            entries = table.entries
            tools = [entries[name] for name in self._backend_names()]
            joined = b",".join(table.definitions(tools, format, strict))
            backend = caches.remember(caches.view_schemas, key, joined)
        external = b",".join(table.definitions(self._externals.values(), format, strict))
        return b"[" + b",".join(part for part in (backend, external) if part) + b"]"

    # - calls -

    def call_tool(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
        on_result: ResultSink | None = None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """Run one call as this request may: like `Toolkit.call_tool`, through the view.

        An external tool of the request validates and suspends; a backend tool that exists
        but is not visible here (its groups inactive, or hidden by the merge mode) gives an
        error result saying it is not available now, not that it does not exist.
        """
        if self._onion is None and on_result is None:
            routed = self.route(call)
            if type(routed) is _core.DirectCall:  # no scope to build
                return _awaited(cast("Awaitable[ToolResultBlock]", routed(call)))
        running = self.run_one(self.scope(call, context, agent, on_progress))
        if on_result is not None:
            return finish(running, call, on_result)
        return running if isinstance(running, Coroutine) else _awaited(running)

    def call_tool_sync(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
    ) -> ToolResultBlock:
        """`call_tool` for sync code: a sync tool runs on the calling thread.

        Calls that need an event loop (async tools, permission checks, timeouts, middleware,
        ``reset_tools``) run in a fresh one through `anyio.run`; do not call this from inside a
        running event loop.
        """
        if self._middleware:
            return anyio.run(_call, self, self.scope(call, context, agent, on_progress))
        routed = self.route(call, sync=True)
        if type(context) is not RuntimeContext and (
            error := misused_context("call_tool_sync", context)
        ):
            raise error
        if type(routed) is _core.DirectCall:
            return routed.run(call)
        if type(routed) is ToolResultBlock:
            return routed
        tool = cast("CompiledTool", routed)
        scope = self.scope(call, context, agent, on_progress)
        if _uses_session(tool):
            return anyio.run(_call, self, scope)
        return run_call_sync(tool, scope)

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
        """Run a model turn's calls as one batch (see `ferrotool._execution.batch`).

        Consecutive concurrency-safe calls run together, an unsafe call alone, and the results
        come back one per call, in call order. Calls that wait for approval or for the client
        are gathered into the batch's `Suspension`, stored in the session when the view has a
        store (`open_view`), for `resume`.

        Args:
            calls: The model's calls, in order.
            context: The runtime context of every call.
            agent: The calling agent, for tools that ask for it.
            config: The batch's execution settings (after each tool's own, before the
                toolkit's).
            parallel: Whether consecutive concurrency-safe calls may run together.
            on_event: Receives every event as it happens, on the event loop's thread (a sync
                tool's progress included, emitted on its worker thread); a cancelled batch
                still reports the ``INTERRUPTED`` result of every call without one here, before
                the cancellation goes on.
        """
        return await run_batch(
            self, calls, context, agent=agent, config=config, parallel=parallel, on_event=on_event
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
        """`call_tools` as an async iterator of its events, as they happen.

        Use it as ``async with view.stream_tools(calls) as events: async for event in
        events: ...`` (or close it: leaving the ``async with`` or calling ``aclose`` cancels
        what is still running). A consumer cancelled mid-stream cannot be handed further
        events: the ``INTERRUPTED`` results of the calls that were running then go to
        ``on_event``, if given. The batch runs in a task of the stream's own: a stream dropped
        without being closed is stopped when it is collected, and never touches the consumer's
        task.
        """

        def start(sink: EventSink) -> Awaitable[ToolBatch]:
            return run_batch(
                self, calls, context, agent=agent, config=config, parallel=parallel, on_event=sink
            )

        return EventStream[ToolEvent](start, on_event)

    async def resume(
        self,
        replies: Sequence[Reply],
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> ToolBatch:
        """Settle calls that wait in this view's session (see `ferrotool._execution.resume`).

        Args:
            replies: `Confirmation` values for calls waiting for approval, `ToolResultBlock`
                values for calls the client ran, and text of the person's.
            context: The runtime context approved calls run with.
            agent: The calling agent, for tools that ask for it.
            config: The execution settings of the approved calls.
            parallel: Whether approved concurrency-safe calls may run together.
            on_event: Receives the resume's events, as a batch's (see `stream_resume`).

        Returns:
            The settled calls' results, in the order they were suspended, under the
            suspension's reply id; calls still waiting are the batch's suspension.

        Raises:
            ResumeError: A reply was refused (unknown or already settled call, duplicate
                reply, text with partial results, a malformed reply, edited arguments that are
                not JSON or that the tool's schema refuses); nothing was accepted then.
            ValueError: The view has no session store.
        """
        return await resume(
            self,
            self.state,
            replies,
            context,
            agent=agent,
            config=config,
            parallel=parallel,
            on_event=on_event,
        )

    def stream_resume(
        self,
        replies: Sequence[Reply],
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        on_event: EventSink | None = None,
    ) -> EventStream[ToolEvent]:
        """`resume` as an async iterator of its events, as `stream_tools` is for a batch.

        The events are a batch's (`ferrotool._execution.events`): `ConfirmationResult` and
        `ExternalExecutionResult` under the settled suspension's reply id, the settled calls'
        events, then what still waits and `AllToolsDenied`. A refused reply raises its
        `ResumeError` from the iteration, before any event.
        """

        def start(sink: EventSink) -> Awaitable[ToolBatch]:
            return resume(
                self,
                self.state,
                replies,
                context,
                agent=agent,
                config=config,
                parallel=parallel,
                on_event=sink,
            )

        return EventStream(start, on_event)

    async def reload(self) -> ToolView:
        """This request's view again, its session's state read anew from the store.

        What the session's own calls changed (``reset_tools``, a settled suspension) shows in
        the new view, with the same registry, request config and middleware. A view without a
        store is returned as it is.
        """
        if self._store is None or self._key is None:
            return self
        state = await self._store.load(self._key)
        own = self._middleware[len(self._runner.config.middleware) :]
        return ToolView(self._table, self._runner, state, self.config, self._store, self._key, own)

    # - the batch's host -

    @property
    def runner(self) -> Runner:
        """What the view's calls run with."""
        return self._runner

    @property
    def session(self) -> tuple[SessionStore, SessionKey] | None:
        """The store and key of the view's session, if it has one."""
        if self._store is None or self._key is None:
            return None
        return self._store, self._key

    def concurrency_safe(self, name: str) -> bool:
        """Whether a call of ``name`` may overlap other calls (an unknown name: yes)."""
        tool = self.resolve(name)
        return tool is None or tool.spec.concurrency_safe

    def scope(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
        execution: ExecutionConfig | None = None,
        approved: bool = False,
    ) -> CallScope:
        """The scope of one call in this view: built once, where the call enters.

        Raises:
            TypeError: ``call`` is no call (`ferrotool._values.calls.misused`).
        """
        if type(call) is not ToolUseBlock and (error := misused("call_tool", call)) is not None:
            raise error
        if type(context) is not RuntimeContext and (error := misused_context("call_tool", context)):
            raise error
        return CallScope.of(
            call,
            self._runner,
            context,
            agent,
            on_progress,
            execution=execution,
            permissions=self.state.permissions,
            approved=approved,
        )

    def route(
        self, call: ToolUseBlock, execution: ExecutionConfig | None = None, *, sync: bool = False
    ) -> Route:
        """Where one call goes: the one decision of direct call or pipeline.

        A call runs as its tool's Rust direct call (`ferrotool._core.DirectCall`) when all of
        these hold, else through the pipeline of its tool (`ferrotool._execution.pipeline`):

        * the tool has one (`CompiledTool.direct_for`: its call needs no step besides parse,
          invoke and convert; no permission check, external suspension, presets, injections,
          converter, timeout or retries), and it runs where the caller is (``sync``);
        * the request lets its calls skip the gate: backend tools allowed, no tool of the
          request's own, the session's permissions trivial;
        * the tool is visible in this view (its groups active);
        * the call's own settings try it once (a batch's ``max_attempts``).

        A name the view does not resolve routes to its result (unknown, or not available).
        Every entry uses this decision: `call_tool`, `call_tool_sync`, batches and resumes
        (`run_one`), and `Toolkit.call_tool` and `Toolkit.call_tool_sync`, whose Rust base
        class runs the default view's direct calls itself (`ferrotool._core.ToolCaller`;
        `tests/property/test_routing.py` checks the two agree). Middleware wraps whichever runs.

        Raises:
            TypeError: ``call`` is no call (a tool's name, say).
        """
        try:
            name = call.name
        except AttributeError:
            raise misused("call_tool", call) or TypeError(f"not a call: {call!r:.40}") from None
        if type(name) is str and (execution is None or execution.attempts == 1):
            calls = self._direct_calls(sync=True) if sync else self._direct
            if calls is None:
                calls = self._direct = self._direct_calls(sync=False)
            direct = calls.get(name)
            if direct is not None:
                return direct
        tool = self.resolve(name)
        return self._missing(call) if tool is None else tool

    def immediate(self, name: str, execution: ExecutionConfig | None) -> _core.DirectCall | None:
        """The direct call that runs a call of ``name`` on the spot, if it never yields.

        An inline tool's, with no middleware around it, tried once (`BatchHost.immediate`).
        """
        if self._onion is not None or (execution is not None and execution.attempts > 1):
            return None
        if type(name) is not str:
            return None
        calls = self._direct
        if calls is None:
            calls = self._direct = self._direct_calls(sync=False)
        direct = calls.get(name)
        if direct is None or self._direct_calls(sync=True).get(name) is not direct:
            return None
        return direct

    def runs(self, base: CallScope) -> Callable[[ToolUseBlock], Awaitable[ToolResultBlock]]:
        """How a batch runs each of its calls in ``base`` (`BatchHost.runs`).

        Without middleware and batch settings, a plain tool's call goes straight to its Rust
        direct call, with no scope built; any other call is `run_one` of its scope.
        """
        run_one = self.run_one
        execution = base.execution
        if self._onion is not None or not (
            execution is None or (execution.timeout is None and execution.attempts == 1)
        ):
            return lambda call: run_one(base.with_call(call))
        calls = self._direct
        if calls is None:
            calls = self._direct = self._direct_calls(sync=False)
        direct_of = calls.get

        def run(call: ToolUseBlock) -> Awaitable[ToolResultBlock]:
            name = call.name
            direct = direct_of(name) if type(name) is str else None
            if direct is not None:
                return cast("Awaitable[ToolResultBlock]", direct(call))
            return run_one(base.with_call(call))

        return run

    def run_one(self, scope: CallScope) -> Awaitable[ToolResultBlock]:
        """One call through the middleware (if any: its onion is built once) and its route."""
        layers = self._onion
        if layers is None:
            return self._dispatch(scope)

        def rest(call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
            return self._dispatch(scope.moved(call, context))

        return through(layers, rest, scope.call, scope.context)

    def bare(self, call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
        """A call inside the toolkit's middleware that is no plain tool's direct call.

        The core of `Toolkit.call_tool`'s onion (`ferrotool._core.DirectRoute`): dispatched in
        this view, or in the view of the request config its context carries, with no
        middleware of its own.
        """
        view = self
        config = context.get(ToolRequestConfig) if context.values else None
        if config is not None:
            view = ToolView(self._table, self._runner, self.state, config)
        return view._dispatch(view.scope(call, context))

    def _dispatch(self, scope: CallScope) -> Awaitable[ToolResultBlock]:
        """Run one call where `route` sends it."""
        call = scope.call
        execution = scope.execution
        routed = self.route(call, execution)
        if type(routed) is _core.DirectCall:
            running = cast("Awaitable[ToolResultBlock]", routed(call))
            if execution is None or execution.timeout is None:
                return running
            return _timed(running, call, execution.timeout)
        if type(routed) is ToolResultBlock:
            return _done(routed)
        tool = cast("CompiledTool", routed)
        if self._store is not None and self._key is not None and _uses_session(tool):
            attempts = self._runner.config.session_attempts
            handle = SessionHandle(self._store, self._key, self.state, attempts)
            scope = scope.moved(call, scope.context.with_value(handle))
        return run_call(tool, scope)

    def _direct_calls(self, *, sync: bool) -> dict[str, _core.DirectCall]:
        """The direct calls this view may hand out (`route`'s answers for plain tools).

        None when the request's calls may not skip the gate. Cached on the table per set of
        active groups, so a view's is one lookup.
        """
        if not self._plain:
            return _NO_DIRECT_CALLS
        return self._table.direct_calls(self.active_groups, sync=sync)

    def _missing(self, call: ToolUseBlock) -> ToolResultBlock:
        """The result for a name this view does not resolve: unknown, or not available."""
        entries = self._table.entries
        if not _is_name(call.name) or call.name not in entries:
            return outcomes.unknown(call, self.names())
        if not backend_allowed(self.config.mode):
            reason = "this request uses only its own tools"
        else:
            groups = sorted(entries[call.name].groups - {BASIC})
            reason = f"its tool group(s) {', '.join(groups)} are not active in this session"
            if RESET_TOOLS in entries:
                reason += f"; activate one with {RESET_TOOLS} first"
        return outcomes.unavailable(call, reason)

    def __repr__(self) -> str:
        return (
            f"<ToolView mode={self.config.mode.name} groups={sorted(self.active_groups)} "
            f"externals={list(self._externals)}>"
        )


__all__ = ["ToolView", "compile_external"]
