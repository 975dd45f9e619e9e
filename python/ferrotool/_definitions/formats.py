"""Tool definitions in each model provider's format, with strict schemas where faithful.

A tool's canonical arguments schema (JSON Schema draft 2020-12) goes to each provider in the
dialect it accepts: the Rust core (`ferrotool._core.provider_schema`) rewrites it for OpenAI's
and Anthropic's strict modes and for Gemini's ``Schema``, and reports every change. A strict
schema is only sent when the rewrite is *faithful*: it may drop constraints that server-side
validation still checks (``minLength``, numeric bounds...), but it must not change what the tool
can be given (a free-form dictionary, a tuple, a value of any type...). Otherwise the canonical
schema is sent non-strict and a `StrictSchemaWarning` says why.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

import orjson

from ferrotool._core import provider_schema
from ferrotool._values.json import JsonValue, dumps_kept
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import StrictSchemaWarning

ProviderFormat: TypeAlias = Literal["openai_chat", "openai_responses", "anthropic", "gemini", "mcp"]
"""The tool-definition formats `tool_definition` builds."""

PROVIDER_FORMATS: Final[tuple[ProviderFormat, ...]] = (
    "openai_chat",
    "openai_responses",
    "anthropic",
    "gemini",
    "mcp",
)
"""Every `ProviderFormat`, in a fixed order."""

_STRICT_DIALECT: Final[dict[str, str]] = {
    "openai_chat": "openai_strict",
    "openai_responses": "openai_strict",
    "anthropic": "anthropic_strict",
}
_REASONS_SHOWN: Final = 3


@final
@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One change made to a tool's schema for a provider's dialect.

    Attributes:
        pointer: The JSON Pointer, in the canonical schema, of the (sub)schema concerned.
        keyword: The JSON Schema keyword concerned (``minLength``, ``required``, ``$ref``...).
        message: What was done, in a short sentence.
        lossy: True when the change only drops or loosens something that server-side validation
            still checks, or reshapes the schema without changing what the tool can be given
            (an optional property made required and nullable, where ``null`` stands for
            omitted); strict mode stays faithful. False when the dialect cannot express the
            construct faithfully: one such change is why a strict request was sent non-strict.
    """

    pointer: str
    keyword: str
    message: str
    lossy: bool


