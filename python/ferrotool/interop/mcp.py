"""MCP tool definitions both ways: ferrotool tools as ``mcp.types.Tool``, and back.

Export: `to_mcp(source)` lists the tools a view shows as the MCP SDK's ``Tool`` values (what a
server answers ``tools/list`` with): the canonical input schema unchanged, ``readOnlyHint`` from
the tool's ``read_only``, and the output schema when the tool declares one.

Import: `from_mcp(tool, server=...)` is a ferrotool tool known by its MCP definition only: named
``mcp__{server}__{tool}`` (the chapter's rule; the plain name without a server), read-only when
the definition says ``readOnlyHint``, and external: its calls are validated against the MCP
schema and suspended, for whoever holds the MCP session to run them and answer. Running them
through an MCP client session is `ferrotool.mcp`'s job, not this module's.

FastMCP: `fastmcp_tool(tool)` is a ferrotool tool as a FastMCP ``Tool``, for
``FastMCP.add_tool``: listed with ferrotool's definition (its input schema, ``readOnlyHint``, its
output schema), and each call run by ferrotool (validation in Rust, injected values, the result's
conversion); the tool's progress reaches the FastMCP client as progress notifications. FastMCP
and the SDK's ``MCPServer`` take a plain function as it is, but they call it themselves, after
validating its arguments with a pydantic model of its signature: a ferrotool tool handed to them
that way would skip ferrotool's validation and its injected values, so it is wrapped here.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, final

import orjson

from ferrotool._definitions.formats import tool_definition
from ferrotool._extras import requires_extra
from ferrotool._tools.base import AgentTool, ToolBase, ToolCallParam
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import InteropError, SuspendTool
from ferrotool.interop._common import ToolSource, spec_of, view_of

with requires_extra("ferrotool.interop.mcp", "mcp"):
    from mcp.types import CallToolResult, Tool

if TYPE_CHECKING:
    import fastmcp.tools

MCP_PREFIX = "mcp"
"""The first part of an imported MCP tool's name: ``mcp__{server}__{tool}``."""


def to_mcp_tool(source: ToolSource, name: str) -> Tool:
    """One tool of ``source`` as an MCP ``Tool`` definition.

    Raises:
        InteropError: ``source`` shows no tool ``name``.
    """
    spec = spec_of(view_of(source), name)
    return Tool.model_validate_json(tool_definition(spec, "mcp").definition_json)


def to_mcp(source: ToolSource, *, names: Sequence[str] | None = None) -> list[Tool]:
    """Every tool of ``source`` (or only ``names``) as MCP ``Tool`` definitions, in order."""
    view = view_of(source)
    return [to_mcp_tool(view, name) for name in (names or view.names())]


def _definition(tool: Tool | Mapping[str, object]) -> Tool:
    if isinstance(tool, Tool):
        return tool
    try:
        return Tool.model_validate(dict(tool))
    except ValueError as error:
        raise InteropError(f"not an MCP tool definition: {error}") from None


@final
class McpDefinedTool(ToolBase[dict[str, JsonValue]]):
    """A tool known by its MCP definition: calls are validated, then suspended (external).

    Build it with `from_mcp`.

    Attributes:
        definition: The MCP definition it was made from.
        tool_name: The tool's name on its MCP server.
    """

    external = True

    def __init__(self, definition: Tool, server: str | None) -> None:
        self.definition = definition
        self.tool_name: Final[str] = definition.name
        name = definition.name if server is None else f"{MCP_PREFIX}__{server}__{definition.name}"
        annotations = definition.annotations
        super().__init__(
            name=name,
            description=definition.description or None,
            input_schema=dict(definition.input_schema),
            read_only=bool(annotations and annotations.read_only_hint),
            external=True,
            mcp_server=server,
        )
        if definition.output_schema is not None:
            output = orjson.dumps(definition.output_schema)
            self._spec = dataclasses.replace(self._spec, output_schema_json=output)

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> None:
        """Never runs here: suspends the call for the MCP session's holder."""
        raise SuspendTool()


def from_mcp(tool: Tool | Mapping[str, object], *, server: str | None = None) -> McpDefinedTool:
    """An MCP tool definition as a ferrotool tool.

    Register it in a `Toolkit`, or send it as a request's own tool (`ToolRequestConfig`).

    Args:
        tool: An ``mcp.types.Tool``, or its JSON form (``{"name", "description",
            "inputSchema", "annotations", "outputSchema"}``).
        server: The MCP server's name: the tool is named ``mcp__{server}__{name}``.

    Raises:
        InteropError: ``tool`` is not an MCP tool definition.
        ValueError: The resulting name is not a valid tool name.
        SchemaError: Its input schema does not compile.
    """
    return McpDefinedTool(_definition(tool), server)


def fastmcp_tool(tool: AgentTool, *, context: RuntimeContext | None = None) -> fastmcp.tools.Tool:
    """A ferrotool tool as a FastMCP ``Tool``: ``FastMCP(...).add_tool(fastmcp_tool(tool))``.

    FastMCP lists it with ferrotool's MCP definition, and each call goes through ferrotool's
    call pipeline: the arguments are validated in Rust (a mistake comes back as an ``isError``
    result naming every problem), injected values are filled from ``context``, and the tool's
    progress (`Emitter.emit`, `Emitter.progress`) reaches the client as progress notifications.

    Args:
        tool: The tool (a ``@tool`` function, or any tool object).
        context: The runtime context its calls run with.

    Raises:
        InteropError: The tool is external (its calls are run by the client, not here).
        ImportError: FastMCP is not installed.
    """
    from fastmcp.server.dependencies import get_context
    from fastmcp.tools import Tool as FastTool
    from fastmcp.tools import ToolResult

    from ferrotool._registry.toolkit import Toolkit
    from ferrotool.mcp.server import wire_result, with_progress

    toolkit = Toolkit()
    toolkit.register(tool)
    (name,) = toolkit.names()
    spec = spec_of(view_of(toolkit), name)
    if spec.external:
        raise InteropError(f"tool {name!r} is external: FastMCP has no client-run tools")
    definition = to_mcp_tool(toolkit, name)
    base = context or RuntimeContext()
    structured = spec.output_schema_json is not None

    class FerrotoolTool(FastTool):
        """A ferrotool tool served by FastMCP."""

        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            call = ToolUseBlock(uuid.uuid4().hex, name, orjson.dumps(arguments).decode())
            try:
                report = get_context().report_progress
            except RuntimeError:
                result = await toolkit.call_tool(call, base)
            else:
                result = await with_progress(
                    report, lambda sink: toolkit.call_tool(call, base, on_progress=sink)
                )
            wire = CallToolResult.model_validate(wire_result(result, structured=structured))
            return ToolResult(
                content=wire.content,
                structured_content=wire.structured_content,
                is_error=bool(wire.is_error),
            )

    return FerrotoolTool(
        name=name,
        description=definition.description,
        parameters=definition.input_schema,
        output_schema=definition.output_schema,
        annotations=definition.annotations,
    )


__all__ = ["MCP_PREFIX", "McpDefinedTool", "fastmcp_tool", "from_mcp", "to_mcp", "to_mcp_tool"]
