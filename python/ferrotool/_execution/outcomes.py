"""Every result the call pipeline builds: the model's mistakes and a tool's ends, as values.

An unknown tool, invalid arguments, a refusal, a tool that raised or took too long, a cancelled
call: each becomes a `ToolResultBlock` whose text tells the model what went wrong, so it can
correct itself. A return value becomes a result through `convert`.

Logs: each call that does not succeed is logged once, where its result is built here, on the
``ferrotool`` logger: a model's mistakes (an unknown or unavailable tool, invalid arguments), a
refusal and an interruption at ``INFO``; a call that waits (for a person's approval, for the
client) at ``DEBUG``; a tool that raised, a step that failed and a timeout at ``WARNING`` (the
first two with the exception). A successful call logs nothing, and no record is built unless
its level is enabled. Each record carries these fields (``extra``), for a structured (JSON)
formatter:

- ``ferrotool_tool``: the tool's name, as the call gave it;
- ``ferrotool_call_id``: the call's id;
- ``ferrotool_state``: the result's state (`ToolResultState`'s value: ``error``, ``denied``,
  ``running``, ``interrupted``);
- ``ferrotool_outcome``: what happened: ``unknown_tool``, ``unavailable``,
  ``invalid_arguments``, ``denied``, ``rejected`` (by a person), ``approval_required``,
  ``suspended``, ``raised``, ``step_failed``, ``timed_out`` or ``interrupted``;
- ``ferrotool_error_codes``: for invalid arguments, the code of each error (a list, e.g.
  ``["wrong_type", "missing_property"]``);
- ``ferrotool_step``: for a failed step, its key (see `STEPS`);
- ``ferrotool_timeout_s``: for a timeout, the seconds the call was given.

No record carries a duration: the pipeline reads no clock for a call unless something listens
for one (a `ferrotool.telemetry.Tracing` span has the call's duration).

The ``ferrotool`` logger has a `logging.NullHandler` (set by ``import ferrotool``), as a
library's should: an application that configures no logging sees none of this (Python's
last-resort handler, which prints warnings and their tracebacks to stderr, is not used).
"""

from __future__ import annotations

import logging
import types
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final, cast

import pydantic_core

