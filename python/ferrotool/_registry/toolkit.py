"""The `Toolkit`: where tools, groups, skills and MCP servers are registered.

Changes are copy-on-write: `snapshot` hands the current table to an immutable `Registry`
(`ferrotool._registry.registry`) in O(1), and the next change copies the table first. The read
and call side (lookups, schemas, views, calls) is `ToolSet`'s, shared with `Registry`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import types
from collections.abc import (
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, cast, final

from ferrotool._execution.middleware import Middleware
from ferrotool._execution.pipeline import compile_tool
from ferrotool._execution.runner import Runner, ToolkitConfig
from ferrotool._registry.registry import Registry, ToolSet
from ferrotool._registry.table import Table, TableCaches
from ferrotool._registry.view import ToolView
from ferrotool._requests.config import ToolRequestConfig
from ferrotool._session.state import (
    EMPTY_STATE,
    SessionKey,
    SessionStore,
    ToolContextState,
)
from ferrotool._tools.base import AgentTool, ToolBase
from ferrotool._tools.function import FunctionTool, tool
from ferrotool._values.context import ProgressSink
from ferrotool._values.groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool.builtins.reset_tools import RESET_TOOLS, ResetTools
from ferrotool.errors import RegistrationError
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

if TYPE_CHECKING:
    from ferrotool.mcp.client import McpClient
    from ferrotool.mcp.tool import McpTrust


@final
class Toolkit(ToolSet):
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

    # - MCP servers -

    async def register_mcp(
        self,
        client: McpClient,
        /,
        *,
        group: str | Iterable[str] = (),
        presets: Mapping[str, Mapping[str, object]] | None = None,
        enable: Iterable[str] = (),
        disable: Iterable[str] = (),
        trust: McpTrust = False,
    ) -> tuple[AgentTool, ...]:
        """Connect an MCP client and register its server's tools as ``mcp__{server}__{tool}``.

        The toolkit then follows the server: when it says its tools changed, they are
        replaced by the new listing (one change: a snapshot holds the old tools or the new).

        Only a tool the server marks ``readOnlyHint: true`` runs without asking; every other
        one asks (the MCP defaults: a missing ``readOnlyHint`` is false, a missing
        ``destructiveHint`` true), unless ``trust`` covers it. A bad tool in the listing (its
        schema does not compile, its name is empty or listed twice) is left out alone, named
        in a warning and in ``client.rejected_tools``; the others register.

        Args:
            client: The server's client (initialized here if it is not yet).
            group: The group or groups the tools join (checked before connecting).
            presets: Fixed arguments per tool, by the tool's name on the server.
            enable: When not empty, only these tools (by their names on the server).
            disable: Tools to leave out (ignored when ``enable`` is given).
            trust: Which tools run without asking (`ferrotool.mcp.McpTrust`): ``False``, the
                read-only ones; ``True``, all of them; or a collection of names on the
                server. Deny and ask rules still apply, and ``EXPLORE`` mode still denies
                what is not read-only.

        Returns:
            The registered tools (`ferrotool.mcp.McpTool`).

        Raises:
            RegistrationError: A group does not exist, or a name is taken; nothing is
                registered then.
            McpError: The server could not be reached.
            TypeError: ``trust`` is neither a flag nor a collection of names.
        """
        # Imported here: the mcp SDK it needs is an optional extra (``ferrotool[mcp]``).
        from ferrotool.mcp._registration import register_mcp

        return await register_mcp(
            self,
            client,
            group=group,
            presets=presets,
            enable=enable,
            disable=disable,
            trust=trust,
        )

    async def remove_mcp(self, name: str) -> tuple[str, ...]:
        """Remove every tool of the MCP server named ``name`` and close its client.

        Returns:
            The names removed (none for a server not registered: nothing happens then).

        Raises:
            RegistrationError: Removal is disabled for this toolkit.
        """
        # Imported here: the mcp SDK it needs is an optional extra (``ferrotool[mcp]``).
        from ferrotool.mcp._registration import remove_mcp

        return await remove_mcp(self, name)

    def _swap(
        self,
        removed: Iterable[str],
        added: Iterable[tuple[AgentTool, Mapping[str, object] | None]],
        groups: frozenset[str],
    ) -> tuple[AgentTool, ...]:
        """Remove and register tools in one change: all of it or none of it.

        A tool registered under a name just removed keeps that name's place in the order.
        """
        config = self._runner.config
        compiled = [compile_tool(item, presets, config) for item, presets in added]
        with self._lock:
            self._check_groups(groups)
            gone = set(removed)
            seen: set[str] = set()
            for entry in compiled:
                taken = self._table.entries.get(entry.name)
                if (taken is not None and entry.name not in gone) or entry.name in seen:
                    first = taken.origin if taken is not None else entry.origin
                    raise RegistrationError(
                        f"a tool named {entry.name!r} is already registered (from {first})"
                    )
                seen.add(entry.name)
            table = self._writable()
            places = {name: table.drop(name).seq for name in gone if name in table.entries}
            for entry in compiled:
                seq = places.get(entry.name)
                if seq is None:
                    seq, table.next_seq = table.next_seq, table.next_seq + 1
                table.place(dataclasses.replace(entry, groups=groups, seq=seq))
        return tuple(entry.tool for entry in compiled)

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
