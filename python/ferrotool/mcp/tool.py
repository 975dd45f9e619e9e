"""`McpTool`: an MCP server's tool as a ferrotool tool.

The tool's input schema is compiled by ferrotool's validator when the tool is made, so a call
with invalid arguments is answered here, with the usual result that names every problem, and
never reaches the server. Its answer becomes a `ToolResultBlock`
(`ferrotool.mcp._convert.result_block`); a transport failure, a timeout or an error answer is
an ``ERROR`` result, never an exception.

Its annotations are read with the MCP specification's defaults (a missing ``readOnlyHint`` is
false, a missing ``destructiveHint`` true, a missing ``idempotentHint`` false). A tool is
idempotent (`ToolSpec.idempotent`: a durable batch may run a call of it again after a crash)
only when it is read-only or says ``idempotentHint: true``; ``openWorldHint`` changes nothing
here. Only ``readOnlyHint: true`` lets a tool run without asking:

============================  ==========================================================
the tool                      its own permission check
============================  ==========================================================
``readOnlyHint: true``        no opinion: the engine runs a read-only tool without asking
                              (and it may run beside other calls)
``destructiveHint: false``    asks ("not read-only"): the spec calls it additive, it still
                              changes something
anything else                 asks ("destructive", the hint given or its default)
trusted (``trust=``)          allows
============================  ==========================================================

These asks are ordinary ones: an allow rule or ``BYPASS`` mode lets them through, and
``DONT_ASK`` denies them. Trust is the operator's (`register_mcp`): deny and ask rules
still come first, and ``EXPLORE`` mode still denies every tool that is not read-only.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Collection, Mapping
from typing import Final, TypeAlias

import mcp_types as types
import orjson

from ferrotool._permissions.decisions import PermissionDecision
from ferrotool._permissions.state import PermissionContext
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.json import JsonValue
from ferrotool.errors import McpError
from ferrotool.mcp._convert import EMPTY_SCHEMA, RejectedTool, result_block, tool_name
from ferrotool.mcp.client import McpClient, McpMeta

DESTRUCTIVE_REASON: Final = "The MCP server marks this tool destructive (destructiveHint)"
MISSING_HINTS_REASON: Final = (
    "The MCP server does not mark this tool read-only (readOnlyHint), so it may change "
    "something; destructiveHint missing, read as destructive (the MCP default)"
)
ADDITIVE_REASON: Final = (
    "The MCP server marks this tool not read-only (destructiveHint: false, readOnlyHint not "
    "true): it may add or change something"
)
TRUSTED_REASON: Final = "The operator trusts this MCP server's tool (register_mcp trust=)"

McpTrust: TypeAlias = bool | Collection[str]
"""Which tools of a server run without asking (`register_mcp`'s ``trust``).

``False`` (the default): only those the server marks ``readOnlyHint: true``. ``True``: every
tool of the server. A collection of names (as the server names them, say ``("search",
"fetch")``): those tools, and the read-only ones. A lone ``str`` is refused: write
``("name",)``.
"""


def trusted_names(trust: McpTrust) -> bool | frozenset[str]:
    """``trust`` checked: ``True``, ``False``, or the names of the trusted tools.

    Raises:
        TypeError: ``trust`` is a lone string, or a collection holding something else.
    """
    if isinstance(trust, bool):
        return trust
    if isinstance(trust, str) or not isinstance(trust, Collection):
        raise TypeError(
            f"trust takes True, False or a collection of tool names, not {trust!r} "
            "(one name is written ('name',))"
        )
    names = frozenset(trust)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"trust names tools by their names on the server, not {name!r}")
    return names


class McpTool(ToolBase[dict[str, JsonValue]]):
    """One tool of an MCP server, called through its `McpClient`.

    Args:
        client: The server's client.
        tool: The tool as the server lists it.
        trusted: The operator trusts the tool: its own check allows every call.

    Attributes:
        client: The server's client.
        remote_name: The tool's name on the server (the ferrotool name is
            ``mcp__{server}__{tool}``, see `ferrotool.mcp.tool_name`).
        destructive: The tool is not read-only and the server does not say
            ``destructiveHint: false`` (a missing hint is destructive, as the spec reads it).
        trusted: The operator trusts the tool (see `McpTrust`).
        definition: The server's definition of the tool.

    Raises:
        SchemaError: The tool's input schema does not compile.
        TypeError: Its output schema is not JSON (a number beyond 64 bits).
    """

    def __init__(self, client: McpClient, tool: types.Tool, *, trusted: bool = False) -> None:
        annotations = tool.annotations or types.ToolAnnotations()
        read_only = annotations.read_only_hint is True
        self.client: Final = client
        self.remote_name: Final = tool.name
        self.definition: Final = tool
        self.trusted: Final = trusted
        self.destructive: Final = not read_only and annotations.destructive_hint is not False
        self._reason: Final = (
            DESTRUCTIVE_REASON
            if annotations.destructive_hint is True
            else MISSING_HINTS_REASON
            if self.destructive
            else ADDITIVE_REASON
        )
        super().__init__(
            name=tool_name(client.name, tool.name),
            description=tool.description or tool.title or f"{tool.name} (MCP server {client.name})",
            input_schema=tool.input_schema or EMPTY_SCHEMA,
            read_only=read_only,
            concurrency_safe=read_only,
            idempotent=read_only or annotations.idempotent_hint is True,
            mcp_server=client.name,
        )
        if tool.output_schema is not None:
            output = orjson.dumps(tool.output_schema)
            self._spec = dataclasses.replace(self._spec, output_schema_json=output)

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> ToolResultBlock:
        """Call the tool on its server and convert the answer."""
        context = param.context
        meta = context.get(McpMeta)
        provider = self.client.request_headers
        headers = provider(context) if provider is not None else None
        emitter = param.emitter

        async def report(progress: float, total: float | None, message: str | None) -> None:
            emitter.progress(progress, total, message)

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
        """Allow a trusted tool, have no opinion on a read-only one, ask before any other."""
        if self.trusted:
            return PermissionDecision.allow(
                f"Permission granted for {self.name} (trusted MCP server tool)",
                reason=TRUSTED_REASON,
            )
        if self.spec.read_only:
            return PermissionDecision.passthrough(self.name)
        return PermissionDecision.ask(f"Permission required for {self.name}", reason=self._reason)


def mcp_tools(
    client: McpClient,
    listing: tuple[types.Tool, ...],
    *,
    enable: frozenset[str] = frozenset(),
    disable: frozenset[str] = frozenset(),
    trust: bool | frozenset[str] = False,
) -> tuple[list[McpTool], tuple[RejectedTool, ...]]:
    """The tools of a listing that pass the filters, as `McpTool` values, and the bad ones.

    ``enable``, when not empty, keeps exactly those tools (``disable`` is then ignored);
    otherwise every tool but those in ``disable`` is kept (AgentScope's rule). Of those, a tool
    is rejected, alone, when its name is empty or holds a control character, when another kept
    tool has the same name (every copy is: which one the server would run is unknown), when its
    input schema is not an object schema or does not compile (a cycle of ``$ref``, a bad
    keyword), or when its output schema is not JSON ferrotool can hold.
    """
    if enable:
        kept = [tool for tool in listing if tool.name in enable]
    else:
        kept = [tool for tool in listing if tool.name not in disable]
    counts: dict[str, int] = {}
    for tool in kept:
        local = tool_name(client.name, tool.name)
        counts[local] = counts.get(local, 0) + 1
    tools: list[McpTool] = []
    rejected: dict[str, str] = {}
    for tool in kept:
        if tool.name in rejected:
            continue
        reason = _bad_name(tool.name)
        if reason is None and counts[tool_name(client.name, tool.name)] > 1:
            reason = f"the server lists {counts[tool_name(client.name, tool.name)]} tools named so"
        schema_type = (tool.input_schema or {}).get("type", "object")
        if reason is None and schema_type != "object":
            reason = f"its input schema is not an object schema (type {schema_type!r})"
        if reason is None:
            trusted = trust if isinstance(trust, bool) else tool.name in trust
            try:
                tools.append(McpTool(client, tool, trusted=trusted))
            except Exception as error:  # one bad definition leaves its neighbours alone
                reason = str(error) or type(error).__name__
        if reason is not None:
            rejected[tool.name] = reason
    return tools, tuple(RejectedTool(name, reason) for name, reason in rejected.items())


def _bad_name(name: str) -> str | None:
    """Why a server's tool name cannot be used, if it cannot."""
    if not name.strip():
        return "its name is empty"
    for char in name:
        if unicodedata.category(char) in ("Cc", "Cs"):
            return f"its name holds a control character ({char!r})"
    return None


def presets_for(
    presets: Mapping[str, Mapping[str, object]] | None, tool: McpTool
) -> Mapping[str, object] | None:
    """The presets given for a tool, by its name on the server (or its ferrotool name)."""
    if not presets:
        return None
    return presets.get(tool.remote_name) or presets.get(tool.name)


__all__ = [
    "ADDITIVE_REASON",
    "DESTRUCTIVE_REASON",
    "MISSING_HINTS_REASON",
    "TRUSTED_REASON",
    "McpTool",
    "McpTrust",
    "RejectedTool",
    "mcp_tools",
    "presets_for",
    "trusted_names",
]
