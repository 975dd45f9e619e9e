"""Tools: the `AgentTool` protocol, the `ToolBase` class and `@tool` functions.

A tool is compiled once, when it is defined: its argument schema and validator come from the
Rust core, and everything a call needs (what to inject, whether to await, which thread) is
decided then, so a call only validates, injects and runs.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    Final,
    Generic,
    Literal,
    ParamSpec,
    Protocol,
    TypeAlias,
    TypedDict,
    TypeVar,
    cast,
    final,
    overload,
    runtime_checkable,
)

import orjson
from typing_extensions import Unpack

from ferrotool import _core
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from ferrotool._permissions.paths import (
    DEFAULT_DANGEROUS_DIRECTORIES,
    DEFAULT_DANGEROUS_FILES,
    is_dangerous_path,
    merge_paths,
)
from ferrotool._schema.docstrings import Docstring, check_documented, parse_docstring
from ferrotool._schema.introspect import docstring_summary
from ferrotool._schema.params import Param
from ferrotool._schema.schema import (
    DEFAULT_LIMITS,
    FunctionSchema,
    Limits,
    TypeSchema,
    function_schema,
    type_schema,
)
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import Agent, AgentState, Emitter, ProgressSink, RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec, check_tool_name
from ferrotool.errors import SchemaError

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
InputT = TypeVar("InputT")

ToolReturn: TypeAlias = object
"""What a tool may return: a `ToolResultBlock`, ``str``, ``None``, content blocks, or any
JSON-serializable value (records, dicts, lists, numbers)."""

ResultConverter: TypeAlias = Callable[[Any], object]
"""Turns a tool's return value into what the default conversion understands (for example a
`ToolResultBlock`)."""


class SuspendTool(Exception):
    """Raised by a tool to hand its call to someone else: the call ends suspended.

    Args:
        reason: Shown to the model instead of ``[Awaiting external execution]``.
    """

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "Tool execution suspended")
        self.reason = reason


class InjectionError(LookupError):
    """A tool asked for a value the call's context does not hold (a programming mistake)."""


class _InjectMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "INJECT"


INJECT: Final = _InjectMarker()
"""``Annotated`` metadata marking a parameter the toolkit fills from the `RuntimeContext` by
type; the parameter never appears in the schema."""

Injected: TypeAlias = Annotated[T, INJECT]
"""``Injected[Database]``: a parameter filled from the `RuntimeContext` with its `Database`."""


@final
@dataclass(frozen=True, slots=True, eq=False)
class ToolCallParam(Generic[InputT]):
    """Everything a `ToolBase.call` receives.

    Attributes:
        input: The validated arguments (a dict for a JSON Schema input, a record for a typed
            one), presets merged in.
        call: The tool call as the model sent it (``call.id`` is the call id).
        context: The call's runtime context.
        agent: The calling agent, if any.
        emitter: Streams progress chunks for this call.
    """

    input: InputT
    call: ToolUseBlock
    context: RuntimeContext
    agent: object | None
    emitter: Emitter

    @property
    def agent_state(self) -> AgentState | None:
        """The agent's state: the context's, else the agent's ``state`` attribute."""
        return _agent_state(self.context, self.agent)


def _agent_state(context: RuntimeContext, agent: object | None) -> AgentState | None:
    if context.agent_state is not None:
        return context.agent_state
    state = getattr(agent, "state", None)
    return state if isinstance(state, AgentState) else None


@runtime_checkable
class AgentTool(Protocol):
    """What every tool is to a toolkit: a spec, a way to read arguments, and a call."""

    @property
    def spec(self) -> ToolSpec:
        """The tool's name, description, schema and flags."""
        ...

    def parse_arguments(self, arguments: str | bytes) -> object:
        """Validate raw JSON arguments; raise `ferrotool.ValidationError` listing every problem."""
        ...

    def call(self, param: ToolCallParam[Any]) -> Awaitable[object]:
        """Run the tool; the result is converted like a function tool's return value."""
        ...


_UNSET: Final[Any] = object()


