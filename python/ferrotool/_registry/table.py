"""The table of registered tools: compiled tools, groups and their members; and its caches.

A `Registry` shares its toolkit's table; the toolkit copies the table before its next change
(copy on write), so the entries, groups and members of a table reachable from a registry never
change. What does change is its `TableCaches`: values derived from the table on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable
from typing import Final, TypeVar, final

from ferrotool import _core
from ferrotool._definitions.formats import ProviderFormat
from ferrotool._execution.compiled import CompiledTool
from ferrotool._registry.derived import DerivedTool
from ferrotool._session.state import ToolContextState
from ferrotool._values.groups import BASIC, ToolGroup

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_CACHE_SIZE: Final = 1024


@final
class TableCaches:
    """Values derived from a table, built on first use.

    Each cache is bounded: emptied when full, since request shapes either repeat or do not.
    """

    __slots__ = ("schemas", "view_direct", "view_schemas", "visible")

    def __init__(self) -> None:
        self.schemas: dict[tuple[str, bool], bytes] = {}
        self.view_schemas: dict[tuple[str, bool, frozenset[str], frozenset[str]], bytes] = {}
        self.visible: dict[tuple[frozenset[str], frozenset[str]], tuple[str, ...]] = {}
        self.view_direct: dict[tuple[frozenset[str], bool], dict[str, _core.DirectCall]] = {}

    @staticmethod
    def remember(cache: dict[K, V], key: K, value: V) -> V:
        """Store ``value`` in a bounded cache and return it."""
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[key] = value
        return value


@final
class Table:
    """What a toolkit holds: the tools, the groups and their members.

    Attributes:
        entries: The compiled tools by name, in registration order.
        groups: The tool groups by name, in the order they were added.
        members: The names of each group's tools (``basic``: the ungrouped ones).
        direct: The Rust direct calls of the tools `call_tool` may run without a Python frame:
            tools visible with every group at its default activation.
        direct_sync: The same for `call_tool_sync`: the direct calls a sync caller runs.
        next_seq: The registration number of the next tool.
        derived: The names of the tools rebuilt from the groups (`DerivedTool`).
        caches: Values derived from the table.
    """

    __slots__ = (
        "caches",
        "derived",
        "direct",
        "direct_sync",
        "entries",
        "groups",
        "members",
        "next_seq",
    )

    def __init__(self) -> None:
        self.entries: dict[str, CompiledTool] = {}
        self.groups: dict[str, ToolGroup] = {}
        self.members: dict[str, list[str]] = {}
        self.direct: dict[str, _core.DirectCall] = {}
        self.direct_sync: dict[str, _core.DirectCall] = {}
        self.next_seq: int = 0
        self.derived: set[str] = set()
        self.caches: TableCaches = TableCaches()

    def copy(self) -> Table:
        """A copy to change (the caches are not copied: they are rebuilt on use)."""
        table = Table()
        table.entries = dict(self.entries)
        table.groups = dict(self.groups)
        table.members = {group: list(names) for group, names in self.members.items()}
        table.direct = dict(self.direct)
        table.direct_sync = dict(self.direct_sync)
        table.next_seq = self.next_seq
        table.derived = set(self.derived)
        return table

    # - changes (only on a table no registry holds) -

    def put(self, tool: CompiledTool, groups: frozenset[str] | None = None) -> CompiledTool:
        """Put ``tool`` in the place of the tool of its name, or after every tool if none.

        A tool replacing another keeps its registration number (its place in every listing);
        a new name takes the next one. With ``groups``, the tool joins these groups (else the
        ones it has).

        Returns:
            The tool as placed (its number, and its groups, set).
        """
        old = self.entries.get(tool.name)
        if old is not None:
            seq = old.seq
        else:
            seq = self.next_seq
            self.next_seq += 1
        if groups is None:
            placed = dataclasses.replace(tool, seq=seq)
        else:
            placed = dataclasses.replace(tool, seq=seq, groups=groups)
        self.place(placed)
        return placed

    def place(self, tool: CompiledTool) -> None:
        """Put ``tool`` in the table as it is (replacing any tool of its name) and in its groups."""
        name = tool.name
        old = self.entries.get(name)
        if old is not None:
            self.unplace(old)
        self.entries[name] = tool
        for group in tool.groups or (BASIC,):
            self.members.setdefault(group, []).append(name)
        if isinstance(tool.tool, DerivedTool):
            self.derived.add(name)
        else:
            self.derived.discard(name)
        self._direct(tool)

    def unplace(self, tool: CompiledTool) -> None:
        """Take ``tool`` out of its groups' member lists (not out of the entries)."""
        name = tool.name
        for group in tool.groups or (BASIC,):
            members = self.members.get(group)
            if members is not None and name in members:
                members.remove(name)

    def drop(self, name: str) -> CompiledTool:
        """Remove and return the tool of ``name``.

        Raises:
            KeyError: No tool has that name.
        """
        tool = self.entries.pop(name)
        self.unplace(tool)
        self.direct.pop(name, None)
        self.direct_sync.pop(name, None)
        self.derived.discard(name)
        return tool

    def refresh_direct(self) -> None:
        """Recompute `direct` and `direct_sync` after a change of the groups."""
        self.direct.clear()  # in place: `call_tool` holds this very dict
        self.direct_sync.clear()  # and `call_tool_sync` this one
        for tool in self.entries.values():
            self._direct(tool)

    def _direct(self, tool: CompiledTool) -> None:
        visible = self.visible_by_default(tool)
        for calls, sync in ((self.direct, False), (self.direct_sync, True)):
            direct = tool.direct_for(sync)
            if direct is not None and visible:
                calls[tool.name] = direct
            else:
                calls.pop(tool.name, None)

    # - reads -

    def visible_by_default(self, tool: CompiledTool) -> bool:
        """Whether ``tool`` is visible with every group at its default activation."""
        return not tool.groups or any(
            group.active for name in tool.groups if (group := self.groups.get(name)) is not None
        )

    def active_groups(self, state: ToolContextState) -> frozenset[str]:
        """The groups active in a session with this state."""
        return frozenset(
            name for name, group in self.groups.items() if state.is_active(name, group.active)
        )

    def visible(
        self, active: frozenset[str], hidden: frozenset[str] = frozenset()
    ) -> tuple[str, ...]:
        """The names of the tools in ``basic`` or any ``active`` group, in registration order.

        Names in ``hidden`` (backend tools a request's own tools replace) are left out. Cached
        per pair of sets.
        """
        key = (active, hidden)
        cached = self.caches.visible.get(key)
        if cached is None:
            names = set(self.members.get(BASIC, ()))
            for group in active:
                names.update(self.members.get(group, ()))
            names -= hidden
            entries = self.entries
            ordered = tuple(sorted(names, key=lambda name: entries[name].seq))
            cached = self.caches.remember(self.caches.visible, key, ordered)
        return cached

    def direct_calls(
        self, active: frozenset[str], *, sync: bool = False
    ) -> dict[str, _core.DirectCall]:
        """The direct calls of the tools visible with these groups active (cached).

        For a caller that is sync or async (`CompiledTool.direct_for`).
        """
        key = (active, sync)
        cached = self.caches.view_direct.get(key)
        if cached is None:
            entries = self.entries
            calls = {
                name: direct
                for name in self.visible(active)
                if (direct := entries[name].direct_for(sync)) is not None
            }
            cached = self.caches.remember(self.caches.view_direct, key, calls)
        return cached

    @staticmethod
    def definitions(
        tools: Iterable[CompiledTool], format: ProviderFormat, strict: bool
    ) -> tuple[bytes, ...]:
        """Each tool's provider definition, from its cache."""
        return tuple(tool.definitions.get(tool.spec, format, strict) for tool in tools)


__all__ = ["Table", "TableCaches"]
