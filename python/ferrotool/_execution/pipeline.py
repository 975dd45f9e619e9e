"""The call pipeline: how one tool call becomes one result.

A call is one named sequence of steps::

    resolve -> parse -> gate -> prepare -> invoke -> convert -> finish

- **resolve** the name to a compiled tool, or to an unknown / not-available result (the table
  and the views of `ferrotool._registry` do this);
- **parse** the raw JSON arguments into the tool's input (Rust, one pass); invalid arguments
  give an error result listing every problem, and an explicit ``null`` for an optional
  property counts as the property left out;
- **gate**: the permission decision (deny gives a ``DENIED`` result, ask a result waiting for
  approval), then external tools end suspended, for the caller to run; when a permission step
  decided the call (`decides`), its result carries the `PermissionState` (asking, allowed,
  denied) under `PERMISSION_STATE_KEY`;
- **prepare** the invocation: presets merged over the input, injected values added;
- **invoke** the tool (awaited, inline, or on a worker thread, whose slot is held until the
  thread returns: `Runner.in_thread`) under its timeout;
- **convert** its return value (or what it raised) into a result;
- **finish**: the result goes to the call's result sink, if any, also when the caller was
  cancelled (then the result is ``INTERRUPTED`` and the cancellation goes on).

Every step is contained: whatever a step raises (a parser, a tool's ``check_permissions``,
``match_rule`` or ``generate_suggestions``, the preparation, the tool, the conversion) ends the
call with its error result, naming the step (`outcomes.step_failed`), and never leaves the
call. Only a programmer's mistake goes on: arguments that are not JSON text, a context lacking
a value a tool asks for (`InjectionError`); and a `BaseException` that is no `Exception`.

`run_call` runs the steps for an async caller and `run_call_sync` for a sync one; both share
every step. The Rust direct call (`_core.DirectCall`, `CompiledTool.direct`) is the same
sequence specialised for a tool that needs no step besides parse, invoke and convert: it runs
the whole call without a Python frame, and hands its uncommon cases back to this module
(`retry_without_nulls`, `outcomes.raised`, `outcomes.convert`).
`tests/property/test_call_paths.py` checks that every path gives the same results.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, NamedTuple, cast

import anyio
import orjson

from ferrotool import _core
from ferrotool._execution import nulls, outcomes
from ferrotool._execution.compiled import CompiledTool, Invoke
from ferrotool._execution.middleware import not_text
from ferrotool._execution.runner import Runner, ToolkitConfig
from ferrotool._permissions import engine
from ferrotool._permissions.engine import decide_known
from ferrotool._permissions.state import (
    EMPTY_PERMISSIONS,
    PermissionContext,
    PermissionContextState,
)
from ferrotool._tools.base import AgentTool, ToolBase, ToolCallParam
from ferrotool._tools.function import FunctionTool
from ferrotool._values.calls import PermissionState, ResultSink, ToolResultBlock, ToolUseBlock
from ferrotool._values.context import EMPTY_CONTEXT, Emitter, ProgressSink, RuntimeContext
from ferrotool._values.execution import DEFAULTS, UNSET, ExecutionConfig
from ferrotool._values.json import dumps_kept
from ferrotool.errors import InjectionError, RegistrationError, SuspendTool, ValidationError

_EMPTY_ARGUMENTS: Final = "{}"


class CallScope(NamedTuple):
    """Everything the steps of one call need besides the tool.

    Built once where the call enters (`ToolView.scope`) and passed down whole. A named tuple
    rather than a frozen dataclass: it is built for every call that is not a direct one, and a
    tuple is built in C (a frozen dataclass sets each field through ``object.__setattr__``,
    several times the cost).

    Attributes:
        call: The call as the model sent it.
        context: The call's runtime context.
        agent: The calling agent, for tools that ask for it.
        runner: Worker threads and progress sinks.
        sinks: The progress sinks of this call (the toolkit's and the call's own).
        execution: How the call runs (timeout, attempts); ``None``: the tool's settings.
        permissions: The session's permission state the gate decides with.
        approved: A person approved this call: the gate does not ask again.
    """

    call: ToolUseBlock
    context: RuntimeContext = EMPTY_CONTEXT
    agent: object | None = None
    runner: Runner | None = None
    sinks: tuple[ProgressSink, ...] = ()
    execution: ExecutionConfig | None = None
    permissions: PermissionContextState = EMPTY_PERMISSIONS
    approved: bool = False

    @classmethod
    def of(
        cls,
        call: ToolUseBlock,
        runner: Runner,
        context: RuntimeContext | None = None,
        agent: object | None = None,
        on_progress: ProgressSink | None = None,
        *,
        execution: ExecutionConfig | None = None,
        permissions: PermissionContextState = EMPTY_PERMISSIONS,
        approved: bool = False,
    ) -> CallScope:
        """The scope of ``call`` run by ``runner``."""
        sinks = runner.progress if on_progress is None else (*runner.progress, on_progress)
        fields = (call, context or EMPTY_CONTEXT, agent, runner, sinks)
        return _new_scope(cls, (*fields, execution, permissions, approved))

    def with_call(self, call: ToolUseBlock) -> CallScope:
        """This scope for another call (a batch builds one scope and one per call from it)."""
        return _new_scope(CallScope, (call, *self[1:]))

    def moved(self, call: ToolUseBlock, context: RuntimeContext) -> CallScope:
        """This scope for ``call`` in ``context`` (a middleware may have rewritten either)."""
        if call is self.call and context is self.context:
            return self
        return self._replace(call=call, context=context)

    def approve(self) -> CallScope:
        """This scope for a call a person approved: the gate does not ask again."""
        return self if self.approved else self._replace(approved=True)


_new_scope: Final = tuple.__new__  # the named tuple's own ``__new__`` is a Python function


# --- compile -----------------------------------------------------------------------------------


def compile_tool(
    item: AgentTool, presets: Mapping[str, object] | None, config: ToolkitConfig
) -> CompiledTool:
    """Compile a tool for calling: how it parses, runs, and whether Rust runs it whole.

    Raises:
        RegistrationError: A method tool read from its class (register the object), or presets
            for a tool that cannot take them.
    """
    presets = types.MappingProxyType(dict(presets)) if presets else _NO_PRESETS
    origin = origin_of(item)
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
        spec = dataclasses.replace(spec, parameters_json=_hide(spec.parameters_json, presets))
        parse = _merging_parser(item, presets)
    invoke = Invoke.CALL
    if function is not None:
        parse = function.schema.validate_json
        invoke = Invoke.AWAIT if function.is_async else Invoke.THREAD
        if function.inline:
            invoke = Invoke.INLINE
    checks = isinstance(item, ToolBase) and _overrides(item, "check_permissions")
    declared = item.execution if isinstance(item, ToolBase) else None
    own = UNSET if spec.timeout is None else ExecutionConfig(timeout=spec.timeout)
    own = own.over(declared)
    execution = _merged(own, config.execution)
    if invoke is Invoke.INLINE and execution.timeout is not None:
        execution = dataclasses.replace(execution, timeout=None)  # nothing could enforce it
    tool = CompiledTool(
        tool=item,
        spec=spec,
        origin=origin,
        presets=presets,
        function=function,
        checks_permissions=checks,
        checked=item if isinstance(item, engine.Checked) else None,
        parse=parse,
        invoke=invoke,
        own_execution=own,
        execution=execution,
        wraps_output=isinstance(item, ToolBase) and item.output_wrapped,
    )
    if function is not None and _is_direct(tool, function):
        tool = dataclasses.replace(tool, direct=_direct(tool, function))
    return tool


_NO_PRESETS: Final[Mapping[str, Any]] = types.MappingProxyType({})


@functools.lru_cache(maxsize=256)
def _merged(own: ExecutionConfig, toolkit: ExecutionConfig | None) -> ExecutionConfig:
    """A tool's settings over the toolkit's and the defaults.

    One value shared by every tool whose settings are alike (most set nothing), not one per tool.
    """
    return own.over(toolkit, DEFAULTS)


def _is_direct(tool: CompiledTool, function: FunctionTool[Any, Any]) -> bool:
    """Whether the Rust direct call can run the tool's whole call.

    It can when the call is nothing but parse, invoke and convert: no permission check,
    external suspension, presets, injections, converter, timeout or retries.
    """
    return not (
        tool.checks_permissions
        or tool.spec.external
        or tool.presets
        or function.injections
        or function.converter is not None
        or tool.execution.timeout is not None
        or tool.execution.attempts > 1
    )


def _direct(tool: CompiledTool, function: FunctionTool[Any, Any]) -> _core.DirectCall:
    convert = outcomes.convert_wrapped if tool.wraps_output else outcomes.convert
    return _core.DirectCall(
        function.schema.validator,
        function.function,
        awaits=tool.invoke is Invoke.AWAIT,
        retry=functools.partial(retry_without_nulls, tool),
        failed=outcomes.raised,
        convert=functools.partial(convert, tool),
        wraps=tool.wraps_output,
    )


def origin_of(item: object) -> str:
    """Where a tool was defined (``module.qualname``), as registration errors name it."""
    if isinstance(item, FunctionTool):
        fn = item.function
        fn = getattr(fn, "__func__", fn)
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    cls = type(item)
    return f"{cls.__module__}.{cls.__qualname__}"


def _overrides(tool: object, method: str) -> bool:
    base = getattr(ToolBase, method)
    return getattr(type(tool), method, base) is not base


def _hide(schema: bytes, names: Mapping[str, object]) -> bytes:
    """The schema without the preset properties."""
    document = orjson.loads(schema)
    if not isinstance(document, dict):
        return schema
    properties = document.get("properties")
    if isinstance(properties, dict):
        document["properties"] = {k: v for k, v in properties.items() if k not in names}
    required = document.get("required")
    if isinstance(required, list):
        document["required"] = [k for k in required if k not in names]
    return dumps_kept(document)


def _merging_parser(base: ToolBase[Any], presets: Mapping[str, object]) -> Callable[[str], Any]:
    """A parser for a JSON Schema tool with presets, which are hidden from its schema.

    The presets are merged over the model's input, and the whole is validated against the
    tool's own schema.
    """

    def parse(arguments: str) -> object:
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return base.parse_arguments(arguments)  # raises the positioned JSON error
        if not isinstance(parsed, dict):
            return base.parse_arguments(arguments)
        parsed.update(presets)
        return base.validate_input(parsed)

    return parse


# --- the steps ---------------------------------------------------------------------------------


def parse(tool: CompiledTool, call: ToolUseBlock) -> object:
    """Validate the call's raw JSON arguments into the tool's input (an empty text is ``{}``).

    Returns:
        The input, or the error result for invalid arguments (and for a parser that raised
        anything else: the ``validation`` step's error).

    Raises:
        TypeError: The arguments are not a ``str`` or ``bytes`` (a programmer's mistake).
    """
    raw = call.arguments
    if not isinstance(raw, (str, bytes)):
        raise not_text(call)
    try:
        return tool.parse(raw or _EMPTY_ARGUMENTS)
    except ValidationError as error:
        return retry_without_nulls(tool, call, error)
    except Exception as exc:
        return outcomes.step_failed(call, "validation", exc)


def retry_without_nulls(tool: CompiledTool, call: ToolUseBlock, error: ValidationError) -> Any:
    """Validate failed arguments again, reading ``null`` at optional properties as left out.

    See `ferrotool._execution.nulls` for the rule.

    Only tried when the arguments are readable JSON with a ``null`` in their text (as the Rust
    direct call decides too).

    Returns:
        The arguments, or the error result: the first errors when no such ``null`` was there,
        else the errors of the arguments without them.
    """
    try:
        return _retry_without_nulls(tool, call, error)
    except Exception as exc:
        return outcomes.step_failed(call, "validation", exc)


def _retry_without_nulls(tool: CompiledTool, call: ToolUseBlock, error: ValidationError) -> Any:
    raw: str | bytes = call.arguments  # bytes too: what a caller passed is validated as it is
    holds_null = (b"null" in raw) if isinstance(raw, bytes) else ("null" in raw)
    if not holds_null or not nulls.readable(detail.code for detail in error.errors):
        return outcomes.invalid(call, error)
    try:
        document = nulls.loads(call.arguments)
    except ValueError:  # not JSON after all (the validator said why)
        return outcomes.invalid(call, error)
    if not nulls.drop_optional_nulls(document, orjson.loads(tool.spec.parameters_json)):
        return outcomes.invalid(call, error)
    try:
        return tool.parse(nulls.dumps(document))
    except ValidationError as retry:
        return outcomes.invalid(call, retry)


async def gate(tool: CompiledTool, arguments: object, scope: CallScope) -> object:
    """Decide whether the call may run here, now (`ferrotool._permissions.engine`).

    What a tool's ``check_permissions``, ``match_rule`` or ``generate_suggestions`` raises
    ends the call with that step's error result (`outcomes.step_failed`).

    Returns:
        The input to run with (a decision may change it), or the result that ends the call:
        ``DENIED``, waiting for approval, suspended for external execution, or the error of
        the step that raised.
    """
    call = scope.call
    if decides(tool, scope) and not scope.approved:
        context = PermissionContext(state=scope.permissions, runtime=scope.context)
        try:
            decision = await decide_known(
                tool.tool, tool.checked, arguments, context, own_check=tool.checks_permissions
            )
            stop = outcomes.refusal(call, decision)
        except Exception as exc:
            return outcomes.step_failed(call, _permission_step(exc), exc)
        if stop is not None:
            return stop
        if decision.updated_input is not None and decision.updated_input is not arguments:
            try:
                arguments = _revalidate(tool, decision.updated_input)
            except ValidationError as error:
                return outcomes.invalid(call, error)
            except Exception as exc:
                return outcomes.step_failed(call, "validation", exc)
    return suspend_external(tool, call, arguments)


def decides(tool: CompiledTool, scope: CallScope) -> bool:
    """Whether a permission step decides the call: a person approved it, or the gate decides.

    The gate decides in a session with rules or a mode, and for a tool with a permission check
    of its own; a plain tool's call in a trivial session is allowed without a decision.
    """
    return scope.approved or tool.checks_permissions or not scope.permissions.is_trivial


_PERMISSION_STEPS: Final = frozenset(("check_permissions", "match_rule", "generate_suggestions"))


def _permission_step(exc: BaseException) -> str:
    """The tool's permission method that raised ``exc``.

    It is the outermost such frame of its traceback; ``permission`` when the engine itself
    raised (say, on a decision that is no `PermissionDecision`).
    """
    trace = exc.__traceback__
    while trace is not None:
        name = trace.tb_frame.f_code.co_name
        if name in _PERMISSION_STEPS:
            return name
        trace = trace.tb_next
    return "permission"


def _revalidate(tool: CompiledTool, updated: Mapping[str, object]) -> object:
    """Validate arguments a permission decision (or a person approving the call) changed."""
    base = tool.tool
    if isinstance(base, ToolBase):
        return base.validate_input(dict(updated))
    return tool.parse(orjson.dumps(dict(updated)).decode())


def suspend_external(tool: CompiledTool, call: ToolUseBlock, arguments: object) -> object:
    """An external tool's call ends suspended, for the caller to run; any other goes on."""
    if tool.spec.external:
        return outcomes.suspended(call)
    return arguments


def prepare(
    tool: CompiledTool, arguments: object, scope: CallScope
) -> Callable[[], object] | ToolResultBlock:
    """The invocation, ready to call: presets merged over the input, injected values added.

    Returns:
        The invocation, or the ``preparation`` step's error result if merging or injecting
        raised anything but an `InjectionError`.

    Raises:
        InjectionError: The tool needs a value the context lacks (a programmer's mistake).
    """
    try:
        return _prepare(tool, arguments, scope)
    except InjectionError:
        raise
    except Exception as exc:
        return outcomes.step_failed(scope.call, "preparation", exc)


def _prepare(
    tool: CompiledTool, arguments: object, scope: CallScope
) -> Callable[[], object] | ToolResultBlock:
    call = scope.call
    function = tool.function
    if function is None:
        emitter = Emitter(call, scope.sinks)
        param: ToolCallParam[Any] = ToolCallParam(
            arguments, call, scope.context, scope.agent, emitter
        )
        return functools.partial(tool.tool.call, param)
    kwargs = cast("dict[str, object]", arguments)
    if tool.presets:
        kwargs.update(tool.presets)
    if function.injections:
        kwargs.update(function.inject(call, scope.context, scope.agent, scope.sinks))
    return functools.partial(function.function, **kwargs)


async def invoke(
    tool: CompiledTool, invocation: Callable[[], object], scope: CallScope
) -> ToolResultBlock:
    """Run the invocation under the call's timeout and convert what it returns or raises.

    A tool that raised (or timed out) is tried again while attempts remain, after a growing,
    jittered wait; a suspension is never tried again. A cancellation of the caller is not
    caught here: it goes on (see `finish`).
    """
    call = scope.call
    runner = cast("Runner", scope.runner)
    execution = tool.execution_for(scope.execution)
    timeout = execution.timeout
    attempts = execution.attempts
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            await anyio.sleep(execution.backoff(attempt - 1))
        try:
            if timeout is None:
                value = await _run(tool, invocation, runner, call, timed=False)
            else:
                with anyio.move_on_after(timeout) as deadline:
                    value = await _run(tool, invocation, runner, call, timed=True)
                if deadline.cancelled_caught:
                    if attempt < attempts:
                        continue
                    return outcomes.timed_out(call, timeout)
        except SuspendTool as exc:
            return outcomes.raised(call, exc)
        except InjectionError:
            raise
        except Exception as exc:
            if attempt < attempts:
                outcomes.retrying(call, exc, attempt, attempts)
                continue
            return outcomes.raised(call, exc)
        return outcomes.convert(tool, call, value)
    raise AssertionError("unreachable: the last attempt returns")  # pragma: no cover


async def _run(
    tool: CompiledTool,
    invocation: Callable[[], object],
    runner: Runner,
    call: ToolUseBlock,
    *,
    timed: bool,
) -> object:
    how = tool.invoke
    if how is Invoke.INLINE:
        return invocation()
    if how is Invoke.THREAD:
        return await runner.in_thread(invocation, call, timed=timed)
    return await cast("Awaitable[object]", invocation())


# --- the sequence ------------------------------------------------------------------------------


async def run_call(tool: CompiledTool, scope: CallScope) -> ToolResultBlock:
    """Run one call of a resolved tool through every step.

    If the caller is cancelled while the tool runs, the tool is cancelled and the cancellation
    goes on (`finish` delivers the call's ``INTERRUPTED`` result).
    """
    arguments = parse(tool, scope.call)
    if type(arguments) is ToolResultBlock:
        return arguments
    decided = decides(tool, scope)
    arguments = await gate(tool, arguments, scope)
    if type(arguments) is ToolResultBlock:
        return _allowed(arguments) if decided and arguments.is_suspended else arguments
    invocation = prepare(tool, arguments, scope)
    if type(invocation) is ToolResultBlock:
        return _allowed(invocation) if decided else invocation
    result = await invoke(tool, cast("Callable[[], object]", invocation), scope)
    return _allowed(result) if decided else result


def _allowed(result: ToolResultBlock) -> ToolResultBlock:
    """The result of a call a permission step allowed: it carries `PermissionState.ALLOWED`."""
    return outcomes.with_permission(result, PermissionState.ALLOWED)


def run_call_sync(tool: CompiledTool, scope: CallScope) -> ToolResultBlock:
    """`run_call` for a sync caller: a sync tool runs on the calling thread.

    A call that needs an event loop (an async tool, a permission check, a timeout) runs in a
    fresh one through `anyio.run`: do not call this from inside a running event loop.
    """
    if _needs_event_loop(tool, scope):
        return anyio.run(run_call, tool, scope)
    arguments = parse(tool, scope.call)
    if type(arguments) is ToolResultBlock:
        return arguments
    arguments = suspend_external(tool, scope.call, arguments)
    if type(arguments) is ToolResultBlock:
        return arguments
    invocation = prepare(tool, arguments, scope)
    if type(invocation) is ToolResultBlock:
        return invocation
    try:
        value = cast("Callable[[], object]", invocation)()
    except Exception as exc:
        return outcomes.raised(scope.call, exc)
    return outcomes.convert(tool, scope.call, value)


def _needs_event_loop(tool: CompiledTool, scope: CallScope) -> bool:
    execution = tool.execution_for(scope.execution)
    return (
        tool.invoke is Invoke.AWAIT
        or tool.invoke is Invoke.CALL
        or tool.checks_permissions
        or not scope.permissions.is_trivial
        or execution.timeout is not None
        or execution.attempts > 1
    )


async def finish(
    running: Awaitable[ToolResultBlock], call: ToolUseBlock, on_result: ResultSink
) -> ToolResultBlock:
    """Await a call and hand its one result to ``on_result``, also when the caller is cancelled.

    On a cancellation (or an interpreter exit) the call's ``INTERRUPTED`` result is delivered,
    then the cancellation goes on: a transcript never holds a call without its result. A
    programmer's mistake (an `Exception` out of the call) delivers nothing and propagates.
    """
    try:
        result = await running
    except Exception:
        raise
    except BaseException:
        on_result(outcomes.interrupted(call))
        raise
    on_result(result)
    return result


__all__ = [
    "CallScope",
    "ResultSink",
    "compile_tool",
    "decides",
    "finish",
    "gate",
    "invoke",
    "origin_of",
    "parse",
    "prepare",
    "retry_without_nulls",
    "run_call",
    "run_call_sync",
    "suspend_external",
]