class ToolBase(Generic[InputT]):
    """Base class of explicit tools.

    Declare the tool with class attributes (or pass them to ``__init__``), implement
    `call` (external tools do not), and optionally `check_permissions`, `match_rule` and
    `generate_suggestions`::

        class Search(ToolBase[SearchArgs]):
            name = "search"
            description = "Search the web."
            input_schema = SearchArgs  # a typed record; or a JSON Schema dict
            read_only = True

            async def call(self, param: ToolCallParam[SearchArgs]) -> str: ...

    The schema is compiled when the tool is created. `spec` holds the resolved values.

    Attributes:
        name: The tool's name.
        description: What it does (defaults to the class docstring's summary).
        input_schema: A JSON Schema (draft 2020-12) of the arguments, or a typed record class
            (dataclass, TypedDict, NamedTuple, pydantic model) whose schema is derived and whose
            instances `call` receives.
        read_only: The tool changes nothing.
        concurrency_safe: Calls may overlap with other calls (default true).
        external_tool: The tool runs elsewhere; a call is answered with a suspended result.
        state_injected: The tool receives the agent's state (`ToolCallParam.agent_state`).
        mcp_server: The MCP server the tool comes from, if any.
        strict: Ask providers for strict arguments (``None``: the request decides).
        timeout: Seconds a call may take (``None``: the toolkit's default).
        dangerous_files: File names added to the default dangerous files.
        dangerous_directories: Directory names added to the default dangerous directories.
    """

    name: str = ""
    description: str = ""
    input_schema: Mapping[str, JsonValue] | type | None = None
    read_only: bool = False
    concurrency_safe: bool = True
    external_tool: bool = False
    state_injected: bool = False
    mcp_server: str | None = None
    strict: bool | None = None
    timeout: float | None = None
    dangerous_files: tuple[str, ...] = ()
    dangerous_directories: tuple[str, ...] = ()

    _spec: ToolSpec
    _parse: Callable[[str | bytes], object]
    _validate_python: Callable[[object], object]

    def __init__(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, JsonValue] | type | None = None,
        read_only: bool | None = None,
        concurrency_safe: bool | None = None,
        external_tool: bool | None = None,
        state_injected: bool | None = None,
        mcp_server: str | None = None,
        strict: bool | None = None,
        timeout: float | None = None,
        dangerous_files: tuple[str, ...] = (),
        dangerous_directories: tuple[str, ...] = (),
        lenient: bool = False,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        cls = type(self)
        self.name = check_tool_name(name or cls.name or "")
        self.description = (
            description or cls.description or docstring_summary(cls.__doc__) or f"Tool: {self.name}"
        )
        self.read_only = cls.read_only if read_only is None else read_only
        self.concurrency_safe = (
            cls.concurrency_safe if concurrency_safe is None else concurrency_safe
        )
        self.external_tool = cls.external_tool if external_tool is None else external_tool
        self.state_injected = cls.state_injected if state_injected is None else state_injected
        self.mcp_server = cls.mcp_server if mcp_server is None else mcp_server
        if self.mcp_server is not None and not self.mcp_server.strip():
            raise ValueError(f"tool {self.name!r}: mcp_server must not be blank")
        self.strict = cls.strict if strict is None else strict
        self.timeout = cls.timeout if timeout is None else timeout
        self.dangerous_files = merge_paths(
            DEFAULT_DANGEROUS_FILES, (*cls.dangerous_files, *dangerous_files)
        )
        self.dangerous_directories = merge_paths(
            DEFAULT_DANGEROUS_DIRECTORIES, (*cls.dangerous_directories, *dangerous_directories)
        )
        schema = cls.input_schema if input_schema is None else input_schema
        self.input_schema = schema
        parameters = self._compile(schema, lenient=lenient, limits=limits)
        self._spec = ToolSpec(
            name=self.name,
            description=self.description,
            parameters=parameters,
            read_only=self.read_only,
            concurrency_safe=self.concurrency_safe,
            external=self.external_tool,
            state_injected=self.state_injected,
            mcp_server=self.mcp_server,
            strict=self.strict,
            timeout=self.timeout,
        )

    def _compile(
        self, schema: Mapping[str, JsonValue] | type | None, *, lenient: bool, limits: Limits
    ) -> bytes:
        if schema is None:
            schema = {"type": "object", "properties": {}}
        if isinstance(schema, type):
            typed: TypeSchema[object] = type_schema(schema, lenient=lenient, limits=limits)
            self._parse = typed.validate_json
            self._validate_python = typed.validate_python
            return typed.schema_bytes
        if not isinstance(schema, Mapping):
            raise TypeError(
                f"tool {self.name!r}: input_schema must be a JSON Schema dict or a record class, "
                f"got {type(schema).__name__}"
            )
        data = orjson.dumps(dict(schema))
        try:
            validator = _core.JsonSchemaValidator(
                data,
                lenient=lenient,
                max_depth=limits.max_depth,
                max_bytes=limits.max_bytes,
                max_errors=limits.max_errors,
            )
        except ValueError as exc:
            raise SchemaError(f"tool {self.name!r}: invalid input_schema: {exc}") from exc

        def validate_python(value: object) -> object:
            validator.validate(value)
            return value

        self._parse = validator.validate_json
        self._validate_python = validate_python
        return data

    @property
    def spec(self) -> ToolSpec:
        """The tool's resolved name, description, schema and flags."""
        return self._spec

    def parse_arguments(self, arguments: str | bytes) -> InputT:
        """Validate raw JSON arguments into the tool's input.

        Raises:
            ValidationError: Every problem found, with paths.
        """
        return cast("InputT", self._parse(arguments or "{}"))

    def validate_input(self, value: object) -> InputT:
        """Validate already parsed arguments (for example a permission check's updated input).

        Raises:
            ValidationError: Every problem found, with paths.
        """
        return cast("InputT", self._validate_python(value))

    async def call(self, param: ToolCallParam[InputT]) -> ToolReturn:
        """Run the tool. Override it (external tools do not)."""
        cls = type(self).__name__
        if self.external_tool:
            raise RuntimeError(f"{cls} is an external tool and must not be invoked locally")
        raise NotImplementedError(f"{cls} does not implement call")

    async def check_permissions(
        self, tool_input: InputT, context: PermissionContext
    ) -> PermissionDecision:
        """Decide whether this call may run; by default no opinion (`PASSTHROUGH`)."""
        return PermissionDecision.passthrough(self.name)

    def match_rule(self, rule_content: str | None, tool_input: InputT) -> bool:
        """Whether a permission rule's content matches this input; by default only ``None``."""
        return rule_content is None

    def generate_suggestions(self, tool_input: InputT) -> tuple[PermissionRule, ...]:
        """Rules to offer a user who is asked about this call: by default, allow the tool."""
        return (
            PermissionRule(
                tool_name=self.name, behavior=PermissionBehavior.ALLOW, source="suggested"
            ),
        )

    def is_dangerous_path(self, path: str | None) -> bool:
        """Whether ``path`` is a dangerous file, or inside a dangerous directory, of this tool."""
        return is_dangerous_path(path, self.dangerous_files, self.dangerous_directories)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


