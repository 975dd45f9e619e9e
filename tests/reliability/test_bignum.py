"""Numbers beyond 64 bits are compared exactly or refused, never changed.

Python `int`s of any size and JSON integers of any size are read exactly and compared exactly
with `minimum`, `maximum`, the exclusive bounds and `multipleOf` (the schema's own numbers are
64-bit: an integer bound beyond 2^64 is the float the schema holds, taken at its exact value);
raw JSON numbers beyond a float's range (`1e400`) are refused with `invalid_value` instead of
being read as `null`. The typed validator refuses them for a `float` (or `int`) parameter with
`number_too_large` (`number_too_small` below), on every way it reads a number, instead of
passing on the infinity a JSON decoder rounds them to.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ferrotool import JsonSchemaValidator, ValidationError, function_schema, type_schema

BIG = 123456789012345678901234567890


def test_raw_number_beyond_float_range_is_refused_not_null() -> None:
    validator = JsonSchemaValidator({"type": "null"})
    assert not validator.is_valid_json("1e400")
    with pytest.raises(ValidationError) as info:
        validator.validate_json('{"a": [1, -1e400]}')
    (error,) = info.value.errors
    assert (error.code, error.path) == ("invalid_value", ("a", 1))


def test_python_int_beyond_float_range_is_bounded() -> None:
    validator = JsonSchemaValidator({"type": "integer", "maximum": 10})
    assert not validator.is_valid(10**400)
    (error,) = validator.errors(10**400)
    assert error.code == "number_too_large"
    assert validator.is_valid(-(10**400))
    assert not JsonSchemaValidator({"minimum": 0}).is_valid(-(10**5000))


def test_python_int_beyond_64_bits_is_compared_exactly() -> None:
    # 2**64 is exactly a float; 2**64 + 1 is not, and must not round onto the bound.
    assert not JsonSchemaValidator({"maximum": 2**64}).is_valid(2**64 + 1)
    assert JsonSchemaValidator({"maximum": 2**64}).is_valid(2**64)
    assert not JsonSchemaValidator({"exclusiveMinimum": -(2**64)}).is_valid(-(2**64) - 0)
    assert JsonSchemaValidator({"exclusiveMinimum": -(2**64)}).is_valid(-(2**64) + 1)


def test_multiple_of_is_exact_for_big_integers() -> None:
    validator = JsonSchemaValidator({"multipleOf": 10})
    assert validator.is_valid(BIG)
    assert not validator.is_valid(BIG + 1)
    assert JsonSchemaValidator({"multipleOf": 0.5}).is_valid(BIG + 1)
    assert not JsonSchemaValidator({"multipleOf": 7}).is_valid(7 * BIG + 3)


def test_raw_big_integers_are_exact_and_returned_unchanged() -> None:
    validator = JsonSchemaValidator({"type": "array", "items": {"multipleOf": 10}})
    assert validator.validate_json(f"[{BIG}, 20]") == [BIG, 20]
    assert not validator.is_valid_json(f"[{BIG + 1}]")
    with pytest.raises(ValidationError) as info:
        validator.validate_json(f"[1{'0' * 400}, {BIG + 1}]")
    assert [(e.code, e.path) for e in info.value.errors] == [("not_multiple_of", (1,))]
    lenient = JsonSchemaValidator(
        {"properties": {"n": {"type": "integer"}, "big": {"maximum": 2**100}}}, lenient=True
    )
    assert lenient.validate_json(f'{{"n": "5", "big": {BIG}}}') == {"n": 5, "big": BIG}
    assert not lenient.is_valid_json(f'{{"big": {2**100 + 1}}}')


@dataclass
class Reading:
    value: float


def _codes(error: ValidationError) -> list[tuple[str, tuple[str | int, ...], str]]:
    return [(e.code, e.path, e.found) for e in error.errors]


@pytest.mark.parametrize("spelled", ["1e400", "1E+400", "17976931348623159e292", "1e309"])
def test_typed_float_beyond_float_range_is_too_large_not_inf(spelled: str) -> None:
    above = "number above 1.7976931348623157e308"

    # A parameter read in place, a list item, a record field, a union member (the number
    # captured whole, then matched), a bare value.
    def measure(x: float, xs: list[float], reading: Reading, either: float | list[str]) -> None:
        return None

    schema = function_schema(measure)
    raw = f'{{"x": {spelled}, "xs": [1.5, {spelled}], "reading": {{"value": {spelled}}}, '
    raw += f'"either": {spelled}}}'
    with pytest.raises(ValidationError) as info:
        schema.validate_json(raw)
    assert _codes(info.value) == [
        ("number_too_large", ("x",), above),
        ("number_too_large", ("xs", 1), above),
        ("number_too_large", ("reading", "value"), above),
        ("number_too_large", ("either",), above),
    ]
    assert info.value.errors[0].expected == "at most 1.7976931348623157e308"
    with pytest.raises(ValidationError) as info:
        type_schema(float).validate_json(spelled)
    assert _codes(info.value) == [("number_too_large", (), above)]


def test_typed_number_below_float_range_is_too_small() -> None:
    with pytest.raises(ValidationError) as info:
        type_schema(list[float]).validate_json("[-1e400]")
    assert _codes(info.value) == [
        ("number_too_small", (0,), "number below -1.7976931348623157e308")
    ]
    with pytest.raises(ValidationError) as info:
        type_schema(int).validate_json("1e400")
    assert [e.code for e in info.value.errors] == ["number_too_large"]


def test_typed_float_at_the_edge_of_float_range_is_read() -> None:
    assert type_schema(float).validate_json("1.7976931348623157e308") == 1.7976931348623157e308
    assert type_schema(float).validate_json("-1e308") == -1e308
    assert type_schema(float).validate_json("1e-400") == 0.0
    # A Python float is what it is: the infinity of a Python value is not a JSON overflow.
    assert type_schema(float).validate_python(float("inf")) == float("inf")
