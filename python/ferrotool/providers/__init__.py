"""Providers: tool definitions in each model API's shape, and the adapters for their messages.

`tool_definition` builds one tool's definition for a format, strict or not. The adapter modules
`openai_chat`, `openai_responses`, `anthropic` and `gemini` read a provider's tool calls into
`ToolUseBlock` values and write `ToolResultBlock` values back as the provider's messages
(import them by name: ``from ferrotool.providers import openai_chat``); `ArgumentsAccumulator`
and `ToolCallStream` gather the arguments of streamed calls.
"""

from ferrotool._definitions.formats import (
    PROVIDER_FORMATS,
    ProviderFormat,
    SchemaChange,
    StrictSchemaWarning,
    ToolDefinition,
    tool_definition,
)
from ferrotool.providers.streaming import ArgumentsAccumulator, CallDelta, ToolCallStream

__all__ = [
    "PROVIDER_FORMATS",
    "ArgumentsAccumulator",
    "CallDelta",
    "ProviderFormat",
    "SchemaChange",
    "StrictSchemaWarning",
    "ToolCallStream",
    "ToolDefinition",
    "tool_definition",
]