# --- injection ---------------------------------------------------------------------------------


class _Inject(enum.Enum):
    EMITTER = "emitter"
    CONTEXT = "context"
    AGENT = "agent"
    AGENT_STATE = "agent_state"
    CALL = "call"
    VALUE = "value"


@final
@dataclass(frozen=True, slots=True)
class _Injection:
    name: str
    kind: _Inject
    type: type
    has_default: bool
    optional: bool


_SPECIAL: Final[Mapping[object, _Inject]] = types.MappingProxyType(
    {
        Emitter: _Inject.EMITTER,
        RuntimeContext: _Inject.CONTEXT,
        Agent: _Inject.AGENT,
        ToolUseBlock: _Inject.CALL,
    }
)


def _unwrap(annotation: object) -> tuple[object, tuple[object, ...], bool]:
    """(the bare type, the Annotated metadata, whether None is allowed)."""
    metadata: tuple[object, ...] = ()
    if typing.get_origin(annotation) is Annotated:
        metadata = annotation.__metadata__  # type: ignore[attr-defined]
        annotation = typing.get_args(annotation)[0]
    optional = False
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            annotation, optional = args[0], True
            if typing.get_origin(annotation) is Annotated:
                metadata = (*metadata, *annotation.__metadata__)  # type: ignore[attr-defined]
                annotation = typing.get_args(annotation)[0]
    return annotation, metadata, optional


