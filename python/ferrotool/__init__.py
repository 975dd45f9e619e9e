"""ferrotool: strictly typed, functional tools for LLM agents, with a Rust core.

Define tools with `tool` (typed functions) or `ToolBase` (explicit classes), register them in a
`Toolkit`, hand its provider schemas to a model, and run the calls the model makes with
`Toolkit.call_tool`: arguments are validated in Rust in one pass, and every mistake the model
can make comes back as a `ToolResultBlock` it can act on.
"""

from ferrotool._content import ContentBlock, ImageBlock, JsonBlock, TextBlock
from ferrotool._context import (
    Agent,
    AgentState,
    Emitter,
    ProgressSink,
    RuntimeContext,
    ToolProgress,
)
from ferrotool._core import ErrorDetail, JsonSchemaValidator, ValidationError
from ferrotool._errors import SchemaError
from ferrotool._groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool._json import JsonValue
from ferrotool._meta import RESET_TOOLS
from ferrotool._params import Param
from ferrotool._paths import DEFAULT_DANGEROUS_DIRECTORIES, DEFAULT_DANGEROUS_FILES
from ferrotool._permissions import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from ferrotool._providers import (
    PROVIDER_FORMATS,
    ProviderFormat,
    SchemaChange,
    StrictSchemaWarning,
    ToolDefinition,
    tool_definition,
)
from ferrotool._request import NO_REQUEST_CONFIG, SchemaOnlyTool, ToolMergeMode, ToolRequestConfig
from ferrotool._results import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._schema import (
    DEFAULT_LIMITS,
    FunctionSchema,
    Limits,
    TypeSchema,
    function_schema,
    type_schema,
)
from ferrotool._spec import ToolSpec
from ferrotool._state import (
    EMPTY_STATE,
    InMemorySessionStore,
    SessionConflict,
    SessionKey,
    SessionStore,
    ToolContextState,
    update_session,
)
from ferrotool._tool import (
    INJECT,
    AgentTool,
    DocumentationWarning,
    FunctionTool,
    Injected,
    InjectionError,
    SuspendTool,
    ToolBase,
    ToolCallParam,
    ToolOptions,
    tool,
)
from ferrotool._toolkit import RegistrationError, Registry, Toolkit, ToolkitConfig, session_key
from ferrotool._views import ToolView

__version__ = "0.1.0"

__all__ = [
    "BASIC",
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "DEFAULT_LIMITS",
    "EMPTY_STATE",
    "INJECT",
    "NO_REQUEST_CONFIG",
    "PROVIDER_FORMATS",
    "RESET_TOOLS",
    "Agent",
    "AgentState",
    "AgentTool",
    "ContentBlock",
    "DocumentationWarning",
    "Emitter",
    "ErrorDetail",
    "FunctionSchema",
    "FunctionTool",
    "ImageBlock",
    "InMemorySessionStore",
    "Injected",
    "InjectionError",
    "JsonBlock",
    "JsonSchemaValidator",
    "JsonValue",
    "Limits",
    "Param",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
    "ProgressSink",
    "ProviderFormat",
    "RegistrationError",
    "Registry",
    "RuntimeContext",
    "SchemaChange",
    "SchemaError",
    "SchemaOnlyTool",
    "SessionConflict",
    "SessionKey",
    "SessionStore",
    "StrictSchemaWarning",
    "SuspendTool",
    "TextBlock",
    "ToolBase",
    "ToolCallParam",
    "ToolContextState",
    "ToolDefinition",
    "ToolGroup",
    "ToolGroupScope",
    "ToolMergeMode",
    "ToolOptions",
    "ToolProgress",
    "ToolRequestConfig",
    "ToolResultBlock",
    "ToolResultState",
    "ToolSpec",
    "ToolUseBlock",
    "ToolView",
    "Toolkit",
    "ToolkitConfig",
    "TypeSchema",
    "ValidationError",
    "function_schema",
    "session_key",
    "tool",
    "tool_definition",
    "type_schema",
    "update_session",
]
