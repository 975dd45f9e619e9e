"""Provider tool definitions: a tool's spec in each model API's shape, strict or not."""

from ferrotool.providers._definitions import (
    PROVIDER_FORMATS,
    ProviderFormat,
    SchemaChange,
    StrictSchemaWarning,
    ToolDefinition,
    tool_definition,
)

__all__ = [
    "PROVIDER_FORMATS",
    "ProviderFormat",
    "SchemaChange",
    "StrictSchemaWarning",
    "ToolDefinition",
    "tool_definition",
]
