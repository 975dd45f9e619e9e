"""ferrotool: strictly typed, functional tools for LLM agents, with a Rust core.

Define tools with `tool` (typed functions) or `ToolBase` (explicit classes), register them in a
`Toolkit`, hand its provider schemas to a model, and run the calls the model makes with
`Toolkit.call_tool`: arguments are validated in Rust in one pass, and every mistake the model
can make comes back as a `ToolResultBlock` it can act on.
"""

import importlib
from typing import TYPE_CHECKING, Final

from ferrotool import _core
from ferrotool._core import ErrorDetail, JsonSchemaValidator
from ferrotool.errors import (
    AgentError,
    DocumentationWarning,
    FerrotoolError,
    FerrotoolWarning,
    InjectionError,
    InteropError,
    ProviderShapeError,
    RegistrationError,
    ResumeError,
    SchemaError,
    SessionConflict,
    SkillError,
    StrictSchemaWarning,
    SuspendTool,
    ValidationError,
)

if TYPE_CHECKING:  # every public name, for type checkers; at run time each is loaded on first use
    from ferrotool._definitions.formats import (
        PROVIDER_FORMATS,
        ProviderFormat,
        SchemaChange,
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
    from ferrotool._tools.function import FunctionTool, ToolOptions, tool
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
    from ferrotool.providers.streaming import ArgumentsAccumulator, ToolCallStream

# Where each public name lives (its module, its name there). `import ferrotool` loads only the
# errors and the Rust extension; the first use of a name loads its module (PEP 562), so what a
# program never touches (a wing, the execution engine, schema derivation) is never imported.
_WHERE: Final[dict[str, tuple[str, str]]] = {
    "Agent": ("ferrotool._values.context", "Agent"),
    "AgentState": ("ferrotool._values.context", "AgentState"),
    "AgentTool": ("ferrotool._tools.base", "AgentTool"),
    "AllToolsDenied": ("ferrotool._execution.events", "AllToolsDenied"),
    "ArgumentsAccumulator": ("ferrotool.providers.streaming", "ArgumentsAccumulator"),
    "BASIC": ("ferrotool._values.groups", "BASIC"),
    "Confirmation": ("ferrotool._execution.batch", "Confirmation"),
    "ConfirmationRequired": ("ferrotool._execution.events", "ConfirmationRequired"),
    "ContentBlock": ("ferrotool._values.content", "ContentBlock"),
    "DEFAULT_DANGEROUS_DIRECTORIES": (
        "ferrotool._permissions.paths",
        "DEFAULT_DANGEROUS_DIRECTORIES",
    ),
    "DEFAULT_DANGEROUS_FILES": ("ferrotool._permissions.paths", "DEFAULT_DANGEROUS_FILES"),
    "DEFAULT_LIMITS": ("ferrotool._schema.schema", "DEFAULT_LIMITS"),
    "DocstringStyle": ("ferrotool._schema.docstrings", "DocstringStyle"),
    "EMPTY_PERMISSIONS": ("ferrotool._permissions.state", "EMPTY_PERMISSIONS"),
    "EMPTY_STATE": ("ferrotool._session.state", "EMPTY_STATE"),
    "Emitter": ("ferrotool._values.context", "Emitter"),
    "EventSink": ("ferrotool._execution.events", "EventSink"),
    "ExecutionConfig": ("ferrotool._values.execution", "ExecutionConfig"),
    "ExternalExecutionRequired": ("ferrotool._execution.events", "ExternalExecutionRequired"),
    "FunctionSchema": ("ferrotool._schema.schema", "FunctionSchema"),
    "FunctionTool": ("ferrotool._tools.function", "FunctionTool"),
    "INJECT": ("ferrotool._tools.inject", "INJECT"),
    "ImageBlock": ("ferrotool._values.content", "ImageBlock"),
    "InMemorySessionStore": ("ferrotool._session.memory", "InMemorySessionStore"),
    "Injected": ("ferrotool._tools.inject", "Injected"),
    "JsonBlock": ("ferrotool._values.content", "JsonBlock"),
    "JsonValue": ("ferrotool._values.json", "JsonValue"),
    "Limits": ("ferrotool._schema.schema", "Limits"),
    "Middleware": ("ferrotool._execution.middleware", "Middleware"),
    "NO_REQUEST_CONFIG": ("ferrotool._requests.config", "NO_REQUEST_CONFIG"),
    "Next": ("ferrotool._execution.middleware", "Next"),
    "PROVIDER_FORMATS": ("ferrotool._definitions.formats", "PROVIDER_FORMATS"),
    "Param": ("ferrotool._schema.params", "Param"),
    "PendingToolCall": ("ferrotool._session.pending", "PendingToolCall"),
    "PermissionBehavior": ("ferrotool._permissions.decisions", "PermissionBehavior"),
    "PermissionContext": ("ferrotool._permissions.state", "PermissionContext"),
    "PermissionContextState": ("ferrotool._permissions.state", "PermissionContextState"),
    "PermissionDecision": ("ferrotool._permissions.decisions", "PermissionDecision"),
    "PermissionMode": ("ferrotool._permissions.decisions", "PermissionMode"),
    "PermissionRule": ("ferrotool._permissions.decisions", "PermissionRule"),
    "ProgressSink": ("ferrotool._values.context", "ProgressSink"),
    "ProviderFormat": ("ferrotool._definitions.formats", "ProviderFormat"),
    "RESET_TOOLS": ("ferrotool._registry.derived", "RESET_TOOLS"),
    "Registry": ("ferrotool._registry.registry", "Registry"),
    "Reply": ("ferrotool._execution.resume", "Reply"),
    "ResultSink": ("ferrotool._execution.pipeline", "ResultSink"),
    "RuntimeContext": ("ferrotool._values.context", "RuntimeContext"),
    "SchemaChange": ("ferrotool._definitions.formats", "SchemaChange"),
    "SchemaOnlyTool": ("ferrotool._tools.external", "SchemaOnlyTool"),
    "SessionKey": ("ferrotool._session.state", "SessionKey"),
    "SessionStore": ("ferrotool._session.state", "SessionStore"),
    "Suspension": ("ferrotool._execution.batch", "Suspension"),
    "SuspensionKind": ("ferrotool._session.pending", "SuspensionKind"),
    "TextBlock": ("ferrotool._values.content", "TextBlock"),
    "ToolBase": ("ferrotool._tools.base", "ToolBase"),
    "ToolBatch": ("ferrotool._execution.batch", "ToolBatch"),
    "ToolCallFinished": ("ferrotool._execution.events", "ToolCallFinished"),
    "ToolCallParam": ("ferrotool._tools.base", "ToolCallParam"),
    "ToolCallStarted": ("ferrotool._execution.events", "ToolCallStarted"),
    "ToolCallStream": ("ferrotool.providers.streaming", "ToolCallStream"),
    "ToolContextState": ("ferrotool._session.state", "ToolContextState"),
    "ToolDefinition": ("ferrotool._definitions.formats", "ToolDefinition"),
    "ToolEvent": ("ferrotool._execution.events", "ToolEvent"),
    "ToolGroup": ("ferrotool._values.groups", "ToolGroup"),
    "ToolGroupScope": ("ferrotool._values.groups", "ToolGroupScope"),
    "ToolMergeMode": ("ferrotool._requests.config", "ToolMergeMode"),
    "ToolOptions": ("ferrotool._tools.function", "ToolOptions"),
    "ToolProgress": ("ferrotool._values.context", "ToolProgress"),
    "ToolRequestConfig": ("ferrotool._requests.config", "ToolRequestConfig"),
    "ToolResultBlock": ("ferrotool._values.calls", "ToolResultBlock"),
    "ToolResultState": ("ferrotool._values.calls", "ToolResultState"),
    "ToolReturn": ("ferrotool._tools.base", "ToolReturn"),
    "ToolSpec": ("ferrotool._values.spec", "ToolSpec"),
    "ToolUseBlock": ("ferrotool._values.calls", "ToolUseBlock"),
    "ToolView": ("ferrotool._registry.view", "ToolView"),
    "Toolkit": ("ferrotool._registry.toolkit", "Toolkit"),
    "ToolkitConfig": ("ferrotool._execution.runner", "ToolkitConfig"),
    "TypeSchema": ("ferrotool._schema.schema", "TypeSchema"),
    "WorkingDirectory": ("ferrotool._permissions.state", "WorkingDirectory"),
    "compose_middleware": ("ferrotool._execution.middleware", "compose"),
    "function_schema": ("ferrotool._schema.schema", "function_schema"),
    "session_key": ("ferrotool._session.state", "session_key"),
    "tool": ("ferrotool._tools.function", "tool"),
    "tool_definition": ("ferrotool._definitions.formats", "tool_definition"),
    "type_schema": ("ferrotool._schema.schema", "type_schema"),
    "update_session": ("ferrotool._session.state", "update_session"),
}


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'ferrotool' has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value  # once: later uses find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
    "FerrotoolWarning",
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
