"""Benchmark cases: the signatures S1 to S5, their payloads and each implementation under test.

Every signature is built by a factory (`make_s1`, `make_s2`, `make_s3`) that defines new
classes and a new function object on each call, so the "derive" benchmark can hand each
library a function it has never seen.

Peers are optional: a library that is not installed is left out (its column is skipped).
"""

import dataclasses
import datetime as dt
import enum
import functools
import importlib.util
import operator
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NamedTuple

import orjson
import typing_extensions

import ferrotool

HAS_PYDANTIC = importlib.util.find_spec("pydantic") is not None
HAS_MSGSPEC = importlib.util.find_spec("msgspec") is not None
HAS_JSONSCHEMA_RS = importlib.util.find_spec("jsonschema_rs") is not None
HAS_JSONSCHEMA_VALIDATOR = hasattr(ferrotool, "JsonSchemaValidator")

# Names of the implementations, in table order.
FLOOR = "floor"
FT_CALL = "ferrotool call_json"
FT_VALIDATE = "ferrotool validate_json + call"
PYDANTIC = "pydantic"
MSGSPEC = "msgspec"
MSGSPEC_STRUCT = "msgspec, Struct records"
JSONSCHEMA_RS = "jsonschema-rs"
FT_DERIVE = "ferrotool function_schema"
PYDANTIC_DERIVE = "pydantic TypeAdapter + json_schema"
FT_COMPILE = "ferrotool JsonSchemaValidator"
JSONSCHEMA_RS_COMPILE = "jsonschema-rs validator_for"


def _qty_markers() -> tuple[object, ...]:
    """``qty >= 1`` spelled once for each library: each reads its own marker, ignores the rest."""
    markers: list[object] = [ferrotool.Param(ge=1)]
    if HAS_PYDANTIC:
        import annotated_types

        markers.append(annotated_types.Ge(1))
    if HAS_MSGSPEC:
        import msgspec

        markers.append(msgspec.Meta(ge=1))
    return tuple(markers)


QTY_MARKERS = _qty_markers()


# --- signatures ------------------------------------------------------------------------------


def make_s1() -> Callable[..., Any]:
    """S1: three scalar parameters, two with defaults."""

    def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
        """Get the weather forecast for a city."""
        return city

    return get_weather


def make_s2() -> Callable[..., Any]:
    """S2 (and S4, S5): two dataclass records, one list of them, an optional note."""

    @dataclass
    class Customer:
        id: int
        name: str
        email: str
        vip: bool

    @dataclass
    class Item:
        sku: str
        qty: Annotated[int, *QTY_MARKERS]
        price: float

    def create_order(customer: Customer, items: list[Item], note: str | None = None) -> int:
        """Create an order for a customer."""
        return len(items)

    return create_order


def make_s3() -> Callable[..., Any]:
    """S3: twelve parameters of assorted types."""

    class Priority(enum.StrEnum):
        LOW = "low"
        NORMAL = "normal"
        HIGH = "high"

    def schedule_job(
        name: str,
        retries: int,
        timeout: float,
        dry_run: bool,
        tags: list[str],
        limits: dict[str, int],
        start_at: dt.datetime,
        mode: Literal["fast", "safe"],
        priority: Priority = Priority.NORMAL,
        parent_id: int | None = None,
        labels: list[str] | None = None,
        ratio: float = 0.5,
    ) -> str:
        """Schedule a job."""
        return name

    return schedule_job


# --- payloads --------------------------------------------------------------------------------

S1_PAYLOAD: dict[str, Any] = {"city": "Paris", "unit": "f", "days": 3}


def _items(n: int) -> list[dict[str, Any]]:
    return [{"sku": f"SKU-{i:04d}", "qty": 1 + i % 5, "price": 9.99 + i} for i in range(n)]


def _order(n_items: int) -> dict[str, Any]:
    return {
        "customer": {"id": 42, "name": "Ada Lovelace", "email": "ada@example.com", "vip": True},
        "items": _items(n_items),
        "note": "Leave at the door.",
    }


S2_PAYLOAD = _order(3)
S3_PAYLOAD: dict[str, Any] = {
    "name": "nightly-report",
    "retries": 3,
    "timeout": 12.5,
    "dry_run": False,
    "tags": ["reports", "nightly", "finance"],
    "limits": {"cpu": 2, "memory_mb": 512, "workers": 4},
    "start_at": "2025-03-01T09:30:00Z",
    "mode": "safe",
    "priority": "high",
    "parent_id": 1234,
    "labels": ["team-a", "billing"],
    "ratio": 0.75,
}
S4_PAYLOAD = _order(200)
S5_PAYLOAD = _order(3)
S5_PAYLOAD["items"][2]["qty"] = "three"


