"""Patterns from untrusted schemas never freeze the process.

A pattern without lookaround or backreferences runs on a linear-time engine, so the classic
catastrophic `^(a+)+$` answers at once whatever the input; one with them runs on a backtracking
engine within a step budget, whose exhaustion is a `pattern_too_complex` error.
"""

from __future__ import annotations

from typing import Annotated

import pytest

import ferrotool
from ferrotool import JsonSchemaValidator, Param

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
