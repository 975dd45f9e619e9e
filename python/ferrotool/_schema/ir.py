"""The type IR as typed dicts: the exact JSON form of ``rust/core/src/ir.rs`` (version 1).

These are for typing only; `ferrotool._schema.introspect` builds plain dicts of these shapes and
serializes them with orjson. Keys that ``ir.rs`` skips when empty are ``NotRequired`` here.
"""

from __future__ import annotations

from typing import Literal, NotRequired, Required, TypeAlias, TypedDict

from ferrotool._values.json import JsonValue

IR_VERSION: Literal[1] = 1
"""The IR version this module emits (``ir::IR_VERSION``)."""

StringValueName: TypeAlias = Literal[
    "datetime", "date", "time", "timedelta", "uuid", "decimal", "path"
]
"""Standard-library values carried as JSON strings (``ir::StringValue``)."""

ContainerName: TypeAlias = Literal["list", "tuple", "set", "frozenset"]
"""Which Python container a list-like value becomes (``ir::Container``)."""


class MetaIR(TypedDict, total=False):
    """Documentation on a type or a field (``ir::Meta``); never affects validation."""

    title: str
    description: str
    examples: list[JsonValue]
    deprecated: bool


class AnyIR(TypedDict):
    """``object`` / ``typing.Any``."""

    kind: Literal["any"]


class NullIR(TypedDict):
    """``None``."""

    kind: Literal["null"]


class BoolIR(TypedDict):
    """``bool``."""

    kind: Literal["bool"]


class IntIR(TypedDict, total=False):
    """``int`` with optional bounds (``ir::NumberBounds`` flattened)."""

    kind: Required[Literal["int"]]
    ge: int | float
    gt: int | float
    le: int | float
    lt: int | float
    multiple_of: int | float


class FloatIR(TypedDict, total=False):
    """``float`` with optional bounds (``ir::NumberBounds`` flattened)."""

    kind: Required[Literal["float"]]
    ge: int | float
    gt: int | float
    le: int | float
    lt: int | float
    multiple_of: int | float


class StrIR(TypedDict, total=False):
    """``str`` with optional bounds (``ir::StringBounds`` flattened)."""

    kind: Required[Literal["str"]]
    min_length: int
    max_length: int
    pattern: str


class StrValueIR(TypedDict):
    """A standard-library value sent as a string (``datetime``, ``UUID``, ...)."""

    kind: Literal["str_value"]
    value: StringValueName


class LiteralIR(TypedDict):
    """``Literal[...]`` of strings, integers, booleans and ``None``."""

    kind: Literal["literal"]
    values: list[JsonValue]


class EnumIR(TypedDict):
    """An ``enum.Enum`` subclass with all-str or all-int values; ``name`` keys the side table."""

    kind: Literal["enum"]
    name: str
    values: list[JsonValue]
    description: NotRequired[str]


class ListIR(TypedDict):
    """``list[T]``, ``Sequence[T]``, ``tuple[T, ...]``, ``set[T]``, ``frozenset[T]``."""

    kind: Literal["list"]
    items: TypeIR
    container: ContainerName
    min: NotRequired[int]
    max: NotRequired[int]


class TupleIR(TypedDict):
    """``tuple[A, B, C]``: a fixed-length tuple."""

    kind: Literal["tuple"]
    items: list[TypeIR]


class DictIR(TypedDict):
    """``dict[str, T]`` / ``Mapping[str, T]``."""

    kind: Literal["dict"]
    values: TypeIR
    min: NotRequired[int]
    max: NotRequired[int]


class UnionIR(TypedDict):
    """``A | B | ...``; variants are tried in order."""

    kind: Literal["union"]
    variants: list[TypeIR]


class RefIR(TypedDict):
    """A record defined in the document's ``defs``."""

    kind: Literal["ref"]
    name: str


class ModelIR(TypedDict):
    """A pydantic model with its own JSON Schema; ``name`` keys the side table."""

    kind: Literal["model"]
    name: str
    schema: dict[str, JsonValue]


class AnnotatedIR(TypedDict):
    """Documentation on a nested type."""

    kind: Literal["annotated"]
    inner: TypeIR
    meta: MetaIR


TypeIR: TypeAlias = (
    AnyIR
    | NullIR
    | BoolIR
    | IntIR
    | FloatIR
    | StrIR
    | StrValueIR
    | LiteralIR
    | EnumIR
    | ListIR
    | TupleIR
    | DictIR
    | UnionIR
    | RefIR
    | ModelIR
    | AnnotatedIR
)
"""One Python type, as data (``ir::Type``)."""


class FieldIR(TypedDict):
    """One field of a record or one parameter of a function (``ir::Field``)."""

    name: str
    type: TypeIR
    required: bool
    default: NotRequired[JsonValue]
    meta: NotRequired[MetaIR]


class RecordIR(TypedDict):
    """A dataclass, ``TypedDict``, ``NamedTuple`` or a function's parameters (``ir::Record``)."""

    name: str
    description: NotRequired[str]
    fields: list[FieldIR]
    closed: NotRequired[bool]


class FunctionRootIR(TypedDict):
    """The document describes a function's parameters.

    ``positional`` counts the record's leading fields that are parameters which may be passed
    by position (positional-or-keyword, in order, with no parameter left out before them): the
    validator passes those positionally when it calls the function.
    """

    kind: Literal["function"]
    record: RecordIR
    positional: NotRequired[int]


class TypeRootIR(TypedDict):
    """The document describes a single type."""

    kind: Literal["type"]
    type: TypeIR


class RootIR(TypedDict):
    """A complete IR document (``ir::Root``)."""

    version: int
    root: FunctionRootIR | TypeRootIR
    defs: dict[str, RecordIR]


__all__ = [
    "IR_VERSION",
    "AnnotatedIR",
    "AnyIR",
    "BoolIR",
    "ContainerName",
    "DictIR",
    "EnumIR",
    "FieldIR",
    "FloatIR",
    "FunctionRootIR",
    "IntIR",
    "ListIR",
    "LiteralIR",
    "MetaIR",
    "ModelIR",
    "NullIR",
    "RecordIR",
    "RefIR",
    "RootIR",
    "StrIR",
    "StrValueIR",
    "StringValueName",
    "TupleIR",
    "TypeIR",
    "TypeRootIR",
    "UnionIR",
]