class _Planner:
    """Decides, parameter by parameter, what the model fills and what the toolkit injects."""

    def __init__(
        self, label: str, inject: tuple[type, ...], explicit_params: bool, state_injected: bool
    ) -> None:
        self.label = label
        self.inject = inject
        self.explicit_params = explicit_params
        self.state_injected = state_injected
        self.plan: dict[str, _Injection] = {}
        self.schema_params: list[str] = []
        self.preset: frozenset[str] = frozenset()

    def __call__(self, name: str, annotation: object) -> bool:
        if name in self.preset:
            return True
        injection = self.classify(name, annotation)
        if injection is None:
            if name not in self.schema_params:
                self.schema_params.append(name)
            return False
        self.plan[name] = injection
        return True

    def classify(self, name: str, annotation: object) -> _Injection | None:
        if annotation is inspect.Parameter.empty:
            return None
        bare, metadata, optional = _unwrap(annotation)
        marked = any(isinstance(item, Param) for item in metadata)
        kind = _SPECIAL.get(bare)
        if isinstance(bare, type) and issubclass(bare, AgentState):
            if marked:
                raise SchemaError(
                    f"{self.label} declares an AgentState parameter {name!r} with a Param marker; "
                    "the agent state is injected by type and never shown to the model"
                )
            if not self.state_injected:
                raise SchemaError(
                    f"{self.label} declares an AgentState parameter {name!r} but state_injected "
                    "is False; set state_injected=True to inject the agent state"
                )
            kind = _Inject.AGENT_STATE
        elif kind is None and (
            any(item is INJECT for item in metadata)
            or (isinstance(bare, type) and issubclass(bare, self.inject))
        ):
            kind = _Inject.VALUE
        elif kind is None and self.explicit_params and not marked:
            if not isinstance(bare, type):
                raise SchemaError(
                    f"{self.label}: parameter {name!r} has no Param marker, so it is injected "
                    f"by type, but {bare!r} is not a class"
                )
            kind = _Inject.VALUE
        if kind is None:
            return None
        if marked and kind is not _Inject.VALUE:
            raise SchemaError(
                f"{self.label}: parameter {name!r} is injected ({kind.value}) and cannot carry a "
                "Param marker"
            )
        return _Injection(name, kind, cast("type", bare), False, optional)

    def finish(self, defaults: Mapping[str, bool]) -> tuple[_Injection, ...]:
        states = [i for i in self.plan.values() if i.kind is _Inject.AGENT_STATE]
        if len(states) > 1:
            raise SchemaError(
                f"{self.label} declares more than one AgentState parameter; only one is allowed"
            )
        if self.state_injected and not states:
            raise SchemaError(
                f"{self.label}: state_injected=True requires a parameter annotated with "
                "AgentState (or a subclass)"
            )
        return tuple(
            _Injection(i.name, i.kind, i.type, defaults.get(i.name, False), i.optional)
            for i in self.plan.values()
        )


def _inject(
    plan: tuple[_Injection, ...],
    label: str,
    call: ToolUseBlock,
    context: RuntimeContext,
    agent: object | None,
    sinks: tuple[ProgressSink, ...],
) -> dict[str, object]:
    values: dict[str, object] = {}
    for injection in plan:
        kind = injection.kind
        value: object
        if kind is _Inject.EMITTER:
            value = Emitter(call, sinks)
        elif kind is _Inject.CONTEXT:
            value = context
        elif kind is _Inject.CALL:
            value = call
        elif kind is _Inject.AGENT:
            value = agent
        elif kind is _Inject.AGENT_STATE:
            value = _agent_state(context, agent)
        else:
            value = context.get(injection.type)
        if value is None:
            if injection.has_default:
                continue
            if not injection.optional:
                raise InjectionError(
                    f"tool {label}: parameter {injection.name!r} needs "
                    f"{'an agent' if kind is _Inject.AGENT else injection.type.__qualname__} "
                    "but the call's context has none"
                )
        values[injection.name] = value
    return values


# --- function tools ----------------------------------------------------------------------------

