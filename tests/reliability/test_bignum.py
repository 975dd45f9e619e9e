"""Numbers beyond 64 bits are compared exactly or refused, never changed.

Python `int`s of any size and JSON integers of any size are read exactly and compared exactly
with `minimum`, `maximum`, the exclusive bounds and `multipleOf` (the schema's own numbers are
64-bit: an integer bound beyond 2^64 is the float the schema holds, taken at its exact value);
raw JSON numbers beyond a float's range (`1e400`) are refused with `invalid_value` instead of
being read as `null`.
"""

from __future__ import annotations

import pytest

from ferrotool import JsonSchemaValidator, ValidationError

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
