"""`ToolSpec`: what a tool is, apart from what it does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, final

import orjson

from ferrotool._values.json import JsonValue, dumps_kept

TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The tool-name rule the big model APIs enforce (OpenAI, Anthropic, Gemini): 1 to 64 of
``A-Z a-z 0-9 _ -``."""

_SPEC_VERSION: Final = 1


def check_tool_name(name: str) -> str:
    """Return ``name`` if it follows the model APIs' rule, else raise `ValueError` naming it."""
    if TOOL_NAME.fullmatch(name) is None:
        raise ValueError(
            f"invalid tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' "
            "(the rule OpenAI, Anthropic and Gemini enforce)"
        )
    return name


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool's identity and flags: everything a model, a provider or a policy needs to know.

    Attributes:
        name: The name the model calls the tool by (``^[A-Za-z0-9_-]{1,64}$``).
        description: What the tool does, shown to the model.
        parameters_json: The JSON Schema (draft 2020-12) of the arguments, serialized;
            byte-stable (`parameters_schema` parses it).
        read_only: The tool only reads: it changes nothing outside itself.
        concurrency_safe: Calls of the tool may run at the same time as other calls.
        idempotent: A call may safely run again after a crash interrupted it (the default).
            A durable batch (`ferrotool.durable`) runs a non-idempotent call at most once:
            one a crash interrupted ends with an error result instead of a second run.
        external: The tool runs outside this process (on the client): a call is answered with
            a suspended result for the caller to execute.
        state_injected: The tool receives the agent's state.
        mcp_server: The MCP server the tool comes from, if any.
        strict: Ask providers for strict (grammar-constrained) arguments; ``None`` leaves it to
            the request.
        timeout: Seconds a call may take before it ends with an error result; ``None`` for no
            limit.
        output_schema_json: The JSON Schema of the structured result, serialized, if declared.
    """

    name: str
    description: str
    parameters_json: bytes = field(repr=False)
    read_only: bool = False
    concurrency_safe: bool = True
    idempotent: bool = True
    external: bool = False
    state_injected: bool = False
    mcp_server: str | None = None
    strict: bool | None = None
    timeout: float | None = None
    output_schema_json: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_tool_name(self.name)
        if self.mcp_server is not None and not self.mcp_server.strip():
            raise ValueError(f"tool {self.name!r}: mcp_server must not be blank")
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"tool {self.name!r}: timeout must be positive, got {self.timeout}")

    def parameters_schema(self) -> dict[str, JsonValue]:
        """Return a fresh copy of the arguments' JSON Schema."""
        schema = orjson.loads(self.parameters_json)
        if not isinstance(schema, dict):
            return {}
        return schema

    def output_schema(self) -> dict[str, JsonValue] | None:
        """Return a fresh copy of the structured result's JSON Schema, or ``None``.

        The schema is MCP's ``outputSchema``; a tool that answers with text only has none.
        """
        if self.output_schema_json is None:
            return None
        schema = orjson.loads(self.output_schema_json)
        return schema if isinstance(schema, dict) else None

    def to_json(self) -> bytes:
        """Serialize to JSON (orjson); `from_json` reads it back."""
        return orjson.dumps(
            {
                "version": _SPEC_VERSION,
                "name": self.name,
                "description": self.description,
                "parameters": orjson.Fragment(self.parameters_json),
                "read_only": self.read_only,
                "concurrency_safe": self.concurrency_safe,
                "idempotent": self.idempotent,
                "external": self.external,
                "state_injected": self.state_injected,
                "mcp_server": self.mcp_server,
                "strict": self.strict,
                "timeout": self.timeout,
                "output_schema": (
                    None
                    if self.output_schema_json is None
                    else orjson.Fragment(self.output_schema_json)
                ),
            }
        )

    @classmethod
    def from_json(cls, data: str | bytes) -> ToolSpec:
        """Read a spec written by `to_json`.

        Raises:
            ValueError: The JSON is not a tool spec of a known version.
        """
        raw = orjson.loads(data)
        if not isinstance(raw, dict) or raw.get("version") != _SPEC_VERSION:
            raise ValueError(f"not a version {_SPEC_VERSION} tool spec")
        output = raw.get("output_schema")
        try:
            return cls(
                name=raw["name"],
                description=raw["description"],
                parameters_json=dumps_kept(raw["parameters"]),
                read_only=raw["read_only"],
                concurrency_safe=raw["concurrency_safe"],
                idempotent=raw.get("idempotent", True),  # absent from specs written before it
                external=raw["external"],
                state_injected=raw["state_injected"],
                mcp_server=raw["mcp_server"],
                strict=raw["strict"],
                timeout=raw["timeout"],
                output_schema_json=None if output is None else dumps_kept(output),
            )
        except KeyError as missing:
            raise ValueError(f"tool spec is missing {missing}") from None


__all__ = ["TOOL_NAME", "ToolSpec", "check_tool_name"]