class Case(NamedTuple):
    """One signature with one payload."""

    name: str
    description: str
    factory: Callable[[], Callable[..., Any]]
    payload: dict[str, Any]
    valid: bool

    @property
    def raw(self) -> bytes:
        return orjson.dumps(self.payload)


CASES: tuple[Case, ...] = (
    Case("S1", "get_weather, 3 scalars", make_s1, S1_PAYLOAD, True),
    Case("S2", "create_order, 2 records, 3 items", make_s2, S2_PAYLOAD, True),
    Case("S3", "12 parameters", make_s3, S3_PAYLOAD, True),
    Case("S4", "S2 with 200 items", make_s2, S4_PAYLOAD, True),
    Case("S5", 'S2 with items[2].qty = "three"', make_s2, S5_PAYLOAD, False),
)
CASES_BY_NAME = {case.name: case for case in CASES}


# --- implementations: validate raw JSON into typed arguments and call the function ----------
#
# Each builder returns a callable taking the raw JSON bytes. On a valid payload it returns the
# function's result; on an invalid one it returns the full list of errors that the library
# reports (the exception is caught and its errors read), so the error path is measured to the
# point where a caller has the errors in hand.


def _kwargs_typeddict(fn: Callable[..., Any], convert: Callable[[Any], Any] = lambda h: h) -> Any:
    """A TypedDict of the function's parameters (each hint through ``convert``); defaulted ones
    are ``NotRequired``."""
    import inspect

    hints = typing_extensions.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        hint = convert(hints[name])
        fields[name] = hint if param.default is param.empty else typing_extensions.NotRequired[hint]
    return typing_extensions.TypedDict(f"{fn.__name__}_kwargs", fields)  # type: ignore[operator]


