import dataclasses
import datetime as dt
import decimal
import enum
import pathlib
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple, TypedDict

import introspect_forward_helpers as fwd
import jsonschema_rs
import orjson
import pydantic
import pytest

from ferrotool import _core
from ferrotool._schema.introspect import function_ir, type_ir
from ferrotool._schema.params import Param

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def schema_of(fn: Callable[..., object]) -> dict[str, Any]:
    return orjson.loads(_core.derive_schema(function_ir(fn)[0]))


def type_schema(tp: object) -> dict[str, Any]:
    return orjson.loads(_core.derive_schema(type_ir(tp)[0]))


def assert_valid_schema(schema: dict[str, Any]) -> None:
    jsonschema_rs.meta.validate({"$schema": DRAFT_2020_12, **schema})


# -- S1 and S2 ------------------------------------------------------------------------------


def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return city


@dataclasses.dataclass
class Customer:
    id: int
    name: str
    email: str
    vip: bool


@dataclasses.dataclass
class Item:
    sku: str
    qty: Annotated[int, Param(ge=1)]
    price: float


def create_order(customer: Customer, items: list[Item], note: str | None = None) -> None:
    """Create an order."""


S1 = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
        "days": {"type": "integer", "default": 1},
    },
    "required": ["city"],
    "additionalProperties": False,
}

S2 = {
    "type": "object",
    "properties": {
        "customer": {"$ref": "#/$defs/Customer"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["customer", "items"],
    "additionalProperties": False,
    "$defs": {
        "Customer": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string"},
                "email": {"type": "string"},
                "vip": {"type": "boolean"},
            },
            "required": ["id", "name", "email", "vip"],
            "additionalProperties": False,
        },
        "Item": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "qty": {"type": "integer", "minimum": 1},
                "price": {"type": "number"},
            },
            "required": ["sku", "qty", "price"],
            "additionalProperties": False,
        },
    },
}


def test_s1_get_weather() -> None:
    schema = schema_of(get_weather)
    assert schema == S1
    assert list(schema) == ["type", "properties", "required", "additionalProperties"]
    assert_valid_schema(schema)


def test_s2_create_order() -> None:
    schema = schema_of(create_order)
    assert schema == S2
    assert list(schema["properties"]["note"]) == ["anyOf", "default"]
    assert_valid_schema(schema)
    validator = jsonschema_rs.validator_for(schema)
    order = {
        "customer": {"id": 1, "name": "Ada", "email": "ada@example.com", "vip": True},
        "items": [{"sku": "A1", "qty": 2, "price": 9.5}],
    }
    assert validator.is_valid(order)
    assert validator.is_valid({**order, "note": None})
    assert not validator.is_valid({**order, "items": [{"sku": "A1", "qty": 0, "price": 1}]})
    assert not validator.is_valid({**order, "extra": 1})
    assert not validator.is_valid({**order, "customer": {**order["customer"], "vip": 1}})


def test_byte_stability() -> None:
    ir_first, ir_second = function_ir(create_order)[0], function_ir(create_order)[0]
    assert ir_first == ir_second
    assert _core.derive_schema(ir_first) == _core.derive_schema(ir_second)
    assert _core.derive_schema(ir_first).startswith(
        b'{"type":"object","properties":{"customer":{"$ref":"#/$defs/Customer"},'
    )


# -- every derived schema is a valid 2020-12 schema -------------------------------------------


class Color(enum.Enum):
    """A color."""

    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Movie(TypedDict, total=False):
    title: typing.Required[str]
    year: int


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Address(pydantic.BaseModel):
    city: str


class User(pydantic.BaseModel):
    name: str
    home: Address


class Category(pydantic.BaseModel):
    name: str
    children: list["Category"] = []


TYPES: list[object] = [
    str,
    int,
    float,
    bool,
    None,
    Any,
    dt.datetime,
    dt.date,
    dt.time,
    dt.timedelta,
    uuid.UUID,
    decimal.Decimal,
    pathlib.Path,
    Literal["a"],
    Literal["a", 1, None, True],
    Literal[None],
    Color,
    Level,
    list[int],
    Sequence[str],
    tuple[int, ...],
    tuple[int, str],
    tuple[()],
    set[str],
    frozenset[int],
    dict[str, float],
    Mapping[str, list[int]],
    int | str | None,
    Annotated[int, Param(ge=0, lt=10, multiple_of=2)],
    Annotated[float, Param(gt=0.5, le=1)],
    Annotated[str, Param(min_length=1, max_length=5, pattern="^a", description="s")],
    Annotated[list[int], Param(min_items=1, max_items=3, examples=([1],))],
    Annotated[dict[str, int], Param(max_items=2, deprecated=True)],
    list[Annotated[Customer, Param(description="a customer", title="C")]],
    Customer,
    Movie,
    Pair,
    fwd.Tree,
    fwd.Ping,
    User,
    Category,
    list[User] | Address,
]


