import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import functools
import inspect
import pathlib
import socket
import timeit
import typing
import uuid
from typing import (
    Annotated,
    Any,
    Literal,
    NamedTuple,
    NewType,
    NotRequired,
    Optional,
    Required,
    TypedDict,
    Union,
)

import annotated_types as at
import introspect_forward_helpers as fwd
import orjson
import pydantic
import pytest
from typing_extensions import Doc, ReadOnly, TypeAliasType

import ferrotool
from ferrotool._schema.introspect import docstring_summary, function_ir, type_ir
from ferrotool._schema.params import Param
from ferrotool.errors import SchemaError


def ir_of(tp: object) -> object:
    return orjson.loads(type_ir(tp)[0])["root"]["type"]


def fields_of(fn: typing.Callable[..., object], **kwargs: Any) -> list[dict[str, Any]]:
    return orjson.loads(function_ir(fn, **kwargs)[0])["root"]["record"]["fields"]


def doc(fn: typing.Callable[..., object]) -> dict[str, Any]:
    return orjson.loads(function_ir(fn)[0])


class Color(enum.Enum):
    """A color."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"


class Mixed(enum.Enum):
    A = 1
    B = "b"


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


UserId = NewType("UserId", int)


# -- scalars and standard-library values ----------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, {"kind": "str"}),
        (int, {"kind": "int"}),
        (float, {"kind": "float"}),
        (bool, {"kind": "bool"}),
        (None, {"kind": "null"}),
        (type(None), {"kind": "null"}),
        (Any, {"kind": "any"}),
        (object, {"kind": "any"}),
        (dt.datetime, {"kind": "str_value", "value": "datetime"}),
        (dt.date, {"kind": "str_value", "value": "date"}),
        (dt.time, {"kind": "str_value", "value": "time"}),
        (dt.timedelta, {"kind": "str_value", "value": "timedelta"}),
        (uuid.UUID, {"kind": "str_value", "value": "uuid"}),
        (decimal.Decimal, {"kind": "str_value", "value": "decimal"}),
        (pathlib.Path, {"kind": "str_value", "value": "path"}),
        (pathlib.PurePath, {"kind": "str_value", "value": "path"}),
        (pathlib.PosixPath, {"kind": "str_value", "value": "path"}),
        (UserId, {"kind": "int"}),
        (
            TypeAliasType("Ids", list[int]),
            {"kind": "list", "items": {"kind": "int"}, "container": "list"},
        ),
    ],
)
def test_scalars(tp: object, expected: object) -> None:
    assert ir_of(tp) == expected


def test_bool_is_not_int() -> None:
    assert ir_of(Literal[True, 1]) == {"kind": "literal", "values": [True, 1]}
    assert ir_of(int | bool) == {"kind": "union", "variants": [{"kind": "int"}, {"kind": "bool"}]}


def test_literals() -> None:
    assert ir_of(Literal["a", 1, None, False]) == {
        "kind": "literal",
        "values": ["a", 1, None, False],
    }
    with pytest.raises(SchemaError, match=r"unsupported Literal value b'x'"):
        type_ir(Literal[b"x"])
    with pytest.raises(SchemaError, match="unsupported Literal value"):
        type_ir(Literal[Color.RED])


def test_enums() -> None:
    data, objects = type_ir(Color)
    assert orjson.loads(data)["root"]["type"] == {
        "kind": "enum",
        "name": "Color",
        "values": ["red", "green"],
        "description": "A color.",
    }
    assert objects == {"Color": ("enum", Color)}
    assert ir_of(Level) == {"kind": "enum", "name": "Level", "values": [1, 2]}
    assert ir_of(Mode) == {"kind": "enum", "name": "Mode", "values": ["fast"]}
    with pytest.raises(
        SchemaError, match=r"enum Mixed must have all-str or all-int values, not int, str"
    ):
        type_ir(Mixed)


# -- containers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "container"),
    [
        (list[int], "list"),
        (typing.List[int], "list"),  # noqa: UP006
        (cabc.Sequence[int], "list"),
        (typing.Sequence[int], "list"),
        (cabc.MutableSequence[int], "list"),
        (tuple[int, ...], "tuple"),
        (set[int], "set"),
        (frozenset[int], "frozenset"),
        (typing.AbstractSet[int], "frozenset"),
        (cabc.Set[int], "frozenset"),
    ],
)
def test_lists(tp: object, container: str) -> None:
    assert ir_of(tp) == {"kind": "list", "items": {"kind": "int"}, "container": container}


def test_bare_containers_hold_any() -> None:
    assert ir_of(list) == {"kind": "list", "items": {"kind": "any"}, "container": "list"}
    assert ir_of(tuple) == {"kind": "list", "items": {"kind": "any"}, "container": "tuple"}
    assert ir_of(dict) == {"kind": "dict", "values": {"kind": "any"}}


def test_tuples_and_dicts() -> None:
    assert ir_of(tuple[int, str]) == {"kind": "tuple", "items": [{"kind": "int"}, {"kind": "str"}]}
    assert ir_of(tuple[()]) == {"kind": "tuple", "items": []}
    assert ir_of(dict[str, float]) == {"kind": "dict", "values": {"kind": "float"}}
    assert ir_of(cabc.Mapping[str, int]) == {"kind": "dict", "values": {"kind": "int"}}
    with pytest.raises(
        SchemaError, match=r"dict keys must be str \(JSON object keys\), not <class 'int'>"
    ):
        type_ir(dict[int, str])


def test_unions() -> None:
    expected = {"kind": "union", "variants": [{"kind": "int"}, {"kind": "null"}]}
    assert ir_of(int | None) == expected
    assert ir_of(Optional[int]) == expected  # noqa: UP045
    assert ir_of(Union[int, str, None]) == {  # noqa: UP007
        "kind": "union",
        "variants": [{"kind": "int"}, {"kind": "str"}, {"kind": "null"}],
    }


# -- Annotated ------------------------------------------------------------------------------


def test_constraints_go_into_the_node() -> None:
    assert ir_of(Annotated[int, Param(ge=1, lt=10, multiple_of=2)]) == {
        "kind": "int",
        "ge": 1,
        "lt": 10,
        "multiple_of": 2,
    }
    assert ir_of(Annotated[str, Param(min_length=1, max_length=5, pattern="^a")]) == {
        "kind": "str",
        "min_length": 1,
        "max_length": 5,
        "pattern": "^a",
    }
    assert ir_of(Annotated[list[int], Param(min_items=1, max_items=3)]) == {
        "kind": "list",
        "items": {"kind": "int"},
        "container": "list",
        "min": 1,
        "max": 3,
    }


def test_annotated_types_markers_merge() -> None:
    tp = Annotated[float, at.Interval(gt=0, le=1.5), at.MultipleOf(0.5), Param(gt=0.25)]
    assert ir_of(tp) == {"kind": "float", "gt": 0.25, "le": 1.5, "multiple_of": 0.5}
    assert ir_of(Annotated[str, at.Len(2, 4)]) == {"kind": "str", "min_length": 2, "max_length": 4}
    assert ir_of(Annotated[dict[str, int], at.MinLen(1), at.MaxLen(2)]) == {
        "kind": "dict",
        "values": {"kind": "int"},
        "min": 1,
        "max": 2,
    }
    with pytest.raises(SchemaError, match="cannot be expressed in a schema"):
        type_ir(Annotated[int, at.Predicate(lambda x: x > 0)])


def test_pydantic_field_and_doc_are_read() -> None:
    tp = Annotated[str, pydantic.Field(description="d", max_length=3, pattern="x")]
    assert ir_of(tp) == {
        "kind": "annotated",
        "inner": {"kind": "str", "max_length": 3, "pattern": "x"},
        "meta": {"description": "d"},
    }
    assert ir_of(pydantic.PositiveInt) == {"kind": "int", "gt": 0}
    assert ir_of(Annotated[int, Doc("documented")]) == {
        "kind": "annotated",
        "inner": {"kind": "int"},
        "meta": {"description": "documented"},
    }


def test_plain_strings_and_unknown_metadata_are_ignored() -> None:
    assert ir_of(Annotated[int, "not a description", object()]) == {"kind": "int"}


def test_constraints_on_optional_apply_to_the_non_null_variant() -> None:
    assert ir_of(Annotated[int | None, Param(ge=0)]) == {
        "kind": "union",
        "variants": [{"kind": "int", "ge": 0}, {"kind": "null"}],
    }


def test_misplaced_constraints_are_errors() -> None:
    with pytest.raises(SchemaError, match=r"the constraints \(ge\) do not apply to a str value"):
        type_ir(Annotated[str, Param(ge=1)])
    with pytest.raises(SchemaError, match="multiple_of must be positive"):
        type_ir(Annotated[int, Param(multiple_of=0)])


def test_nested_documentation_becomes_an_annotated_node() -> None:
    tp = list[Annotated[str, Param(description="a tag", examples=("x",), deprecated=True)]]
    assert ir_of(tp) == {
        "kind": "list",
        "items": {
            "kind": "annotated",
            "inner": {"kind": "str"},
            "meta": {"description": "a tag", "examples": ["x"], "deprecated": True},
        },
        "container": "list",
    }


# -- functions ------------------------------------------------------------------------------


def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the weather
    for a city.

    Args:
        city: The city.
    """
    return city


