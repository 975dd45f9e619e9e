"""The `Toolkit` (where tools are registered) and its immutable `Registry` snapshots.

Both read and call through their table: `call_tool` is a call through the default view (every
group at its default activation, and the request config the context carries, if any). A plain
tool's call goes from `call_tool` (a Rust method of the base class, `_core.ToolCaller`)
straight to its Rust direct call; every other call runs the pipeline of
`ferrotool._execution.pipeline` through a `ToolView`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import types
from collections.abc import (
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, cast, final

from ferrotool import _core
from ferrotool._execution.batch import ToolBatch
from ferrotool._execution.events import EventSink
from ferrotool._execution.pipeline import ResultSink, compile_tool
from ferrotool._execution.resume import Reply
from ferrotool._execution.runner import Middleware, Runner, ToolkitConfig
from ferrotool._execution.stream import EventStream
from ferrotool._registry.listing import ToolLists
from ferrotool._registry.table import Table, TableCaches
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
from ferrotool._tools.base import AgentTool, ToolBase
from ferrotool._tools.function import FunctionTool, tool
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool._values.spec import ToolSpec
from ferrotool.builtins.reset_tools import RESET_TOOLS, ResetTools
from ferrotool.errors import RegistrationError
from ferrotool.providers import ProviderFormat
from ferrotool.skills.registration import (
    check_loader_name,
    own_group,
    place_loader,
    refresh_loader,
    skill_tool_group,
    skills_of,
)
from ferrotool.skills.repository import SkillRepository, merge_skills
from ferrotool.skills.skill import AgentSkill, SkillSet


class _ToolSet(_core.ToolCaller, ToolLists):
    """The read and call side shared by `Toolkit` and `Registry`."""

    __slots__ = ("_default_view", "_runner", "_table")

    _table: Table
    _runner: Runner
    _default_view: ToolView | None

    def _use(self, table: Table) -> None:
        """Hold ``table`` from now on (`call_tool` reads its direct calls)."""
        self._table = table
        self._default_view = None
        direct = {} if self._runner.config.middleware else table.direct
        self._bind(direct, _ToolSet._call_slow)

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

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._table.entries)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The specs, in registration order."""
        return tuple(entry.spec for entry in self._table.entries.values())

    def groups(self) -> tuple[ToolGroup, ...]:
        """The tool groups, in the order they were added."""
        return tuple(self._table.groups.values())

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
            return _ToolSet.view(self, EMPTY_STATE, config)
        view = self._default_view
        if view is None:
            view = self._default_view = _ToolSet.view(self)
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

    # `call_tool` is the base class's (`_core.ToolCaller`): a plain tool's call goes from there
    # straight to its Rust direct call; every other call comes back here.

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

    def call_tool_sync(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
    ) -> ToolResultBlock:
        """`call_tool` for sync code: a sync tool runs on the calling thread.

        Calls that need an event loop (async tools, permission checks, timeouts, middleware)
        run in a fresh one through `anyio.run`; do not call this from inside a running event
        loop.
        """
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
    ) -> EventStream:
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


@final
class Registry(_ToolSet):
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
            entry = compile_tool(item, None, self._runner.config)
            old = table.entries.get(entry.name)
            seq = old.seq if old is not None else table.next_seq
            if old is None:
                table.next_seq += 1
            table.place(dataclasses.replace(entry, seq=seq))
        return Registry(table, self._runner)

    @property
    def skills(self) -> SkillSet:
        """The skills registered with `Toolkit.add_skills` (the loader's)."""
        return skills_of(self._table)

    def __repr__(self) -> str:
        return f"<Registry of {len(self._table.entries)} tools>"


