"""Per-request tool configuration: external (client-side) tools and how they merge."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, final

import orjson

from ferrotool._schema.schema import DEFAULT_LIMITS, Limits
from ferrotool._tools.function import SuspendTool, ToolBase, ToolCallParam
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec


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


_SCHEMA_KEYS: Final = ("parameters", "input_schema", "inputSchema")
"""Where a definition keeps its JSON Schema: OpenAI and plain, Anthropic, MCP."""


def _definition_parts(
    definition: Mapping[str, Any],
) -> tuple[str, str, Mapping[str, JsonValue], bool | None]:
    """(name, description, parameters, strict) of a tool definition in any common shape."""
    if definition.get("type") == "function" and isinstance(definition.get("function"), Mapping):
        definition = definition["function"]  # OpenAI chat completions
    name = definition.get("name")
    if not isinstance(name, str):
        raise ValueError("a tool definition needs a string 'name'")
    key = next((key for key in _SCHEMA_KEYS if key in definition), "parameters")
    schema = definition.get(key) or {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool {name!r}: the parameters must be a JSON Schema object")
    strict = definition.get("strict")
    description = definition.get("description") or f"Tool: {name}"
    return name, str(description), schema, strict if isinstance(strict, bool) else None


class SchemaOnlyTool(ToolBase[dict[str, JsonValue]]):
    """An external tool known only by its schema: the caller runs it.

    A call validates the arguments against the schema and ends suspended, for the caller to
    execute and answer later with the real result for the call's id.

    Args:
        definition: A tool definition as a client sends it: ``{"name", "description",
            "parameters"}``, an OpenAI chat ``{"type": "function", "function": {...}}``, an
            Anthropic ``{"name", "description", "input_schema"}`` or an MCP ``{"name",
            "description", "inputSchema"}``; or a `ToolSpec`.
        limits: Input limits for validating the arguments.

    Raises:
        ValueError: The definition has no name, or its schema is not a JSON Schema object.
        SchemaError: The schema does not compile.
    """

    external_tool = True

    def __init__(
        self, definition: Mapping[str, Any] | ToolSpec, *, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        parameters: Mapping[str, JsonValue]
        if isinstance(definition, ToolSpec):
            name, description = definition.name, definition.description
            parameters = definition.parameters_schema()
            strict = definition.strict
        else:
            name, description, parameters, strict = _definition_parts(definition)
        super().__init__(
            name=name,
            description=description,
            input_schema=parameters,
            strict=strict,
            external_tool=True,
            limits=limits,
        )

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> None:
        """Never runs here: suspends the call for the caller to execute."""
        raise SuspendTool()

    def definition(self) -> dict[str, JsonValue]:
        """The tool as ``{"name", "description", "parameters"}``."""
        return {
            "name": self.spec.name,
            "description": self.spec.description,
            "parameters": orjson.loads(self.spec.parameters),
        }


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

__all__ = ["NO_REQUEST_CONFIG", "SchemaOnlyTool", "ToolMergeMode", "ToolRequestConfig"]
