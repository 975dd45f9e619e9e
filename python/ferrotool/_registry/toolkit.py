"""The `Toolkit` (registration) and its immutable `Registry` snapshots, and the call pipeline.

One call: look up -> validate the raw JSON arguments (Rust) -> external tools answer suspended
-> the tool's permission check -> inject -> run (awaited, inline or on a worker thread, under a
timeout) -> convert the return value. Every failure the model can cause is a result.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import logging
import types
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast, final

import anyio
import anyio.to_thread
import orjson

from ferrotool import _core
from ferrotool._core import ValidationError
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
)
from ferrotool._requests.config import NO_REQUEST_CONFIG, ToolMergeMode, ToolRequestConfig
from ferrotool._session.state import EMPTY_STATE, SessionKey, SessionStore, ToolContextState
from ferrotool._tools.function import (
    AgentTool,
    FunctionTool,
    InjectionError,
    SuspendTool,
    ToolBase,
    ToolCallParam,
    tool,
)
from ferrotool._values.calls import (
    APPROVAL_KEY,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._values.content import CONTENT_TYPES, ContentBlock, TextBlock
from ferrotool._values.context import EMPTY_CONTEXT, Emitter, ProgressSink, RuntimeContext
from ferrotool._values.groups import BASIC, ToolGroup, ToolGroupScope
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.builtins.reset_tools import RESET_TOOLS, ResetTools
from ferrotool.providers._definitions import ProviderFormat, tool_definition

if TYPE_CHECKING:
    from ferrotool._registry.view import ToolView

_log = logging.getLogger("ferrotool")


_DONE: Final = "Done"
_VISIBLE_CACHE: Final = 1024
_SUCCESS: Final = ToolResultState.SUCCESS
_ERROR: Final = ToolResultState.ERROR
_EMPTY: Final[Mapping[str, JsonValue]] = types.MappingProxyType({})
_tuple_new: Final = tuple.__new__
_SUGGESTION_SCAN: Final = 2000


class RegistrationError(ValueError):
    """A tool cannot be registered (a duplicate or invalid name), or removal is not allowed."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolkitConfig:
    """How a toolkit runs its tools.

    Attributes:
        max_threads: Worker threads for sync tools (a bounded pool shared by the toolkit's
            snapshots).
        default_timeout: Seconds a call may take when its tool declares no timeout; ``None``
            for no limit.
        allow_removal: Whether tools and groups may be removed after registration.
        meta_tool: Register the ``reset_tools`` meta tool while a session-scoped group exists,
            so the model can switch groups on and off in its session.
    """

    max_threads: int = 40
    default_timeout: float | None = None
    allow_removal: bool = True
    meta_tool: bool = False

    def __post_init__(self) -> None:
        if self.max_threads < 1:
            raise ValueError(f"max_threads must be at least 1, got {self.max_threads}")
        if self.default_timeout is not None and not self.default_timeout > 0:
            raise ValueError(f"default_timeout must be positive, got {self.default_timeout}")


class _Run(enum.Enum):
    """How a function tool's call runs, decided at registration."""

    AWAIT = "await"
    INLINE = "inline"
    THREAD = "thread"


@final
@dataclass(frozen=True, slots=True, eq=False)
class _Entry:
    """A registered tool, compiled for calling.

    ``parse`` validates raw JSON into the tool's input. ``plain`` is the function to call
    directly when nothing else is needed: a function tool that is not external, checks no
    permissions, has no presets, injections, converter or timeout. ``plan`` runs a whole call
    of such a tool in Rust (`_core.PlainCall`); ``fast`` is its awaitable form, for the tools
    `call_tool` does not send to a worker thread.
    """

    tool: AgentTool
    spec: ToolSpec
    origin: str
    presets: Mapping[str, object]
    function: FunctionTool[Any, Any] | None
    checks_permissions: bool
    parse: Callable[[str], Any]
    run: _Run
    plain: Callable[..., Any] | None
    groups: frozenset[str] = frozenset()
    awaits: bool = False
    inline: bool = False
    seq: int = 0
    definitions: dict[tuple[str, bool], bytes] = field(default_factory=dict)
    plan: _core.PlainCall | None = None
    fast: Callable[[ToolUseBlock], Coroutine[Any, Any, ToolResultBlock]] | None = None


def _merging_parser(base: ToolBase[Any], presets: Mapping[str, object]) -> Callable[[str], Any]:
    """A parser for a tool with presets, which are hidden from its schema.

    The presets are merged over the model's input, and the whole is validated against the
    tool's own schema.
    """

    def parse(arguments: str) -> object:
        try:
            parsed = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError:
            return base.parse_arguments(arguments)  # raises the positioned JSON error
        if not isinstance(parsed, dict):
            return base.parse_arguments(arguments)
        parsed.update(presets)
        return base.validate_input(parsed)

    return parse


def _origin(item: object) -> str:
    if isinstance(item, FunctionTool):
        fn = item.function
        fn = getattr(fn, "__func__", fn)
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    cls = type(item)
    return f"{cls.__module__}.{cls.__qualname__}"


