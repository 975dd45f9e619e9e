"""The Rust extension: schema derivation and compiled validators."""

from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from typing import Any, Literal, Self, final

from typing_extensions import disjoint_base

from ferrotool._values.calls import ResultSink, ToolResultBlock, ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import ValidationError

__all__ = [
    "DirectCall",
    "DirectRoute",
    "ErrorDetail",
    "IsSet",
    "JsonSchemaValidator",
    "LayeredCall",
    "NextLayer",
    "Onion",
    "PendingCall",
    "ToolCaller",
    "TypedValidator",
    "__version__",
    "derive_schema",
    "invalid_arguments",
    "plan_batch",
    "provider_schema",
    "run_on_the_spot",
]
__version__: str

@final
class ErrorDetail:
    """One problem found in an input."""

    @property
    def code(self) -> str:
        """The stable snake_case code, e.g. ``"wrong_type"`` or ``"missing_property"``."""
    @property
    def path(self) -> tuple[str | int, ...]:
        """Where the value is: object keys and array indices, outermost first."""
    @property
    def pointer(self) -> str:
        """The same location as a JSON Pointer (``""`` for the whole input)."""
    @property
    def expected(self) -> str:
        """What the schema expected, e.g. ``"integer"`` or ``"at least 1"``."""
    @property
    def found(self) -> str:
        """A short rendering of what was found, e.g. ``'string "three"'``."""
    @property
    def message(self) -> str:
        """A one-line message for a model.

        For example ``items/2/qty: expected integer, found string "three" (wrong_type)``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TypedValidator:
    """A validator compiled from the type IR, building typed Python values."""

    def __new__(
        cls,
        ir: bytes,
        objects: Mapping[str, tuple[str, object]],
        *,
        function: Callable[..., object] | None = None,
        lenient: bool = False,
        max_depth: int = 128,
        max_bytes: int = 8388608,
        max_errors: int = 20,
    ) -> TypedValidator: ...
    def validate_json(self, data: str | bytes) -> object:
        """Parse and validate raw JSON in one pass; return the typed value."""
    def validate_python(self, data: object) -> object:
        """Validate an already parsed value; return the typed value."""
    def call_json(self, data: str | bytes) -> object:
        """Validate raw JSON arguments and call the function with them."""
    @property
    def schema_json(self) -> bytes:
        """The JSON Schema (draft 2020-12) of the validated type, serialized."""
    @property
    def lenient(self) -> bool: ...
    @property
    def max_depth(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_errors(self) -> int: ...

@final
class JsonSchemaValidator:
    """A compiled JSON Schema validating JSON-like Python values or raw JSON.

    Drafts 2020-12, 2019-09, 7 and 4, each with its own vocabulary and semantics (the JSON
    Schema Test Suite's required tests of each pass): ``$ref``, ``$dynamicRef`` and
    ``$recursiveRef``, ``unevaluatedProperties``, ``dependencies``, array ``items`` with
    ``additionalItems``, draft 4's ``id`` and boolean ``exclusiveMaximum``, ECMA-262 patterns...
    The document's ``$schema`` selects its draft; ``draft`` is used when it has none. ``format``
    is an annotation unless ``assert_formats`` is true. JSON semantics: ``"5"`` is not an
    integer unless ``lenient`` is true; ``1.0`` is an integer; ``True`` is not a number.
    ``dict`` is an object, ``list`` and ``tuple`` are arrays. Integers of any size are compared
    exactly; raw JSON numbers beyond a float's range are refused (``invalid_value``). Patterns
    match in time linear in the string, except those with lookaround or backreferences, which
    get a budget of backtracking steps (``pattern_too_complex`` past it), one a match and one a
    validation: once spent, every further backtracking match of the validation is refused.

    Args:
        schema: The schema as a dict or bool, or as JSON text (``str`` or ``bytes``).
        draft: The draft of a document without ``$schema``.
        resources: Other schema documents by absolute URI, for ``$ref`` to them.
        lenient: Accept strings that read as the integer, number or boolean wanted.
        assert_formats: Check ``format`` (date-time, date, time, duration, uuid, email,
            idn-email, ipv4, ipv6, hostname, idn-hostname, uri, uri-reference, iri,
            iri-reference, uri-template, json-pointer, relative-json-pointer, regex) instead of
            treating it as an annotation; unknown formats pass.
        max_depth: Deepest nesting accepted (``nesting_too_deep`` beyond).
        max_bytes: Largest raw JSON accepted by the ``*_json`` methods (``input_too_large``).
        max_errors: Errors collected before validation stops.

    Raises:
        ValueError: The schema is invalid (a bad regex, an unresolvable ``$ref``, a ``$schema``
            naming no known draft...); the message gives the JSON Pointer of the offending
            part. Or ``draft`` is not one of the four names.
    """

    def __new__(
        cls,
        schema: object,
        *,
        draft: Literal["draft2020-12", "draft2019-09", "draft7", "draft4"] = "draft2020-12",
        resources: Mapping[str, object] | None = None,
        lenient: bool = False,
        assert_formats: bool = False,
        max_depth: int = 128,
        max_bytes: int = 8388608,
        max_errors: int = 20,
    ) -> JsonSchemaValidator: ...
    def is_valid(self, instance: object) -> bool:
        """Return whether the value is valid, stopping at the first problem."""
    def validate(self, instance: object) -> None:
        """Raise `ValidationError` listing every problem (up to ``max_errors``)."""
    def errors(self, instance: object) -> tuple[ErrorDetail, ...]:
        """Return every problem found (up to ``max_errors``); empty when valid."""
    def validate_json(self, data: str | bytes) -> object:
        """Parse raw JSON, validate it and return the parsed value (coerced when lenient)."""
    def is_valid_json(self, data: str | bytes) -> bool:
        """Return whether raw JSON parses and is valid."""
    @property
    def lenient(self) -> bool: ...
    @property
    def assert_formats(self) -> bool: ...
    @property
    def draft(self) -> Literal["draft2020-12", "draft2019-09", "draft7", "draft4"]:
        """The draft of a document without ``$schema`` (its ``$schema``, when present, wins)."""

def derive_schema(ir: bytes, /) -> bytes:
    """Derive the JSON Schema (draft 2020-12) of a type IR document, as JSON bytes."""

def invalid_arguments(tool: str, details: tuple[ErrorDetail, ...]) -> tuple[str, list[JsonValue]]:
    """The text and error records of a tool result for invalid arguments.

    The text names the tool and gives every error on a line, for the model; each record is
    ``{"code", "pointer", "expected", "found"}``.
    """

def plan_batch(
    calls: tuple[ToolUseBlock, ...],
    kind_of: Callable[[str], tuple[bool, DirectCall | None]],
    parallel: bool,
) -> list[tuple[list[int], list[DirectCall] | None]]:
    """A batch's slots, in order: ``[(indices, direct calls or None), ...]``.

    ``kind_of(name)`` says how a call of ``name`` runs (``(concurrency_safe, the direct call
    that runs it on the spot or None)``), asked once per name. With ``parallel``, consecutive
    concurrency-safe calls share a slot; every other call has one of its own. A slot of two
    or more calls that all run on the spot carries their direct calls; any other ``None``.
    """

def provider_schema(
    schema: bytes, dialect: str, /
) -> tuple[bytes, tuple[tuple[str, str, str, bool], ...], bool]:
    """Transform a JSON Schema (JSON bytes) into a provider's dialect.

    ``dialect`` is ``"openai_strict"``, ``"anthropic_strict"`` or ``"gemini"``. Returns the
    transformed schema (compact JSON bytes), every change made as ``(pointer, keyword, message,
    lossy)`` (``pointer`` locates the schema in the input; ``lossy`` is false for a change that
    makes strict mode unfaithful), and whether the result is faithful (every change lossy only).

    Raises:
        ValueError: ``schema`` is not valid JSON or ``dialect`` is unknown.
    """

def run_on_the_spot(
    calls: tuple[ToolUseBlock, ...],
    slot: list[int],
    direct: list[DirectCall],
    results: list[ToolResultBlock | None],
    start: int,
    *,
    running: object,
    one: bool,
) -> tuple[int, ToolResultBlock | Exception | None]:
    """Run a batch's calls that never yield, in turn, by their direct calls.

    Runs ``calls[slot[k]]`` by ``direct[k]`` from ``k = start``, keeping each final result in
    ``results``, and stops at the first call the caller must see: ``(k, its result or the
    Exception it raised)``, or ``(len(slot), None)``. With ``one``, every call is seen.
    """

@final
class DirectCall:
    """The call pipeline of one plain function tool, specialised and run in Rust.

    ``retry(call, error)`` validates again, without them, arguments whose only errors are
    explicit nulls, and returns the arguments or the error result; ``failed(call, exception)``
    turns an `Exception` the tool raised into its result (a cancellation goes on instead);
    ``convert(call, value)`` turns a return value other than ``str``, ``int`` or ``None`` into
    the result. With ``wraps`` (an output schema that is not an object's), the structured value
    of a ``str``, ``int`` or ``None`` result is ``{"result": <value>}``.
    """

    def __new__(
        cls,
        validator: TypedValidator,
        function: Callable[..., object],
        *,
        awaits: bool,
        retry: Callable[[ToolUseBlock, ValidationError], object],
        failed: Callable[[ToolUseBlock, Exception], ToolResultBlock],
        convert: Callable[[ToolUseBlock, object], ToolResultBlock],
        wraps: bool = False,
    ) -> DirectCall: ...
    def run(self, call: ToolUseBlock) -> ToolResultBlock:
        """Run ``call`` of a sync tool to its result on the calling thread."""
    def __call__(self, call: ToolUseBlock, /) -> PendingCall:
        """The awaitable that runs ``call`` when awaited."""

@disjoint_base
class ToolCaller:
    """The base class of ``Toolkit`` and ``Registry``: ``call_tool`` and ``call_tool_sync``.

    A plain tool's call goes straight to its `PendingCall` (a sync call: to its direct call's
    ``run``); every other call goes to the pipeline bound with ``_bind``.
    """

    def __new__(cls, *_args: object, **_kwargs: object) -> Self: ...
    def _bind(
        self,
        direct: dict[str, DirectCall],
        pipeline: Callable[..., Coroutine[Any, Any, ToolResultBlock]],
        layered: tuple[
            Onion,
            Callable[[ToolUseBlock, RuntimeContext], Awaitable[ToolResultBlock]],
            RuntimeContext,
        ]
        | None = None,
        *,
        direct_sync: dict[str, DirectCall],
        pipeline_sync: Callable[..., ToolResultBlock],
    ) -> None: ...
    def call_tool(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
        on_result: ResultSink | None = None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """Run one tool call and return its result; the model's mistakes become results.

        Unknown tools, bad JSON, invalid arguments, a denied permission, a tool that raises or
        times out: each is an `ERROR` (or `DENIED`) result naming the problem. The call runs in
        the toolkit's default view: every group at its default activation, and the
        `ToolRequestConfig` the context carries, if any; a tool that view hides gives an error
        result saying it is not available.

        If the caller is cancelled while the tool runs, the tool is cancelled and the caller
        sees its cancellation; the call's ``INTERRUPTED`` result goes to ``on_result``.

        Args:
            call: The tool call.
            context: The runtime context (user, session, typed values).
            agent: The calling agent, for tools that ask for it.
            on_progress: Receives this call's progress chunks, besides the toolkit's sinks.
            on_result: Receives the call's one result, also when the caller is cancelled.

        Returns:
            A coroutine to await for the result.

        Raises:
            InjectionError: The tool needs a value the context lacks (a programming mistake).
            TypeError: The call's arguments are not JSON text.
        """
    def call_tool_sync(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
    ) -> ToolResultBlock:
        """`call_tool` for sync code: a sync tool runs on the calling thread.

        A plain sync tool's call runs right here; calls that need an event loop (async tools,
        permission checks, timeouts, middleware) run in a fresh one through `anyio.run`; do
        not call this from inside a running event loop.

        Args:
            call: The tool call.
            context: The runtime context (user, session, typed values).
            agent: The calling agent, for tools that ask for it.
            on_progress: Receives this call's progress chunks, besides the toolkit's sinks.

        Returns:
            The call's result.

        Raises:
            TypeError: ``call`` is no call, or ``context`` no `RuntimeContext`.
        """

@final
class Onion:
    """Middleware composed once, the first outermost, run without a Python frame of its own.

    ``settle(call, value)`` gives the result of a call whose outermost middleware returned a
    value other than a finished ``ToolResultBlock``; ``failed(call, error)`` the result of one
    whose middleware raised an ``Exception`` (or raises it again).
    """

    def __new__(
        cls,
        layers: tuple[
            Callable[[ToolUseBlock, RuntimeContext, NextLayer], Awaitable[ToolResultBlock]], ...
        ],
        *,
        settle: Callable[[ToolUseBlock, object], ToolResultBlock],
        failed: Callable[[ToolUseBlock, Exception], ToolResultBlock],
        result_type: type[ToolResultBlock],
        running: object,
    ) -> Onion: ...
    def run(
        self,
        call: ToolUseBlock,
        context: RuntimeContext,
        rest: Callable[[ToolUseBlock, RuntimeContext], Awaitable[ToolResultBlock]],
    ) -> Awaitable[ToolResultBlock]:
        """The awaitable of ``call`` through the layers active now, then ``rest``."""
    def __len__(self) -> int: ...

@final
class IsSet:
    """``IsSet(namespace, key)()``: whether ``namespace[key]`` holds a value other than ``None``.

    A middleware's ``active`` of this type is read by the onion with one dictionary lookup
    and no call.
    """

    def __new__(cls, namespace: dict[str, object], key: str) -> IsSet: ...
    def __call__(self) -> bool: ...

@final
class NextLayer:
    """A middleware's ``next``: the rest of its call, from the next layer in."""

    def __call__(
        self, call: ToolUseBlock, context: RuntimeContext, /
    ) -> Awaitable[ToolResultBlock]:
        """Go on with ``call`` in ``context``."""