from ferrotool import _core
from ferrotool._permissions.decisions import PermissionBehavior, PermissionDecision
from ferrotool._values.calls import (
    APPROVAL_KEY,
    PERMISSION_STATE_KEY,
    PermissionState,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._values.content import CONTENT_TYPES, ContentBlock, TextBlock
from ferrotool._values.json import JsonValue
from ferrotool.errors import InjectionError, SuspendTool, ValidationError

if TYPE_CHECKING:
    from ferrotool._execution.compiled import CompiledTool

_log: Final = logging.getLogger("ferrotool")

DONE: Final = "Done"
"""The text of a tool that returned ``None``."""

SUCCESS: Final = ToolResultState.SUCCESS
ERROR: Final = ToolResultState.ERROR
EMPTY: Final[Mapping[str, JsonValue]] = types.MappingProxyType({})
_tuple_new: Final = tuple.__new__
_SUGGESTION_SCAN: Final = 2000
RESULT_KEY: Final = "result"
"""The key of a wrapped structured value (``{"result": <value>}``)."""


def result(
    call: ToolUseBlock,
    text: str,
    state: ToolResultState,
    metadata: Mapping[str, JsonValue] = EMPTY,
    structured: JsonValue = None,
) -> ToolResultBlock:
    """A one-text result for ``call``, built without the factories' checks (hot path)."""
    output = (_tuple_new(TextBlock, (text,)),)
    return _tuple_new(ToolResultBlock, (call.id, call.name, output, state, metadata, structured))


def _report(
    level: int,
    call: ToolUseBlock | ToolResultBlock,
    state: ToolResultState,
    outcome: str,
    message: str,
    *args: object,
    exc: BaseException | None = None,
    **fields: JsonValue,
) -> None:
    """Log a call that did not succeed, with its structured fields (see the module's docstring)."""
    if not _log.isEnabledFor(level):
        return
    extra: dict[str, object] = {
        "ferrotool_tool": call.name,
        "ferrotool_call_id": call.id,
        "ferrotool_state": state.value,
        "ferrotool_outcome": outcome,
    }
    for key, value in fields.items():
        extra[f"ferrotool_{key}"] = value
    _log.log(level, message, *args, exc_info=exc, extra=extra, stacklevel=2)


def unknown(call: ToolUseBlock, names: Iterable[str]) -> ToolResultBlock:
    """The result for a tool nobody registered, with the closest names as suggestions.

    The scan for suggestions is bounded: over a huge registry only names sharing the first
    letter are compared, at most a few thousand of them.
    """
    name: object = call.name
    if not isinstance(name, str):  # a call without a name (say, a model's null)
        _report(
            logging.INFO, call, ERROR, "unknown_tool", "call %s names no tool: %r", call.id, name
        )
        return ToolResultBlock.error(f"Tool not found: {name!r}.", id=call.id, name=None)
    candidates = list(names)
    if len(candidates) > _SUGGESTION_SCAN:
        first = call.name[:1]
        candidates = [name for name in candidates if name[:1] == first][:_SUGGESTION_SCAN]
    import difflib  # on first use: a cold path

    close = difflib.get_close_matches(call.name, candidates, n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    _report(
        logging.INFO,
        call,
        ERROR,
        "unknown_tool",
        "call %s asked for an unknown tool %r",
        call.id,
        call.name,
    )
    return ToolResultBlock.error(f"Tool not found: {call.name}.{hint}", id=call.id, name=call.name)


def unavailable(call: ToolUseBlock, reason: str) -> ToolResultBlock:
    """The result for a tool that exists but is not visible to this request."""
    _report(
        logging.INFO,
        call,
        ERROR,
        "unavailable",
        "call %s asked for tool %r, not available: %s",
        call.id,
        call.name,
        reason,
    )
    return ToolResultBlock.error(
        f"Tool '{call.name}' is not available now: {reason}.", id=call.id, name=call.name
    )


def invalid(call: ToolUseBlock, error: ValidationError) -> ToolResultBlock:
    """The error result for invalid arguments: every error, for the model and in metadata."""
    # Raised by the Rust core, with `ErrorDetail` values (`errors.py` names only their fields).
    details = cast("tuple[_core.ErrorDetail, ...]", error.errors)
    text, errors = _core.invalid_arguments(call.name, details)
    return report_invalid(result(call, text, ERROR, types.MappingProxyType({"errors": errors})))


def report_invalid(block: ToolResultBlock) -> ToolResultBlock:
    """Log the result of a call whose arguments did not validate, and return it.

    `invalid` builds it in Python, the Rust direct call (`_core.DirectCall`) in Rust: both
    hand it here.
    """
    if _log.isEnabledFor(logging.INFO):
        records = block.metadata.get("errors")
        codes: list[JsonValue] = [
            record.get("code")
            for record in (records if isinstance(records, list) else ())
            if isinstance(record, dict)
        ]
        _report(
            logging.INFO,
            block,
            block.state,
            "invalid_arguments",
            "tool %s (call %s) got invalid arguments: %s",
            block.name,
            block.id,
            ", ".join(str(code) for code in codes),
            error_codes=codes,
        )
    return block


def raised(call: ToolUseBlock, exc: Exception) -> ToolResultBlock:
    """The result for a tool that raised (a suspension is not a failure).

    Raises:
        InjectionError: The tool asked for a value the context lacks: a programmer's mistake.
    """
    if isinstance(exc, SuspendTool):
        return suspended(call, exc.reason)
    if isinstance(exc, InjectionError):
        raise exc
    return failed(call, exc)


def failed(call: ToolUseBlock, exc: BaseException) -> ToolResultBlock:
    """The error result for a tool that raised, or whose value could not become a result."""
    _report(
        logging.WARNING,
        call,
        ERROR,
        "raised",
        "tool %s (call %s) raised",
        call.name,
        call.id,
        exc=exc,
    )
    try:
        message = str(exc) or type(exc).__name__
    except Exception:  # an exception whose __str__ raises
        message = type(exc).__name__
    return ToolResultBlock.error(f"Tool execution failed: {message}", id=call.id, name=call.name)


STEPS: Final = types.MappingProxyType(
    {
        "validation": "validating its arguments",
        "check_permissions": "its permission check (check_permissions)",
        "match_rule": "matching a permission rule (match_rule)",
        "generate_suggestions": "suggesting permission rules (generate_suggestions)",
        "permission": "its permission decision",
        "preparation": "preparing its invocation",
        "middleware": "a middleware",
        "conversion": "converting its return value",
        "call": "running it",
    }
)
"""The steps of a call that may fail besides the tool itself, and how a result names them."""


def step_failed(call: ToolUseBlock, step: str, exc: BaseException) -> ToolResultBlock:
    """The error result of a call one of whose steps (see `STEPS`) raised.

    The text names the step and the exception, and ``metadata["step"]`` holds the step's key.
    Only the call's own result changes: the model can act on it, and other calls go on.
    """
    _report(
        logging.WARNING,
        call,
        ERROR,
        "step_failed",
        "call %s of tool %s failed in step %s",
        call.id,
        call.name,
        step,
        exc=exc,
        step=step,
    )
    try:
        message = str(exc)
    except Exception:  # an exception whose __str__ raises
        message = ""
    kind = type(exc).__name__
    reason = f"{kind}: {message}" if message else kind
    return result(
        call,
        f"Error: Tool {call.name!r} failed while {STEPS.get(step, step)}: {reason}",
        ERROR,
        types.MappingProxyType({"step": step}),
    )


def retrying(call: ToolUseBlock, exc: Exception, attempt: int, attempts: int) -> None:
    """Log a failed attempt that will be tried again."""
    _log.info(
        "tool %s (call %s) failed on attempt %d of %d, trying again: %s",
        call.name,
        call.id,
        attempt,
        attempts,
        exc,
    )


def timed_out(call: ToolUseBlock, seconds: float) -> ToolResultBlock:
    """The error result for a call that took longer than its timeout."""
    _report(
        logging.WARNING,
        call,
        ERROR,
        "timed_out",
        "tool %s (call %s) timed out after %g s",
        call.name,
        call.id,
        seconds,
        timeout_s=seconds,
    )
    return ToolResultBlock.error(
        f"Tool execution timed out after {seconds:g} s", id=call.id, name=call.name
    )


def interrupted(call: ToolUseBlock) -> ToolResultBlock:
    """The result paired with a call whose caller was cancelled before the tool finished."""
    _report(
        logging.INFO,
        call,
        ToolResultState.INTERRUPTED,
        "interrupted",
        "tool %s (call %s) was interrupted",
        call.name,
        call.id,
    )
    return ToolResultBlock.interrupted(call)


def suspended(call: ToolUseBlock, reason: str | None = None) -> ToolResultBlock:
    """The result of a call that runs elsewhere (an external tool, or one that suspended)."""
    _report(
        logging.DEBUG,
        call,
        ToolResultState.RUNNING,
        "suspended",
        "tool %s (call %s) suspended: %s",
        call.name,
        call.id,
        reason or "it runs on the client",
    )
    return ToolResultBlock.suspended(call, reason)


def settled(result: ToolResultBlock, call: ToolUseBlock) -> ToolResultBlock:
    """A call's result as its caller reports it: stamped with the call, and final.

    A ``RUNNING`` result that does not wait (a tool's progress-style text) is made
    ``SUCCESS``; one that waits (for approval, for the client) stays ``RUNNING``. A batch settles
    each of its results so, and so do the framework bridges (`ferrotool.interop`).
    """
    if result.id != call.id or result.name != call.name:
        result = result.with_call(call.id, call.name)
    return final(result)


def refusal(call: ToolUseBlock, decision: PermissionDecision) -> ToolResultBlock | None:
    """The result for a decision that stops the call (deny, ask); ``None`` to go on."""
    if decision.behavior is PermissionBehavior.DENY:
        _report(
            logging.INFO,
            call,
            ToolResultState.DENIED,
            "denied",
            "tool %s (call %s) denied: %s",
            call.name,
            call.id,
            decision.message,
        )
        return ToolResultBlock.denied(
            call,
            f"Permission denied: {decision.message}",
            metadata={
                "permission": decision.to_dict(),
                PERMISSION_STATE_KEY: PermissionState.DENIED.value,
            },
        )
    if decision.behavior is PermissionBehavior.ASK:
        _report(
            logging.DEBUG,
            call,
            ToolResultState.RUNNING,
            "approval_required",
            "tool %s (call %s) waits for approval: %s",
            call.name,
            call.id,
            decision.message,
        )
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=(TextBlock(f"Approval required: {decision.message}"),),
            state=ToolResultState.RUNNING,
            metadata=types.MappingProxyType(
                {
                    APPROVAL_KEY: True,
                    "permission": decision.to_dict(),
                    PERMISSION_STATE_KEY: PermissionState.ASKING.value,
                }
            ),
        )
    return None


def rejected(call: ToolUseBlock, message: str) -> ToolResultBlock:
    """The result of a call a person refused to approve: ``DENIED``."""
    _report(
        logging.INFO,
        call,
        ToolResultState.DENIED,
        "rejected",
        "tool %s (call %s) rejected: %s",
        call.name,
        call.id,
        message,
    )
    return ToolResultBlock.denied(
        call, message, metadata={PERMISSION_STATE_KEY: PermissionState.DENIED.value}
    )


def with_permission(result: ToolResultBlock, state: PermissionState) -> ToolResultBlock:
    """``result`` carrying the call's permission state (`PERMISSION_STATE_KEY`)."""
    if result.metadata.get(PERMISSION_STATE_KEY) == state.value:
        return result
    metadata = {**result.metadata, PERMISSION_STATE_KEY: state.value}
    return result._replace(metadata=types.MappingProxyType(metadata))


def final(result: ToolResultBlock) -> ToolResultBlock:
    """The result in its final state: ``RUNNING`` becomes ``SUCCESS`` unless it waits.

    The chapter's rule for a finished call: a result that waits (suspended for the client, or
    for an approval) stays ``RUNNING``; any other explicit state is kept; a ``RUNNING`` one
    (the default state of `ToolResultBlock.text`, a tool's progress-style text) is a success.
    A single call, a batch, a middleware's result and a resume apply it alike.
    """
    if result.state is ToolResultState.RUNNING and not (
        result.is_suspended or result.needs_approval
    ):
        return result.with_state(SUCCESS)
    return result


def convert(tool: CompiledTool, call: ToolUseBlock, value: object) -> ToolResultBlock:
    """A tool's return value as its result.

    ``str`` is the text; ``None`` the text ``Done``; a `ToolResultBlock` passes in its final
    state (see `final`; stamped with the call); content blocks are the output; anything else
    is made JSON (records, dicts, lists, numbers, datetimes, UUIDs, enums, pydantic
    models...), the text being the JSON and `ToolResultBlock.structured` the value. A value
    with no JSON form is sent as its ``str()``. A tool whose output schema wraps its value
    (`CompiledTool.wraps_output`) has ``{"result": <value>}`` as the structured value of any
    return value but a result or content blocks. Never raises: a value that cannot become a
    result (a converter that raises included) gives an error result naming the
    ``conversion`` step.
    """
    try:
        return _convert(tool, call, value)
    except Exception as exc:
        return step_failed(call, "conversion", exc)


def _convert(tool: CompiledTool, call: ToolUseBlock, value: object) -> ToolResultBlock:
    function = tool.function
    if function is not None and function.converter is not None:
        value = function.converter(value)
    if tool.wraps_output:
        return _wrapped(call, value)
    return _value_result(call, value)


def _wrapped(call: ToolUseBlock, value: object) -> ToolResultBlock:
    """The result of a value, its structured value wrapped as ``{"result": <value>}``."""
    kind = type(value)
    if kind is int:
        number = cast("int", value)
        return result(call, _int_text(number), SUCCESS, EMPTY, {RESULT_KEY: number})
    if value is None:
        return result(call, DONE, SUCCESS, EMPTY, {RESULT_KEY: None})
    if isinstance(value, str):
        text = str(value)
        return result(call, text, SUCCESS, EMPTY, {RESULT_KEY: text})
    if (
        kind is ToolResultBlock
        or isinstance(value, CONTENT_TYPES)
        or (isinstance(value, (list, tuple)) and value and isinstance(value[0], CONTENT_TYPES))
    ):
        return _value_result(call, value)
    return _json_result(call, value, wrap=True)


def convert_wrapped(tool: CompiledTool, call: ToolUseBlock, value: object) -> ToolResultBlock:
    """`convert` for a direct call (so a tool with no converter) of a wrapped output."""
    try:
        return _wrapped(call, value)
    except Exception as exc:
        return step_failed(call, "conversion", exc)


def _value_result(call: ToolUseBlock, value: object) -> ToolResultBlock:
    kind = type(value)
    if kind is str:
        return result(call, cast("str", value), SUCCESS)
    if kind is int:
        number = cast("int", value)
        return result(call, _int_text(number), SUCCESS, EMPTY, number)
    if kind is ToolResultBlock:
        block = final(cast("ToolResultBlock", value))
        if block.id == call.id and block.name == call.name:
            return block
        return block.with_call(call.id, call.name)
    if value is None:
        return result(call, DONE, SUCCESS)
    if isinstance(value, str):
        return result(call, str(value), SUCCESS)
    if isinstance(value, CONTENT_TYPES):
        return ToolResultBlock.success(value, id=call.id, name=call.name)
    if (
        isinstance(value, (list, tuple))
        and value
        and isinstance(value[0], CONTENT_TYPES)  # most lists are data: one look tells
        and all(isinstance(item, CONTENT_TYPES) for item in value)
    ):
        blocks = cast("tuple[ContentBlock, ...]", tuple(value))
        return ToolResultBlock.success(blocks, id=call.id, name=call.name)
    return _json_result(call, value)


def _int_text(number: int) -> str:
    """An int's text: ``str()``, or the JSON encoder's for one too long for ``str()``."""
    return str(number) if _printable(number) else pydantic_core.to_json(number).decode()


def _printable(value: int) -> bool:
    """Whether ``str(value)`` works for this int.

    CPython refuses ints of more than a few thousand digits (`sys.get_int_max_str_digits`);
    those are written by the JSON encoder, which has no such limit.
    """
    return value.bit_length() < _PRINTABLE_BITS


_PRINTABLE_BITS: Final = 14_000  # about 4,214 decimal digits: under the default limit of 4,300


def _json_result(call: ToolUseBlock, value: object, *, wrap: bool = False) -> ToolResultBlock:
    asdict = getattr(value, "_asdict", None)
    if isinstance(value, tuple) and callable(asdict):
        value = asdict()  # a named tuple reads best as an object
    try:
        data = pydantic_core.to_json(value, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        _log.warning("tool %s returned a %s, not JSON: sent as str()", call.name, type(value))
        return result(call, str(value), SUCCESS)
    try:
        structured = cast("JsonValue", pydantic_core.from_json(data))
    except ValueError:  # an int of more digits than Python reads back: the text holds it
        return result(call, data.decode(), SUCCESS)
    if wrap:
        structured = {RESULT_KEY: structured}
    return result(call, data.decode(), SUCCESS, EMPTY, structured)


__all__ = [
    "DONE",
    "EMPTY",
    "ERROR",
    "RESULT_KEY",
    "STEPS",
    "SUCCESS",
    "convert",
    "convert_wrapped",
    "failed",
    "final",
    "interrupted",
    "invalid",
    "raised",
    "refusal",
    "rejected",
    "report_invalid",
    "result",
    "retrying",
    "settled",
    "step_failed",
    "suspended",
    "timed_out",
    "unavailable",
    "unknown",
    "with_permission",
]
