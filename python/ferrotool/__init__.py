"""ferrotool: strictly typed, functional tools for LLM agents, with a Rust core.

Define tools with `tool` (typed functions) or `ToolBase` (explicit classes), register them in a
`Toolkit`, hand its provider schemas to a model, and run the calls the model makes with
`Toolkit.call_tool`: arguments are validated in Rust in one pass, and every mistake the model
can make comes back as a `ToolResultBlock` it can act on.
"""

from ferrotool import _core
from ferrotool._core import ErrorDetail, JsonSchemaValidator
from ferrotool._definitions.formats import (
    PROVIDER_FORMATS,
    ProviderFormat,
    SchemaChange,
    StrictSchemaWarning,
    ToolDefinition,
    tool_definition,
)
from ferrotool._execution.batch import Confirmation, Suspension, ToolBatch
from ferrotool._execution.events import (
    AllToolsDenied,
    ConfirmationRequired,
    EventSink,
    ExternalExecutionRequired,
    ToolCallFinished,
    ToolCallStarted,
    ToolEvent,
)
from ferrotool._execution.middleware import Middleware, Next
from ferrotool._execution.middleware import compose as compose_middleware
from ferrotool._execution.pipeline import ResultSink
from ferrotool._execution.resume import Reply
from ferrotool._execution.runner import ToolkitConfig
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from ferrotool._permissions.paths import DEFAULT_DANGEROUS_DIRECTORIES, DEFAULT_DANGEROUS_FILES
from ferrotool._permissions.state import (
    EMPTY_PERMISSIONS,
    PermissionContext,
    PermissionContextState,
    WorkingDirectory,
)
from ferrotool._registry.derived import RESET_TOOLS
from ferrotool._registry.registry import Registry
from ferrotool._registry.toolkit import Toolkit
from ferrotool._registry.view import ToolView
from ferrotool._requests.config import NO_REQUEST_CONFIG, ToolMergeMode, ToolRequestConfig
from ferrotool._schema.docstrings import DocstringStyle
from ferrotool._schema.params import Param
from ferrotool._schema.schema import (
    DEFAULT_LIMITS,
    FunctionSchema,
    Limits,
    TypeSchema,
    function_schema,
    type_schema,
)
from ferrotool._session.memory import InMemorySessionStore
from ferrotool._session.pending import PendingToolCall, SuspensionKind
from ferrotool._session.state import (
    EMPTY_STATE,
    SessionKey,
    SessionStore,
    ToolContextState,
    session_key,
    update_session,
)
from ferrotool._tools.base import AgentTool, ToolBase, ToolCallParam, ToolReturn
from ferrotool._tools.external import SchemaOnlyTool
from ferrotool._tools.function import DocumentationWarning, FunctionTool, ToolOptions, tool
from ferrotool._tools.inject import INJECT, Injected
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.content import ContentBlock, ImageBlock, JsonBlock, TextBlock
from ferrotool._values.context import (
    Agent,
    AgentState,
    Emitter,
    ProgressSink,
    RuntimeContext,
    ToolProgress,
)
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import (
    AgentError,
    FerrotoolError,
    InjectionError,
    InteropError,
    ProviderShapeError,
    RegistrationError,
    ResumeError,
    SchemaError,
    SessionConflict,
    SkillError,
    SuspendTool,
    ValidationError,
)
from ferrotool.providers.streaming import ArgumentsAccumulator, ToolCallStream

# Written in one place, Cargo.toml's `[workspace.package] version`, and compiled into the
# extension. The wheel's metadata holds the same version spelled the PEP 440 way (a pre-release
# `0.2.0-rc.1` is `0.2.0rc1` there; PEP 440 reads both as the same version).
__version__: str = _core.__version__

__all__ = [
    "BASIC",
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "DEFAULT_LIMITS",
    "EMPTY_PERMISSIONS",
    "EMPTY_STATE",
    "INJECT",
    "NO_REQUEST_CONFIG",
    "PROVIDER_FORMATS",
    "RESET_TOOLS",
    "Agent",
    "AgentError",
    "AgentState",
    "AgentTool",
    "AllToolsDenied",
    "ArgumentsAccumulator",
    "Confirmation",
    "ConfirmationRequired",
    "ContentBlock",
    "DocstringStyle",
    "DocumentationWarning",
    "Emitter",
    "ErrorDetail",
    "EventSink",
    "ExecutionConfig",
    "ExternalExecutionRequired",
    "FerrotoolError",
    "FunctionSchema",
    "FunctionTool",
    "ImageBlock",
    "InMemorySessionStore",
    "Injected",
    "InjectionError",
    "InteropError",
    "JsonBlock",
    "JsonSchemaValidator",
    "JsonValue",
    "Limits",
    "Middleware",
    "Next",
    "Param",
    "PendingToolCall",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionContextState",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
    "ProgressSink",
    "ProviderFormat",
    "ProviderShapeError",
    "RegistrationError",
    "Registry",
    "Reply",
    "ResultSink",
    "ResumeError",
    "RuntimeContext",
    "SchemaChange",
    "SchemaError",
    "SchemaOnlyTool",
    "SessionConflict",
    "SessionKey",
    "SessionStore",
    "SkillError",
    "StrictSchemaWarning",
    "SuspendTool",
    "Suspension",
    "SuspensionKind",
    "TextBlock",
    "ToolBase",
    "ToolBatch",
    "ToolCallFinished",
    "ToolCallParam",
    "ToolCallStarted",
    "ToolCallStream",
    "ToolContextState",
    "ToolDefinition",
    "ToolEvent",
    "ToolGroup",
    "ToolGroupScope",
    "ToolMergeMode",
    "ToolOptions",
    "ToolProgress",
    "ToolRequestConfig",
    "ToolResultBlock",
    "ToolResultState",
    "ToolReturn",
    "ToolSpec",
    "ToolUseBlock",
    "ToolView",
    "Toolkit",
    "ToolkitConfig",
    "TypeSchema",
    "ValidationError",
    "WorkingDirectory",
    "compose_middleware",
    "function_schema",
    "session_key",
    "tool",
    "tool_definition",
    "type_schema",
    "update_session",
]