def test_function_record() -> None:
    document = doc(get_weather)
    assert document == {
        "version": 1,
        "root": {
            "kind": "function",
            "record": {
                "name": "get_weather",
                "fields": [
                    {"name": "city", "type": {"kind": "str"}, "required": True},
                    {
                        "name": "unit",
                        "type": {"kind": "literal", "values": ["c", "f"]},
                        "required": False,
                        "default": "c",
                    },
                    {"name": "days", "type": {"kind": "int"}, "required": False, "default": 1},
                ],
                "description": "Get the weather for a city.",
            },
            "positional": 3,
        },
        "defs": {},
    }


class _Methods:
    def method(self, a: int, b: str = "x", *, c: bool = False) -> None: ...


def _positional(fn: typing.Callable[..., object], **kwargs: Any) -> int:
    root = orjson.loads(function_ir(fn, **kwargs)[0])["root"]
    return int(root.get("positional", 0))


def test_positional_counts_leading_positional_or_keyword_parameters() -> None:
    def keyword_only(*, a: int, b: int) -> None: ...

    def skipped_first(ctx: object, a: int, b: int) -> None: ...

    def skipped_middle(a: int, ctx: object, b: int) -> None: ...

    assert _positional(get_weather) == 3
    assert _positional(_Methods().method) == 2  # bound: self is not a parameter
    assert _positional(_Methods.method) == 0  # unbound: self comes first, left out
    assert _positional(keyword_only) == 0
    never = lambda name, annotation: name == "ctx"  # noqa: E731
    assert _positional(skipped_first, skip=never) == 0
    assert _positional(skipped_middle, skip=never) == 1