DocstringStyle: TypeAlias = Literal["auto", "google", "numpy", "sphinx", "plain"]


class DocumentationWarning(UserWarning):
    """A tool's docstring and signature disagree about its parameters."""


class ToolOptions(TypedDict, total=False):
    """The options of `tool` (all optional).

    Attributes:
        name: The tool's name (default: the function's).
        description: Overrides the docstring's description.
        read_only: The tool changes nothing.
        concurrency_safe: Calls may overlap with other calls (default true).
        state_injected: The tool takes the agent's state in a parameter annotated `AgentState`.
        external: The tool runs elsewhere: a call is validated and answered suspended.
        strict: Ask providers for strict arguments.
        timeout: Seconds a call may take before it ends with an error result.
        inline: A sync function cheap enough to run on the caller's thread (by default sync
            functions run in the toolkit's bounded worker-thread pool).
        converter: Turns the return value into a result (or into something the default
            conversion understands).
        dangerous_files: File names added to the default dangerous files.
        dangerous_directories: Directory names added to the default dangerous directories.
        inject: Classes whose parameters are filled from the `RuntimeContext` by type.
        explicit_params: Only parameters with a `Param` marker are shown to the model; all
            others are injected by type.
        lenient: Accept numeric and boolean strings for numbers and booleans.
        limits: Input size, nesting and error-count limits.
        docstring_style: How to read the docstring (detected by default).
    """

    name: str | None
    description: str | None
    read_only: bool
    concurrency_safe: bool
    state_injected: bool
    external: bool
    strict: bool | None
    timeout: float | None
    inline: bool
    converter: ResultConverter | None
    dangerous_files: tuple[str, ...]
    dangerous_directories: tuple[str, ...]
    inject: tuple[type, ...]
    explicit_params: bool
    lenient: bool
    limits: Limits
    docstring_style: DocstringStyle


@final
@dataclass(frozen=True, slots=True)
class _Options:
    """`ToolOptions` with every default filled in."""

    name: str | None = None
    description: str | None = None
    read_only: bool = False
    concurrency_safe: bool = True
    state_injected: bool = False
    external: bool = False
    strict: bool | None = None
    timeout: float | None = None
    inline: bool = False
    converter: ResultConverter | None = None
    dangerous_files: tuple[str, ...] = ()
    dangerous_directories: tuple[str, ...] = ()
    inject: tuple[type, ...] = ()
    explicit_params: bool = False
    lenient: bool = False
    limits: Limits = DEFAULT_LIMITS
    docstring_style: DocstringStyle = "auto"


class _Binding(enum.Enum):
    NONE = "none"
    INSTANCE = "instance"
    CLASS = "class"


def _binding(fn: object) -> _Binding:
    if isinstance(fn, classmethod):
        return _Binding.CLASS
    if isinstance(fn, staticmethod) or not inspect.isfunction(fn):
        return _Binding.NONE
    parts = fn.__qualname__.split(".")
    in_class = len(parts) > 1 and parts[-2] != "<locals>"
    code = fn.__code__
    return _Binding.INSTANCE if in_class and code.co_argcount > 0 else _Binding.NONE


