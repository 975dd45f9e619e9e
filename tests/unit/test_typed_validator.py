"""The typed validator behind `function_schema` / `type_schema`: errors, limits, built values."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import pathlib
import uuid
from typing import Annotated, ClassVar, Literal, NamedTuple, TypedDict

import orjson
import pydantic
import pytest

import ferrotool
from ferrotool import Limits, Param, ValidationError, _core
from ferrotool._schema.introspect import function_ir


@dataclasses.dataclass
class LineItem:
    sku: str
    qty: int


@dataclasses.dataclass
class Order:
    customer: str
    items: list[LineItem]
    note: str | None = None


class Point(NamedTuple):
    x: int
    y: int = 0


class Address(TypedDict):
    street: str
    zip: str


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


class Customer(pydantic.BaseModel):
    name: str
    age: int


def create_order(order: Order, priority: int = 0) -> Order:
    return order


def errors_of(call: object, data: object) -> tuple[ferrotool.ErrorDetail, ...]:
    with pytest.raises(ValidationError) as info:
        call(data)  # type: ignore[operator]
    assert info.value.errors, "a ValidationError must carry at least one error"
    return info.value.errors


# -- error details --------------------------------------------------------------------------------


def test_wrong_type_deep_in_a_record_has_path_expected_and_found() -> None:
    schema = ferrotool.function_schema(create_order)
    raw = orjson.dumps(
        {
            "order": {
                "customer": "ann",
                "items": [
                    {"sku": "a", "qty": 1},
                    {"sku": "b", "qty": 2},
                    {"sku": "c", "qty": "three"},
                ],
            }
        }
    )
    (error,) = errors_of(schema.validate_json, raw)
    assert error.code == "wrong_type"
    assert error.path == ("order", "items", 2, "qty")
    assert error.pointer == "/order/items/2/qty"
    assert error.expected == "integer"
    assert "three" in error.found
    assert "string" in error.found
    assert "order/items/2/qty" in error.message
    assert "wrong_type" in error.message


def test_all_errors_are_collected_in_input_order() -> None:
    schema = ferrotool.function_schema(create_order)
    raw = (
        b'{"order": {"customer": 1, "items": [{"sku": 2, "qty": 1}, {"qty": "x"}]}, '
        b'"priority": "hi"}'
    )
    errors = errors_of(schema.validate_json, raw)
    found = [(e.code, e.path) for e in errors]
    # A missing property is reported at the object that lacks it, naming it in `expected`.
    assert found == [
        ("wrong_type", ("order", "customer")),
        ("wrong_type", ("order", "items", 0, "sku")),
        ("missing_property", ("order", "items", 1)),
        ("wrong_type", ("order", "items", 1, "qty")),
        ("wrong_type", ("priority",)),
    ] or sorted(found, key=str) == sorted(
        [
            ("wrong_type", ("order", "customer")),
            ("wrong_type", ("order", "items", 0, "sku")),
            ("missing_property", ("order", "items", 1)),
            ("wrong_type", ("order", "items", 1, "qty")),
            ("wrong_type", ("priority",)),
        ],
        key=str,
    ), found
    missing = [e for e in errors if e.code == "missing_property"]
    assert "sku" in missing[0].expected


@pytest.mark.parametrize("cap", [1, 3, 20])
def test_errors_are_capped_at_max_errors(cap: int) -> None:
    schema = ferrotool.type_schema(list[int], limits=Limits(max_errors=cap))
    errors = errors_of(schema.validate_json, orjson.dumps(["x"] * 50))
    assert len(errors) == cap
    assert [e.path for e in errors] == [(i,) for i in range(cap)]


def test_missing_required_is_reported_per_field() -> None:
    def tool(a: int, b: str, c: bool = False) -> None: ...

    errors = errors_of(ferrotool.function_schema(tool).validate_json, b"{}")
    assert [(e.code, e.path) for e in errors] == [("missing_property", ())] * 2
    assert ['"a"' in errors[0].expected, '"b"' in errors[1].expected] == [True, True]
    nested = ferrotool.type_schema(list[LineItem]).validate_json
    errors = errors_of(nested, b'[{"sku": "a", "qty": 1}, {}]')
    assert [(e.code, e.path) for e in errors] == [("missing_property", (1,))] * 2
    assert "sku" in errors[0].expected
    assert "qty" in errors[1].expected


def test_unknown_property_is_rejected_with_the_allowed_names() -> None:
    def tool(city: str, days: int = 1) -> None: ...

    (error,) = errors_of(ferrotool.function_schema(tool).validate_json, b'{"city": "x", "dayz": 2}')
    assert error.code == "unexpected_property"
    assert error.path == ("dayz",)
    assert "city" in error.expected
    assert "days" in error.expected


def test_invalid_json_reports_line_and_column() -> None:
    schema = ferrotool.type_schema(dict[str, int])
    (error,) = errors_of(schema.validate_json, b'{"a": 1,\n "b": }')
    assert error.code == "invalid_json"
    assert "line 2" in error.found
    assert "column" in error.found


@pytest.mark.parametrize("raw", [b"", b"[1, 2", b"{'a': 1}", b"[1] x", b"NaN", b"01"])
def test_malformed_json_is_invalid_json(raw: bytes) -> None:
    (error,) = errors_of(ferrotool.type_schema(object).validate_json, raw)
    assert error.code == "invalid_json"


def test_huge_input_is_input_too_large() -> None:
    schema = ferrotool.type_schema(list[int], limits=Limits(max_bytes=1000))
    (error,) = errors_of(schema.validate_json, orjson.dumps(list(range(1000))))
    assert error.code == "input_too_large"
    assert schema.validate_json(orjson.dumps(list(range(10)))) == list(range(10))


DEEP_JSON = (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000)


@pytest.mark.parametrize("tp", [object, list[object], dict[str, object], int])
def test_deep_json_is_rejected_never_a_crash(tp: object) -> None:
    schema = ferrotool.type_schema(tp)
    for raw in DEEP_JSON:
        errors = errors_of(schema.validate_json, raw)
        # A scalar type may stop at the outermost value's type; containers must hit the limit.
        allowed = {"nesting_too_deep", "wrong_type"} if tp is int else {"nesting_too_deep"}
        if tp == dict[str, object] and raw.startswith(b"["):
            allowed.add("wrong_type")
        assert errors[0].code in allowed, (tp, raw[:10], errors[0])


def _deep_list(depth: int) -> list[object]:
    nested: list[object] = []
    for _ in range(depth):
        nested = [nested]
    return nested


@pytest.mark.parametrize("tp", [object, list[object]])
@pytest.mark.parametrize("depth", [200, 50_000])
def test_deep_python_input_is_rejected_like_raw_json(tp: object, depth: int) -> None:
    """`Limits.max_depth` holds for mappings too: `validate_python` agrees with `validate_json`."""
    schema = ferrotool.type_schema(tp)
    (json_error,) = errors_of(schema.validate_json, b"[" * depth + b"]" * depth)
    assert json_error.code == "nesting_too_deep"
    errors = errors_of(schema.validate_python, _deep_list(depth))
    assert errors[0].code == "nesting_too_deep"


@pytest.mark.parametrize("max_depth", [64, 128])
def test_a_large_depth_limit_is_honoured(max_depth: int) -> None:
    """Nesting up to the limit is valid input, in raw JSON and in Python values."""
    schema = ferrotool.type_schema(object, limits=Limits(max_depth=max_depth))
    assert schema.validate_json(b"[" * max_depth + b"]" * max_depth) == _deep_list(max_depth - 1)
    assert schema.validate_python(_deep_list(max_depth - 1)) == _deep_list(max_depth - 1)


@pytest.mark.parametrize("max_depth", [0, 129, 65535])
def test_limits_refuse_a_depth_beyond_the_parsers_bound(max_depth: int) -> None:
    with pytest.raises(ValueError, match="max_depth must be between 1 and 128"):
        Limits(max_depth=max_depth)


def test_depth_limit_is_configurable() -> None:
    schema = ferrotool.type_schema(object, limits=Limits(max_depth=3))
    assert schema.validate_json(b"[[[]]]") == [[[]]]
    (error,) = errors_of(schema.validate_json, b"[[[[]]]]")
    assert error.code == "nesting_too_deep"


# -- JSON semantics and leniency -----------------------------------------------------------------


def test_numeric_string_is_rejected_by_default_and_coerced_when_lenient() -> None:
    (error,) = errors_of(ferrotool.type_schema(int).validate_json, b'"5"')
    assert error.code == "wrong_type"
    lenient = ferrotool.type_schema(int, lenient=True)
    assert lenient.validate_json(b'"5"') == 5
    assert type(lenient.validate_json(b'"5"')) is int
    assert ferrotool.type_schema(bool, lenient=True).validate_json(b'"true"') is True
    assert ferrotool.type_schema(float, lenient=True).validate_json(b'"2.5"') == 2.5
    errors_of(lenient.validate_json, b'"five"')


def test_integral_float_is_an_int_and_bool_is_not() -> None:
    schema = ferrotool.type_schema(int)
    value = schema.validate_json(b"1.0")
    assert value == 1
    assert type(value) is int
    for raw in (b"true", b"false", b"1.5", b"null"):
        (error,) = errors_of(schema.validate_json, raw)
        assert error.code == "wrong_type", raw
    assert ferrotool.type_schema(float).validate_json(b"3") == 3.0
    assert type(ferrotool.type_schema(float).validate_json(b"3")) is float
    errors_of(ferrotool.type_schema(float).validate_json, b"true")
    errors_of(ferrotool.type_schema(int).validate_python, True)


def test_bytes_and_str_inputs_are_the_same() -> None:
    schema = ferrotool.function_schema(create_order)
    raw = '{"order": {"customer": "ünï", "items": []}}'
    assert schema.validate_json(raw) == schema.validate_json(raw.encode())


def test_non_utf8_bytes_give_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"(?i)utf-?8"):
        ferrotool.type_schema(str).validate_json(b'"\xff\xfe"')


@pytest.mark.parametrize("bad", [5, 1.5, None, ["[]"], {"a": 1}])
def test_raw_json_of_the_wrong_type_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError):
        ferrotool.type_schema(object).validate_json(bad)  # type: ignore[arg-type]


# -- built values -----------------------------------------------------------------------------


def test_records_are_built() -> None:
    raw = b'{"order": {"customer": "ann", "items": [{"sku": "a", "qty": 2}]}}'
    kwargs = ferrotool.function_schema(create_order).validate_json(raw)
    assert kwargs == {"order": Order("ann", [LineItem("a", 2)])}
    assert type(kwargs["order"]) is Order
    assert type(kwargs["order"].items[0]) is LineItem
    assert "priority" not in kwargs, "a missing optional parameter is left to Python's default"
    assert ferrotool.function_schema(create_order).call_json(raw) == Order(
        "ann", [LineItem("a", 2)]
    )

    point = ferrotool.type_schema(Point).validate_json(b'{"x": 3}')
    assert point == Point(3, 0)
    assert type(point) is Point

    address = ferrotool.type_schema(Address).validate_json(b'{"street": "s", "zip": "1"}')
    assert address == {"street": "s", "zip": "1"}
    assert type(address) is dict


def test_enums_give_members() -> None:
    assert ferrotool.type_schema(Color).validate_json(b'"green"') is Color.GREEN
    assert ferrotool.type_schema(Level).validate_json(b"2") is Level.HIGH
    (error,) = errors_of(ferrotool.type_schema(Color).validate_json, b'"blue"')
    assert error.code == "not_in_enum"
    assert "red" in error.expected
    errors_of(ferrotool.type_schema(Level).validate_json, b'"2"')
    assert ferrotool.type_schema(Literal["c", "f"]).validate_json(b'"f"') == "f"
    (error,) = errors_of(ferrotool.type_schema(Literal["c", "f"]).validate_json, b'"k"')
    assert error.code == "not_in_enum"
    assert ferrotool.type_schema(Literal[1, True]).validate_json(b"true") is True
    assert type(ferrotool.type_schema(Literal[1, True]).validate_json(b"1")) is int


def test_collections_are_built() -> None:
    assert ferrotool.type_schema(set[int]).validate_json(b"[3, 1]") == {1, 3}
    assert type(ferrotool.type_schema(set[int]).validate_json(b"[]")) is set
    frozen = ferrotool.type_schema(frozenset[str]).validate_json(b'["a"]')
    assert frozen == frozenset({"a"})
    assert type(frozen) is frozenset
    assert ferrotool.type_schema(tuple[int, ...]).validate_json(b"[1, 2]") == (1, 2)
    pair = ferrotool.type_schema(tuple[int, str]).validate_json(b'[1, "a"]')
    assert pair == (1, "a")
    assert type(pair) is tuple
    (error,) = errors_of(ferrotool.type_schema(set[int]).validate_json, b"[1, 1]")
    assert error.code == "duplicate_items"
    errors = errors_of(ferrotool.type_schema(tuple[int, str]).validate_json, b'[1, "a", 2]')
    assert errors[0].code in ("unexpected_item", "array_too_long")
    errors = errors_of(ferrotool.type_schema(tuple[int, str]).validate_json, b"[1]")
    assert errors[0].code in ("array_too_short", "missing_property")


def test_standard_library_values_are_built() -> None:
    cases: list[tuple[object, bytes, object]] = [
        (
            dt.datetime,
            b'"2024-05-01T10:00:00.5+02:00"',
            dt.datetime(2024, 5, 1, 10, 0, 0, 500000, dt.timezone(dt.timedelta(hours=2))),
        ),
        (dt.date, b'"2024-02-29"', dt.date(2024, 2, 29)),
        (dt.time, b'"23:59:01Z"', dt.time(23, 59, 1, tzinfo=dt.UTC)),
        (dt.timedelta, b'"P1DT2H3M4.5S"', dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        (dt.timedelta, b'"-PT1S"', dt.timedelta(seconds=-1)),
        (
            uuid.UUID,
            b'"12345678-1234-5678-1234-567812345678"',
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
        ),
        (decimal.Decimal, b'"1.10"', decimal.Decimal("1.10")),
        (pathlib.Path, b'"a/b.txt"', pathlib.Path("a/b.txt")),
    ]
    for tp, raw, expected in cases:
        value = ferrotool.type_schema(tp).validate_json(raw)
        assert value == expected, (tp, raw, value)
        assert type(value) is type(expected), (tp, raw, type(value))
    aware = ferrotool.type_schema(dt.datetime).validate_json(b'"2024-05-01T10:00:00+02:00"')
    assert aware.utcoffset() == dt.timedelta(hours=2)
    assert str(ferrotool.type_schema(decimal.Decimal).validate_json(b'"1.10"')) == "1.10"


@pytest.mark.parametrize(
    ("tp", "raw"),
    [
        (dt.datetime, b'"2024-05-01T10:00:00"'),  # no offset
        (dt.datetime, b'"2024-02-30T10:00:00Z"'),
        (dt.date, b'"2023-02-29"'),
        (dt.time, b'"25:00:00Z"'),
        (dt.timedelta, b'"P1Y"'),  # years have no fixed length
        (uuid.UUID, b'"1234"'),
        (decimal.Decimal, b'"1,5"'),
        (decimal.Decimal, b"1.5"),  # a number, not a string
    ],
)
def test_malformed_standard_library_values_are_rejected(tp: object, raw: bytes) -> None:
    errors = errors_of(ferrotool.type_schema(tp).validate_json, raw)
    assert errors[0].code in ("invalid_format", "pattern_mismatch", "wrong_type", "invalid_value")


def test_param_constraints_are_checked() -> None:
    def forecast(
        days: Annotated[int, Param(ge=1, le=14)],
        city: Annotated[str, Param(min_length=2, pattern="^[A-Z]")],
        tags: Annotated[list[str], Param(max_items=2)] = [],  # noqa: B006
    ) -> None: ...

    schema = ferrotool.function_schema(forecast)
    assert schema.validate_json(b'{"days": 14, "city": "Oslo"}') == {"days": 14, "city": "Oslo"}
    errors = errors_of(schema.validate_json, b'{"days": 0, "city": "o", "tags": ["a", "b", "c"]}')
    codes = {e.path: e.code for e in errors}
    assert codes[("days",)] == "number_too_small"
    assert codes[("city",)] in ("string_too_short", "pattern_mismatch")
    assert codes[("tags",)] == "array_too_long"
    (error,) = errors_of(schema.validate_json, b'{"days": 15, "city": "Oslo"}')
    assert (error.code, error.path) == ("number_too_large", ("days",))
    assert "14" in error.expected


def test_multiple_of_is_exact_for_floats() -> None:
    # 1053060799 / 25 = 42122431.96: within a relative tolerance of 1e-9 of an integer, and no
    # multiple. Floats are read as the decimals they write, as the JSON Schema engine reads them.
    schema = ferrotool.type_schema(Annotated[float, Param(multiple_of=25)])
    (error,) = errors_of(schema.validate_json, b"1053060799.0")
    assert (error.code, error.expected) == ("not_multiple_of", "a multiple of 25")
    assert not ferrotool.JsonSchemaValidator(schema.json_schema()).is_valid(1053060799.0)
    assert schema.validate_json(b"1053060800.0") == 1053060800.0
    fine = ferrotool.type_schema(Annotated[float, Param(multiple_of=0.0001)])
    assert fine.validate_json(b"0.0075") == 0.0075
    with pytest.raises(ValidationError):
        fine.validate_json(b"0.00751")


def test_union_tries_variants_and_reports_no_match() -> None:
    schema = ferrotool.type_schema(int | list[str] | None)
    assert schema.validate_json(b"null") is None
    assert schema.validate_json(b'["a"]') == ["a"]
    errors = errors_of(schema.validate_json, b'"x"')
    assert errors[0].code in ("no_match", "wrong_type")


# -- pydantic models -----------------------------------------------------------------------------


def test_pydantic_parameters_are_validated_by_pydantic_under_the_parameter_path() -> None:
    def register(customer: Customer, note: str = "") -> Customer:
        return customer

    schema = ferrotool.function_schema(register)
    kwargs = schema.validate_json(b'{"customer": {"name": "ann", "age": 3}}')
    assert kwargs == {"customer": Customer(name="ann", age=3)}
    assert type(kwargs["customer"]) is Customer
    errors = errors_of(schema.validate_json, b'{"customer": {"name": "ann", "age": "old"}}')
    assert [e.path for e in errors] == [("customer", "age")]
    errors = errors_of(schema.validate_json, b'{"customer": {"age": 3}}')
    assert len(errors) == 1
    assert errors[0].path[0] == "customer"
    assert "name" in (*errors[0].path, errors[0].expected) or "name" in errors[0].message
    errors = errors_of(schema.validate_json, b'{"customer": {"name": "a", "age": 1}, "note": 5}')
    assert [(e.code, e.path) for e in errors] == [("wrong_type", ("note",))]
    assert schema.call_json(b'{"customer": {"name": "b", "age": 1}}') == Customer(name="b", age=1)


def test_validate_python_takes_a_mapping() -> None:
    schema = ferrotool.function_schema(create_order)
    data = {"order": {"customer": "ann", "items": [{"sku": "a", "qty": 1}]}, "priority": 2}
    assert schema.validate_python(data) == schema.validate_json(orjson.dumps(data))
    (error,) = errors_of(schema.validate_python, 5)
    assert error.code == "wrong_type"


# -- dataclasses are built as calling the class would build them ----------------------------------


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    x: int
    y: int = 0


@dataclasses.dataclass(slots=True)
class SlotsPoint:
    x: int
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlotsPoint:
    x: int
    y: int = 0


@dataclasses.dataclass
class Base:
    a: int
    b: str = "b"


@dataclasses.dataclass
class Derived(Base):
    c: float = 0.5


class Undecorated(Derived):
    def total(self) -> float:
        return self.a + self.c


@dataclasses.dataclass
class Checked:
    low: int
    high: int
    span: int = dataclasses.field(default=0)

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low is above high")
        self.span = self.high - self.low


@dataclasses.dataclass
class Counted:
    x: int
    tags: list[str] = dataclasses.field(default_factory=list)
    limit: ClassVar[int] = 3


@dataclasses.dataclass
class Logged:
    x: int
    y: int = 0

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, "log", [*getattr(self, "log", ()), name])
        object.__setattr__(self, name, value)


@dataclasses.dataclass
class Made:
    x: int

    def __new__(cls, *args: object, **kwargs: object) -> Made:
        made = super().__new__(cls)
        made.made = True  # type: ignore[attr-defined]
        return made


@dataclasses.dataclass
class WithInitVar:
    x: int
    scale: dataclasses.InitVar[int] = 2

    def __post_init__(self, scale: int) -> None:
        self.x *= scale


@dataclasses.dataclass
class WithoutInit:
    x: int
    seen: list[int] = dataclasses.field(default_factory=list, init=False)


def _failing_factory() -> list[int]:
    raise ValueError("no default today")


@dataclasses.dataclass
class FailingDefault:
    x: int
    values: list[int] = dataclasses.field(default_factory=_failing_factory)


def _state(value: object) -> object:
    """Everything an instance holds: its `__dict__` (in order) or its slots."""
    if hasattr(value, "__dict__"):
        return list(vars(value).items())
    return [(name, getattr(value, name)) for name in vars(type(value))["__slots__"]]


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        (FrozenPoint, {"y": 2, "x": 1}),
        (FrozenPoint, {"x": 1}),
        (SlotsPoint, {"tags": ["a"], "x": 1}),
        (SlotsPoint, {"x": 1}),
        (FrozenSlotsPoint, {"y": 2, "x": 1}),
        (Derived, {"c": 1.5, "a": 1}),
        (Undecorated, {"b": "z", "a": 1}),
        (Checked, {"high": 5, "low": 1}),
        (Counted, {"x": 1}),
        (Logged, {"y": 2, "x": 1}),
        (Made, {"x": 1}),
        (WithInitVar, {"x": 3}),
        (WithoutInit, {"x": 3}),
    ],
)
def test_dataclasses_are_built_as_calling_the_class(cls: type, data: dict[str, object]) -> None:
    built: object = ferrotool.type_schema(cls).validate_json(orjson.dumps(data))
    called = cls(**data)
    assert type(built) is cls
    assert built == called
    assert _state(built) == _state(called), "same attributes, set in the same order"
    assert ferrotool.type_schema(cls).validate_python(data) == called


def test_dataclass_defaults_and_factories_are_fresh_per_instance() -> None:
    schema = ferrotool.type_schema(list[SlotsPoint])
    first, second = schema.validate_json(b'[{"x": 1}, {"x": 2}]')
    assert first.tags == second.tags == []
    assert first.tags is not second.tags
    assert Counted.limit == 3
    assert "limit" not in vars(ferrotool.type_schema(Counted).validate_json(b'{"x": 1}'))


def test_frozen_dataclasses_stay_frozen_and_hashable() -> None:
    point = ferrotool.type_schema(FrozenSlotsPoint).validate_json(b'{"x": 1}')
    assert hash(point) == hash(FrozenSlotsPoint(1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]


def test_dataclass_post_init_and_factory_errors_are_invalid_values() -> None:
    schema = ferrotool.type_schema(list[Checked])
    (error,) = errors_of(schema.validate_json, b'[{"low": 1, "high": 2}, {"low": 3, "high": 2}]')
    assert error.code == "invalid_value"
    assert error.path == (1,)
    assert "low is above high" in error.found
    (error,) = errors_of(ferrotool.type_schema(FailingDefault).validate_json, b'{"x": 1}')
    assert error.code == "invalid_value"
    assert "no default today" in error.found
    assert ferrotool.type_schema(FailingDefault).validate_json(b'{"x": 1, "values": [2]}') == (
        FailingDefault(1, [2])
    )


def test_dataclass_errors_build_nothing() -> None:
    built: list[int] = []

    @dataclasses.dataclass
    class Tracked:
        x: int

        def __post_init__(self) -> None:
            built.append(self.x)

    schema = ferrotool.type_schema(list[Tracked])
    errors = errors_of(schema.validate_json, b'[{"x": 1}, {"x": "two"}, {}]')
    assert [(e.code, e.path) for e in errors] == [
        ("wrong_type", (1, "x")),
        ("missing_property", (2,)),
    ]
    assert built == [1], "only complete records before the first error are built"


def test_call_json_passes_leading_parameters_by_position_and_the_rest_by_name() -> None:
    seen: list[tuple[tuple[object, ...], dict[str, object]]] = []

    class Recorder:
        def __call__(self, a: int, b: int = 2, c: int = 3, *, d: int = 4) -> int:
            return a + b + c + d

    def spy(a: int, b: int = 2, c: int = 3, *, d: int = 4) -> int:
        return a + b + c + d

    original = ferrotool.function_schema(spy).validator

    def record(*args: object, **kwargs: object) -> int:
        seen.append((args, kwargs))
        return spy(*args, **kwargs)  # type: ignore[arg-type]

    ir, objects = function_ir(spy)
    recording = _core.TypedValidator(ir, dict(objects), function=record)
    assert recording.call_json('{"a": 1, "b": 5, "c": 6, "d": 7}') == 19
    assert recording.call_json('{"c": 6, "a": 1}') == 13  # b missing: c goes by name
    assert seen == [((1, 5, 6), {"d": 7}), ((1,), {"c": 6})]
    assert original.call_json('{"a": 1}') == 10
    assert ferrotool.function_schema(Recorder()).call_json('{"a": 1, "d": 0}') == 6


# -- keys as the reader meets them -------------------------------------------------------------

Awkward = TypedDict("Awkward", {'say "hi"': int, "back\\slash": str, "tab\tkey": bool, "ключ": int})


@pytest.mark.parametrize(
    "raw",
    [
        '{"say \\"hi\\"": 1, "back\\\\slash": "x", "tab\\tkey": true, "ключ": 2}',
        '{"ключ": 2, "tab\\u0009key": true, "back\\u005cslash": "x", "say \\u0022hi\\u0022": 1}',
        '{"\\u043a\\u043b\\u044e\\u0447": 2, "say \\"hi\\"": 1, "tab\\tkey": true,'
        ' "back\\\\slash": "x"}',
    ],
)
def test_keys_needing_escapes_are_matched_decoded(raw: str) -> None:
    schema = ferrotool.type_schema(Awkward)
    assert schema.validate_json(raw) == {
        'say "hi"': 1,
        "back\\slash": "x",
        "tab\tkey": True,
        "ключ": 2,
    }
    assert schema.validate_json(raw.encode()) == schema.validate_json(raw)


def test_escaped_spelling_of_a_plain_key_is_the_key() -> None:
    """``"\\u0073ku"`` is the key ``sku``; ``"sku "`` or ``"sk"`` are other keys."""
    schema = ferrotool.type_schema(LineItem)
    assert schema.validate_json('{"\\u0073ku": "a", "q\\u0074y": 2}') == LineItem("a", 2)
    assert schema.validate_json('{ "qty" :2 , "sku":"a" }') == LineItem("a", 2)
    codes = {
        (e.code, e.path)
        for e in errors_of(schema.validate_json, '{"sku ": "a", "sk": "b", "qty": 2}')
    }
    assert ("missing_property", ()) in codes


def test_a_name_with_a_backslash_is_not_matched_by_its_raw_bytes() -> None:
    """``{"a\\": 1, "b": 2}`` is no JSON (the key's quote is escaped), though its bytes start with
    the field name ``a\\`` in quotes."""
    schema = ferrotool.type_schema(TypedDict("Slash", {"a\\": int, "b": int}))
    (error,) = errors_of(schema.validate_json, '{"a\\": 1, "b": 2}')
    assert error.code == "invalid_json"
    assert schema.validate_json('{"a\\\\": 1, "b": 2}') == {"a\\": 1, "b": 2}