def test_a_declared_signature_is_called_by_name() -> None:
    def record(**kwargs: object) -> object:
        return get_weather(**kwargs)  # type: ignore[arg-type]

    record.__signature__ = inspect.signature(get_weather)  # type: ignore[attr-defined]
    record.__annotations__ = get_weather.__annotations__
    assert _positional(record) == 0
    assert _positional(functools.wraps(get_weather)(record)) == 0
    schema = ferrotool.function_schema(record)
    assert schema.call_json('{"city": "Oslo", "days": 2}') == "Oslo"


def test_field_meta_and_descriptions() -> None:
    def fn(
        a: Annotated[int, Param(description="from the marker", title="A")],
        b: str,
        c: Annotated[str, Param(examples=("x", "y"))] = "x",
    ) -> None: ...

    fields = fields_of(fn, descriptions={"a": "from the docstring", "b": "bee", "zzz": "unknown"})
    assert fields[0]["meta"] == {"title": "A", "description": "from the marker"}
    assert fields[1]["meta"] == {"description": "bee"}
    assert fields[2]["meta"] == {"examples": ["x", "y"]}


def test_skip_and_parameter_kinds() -> None:
    def fn(ctx: socket.socket, /, a: int, *args: int, b: str, **kwargs: int) -> None: ...

    skipped = {"ctx", "args", "kwargs"}
    names = [f["name"] for f in fields_of(fn, skip=lambda name, _: name in skipped)]
    assert names == ["a", "b"]
    with pytest.raises(SchemaError, match=r"parameter 'ctx' of fn: a positional-only parameter"):
        function_ir(fn)
    with pytest.raises(SchemaError, match=r"parameter 'args' of fn: \*args cannot be passed"):
        function_ir(fn, skip=lambda name, _: name == "ctx")
    with pytest.raises(
        SchemaError, match=r"parameter 'kwargs' of fn: \*\*kwargs has no fixed schema"
    ):
        function_ir(fn, skip=lambda name, _: name in {"ctx", "args"})