class FunctionTool(ToolBase[dict[str, object]], Generic[P, R]):
    """A tool made from a typed function by `@tool`. Calling it calls the function.

    Used on a method, it is a descriptor: ``obj.method`` is the tool bound to ``obj``, and
    registering ``obj`` registers all its tools.

    Attributes:
        function: The wrapped function (bound, for a method tool read from an instance).
        inline: Sync function run on the caller's thread instead of a worker thread.
        converter: Custom conversion of the return value, if declared.
    """

    function: Callable[P, R]
    inline: bool
    converter: ResultConverter | None

    def __init__(
        self,
        function: Callable[P, R],
        options: _Options,
        *,
        presets: frozenset[str] = frozenset(),
        binding: _Binding = _Binding.NONE,
        compiled: FunctionTool[Any, Any] | None = None,
        owner: object = _UNSET,
    ) -> None:
        raw = function.__func__ if isinstance(function, (staticmethod, classmethod)) else function
        if inspect.isasyncgenfunction(raw) or inspect.isgeneratorfunction(raw):
            raise SchemaError(
                f"tool {getattr(raw, '__qualname__', raw)!r} is a generator; return the result "
                "and stream progress through an injected Emitter instead"
            )
        self.function = cast("Callable[P, R]", raw)
        self.options = options
        self.inline = options.inline
        self.converter = options.converter
        self.binding = binding
        self.presets = presets
        self.owner = owner
        target = inspect.unwrap(cast("Callable[..., object]", raw))
        self.is_async = inspect.iscoroutinefunction(target)
        if compiled is not None:
            self._share(compiled)
        else:
            self._build(options)

    def _share(self, other: FunctionTool[Any, Any]) -> None:
        for attr in (
            "name",
            "description",
            "read_only",
            "concurrency_safe",
            "external_tool",
            "state_injected",
            "mcp_server",
            "strict",
            "timeout",
            "dangerous_files",
            "dangerous_directories",
            "input_schema",
            "_spec",
            "_parse",
            "_validate_python",
            "schema",
            "plan",
            "docstring",
            "_defaults",
        ):
            setattr(self, attr, getattr(other, attr))

    def _build(self, options: _Options) -> None:
        fn = cast("Callable[..., object]", self.function)
        label = getattr(fn, "__qualname__", repr(fn))
        doc = parse_docstring(inspect.getdoc(fn), style=options.docstring_style)
        self.docstring: Docstring = doc
        planner = _Planner(label, options.inject, options.explicit_params, options.state_injected)
        planner.preset = self.presets
        schema = function_schema(
            fn,
            lenient=options.lenient,
            limits=options.limits,
            skip=planner,
            descriptions=doc.param_descriptions,
        )
        defaults = _defaults(fn)
        self._defaults = defaults
        self.plan = planner.finish(defaults)
        self.schema: FunctionSchema[object] = schema
        self._report_documentation(label, doc, planner)
        self.name = check_tool_name(options.name or schema.name)
        self.description = (
            options.description or doc.description or schema.description or f"Tool: {self.name}"
        )
        self.read_only = options.read_only
        self.concurrency_safe = options.concurrency_safe
        self.external_tool = options.external
        self.state_injected = options.state_injected
        self.mcp_server = None
        self.strict = options.strict
        self.timeout = options.timeout
        self.dangerous_files = merge_paths(DEFAULT_DANGEROUS_FILES, options.dangerous_files)
        self.dangerous_directories = merge_paths(
            DEFAULT_DANGEROUS_DIRECTORIES, options.dangerous_directories
        )
        self.input_schema = None
        self._parse = schema.validate_json
        self._validate_python = cast("Callable[[object], object]", schema.validate_python)
        self._spec = ToolSpec(
            name=self.name,
            description=self.description,
            parameters=schema.schema_bytes,
            read_only=self.read_only,
            concurrency_safe=self.concurrency_safe,
            external=self.external_tool,
            state_injected=self.state_injected,
            strict=self.strict,
            timeout=self.timeout,
        )

    def _report_documentation(self, label: str, doc: Docstring, planner: _Planner) -> None:
        if not doc.params:
            return
        injected = set(planner.plan) | set(planner.preset)
        signature = [*planner.schema_params, *injected]
        unknown, undocumented = check_documented(doc, signature)
        undocumented = tuple(name for name in undocumented if name not in injected)
        problems = []
        if unknown:
            problems.append(f"documents {', '.join(unknown)} not in the signature")
        if undocumented:
            problems.append(f"does not document {', '.join(undocumented)}")
        if problems:
            warnings.warn(
                f"the docstring of tool {label} {' and '.join(problems)}",
                DocumentationWarning,
                stacklevel=4,
            )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.function(*args, **kwargs)

    def __get__(self, obj: object, objtype: type | None = None) -> FunctionTool[..., R]:
        if self.binding is _Binding.INSTANCE and obj is not None:
            return self._bound(types.MethodType(self.function, obj), obj)
        if self.binding is _Binding.CLASS:
            owner = objtype if objtype is not None else type(obj)
            return self._bound(types.MethodType(self.function, owner), owner)
        return self

    def _bound(self, function: Callable[..., R], owner: object) -> FunctionTool[Any, R]:
        return FunctionTool(
            function, self.options, presets=self.presets, compiled=self, owner=owner
        )

    @property
    def needs_binding(self) -> bool:
        """Whether this is a method tool read from its class (register the object instead)."""
        return self.binding is not _Binding.NONE and self.owner is _UNSET

    def with_presets(self, names: frozenset[str]) -> FunctionTool[P, R]:
        """The same tool with the given parameters hidden from its schema (supplied as presets).

        Raises:
            ValueError: A name is not a parameter of the function.
        """
        if self.needs_binding:
            raise TypeError(f"tool {self.name!r} is a method: give presets for a bound one")
        unknown = sorted(name for name in names if name not in self._defaults)
        if unknown:
            raise ValueError(f"tool {self.name!r} has no parameter {', '.join(unknown)}")
        return FunctionTool(self.function, self.options, presets=names, owner=self.owner)

    def inject(
        self,
        call: ToolUseBlock,
        context: RuntimeContext,
        agent: object | None,
        sinks: tuple[ProgressSink, ...] = (),
    ) -> dict[str, object]:
        """The injected keyword arguments for one call.

        Raises:
            InjectionError: The context lacks a value the tool needs.
        """
        return _inject(self.plan, self.name, call, context, agent, sinks)

    async def call(self, param: ToolCallParam[dict[str, object]]) -> ToolReturn:
        """Call the function with the validated arguments and the injected values."""
        kwargs = dict(param.input)
        if self.plan:
            kwargs.update(self.inject(param.call, param.context, param.agent))
        result: object = cast("Callable[..., object]", self.function)(**kwargs)
        if self.is_async:
            result = await cast("Awaitable[object]", result)
        return result

    def __repr__(self) -> str:
        return f"<FunctionTool {self.name!r}>"


