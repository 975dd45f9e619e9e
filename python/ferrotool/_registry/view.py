"""`ToolView`: what one request may see and call.

A view is registry + request config + session state. Building one costs O(external tools +
groups), never O(registered tools): it keeps references to the registry's immutable table and
the request's tools, and computes the visible backend names lazily (cached on the table per set
of active groups). Nothing in a view can change the registry or another session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Coroutine, Iterator
from typing import TYPE_CHECKING, Any, final

import orjson

from ferrotool._registry.toolkit import _compile, _definitions, _resolved, _unknown
from ferrotool._requests.config import ToolMergeMode, ToolRequestConfig
from ferrotool._session.state import SessionKey, SessionStore, ToolContextState
from ferrotool._tools.function import AgentTool
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import EMPTY_CONTEXT, ProgressSink, RuntimeContext
from ferrotool._values.groups import BASIC
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.builtins.reset_tools import SessionHandle
from ferrotool.providers._definitions import ProviderFormat

if TYPE_CHECKING:
    from ferrotool._registry.toolkit import ToolkitConfig, _Entry, _Table, _ToolSet


def _external_entry(tool: AgentTool, config: ToolkitConfig) -> _Entry:
    """The compiled entry of a request's external tool, cached on the tool.

    An external tool's entry does not depend on the toolkit (it never runs here), so a client
    tool object reused across requests is compiled once.
    """
    cached: _Entry | None = getattr(tool, "_ferrotool_entry", None)
    if cached is None or cached.tool is not tool:
        cached = _compile(tool, None, config)
        with contextlib.suppress(AttributeError):  # a slotted tool class: compile per view
            object.__setattr__(tool, "_ferrotool_entry", cached)
    return cached


@final
class ToolView:
    """The tools one request may see and call. Immutable; build it with `Registry.view`.

    Attributes:
        state: The session state the view was built from.
        config: The request's config.
        active_groups: The groups active in this view's session (``basic`` not included).
    """

    __slots__ = (
        "_externals",
        "_key",
        "_names",
        "_owner",
        "_shadowed",
        "_store",
        "_table",
        "active_groups",
        "config",
        "state",
    )

    def __init__(
        self,
        owner: _ToolSet,
        table: _Table,
        state: ToolContextState,
        config: ToolRequestConfig,
        store: SessionStore | None,
        key: SessionKey | None,
    ) -> None:
        self._owner = owner
        self._table = table
        self.state = state
        self.config = config
        self._store = store
        self._key = key
        self.active_groups = table.active_groups(state)
        mode = config.mode
        externals: dict[str, _Entry] = {}
        shadowed: set[str] = set()
        if mode is not ToolMergeMode.AGENT_ONLY:
            for name, tool in config.tools.items():
                if mode is ToolMergeMode.MERGE_BACKEND_PRIORITY and self._backend_visible(name):
                    continue
                externals[name] = _external_entry(tool, owner._config)
                if name in table.entries:
                    shadowed.add(name)
        self._externals = externals
        self._shadowed = frozenset(shadowed)
        self._names: tuple[str, ...] | None = None

    # - visibility -

    def _backend_visible(self, name: str) -> bool:
        entry = self._table.entries.get(name)
        if entry is None:
            return False
        groups = entry.groups
        return not groups or not groups.isdisjoint(self.active_groups)

    def _resolve(self, name: str) -> _Entry | None:
        external = self._externals.get(name)
        if external is not None:
            return external
        if self.config.mode is ToolMergeMode.EXTERNAL_ONLY or not self._backend_visible(name):
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
        if self.config.mode is ToolMergeMode.EXTERNAL_ONLY:
            return ()
        return self._table.visible(self.active_groups, self._shadowed)

    def get_tool(self, name: str) -> AgentTool | None:
        """The tool ``name`` resolves to in this view, or ``None`` if it is not visible."""
        entry = self._resolve(name)
        return None if entry is None else entry.tool

    def get_spec(self, name: str) -> ToolSpec | None:
        """The spec the model sees for ``name`` in this view, or ``None``."""
        entry = self._resolve(name)
        return None if entry is None else entry.spec

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._resolve(name) is not None

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
        key = (format, strict, self.active_groups, self._shadowed)
        backend = table.view_schema_cache.get(key)
        if backend is None:
            entries = table.entries
            names = self._backend_names()
            backend = b",".join(_definitions([entries[n] for n in names], format, strict))
            table.remember(table.view_schema_cache, key, backend)
        external = b",".join(_definitions(self._externals.values(), format, strict))
        return b"[" + b",".join(part for part in (backend, external) if part) + b"]"

    def schemas(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> list[dict[str, JsonValue]]:
        """The visible tools' definitions for a provider (``tools=...``), a fresh copy."""
        out = orjson.loads(self.schemas_json(format, strict=strict))
        assert isinstance(out, list)
        return out

    # - calls -

    def call_tool(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """Run one call as this request may: like `Toolkit.call_tool`, through the view.

        An external tool of the request validates and suspends; a backend tool that exists
        but is not visible here (its groups inactive, or hidden by the merge mode) gives an
        error result saying it is not available now, not that it does not exist.
        """
        entry = self._resolve(call.name)
        if entry is None:
            if call.name in self._table.entries:
                return _resolved(self._unavailable(call))
            return _resolved(_unknown(call, dict.fromkeys(self.names())))
        if self._store is not None and self._key is not None and entry.spec.name == "reset_tools":
            context = (context or EMPTY_CONTEXT).with_value(
                SessionHandle(self._store, self._key, self.state)
            )
        return self._owner._call_entry(entry, call, context, agent, on_progress)

    def _unavailable(self, call: ToolUseBlock) -> ToolResultBlock:
        if self.config.mode is ToolMergeMode.EXTERNAL_ONLY:
            reason = "this request uses only its own tools"
        else:
            groups = sorted(self._table.entries[call.name].groups - {BASIC})
            reason = f"its tool group(s) {', '.join(groups)} are not active in this session"
            if "reset_tools" in self._table.entries:
                reason += "; activate one with reset_tools first"
        return ToolResultBlock.error(
            f"Tool '{call.name}' is not available now: {reason}.", id=call.id, name=call.name
        )

    def __repr__(self) -> str:
        return (
            f"<ToolView mode={self.config.mode.name} groups={sorted(self.active_groups)} "
            f"externals={list(self._externals)}>"
        )


__all__ = ["ToolView"]