def test_skip_sees_the_resolved_annotation() -> None:
    seen: list[tuple[str, object]] = []

    def fn(a: int, b: "list[str]") -> None: ...

    function_ir(fn, skip=lambda name, tp: seen.append((name, tp)) or False)
    assert seen == [("a", int), ("b", list[str])]


def test_missing_annotation_is_an_error() -> None:
    def fn(x, y: int) -> None:  # type: ignore[no-untyped-def]
        ...

    with pytest.raises(SchemaError, match=r"parameter 'x' of fn: the parameter has no annotation"):
        function_ir(fn)


def test_unsupported_type_names_parameter_and_type() -> None:
    def create_order(x: socket.socket) -> None: ...

    message = (
        "cannot derive a schema for parameter 'x' of create_order: "
        "unsupported type <class 'socket.socket'>"
    )
    with pytest.raises(SchemaError) as info:
        function_ir(create_order)
    assert str(info.value) == message
    assert isinstance(info.value, TypeError)


def test_nested_error_names_the_field_path() -> None:
    @dataclasses.dataclass
    class Contact:
        email: socket.socket

    @dataclasses.dataclass
    class Buyer:
        contact: Contact

    def create_order(customer: list[Buyer]) -> None: ...

    with pytest.raises(
        SchemaError,
        match=(
            r"field 'create_order.customer.contact.email': "
            r"unsupported type <class 'socket.socket'>"
        ),
    ):
        function_ir(create_order)


def test_methods_partials_and_callable_objects() -> None:
    class Tools:
        def search(self, query: str, limit: int = 10) -> None:
            """Search."""

        @classmethod
        def make(cls, name: str) -> None: ...

        def __call__(self, text: str) -> None:
            """Call me."""

    expected = ["query", "limit"]
    assert [f["name"] for f in fields_of(Tools().search)] == expected
    assert [f["name"] for f in fields_of(Tools.search)] == expected
    assert [f["name"] for f in fields_of(Tools.make)] == ["name"]
    assert [f["name"] for f in fields_of(functools.partial(Tools().search, "q"))] == ["limit"]
    document = doc(Tools())
    assert document["root"]["record"]["name"] == "Tools"
    assert [f["name"] for f in document["root"]["record"]["fields"]] == ["text"]


def test_wrapped_functions_use_the_wrapped_signature() -> None:
    def tool(a: int) -> None: ...

    @functools.wraps(tool)
    def wrapper(*args: Any, **kwargs: Any) -> None: ...

    assert [f["name"] for f in fields_of(wrapper)] == ["a"]


def test_defaults_as_json() -> None:
    @dataclasses.dataclass
    class Box:
        n: int

    def fn(
        a: Color = Color.RED,
        b: dt.datetime = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        c: tuple[int, ...] = (1, 2),
        d: frozenset[int] = frozenset({3, 1}),
        e: decimal.Decimal = decimal.Decimal("1.50"),
        f: dt.timedelta = dt.timedelta(days=1, hours=2, seconds=3.5),
        g: pathlib.Path = pathlib.Path("/tmp"),
        h: Box = Box(1),  # noqa: B008
        i: object = socket.AF_INET,
        j: float = float("inf"),
        k: object = object(),
        n: int = 2**70,
    ) -> None: ...

    defaults = {f["name"]: f.get("default", "<none>") for f in fields_of(fn)}
    assert defaults == {
        "a": "red",
        "b": "2024-01-02T03:04:05+00:00",
        "c": [1, 2],
        "d": [1, 3],
        "e": "1.50",
        "f": "P1DT2H3.5S",
        "g": "/tmp",
        "h": {"n": 1},
        "i": int(socket.AF_INET),
        "j": "<none>",
        "k": "<none>",
        "n": "<none>",
    }
    assert not any(f["required"] for f in fields_of(fn))