@pytest.mark.parametrize("tp", TYPES, ids=repr)
def test_type_schemas_are_valid(tp: object) -> None:
    schema = type_schema(tp)
    assert_valid_schema(schema)
    jsonschema_rs.validator_for(schema)  # every $ref resolves


def test_function_schemas_are_valid() -> None:
    for fn in (get_weather, create_order, fwd.forward, fwd.annotated):
        assert_valid_schema(schema_of(fn))


# -- representative mappings ------------------------------------------------------------------


def test_scalar_and_standard_library_mappings() -> None:
    def fn(
        when: dt.datetime,
        day: dt.date,
        at: dt.time,
        span: dt.timedelta,
        key: uuid.UUID,
        amount: decimal.Decimal,
        where: pathlib.Path,
        anything: Any,
    ) -> None: ...

    properties = schema_of(fn)["properties"]
    assert properties == {
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "time"},
        "span": {
            "type": "string",
            "pattern": (
                r"^-?P(?=\d|T\d)(?:\d+W)?(?:\d+D)?"
                r"(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d{1,6})?S)?)?$"
            ),
        },
        "key": {"type": "string", "format": "uuid"},
        "amount": {
            "type": "string",
            "pattern": r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$",
        },
        "where": {"type": "string", "format": "path"},
        "anything": {},
    }


def test_containers_and_enums() -> None:
    def fn(
        tags: set[str],
        point: tuple[int, int],
        color: Color = Color.RED,
        level: Annotated[Level, Param(description="How loud")] = Level.LOW,
        scores: Annotated[dict[str, float], Param(min_items=1)] | None = None,
    ) -> None: ...

    assert schema_of(fn)["properties"] == {
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "point": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "integer"}],
            "items": False,
            "minItems": 2,
            "maxItems": 2,
        },
        "color": {
            "type": "string",
            "enum": ["red", "blue"],
            "title": "Color",
            "description": "A color.",
            "default": "red",
        },
        "level": {
            "type": "integer",
            "enum": [1, 2],
            "title": "Level",
            "description": "How loud",
            "default": 1,
        },
        "scores": {
            "anyOf": [
                {"type": "object", "additionalProperties": {"type": "number"}, "minProperties": 1},
                {"type": "null"},
            ],
            "default": None,
        },
    }


def test_ref_with_documentation() -> None:
    def fn(
        buyer: Annotated[Customer, Param(description="Who pays")], others: list[Customer]
    ) -> None:
        """Buy."""

    schema = schema_of(fn)
    assert schema["properties"]["buyer"] == {"$ref": "#/$defs/Customer", "description": "Who pays"}
    assert list(schema["$defs"]) == ["Customer"]


def test_record_description_and_recursion() -> None:
    schema = type_schema(fwd.Tree)
    assert schema == {
        "$ref": "#/$defs/Tree",
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                },
                "required": ["value"],
                "additionalProperties": False,
                "description": "A tree of integers.",
            }
        },
    }


def test_pydantic_model_defs_are_hoisted() -> None:
    def fn(user: User, tree: Category) -> None: ...

    schema = schema_of(fn)
    assert schema["properties"] == {
        "user": {"$ref": "#/$defs/User"},
        "tree": {"$ref": "#/$defs/Category"},
    }
    user_schema = User.model_json_schema()
    assert schema["$defs"]["Address"] == user_schema["$defs"]["Address"]
    assert "$defs" not in schema["$defs"]["User"]
    assert list(schema["$defs"]) == ["User", "Address", "Category"]
    validator = jsonschema_rs.validator_for(schema)
    assert validator.is_valid(
        {
            "user": {"name": "a", "home": {"city": "b"}},
            "tree": {"name": "x", "children": [{"name": "y"}]},
        }
    )
    assert not validator.is_valid({"user": {"name": "a", "home": {}}, "tree": {"name": "x"}})


def test_invalid_ir_raises_value_error() -> None:
    with pytest.raises(ValueError, match="invalid type IR"):
        _core.derive_schema(b'{"version": 1}')
    with pytest.raises(ValueError, match="unsupported IR version 9"):
        _core.derive_schema(b'{"version": 9, "root": {"kind": "type", "type": {"kind": "any"}}}')
    with pytest.raises(ValueError, match="unknown record"):
        _core.derive_schema(
            b'{"version": 1, "root": {"kind": "type", "type": {"kind": "ref", "name": "X"}}}'
        )