def _overrides(tool: object, method: str) -> bool:
    base = getattr(ToolBase, method)
    return getattr(type(tool), method, base) is not base


def _hide(schema: bytes, names: Iterable[str]) -> bytes:
    document = orjson.loads(schema)
    if not isinstance(document, dict):
        return schema
    hidden = set(names)
    properties = document.get("properties")
    if isinstance(properties, dict):
        document["properties"] = {k: v for k, v in properties.items() if k not in hidden}
    required = document.get("required")
    if isinstance(required, list):
        document["required"] = [k for k in required if k not in hidden]
    return orjson.dumps(document)


def _compile(
    item: AgentTool, presets: Mapping[str, object] | None, config: ToolkitConfig
) -> _Entry:
    presets = types.MappingProxyType(dict(presets or {}))
    origin = _origin(item)
    function: FunctionTool[Any, Any] | None = None
    if isinstance(item, FunctionTool):
        if item.needs_binding:
            raise RegistrationError(
                f"tool {item.name!r} ({origin}) is a method: register the object that owns it"
            )
        if presets:
            item = item.with_presets(frozenset(presets))
        function = item
    spec = item.spec
    parse: Callable[[str], Any] = item.parse_arguments
    if presets and function is None:
        if not isinstance(item, ToolBase) or isinstance(item.input_schema, type):
            raise RegistrationError(
                f"tool {spec.name!r}: presets need a function tool or a JSON Schema input"
            )
        spec = dataclasses.replace(spec, parameters=_hide(spec.parameters, presets))
        parse = _merging_parser(item, presets)
    run = _Run.AWAIT
    plain: Callable[..., Any] | None = None
    if function is not None:
        parse = function.schema.validate_json
        if not function.is_async:
            run = _Run.INLINE if function.inline else _Run.THREAD
        if not (
            spec.external
            or presets
            or function.plan
            or function.converter is not None
            or (spec.timeout or config.default_timeout) is not None
        ):
            plain = function.function
    checks = isinstance(item, ToolBase) and _overrides(item, "check_permissions")
    entry = _Entry(
        tool=item,
        spec=spec,
        origin=origin,
        presets=presets,
        function=function,
        checks_permissions=checks,
        parse=parse,
        run=run,
        plain=None if checks else plain,
        awaits=run is _Run.AWAIT,
        inline=run is _Run.INLINE,
    )
    if function is not None and entry.plain is not None:
        plan = _plan(entry, function)
        fast = None if run is _Run.THREAD else plan
        entry = dataclasses.replace(
            entry,
            plan=plan,
            fast=cast("Callable[[ToolUseBlock], Coroutine[Any, Any, ToolResultBlock]]", fast),
        )
    return entry


def _plan(entry: _Entry, function: FunctionTool[Any, Any]) -> _core.PlainCall:
    """The whole call of a plain tool, run by the Rust core.

    The common case (valid arguments, or invalid ones; a ``str``, ``int`` or ``None``
    returned) never leaves Rust; the rest comes back here: `_without_nulls`,
    `_outcome_of_raise`, `_convert`.
    """
    return _core.PlainCall(
        function.schema.validator,
        function.function,
        awaits=entry.awaits,
        invalid=functools.partial(_without_nulls, entry),
        failed=_outcome_of_raise,
        convert=functools.partial(_convert, entry),
        result_block=ToolResultBlock,
        text_block=TextBlock,
        success=_SUCCESS,
        error=_ERROR,
        empty=_EMPTY,
        proxy=types.MappingProxyType,
        done=_DONE,
    )


# --- results -----------------------------------------------------------------------------------