def test_docstring_summary() -> None:
    assert docstring_summary(None) is None
    assert docstring_summary("   ") is None
    assert docstring_summary("One.\n    Two.\n    \n    Three.") == "One. Two."


# -- records --------------------------------------------------------------------------------


def test_dataclass_records() -> None:
    def create_order(customer: Customer, items: list[Item], note: str | None = None) -> None: ...

    data, objects = function_ir(create_order)
    document = orjson.loads(data)
    assert list(document["defs"]) == ["Customer", "Item"]
    assert document["defs"]["Item"] == {
        "name": "Item",
        "fields": [
            {"name": "sku", "type": {"kind": "str"}, "required": True},
            {"name": "qty", "type": {"kind": "int", "ge": 1}, "required": True},
            {"name": "price", "type": {"kind": "float"}, "required": True},
        ],
    }
    assert objects == {"Customer": ("dataclass", Customer), "Item": ("dataclass", Item)}


def test_dataclass_field_rules() -> None:
    @dataclasses.dataclass(kw_only=True)
    class Options:
        """Options.

        More.
        """

        a: int
        b: int = 1
        c: list[int] = dataclasses.field(default_factory=list)
        d: int = dataclasses.field(default=0, init=False)
        e: dataclasses.InitVar[int] = 5
        f: typing.ClassVar[int] = 3

    record = orjson.loads(type_ir(Options)[0])["defs"]["Options"]
    assert record["description"] == "Options."
    assert [(f["name"], f["required"], f.get("default")) for f in record["fields"]] == [
        ("a", True, None),
        ("b", False, 1),
        ("c", False, None),
    ]

    @dataclasses.dataclass
    class NeedsInit:
        x: dataclasses.InitVar[int]

    with pytest.raises(SchemaError, match="InitVar without a default"):
        type_ir(NeedsInit)


def test_typeddict_records() -> None:
    class Base(TypedDict):
        a: int

    class Child(Base, total=False):
        b: str
        c: Required[bool]
        d: ReadOnly[NotRequired[Annotated[int, Param(description="dee")]]]

    data, objects = type_ir(Child)
    record = orjson.loads(data)["defs"]["Child"]
    assert "description" not in record
    assert [(f["name"], f["required"]) for f in record["fields"]] == [
        ("a", True),
        ("b", False),
        ("c", True),
        ("d", False),
    ]
    assert record["fields"][3]["meta"] == {"description": "dee"}
    assert objects == {"Child": ("typeddict", Child)}


def test_namedtuple_records() -> None:
    class Pair(NamedTuple):
        left: int
        right: str = "r"

    data, objects = type_ir(Pair)
    record = orjson.loads(data)["defs"]["Pair"]
    assert record == {
        "name": "Pair",
        "fields": [
            {"name": "left", "type": {"kind": "int"}, "required": True},
            {"name": "right", "type": {"kind": "str"}, "required": False, "default": "r"},
        ],
    }
    assert objects == {"Pair": ("namedtuple", Pair)}


def test_pydantic_models() -> None:
    class Address(pydantic.BaseModel):
        city: str

    class User(pydantic.BaseModel):
        name: str
        home: Address

    data, objects = type_ir(User)
    node = orjson.loads(data)["root"]["type"]
    assert node == {"kind": "model", "name": "User", "schema": User.model_json_schema()}
    assert objects == {"User": ("model", User)}


def test_recursive_records() -> None:
    data, objects = type_ir(fwd.Tree)
    document = orjson.loads(data)
    assert document["root"]["type"] == {"kind": "ref", "name": "Tree"}
    assert document["defs"]["Tree"]["description"] == "A tree of integers."
    children = document["defs"]["Tree"]["fields"][1]
    assert children == {
        "name": "children",
        "type": {"kind": "list", "items": {"kind": "ref", "name": "Tree"}, "container": "list"},
        "required": False,
    }
    assert objects == {"Tree": ("dataclass", fwd.Tree)}


