"""Schemas and validators derived from Python types: `function_schema` and `type_schema`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast, final, overload

import orjson

from ferrotool import _core
from ferrotool._schema.introspect import function_ir, type_ir
from ferrotool._values.json import JsonValue

R = TypeVar("R")
T = TypeVar("T")

_DEFAULT_MAX_DEPTH = 128
_DEFAULT_MAX_BYTES = 8 * 1024 * 1024
_DEFAULT_MAX_ERRORS = 20
# The JSON parsers bound nesting themselves a little above this.
_MAX_DEPTH_CEILING = 128


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Bounds that protect a validator from hostile or accidental input.

    Attributes:
        max_depth: The deepest nesting of arrays and objects accepted, 1 to 128; deeper input
            is rejected with a ``nesting_too_deep`` error (never a crash).
        max_bytes: The largest raw JSON input accepted, in bytes (``input_too_large``).
        max_errors: How many errors are collected before validation stops.
    """

    max_depth: int = _DEFAULT_MAX_DEPTH
    max_bytes: int = _DEFAULT_MAX_BYTES
    max_errors: int = _DEFAULT_MAX_ERRORS

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= _MAX_DEPTH_CEILING:
            raise ValueError(
                f"max_depth must be between 1 and {_MAX_DEPTH_CEILING}, got {self.max_depth}"
            )
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {self.max_bytes}")
        if self.max_errors < 1:
            raise ValueError(f"max_errors must be positive, got {self.max_errors}")


DEFAULT_LIMITS = Limits()
"""The limits used when none are given: depth 128, 8 MiB, 20 errors."""


@final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FunctionSchema(Generic[R]):
    """The JSON Schema of a function's parameters and the compiled validator behind it.

    Built once by `function_schema`; every method runs in the Rust core.

    Attributes:
        name: The function's name.
        description: The first paragraph of the function's docstring, if any.
        schema_json: The parameters' JSON Schema (draft 2020-12), serialized; byte-stable.
        function: The function itself.
        lenient: Whether numeric and boolean strings (``"5"``, ``"true"``) are accepted.
        limits: The input limits in force.
        validate_json: Parses and validates raw JSON arguments (``str`` or ``bytes``) in one
            pass and returns the keyword arguments as typed Python values (records built, enums,
            datetimes, tuples, sets). Raises `ValidationError` listing every problem.
        validate_python: Validates an already parsed mapping of arguments the same way.
        call_json: Validates raw JSON arguments and calls the function with them.
        validator: The compiled validator these methods belong to.
    """

    name: str
    description: str | None
    schema_json: bytes
    function: Callable[..., R]
    lenient: bool
    limits: Limits
    validate_json: Callable[[str | bytes], dict[str, object]] = field(repr=False)
    validate_python: Callable[[Mapping[str, object]], dict[str, object]] = field(repr=False)
    call_json: Callable[[str | bytes], R] = field(repr=False)
    validator: _core.TypedValidator = field(repr=False)

    def json_schema(self) -> dict[str, JsonValue]:
        """Return a fresh copy of the parameters' JSON Schema."""
        schema = orjson.loads(self.schema_json)
        assert isinstance(schema, dict)
        return schema


@final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TypeSchema(Generic[T]):
    """The JSON Schema of one type and the compiled validator behind it.

    Attributes:
        schema_json: The JSON Schema (draft 2020-12), serialized; byte-stable.
        lenient: Whether numeric and boolean strings are accepted.
        limits: The input limits in force.
        validate_json: Parses and validates raw JSON in one pass into a typed value.
        validate_python: Validates an already parsed JSON-like value into a typed value.
    """

    schema_json: bytes
    lenient: bool
    limits: Limits
    validate_json: Callable[[str | bytes], T] = field(repr=False)
    validate_python: Callable[[object], T] = field(repr=False)

    def json_schema(self) -> dict[str, JsonValue]:
        """Return a fresh copy of the JSON Schema."""
        schema = orjson.loads(self.schema_json)
        assert isinstance(schema, dict)
        return schema


def _validator(
    ir: bytes,
    objects: Mapping[str, tuple[str, object]],
    function: Callable[..., object] | None,
    lenient: bool,
    limits: Limits,
) -> _core.TypedValidator:
    return _core.TypedValidator(
        ir,
        dict(objects),
        function=function,
        lenient=lenient,
        max_depth=limits.max_depth,
        max_bytes=limits.max_bytes,
        max_errors=limits.max_errors,
    )


def function_schema(
    fn: Callable[..., R],
    *,
    lenient: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    skip: Callable[[str, object], bool] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> FunctionSchema[R]:
    """Derive the JSON Schema of a function's parameters and compile its validator.

    Args:
        fn: A typed function, bound method or callable object.
        lenient: Accept numeric and boolean strings (``"5"`` for an ``int``); JSON semantics by
            default.
        limits: Bounds on input size, nesting and the number of errors reported.
        skip: Called with each parameter's name and annotation; true leaves it out of the schema
            (a value supplied at call time rather than by the model).
        descriptions: Parameter descriptions to use where the annotation gives none.

    Returns:
        The schema and its validator.

    Raises:
        SchemaError: A parameter cannot become a schema; the message names it and its type.
    """
    ir, objects = function_ir(fn, skip=skip, descriptions=descriptions)
    validator = _validator(ir, objects, fn, lenient, limits)
    record = orjson.loads(ir)["root"]["record"]
    return FunctionSchema(
        name=record["name"],
        description=record.get("description"),
        schema_json=validator.schema_json,
        function=fn,
        lenient=lenient,
        limits=limits,
        validate_json=cast("Callable[[str | bytes], dict[str, object]]", validator.validate_json),
        validate_python=cast(
            "Callable[[Mapping[str, object]], dict[str, object]]", validator.validate_python
        ),
        call_json=cast("Callable[[str | bytes], R]", validator.call_json),
        validator=validator,
    )


@overload
def type_schema(
    tp: type[T], *, lenient: bool = False, limits: Limits = DEFAULT_LIMITS
) -> TypeSchema[T]: ...
@overload
def type_schema(
    tp: object, *, lenient: bool = False, limits: Limits = DEFAULT_LIMITS
) -> TypeSchema[object]: ...
def type_schema(
    tp: object, *, lenient: bool = False, limits: Limits = DEFAULT_LIMITS
) -> TypeSchema[T] | TypeSchema[object]:
    """Derive the JSON Schema of one type and compile its validator.

    Args:
        tp: Any supported annotation: ``int``, ``list[Item]``, a dataclass, ``str | None``...
        lenient: Accept numeric and boolean strings; JSON semantics by default.
        limits: Bounds on input size, nesting and the number of errors reported.

    Returns:
        The schema and its validator.

    Raises:
        SchemaError: The type cannot become a schema.
    """
    ir, objects = type_ir(tp)
    validator = _validator(ir, objects, None, lenient, limits)
    return TypeSchema(
        schema_json=validator.schema_json,
        lenient=lenient,
        limits=limits,
        validate_json=validator.validate_json,
        validate_python=validator.validate_python,
    )


__all__ = [
    "DEFAULT_LIMITS",
    "FunctionSchema",
    "Limits",
    "TypeSchema",
    "function_schema",
    "type_schema",
]
