"""ferrotool: strictly typed, functional tools for LLM agents, with a Rust core.

Define tools with `tool` (typed functions) or `ToolBase` (explicit classes), register them in a
`Toolkit`, hand its provider schemas to a model, and run the calls the model makes with
`Toolkit.call_tool`: arguments are validated in Rust in one pass, and every mistake the model
can make comes back as a `ToolResultBlock` it can act on.

The public names are listed here by layer, lowest first (the README's "Layout"); each keeps the
module it is defined in as its ``__module__`` (the README says why).
"""

import importlib
import logging
import warnings
from typing import TYPE_CHECKING, Final

from ferrotool import _core
from ferrotool._core import ErrorDetail, JsonSchemaValidator
from ferrotool.errors import (
    AgentError,
    DocumentationWarning,
    FerrotoolDeprecationWarning,
    FerrotoolError,
    FerrotoolWarning,
    InjectionError,
    InteropError,
    MissingExtra,
    ProviderShapeError,
    RegistrationError,
    ResumeError,
    SchemaError,
    SessionConflict,
    SkillError,
    StrictSchemaWarning,
    SuspendTool,
    UnmatchableRule,
    ValidationError,
)

# A library's logger: the application configures the handlers (see `ferrotool._execution.outcomes`).
logging.getLogger("ferrotool").addHandler(logging.NullHandler())

