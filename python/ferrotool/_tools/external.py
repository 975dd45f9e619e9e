"""External tools: tools the caller runs, known here by their schema only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ferrotool._schema.schema import DEFAULT_LIMITS, Limits
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import SuspendTool

_SCHEMA_KEYS: Final = ("parameters", "input_schema", "inputSchema")
"""Where a definition keeps its JSON Schema: OpenAI and plain, Anthropic, MCP."""


def definition_parts(
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

    external = True

    def __init__(
        self, definition: Mapping[str, Any] | ToolSpec, *, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        parameters: Mapping[str, JsonValue]
        if isinstance(definition, ToolSpec):
            name, description = definition.name, definition.description
            parameters = definition.parameters_schema()
            strict = definition.strict
        else:
            name, description, parameters, strict = definition_parts(definition)
        super().__init__(
            name=name,
            description=description,
            input_schema=parameters,
            strict=strict,
            external=True,
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
            "parameters": orjson.loads(self.spec.parameters_json),
        }


__all__ = ["SchemaOnlyTool", "definition_parts"]
