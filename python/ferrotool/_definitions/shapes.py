"""The tool-definition shape of each provider format, for type checkers.

`Toolkit.schemas(format)` and `ToolView.schemas(format)` return a list of the provider SDK's
own parameter type for its format, so the SDK's ``tools=`` accepts the list as it is, checked by
mypy and pyright:

| format | element type |
|---|---|
| ``openai_chat`` | ``openai.types.chat.ChatCompletionToolParam`` |
| ``openai_responses`` | ``openai.types.responses.FunctionToolParam`` |
| ``anthropic`` | ``anthropic.types.ToolParam`` |
| ``gemini`` | ``google.genai.types.FunctionDeclarationDict`` |
| ``mcp`` | `McpTool` (below: the MCP SDK's ``Tool`` is a model, not a `TypedDict`) |

The SDK types are read only by type checkers (nothing is imported at run time): where an SDK is
not installed, its format's element type is unknown to the checker (``Any``), never an error. A
`TypedDict` is assignable to another only when both declare the same keys, so mirroring the
SDKs' shapes by hand would break with each SDK release; naming their own types does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypeAlias

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicTool
    from google.genai.types import FunctionDeclarationDict as GeminiFunctionDeclaration
    from openai.types.chat import ChatCompletionToolParam as OpenAIChatTool
    from openai.types.responses import FunctionToolParam as OpenAIResponsesTool
else:  # the names exist at run time too (for `typing.get_type_hints`), as plain dicts
    AnthropicTool: TypeAlias = dict
    GeminiFunctionDeclaration: TypeAlias = dict
    OpenAIChatTool: TypeAlias = dict
    OpenAIResponsesTool: TypeAlias = dict


class McpToolAnnotations(TypedDict, total=False):
    """The annotations of an MCP tool (hints for clients; ferrotool sets ``readOnlyHint``)."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class McpTool(TypedDict):
    """An MCP tool as ``tools/list`` lists it."""

    name: str
    description: str
    inputSchema: dict[str, object]
    annotations: NotRequired[McpToolAnnotations]
    outputSchema: NotRequired[dict[str, object]]


__all__ = [
    "AnthropicTool",
    "GeminiFunctionDeclaration",
    "McpTool",
    "McpToolAnnotations",
    "OpenAIChatTool",
    "OpenAIResponsesTool",
]