if TYPE_CHECKING:  # every public name, for type checkers; at run time each is loaded on first use
    # (sorted by module: `_LAZY` and `__all__` below group them by layer)
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
        ConfirmationResult,
        EventSink,
        ExternalExecutionRequired,
        ExternalExecutionResult,
        ToolCallFinished,
        ToolCallStarted,
        ToolEvent,
    )
    from ferrotool._execution.middleware import Middleware, Next
    from ferrotool._execution.middleware import compose as compose_middleware
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
    from ferrotool._values.calls import (
        PERMISSION_STATE_KEY,
        PermissionState,
        ResultSink,
        ToolResultBlock,
        ToolResultState,
        ToolUseBlock,
    )
    from ferrotool._values.content import ContentBlock, ImageBlock, JsonBlock, TextBlock
    from ferrotool._values.context import (
        AgentState,
        CallingAgent,
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

# Where each public name not loaded above lives: its module, then the names it gives, by layer as
# above (`tests/unit/test_public_api.py` checks that this table, the imports above and `__all__`
# agree). `import ferrotool` loads only the errors and the Rust extension; the first use of a
# name loads its module (PEP 562), so what a program never touches (a wing, the execution
# engine, schema derivation) is never imported.
_LAZY: Final[dict[str, tuple[str, ...]]] = {
    "ferrotool._values.calls": (
        "PERMISSION_STATE_KEY",
        "PermissionState",
        "ResultSink",
        "ToolResultBlock",
        "ToolResultState",
        "ToolUseBlock",
    ),
    "ferrotool._values.content": ("ContentBlock", "ImageBlock", "JsonBlock", "TextBlock"),
    "ferrotool._values.context": (
        "AgentState",
        "CallingAgent",
        "Emitter",
        "ProgressSink",
        "RuntimeContext",
        "ToolProgress",
    ),
    "ferrotool._values.execution": ("ExecutionConfig",),
    "ferrotool._values.groups": ("BASIC", "ToolGroup", "ToolGroupScope"),
    "ferrotool._values.json": ("JsonValue",),
    "ferrotool._values.spec": ("ToolSpec",),
    "ferrotool._schema.docstrings": ("DocstringStyle",),
    "ferrotool._schema.params": ("Param",),
    "ferrotool._schema.schema": (
        "DEFAULT_LIMITS",
        "FunctionSchema",
        "Limits",
        "TypeSchema",
        "function_schema",
        "type_schema",
    ),
    "ferrotool._tools.base": ("AgentTool", "ToolBase", "ToolCallParam", "ToolReturn"),
    "ferrotool._tools.external": ("SchemaOnlyTool",),
    "ferrotool._tools.function": ("FunctionTool", "ToolOptions", "tool"),
    "ferrotool._tools.inject": ("INJECT", "Injected"),
    "ferrotool._permissions.decisions": (
        "PermissionBehavior",
        "PermissionDecision",
        "PermissionMode",
        "PermissionRule",
    ),
    "ferrotool._permissions.paths": ("DEFAULT_DANGEROUS_DIRECTORIES", "DEFAULT_DANGEROUS_FILES"),
    "ferrotool._permissions.state": (
        "EMPTY_PERMISSIONS",
        "PermissionContext",
        "PermissionContextState",
        "WorkingDirectory",
    ),
    "ferrotool._session.memory": ("InMemorySessionStore",),
    "ferrotool._session.pending": ("PendingToolCall", "SuspensionKind"),
    "ferrotool._session.state": (
        "EMPTY_STATE",
        "SessionKey",
        "SessionStore",
        "ToolContextState",
        "session_key",
        "update_session",
    ),
    "ferrotool._requests.config": ("NO_REQUEST_CONFIG", "ToolMergeMode", "ToolRequestConfig"),
    "ferrotool._execution.batch": ("Confirmation", "Suspension", "ToolBatch"),
    "ferrotool._execution.events": (
        "AllToolsDenied",
        "ConfirmationRequired",
        "ConfirmationResult",
        "EventSink",
        "ExternalExecutionRequired",
        "ExternalExecutionResult",
        "ToolCallFinished",
        "ToolCallStarted",
        "ToolEvent",
    ),
    "ferrotool._execution.middleware": ("Middleware", "Next", "compose_middleware"),
    "ferrotool._execution.resume": ("Reply",),
    "ferrotool._execution.runner": ("ToolkitConfig",),
    "ferrotool._definitions.formats": (
        "PROVIDER_FORMATS",
        "ProviderFormat",
        "SchemaChange",
        "ToolDefinition",
        "tool_definition",
    ),
    "ferrotool._registry.derived": ("RESET_TOOLS",),
    "ferrotool._registry.registry": ("Registry",),
    "ferrotool._registry.toolkit": ("Toolkit",),
    "ferrotool._registry.view": ("ToolView",),
    "ferrotool.providers.streaming": ("ArgumentsAccumulator", "ToolCallStream"),
}
# The public names whose module calls them otherwise.
_RENAMED: Final[dict[str, str]] = {"compose_middleware": "compose"}
_WHERE: Final[dict[str, str]] = {name: module for module, names in _LAZY.items() for name in names}
# Old public names, each still the same object as the name that replaced it, with a
# `FerrotoolDeprecationWarning` at every use; outside `__all__`, `__dir__` and the type checkers'
# imports, so star imports and completion offer only the new name.
_DEPRECATED: Final[dict[str, str]] = {"Agent": "CallingAgent"}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        renamed = _DEPRECATED.get(name)
        if renamed is None:
            raise AttributeError(f"module 'ferrotool' has no attribute {name!r}")
        warnings.warn(
            f"ferrotool.{name} is deprecated: use ferrotool.{renamed}, the same object",
            FerrotoolDeprecationWarning,
            stacklevel=2,
        )
        return __getattr__(renamed)
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # once: later uses find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Written in one place, Cargo.toml's `[workspace.package] version`, and compiled into the
# extension. The wheel's metadata holds the same version spelled the PEP 440 way (a pre-release
# `0.2.0-rc.1` is `0.2.0rc1` there; PEP 440 reads both as the same version).
__version__: str = _core.__version__

__all__ = [  # noqa: RUF022  (grouped by layer, as `_LAZY`; sorted within each group)
    # errors: every exception and warning (`ferrotool.errors`), loaded with the package
    "AgentError",
    "DocumentationWarning",
    "FerrotoolDeprecationWarning",
    "FerrotoolError",
    "FerrotoolWarning",
    "InjectionError",
    "InteropError",
    "MissingExtra",
    "ProviderShapeError",
    "RegistrationError",
    "ResumeError",
    "SchemaError",
    "SessionConflict",
    "SkillError",
    "StrictSchemaWarning",
    "SuspendTool",
    "UnmatchableRule",
    "ValidationError",
    # _core: the Rust extension's own values, loaded with the package
    "ErrorDetail",
    "JsonSchemaValidator",
    # _values: frozen values
    "BASIC",
    "AgentState",
    "CallingAgent",
    "ContentBlock",
    "Emitter",
    "ExecutionConfig",
    "ImageBlock",
    "JsonBlock",
    "JsonValue",
    "PERMISSION_STATE_KEY",
    "PermissionState",
    "ProgressSink",
    "ResultSink",
    "RuntimeContext",
    "TextBlock",
    "ToolGroup",
    "ToolGroupScope",
    "ToolProgress",
    "ToolResultBlock",
    "ToolResultState",
    "ToolSpec",
    "ToolUseBlock",
    # _schema: annotations to schemas and validators
    "DEFAULT_LIMITS",
    "DocstringStyle",
    "FunctionSchema",
    "Limits",
    "Param",
    "TypeSchema",
    "function_schema",
    "type_schema",
    # _tools: what a tool is
    "INJECT",
    "AgentTool",
    "FunctionTool",
    "Injected",
    "SchemaOnlyTool",
    "ToolBase",
    "ToolCallParam",
    "ToolOptions",
    "ToolReturn",
    "tool",
    # _permissions: decisions, rules and a session's permission state
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "EMPTY_PERMISSIONS",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionContextState",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
    "WorkingDirectory",
    # _session: session state, its stores, pending calls
    "EMPTY_STATE",
    "InMemorySessionStore",
    "PendingToolCall",
    "SessionKey",
    "SessionStore",
    "SuspensionKind",
    "ToolContextState",
    "session_key",
    "update_session",
    # _requests: per-request tool configuration
    "NO_REQUEST_CONFIG",
    "ToolMergeMode",
    "ToolRequestConfig",
    # _execution: the call pipeline, batches, events, middleware
    "AllToolsDenied",
    "Confirmation",
    "ConfirmationRequired",
    "ConfirmationResult",
    "EventSink",
    "ExternalExecutionRequired",
    "ExternalExecutionResult",
    "Middleware",
    "Next",
    "Reply",
    "Suspension",
    "ToolBatch",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolEvent",
    "ToolkitConfig",
    "compose_middleware",
    # _definitions: tool definitions in each provider's format
    "PROVIDER_FORMATS",
    "ProviderFormat",
    "SchemaChange",
    "ToolDefinition",
    "tool_definition",
    # _registry: registries, toolkits, request views
    "RESET_TOOLS",
    "Registry",
    "ToolView",
    "Toolkit",
    # providers: streamed tool-call arguments (the rest of the wing is `ferrotool.providers`)
    "ArgumentsAccumulator",
    "ToolCallStream",
]
