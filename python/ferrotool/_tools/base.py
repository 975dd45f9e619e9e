"""What a tool is: the `AgentTool` protocol, the `ToolBase` class and `ToolCallParam`.

A tool is compiled once, when it is defined: its argument schema and validator come from the
Rust core, so a call only validates and runs.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Final,
    Generic,
    Never,
    Protocol,
    TypeAlias,
    TypedDict,
    TypeVar,
    cast,
    final,
    overload,
    runtime_checkable,
)

from typing_extensions import Unpack

from ferrotool import _core
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionRule,
)
from ferrotool._permissions.paths import (
    DEFAULT_DANGEROUS_DIRECTORIES,
    DEFAULT_DANGEROUS_FILES,
    is_dangerous_path,
    merge_paths,
)
from ferrotool._permissions.state import PermissionContext
from ferrotool._schema.introspect import docstring_summary
from ferrotool._schema.output import declared_output
from ferrotool._schema.schema import DEFAULT_LIMITS, Limits, TypeSchema, type_schema
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import AgentState, Emitter, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.json import JsonValue, dumps_kept
from ferrotool._values.spec import ToolSpec, check_tool_name
from ferrotool.errors import SchemaError

InputT = TypeVar("InputT")
T = TypeVar("T")


ToolReturn: TypeAlias = object
"""What a tool may return: a `ToolResultBlock`, ``str``, ``None``, content blocks, or any
JSON-serializable value (records, dicts, lists, numbers)."""

ResultConverter: TypeAlias = Callable[[Any], object]
"""Turns a tool's return value into what the default conversion understands (for example a
`ToolResultBlock`)."""


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
        return agent_state(self.context, self.agent)


def agent_state(context: RuntimeContext, agent: object | None) -> AgentState | None:
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


class ToolDeclaration(TypedDict, total=False):
    """What a tool declares besides its arguments: the keywords of `ToolBase` and of `tool`.

    The flags among them are `ToolSpec`'s fields, which a `ToolBase` subclass may also declare
    as class attributes; a keyword given as ``None`` (or left out) keeps the declaration.

    Attributes:
        name: The tool's name (``^[A-Za-z0-9_-]{1,64}$``).
        description: What it does, shown to the model.
        read_only: The tool changes nothing.
        concurrency_safe: Calls may overlap with other calls (default true).
        idempotent: A call may run again after a crash interrupted it (default true); see
            `ToolSpec.idempotent`.
        external: The tool runs elsewhere: a call is validated and answered suspended.
        state_injected: The tool receives the agent's state (`ToolCallParam.agent_state`; a
            function tool in a parameter annotated `AgentState`).
        strict: Ask providers for strict arguments (``None``: the request decides).
        timeout: Seconds a call may take before it ends with an error result.
        execution: Retries and other execution settings of the tool's own, which win over the
            call's and the toolkit's (see `ExecutionConfig`; its timeout, if any, is the
            tool's timeout).
        dangerous_files: File names added to the default dangerous files.
        dangerous_directories: Directory names added to the default dangerous directories.
        lenient: Accept numeric and boolean strings for numbers and booleans.
        limits: Input size, nesting and error-count limits.
    """

    name: str | None
    description: str | None
    read_only: bool
    concurrency_safe: bool
    idempotent: bool
    external: bool
    state_injected: bool
    strict: bool | None
    timeout: float | None
    execution: ExecutionConfig | None
    dangerous_files: tuple[str, ...]
    dangerous_directories: tuple[str, ...]
    lenient: bool
    limits: Limits


_UNDECLARED: Final[Any] = object()


@final
class SpecField(Generic[T]):
    """A `ToolSpec` field on a tool: read on a tool, its spec's value; on a class, its declaration.

    `ToolBase` holds one per field. A subclass's class attribute of that name (``read_only =
    True``) becomes a `SpecField` declaring that value; a tool is built with the declarations
    its constructor does not override, and its attributes read the spec it was built with.
    """

    __slots__ = ("declared", "field", "read")

    declared: T
    """The class's value of the field (`ToolSpec`'s default when the class declares none)."""
    field: str
    """The field's name (set with the attribute's name)."""
    read: Callable[[ToolSpec], T]
    """Reads the field of a spec (set with the field's name)."""

    def __init__(self, declared: T = _UNDECLARED) -> None:
        self.declared = declared
        self.field = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = name
        self.read = operator.attrgetter(name)
        if self.declared is _UNDECLARED:  # ToolSpec's own default ("" for a name or description)
            default = ToolSpec.__dataclass_fields__[name].default
            self.declared = cast("T", "" if default is dataclasses.MISSING else default)

    @overload
    def __get__(self, tool: None, owner: type) -> T: ...
    @overload
    def __get__(self, tool: ToolBase[Any], owner: type | None = None) -> T: ...
    def __get__(self, tool: ToolBase[Any] | None, owner: type | None = None) -> T:
        if tool is None:
            return self.declared
        return self.read(tool.spec)

    def __set__(self, tool: ToolBase[Any], value: Never) -> None:
        raise AttributeError(
            f"{type(tool).__name__}.{self.field} is read from the tool's spec: declare it on "
            "the class or give it to the constructor"
        )


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

    The schema is compiled when the tool is created. `spec` is the one record of the tool's
    name, description, schema and flags: the flag attributes (``name``, ``read_only``...) read
    it, and the class attributes of those names are declarations (see `SpecField`).

    Attributes:
        name: The tool's name.
        description: What it does (defaults to the class docstring's summary).
        input_schema: A JSON Schema (draft 2020-12) of the arguments, or a typed record class
            (dataclass, TypedDict, NamedTuple, pydantic model) whose schema is derived and whose
            instances `call` receives.
        output_schema: The JSON Schema of the structured result, or a type whose schema is
            derived (``None``: no structured result). A schema that is not an object's is
            wrapped, and so is the structured value: ``{"result": <value>}``.
        output_wrapped: The structured value is wrapped in ``{"result": ...}``.
        read_only: The tool changes nothing.
        concurrency_safe: Calls may overlap with other calls (default true).
        idempotent: A call may run again after a crash interrupted it (default true); see
            `ToolSpec.idempotent`.
        external: The tool runs elsewhere; a call is answered with a suspended result.
        state_injected: The tool receives the agent's state (`ToolCallParam.agent_state`).
        mcp_server: The MCP server the tool comes from, if any.
        strict: Ask providers for strict arguments (``None``: the request decides).
        timeout: Seconds a call may take (``None``: the toolkit's default).
        execution: Retries and other execution settings of the tool's own, which win over the
            call's and the toolkit's (see `ExecutionConfig`).
        dangerous_files: File names added to the default dangerous files.
        dangerous_directories: Directory names added to the default dangerous directories.
    """

    if TYPE_CHECKING:  # read through the class's `SpecField` descriptors, never set on a tool
        name: ClassVar[str]
        description: ClassVar[str]
        read_only: ClassVar[bool]
        concurrency_safe: ClassVar[bool]
        idempotent: ClassVar[bool]
        external: ClassVar[bool]
        state_injected: ClassVar[bool]
        mcp_server: ClassVar[str | None]
        strict: ClassVar[bool | None]
        timeout: ClassVar[float | None]
    else:
        name = SpecField[str]()
        description = SpecField[str]()
        read_only = SpecField[bool]()
        concurrency_safe = SpecField[bool]()
        idempotent = SpecField[bool]()
        external = SpecField[bool]()
        state_injected = SpecField[bool]()
        mcp_server = SpecField[str | None]()
        strict = SpecField[bool | None]()
        timeout = SpecField[float | None]()

    input_schema: Mapping[str, JsonValue] | type | None = None
    output_schema: Mapping[str, JsonValue] | type | None = None
    output_wrapped: bool = False
    execution: ExecutionConfig | None = None
    dangerous_files: tuple[str, ...] = ()
    dangerous_directories: tuple[str, ...] = ()

    _spec: ToolSpec
    _parse: Callable[[str | bytes], object]
    _validate_python: Callable[[object], object]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Make the subclass's plain class attributes named as spec fields declarations."""
        super().__init_subclass__(**kwargs)
        for field in _SPEC_FIELDS:
            value = cls.__dict__.get(field, _UNDECLARED)
            if value is not _UNDECLARED and not hasattr(type(value), "__get__"):
                declared = SpecField(value)
                declared.__set_name__(cls, field)
                setattr(cls, field, declared)

    def __init__(
        self,
        *,
        input_schema: Mapping[str, JsonValue] | type | None = None,
        output_schema: Mapping[str, JsonValue] | type | None = None,
        mcp_server: str | None = None,
        **declared: Unpack[ToolDeclaration],
    ) -> None:
        cls = type(self)
        name = check_tool_name(declared.get("name") or cls.name)
        self.output_schema = cls.output_schema if output_schema is None else output_schema
        output = declared_output(self.output_schema, f"tool {name!r}")
        self.output_wrapped = output is not None and output.wrapped
        execution = declared.get("execution")
        self.execution = cls.execution if execution is None else execution
        self.dangerous_files = merge_paths(
            DEFAULT_DANGEROUS_FILES, (*cls.dangerous_files, *declared.get("dangerous_files", ()))
        )
        self.dangerous_directories = merge_paths(
            DEFAULT_DANGEROUS_DIRECTORIES,
            (*cls.dangerous_directories, *declared.get("dangerous_directories", ())),
        )
        schema = cls.input_schema if input_schema is None else input_schema
        self.input_schema = schema
        lenient, limits = declared.get("lenient", False), declared.get("limits", DEFAULT_LIMITS)
        self._spec = declared_spec(
            cls,
            {**declared, "mcp_server": mcp_server},
            name=name,
            description=(
                declared.get("description")
                or cls.description
                or docstring_summary(cls.__doc__)
                or f"Tool: {name}"
            ),
            parameters_json=self._compile(schema, name, lenient=lenient, limits=limits),
            output_schema_json=None if output is None else output.schema_json,
        )

    def _compile(
        self,
        schema: Mapping[str, JsonValue] | type | None,
        name: str,
        *,
        lenient: bool,
        limits: Limits,
    ) -> bytes:
        if schema is None:
            schema = {"type": "object", "properties": {}}
        if isinstance(schema, type):
            typed: TypeSchema[object] = type_schema(schema, lenient=lenient, limits=limits)
            self._parse = typed.validate_json
            self._validate_python = typed.validate_python
            return typed.schema_json
        if not isinstance(schema, Mapping):
            raise TypeError(
                f"tool {name!r}: input_schema must be a JSON Schema dict or a record class, "
                f"got {type(schema).__name__}"
            )
        try:
            data = dumps_kept(dict(schema))
        except TypeError as exc:  # nested past JSON's depth limit, or not JSON at all
            raise SchemaError(f"tool {name!r}: input_schema is not a JSON document: {exc}") from exc
        try:
            validator = _core.JsonSchemaValidator(
                data,
                lenient=lenient,
                max_depth=limits.max_depth,
                max_bytes=limits.max_bytes,
                max_errors=limits.max_errors,
            )
        except ValueError as exc:
            raise SchemaError(f"tool {name!r}: invalid input_schema: {exc}") from exc

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
        if self.external:
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
        spec: ToolSpec | None = getattr(self, "_spec", None)  # None while it is being built
        return f"<{type(self).__name__} {'?' if spec is None else spec.name!r}>"


_SPEC_FIELDS: Final = tuple(
    field for field, value in vars(ToolBase).items() if isinstance(value, SpecField)
)
"""The spec's fields a tool shows as attributes (all but its schemas)."""

_FLAGS: Final = tuple(field for field in _SPEC_FIELDS if field not in ("name", "description"))


def declared_spec(
    cls: type[ToolBase[Any]],
    given: Mapping[str, object],
    *,
    name: str,
    description: str,
    parameters_json: bytes,
    output_schema_json: bytes | None = None,
) -> ToolSpec:
    """The spec of a tool of ``cls``, with the flags ``given``.

    A flag ``given`` as ``None``, or not given, is as ``cls`` declares it (`SpecField`).

    Raises:
        ValueError: The name or a flag is invalid (see `ToolSpec`).
    """
    flags: dict[str, Any] = {}
    for field in _FLAGS:
        value = given.get(field)
        flags[field] = getattr(cls, field) if value is None else value
    return ToolSpec(
        name=name,
        description=description,
        parameters_json=parameters_json,
        output_schema_json=output_schema_json,
        **flags,
    )


__all__ = [
    "AgentTool",
    "ResultConverter",
    "SpecField",
    "ToolBase",
    "ToolCallParam",
    "ToolDeclaration",
    "ToolReturn",
    "agent_state",
    "declared_spec",
]
