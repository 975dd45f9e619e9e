"""`ferrotool.testing`: hypothesis strategies of valid and invalid arguments from a schema.

Every valid example must be accepted, and every invalid one rejected, by ferrotool's
`JsonSchemaValidator`, by jsonschema-rs (an independent oracle) and, for schemas derived from
typed functions, by the function's own typed validator.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import importlib
import re
import sys
import uuid
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, NamedTuple, TypedDict, TypeVar

import jsonschema_rs
import orjson
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

import ferrotool
from ferrotool import JsonSchemaValidator, Param, ValidationError, function_schema
from ferrotool._values.spec import ToolSpec
from ferrotool.testing import (
    MUTATION_KINDS,
    HasSpec,
    InvalidArguments,
    Mutation,
    from_schema,
    invalid_arguments,
    valid_arguments,
)

FORMATS = (
    "date-time",
    "date",
    "time",
    "duration",
    "uuid",
    "email",
    "ipv4",
    "ipv6",
    "hostname",
    "uri",
)

T = TypeVar("T")

# -- hand-written schemas -------------------------------------------------------------------------

NODE = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "maxItems": 3},
    },
    "required": ["value", "next"],
    "additionalProperties": False,
}

SCHEMAS: dict[str, Any] = {
    "true": True,
    "empty": {},
    "type list": {"type": ["string", "integer", "null"]},
    "order": {
        "type": "object",
        "properties": {
            "customer": {"type": "string", "minLength": 1, "maxLength": 20},
            "items": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"},
                        "qty": {"type": "integer", "minimum": 1, "maximum": 99},
                    },
                    "required": ["sku", "qty"],
                    "additionalProperties": False,
                },
            },
            "unit": {"enum": ["c", "f"]},
            "rush": {"type": "boolean", "default": False},
        },
        "required": ["customer", "items"],
        "additionalProperties": False,
    },
    "numbers": {
        "type": "object",
        "properties": {
            "even": {"type": "integer", "minimum": -3, "exclusiveMaximum": 7, "multipleOf": 2},
            "unit": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "quarter": {"type": "number", "multipleOf": 0.25, "minimum": -2, "maximum": 3},
            "cents": {"type": "number", "multipleOf": 0.01},
            "half": {"type": "integer", "multipleOf": 0.5, "maximum": 1000},
            "big": {"type": "integer", "minimum": 1e300},
            "const": {"const": 3},
        },
        "required": ["even", "unit", "quarter", "cents", "half"],
        "additionalProperties": False,
    },
    "strings": {
        "type": "object",
        "properties": {
            "zip": {"type": "string", "pattern": "^\\d{5}(-\\d{4})?$"},
            "code": {"type": "string", "pattern": "[A-Z]{2}", "maxLength": 4},
            "name": {"type": "string", "minLength": 3, "maxLength": 8},
            "words": {"type": "string", "pattern": "^\\w+\\s\\w+$"},
            "dot": {"type": "string", "pattern": "^a.b$"},
            "repeat": {"type": "string", "pattern": "^(foo|bar)+$", "minLength": 4},
            "named": {"type": "string", "pattern": "^(?<year>\\d{4})-\\d{2}$"},
        },
        "required": ["zip", "code", "name", "words", "dot", "repeat", "named"],
    },
    "formats": {
        "type": "object",
        "properties": {name: {"type": "string", "format": name} for name in FORMATS},
        "required": list(FORMATS),
    },
    "arrays": {
        "type": "object",
        "properties": {
            "set": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 5},
                "uniqueItems": True,
                "minItems": 3,
                "maxItems": 5,
            },
            "contains": {
                "type": "array",
                "items": {"type": "string"},
                "contains": {"const": "x"},
                "minContains": 2,
                "maxContains": 3,
            },
            "tuple": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "boolean"}],
                "items": False,
                "minItems": 1,
            },
            "records": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"k": {"enum": [1, 2, 3]}},
                    "required": ["k"],
                },
                "uniqueItems": True,
                "minItems": 2,
            },
        },
        "required": ["set", "contains", "tuple", "records"],
    },
    "objects": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
        "minProperties": 2,
        "maxProperties": 3,
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
        "dependentRequired": {"a": ["b"]},
    },
    "map": {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "propertyNames": {"pattern": "^[a-z]+$"},
        "maxProperties": 4,
    },
    "combinators": {
        "type": "object",
        "properties": {
            "one": {
                "oneOf": [
                    {"type": "integer", "multipleOf": 3},
                    {"type": "integer", "multipleOf": 5},
                ]
            },
            "all": {
                "allOf": [
                    {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]},
                    {"properties": {"q": {"type": "integer"}}, "required": ["q"]},
                ]
            },
            "not": {"type": "integer", "not": {"enum": [0, 1, 2]}},
            "if": {
                "type": "object",
                "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                "then": {"required": ["a"]},
                "else": {"required": ["b"]},
            },
            "nullable": {"type": "string", "nullable": True},
        },
        "required": ["one", "all", "not", "if", "nullable"],
    },
    "recursive $defs": {
        "$defs": {"Node": NODE},
        "type": "object",
        "properties": {
            "head": {"$ref": "#/$defs/Node"},
            "siblings": {"$ref": "#/$defs/Node", "required": ["kids"]},
        },
        "required": ["head", "siblings"],
    },
    "recursive root": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 5},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    "definitions": {
        "definitions": {"Unit": {"type": "string", "enum": ["c", "f"]}},
        "type": "object",
        "properties": {"unit": {"$ref": "#/definitions/Unit"}},
        "required": ["unit"],
    },
    "anchor": {
        "$defs": {"Big": {"$anchor": "big", "type": "integer", "minimum": 10}},
        "type": "array",
        "items": {"$ref": "#big"},
        "minItems": 1,
    },
    "openapi nullable": {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "nullable": True},
            "y": {"type": "string", "format": "date", "default": "2020-01-01"},
        },
        "required": ["x", "y"],
    },
    "const object": {"const": {"a": [1, 2]}},
    "mixed enum": {"enum": [1, "a", None, True, [1], {"k": "v"}]},
}

REJECTS_NOTHING = {"true", "empty"}


def examples(strategy: st.SearchStrategy[T], count: int) -> list[T]:
    """``count`` examples, the same on every run, without searching or shrinking."""
    out: list[T] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: T) -> None:
        out.append(value)

    collect()
    return out


def oracle_of(schema: Any, *, formats: bool = False) -> Any:
    return jsonschema_rs.validator_for(schema, validate_formats=formats)


def resolve(value: Any, pointer: str) -> Any:
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@given(data=st.data())
def test_valid_arguments_are_accepted(name: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    text = data.draw(valid_arguments(schema), label="arguments")
    value = orjson.loads(text)
    assert JsonSchemaValidator(schema).is_valid_json(text)
    assert JsonSchemaValidator(schema, assert_formats=True).is_valid(value), "format"
    assert oracle_of(schema).is_valid(value)
    assert oracle_of(schema, formats=True).is_valid(value), "format (oracle)"


@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - REJECTS_NOTHING))
@given(data=st.data())
def test_invalid_arguments_are_rejected(name: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    case = data.draw(invalid_arguments(schema, include_malformed_json=True), label="case")
    assert isinstance(case, InvalidArguments)
    assert case.mutation.kind in MUTATION_KINDS
    assert not JsonSchemaValidator(schema).is_valid_json(case.arguments)
    if case.mutation.kind == "not_json":
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(case.arguments)
        assert JsonSchemaValidator(schema).is_valid(case.value), "the value it came from"
        return
    value = orjson.loads(case.arguments)
    assert value == case.value
    assert not oracle_of(schema).is_valid(value)
    resolve(value, case.mutation.pointer)  # the pointer names a place in the arguments
    assert case.mutation.description


@given(st.data())
def test_from_schema_values_are_valid(data: st.DataObject) -> None:
    schema = SCHEMAS["order"]
    value = data.draw(from_schema(schema))
    assert isinstance(value, dict)
    assert JsonSchemaValidator(schema).is_valid(value)


# -- schemas derived from typed functions ---------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Item:
    sku: Annotated[str, Param(min_length=1, max_length=12)]
    qty: Annotated[int, Param(ge=1, le=10)]
    note: str | None = None


@dataclasses.dataclass(frozen=True)
class Tree:
    value: int
    children: list[Tree]
    parent: Tree | None = None


class Point(NamedTuple):
    x: float
    y: float


class Options(TypedDict, total=False):
    verbose: bool
    level: Level


def order(
    items: list[Item],
    color: Color,
    priority: Literal["low", "high"] = "low",
    note: str | None = None,
) -> None:
    """An order of records, an enum, a Literal and an optional."""


def shapes(
    counts: dict[str, int],
    pair: tuple[int, str],
    many: tuple[float, ...],
    tags: set[str],
    ids: frozenset[int],
    point: Point,
    options: Options,
    mixed: Literal["a", "b", 3] | None = None,
) -> None:
    """Mappings, tuples, sets, a NamedTuple, a TypedDict, a mixed Literal."""


def tree(root: Tree, depth: Annotated[int, Param(ge=0, le=5)] = 0) -> None:
    """A recursive record."""


def when(
    at: dt.datetime,
    day: dt.date,
    clock: dt.time,
    ident: uuid.UUID,
    ratio: Annotated[float, Param(gt=0, lt=1)],
    code: Annotated[str, Param(pattern=r"^[A-Z]{3}\d{2}$")],
    level: Level = Level.LOW,
) -> None:
    """Formats, bounds and a pattern."""


FUNCTIONS: dict[str, Callable[..., None]] = {
    "order": order,
    "shapes": shapes,
    "tree": tree,
    "when": when,
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@given(data=st.data())
def test_derived_valid_arguments_pass_every_validator(name: str, data: st.DataObject) -> None:
    schema = function_schema(FUNCTIONS[name])
    text = data.draw(valid_arguments(schema.schema_json), label="arguments")
    assert JsonSchemaValidator(schema.schema_json).is_valid_json(text)
    assert oracle_of(schema.json_schema()).is_valid(orjson.loads(text))
    schema.validate_json(text)  # the typed validator builds the values


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@given(data=st.data())
def test_derived_invalid_arguments_fail_every_validator(name: str, data: st.DataObject) -> None:
    schema = function_schema(FUNCTIONS[name])
    case = data.draw(invalid_arguments(schema.schema_json, include_malformed_json=True))
    assert not JsonSchemaValidator(schema.schema_json).is_valid_json(case.arguments)
    if case.mutation.kind != "not_json":
        assert not oracle_of(schema.json_schema()).is_valid(orjson.loads(case.arguments))
    with pytest.raises(ValidationError):
        schema.validate_json(case.arguments)


# Found by these strategies: values the derived schema's pattern accepts but Python cannot hold
# are reported as invalid values (they used to raise OverflowError / decimal.InvalidOperation).
def test_typed_validator_on_a_huge_schema_valid_duration() -> None:
    def wait(span: dt.timedelta) -> None:
        """Wait."""

    schema = function_schema(wait)
    text = '{"span": "P0200000000W"}'
    assert JsonSchemaValidator(schema.schema_json).is_valid_json(text)
    with pytest.raises(ValidationError, match="invalid_format"):
        schema.validate_json(text)


def test_typed_validator_on_a_huge_schema_valid_decimal() -> None:
    def pay(amount: decimal.Decimal) -> None:
        """Pay."""

    schema = function_schema(pay)
    text = '{"amount": "0E1000000000000000000"}'
    assert JsonSchemaValidator(schema.schema_json).is_valid_json(text)
    with pytest.raises(ValidationError, match="invalid_format"):
        schema.validate_json(text)


# -- every kind of mutation -----------------------------------------------------------------------

EVERYTHING = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
        "size": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2},
        "unit": {"enum": ["cm", "in"]},
        "version": {"const": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        "meta": {
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "minProperties": 1,
            "maxProperties": 2,
        },
    },
    "required": ["name", "size", "unit", "version", "tags", "ids", "meta"],
    "additionalProperties": False,
}


ONE_KIND = {
    "wrong_type": {"type": "integer"},
    "missing_required": {"type": "object", "properties": {"a": {}}, "required": ["a"]},
    "outside_enum": {"enum": ["a", "b"]},
    "not_const": {"const": 1},
    "out_of_bounds": {"type": "integer", "minimum": 0, "maximum": 9},
    "not_multiple_of": {"type": "integer", "multipleOf": 3},
    "too_short": {"type": "string", "minLength": 2},
    "too_long": {"type": "string", "maxLength": 2},
    "pattern_mismatch": {"type": "string", "pattern": "^a+$"},
    "too_few_items": {"type": "array", "minItems": 1},
    "too_many_items": {"type": "array", "maxItems": 1},
    "not_unique": {"type": "array", "uniqueItems": True, "minItems": 1},
    "not_allowed": {"not": {"type": "string"}},
    "extra_property": {"type": "object", "additionalProperties": False},
    "too_few_properties": {"type": "object", "minProperties": 1},
    "too_many_properties": {"type": "object", "maxProperties": 1},
    "not_json": {"type": "integer"},
}


@pytest.mark.parametrize("kind", MUTATION_KINDS)
def test_every_mutation_kind_is_produced(kind: str) -> None:
    schema = ONE_KIND[kind]
    cases = examples(invalid_arguments(schema, include_malformed_json=kind == "not_json"), 40)
    assert kind in {case.mutation.kind for case in cases}
    validator = JsonSchemaValidator(schema)
    assert all(not validator.is_valid_json(case.arguments) for case in cases)


def test_many_kinds_for_one_schema() -> None:
    cases = examples(invalid_arguments(EVERYTHING, include_malformed_json=True), 100)
    oracle = oracle_of(EVERYTHING)
    for case in cases:
        if case.mutation.kind != "not_json":
            assert not oracle.is_valid(orjson.loads(case.arguments)), case
    assert len({case.mutation.kind for case in cases}) >= 10


def test_mutation_fields_say_what_broke() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": SCHEMAS["order"]["properties"]["items"]["items"]}
        },
        "required": ["items"],
    }
    validator = JsonSchemaValidator(schema)
    cases = [
        case
        for case in examples(invalid_arguments(schema), 300)
        if case.mutation.kind == "out_of_bounds"
    ]
    assert cases
    for case in cases:
        assert re.fullmatch(r"/items/\d+/qty", case.mutation.pointer)
        assert case.mutation.description.startswith(case.mutation.pointer + ": ")
        assert isinstance(case.mutation, Mutation)
        (error,) = validator.errors(case.value)
        assert error.pointer == case.mutation.pointer
        assert error.code in ("number_too_small", "number_too_large")


def test_schemas_that_reject_nothing_have_no_invalid_arguments() -> None:
    with pytest.raises(Unsatisfiable):
        find(invalid_arguments(True), lambda case: True, settings=settings(database=None))
    cases = examples(invalid_arguments({}, include_malformed_json=True), 20)
    assert {case.mutation.kind for case in cases} == {"not_json"}


def test_a_schema_that_accepts_nothing_has_no_valid_arguments() -> None:
    for schema in (False, {"type": "string", "enum": [1, 2]}, {"not": {}}):
        with pytest.raises((Unsatisfiable, NoSuchExample)):
            find(from_schema(schema), lambda value: True, settings=settings(database=None))


# -- recursion and depth --------------------------------------------------------------------------


def nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((nesting(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(item) for item in value), default=0)
    return 0


@pytest.mark.parametrize("max_depth", [0, 1, 3])
@given(data=st.data())
def test_max_depth_bounds_recursion(max_depth: int, data: st.DataObject) -> None:
    schema = SCHEMAS["recursive root"]
    value = data.draw(from_schema(schema, max_depth=max_depth))
    # Past the bound only required properties (none of them recursive) are generated.
    assert nesting(value) <= max_depth + 1


def test_recursive_schemas_do_recurse() -> None:
    values = examples(from_schema(SCHEMAS["recursive $defs"]), 100)
    assert max(nesting(value) for value in values) >= 4


def test_patterns_follow_ecma_262() -> None:
    texts = examples(from_schema({"type": "string", "pattern": "^\\d+$"}), 50)
    assert all(isinstance(text, str) and text.isascii() and text.isdigit() for text in texts)


@given(from_schema({"type": "string", "pattern": "^\\w\\d.$"}))
def test_ecma_classes_are_ascii_and_dot_is_not_a_line_end(text: Any) -> None:
    assert isinstance(text, str)
    assert text[0].isascii()
    assert text[1] in "0123456789"
    assert text[2] not in "\n\r\u2028\u2029"


# -- inputs ---------------------------------------------------------------------------------------

PARAMETERS = SCHEMAS["order"]


@dataclasses.dataclass(frozen=True)
class FakeTool:
    spec: ToolSpec


def sources() -> list[Any]:
    data = orjson.dumps(PARAMETERS)
    spec = ToolSpec(name="order", description="Place an order.", parameters_json=data)
    return [
        PARAMETERS,
        MappingProxyType(PARAMETERS),
        data,
        data.decode(),
        spec,
        FakeTool(spec),
    ]


@pytest.mark.parametrize("source", sources(), ids=lambda source: type(source).__name__)
def test_every_kind_of_source_is_read(source: Any) -> None:
    validator = JsonSchemaValidator(PARAMETERS)
    assert all(validator.is_valid_json(text) for text in examples(valid_arguments(source), 5))
    for case in examples(invalid_arguments(source), 5):
        assert isinstance(case, InvalidArguments)
        assert not validator.is_valid_json(case.arguments)


def test_has_spec_is_a_protocol() -> None:
    spec = ToolSpec(name="t", description="", parameters_json=b"{}")
    assert isinstance(FakeTool(spec), HasSpec)
    assert not isinstance(object(), HasSpec)


@pytest.mark.parametrize("source", [42, [1], object(), b"[1]", "null"])
def test_other_sources_are_refused(source: Any) -> None:
    with pytest.raises(TypeError):
        from_schema(source)


def test_an_invalid_schema_is_refused() -> None:
    with pytest.raises(ValueError, match=r"pattern|regex|invalid"):
        from_schema({"type": "string", "pattern": "("})
    with pytest.raises(ValueError, match="max_depth"):
        from_schema({}, max_depth=-1)


def test_mapping_sources_are_not_changed() -> None:
    schema: Mapping[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    before = orjson.dumps(schema)
    examples(from_schema(schema), 5)
    assert orjson.dumps(schema) == before


def test_missing_hypothesis_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "ferrotool.testing")
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "hypothesis.strategies", None)  # type: ignore[arg-type]
    with pytest.raises(ImportError, match=r"pip install 'ferrotool\[testing\]'"):
        importlib.import_module("ferrotool.testing")
    monkeypatch.undo()
    assert importlib.import_module("ferrotool.testing").from_schema is from_schema
    assert ferrotool.testing.from_schema is from_schema