def _unknown(block: ToolUseBlock, names: Mapping[str, object]) -> ToolResultBlock:
    candidates: Iterable[str] = names
    if len(names) > _SUGGESTION_SCAN:
        first = block.name[:1]
        candidates = [name for name in names if name[:1] == first][:_SUGGESTION_SCAN]
    close = difflib.get_close_matches(block.name, list(candidates), n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return ToolResultBlock.error(
        f"Tool not found: {block.name}.{hint}", id=block.id, name=block.name
    )


def _invalid(block: ToolUseBlock, error: ValidationError) -> ToolResultBlock:
    """The error result for invalid arguments: every error, for the model and in metadata."""
    text, errors = _core.invalid_arguments(block.name, error.errors)
    return _result(block, text, _ERROR, types.MappingProxyType({"errors": errors}))


def _result(
    block: ToolUseBlock,
    text: str,
    state: ToolResultState,
    metadata: Mapping[str, JsonValue],
    structured: JsonValue = None,
) -> ToolResultBlock:
    """A one-text result for ``block``, built without the factories' checks (hot path)."""
    output = (_tuple_new(TextBlock, (text,)),)
    return _tuple_new(ToolResultBlock, (block.id, block.name, output, state, metadata, structured))


def _failed(block: ToolUseBlock, exc: BaseException) -> ToolResultBlock:
    _log.warning("tool %s (call %s) raised", block.name, block.id, exc_info=exc)
    message = str(exc) or type(exc).__name__
    return ToolResultBlock.error(f"Tool execution failed: {message}", id=block.id, name=block.name)


def _timed_out(block: ToolUseBlock, seconds: float) -> ToolResultBlock:
    return ToolResultBlock.error(
        f"Tool execution timed out after {seconds:g} s", id=block.id, name=block.name
    )


def _ask(block: ToolUseBlock, decision: PermissionDecision) -> ToolResultBlock:
    return ToolResultBlock(
        id=block.id,
        name=block.name,
        output=(TextBlock(f"Approval required: {decision.message}"),),
        state=ToolResultState.RUNNING,
        metadata=types.MappingProxyType({APPROVAL_KEY: True, "permission": decision.to_dict()}),
    )


def _refusal(call: ToolUseBlock, decision: PermissionDecision) -> ToolResultBlock | None:
    """The result for a decision that stops the call (deny, ask); ``None`` to go on."""
    if decision.behavior is PermissionBehavior.DENY:
        return ToolResultBlock.denied(
            call,
            f"Permission denied: {decision.message}",
            metadata={"permission": decision.to_dict()},
        )
    if decision.behavior is PermissionBehavior.ASK:
        return _ask(call, decision)
    return None


def _json_default(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, tuple):
        asdict = getattr(value, "_asdict", None)
        return asdict() if callable(asdict) else list(value)
    raise TypeError


_JSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_SUBCLASS


def _convert(entry: _Entry, block: ToolUseBlock, value: object) -> ToolResultBlock:
    """A tool's return value as its result (see `Toolkit.call_tool`)."""
    if entry.function is not None and entry.function.converter is not None:
        value = entry.function.converter(value)
    kind = type(value)
    if kind is str:
        return _result(block, cast("str", value), _SUCCESS, _EMPTY)
    if kind is int:
        return _result(block, str(value), _SUCCESS, _EMPTY, cast("int", value))
    if kind is bool or kind is float:
        json = orjson.dumps(value).decode()
        return _result(block, json, _SUCCESS, _EMPTY, cast("bool | float", value))
    if kind is ToolResultBlock:
        result = cast("ToolResultBlock", value)
        if result.id == block.id and result.name == block.name:
            return result
        return result.with_call(block.id, block.name)
    if value is None:
        return _result(block, _DONE, _SUCCESS, _EMPTY)
    if isinstance(value, str):
        return _result(block, str(value), _SUCCESS, _EMPTY)
    if isinstance(value, CONTENT_TYPES):
        return ToolResultBlock.success(value, id=block.id, name=block.name)
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(item, CONTENT_TYPES) for item in value)
    ):
        return ToolResultBlock.success(
            cast("tuple[ContentBlock, ...]", tuple(value)), id=block.id, name=block.name
        )
    try:
        data = orjson.dumps(value, default=_json_default, option=_JSON_OPTIONS)
    except TypeError:
        _log.warning("tool %s returned a %s, not JSON: sent as str()", block.name, type(value))
        return _result(block, str(value), _SUCCESS, _EMPTY)
    return _result(block, data.decode(), _SUCCESS, _EMPTY, orjson.loads(data))


def _definitions(
    entries: Iterable[_Entry], format: ProviderFormat, strict: bool
) -> tuple[bytes, ...]:
    """Each entry's provider definition, from its cache (built on first use)."""
    key = (format, strict)
    out = []
    for entry in entries:
        cached = entry.definitions.get(key)
        if cached is None:
            cached = tool_definition(entry.spec, format, strict=strict).definition
            entry.definitions[key] = cached
        out.append(cached)
    return tuple(out)


# --- the pipeline ------------------------------------------------------------------------------


