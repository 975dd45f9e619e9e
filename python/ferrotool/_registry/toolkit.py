"""The `Toolkit`: where tools and groups are registered, and where the wings plug in.

Changes are copy-on-write: `snapshot` hands the current table to an immutable `Registry`
(`ferrotool._registry.registry`) in O(1), and the next change copies the table first. The read
and call side (lookups, schemas, views, calls) is `ToolSet`'s, shared with `Registry`.

The wings change a toolkit through its public methods only: `replace` (tools removed and added
in one change, as an MCP server's listing changes) and `rebuild` (one tool rebuilt from the one
it replaces, as the skill loader grows). The tools derived from the groups (`DerivedTool`: the
meta tool, the skill loader) are rebuilt here whenever the groups change. The methods that
belong to a wing (`register_mcp`, `remove_mcp`, `add_skills`, `create_skill_tool_group`,
`register_skill_tools`) are kept for the users who call them: each one's body imports its
wing's function when it is called and hands it the toolkit (the README's "Layout" says why).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import types
from collections.abc import (
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from typing import Final, cast, final

from ferrotool._execution.middleware import Middleware
from ferrotool._execution.pipeline import compile_tool
from ferrotool._execution.runner import Runner, ToolkitConfig
from ferrotool._registry.derived import RESET_TOOLS, DerivedTool, ResetTools
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
from ferrotool._tools.external import SchemaOnlyTool
from ferrotool._tools.function import FunctionTool, tool
from ferrotool._values.context import ProgressSink
from ferrotool._values.groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import RegistrationError

_log: Final = logging.getLogger("ferrotool")


@final
class Toolkit(ToolSet):
    """Where tools are registered; `snapshot` gives the immutable `Registry` a request uses.

    Changes and snapshots are atomic with respect to each other (a lock around the
    copy-on-write switch); reads and calls take no lock.

    Args:
        config: Threads, default timeout, removal policy, the meta tool and middleware.
        on_progress: Receives the progress chunks of every call.
    """

    __slots__ = ("_lock", "_shared", "_watchers")

    def __init__(
        self,
        config: ToolkitConfig | None = None,
        *,
        on_progress: ProgressSink | None = None,
    ) -> None:
        self._runner = Runner(
            config or ToolkitConfig(), () if on_progress is None else (on_progress,)
        )
        self._watchers: dict[object, Callable[[], None]] = {}
        self._lock = _ChangeLock(self._changed)
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

    def on_change(self, key: object, watcher: Callable[[], None] | None) -> None:
        """Call ``watcher()`` after each change of the toolkit (its tools, groups or presets).

        It is called on the thread that made the change, once the change is complete (a
        `snapshot` taken then holds it), with no lock held; it must be quick and raise nothing
        (what it raises is logged). An MCP server that serves the toolkit follows it this way.

        Args:
            key: Names the watcher (one per key).
            watcher: The watcher; ``None`` removes the one under ``key``.
        """
        with self._lock:
            if watcher is None:
                self._watchers.pop(key, None)
            else:
                self._watchers[key] = watcher

    def _changed(self) -> None:
        for watcher in tuple(self._watchers.values()):
            try:
                watcher()
            except Exception:
                _log.exception("a toolkit change watcher failed")

    def _writable(self) -> Table:
        """The table to change (the caller holds the lock): a copy if a registry holds it."""
        self._lock.dirty = True
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
            self._refresh_derived(table)
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

        With removal disabled (``allow_removal=False``) this is a no-op, as the chapter has it:
        nothing is removed or checked, a warning is logged (logger ``ferrotool``) and ``()`` is
        returned.

        Returns:
            The names of the tools removed.

        Raises:
            RegistrationError: No group has that name (removal allowed).
        """
        with self._lock:
            if not self._removal_allowed(f"tool group {name!r}"):
                return ()
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
            self._refresh_derived(table)
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
                table.put(entry, groups)
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
            self._writable().put(replacement, entry.groups)

    def remove(self, name: str) -> AgentTool | None:
        """Remove a tool and return it.

        With removal disabled (``allow_removal=False``) this is a no-op, as the chapter has it:
        nothing is removed or checked, a warning is logged (logger ``ferrotool``) and ``None``
        is returned.

        Returns:
            The tool removed; ``None`` when removal is disabled.

        Raises:
            RegistrationError: No tool has that name (removal allowed).
        """
        with self._lock:
            if not self._removal_allowed(f"tool {name!r}"):
                return None
            if name not in self._table.entries or (name == RESET_TOOLS and self._is_meta(name)):
                raise RegistrationError(f"Tool not found: {name}")
            return self._writable().drop(name).tool

    def register_schemas(
        self,
        definitions: Iterable[Mapping[str, JsonValue] | ToolSpec] | None,
        /,
        *,
        group: str | Iterable[str] = (),
    ) -> tuple[AgentTool, ...]:
        """Register external tools from their definitions, all of them or none.

        Each definition becomes a `SchemaOnlyTool` (any spelling it takes: plain, OpenAI chat,
        Anthropic, MCP, or a `ToolSpec`): its calls validate and suspend for the client to run.
        ``None`` or no definitions register nothing.

        Returns:
            The registered tools.

        Raises:
            RegistrationError: A name is taken or repeated, or a group does not exist; nothing
                is registered then.
            ValueError: A definition has no name or no JSON Schema object.
        """
        tools = [SchemaOnlyTool(definition) for definition in definitions or ()]
        return self.replace((), tools, group=group) if tools else ()

    def remove_if_same(self, tool: object) -> bool:
        """Remove the tool registered under ``tool``'s name only if it is ``tool`` itself.

        For a source that registered a tool and later wants it gone without taking away a
        tool someone else registered under the same name meanwhile (AgentScope's
        ``removeToolIfSame``). ``tool`` is what was given to `register`: a `ToolBase`, or a
        ``@tool`` function.

        With removal disabled (``allow_removal=False``) this is a no-op, like `remove`: the
        tool stays, a warning naming it is logged and ``False`` is returned.

        Returns:
            Whether the tool was removed.
        """
        with self._lock:
            for name, entry in self._table.entries.items():
                if _registered_as(entry.tool, tool):
                    if name == RESET_TOOLS and self._is_meta(name):
                        return False
                    if not self._removal_allowed(f"tool {name!r}"):
                        return False
                    self._writable().drop(name)
                    return True
            return False

    def _removal_allowed(self, what: str) -> bool:
        """Whether removal is allowed; when it is not, log that ``what`` stays."""
        if self._runner.config.allow_removal:
            return True
        _log.warning("%s not removed: removal is disabled for this toolkit", what)
        return False

    def replace(
        self,
        removed: Iterable[str] = (),
        added: Iterable[object] = (),
        *,
        group: str | Iterable[str] = (),
        presets: Mapping[str, Mapping[str, object]] | None = None,
    ) -> tuple[AgentTool, ...]:
        """Remove tools and register others in one change: a snapshot sees all of it or none.

        A tool registered under a name just removed keeps that name's place in the order; the
        others go last. This is how a source that owns tools follows them (an MCP server's
        listing, `ferrotool.mcp`): `allow_removal` governs `remove` and `remove_group`, not
        this. Names in ``removed`` that are not registered are ignored.

        Args:
            removed: The names of the tools to remove.
            added: What to register, each item as `register` takes it (a tool, a function, an
                object with ``@tool`` methods).
            group: The group or groups the added tools join (none: ``basic``).
            presets: Fixed arguments, by the added tool's name.

        Returns:
            The registered tools.

        Raises:
            RegistrationError: A group does not exist, or an added name is taken by a tool
                that is not removed (or by another added tool); nothing changes then.
            SchemaError: A function's parameters cannot become a schema.
        """
        groups = frozenset((group,) if isinstance(group, str) else group) - {BASIC}
        config = self._runner.config
        presets = presets or {}
        compiled = [
            compile_tool(item_tool, presets.get(item_tool.spec.name), config)
            for item in added
            for item_tool in _tools_of(item)
        ]
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
            for name in gone - seen:
                if name in table.entries:
                    table.drop(name)
            for entry in compiled:
                table.put(entry, groups)
        return tuple(entry.tool for entry in compiled)

    def rebuild(
        self, name: str, build: Callable[[AgentTool | None], AgentTool | None]
    ) -> AgentTool | None:
        """Replace the tool of ``name`` by ``build(tool)`` in one change (``None``: none).

        ``build`` gets the tool registered under ``name`` (``None`` if there is none) and returns
        the tool to register ungrouped in its place, or ``None`` to remove it; nothing else
        changes the toolkit meanwhile. A tool that is a `DerivedTool` is rebuilt again whenever
        the groups change. ``build`` may raise to leave the toolkit unchanged.

        Returns:
            The tool now registered under ``name``, or ``None``.

        Raises:
            RegistrationError: The tool built is named otherwise than ``name``.
        """
        with self._lock:
            entry = self._table.entries.get(name)
            made = build(None if entry is None else entry.tool)
            if made is None:
                if entry is not None:
                    self._writable().drop(name)
                return None
            compiled = compile_tool(made, None, self._runner.config)
            if compiled.name != name:
                raise RegistrationError(f"a tool named {compiled.name!r} cannot replace {name!r}")
            self._writable().put(compiled, frozenset())
        return made

    # - the tools derived from the groups -

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

    def _refresh_derived(self, table: Table) -> None:
        """Rebuild every `DerivedTool` from the groups, after a change of them.

        The meta tool ``reset_tools`` is one while the meta tool is on: registered while some
        session-scoped group exists, its schema one boolean per such group.
        """
        groups = tuple(table.groups.values())
        config = self._runner.config
        derived = [table.entries[name].tool for name in table.derived]
        if config.meta_tool and RESET_TOOLS not in table.entries:
            derived.append(ResetTools(()))
        for item in derived:
            name = item.spec.name
            made = cast("DerivedTool", item).following(groups)
            if made is None:
                if name in table.entries:
                    table.drop(name)
            else:
                table.put(compile_tool(made, None, config))

    def __repr__(self) -> str:
        return f"<Toolkit of {len(self._table.entries)} tools>"


@final
class _ChangeLock:
    """The toolkit's reentrant lock; leaving its outermost hold after a change tells watchers.

    A change marks it ``dirty`` (`Toolkit._writable`); the watchers are called after the lock is
    released, on the changing thread.
    """

    __slots__ = ("_depth", "_lock", "_on_change", "dirty")

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._on_change = on_change
        self.dirty = False

    def __enter__(self) -> None:
        self._lock.acquire()
        self._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        fire = self._depth == 0 and self.dirty
        if fire:
            self.dirty = False
        self._lock.release()
        if fire:
            self._on_change()


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


def _registered_as(registered: object, given: object) -> bool:
    """Whether the registered tool is what ``given`` registered.

    That is the object itself, or the same function: a ``@tool`` registered with presets is a
    copy around the same function.
    """
    if registered is given:
        return True
    if not isinstance(registered, FunctionTool):
        return False
    function = given.function if isinstance(given, FunctionTool) else given
    return registered.function is function


__all__ = ["Registry", "Toolkit"]