@final
@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool's definition for one provider format, ready to send.

    Attributes:
        format: The provider format it was built for.
        name: The tool's name.
        strict: Whether strict mode was applied (requested and faithful). Always false for
            ``gemini`` and ``mcp``, which have no per-tool strict flag.
        definition_json: The definition as JSON bytes (one element of the request's tool list);
            `definition` parses it.
        changes: What the provider's dialect changed in the schema (empty when the canonical
            schema is sent unchanged).
    """

    format: ProviderFormat
    name: str
    strict: bool
    definition_json: bytes
    changes: tuple[SchemaChange, ...]

    def definition(self) -> dict[str, JsonValue]:
        """Return a fresh parsed copy of `definition_json`."""
        parsed: dict[str, JsonValue] = orjson.loads(self.definition_json)
        return parsed


def _transform(schema: bytes, dialect: str) -> tuple[bytes, tuple[SchemaChange, ...], bool]:
    transformed, raw_changes, faithful = provider_schema(schema, dialect)
    changes = tuple(SchemaChange(*change) for change in raw_changes)
    return transformed, changes, faithful


def _not_strict(spec: ToolSpec, format: ProviderFormat, changes: tuple[SchemaChange, ...]) -> str:
    """The `StrictSchemaWarning` message: the tool and the first reasons."""
    reasons = [change for change in changes if not change.lossy]
    shown = "; ".join(
        f"{change.pointer or '/'}: {change.message}" for change in reasons[:_REASONS_SHOWN]
    )
    if len(reasons) > _REASONS_SHOWN:
        shown += f"; and {len(reasons) - _REASONS_SHOWN} more"
    if format == "gemini":
        return (
            f"tool {spec.name!r}: the gemini declaration differs materially from the canonical "
            f"schema ({shown}); Gemini has no strict mode to withhold"
        )
    return (
        f"tool {spec.name!r}: strict mode not applied for {format}, its schema cannot be made "
        f"strict faithfully ({shown}); sent with the canonical schema, non-strict"
    )


def tool_definition(
    spec: ToolSpec, format: ProviderFormat, *, strict: bool = False
) -> ToolDefinition:
    """Build a tool's definition in a provider's format.

    Shapes:

    * ``openai_chat``: ``{"type": "function", "function": {"name", "description",
      "parameters", "strict": true}}``, ``strict`` present only when applied;
    * ``openai_responses``: ``{"type": "function", "name", "description", "parameters",
      "strict": bool}`` (the Responses API wants ``strict`` explicitly);
    * ``anthropic``: ``{"name", "description", "input_schema"}``, plus ``"strict": true`` when
      applied;
    * ``gemini``: ``{"name", "description", "parameters"}``, a ``FunctionDeclaration``. The
      schema always goes through the Gemini dialect (``$ref`` inlined, nullable types, only the
      keywords Gemini's ``Schema`` has); Gemini has no per-tool strict flag, so ``strict`` is
      never applied, but asking for it still warns when the declaration differs materially from
      the canonical schema (a recursion cut, for instance);
    * ``mcp``: ``{"name", "description", "inputSchema", "annotations": {"readOnlyHint"},
      "outputSchema"}`` with the canonical schemas unchanged; ``outputSchema`` only when the spec
      declares one. MCP has no strict mode.

    Strictness: the spec's own ``strict`` (``True``/``False``) overrides the ``strict`` argument;
    ``None`` leaves it to the argument. When strict is asked for and the provider's dialect
    cannot express the schema faithfully, the definition is built non-strict with the canonical
    schema, the changes are kept, and a `StrictSchemaWarning` names the tool and the reasons.

    Args:
        spec: The tool.
        format: The provider format.
        strict: Ask for strict (grammar-constrained) arguments, where the format has them.

    Returns:
        The definition, whether strict mode was applied, and the schema changes.

    Raises:
        ValueError: ``format`` is not a `ProviderFormat`, or the spec's schema, when it has to be
            transformed, is not valid JSON.
    """
    wanted = strict if spec.strict is None else spec.strict
    name, description = spec.name, spec.description
    if format == "mcp":
        mcp: dict[str, object] = {
            "name": name,
            "description": description,
            "inputSchema": orjson.Fragment(spec.parameters_json),
            "annotations": {"readOnlyHint": spec.read_only},
        }
        if spec.output_schema_json is not None:
            mcp["outputSchema"] = orjson.Fragment(spec.output_schema_json)
        return ToolDefinition(format, name, False, dumps_kept(mcp), ())
    if format == "gemini":
        schema, changes, faithful = _transform(spec.parameters_json, "gemini")
        if wanted and not faithful:
            warnings.warn(_not_strict(spec, format, changes), StrictSchemaWarning, stacklevel=2)
        declaration = {
            "name": name,
            "description": description,
            "parameters": orjson.Fragment(schema),
        }
        return ToolDefinition(format, name, False, dumps_kept(declaration), changes)
    dialect = _STRICT_DIALECT.get(format)
    if dialect is None:
        raise ValueError(
            f"unknown provider format {format!r}: expected one of {', '.join(PROVIDER_FORMATS)}"
        )
    schema, changes, applied = spec.parameters_json, (), False
    if wanted:
        strict_schema, changes, faithful = _transform(spec.parameters_json, dialect)
        if faithful:
            schema, applied = strict_schema, True
        else:
            warnings.warn(_not_strict(spec, format, changes), StrictSchemaWarning, stacklevel=2)
    parameters = orjson.Fragment(schema)
    definition: dict[str, object]
    if format == "openai_chat":
        function: dict[str, object] = {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
        if applied:
            function["strict"] = True
        definition = {"type": "function", "function": function}
    elif format == "openai_responses":
        definition = {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": applied,
        }
    else:
        definition = {"name": name, "description": description, "input_schema": parameters}
        if applied:
            definition["strict"] = True
    return ToolDefinition(format, name, applied, dumps_kept(definition), changes)


__all__ = [
    "PROVIDER_FORMATS",
    "ProviderFormat",
    "SchemaChange",
    "StrictSchemaWarning",
    "ToolDefinition",
    "tool_definition",
]
