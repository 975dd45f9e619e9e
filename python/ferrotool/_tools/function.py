"""Function tools: `@tool` makes a typed function (or method) a `FunctionTool`."""

from __future__ import annotations

import enum
import functools
import inspect
import types
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, ParamSpec, TypeVar, cast, final, overload

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
from ferrotool._schema.output import return_output
from ferrotool._schema.schema import DEFAULT_LIMITS, FunctionSchema, function_schema
from ferrotool._tools.base import (
    ResultConverter,
    ToolBase,
    ToolCallParam,
    ToolDeclaration,
    ToolReturn,
    declared_spec,
)
from ferrotool._tools.inject import Injection, Planner
from ferrotool._tools.inject import inject as inject_values
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec, check_tool_name
from ferrotool.errors import DocumentationWarning, SchemaError

P = ParamSpec("P")
R = TypeVar("R")
_UNSET: Final[Any] = object()


class ToolOptions(ToolDeclaration, total=False):
    """The options of `tool` (all optional): a `ToolDeclaration`, and these.

    The name defaults to the function's, the description to its docstring's.

    Attributes:
        inline: A sync function cheap enough to run on the caller's thread (by default sync
            functions run in the toolkit's bounded worker-thread pool).
        converter: Turns the return value into a result (or into something the default
            conversion understands).
        inject: Classes whose parameters are filled from the `RuntimeContext` by type.
        explicit_params: Only parameters with a `Param` marker are shown to the model; all
            others are injected by type.
        docstring_style: How to read the docstring (detected by default).
        output_schema: The structured result's schema: derived from the return annotation by
            default (none for ``str``, ``None``, `ToolResultBlock`, content blocks, ``Any`` or
            no annotation; and none when a ``converter`` is given); ``False`` for none, a JSON
            Schema dict or a type to declare it, ``True`` to require the derived one.
    """

    inline: bool
    converter: ResultConverter | None
    inject: tuple[type, ...]
    explicit_params: bool
    docstring_style: DocstringStyle
    output_schema: Mapping[str, JsonValue] | type | bool


_OPTIONS: Final = ToolOptions.__optional_keys__