class _Table:
    """What a toolkit holds: the tools, the groups and their members, derived-value caches.

    A `Registry` shares its toolkit's table; the toolkit copies it before the next change (copy
    on write), so a table reachable from a registry never changes.
    """

    __slots__ = (
        "entries",
        "fast",
        "groups",
        "members",
        "next_seq",
        "schema_cache",
        "view_schema_cache",
        "visible_cache",
    )

    def __init__(self) -> None:
        self.entries: dict[str, _Entry] = {}
        # The plans of the tools `call_tool` runs straight from Rust (`_Entry.fast`), by name.
        self.fast: dict[str, _core.PlainCall] = {}
        self.groups: dict[str, ToolGroup] = {}
        self.members: dict[str, list[str]] = {}
        self.next_seq = 0
        self.schema_cache: dict[tuple[str, bool], bytes] = {}
        self.view_schema_cache: dict[tuple[str, bool, frozenset[str], frozenset[str]], bytes] = {}
        self.visible_cache: dict[tuple[frozenset[str], frozenset[str]], tuple[str, ...]] = {}

    def copy(self) -> _Table:
        table = _Table()
        table.entries = dict(self.entries)
        table.fast = dict(self.fast)
        table.groups = dict(self.groups)
        table.members = {group: list(names) for group, names in self.members.items()}
        table.next_seq = self.next_seq
        return table

    def put(self, name: str, entry: _Entry) -> None:
        """Register ``entry`` under ``name`` (replacing any entry of that name)."""
        self.entries[name] = entry
        if entry.fast is not None:
            self.fast[name] = cast("_core.PlainCall", entry.fast)
        else:
            self.fast.pop(name, None)

    def drop(self, name: str) -> _Entry:
        """Remove and return the entry of ``name``.

        Raises:
            KeyError: No entry has that name.
        """
        self.fast.pop(name, None)
        return self.entries.pop(name)

    def visible(
        self, active: frozenset[str], hidden: frozenset[str] = frozenset()
    ) -> tuple[str, ...]:
        """The names of the tools in ``basic`` or any ``active`` group, in registration order.

        Names in ``hidden`` (backend tools a request's own tools replace) are left out. Cached
        per pair of sets.
        """
        key = (active, hidden)
        cached = self.visible_cache.get(key)
        if cached is None:
            names = set(self.members.get(BASIC, ()))
            for group in active:
                names.update(self.members.get(group, ()))
            names -= hidden
            entries = self.entries
            cached = tuple(sorted(names, key=lambda name: entries[name].seq))
            self.remember(self.visible_cache, key, cached)
        return cached

    @staticmethod
    def remember(cache: dict[Any, Any], key: object, value: object) -> None:
        """Store in a bounded cache (emptied when full: request shapes repeat, or do not)."""
        if len(cache) >= _VISIBLE_CACHE:
            cache.clear()
        cache[key] = value

    def active_groups(self, state: ToolContextState) -> frozenset[str]:
        """The groups active in a session with this state."""
        return frozenset(
            name for name, group in self.groups.items() if state.is_active(name, group.active)
        )