@final
class Toolkit(_ToolSet):
    """Where tools are registered; `snapshot` gives the immutable `Registry` a request uses.

    Changes and snapshots are atomic with respect to each other (a lock around the
    copy-on-write switch); reads and calls take no lock.

    Args:
        config: Threads, default timeout, removal policy, the meta tool and middleware.
        on_progress: Receives the progress chunks of every call.
    """

    __slots__ = ("_lock", "_shared")

    def __init__(
        self,
        config: ToolkitConfig | None = None,
        *,
        on_progress: ProgressSink | None = None,
    ) -> None:
        self._runner = Runner(
            config or ToolkitConfig(), () if on_progress is None else (on_progress,)
        )
        self._lock = threading.RLock()
        self._shared = False
        self._use(Table())

    @property
    def config(self) -> ToolkitConfig:
        """The toolkit's configuration."""
        return self._runner.config

    def view(
        self,
        state: ToolContextState = EMPTY_STATE,
        config: ToolRequestConfig | None = None,
        *,
        store: SessionStore | None = None,
        key: SessionKey | None = None,
        middleware: Sequence[Middleware] = (),
    ) -> ToolView:
        """The view of a snapshot (`Registry.view`): later changes of the toolkit never reach it."""
        return self.snapshot().view(state, config, store=store, key=key, middleware=middleware)

    def snapshot(self) -> Registry:
        """The current tools as an immutable `Registry`, in O(1).

        The toolkit copies its table before the next change instead (copy on write).
        """
        with self._lock:
            self._shared = True
            return Registry(self._table, self._runner)

    def _writable(self) -> Table:
        """The table to change (the caller holds the lock): a copy if a registry holds it."""
        if self._shared:
            self._use(self._table.copy())
            self._shared = False
        else:
            self._table.caches = TableCaches()  # derived values are stale
            self._default_view = None
        return self._table

    # - groups -

    def add_group(self, group: ToolGroup) -> ToolGroup:
        """Add a tool group.

        Raises:
            RegistrationError: A group of that name exists, or the meta tool's name is taken.
        """
        with self._lock:
            if group.name in self._table.groups:
                raise RegistrationError(f"Tool group '{group.name}' already exists")
            self._check_meta()
            table = self._writable()
            table.groups[group.name] = group
            table.refresh_direct()
            self._refresh_meta(table)
            refresh_loader(table, self._runner.config)
        return group

    def create_group(
        self,
        name: str,
        description: str = "",
        *,
        instructions: str | None = None,
        scope: ToolGroupScope = ToolGroupScope.SESSION,
        active: bool = False,
    ) -> ToolGroup:
        """Create and add a tool group (see `ToolGroup`).

        Raises:
            RegistrationError: A group of that name exists, or the meta tool's name is taken;
                nothing is added then.
            ValueError: The name is invalid or ``basic``.
        """
        return self.add_group(
            ToolGroup(
                name=name,
                description=description,
                instructions=instructions,
                scope=scope,
                active=active,
            )
        )

    def add_to_group(self, group: str, tool_name: str) -> None:
        """Make a registered tool a member of a group too.

        Raises:
            RegistrationError: The group or the tool does not exist.
        """
        with self._lock:
            self._check_groups((group,))
            entry = self._table.entries.get(tool_name)
            if entry is None:
                raise RegistrationError(f"Tool not found: {tool_name}")
            if group == BASIC or group in entry.groups:
                return
            table = self._writable()
            table.place(dataclasses.replace(entry, groups=entry.groups | {group}))

    def remove_group(self, name: str) -> tuple[str, ...]:
        """Remove a group; tools that were only in it are removed too.

        Returns:
            The names of the tools removed.

        Raises:
            RegistrationError: Removal is disabled, or no group has that name.
        """
        with self._lock:
            self._check_removal(f"tool group {name!r}")
            if name not in self._table.groups:
                raise RegistrationError(f"Tool group '{name}' does not exist")
            table = self._writable()
            del table.groups[name]
            removed = []
            for tool_name in tuple(table.members.get(name, ())):
                entry = table.entries[tool_name]
                rest = entry.groups - {name}
                if rest:
                    table.place(dataclasses.replace(entry, groups=rest))
                else:
                    removed.append(tool_name)
                    table.drop(tool_name)
            table.members.pop(name, None)
            table.refresh_direct()
            self._refresh_meta(table)
            refresh_loader(table, self._runner.config)
        return tuple(removed)

    def _check_groups(self, groups: Iterable[str]) -> None:
        for group in groups:
            if group != BASIC and group not in self._table.groups:
                raise RegistrationError(f"Tool group '{group}' does not exist")

    # - tools -

    def register(
        self,
        item: object,
        /,
        *,
        presets: Mapping[str, object] | None = None,
        group: str | Iterable[str] = (),
    ) -> tuple[AgentTool, ...]:
        """Register a tool, a plain function (made a tool with default options) or an object.

        An object that is neither registers every ``@tool`` method its class declares, bound to
        it (methods inherited from base classes are not scanned).

        Args:
            item: A `ToolBase`, an ``@tool`` function, a typed function, or an object.
            presets: Fixed argument values: hidden from the schema, merged over the model's
                arguments on every call (only for a single tool).
            group: The group or groups the tools join (none: ``basic``, always active). A
                tool in several groups is visible while any of them is active.

        Returns:
            The registered tools.

        Raises:
            RegistrationError: A name is taken (both origins named) or invalid, a group does
                not exist, or an object has no tools. Nothing is registered then.
            SchemaError: A function's parameters cannot become a schema.
        """
        groups = frozenset((group,) if isinstance(group, str) else group) - {BASIC}
        tools = _tools_of(item)
        if presets and len(tools) != 1:
            raise RegistrationError("presets are given for a single tool, not for an object")
        config = self._runner.config
        compiled = [compile_tool(item_tool, presets, config) for item_tool in tools]
        with self._lock:
            self._check_groups(groups)
            seen: dict[str, str] = {}
            for entry in compiled:
                name = entry.name
                taken = self._table.entries.get(name)
                if taken is not None or name in seen:
                    first = taken.origin if taken is not None else seen[name]
                    raise RegistrationError(
                        f"a tool named {name!r} is already registered (from {first}); "
                        f"cannot register another from {entry.origin}"
                    )
                seen[name] = entry.origin
            table = self._writable()
            for entry in compiled:
                table.place(dataclasses.replace(entry, groups=groups, seq=table.next_seq))
                table.next_seq += 1
        return tuple(entry.tool for entry in compiled)

    def set_presets(self, name: str, presets: Mapping[str, object] | None) -> None:
        """Replace a tool's presets (``None`` clears them); the schema follows.

        Raises:
            RegistrationError: No tool has that name.
        """
        with self._lock:
            entry = self._table.entries.get(name)
            if entry is None:
                raise RegistrationError(f"Tool not found: {name}")
            item = entry.tool
            if isinstance(item, FunctionTool) and entry.presets:
                item = FunctionTool(item.function, item.options, owner=item.owner)
            replacement = compile_tool(item, presets, self._runner.config)
            table = self._writable()
            table.place(dataclasses.replace(replacement, groups=entry.groups, seq=entry.seq))

    def remove(self, name: str) -> AgentTool:
        """Remove a tool and return it.

        Raises:
            RegistrationError: Removal is disabled (``allow_removal=False``) or no tool has
                that name.
        """
        with self._lock:
            self._check_removal(f"tool {name!r}")
            if name not in self._table.entries or (name == RESET_TOOLS and self._is_meta(name)):
                raise RegistrationError(f"Tool not found: {name}")
            return self._writable().drop(name).tool

    def _check_removal(self, what: str) -> None:
        if not self._runner.config.allow_removal:
            raise RegistrationError(f"cannot remove {what}: removal is disabled for this toolkit")

    # - the meta tool -

    def _is_meta(self, name: str) -> bool:
        entry = self._table.entries.get(name)
        return entry is not None and isinstance(entry.tool, ResetTools)

    def _check_meta(self) -> None:
        """Refuse a change that would register the meta tool while its name is taken."""
        if not self._runner.config.meta_tool:
            return
        old = self._table.entries.get(RESET_TOOLS)
        if old is not None and not isinstance(old.tool, ResetTools):
            raise RegistrationError(
                f"a tool named {RESET_TOOLS!r} is already registered (from {old.origin}); "
                "it is the meta tool's name"
            )

    def _refresh_meta(self, table: Table) -> None:
        """Keep ``reset_tools`` in step with the groups.

        It is registered while the meta tool is on and some session-scoped group exists; its
        schema has one boolean per such group.
        """
        if not self._runner.config.meta_tool:
            return
        old = table.entries.get(RESET_TOOLS)
        groups = tuple(table.groups.values())
        if not any(group.scope is ToolGroupScope.SESSION for group in groups):
            if old is not None:
                table.drop(RESET_TOOLS)
            return
        entry = compile_tool(ResetTools(groups), None, self._runner.config)
        seq = old.seq if old is not None else table.next_seq
        if old is None:
            table.next_seq += 1
        table.place(dataclasses.replace(entry, seq=seq))

    # - skills -

    def add_skills(self, *sources: AgentSkill | SkillRepository) -> SkillSet:
        """Add skills (or every skill of repositories, read now), and the skill loader.

        ``load_skill_through_path`` is registered without a group the first time, so it is
        visible whenever skills exist; later sources of the same skill name win. For skills
        that change per request or on disk, use `ferrotool.skills.SkillViews` instead.

        Returns:
            Every skill the toolkit holds now.

        Raises:
            RegistrationError: A tool that is not the loader has its name.
        """
        added = merge_skills([SkillSet((s,)) if isinstance(s, AgentSkill) else s for s in sources])
        with self._lock:
            check_loader_name(self._table)
            skills = merge_skills([skills_of(self._table), added])
            place_loader(self._writable(), skills, self._runner.config)
        return skills

    def create_skill_tool_group(
        self,
        name: str,
        description: str = "",
        *,
        skill_name: str,
        active: bool = False,
        instructions: str | None = None,
    ) -> ToolGroup:
        """Create a group that loading the skill named ``skill_name`` activates.

        Its description says so (once). Register tools into it with ``register(...,
        group=name)``.

        Raises:
            RegistrationError: A group of that name exists.
            ValueError: The name is invalid, or ``skill_name`` is blank.
        """
        group = skill_tool_group(
            name, description, skill_name=skill_name, active=active, instructions=instructions
        )
        return self.add_group(group)

    def register_skill_tools(self, skill: AgentSkill, *items: object) -> tuple[AgentTool, ...]:
        """Add a skill and register tools that come with it, in ``<skillId>_skill_tools``.

        The group is created inactive when missing: the tools stay hidden until a session
        loads the skill.

        Raises:
            RegistrationError: As `register`; or the skill's id cannot name a group.
        """
        group = own_group(skill)
        if group not in self._table.groups:
            self.create_group(group, group)
        self.add_skills(skill)
        return tuple(tool for item in items for tool in self.register(item, group=group))

    def __repr__(self) -> str:
        return f"<Toolkit of {len(self._table.entries)} tools>"


def _tools_of(item: object) -> list[AgentTool]:
    """The tools ``item`` stands for: itself, a function made a tool, or an object's methods."""
    if isinstance(item, (FunctionTool, ToolBase)):
        return [cast("AgentTool", item)]
    if isinstance(item, AgentTool) and not isinstance(item, type):
        return [item]
    if isinstance(item, types.FunctionType | types.MethodType | functools.partial):
        return [cast("AgentTool", tool(cast("Callable[..., object]", item)))]
    tools: list[AgentTool] = []
    for attr, value in vars(type(item)).items():
        if isinstance(value, FunctionTool):
            tools.append(cast("AgentTool", getattr(item, attr)))
    if not tools:
        raise RegistrationError(
            f"{type(item).__qualname__} object has no @tool methods to register"
        )
    return tools


__all__ = ["Registry", "Toolkit"]
