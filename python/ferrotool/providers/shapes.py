"""The tool-definition shape of each provider format, for type checkers.

`Toolkit.schemas(format)` and `ToolView.schemas(format)` return a list of the provider SDK's own
parameter type for its format (``openai.types.chat.ChatCompletionToolParam`` for
``openai_chat``...; `McpTool` for ``mcp``). Defined in the core (`ferrotool._definitions`), which
lists tools with them; named here beside the adapters.
"""

from ferrotool._definitions.shapes import (
    AnthropicTool,
    GeminiFunctionDeclaration,
    McpTool,
    McpToolAnnotations,
    OpenAIChatTool,
    OpenAIResponsesTool,
)

__all__ = [
    "AnthropicTool",
    "GeminiFunctionDeclaration",
    "McpTool",
    "McpToolAnnotations",
    "OpenAIChatTool",
    "OpenAIResponsesTool",
]
