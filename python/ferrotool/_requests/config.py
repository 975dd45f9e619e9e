"""Per-request tool configuration: external (client-side) tools and how they merge."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, final

from ferrotool._tools.base import ToolBase


class ToolMergeMode(enum.StrEnum):
    """How a request's external tools combine with the backend's."""

    MERGE_EXTERNAL_PRIORITY = "merge_external_priority"
    """Both; an external tool replaces a backend tool of the same name."""
    MERGE_BACKEND_PRIORITY = "merge_backend_priority"
    """Both; a visible backend tool keeps its name and a same-named external tool is left out
    (for clients that send a fixed tool list the backend may already serve)."""
    EXTERNAL_ONLY = "external_only"
    """Only the external tools (none at all when the list is empty)."""
    AGENT_ONLY = "agent_only"
    """Only the backend's tools; giving external tools with it is an error."""


def _external_tools(
    tools: Mapping[str, ToolBase[Any]] | Iterable[ToolBase[Any]],
) -> Mapping[str, ToolBase[Any]]:
    if isinstance(tools, Mapping):
        pairs = list(tools.items())
        for key, tool in pairs:
            if key != tool.spec.name:
                raise ValueError(
                    f"External tool key must match its schema name: {key!r} != {tool.spec.name!r}"
                )
    else:
        pairs = [(tool.spec.name, tool) for tool in tools]
    out: dict[str, ToolBase[Any]] = {}
    for name, tool in pairs:
        if not tool.spec.external:
            raise ValueError(f"tool {name!r} is not external (use SchemaOnlyTool)")
        if name in out:
            raise ValueError(f"two external tools are named {name!r}")
        out[name] = tool
    return MappingProxyType(out)


@final
@dataclass(frozen=True, slots=True, eq=False, init=False)
class ToolRequestConfig:
    """The tool surface of one request: its external tools and how they merge. Immutable.

    A request config never changes the registry: it only shapes the `ToolView` built from it.
    It may travel in the `RuntimeContext` (``context.with_value(config)``).

    Args:
        tools: External tools (usually `SchemaOnlyTool`), as a sequence or keyed by name, in
            the order they are shown after the backend's tools.
        mode: How they merge with the backend's tools.

    Raises:
        ValueError: ``AGENT_ONLY`` with external tools, a key that is not its tool's name, a
            tool that is not external, or a name used twice.
    """

    tools: Mapping[str, ToolBase[Any]] = field(default_factory=lambda: MappingProxyType({}))
    mode: ToolMergeMode = ToolMergeMode.MERGE_EXTERNAL_PRIORITY

    def __init__(
        self,
        tools: Mapping[str, ToolBase[Any]] | Iterable[ToolBase[Any]] = (),
        mode: ToolMergeMode = ToolMergeMode.MERGE_EXTERNAL_PRIORITY,
    ) -> None:
        external = _external_tools(tools)
        if mode is ToolMergeMode.AGENT_ONLY and external:
            raise ValueError("AGENT_ONLY cannot include external tools")
        object.__setattr__(self, "tools", external)
        object.__setattr__(self, "mode", mode)

    def __repr__(self) -> str:
        return f"ToolRequestConfig(tools={list(self.tools)}, mode={self.mode.name})"


NO_REQUEST_CONFIG: Final = ToolRequestConfig((), ToolMergeMode.AGENT_ONLY)
"""The backend's tools as they are: no external tools."""

__all__ = ["NO_REQUEST_CONFIG", "ToolMergeMode", "ToolRequestConfig"]