@final
class DirectRoute:
    """A plain tool's call to its direct call, any other to ``bare(call, context)``.

    A call in ``empty`` (the toolkit's empty context) carries no request config, known
    without asking the context.
    """

    def __new__(
        cls,
        direct: dict[str, DirectCall],
        bare: Callable[[ToolUseBlock, RuntimeContext], Awaitable[ToolResultBlock]],
        *,
        empty: RuntimeContext | None = None,
    ) -> DirectRoute: ...
    def __call__(
        self, call: ToolUseBlock, context: RuntimeContext, /
    ) -> Awaitable[ToolResultBlock]:
        """The awaitable that runs ``call``."""
    def run(self, call: ToolUseBlock, context: RuntimeContext) -> Awaitable[ToolResultBlock]:
        """The same as calling the route (a bound method: called through vectorcall)."""

@final
class LayeredCall:
    """One tool call through an `Onion`, in progress: a coroutine in all but type."""

    def __await__(self) -> Generator[object, object, object]: ...
    def __next__(self) -> object: ...
    def send(self, value: object, /) -> object:
        """Resume the call."""
    def throw(self, typ: object, val: object = ..., tb: object = ..., /) -> object:
        """Raise an exception inside the call (cancellation)."""
    def close(self) -> None:
        """Stop the call."""

@final
class PendingCall:
    """One tool call in progress: await it for the ``ToolResultBlock``.

    A coroutine in all but type: ``send``, ``throw`` and ``close`` behave as a coroutine's.
    """

    def __await__(self) -> Generator[object, object, ToolResultBlock]: ...
    def __next__(self) -> object: ...
    def send(self, value: object, /) -> object:
        """Resume the call."""
    def throw(self, typ: object, val: object = ..., tb: object = ..., /) -> object:
        """Raise an exception inside the call (cancellation)."""
    def close(self) -> None:
        """Stop the call."""
