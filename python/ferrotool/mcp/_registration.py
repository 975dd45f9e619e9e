"""`Toolkit.register_mcp` and `Toolkit.remove_mcp`: an MCP server's tools in a toolkit.

Registration connects the client, filters its listing, and registers one `McpTool` per good
tool in one change. A bad tool (its schema does not compile, its name is listed twice...: see
`ferrotool.mcp.tool.mcp_tools`) is left out alone: a warning on the ``ferrotool.mcp`` logger
names it and says why, and `McpClient.rejected_tools` holds it until the next listing. It then
follows the server: when the server says its tools changed, the toolkit's tools of that server
are replaced by the new listing, again in one change, so a snapshot holds either the old tools
or the new ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Final, Protocol

import mcp_types as types

from ferrotool._execution.runner import ToolkitConfig
from ferrotool._tools.base import AgentTool
from ferrotool._values.groups import BASIC, ToolGroup
from ferrotool.errors import RegistrationError
from ferrotool.mcp.client import McpClient
from ferrotool.mcp.tool import (
    McpTool,
    McpTrust,
    RejectedTool,
    mcp_tools,
    presets_for,
    trusted_names,
)

_log: Final = logging.getLogger("ferrotool.mcp")


class Toolkit(Protocol):
    """What registration needs of a `ferrotool.Toolkit` (which calls in here, so not imported)."""

    @property
    def config(self) -> ToolkitConfig:
        """The toolkit's configuration (its removal policy)."""
        ...

    def names(self) -> tuple[str, ...]:
        """The registered names."""
        ...

    def get_tool(self, name: str) -> AgentTool | None:
        """The tool registered under ``name``."""
        ...

    def groups(self) -> tuple[ToolGroup, ...]:
        """The tool groups."""
        ...

    def _swap(
        self,
        removed: Iterable[str],
        added: Iterable[tuple[AgentTool, Mapping[str, object] | None]],
        groups: frozenset[str],
    ) -> tuple[AgentTool, ...]:
        """Remove and register tools in one change."""
        ...


def _groups(group: str | Iterable[str]) -> frozenset[str]:
    return frozenset((group,) if isinstance(group, str) else group) - {BASIC}


def tools_of(toolkit: Toolkit, server: str) -> list[McpTool]:
    """The toolkit's tools that come from the MCP server named ``server``."""
    found = []
    for name in toolkit.names():
        tool = toolkit.get_tool(name)
        if isinstance(tool, McpTool) and tool.client.name == server:
            found.append(tool)
    return found


async def register_mcp(
    toolkit: Toolkit,
    client: McpClient,
    *,
    group: str | Iterable[str] = (),
    presets: Mapping[str, Mapping[str, object]] | None = None,
    enable: Iterable[str] = (),
    disable: Iterable[str] = (),
    trust: McpTrust = False,
) -> tuple[AgentTool, ...]:
    """See `Toolkit.register_mcp`."""
    if not isinstance(client, McpClient):
        raise TypeError(f"an McpClient is needed, not {type(client).__name__}")
    trusted = trusted_names(trust)
    groups = _groups(group)
    known = {existing.name for existing in toolkit.groups()}
    for name in sorted(groups - known):
        raise RegistrationError(f"Tool group '{name}' does not exist")
    enabled, disabled = frozenset(enable), frozenset(disable)
    await client.initialize()

    def wanted(
        listing: tuple[types.Tool, ...],
    ) -> list[tuple[AgentTool, Mapping[str, object] | None]]:
        tools, rejected = mcp_tools(
            client, listing, enable=enabled, disable=disabled, trust=trusted
        )
        _report(client, rejected)
        return [(tool, presets_for(presets, tool)) for tool in tools]

    registered = toolkit._swap((), wanted(client.tools), groups)

    async def follow(listing: tuple[types.Tool, ...]) -> None:
        old = [tool.name for tool in tools_of(toolkit, client.name) if tool.client is client]
        new = toolkit._swap(old, wanted(listing), groups)
        _log.info("MCP server '%s' changed its tools: now %d", client.name, len(new))

    # Keyed by the toolkit: `remove_mcp` stops following (the client then holds no reference).
    client.on_tools_changed(toolkit, follow)
    return registered


def _report(client: McpClient, rejected: tuple[RejectedTool, ...]) -> None:
    """Keep the bad tools on the client, and name each in a warning (the SDK's too)."""
    client._rejected(rejected)
    for item in client.rejected_tools:
        _log.warning("MCP server '%s' tool %r is left out: %s", client.name, item.name, item.reason)


async def remove_mcp(toolkit: Toolkit, name: str) -> tuple[str, ...]:
    """See `Toolkit.remove_mcp`."""
    tools = tools_of(toolkit, name)
    if not tools:
        return ()
    if not toolkit.config.allow_removal:
        raise RegistrationError(
            f"cannot remove MCP server {name!r}: removal is disabled for this toolkit"
        )
    names = tuple(tool.name for tool in tools)
    toolkit._swap(names, (), frozenset())
    for client in {id(tool.client): tool.client for tool in tools}.values():
        client.on_tools_changed(toolkit, None)
        await client.close()
    return names


__all__ = ["register_mcp", "remove_mcp", "tools_of"]
