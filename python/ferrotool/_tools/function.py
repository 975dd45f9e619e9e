"""Function tools: `@tool` makes a typed function (or method) a `FunctionTool`."""

from __future__ import annotations

import enum
import functools
import inspect
import types
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, ParamSpec, TypedDict, TypeVar, cast, final, overload

from typing_extensions import Unpack

from ferrotool._permissions.paths import (
    DEFAULT_DANGEROUS_DIRECTORIES,
    DEFAULT_DANGEROUS_FILES,
    merge_paths,
)
from ferrotool._schema.docstrings import (
    Docstring,
    DocstringStyle,
    check_documented,
    parse_docstring,
)
from ferrotool._schema.schema import DEFAULT_LIMITS, FunctionSchema, Limits, function_schema
from ferrotool._tools.base import ResultConverter, ToolBase, ToolCallParam, ToolReturn
from ferrotool._tools.inject import Injection, Planner
from ferrotool._tools.inject import inject as inject_values
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.spec import ToolSpec, check_tool_name
from ferrotool.errors import DocumentationWarning, SchemaError

P = ParamSpec("P")
R = TypeVar("R")
_UNSET: Final[Any] = object()


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
        execution: Retries and other execution settings of the tool's own (see
            `ExecutionConfig`; its timeout, if any, is the tool's timeout).
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
    execution: ExecutionConfig | None
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
    execution: ExecutionConfig | None = None
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
        if options.inline and (
            options.timeout is not None
            or (options.execution is not None and options.execution.timeout is not None)
        ):
            raise ValueError(
                f"tool {getattr(raw, '__qualname__', raw)!r}: an inline tool runs on the caller's "
                "thread, where a timeout cannot stop it; drop inline=True or the timeout"
            )
        if options.name is not None:
            check_tool_name(options.name)
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
            # A method tool bound to an object: everything compiled is shared, only the
            # function, its binding and its owner are this tool's own.
            own = {"function", "binding", "owner", "presets", "options", "inline", "converter"}
            self.__dict__.update(
                {key: value for key, value in compiled.__dict__.items() if key not in own}
            )
        else:
            self._build(options)
        # Function-like: `__name__`, `__doc__`, `__wrapped__` (so `inspect.signature` shows the
        # function's own signature) and the rest are the user's function's.
        functools.update_wrapper(self, cast("Callable[..., object]", raw), updated=())

    def _build(self, options: _Options) -> None:
        fn = cast("Callable[..., object]", self.function)
        label = getattr(fn, "__qualname__", repr(fn))
        doc = parse_docstring(inspect.getdoc(fn), style=options.docstring_style)
        self.docstring: Docstring = doc
        planner = Planner(label, options.inject, options.explicit_params, options.state_injected)
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
        self.injections: tuple[Injection, ...] = planner.finish(defaults)
        self.schema: FunctionSchema[object] = schema
        self._report_documentation(label, doc, planner)
        self.name = check_tool_name(options.name or schema.name)
        self.description = (
            options.description or doc.description or schema.description or f"Tool: {self.name}"
        )
        self.read_only = options.read_only
        self.concurrency_safe = options.concurrency_safe
        self.external = options.external
        self.state_injected = options.state_injected
        self.mcp_server = None
        self.strict = options.strict
        self.timeout = options.timeout
        self.execution = options.execution
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
            parameters_json=schema.schema_json,
            read_only=self.read_only,
            concurrency_safe=self.concurrency_safe,
            external=self.external,
            state_injected=self.state_injected,
            strict=self.strict,
            timeout=self.timeout,
        )

    def _report_documentation(self, label: str, doc: Docstring, planner: Planner) -> None:
        if not doc.params:
            return
        injected = set(planner.injections) | set(planner.preset)
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
        return inject_values(self.injections, self.name, call, context, agent, sinks)

    async def call(self, param: ToolCallParam[dict[str, object]]) -> ToolReturn:
        """Call the function with the validated arguments and the injected values."""
        kwargs = dict(param.input)
        if self.injections:
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
            ``execution``,
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


__all__ = ["DocumentationWarning", "FunctionTool", "ToolOptions", "tool"]
