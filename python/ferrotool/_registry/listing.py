"""The provider tool list of a toolkit, registry or view, typed by its format."""

from __future__ import annotations

from typing import Any, Literal, overload

import orjson

from ferrotool._definitions.formats import ProviderFormat
from ferrotool._definitions.shapes import (
    AnthropicTool,
    GeminiFunctionDeclaration,
    McpTool,
    OpenAIChatTool,
    OpenAIResponsesTool,
)


class ToolLists:
    """`schemas` over a class's `schemas_json`: a fresh list of its format's element type."""

    __slots__ = ()

    def schemas_json(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> bytes:
        """The tool list for a provider request, as JSON bytes."""
        raise NotImplementedError

    @overload
    def schemas(
        self, format: Literal["openai_chat"] = "openai_chat", *, strict: bool = False
    ) -> list[OpenAIChatTool]: ...
    @overload
    def schemas(
        self, format: Literal["openai_responses"], *, strict: bool = False
    ) -> list[OpenAIResponsesTool]: ...
    @overload
    def schemas(
        self, format: Literal["anthropic"], *, strict: bool = False
    ) -> list[AnthropicTool]: ...
    @overload
    def schemas(
        self, format: Literal["gemini"], *, strict: bool = False
    ) -> list[GeminiFunctionDeclaration]: ...
    @overload
    def schemas(self, format: Literal["mcp"], *, strict: bool = False) -> list[McpTool]: ...
    def schemas(self, format: ProviderFormat = "openai_chat", *, strict: bool = False) -> list[Any]:
        """The tool list for a provider request (``tools=...``), a fresh copy.

        Each element has the provider SDK's own type for its format (see
        `ferrotool.providers.shapes`), so the SDK's ``tools=`` takes the list as it is.

        Args:
            format: ``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` or ``mcp``.
            strict: Ask for strict schemas; a tool that cannot be made strict faithfully is
                sent non-strict, with a `StrictSchemaWarning`.
        """
        tools = orjson.loads(self.schemas_json(format, strict=strict))
        assert isinstance(tools, list)
        return tools


__all__ = ["ToolLists"]
