"""What a tool is: the `AgentTool` protocol, the `ToolBase` class and `ToolCallParam`.

A tool is compiled once, when it is defined: its argument schema and validator come from the
Rust core, so a call only validates and runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, cast, final, runtime_checkable

import orjson

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
from ferrotool._schema.schema import DEFAULT_LIMITS, Limits, TypeSchema, type_schema
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import AgentState, Emitter, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec, check_tool_name
from ferrotool.errors import SchemaError

InputT = TypeVar("InputT")


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

    name: str = ""
    description: str = ""
    input_schema: Mapping[str, JsonValue] | type | None = None
    read_only: bool = False
    concurrency_safe: bool = True
    external: bool = False
    state_injected: bool = False
    mcp_server: str | None = None
    strict: bool | None = None
    timeout: float | None = None
    execution: ExecutionConfig | None = None
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
        external: bool | None = None,
        state_injected: bool | None = None,
        mcp_server: str | None = None,
        strict: bool | None = None,
        timeout: float | None = None,
        execution: ExecutionConfig | None = None,
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
        self.external = cls.external if external is None else external
        self.state_injected = cls.state_injected if state_injected is None else state_injected
        self.mcp_server = cls.mcp_server if mcp_server is None else mcp_server
        if self.mcp_server is not None and not self.mcp_server.strip():
            raise ValueError(f"tool {self.name!r}: mcp_server must not be blank")
        self.strict = cls.strict if strict is None else strict
        self.timeout = cls.timeout if timeout is None else timeout
        self.execution = cls.execution if execution is None else execution
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
            parameters_json=parameters,
            read_only=self.read_only,
            concurrency_safe=self.concurrency_safe,
            external=self.external,
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
            return typed.schema_json
        if not isinstance(schema, Mapping):
            raise TypeError(
                f"tool {self.name!r}: input_schema must be a JSON Schema dict or a record class, "
                f"got {type(schema).__name__}"
            )
        try:
            data = orjson.dumps(dict(schema))
        except TypeError as exc:  # nested past JSON's depth limit, or not JSON at all
            raise SchemaError(
                f"tool {self.name!r}: input_schema is not a JSON document: {exc}"
            ) from exc
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
        return f"<{type(self).__name__} {self.name!r}>"


__all__ = ["AgentTool", "ResultConverter", "ToolBase", "ToolCallParam", "ToolReturn", "agent_state"]
