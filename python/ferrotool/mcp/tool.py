"""`McpTool`: an MCP server's tool as a ferrotool tool.

The tool's input schema is compiled by ferrotool's validator when the tool is made, so a call
with invalid arguments is answered here, with the usual result that names every problem, and
never reaches the server. Its annotations become flags: ``readOnlyHint`` makes it read-only
(the permission engine runs it without asking, and it may run beside other calls),
``destructiveHint`` makes its own permission check ask. Its answer becomes a `ToolResultBlock`
(`ferrotool.mcp._convert.result_block`); a transport failure, a timeout or an error answer is
an ``ERROR`` result, never an exception.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import mcp_types as types
import orjson

from ferrotool._permissions.decisions import PermissionDecision
from ferrotool._permissions.state import PermissionContext
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.content import JsonBlock
from ferrotool._values.json import JsonValue
from ferrotool.errors import McpError
from ferrotool.mcp._convert import EMPTY_SCHEMA, result_block, tool_name
from ferrotool.mcp.client import McpClient, McpMeta

DESTRUCTIVE_REASON: Final = "The MCP server marks this tool destructive (destructiveHint)"


class McpTool(ToolBase[dict[str, JsonValue]]):
    """One tool of an MCP server, called through its `McpClient`.

    Args:
        client: The server's client.
        tool: The tool as the server lists it.

    Attributes:
        client: The server's client.
        remote_name: The tool's name on the server (the ferrotool name is
            ``mcp__{server}__{tool}``, see `ferrotool.mcp.tool_name`).
        destructive: The server marks the tool destructive: a call asks for approval.
        definition: The server's definition of the tool.

    Raises:
        SchemaError: The tool's input schema does not compile.
    """

    def __init__(self, client: McpClient, tool: types.Tool) -> None:
        annotations = tool.annotations
        read_only = bool(annotations is not None and annotations.read_only_hint)
        self.client: Final = client
        self.remote_name: Final = tool.name
        self.definition: Final = tool
        self.destructive: Final = (
            not read_only and annotations is not None and bool(annotations.destructive_hint)
        )
        super().__init__(
            name=tool_name(client.name, tool.name),
            description=tool.description or tool.title or f"{tool.name} (MCP server {client.name})",
            input_schema=tool.input_schema or EMPTY_SCHEMA,
            read_only=read_only,
            concurrency_safe=read_only,
            mcp_server=client.name,
        )
        if tool.output_schema is not None:
            output = orjson.dumps(tool.output_schema)
            self._spec = dataclasses.replace(self._spec, output_schema=output)

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> ToolResultBlock:
        """Call the tool on its server and convert the answer."""
        context = param.context
        meta = context.get(McpMeta)
        provider = self.client.request_headers
        headers = provider(context) if provider is not None else None
        emitter = param.emitter

        async def report(progress: float, total: float | None, message: str | None) -> None:
            emitter.emit(JsonBlock({"progress": progress, "total": total, "message": message}))

        try:
            result = await self.client.call_tool(
                self.remote_name,
                param.input,
                meta=meta.values if meta is not None and meta.values else None,
                on_progress=report,
                headers=headers,
            )
        except McpError as exc:
            return ToolResultBlock.error(f"MCP tool error: {exc}")
        return result_block(result)

    async def check_permissions(
        self, tool_input: dict[str, JsonValue], context: PermissionContext
    ) -> PermissionDecision:
        """Ask before a tool the server marks destructive runs; no opinion otherwise."""
        if self.destructive:
            return PermissionDecision.ask(
                f"Permission required for {self.name}", reason=DESTRUCTIVE_REASON
            )
        return PermissionDecision.passthrough(self.name)


def mcp_tools(
    client: McpClient,
    listing: tuple[types.Tool, ...],
    *,
    enable: frozenset[str] = frozenset(),
    disable: frozenset[str] = frozenset(),
) -> list[McpTool]:
    """The tools of a listing that pass the filters, as `McpTool` values.

    ``enable``, when not empty, keeps exactly those tools (``disable`` is then ignored);
    otherwise every tool but those in ``disable`` is kept (AgentScope's rule).
    """
    if enable:
        kept = [tool for tool in listing if tool.name in enable]
    else:
        kept = [tool for tool in listing if tool.name not in disable]
    return [McpTool(client, tool) for tool in kept]


def presets_for(
    presets: Mapping[str, Mapping[str, object]] | None, tool: McpTool
) -> Mapping[str, object] | None:
    """The presets given for a tool, by its name on the server (or its ferrotool name)."""
    if not presets:
        return None
    return presets.get(tool.remote_name) or presets.get(tool.name)


__all__ = ["DESTRUCTIVE_REASON", "McpTool", "mcp_tools", "presets_for"]