class _ToolSet(_core.ToolCaller):
    """The read and call side shared by `Toolkit` and `Registry`."""

    __slots__ = ("_config", "_limiter", "_progress", "_table")

    _table: _Table
    _config: ToolkitConfig
    _limiter: anyio.CapacityLimiter
    _progress: tuple[ProgressSink, ...]

    @property
    def _entries(self) -> dict[str, _Entry]:
        return self._table.entries

    def _use(self, table: _Table) -> None:
        """Hold ``table`` from now on (``call_tool`` reads its plans)."""
        self._table = table
        self._bind_plans(table.fast)

    # - lookup -

    def get_tool(self, name: str, config: ToolRequestConfig | None = None) -> AgentTool | None:
        """The tool registered under ``name``, or ``None``.

        With a request ``config``, the tool the request would resolve ``name`` to: an external
        tool of the config first; in ``EXTERNAL_ONLY`` mode nothing else; else the registry's
        (group activation is a session matter: see `view`).
        """
        if config is not None:
            external = config.tools.get(name)
            if (
                external is not None
                and config.mode is not ToolMergeMode.AGENT_ONLY
                and (config.mode is not ToolMergeMode.MERGE_BACKEND_PRIORITY or name not in self)
            ):
                return external
            if config.mode is ToolMergeMode.EXTERNAL_ONLY:
                return None
        entry = self._table.entries.get(name)
        return None if entry is None else entry.tool

    def get_spec(self, name: str) -> ToolSpec | None:
        """The spec the model sees for ``name`` (presets hidden), or ``None``."""
        entry = self._table.entries.get(name)
        return None if entry is None else entry.spec

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._table.entries)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The specs, in registration order."""
        return tuple(entry.spec for entry in self._table.entries.values())

    def groups(self) -> tuple[ToolGroup, ...]:
        """The tool groups, in the order they were added."""
        return tuple(self._table.groups.values())

    def group_of(self, name: str) -> frozenset[str]:
        """The groups a tool belongs to (``{"basic"}`` for an ungrouped one).

        Raises:
            KeyError: No tool has that name.
        """
        return self._table.entries[name].groups or frozenset({BASIC})

    def __len__(self) -> int:
        return len(self._table.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._table.entries

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._table.entries))

    # - views -

    def view(
        self,
        state: ToolContextState = EMPTY_STATE,
        config: ToolRequestConfig | None = None,
        *,
        store: SessionStore | None = None,
        key: SessionKey | None = None,
    ) -> ToolView:
        """The tools one request may see and call: these tools, a request config, a session.

        Built in time independent of the number of registered tools.

        Args:
            state: The session's tool state (which groups are active).
            config: External tools of the request and how they merge with these.
            store: Where ``reset_tools`` stores the session's new state.
            key: The session ``reset_tools`` changes.
        """
        from ferrotool._registry.view import ToolView

        return ToolView(self, self._table, state, config or NO_REQUEST_CONFIG, store, key)

    async def open_view(
        self,
        context: RuntimeContext,
        store: SessionStore,
        config: ToolRequestConfig | None = None,
    ) -> ToolView:
        """Load the session of ``context`` from ``store`` and build its view.

        The session is the context's user and session ids; the request config defaults to the
        one the context holds, if any.
        """
        key = session_key(context)
        state = await store.load(key)
        return self.view(state, config or context.get(ToolRequestConfig), store=store, key=key)

    # - schemas -

    def definitions(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> tuple[bytes, ...]:
        """Each tool's definition for a provider, as JSON bytes, in registration order.

        Built once per tool, format and strictness, then served from the tool's cache.
        """
        return _definitions(self._table.entries.values(), format, strict)

    def schemas_json(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> bytes:
        """The tool list for a provider request, as JSON bytes (cached)."""
        key = (format, strict)
        cache = self._table.schema_cache
        cached = cache.get(key)
        if cached is None:
            cached = b"[" + b",".join(self.definitions(format, strict=strict)) + b"]"
            cache[key] = cached
        return cached

    def schemas(
        self, format: ProviderFormat = "openai_chat", *, strict: bool = False
    ) -> list[dict[str, JsonValue]]:
        """The tool list for a provider request (``tools=...``), a fresh copy.

        Args:
            format: ``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` or ``mcp``.
            strict: Ask for strict schemas; a tool that cannot be made strict faithfully is
                sent non-strict, with a `StrictSchemaWarning`.
        """
        return cast(
            "list[dict[str, JsonValue]]", orjson.loads(self.schemas_json(format, strict=strict))
        )

    # - calls -

    # `call_tool` is the base class's (`_core.ToolCaller`): a plain tool's call goes from there
    # straight to its Rust `PendingCall`; every other call comes back here.

    def _call_slow(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """`call_tool` for an unknown tool or a tool the Python pipeline runs."""
        entry = self._table.entries.get(call.name)
        if entry is None:
            return _resolved(_unknown(call, self._table.entries))
        return self._call_parsed(entry, call, context, agent, on_progress)

    def _call_entry(
        self,
        entry: _Entry,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> Coroutine[Any, Any, ToolResultBlock]:
        """Validate and run one call of a known tool: in Rust when the tool is plain."""
        fast = entry.fast
        if fast is not None:
            return fast(call)
        return self._call_parsed(entry, call, context, agent, on_progress)

    async def _call_parsed(
        self,
        entry: _Entry,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> ToolResultBlock:
        """Validate and run one call of a known tool in Python."""
        try:
            arguments = entry.parse(call.arguments or "{}")
        except ValidationError as error:
            arguments = _without_nulls(entry, call, error)
            if isinstance(arguments, ToolResultBlock):
                return arguments
        if entry.plain is None:
            return await self._call(entry, call, arguments, context, agent, on_progress)
        return await _run_plain(entry, call, arguments, self._limiter)

    async def _call(
        self,
        entry: _Entry,
        call: ToolUseBlock,
        arguments: Any,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> ToolResultBlock:
        """The general path: external tools, permission checks, presets, injection, timeouts."""
        spec = entry.spec
        if spec.external:
            return ToolResultBlock.suspended(call)
        context = context or EMPTY_CONTEXT
        if entry.checks_permissions:
            base = cast("ToolBase[Any]", entry.tool)
            decision = await base.check_permissions(arguments, PermissionContext(runtime=context))
            refusal = _refusal(call, decision)
            if refusal is not None:
                return refusal
            if decision.updated_input is not None:
                try:
                    arguments = base.validate_input(dict(decision.updated_input))
                except ValidationError as error:
                    return _invalid(call, error)
        sinks = self._progress if on_progress is None else (*self._progress, on_progress)
        timeout = spec.timeout or self._config.default_timeout
        try:
            if timeout is None:
                value = await self._run(entry, call, arguments, context, agent, sinks)
            else:
                with anyio.move_on_after(timeout) as scope:
                    value = await self._run(entry, call, arguments, context, agent, sinks)
                if scope.cancelled_caught:
                    return _timed_out(call, timeout)
        except Exception as exc:
            return _raised(call, exc)
        except BaseException as exc:
            return _cancelled(call, exc)
        try:
            return _convert(entry, call, value)
        except Exception as exc:
            return _failed(call, exc)

    async def _run(
        self,
        entry: _Entry,
        call: ToolUseBlock,
        arguments: Any,
        context: RuntimeContext,
        agent: object | None,
        sinks: tuple[ProgressSink, ...],
    ) -> object:
        function = entry.function
        if function is None:
            param: ToolCallParam[Any] = ToolCallParam(
                arguments, call, context, agent, Emitter(call, sinks)
            )
            return await entry.tool.call(param)
        fn = _prepare(entry, function, call, arguments, context, agent, sinks)
        if entry.run is _Run.AWAIT:
            return await fn()
        if entry.run is _Run.INLINE:
            return fn()
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter, abandon_on_cancel=True)

    def call_tool_sync(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None = None,
        *,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
    ) -> ToolResultBlock:
        """`call_tool` for sync code: a sync tool runs on the calling thread.

        Calls that need an event loop (async tools, permission checks, timeouts) run in a
        fresh one through `anyio.run`; do not call this from inside a running event loop.
        """
        entry = self._table.entries.get(call.name)
        if entry is None:
            return _unknown(call, self._table.entries)
        plan = entry.plan
        if plan is not None and not entry.awaits:
            return cast("ToolResultBlock", plan.run(call))
        function = entry.function
        if (
            function is None
            or entry.run is _Run.AWAIT
            or entry.checks_permissions
            or (entry.spec.timeout or self._config.default_timeout) is not None
        ):
            return anyio.run(
                functools.partial(
                    self.call_tool, call, context, agent=agent, on_progress=on_progress
                )
            )
        try:
            arguments = entry.parse(call.arguments or "{}")
        except ValidationError as error:
            arguments = _without_nulls(entry, call, error)
            if isinstance(arguments, ToolResultBlock):
                return arguments
        if entry.spec.external:
            return ToolResultBlock.suspended(call)
        # A plain sync tool took the Rust plan above: this one has presets or injections.
        sinks = self._progress if on_progress is None else (*self._progress, on_progress)
        context = context or EMPTY_CONTEXT
        try:
            value = _prepare(entry, function, call, arguments, context, agent, sinks)()
        except Exception as exc:
            return _raised(call, exc)
        try:
            return _convert(entry, call, value)
        except Exception as exc:
            return _failed(call, exc)


def _without_nulls(entry: _Entry, call: ToolUseBlock, error: ValidationError) -> Any:
    """Read an explicit ``null`` for an optional property as the property left out.

    Strict provider schemas make every property required and the optional ones nullable, so a
    model sends ``null`` for "not given". Only on the error path: when some errors are a
    ``null`` where the schema wants another type, those object members are removed and the
    arguments validated again; a member that was required is then reported missing.

    Returns:
        The arguments, or the error result (the first error, when removing nulls does not help).
    """
    nulls = [
        detail.path
        for detail in error.errors
        if detail.code == "wrong_type" and detail.found == "null" and detail.path
    ]
    if not nulls or len(nulls) != len(error.errors):
        return _invalid(call, error)
    document = orjson.loads(call.arguments)
    for path in nulls:
        parent: Any = document
        for step in path[:-1]:
            parent = parent[step]
        if not isinstance(parent, dict):
            return _invalid(call, error)
        parent.pop(path[-1], None)
    try:
        return entry.parse(orjson.dumps(document).decode())
    except ValidationError as retry:
        return _invalid(call, retry)


async def _resolved(result: ToolResultBlock) -> ToolResultBlock:
    return result


async def _run_plain(
    entry: _Entry,
    call: ToolUseBlock,
    arguments: dict[str, object],
    limiter: anyio.CapacityLimiter,
) -> ToolResultBlock:
    """Call a plain tool with its validated arguments (awaited, inline or on a worker thread)."""
    plain = cast("Callable[..., Any]", entry.plain)
    try:
        if entry.awaits:
            value = await plain(**arguments)
        elif entry.inline:
            value = plain(**arguments)
        else:
            value = await anyio.to_thread.run_sync(
                functools.partial(plain, **arguments), limiter=limiter, abandon_on_cancel=True
            )
    except Exception as exc:
        return _raised(call, exc)
    except BaseException as exc:
        return _cancelled(call, exc)
    return _convert(entry, call, value)


def _outcome_of_raise(call: ToolUseBlock, exc: BaseException) -> ToolResultBlock:
    """The result for a Rust-run call whose tool raised or was cancelled."""
    if isinstance(exc, Exception):
        return _raised(call, exc)
    return _cancelled(call, exc)


def _prepare(
    entry: _Entry,
    function: FunctionTool[Any, Any],
    call: ToolUseBlock,
    kwargs: dict[str, object],
    context: RuntimeContext,
    agent: object | None,
    sinks: tuple[ProgressSink, ...],
) -> Callable[[], Any]:
    """The function with every keyword argument in place: validated, presets, injected."""
    if entry.presets:
        kwargs.update(entry.presets)
    if function.plan:
        kwargs.update(function.inject(call, context, agent, sinks))
    return functools.partial(function.function, **kwargs)


def _raised(call: ToolUseBlock, exc: Exception) -> ToolResultBlock:
    """The result for a tool that raised (a suspension is not a failure)."""
    if isinstance(exc, SuspendTool):
        return ToolResultBlock.suspended(call, exc.reason)
    if isinstance(exc, InjectionError):
        raise exc
    return _failed(call, exc)


def _cancelled(call: ToolUseBlock, exc: BaseException) -> ToolResultBlock:
    """The result for a call whose caller was cancelled (interpreter exits propagate)."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise exc
    return ToolResultBlock.interrupted(call)


@final
class Registry(_ToolSet):
    """An immutable snapshot of a toolkit: later registrations do not change it.

    It looks tools up, serves their provider schemas, builds request views and runs calls,
    exactly like the toolkit it was taken from (sharing its worker threads and progress sinks).
    """

    __slots__ = ()

    def __init__(self, source: Toolkit) -> None:
        self._use(source._table)
        self._config = source._config
        self._limiter = source._limiter
        self._progress = source._progress

    def __repr__(self) -> str:
        return f"<Registry of {len(self._table.entries)} tools>"


@final
class Toolkit(_ToolSet):
    """Where tools are registered; `snapshot` gives the immutable `Registry` a request uses.

    Args:
        config: Threads, default timeout, removal policy and the meta tool.
        on_progress: Receives the progress chunks of every call.
    """

    __slots__ = ("_shared",)

    def __init__(
        self,
        config: ToolkitConfig | None = None,
        *,
        on_progress: ProgressSink | None = None,
    ) -> None:
        self._config = config or ToolkitConfig()
        self._use(_Table())
        self._shared = False
        self._limiter = anyio.CapacityLimiter(self._config.max_threads)
        self._progress = () if on_progress is None else (on_progress,)

    @property
    def config(self) -> ToolkitConfig:
        """The toolkit's configuration."""
        return self._config

    def snapshot(self) -> Registry:
        """The current tools as an immutable `Registry`, in O(1).

        The toolkit copies its table before the next change instead (copy on write).
        """
        self._shared = True
        return Registry(self)

    def _writable(self) -> _Table:
        if self._shared:
            self._use(self._table.copy())
            self._shared = False
        else:
            self._table.schema_cache = {}
            self._table.view_schema_cache = {}
            self._table.visible_cache = {}
        return self._table

    # - groups -

    def add_group(self, group: ToolGroup) -> ToolGroup:
        """Add a tool group.

        Raises:
            RegistrationError: A group of that name exists.
        """
        if group.name in self._table.groups:
            raise RegistrationError(f"Tool group '{group.name}' already exists")
        table = self._writable()
        table.groups[group.name] = group
        self._refresh_meta(table)
        return group

    def create_group(
        self,
        name: str,
        description: str = "",
        *,
        instructions: str | None = None,
        scope: ToolGroupScope = ToolGroupScope.SESSION,
        active: bool = False,
    ) -> ToolGroup:
        """Create and add a tool group (see `ToolGroup`).

        Raises:
            RegistrationError: A group of that name exists.
            ValueError: The name is invalid or ``basic``.
        """
        return self.add_group(
            ToolGroup(
                name=name,
                description=description,
                instructions=instructions,
                scope=scope,
                active=active,
            )
        )

    def add_to_group(self, group: str, tool_name: str) -> None:
        """Make a registered tool a member of a group too.

        Raises:
            RegistrationError: The group or the tool does not exist.
        """
        self._check_groups((group,))
        entry = self._table.entries.get(tool_name)
        if entry is None:
            raise RegistrationError(f"Tool not found: {tool_name}")
        if group == BASIC or group in entry.groups:
            return
        table = self._writable()
        self._place(table, dataclasses.replace(entry, groups=entry.groups | {group}))

    def remove_group(self, name: str) -> tuple[str, ...]:
        """Remove a group; tools that were only in it are removed too.

        Returns:
            The names of the tools removed.

        Raises:
            RegistrationError: Removal is disabled, or no group has that name.
        """
        self._check_removal(f"tool group {name!r}")
        if name not in self._table.groups:
            raise RegistrationError(f"Tool group '{name}' does not exist")
        table = self._writable()
        del table.groups[name]
        removed = []
        for tool_name in table.members.pop(name, ()):
            entry = table.entries[tool_name]
            rest = entry.groups - {name}
            if rest:
                table.put(tool_name, dataclasses.replace(entry, groups=rest))
            else:
                removed.append(tool_name)
                table.drop(tool_name)
                self._unplace(table, entry)
        self._refresh_meta(table)
        return tuple(removed)

    def _check_groups(self, groups: Iterable[str]) -> None:
        for group in groups:
            if group != BASIC and group not in self._table.groups:
                raise RegistrationError(f"Tool group '{group}' does not exist")

    # - tools -

    def register(
        self,
        item: object,
        /,
        *,
        presets: Mapping[str, object] | None = None,
        group: str | Iterable[str] = (),
    ) -> tuple[AgentTool, ...]:
        """Register a tool, a plain function (made a tool with default options) or an object.

        An object that is neither registers every ``@tool`` method its class declares, bound to
        it (methods inherited from base classes are not scanned).

        Args:
            item: A `ToolBase`, an ``@tool`` function, a typed function, or an object.
            presets: Fixed argument values: hidden from the schema, merged over the model's
                arguments on every call (only for a single tool).
            group: The group or groups the tools join (none: ``basic``, always active). A
                tool in several groups is visible while any of them is active.

        Returns:
            The registered tools.

        Raises:
            RegistrationError: A name is taken (both origins named) or invalid, a group does
                not exist, or an object has no tools. Nothing is registered then.
            SchemaError: A function's parameters cannot become a schema.
        """
        groups = frozenset((group,) if isinstance(group, str) else group) - {BASIC}
        self._check_groups(groups)
        tools = self._tools_of(item)
        if presets and len(tools) != 1:
            raise RegistrationError("presets are given for a single tool, not for an object")
        entries = [_compile(item_tool, presets, self._config) for item_tool in tools]
        seen: dict[str, str] = {}
        for entry in entries:
            name = entry.spec.name
            taken = self._table.entries.get(name)
            if taken is not None or name in seen:
                first = taken.origin if taken is not None else seen[name]
                raise RegistrationError(
                    f"a tool named {name!r} is already registered (from {first}); "
                    f"cannot register another from {entry.origin}"
                )
            seen[name] = entry.origin
        table = self._writable()
        for entry in entries:
            self._place(table, dataclasses.replace(entry, groups=groups, seq=table.next_seq))
            table.next_seq += 1
        return tuple(entry.tool for entry in entries)

    @staticmethod
    def _place(table: _Table, entry: _Entry) -> None:
        """Put an entry in the table and in the member lists of its groups."""
        name = entry.spec.name
        old = table.entries.get(name)
        if old is not None:
            Toolkit._unplace(table, old)
        table.put(name, entry)
        for group in entry.groups or (BASIC,):
            table.members.setdefault(group, []).append(name)

    @staticmethod
    def _unplace(table: _Table, entry: _Entry) -> None:
        name = entry.spec.name
        for group in entry.groups or (BASIC,):
            members = table.members.get(group)
            if members is not None and name in members:
                members.remove(name)

    def _tools_of(self, item: object) -> list[AgentTool]:
        if isinstance(item, (FunctionTool, ToolBase)):
            return [cast("AgentTool", item)]
        if isinstance(item, AgentTool) and not isinstance(item, type):
            return [item]
        if isinstance(item, types.FunctionType | types.MethodType | functools.partial):
            return [cast("AgentTool", tool(cast("Callable[..., object]", item)))]
        tools: list[AgentTool] = []
        for attr, value in vars(type(item)).items():
            if isinstance(value, FunctionTool):
                tools.append(cast("AgentTool", getattr(item, attr)))
        if not tools:
            raise RegistrationError(
                f"{type(item).__qualname__} object has no @tool methods to register"
            )
        return tools

    def set_presets(self, name: str, presets: Mapping[str, object] | None) -> None:
        """Replace a tool's presets (``None`` clears them); the schema follows.

        Raises:
            RegistrationError: No tool has that name.
        """
        entry = self._table.entries.get(name)
        if entry is None:
            raise RegistrationError(f"Tool not found: {name}")
        item = entry.tool
        if isinstance(item, FunctionTool) and entry.presets:
            item = FunctionTool(item.function, item.options, owner=item.owner)
        replacement = _compile(item, presets, self._config)
        table = self._writable()
        self._place(table, dataclasses.replace(replacement, groups=entry.groups, seq=entry.seq))

    def remove(self, name: str) -> AgentTool:
        """Remove a tool and return it.

        Raises:
            RegistrationError: Removal is disabled (``allow_removal=False``) or no tool has
                that name.
        """
        self._check_removal(f"tool {name!r}")
        if name not in self._table.entries or (name == RESET_TOOLS and self._is_meta(name)):
            raise RegistrationError(f"Tool not found: {name}")
        table = self._writable()
        entry = table.drop(name)
        self._unplace(table, entry)
        return entry.tool

    def _check_removal(self, what: str) -> None:
        if not self._config.allow_removal:
            raise RegistrationError(f"cannot remove {what}: removal is disabled for this toolkit")

    # - the meta tool -

    def _is_meta(self, name: str) -> bool:
        entry = self._table.entries.get(name)
        return entry is not None and isinstance(entry.tool, ResetTools)

    def _refresh_meta(self, table: _Table) -> None:
        """Keep ``reset_tools`` in step with the groups.

        It is registered while the meta tool is on and some session-scoped group exists; its
        schema has one boolean per such group.
        """
        if not self._config.meta_tool:
            return
        old = table.entries.get(RESET_TOOLS)
        if old is not None and not isinstance(old.tool, ResetTools):
            raise RegistrationError(
                f"a tool named {RESET_TOOLS!r} is already registered (from {old.origin}); "
                "it is the meta tool's name"
            )
        groups = tuple(table.groups.values())
        if not any(group.scope is ToolGroupScope.SESSION for group in groups):
            if old is not None:
                table.drop(RESET_TOOLS)
                self._unplace(table, old)
            return
        entry = _compile(ResetTools(groups), None, self._config)
        seq = old.seq if old is not None else table.next_seq
        if old is None:
            table.next_seq += 1
        self._place(table, dataclasses.replace(entry, seq=seq))

    def __repr__(self) -> str:
        return f"<Toolkit of {len(self._table.entries)} tools>"


def session_key(context: RuntimeContext) -> SessionKey:
    """The session a context belongs to.

    Raises:
        ValueError: The context has no session id.
    """
    if not context.session_id:
        raise ValueError("the runtime context has no session_id: a session needs one")
    return SessionKey(context.user_id or "", context.session_id)


__all__ = [
    "ProviderFormat",
    "RegistrationError",
    "Registry",
    "Toolkit",
    "ToolkitConfig",
    "session_key",
]