def test_mutually_recursive_typeddicts() -> None:
    document = orjson.loads(type_ir(fwd.Ping)[0])
    assert list(document["defs"]) == ["Ping", "Pong"]
    assert document["defs"]["Ping"]["fields"][0]["type"] == {
        "kind": "union",
        "variants": [{"kind": "ref", "name": "Pong"}, {"kind": "null"}],
    }
    assert [(f["name"], f["required"]) for f in document["defs"]["Pong"]["fields"]] == [
        ("ping", True),
        ("count", False),
    ]


def test_postponed_annotations() -> None:
    document = doc(fwd.forward)
    record = document["root"]["record"]
    assert record["description"] == "Use types declared later."
    assert [f["type"] for f in record["fields"]] == [
        {"kind": "ref", "name": "Tree"},
        {"kind": "ref", "name": "Ping"},
        {"kind": "literal", "values": ["a", "b"]},
        {"kind": "union", "variants": [{"kind": "ref", "name": "Later"}, {"kind": "null"}]},
    ]
    fields = doc(fwd.annotated)["root"]["record"]["fields"]
    assert fields[0] == {
        "name": "n",
        "type": {"kind": "int", "ge": 1},
        "required": True,
        "meta": {"description": "How many"},
    }
    partial = doc(fwd.annotated)["defs"]["Partial"]
    assert [(f["name"], f["required"]) for f in partial["fields"]] == [
        ("must", True),
        ("may", False),
    ]
    assert orjson.loads(type_ir(fwd.Point)[0])["defs"]["Point"]["fields"][1]["default"] == 0.0


def test_nested_string_forward_reference() -> None:
    def fn(trees: "list[fwd.Tree]", more: typing.List["int"]) -> None: ...  # noqa: UP006

    types_ = [f["type"] for f in fields_of(fn)]
    assert types_[1] == {"kind": "list", "items": {"kind": "int"}, "container": "list"}


def test_unresolvable_annotation_is_a_schema_error() -> None:
    def fn(x: "Nope") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(
        SchemaError, match=r"cannot resolve the annotations of fn: name 'Nope' is not defined"
    ):
        function_ir(fn)


def test_name_collisions_are_disambiguated_in_order() -> None:
    def make() -> type:
        @dataclasses.dataclass
        class Customer:
            other: int

        return Customer

    other = make()

    def fn(a: Customer, b: other, c: Customer) -> None:  # type: ignore[valid-type]
        ...

    data, objects = function_ir(fn)
    fields = orjson.loads(data)["root"]["record"]["fields"]
    assert [f["type"] for f in fields] == [
        {"kind": "ref", "name": "Customer"},
        {"kind": "ref", "name": "Customer_2"},
        {"kind": "ref", "name": "Customer"},
    ]
    assert objects == {"Customer": ("dataclass", Customer), "Customer_2": ("dataclass", other)}


def test_unsupported_generics() -> None:
    T = typing.TypeVar("T")
    with pytest.raises(SchemaError, match="unsupported type ~T"):
        type_ir(list[T])  # type: ignore[valid-type]
    with pytest.raises(SchemaError, match="unsupported type"):
        type_ir(bytes)


def test_speed_of_a_twelve_parameter_function() -> None:
    def tool(
        a: str,
        b: int,
        c: float,
        d: bool,
        e: Literal["x", "y"] = "x",
        f: int | None = None,
        g: list[str] | None = None,
        h: dict[str, int] | None = None,
        i: Annotated[int, Param(ge=0, le=10, description="i")] = 1,
        j: Color = Color.RED,
        k: dt.datetime | None = None,
        m: cabc.Sequence[float] = (),
    ) -> None:
        """A tool."""

    per_call = min(timeit.repeat(lambda: function_ir(tool), number=200, repeat=5)) / 200
    # Generous bound for slow CI machines; typically well under 50 µs.
    assert per_call < 500e-6
