"""Patterns from untrusted schemas never freeze the process.

A pattern without lookaround or backreferences runs on a linear-time engine, so the classic
catastrophic `^(a+)+$` answers at once whatever the input; one with them runs on a backtracking
engine within a step budget, whose exhaustion is a `pattern_too_complex` error. That budget is
one per validation, not one per match: once spent, every further backtracking match of the same
validation fails at once, so a document of many hostile strings costs about one exhausted match.
Raw JSON checked against a schema with such a pattern is validated with the interpreter
released, so other threads run meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated

import orjson
import pytest

import ferrotool
from ferrotool import (
    JsonSchemaValidator,
    Limits,
    Param,
    RuntimeContext,
    SchemaOnlyTool,
    Toolkit,
    ToolMergeMode,
    ToolRequestConfig,
    ToolUseBlock,
)
from ferrotool.errors import ErrorDetailFields

EVIL = "a" * 100_000 + "!"
# Backreferences need backtracking; nested quantifiers then explode on a near miss.
BACKTRACKING = r"^(?:(a+)+\1)+$"


@pytest.mark.timeout(10)
def test_nested_quantifier_on_a_long_near_miss_is_answered() -> None:
    validator = JsonSchemaValidator({"type": "string", "pattern": "^(a+)+$"})
    assert not validator.is_valid(EVIL)
    (error,) = validator.errors(EVIL)
    assert error.code == "pattern_mismatch"
    assert validator.is_valid("a" * 100_000)
    # Raw JSON (validated with the interpreter released) and property names alike.
    assert not validator.is_valid_json(f'"{EVIL}"')
    names = JsonSchemaValidator({"propertyNames": {"pattern": "^(a+)+$"}})
    assert not names.is_valid({EVIL: 1})
    pattern_properties = JsonSchemaValidator(
        {"patternProperties": {"^(a+)+$": False}, "additionalProperties": True}
    )
    assert pattern_properties.is_valid({EVIL: 1})


@pytest.mark.timeout(10)
def test_backtracking_pattern_beyond_its_budget_is_an_error_of_its_own() -> None:
    validator = JsonSchemaValidator({"type": "string", "pattern": BACKTRACKING})
    text = "a" * 40 + "!"
    assert not validator.is_valid(text)
    (error,) = validator.errors(text)
    assert error.code == "pattern_too_complex"
    # Within budget the same pattern matches as ECMA-262 says.
    assert validator.is_valid("aa")
    # A lookahead is matched by the backtracking engine too.
    lookahead = JsonSchemaValidator({"pattern": r"^(?=.*\d)(?!.*\s).{8,}$"})
    assert lookahead.is_valid("passw0rd")
    assert not lookahead.is_valid("pass w0rd")


@pytest.mark.timeout(10)
def test_typed_parameter_pattern_is_bounded_too() -> None:
    def lookup(
        code: Annotated[str, Param(pattern="^(a+)+$")],
        tag: Annotated[str, Param(pattern=BACKTRACKING)] = "aa",
    ) -> None: ...

    schema = ferrotool.function_schema(lookup)
    with pytest.raises(ferrotool.ValidationError) as mismatch:
        schema.validate_python({"code": EVIL})
    assert mismatch.value.errors[0].code == "pattern_mismatch"
    with pytest.raises(ferrotool.ValidationError) as complex_:
        schema.validate_python({"code": "aaa", "tag": "a" * 40 + "!"})
    assert complex_.value.errors[0].code == "pattern_too_complex"


HOSTILE = "a" * 40 + "!"


class _Heartbeat:
    """A thread that ticks every few milliseconds and keeps the longest gap between ticks: a
    long gap means something held the interpreter (or the machine) that long."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.ticks = 0
        self._stop = threading.Event()

    def run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.002):
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            self.ticks += 1
            last = now

    def stop(self) -> None:
        self._stop.set()


@contextmanager
def _heartbeat() -> Iterator[_Heartbeat]:
    beat = _Heartbeat()
    thread = threading.Thread(target=beat.run, daemon=True)
    thread.start()
    time.sleep(0.02)  # the thread is ticking before the work starts
    try:
        yield beat
    finally:
        beat.stop()
        thread.join()


def _complex_pointers(errors: Sequence[ErrorDetailFields]) -> list[str]:
    return [error.pointer for error in errors if error.code == "pattern_too_complex"]


@pytest.mark.timeout(30)
async def test_client_tool_with_many_hostile_strings_stays_bounded_and_live() -> None:
    # A client tool's schema, as a client sends it: a backreference, so matches backtrack.
    client = SchemaOnlyTool(
        {
            "name": "tag",
            "parameters": {
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string", "pattern": BACKTRACKING}}
                },
            },
        },
        limits=Limits(max_errors=64),
    )
    context = RuntimeContext().with_value(ToolRequestConfig([client], ToolMergeMode.EXTERNAL_ONLY))
    # A benign string first, then 50 hostile ones: raw JSON far under 16 KiB.
    arguments = orjson.dumps({"tags": ["aa", *[HOSTILE] * 50]}).decode()
    assert len(arguments) < 16 * 1024
    kit = Toolkit()
    with _heartbeat() as beat:
        started = time.perf_counter()
        result = await kit.call_tool(ToolUseBlock("c1", "tag", arguments), context)
        elapsed = time.perf_counter() - started
    errors = result.metadata["errors"]
    assert isinstance(errors, list)
    # Every hostile string has its error; the benign one before them has none.
    records = [error for error in errors if isinstance(error, dict)]
    assert len(records) == len(errors)
    assert [(e["pointer"], e["code"]) for e in records] == [
        (f"/tags/{i}", "pattern_too_complex") for i in range(1, 51)
    ]
    # About two exhausted matches (one per walk of the validation), not fifty: seconds before.
    assert elapsed < 3.0, elapsed
    # The interpreter was released while matching: the heartbeat never stalled for long (a
    # single exhausted match took 0.1 s to 0.2 s with the interpreter held; fifty of them, 2 s).
    assert beat.ticks > 0
    assert beat.longest < 0.5, beat.longest


@pytest.mark.timeout(30)
def test_backtracking_budget_is_one_per_validation() -> None:
    validator = JsonSchemaValidator(
        {"type": "array", "items": {"pattern": BACKTRACKING}}, max_errors=100
    )
    document = ["aa", *[HOSTILE] * 50]
    started = time.perf_counter()
    errors = validator.errors(document)
    assert time.perf_counter() - started < 3.0
    assert _complex_pointers(errors) == [f"/{i}" for i in range(1, 51)]
    # The first refusal is the match that overran, the rest were never tried.
    assert "backtracking steps" in errors[0].expected
    assert "budget" in errors[1].expected
    # A new validation has a budget of its own.
    assert validator.is_valid(["aa", "aaaa"])
    assert not validator.is_valid_json(orjson.dumps(document))


@pytest.mark.timeout(30)
def test_typed_parameter_patterns_share_one_budget_a_call() -> None:
    def tag(tags: list[Annotated[str, Param(pattern=BACKTRACKING)]]) -> None: ...

    schema = ferrotool.function_schema(tag, limits=Limits(max_errors=100))
    started = time.perf_counter()
    with pytest.raises(ferrotool.ValidationError) as raised:
        schema.validate_json(orjson.dumps({"tags": ["aa", *[HOSTILE] * 50]}))
    assert time.perf_counter() - started < 3.0
    assert _complex_pointers(raised.value.errors) == [f"/tags/{i}" for i in range(1, 51)]