@final
@dataclass(frozen=True, slots=True, eq=False)
class _Compiled:
    """What `tool` compiled from a function, once: every tool bound from it shares it.

    Attributes:
        spec: The tool's name, description, schema and flags.
        schema: The function's argument schema and validator.
        docstring: The function's docstring, read.
        injections: The parameters filled per call.
        defaults: Each parameter's name -> whether it has a default.
        execution: The tool's own execution settings.
        dangerous_files: The dangerous file names, the defaults included.
        dangerous_directories: The dangerous directory names, the defaults included.
        output_wrapped: The structured value is wrapped in ``{"result": ...}``.
    """

    spec: ToolSpec
    schema: FunctionSchema[object]
    docstring: Docstring
    injections: tuple[Injection, ...]
    defaults: Mapping[str, bool]
    execution: ExecutionConfig | None
    dangerous_files: tuple[str, ...]
    dangerous_directories: tuple[str, ...]
    output_wrapped: bool


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
    registering ``obj`` registers all its tools. A bound tool shares what `tool` compiled (its
    spec, schema and injections: one frozen record); only its function and owner are its own.

    Attributes:
        function: The wrapped function (bound, for a method tool read from an instance).
        options: The options it was made with.
        inline: Sync function run on the caller's thread instead of a worker thread.
        converter: Custom conversion of the return value, if declared.
    """

    function: Callable[P, R]
    execution: ExecutionConfig | None
    dangerous_files: tuple[str, ...]
    dangerous_directories: tuple[str, ...]
    output_wrapped: bool
    _compiled: _Compiled

    def __init__(
        self,
        function: Callable[P, R],
        options: ToolOptions,
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
        execution = options.get("execution")
        if options.get("inline", False) and (
            options.get("timeout") is not None
            or (execution is not None and execution.timeout is not None)
        ):
            raise ValueError(
                f"tool {getattr(raw, '__qualname__', raw)!r}: an inline tool runs on the caller's "
                "thread, where a timeout cannot stop it; drop inline=True or the timeout"
            )
        if options.get("inline", False) and inspect.iscoroutinefunction(
            inspect.unwrap(cast("Callable[..., object]", raw))
        ):
            raise ValueError(
                f"tool {getattr(raw, '__qualname__', raw)!r}: inline=True is for a sync function "
                "(run on the caller's thread); an async tool already runs on the event loop"
            )
        name = options.get("name")
        if name is not None:
            check_tool_name(name)
        self.function = cast("Callable[P, R]", raw)
        self.options = options
        self.inline: Final[bool] = options.get("inline", False)
        self.converter: Final[ResultConverter | None] = options.get("converter")
        self.binding = binding
        self.presets = presets
        self.owner = owner
        target = inspect.unwrap(cast("Callable[..., object]", raw))
        self.is_async: Final[bool] = inspect.iscoroutinefunction(target)
        # A method tool bound to an object shares what was compiled (the record is frozen).
        self._compiled = compiled._compiled if compiled is not None else self._compile_function()
        self.execution = self._compiled.execution
        self.dangerous_files = self._compiled.dangerous_files
        self.dangerous_directories = self._compiled.dangerous_directories
        self.output_wrapped = self._compiled.output_wrapped
        # Function-like: `__name__`, `__doc__`, `__wrapped__` (so `inspect.signature` shows the
        # function's own signature) and the rest are the user's function's.
        functools.update_wrapper(self, cast("Callable[..., object]", raw), updated=())

    def _compile_function(self) -> _Compiled:
        options = self.options
        fn = cast("Callable[..., object]", self.function)
        label = getattr(fn, "__qualname__", repr(fn))
        doc = parse_docstring(inspect.getdoc(fn), style=options.get("docstring_style", "auto"))
        planner = Planner(
            label,
            options.get("inject", ()),
            options.get("explicit_params", False),
            options.get("state_injected", False),
        )
        planner.preset = self.presets
        schema = function_schema(
            fn,
            lenient=options.get("lenient", False),
            limits=options.get("limits", DEFAULT_LIMITS),
            skip=planner,
            descriptions=doc.param_descriptions,
        )
        defaults = _defaults(fn)
        injections = planner.finish(defaults)
        self._report_documentation(label, doc, planner)
        name = check_tool_name(options.get("name") or schema.name)
        description = (
            options.get("description") or doc.description or schema.description or f"Tool: {name}"
        )
        option = options.get("output_schema")
        if option is None and options.get("converter") is not None:
            option = False  # the return annotation does not describe what a converter makes
        output = return_output(fn, option)
        spec = declared_spec(
            type(self),
            cast("Mapping[str, object]", options),
            name=name,
            description=description,
            parameters_json=schema.schema_json,
            output_schema_json=None if output is None else output.schema_json,
        )
        return _Compiled(
            spec=spec,
            schema=schema,
            docstring=doc,
            injections=injections,
            defaults=defaults,
            execution=options.get("execution"),
            dangerous_files=merge_paths(
                DEFAULT_DANGEROUS_FILES, options.get("dangerous_files", ())
            ),
            dangerous_directories=merge_paths(
                DEFAULT_DANGEROUS_DIRECTORIES, options.get("dangerous_directories", ())
            ),
            output_wrapped=output is not None and output.wrapped,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's resolved name, description, schema and flags."""
        return self._compiled.spec

    @property
    def schema(self) -> FunctionSchema[object]:
        """The function's argument schema and validator."""
        return self._compiled.schema

    @property
    def docstring(self) -> Docstring:
        """The function's docstring, read."""
        return self._compiled.docstring

    @property
    def injections(self) -> tuple[Injection, ...]:
        """The parameters filled per call."""
        return self._compiled.injections

    def parse_arguments(self, arguments: str | bytes) -> dict[str, object]:
        """Validate raw JSON arguments into the function's keyword arguments.

        Raises:
            ValidationError: Every problem found, with paths.
        """
        return self._compiled.schema.validate_json(arguments or "{}")

    def validate_input(self, value: object) -> dict[str, object]:
        """Validate already parsed arguments into the function's keyword arguments.

        Raises:
            ValidationError: Every problem found, with paths.
        """
        return self._compiled.schema.validate_python(cast("Mapping[str, object]", value))

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
        unknown = sorted(name for name in names if name not in self._compiled.defaults)
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
        compiled = self._compiled
        return inject_values(compiled.injections, compiled.spec.name, call, context, agent, sinks)

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

    The output schema (`ToolSpec.output_schema_json`, MCP's ``outputSchema``) is derived here
    too, from the return annotation: a record or ``dict[str, T]`` is the schema itself; any
    other type (``int``, lists, unions...) is wrapped as ``{"result": ...}``, and so is each
    call's `ToolResultBlock.structured`. ``str``, ``None``, `ToolResultBlock`, content blocks,
    ``Any`` and a missing annotation give none (see ``output_schema`` in `ToolOptions`).

    Parameters the model does not fill are injected per call and never shown to it: those
    annotated `Emitter`, `RuntimeContext`, `CallingAgent`, `ToolUseBlock`, `AgentState` (with
    ``state_injected=True``), ``Injected[T]``, a class listed in ``inject``, and with
    ``explicit_params=True`` every parameter without a `Param` marker (the chapter's rule).

    Args:
        fn: The function (when used bare).
        **options: See `ToolOptions`: ``name``, ``description``, ``read_only``,
            ``concurrency_safe``, ``idempotent``, ``state_injected``, ``external``, ``strict``,
            ``timeout``, ``execution``,
            ``inline``, ``converter``, ``dangerous_files``, ``dangerous_directories``,
            ``inject``, ``explicit_params``, ``lenient``, ``limits``, ``docstring_style``,
            ``output_schema``.

    Returns:
        The tool, or a decorator that makes one.

    Raises:
        SchemaError: A parameter cannot become a schema, or an injection is misdeclared; the
            message names the function and the parameter.
        TypeError: An unknown option.
    """
    unknown = sorted(options.keys() - _OPTIONS)
    if unknown:
        raise TypeError(f"tool() got unexpected options: {', '.join(unknown)}")

    def decorate(function: Callable[P, R]) -> FunctionTool[P, R]:
        if isinstance(function, FunctionTool):
            raise TypeError(f"{function!r} is already a tool")
        return FunctionTool(function, options, binding=_binding(function))

    return decorate if fn is None else decorate(fn)


__all__ = ["DocumentationWarning", "FunctionTool", "ToolOptions", "tool"]