def floor(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """Parse and call: no validation and no typed values (records stay dicts)."""
    loads = orjson.loads

    def run(raw: bytes) -> Any:
        return fn(**loads(raw))

    return run


def ferrotool_call(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """``schema.call_json(raw)``: parse, validate, build typed values and call, in Rust."""
    call_json = ferrotool.function_schema(fn).call_json
    error = ferrotool.ValidationError

    def run(raw: bytes) -> Any:
        try:
            return call_json(raw)
        except error as exc:
            return exc.errors

    return run


def ferrotool_validate(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """``fn(**schema.validate_json(raw))``: the kwargs come back to Python, then the call."""
    validate_json = ferrotool.function_schema(fn).validate_json
    error = ferrotool.ValidationError

    def run(raw: bytes) -> Any:
        try:
            return fn(**validate_json(raw))
        except error as exc:
            return exc.errors

    return run


def pydantic_call(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """``TypeAdapter(fn).validate_json(raw)``: pydantic's call schema validates and calls fn."""
    import pydantic

    adapter: Any = pydantic.TypeAdapter(fn)  # type: ignore[arg-type]
    validate_json = adapter.validate_json
    error = pydantic.ValidationError

    def run(raw: bytes) -> Any:
        try:
            return validate_json(raw)
        except error as exc:
            return exc.errors()

    return run


def msgspec_call(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """``fn(**Decoder(KwargsTypedDict).decode(raw))``: dataclasses and enums built by msgspec.

    msgspec stops at the first error: its "list" is one message.
    """
    return _msgspec_run(fn, _kwargs_typeddict(fn))


def _msgspec_run(fn: Callable[..., Any], kwargs_type: Any) -> Callable[[bytes], Any]:
    """``fn(**decode(raw))`` with msgspec decoding into ``kwargs_type``; the error as a list."""
    import msgspec

    decode = msgspec.json.Decoder(kwargs_type).decode
    error = msgspec.ValidationError

    def run(raw: bytes) -> Any:
        try:
            return fn(**decode(raw))
        except error as exc:
            return [str(exc)]

    return run


def _as_structs(hint: Any, made: dict[type, type]) -> Any:
    """``hint`` with every dataclass in it replaced by a `msgspec.Struct` of the same fields."""
    import msgspec

    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint not in made:
            hints = typing_extensions.get_type_hints(hint, include_extras=True)
            made[hint] = msgspec.defstruct(
                hint.__name__,
                [(f.name, _as_structs(hints[f.name], made)) for f in dataclasses.fields(hint)],
            )
        return made[hint]
    origin, args = typing_extensions.get_origin(hint), typing_extensions.get_args(hint)
    if origin is Annotated:
        return Annotated[(_as_structs(args[0], made), *args[1:])]
    if origin is list:
        return list[_as_structs(args[0], made)]  # type: ignore[misc]
    if isinstance(hint, types.UnionType):
        return functools.reduce(operator.or_, (_as_structs(arg, made) for arg in args))
    return hint


def msgspec_struct_call(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """`msgspec_call` with the records decoded into msgspec's own `Struct` type, not dataclasses.

    Not the same work as the others (the function gets Structs, not the dataclasses its
    annotations name): it shows what building records costs when the record type is msgspec's.
    """
    made: dict[type, type] = {}
    return _msgspec_run(fn, _kwargs_typeddict(fn, lambda hint: _as_structs(hint, made)))


def jsonschema_rs_call(fn: Callable[..., Any]) -> Callable[[bytes], Any]:
    """``is_valid(orjson.loads(raw))`` then ``fn(**parsed)``; ``iter_errors`` when invalid.

    Checks only: it builds no typed values (records stay dicts, the date-time a string). The
    schema is the one ferrotool derives for the function.
    """
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(ferrotool.function_schema(fn).json_schema())
    is_valid = validator.is_valid
    iter_errors = validator.iter_errors
    loads = orjson.loads

    def run(raw: bytes) -> Any:
        parsed = loads(raw)
        if is_valid(parsed):
            return fn(**parsed)
        return list(iter_errors(parsed))

    return run


def call_implementations() -> dict[str, Callable[[Callable[..., Any]], Callable[[bytes], Any]]]:
    """The builders of every installed implementation, in table order."""
    builders: dict[str, Callable[[Callable[..., Any]], Callable[[bytes], Any]]] = {
        FLOOR: floor,
        FT_CALL: ferrotool_call,
        FT_VALIDATE: ferrotool_validate,
    }
    if HAS_PYDANTIC:
        builders[PYDANTIC] = pydantic_call
    if HAS_MSGSPEC:
        builders[MSGSPEC] = msgspec_call
        builders[MSGSPEC_STRUCT] = msgspec_struct_call
    if HAS_JSONSCHEMA_RS:
        builders[JSONSCHEMA_RS] = jsonschema_rs_call
    return builders


# --- implementations: derive a schema and validator from a fresh function --------------------


def ferrotool_derive(fn: Callable[..., Any]) -> object:
    """``function_schema(fn)``: the JSON Schema bytes and the compiled validator."""
    return ferrotool.function_schema(fn)


def pydantic_derive(fn: Callable[..., Any]) -> object:
    """``TypeAdapter(fn)`` (validator and serializer) plus ``.json_schema()``."""
    import pydantic

    adapter: Any = pydantic.TypeAdapter(fn)  # type: ignore[arg-type]
    return adapter, adapter.json_schema()


def derive_implementations() -> dict[str, Callable[[Callable[..., Any]], object]]:
    """The derive step of every installed implementation, in table order."""
    builders: dict[str, Callable[[Callable[..., Any]], object]] = {FT_DERIVE: ferrotool_derive}
    if HAS_PYDANTIC:
        builders[PYDANTIC_DERIVE] = pydantic_derive
    return builders


# --- implementations: JSON Schema documents --------------------------------------------------


def derived_schema(case: Case) -> dict[str, Any]:
    """The JSON Schema ferrotool derives for the case's function."""
    return ferrotool.function_schema(case.factory()).json_schema()


def compile_implementations() -> dict[str, Callable[[Any], object]]:
    """Compile a validator from a ready JSON Schema document."""
    builders: dict[str, Callable[[Any], object]] = {}
    if HAS_JSONSCHEMA_VALIDATOR:
        builders[FT_COMPILE] = ferrotool.JsonSchemaValidator
    if HAS_JSONSCHEMA_RS:
        import jsonschema_rs

        builders[JSONSCHEMA_RS_COMPILE] = jsonschema_rs.validator_for
    return builders


def mapping_validators(schema: Mapping[str, Any]) -> dict[str, Any]:
    """One compiled validator per installed JSON Schema library, for the same document."""
    validators: dict[str, Any] = {}
    if HAS_JSONSCHEMA_VALIDATOR:
        validators[FT_COMPILE] = ferrotool.JsonSchemaValidator(schema)
    if HAS_JSONSCHEMA_RS:
        import jsonschema_rs

        validators[JSONSCHEMA_RS] = jsonschema_rs.validator_for(dict(schema))
    return validators


def is_dataclass_instance(value: object) -> bool:
    """Whether ``value`` is a dataclass instance (not a class)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)
