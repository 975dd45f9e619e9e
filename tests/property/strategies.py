"""Hypothesis strategies: annotation trees with values of them, their JSON form, random JSON.

A generated type is a `Gen`: the annotation, a strategy for values of it, the function that
writes a value as the JSON that ferrotool's derived schema describes, and the JSON kinds those
dumps can take (used to keep unions unambiguous).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import itertools
import keyword
import pathlib
import typing
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple, TypedDict

import orjson
from durations import render as render_duration
from hypothesis import strategies as st

import ferrotool
from ferrotool import Param

Json = Any
_names = itertools.count()


@dataclasses.dataclass(frozen=True, eq=False)
class Gen:
    """One generated type."""

    tp: Any
    values: st.SearchStrategy[Any]
    dump: Callable[[Any], Json]
    kinds: frozenset[str]
    """JSON kinds a dumped value can have: null, bool, number, string, array, object."""
    hashable: bool = False
    """Values are hashable and equal only when their JSON forms are equal (fit for sets)."""
    label: str = ""

    def __repr__(self) -> str:
        return f"Gen({self.label or self.tp!r})"


def _ident(value: Any) -> Json:
    return value


def _fresh(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


# -- scalars --------------------------------------------------------------------------------------

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FINITE_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
# No lone surrogates: they cannot be written as UTF-8 JSON.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
OFFSETS = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
)
# RFC 3339 offsets carry hours and minutes only; UTC and whole-minute offsets.
TIMEZONES = st.one_of(st.just(dt.UTC), OFFSETS)


SCALARS: list[Gen] = [
    Gen(str, TEXT, _ident, frozenset({"string"}), hashable=True, label="str"),
    Gen(int, INT64, _ident, frozenset({"number"}), hashable=True, label="int"),
    Gen(float, FINITE_FLOATS, _ident, frozenset({"number"}), label="float"),
    Gen(bool, st.booleans(), _ident, frozenset({"bool"}), hashable=True, label="bool"),
    Gen(type(None), st.none(), _ident, frozenset({"null"}), label="None"),
    Gen(
        dt.datetime,
        st.datetimes(timezones=TIMEZONES),
        lambda v: v.isoformat(),
        frozenset({"string"}),
        label="datetime",
    ),
    Gen(dt.date, st.dates(), lambda v: v.isoformat(), frozenset({"string"}), True, "date"),
    Gen(
        dt.time,
        st.times(timezones=TIMEZONES),
        lambda v: v.isoformat(),
        frozenset({"string"}),
        label="time",
    ),
    # The ISO 8601 duration of the independent oracle (`durations`), not ferrotool's own writer.
    Gen(dt.timedelta, st.timedeltas(), render_duration, frozenset({"string"}), label="timedelta"),
    Gen(uuid.UUID, st.uuids(), str, frozenset({"string"}), hashable=True, label="UUID"),
    Gen(
        decimal.Decimal,
        st.decimals(allow_nan=False, allow_infinity=False),
        str,
        frozenset({"string"}),
        label="Decimal",
    ),
    Gen(
        pathlib.Path,
        st.text(
            st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=10
        ).map(pathlib.Path),
        str,
        frozenset({"string"}),
        label="Path",
    ),
]
SCALAR_LABELS = [gen.label for gen in SCALARS]


def _json_kind(value: Json) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string"


LITERAL_VALUES = st.one_of(
    st.text("abcxyz", max_size=3),
    st.integers(min_value=-5, max_value=5),
    st.booleans(),
    st.none(),
)


@st.composite
def literals(draw: st.DrawFn) -> Gen:
    # `Literal` deduplicates with type-aware equality (1 and True stay apart).
    values = draw(
        st.lists(LITERAL_VALUES, min_size=1, max_size=4, unique_by=lambda v: (type(v), v))
    )
    tp = Literal[tuple(values)]  # type: ignore[valid-type]
    args = typing.get_args(tp)
    return Gen(
        tp,
        st.sampled_from(args),
        _ident,
        frozenset(_json_kind(v) for v in args),
        hashable=all(isinstance(v, str) for v in args),
        label=f"Literal{list(args)}",
    )


@st.composite
def enums(draw: st.DrawFn) -> Gen:
    if draw(st.booleans()):
        raw: list[Any] = draw(
            st.lists(st.text("abcdef", min_size=1, max_size=4), min_size=1, max_size=4, unique=True)
        )
        kind = "string"
    else:
        raw = draw(st.lists(st.integers(-100, 100), min_size=1, max_size=4, unique=True))
        kind = "number"
    members = {f"M{i}": value for i, value in enumerate(raw)}
    cls = enum.Enum(_fresh("Color"), members)  # type: ignore[misc]
    return Gen(
        cls, st.sampled_from(list(cls)), lambda m: m.value, frozenset({kind}), True, f"Enum{raw}"
    )


# Simple patterns with a generator for matching strings (ECMA-262 and Python agree on them).
PATTERNS = ["^[a-z]+$", "^[A-Z][a-z0-9_]*$", "^[0-9]{2,4}$", "^(ab|cd)+$", "x"]


@st.composite
def constrained(draw: st.DrawFn) -> Gen:
    """``Annotated[...]`` with `Param` constraints, and values that satisfy them."""
    choice = draw(st.sampled_from(["int", "float", "str", "pattern", "multiple", "doc"]))
    if choice == "int":
        lo = draw(st.integers(-1000, 1000))
        hi = lo + draw(st.integers(0, 1000))
        return Gen(
            Annotated[int, Param(ge=lo, le=hi)],
            st.integers(lo, hi),
            _ident,
            frozenset({"number"}),
            True,
            f"int[{lo},{hi}]",
        )
    if choice == "multiple":
        step = draw(st.integers(1, 50))
        return Gen(
            Annotated[int, Param(multiple_of=step, gt=-(10**6))],
            st.integers(-1000, 1000).map(lambda k: k * step),
            _ident,
            frozenset({"number"}),
            True,
            f"int*{step}",
        )
    if choice == "float":
        lo = draw(st.floats(-1e6, 1e6))
        hi = lo + draw(st.floats(0, 1e6))
        return Gen(
            Annotated[float, Param(gt=lo - 1, lt=hi + 1)],
            st.floats(lo, hi),
            _ident,
            frozenset({"number"}),
            False,
            f"float({lo},{hi})",
        )
    if choice == "str":
        lo = draw(st.integers(0, 5))
        hi = lo + draw(st.integers(0, 5))
        text = st.text(st.characters(exclude_categories=("Cs",)), min_size=lo, max_size=hi)
        return Gen(
            Annotated[str, Param(min_length=lo, max_length=hi)],
            text,
            _ident,
            frozenset({"string"}),
            True,
            f"str[{lo},{hi}]",
        )
    if choice == "pattern":
        pattern = draw(st.sampled_from(PATTERNS))
        return Gen(
            Annotated[str, Param(pattern=pattern)],
            st.from_regex(pattern, fullmatch=True, alphabet=st.characters(codec="ascii")),
            _ident,
            frozenset({"string"}),
            True,
            f"str~{pattern}",
        )
    inner = draw(st.sampled_from(SCALARS))
    return dataclasses.replace(
        inner,
        tp=Annotated[inner.tp, Param(description="documented", title="T")],
        label=f"Annotated[{inner.label}]",
    )


LEAVES = st.one_of(st.sampled_from(SCALARS), literals(), enums(), constrained())

# -- containers and records -------------------------------------------------------------------


def _hashable_leaves() -> st.SearchStrategy[Gen]:
    # Set items: values whose Python equality matches JSON equality. Excluded: bool|int mixes
    # (True == 1 in Python, not in JSON), floats (0.0 == -0.0), datetimes (equal instants with
    # different offsets) and anything unhashable.
    return LEAVES.filter(lambda g: g.hashable)


def lists(items: Gen, container: str) -> Gen:
    if container == "list":
        return Gen(
            list[items.tp],
            st.lists(items.values, max_size=4),
            lambda v: [items.dump(x) for x in v],
            frozenset({"array"}),
            label=f"list[{items.label}]",
        )
    if container == "tuple":
        return Gen(
            tuple[items.tp, ...],
            st.lists(items.values, max_size=4).map(tuple),
            lambda v: [items.dump(x) for x in v],
            frozenset({"array"}),
            label=f"tuple[{items.label}, ...]",
        )
    maker = set if container == "set" else frozenset
    tp = set[items.tp] if container == "set" else frozenset[items.tp]
    return Gen(
        tp,
        st.sets(items.values, max_size=4).map(maker),
        lambda v: [items.dump(x) for x in v],
        frozenset({"array"}),
        label=f"{container}[{items.label}]",
    )


def fixed_tuple(items: list[Gen]) -> Gen:
    return Gen(
        tuple[tuple(g.tp for g in items)] if items else tuple[()],
        st.tuples(*(g.values for g in items)),
        lambda v: [g.dump(x) for g, x in zip(items, v, strict=True)],
        frozenset({"array"}),
        label=f"tuple[{', '.join(g.label for g in items)}]",
    )


def dicts(values: Gen) -> Gen:
    return Gen(
        dict[str, values.tp],
        st.dictionaries(TEXT, values.values, max_size=3),
        lambda v: {k: values.dump(x) for k, x in v.items()},
        frozenset({"object"}),
        label=f"dict[str, {values.label}]",
    )


def union(variants: list[Gen]) -> Gen | None:
    """``A | B | ...`` of variants whose JSON kinds do not overlap, or None.

    Overlapping variants (``int | float`` with ``1.0``, two records of the same shape, ``str |
    datetime``) may legitimately validate into another variant than the one drawn: the generator
    avoids them instead of weakening the round-trip assertion.
    """
    seen: set[str] = set()
    for gen in variants:
        if seen & gen.kinds:
            return None
        seen |= gen.kinds
    tp = typing.Union[tuple(g.tp for g in variants)]  # noqa: UP007

    def dump(value: Any) -> Json:
        for gen in variants:
            if _belongs(gen, value):
                return gen.dump(value)
        raise AssertionError(f"{value!r} belongs to no variant of {variants}")

    tagged = st.one_of(*(g.values.map(lambda v, g=g: _Tagged(g, v)) for g in variants))
    return Gen(
        tp,
        tagged.map(lambda t: t.value),
        dump,
        frozenset(seen),
        label=" | ".join(g.label for g in variants),
    )


@dataclasses.dataclass(frozen=True)
class _Tagged:
    gen: Gen
    value: Any


_PLAIN_KINDS = {
    str: "string",
    dict: "object",
    list: "array",
    tuple: "array",
    set: "array",
    frozenset: "array",
    int: "number",
    float: "number",
    bool: "bool",
    type(None): "null",
}


def _belongs(gen: Gen, value: Any) -> bool:
    """Whether a drawn value comes from ``gen`` (variants have disjoint JSON kinds)."""
    # Plain values can be iterated, printed or read as a record with no fields: without this
    # check a str or a dict would "dump" as an array, an empty tuple or None as a string, 0 as
    # an empty record.
    plain = _PLAIN_KINDS.get(type(value))
    if plain is not None and plain not in gen.kinds:
        return False
    try:
        dumped = gen.dump(value)
    except Exception:
        return False
    if _json_kind_full(dumped) not in gen.kinds:
        return False
    # Many dumps accept anything (str() of an object, a record with no fields): the value
    # belongs to the variant only if the variant reads its own dump back as the value.
    try:
        back = ferrotool.type_schema(gen.tp).validate_json(orjson.dumps(dumped))
    except ferrotool.ValidationError:
        return False
    return same(back, value)


def _json_kind_full(value: Json) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if value is None or isinstance(value, bool | int | float | str):
        return _json_kind(value)
    return "not json"


# Not keywords, and not tuple methods (a NamedTuple field may not shadow them).
FIELD_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and name not in ("count", "index")
)


@st.composite
def records(draw: st.DrawFn, children: st.SearchStrategy[Gen]) -> Gen:
    fields = draw(
        st.lists(st.tuples(FIELD_NAMES, children), max_size=4, unique_by=lambda item: item[0])
    )
    style = draw(st.sampled_from(["dataclass", "typeddict", "namedtuple"]))
    name = _fresh(draw(st.sampled_from(["Item", "Order", "Point"])))
    names = [field for field, _ in fields]
    gens = [gen for _, gen in fields]
    cls: Any
    if style == "dataclass":
        cls = dataclasses.make_dataclass(name, [(f, g.tp) for f, g in fields])
    elif style == "typeddict":
        cls = TypedDict(name, {f: g.tp for f, g in fields})  # type: ignore[operator]
    else:
        cls = NamedTuple(name, [(f, g.tp) for f, g in fields])  # type: ignore[misc]

    def build(vals: list[Any]) -> Any:
        if style == "typeddict":
            return dict(zip(names, vals, strict=True))
        if style == "namedtuple":
            return cls(*vals)
        return cls(**dict(zip(names, vals, strict=True)))

    def read(value: Any, field: str) -> Any:
        return value[field] if style == "typeddict" else getattr(value, field)

    values = st.tuples(*(g.values for g in gens)).map(lambda vals: build(list(vals)))
    return Gen(
        cls,
        values,
        lambda v: {f: g.dump(read(v, f)) for f, g in fields},
        frozenset({"object"}),
        label=f"{style} {name}{{{', '.join(f'{f}: {g.label}' for f, g in fields)}}}",
    )


def _extend(children: st.SearchStrategy[Gen]) -> st.SearchStrategy[Gen]:
    return st.one_of(
        st.builds(lists, children, st.sampled_from(["list", "tuple"])),
        st.builds(lists, _hashable_leaves(), st.sampled_from(["set", "frozenset"])),
        st.lists(children, max_size=3).map(fixed_tuple),
        st.builds(dicts, children),
        st.lists(children, min_size=2, max_size=3).map(union).filter(lambda g: g is not None),
        st.builds(lambda g: union([g, SCALARS[4]]), children).filter(lambda g: g is not None),
        records(children),
    )


def gens(*, exclude: frozenset[str] = frozenset()) -> st.SearchStrategy[Gen]:
    """Annotation trees, a few levels deep; ``exclude`` drops scalars by label."""
    leaves = LEAVES if not exclude else LEAVES.filter(lambda g: g.label not in exclude)
    return st.recursive(leaves, _extend, max_leaves=6)


# -- equality ------------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equality that also checks types: ``1 != 1.0``, ``True != 1``, records field by field.

    Floats compare exactly (a JSON round trip of a finite float is exact); aware datetimes and
    times compare by instant and by offset; Decimals by value and exponent.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, set | frozenset):
        return a == b and all(any(same(x, y) for y in b) for x in a)
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dt.datetime | dt.time):
        return a == b and a.utcoffset() == b.utcoffset()
    if isinstance(a, decimal.Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return bool(a == b)


# -- random JSON ---------------------------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-3, 3),
    FINITE_FLOATS,
    TEXT,
    st.sampled_from(
        [
            "",
            "5",
            "true",
            "2024-05-01",
            "2024-05-01T10:00:00Z",
            "10:00:00Z",
            "PT1S",
            "1.5",
            "a",
            "ab",
        ]
    ),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(TEXT, FIELD_NAMES), children, max_size=4),
    ),
    max_leaves=10,
)


@st.composite
def mutations(draw: st.DrawFn, value: Json) -> Json:
    """A small change somewhere in a JSON value: a swapped type, a dropped or extra key..."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        action = draw(st.sampled_from(["drop", "recurse", "replace"]))
        out = dict(value)
        if action == "drop":
            del out[key]
        elif action == "recurse":
            out[key] = draw(mutations(value[key]))
        else:
            out[key] = draw(JSON_SCALARS)
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        if draw(st.booleans()):
            out_list[index] = draw(mutations(value[index]))
        else:
            out_list.append(value[index])  # a duplicate, or one item too many
        return out_list
    if isinstance(value, dict) and draw(st.booleans()):
        return {**value, draw(FIELD_NAMES): draw(JSON_SCALARS)}
    return draw(JSON_SCALARS)