def _defaults(fn: Callable[..., object]) -> dict[str, bool]:
    """Each parameter's name -> whether it has a default."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {
        name: parameter.default is not inspect.Parameter.empty
        for name, parameter in signature.parameters.items()
    }


@overload
def tool(fn: Callable[P, R], /, **options: Unpack[ToolOptions]) -> FunctionTool[P, R]: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None, /, **options: Unpack[ToolOptions]
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a tool from a typed function or method, bare (``@tool``) or with options.

    The schema and validator are built here, once. The description is the docstring (summary
    and free text); parameter descriptions come from ``Annotated[..., Param(description=...)]``
    or the docstring (Google, NumPy or Sphinx style). A docstring that documents a parameter
    the signature lacks, or leaves one out, gives a `DocumentationWarning`.

    Parameters the model does not fill are injected per call and never shown to it: those
    annotated `Emitter`, `RuntimeContext`, `Agent`, `ToolUseBlock`, `AgentState` (with
    ``state_injected=True``), ``Injected[T]``, a class listed in ``inject``, and with
    ``explicit_params=True`` every parameter without a `Param` marker (the chapter's rule).

    Args:
        fn: The function (when used bare).
        **options: See `ToolOptions`: ``name``, ``description``, ``read_only``,
            ``concurrency_safe``, ``state_injected``, ``external``, ``strict``, ``timeout``,
            ``inline``, ``converter``, ``dangerous_files``, ``dangerous_directories``,
            ``inject``, ``explicit_params``, ``lenient``, ``limits``, ``docstring_style``.

    Returns:
        The tool, or a decorator that makes one.

    Raises:
        SchemaError: A parameter cannot become a schema, or an injection is misdeclared; the
            message names the function and the parameter.
        TypeError: An unknown option.
    """
    resolved = _Options(**options)

    def decorate(function: Callable[P, R]) -> FunctionTool[P, R]:
        if isinstance(function, FunctionTool):
            raise TypeError(f"{function!r} is already a tool")
        return FunctionTool(function, resolved, binding=_binding(function))

    return decorate if fn is None else decorate(fn)


__all__ = [
    "INJECT",
    "AgentTool",
    "DocumentationWarning",
    "FunctionTool",
    "Injected",
    "InjectionError",
    "ResultConverter",
    "SuspendTool",
    "ToolBase",
    "ToolCallParam",
    "ToolOptions",
    "ToolReturn",
    "tool",
]
