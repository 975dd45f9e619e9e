"""What a wing needs of a toolkit to plug into it: `ToolHost`, the toolkit's public methods.

The wings' registration functions (`ferrotool.mcp.register_mcp`, `ferrotool.skills.add_skills`...)
take a `ToolHost`, which `Toolkit` is, rather than the `Toolkit` class: the toolkit's methods
that forward to them import them when called, so the wings never import the toolkit's module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from ferrotool._execution.runner import ToolkitConfig
from ferrotool._tools.base import AgentTool
from ferrotool._values.groups import ToolGroup


class ToolReader(Protocol):
    """The lookups of a toolkit or a registry."""

    def get_tool(self, name: str) -> AgentTool | None:
        """The tool registered under ``name``, or ``None``."""
        ...

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        ...

    def groups(self) -> tuple[ToolGroup, ...]:
        """The tool groups, in the order they were added."""
        ...


class ToolHost(ToolReader, Protocol):
    """The public changes of a `Toolkit` a wing makes."""

    @property
    def config(self) -> ToolkitConfig:
        """The toolkit's configuration."""
        ...

    def add_group(self, group: ToolGroup) -> ToolGroup:
        """Add a tool group."""
        ...

    def register(
        self,
        item: object,
        /,
        *,
        presets: Mapping[str, object] | None = None,
        group: str | Iterable[str] = (),
    ) -> tuple[AgentTool, ...]:
        """Register a tool, a function or an object's ``@tool`` methods."""
        ...

    def replace(
        self,
        removed: Iterable[str] = (),
        added: Iterable[object] = (),
        *,
        group: str | Iterable[str] = (),
        presets: Mapping[str, Mapping[str, object]] | None = None,
    ) -> tuple[AgentTool, ...]:
        """Remove tools and register others in one change."""
        ...

    def rebuild(
        self, name: str, build: Callable[[AgentTool | None], AgentTool | None]
    ) -> AgentTool | None:
        """Replace the tool of ``name`` by ``build(tool)`` in one change."""
        ...


__all__ = ["ToolHost", "ToolReader"]
