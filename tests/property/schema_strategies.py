"""Hypothesis strategies for JSON Schemas: arbitrary draft 2020-12, and tool argument schemas."""

from __future__ import annotations

import copy
import functools
from typing import Any

from hypothesis import strategies as st

# -- JSON Schemas ------------------------------------------------------------------------------

SMALL_INTS = st.integers(-3, 10)
SCHEMA_PATTERNS = ["^a", "b$", "^[a-c]*$", "^[0-9]+$", "ab|cd", "^.{2}$"]
SCHEMA_TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]
PROPERTY_NAMES = st.sampled_from(["a", "b", "c", "d"])
# Instances drawn from a small universe so that the constraints above are hit both ways.
SMALL_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        SMALL_INTS,
        st.sampled_from([0.5, -1.5, 2.0, 10.25]),
        st.text("abc0123", max_size=4),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(PROPERTY_NAMES, st.just("zz")), children, max_size=4),
    ),
    max_leaves=8,
)


def _keywords(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """One keyword (or a small group of them) with its value."""
    return st.one_of(
        st.sampled_from(SCHEMA_TYPES).map(lambda t: {"type": t}),
        st.lists(st.sampled_from(SCHEMA_TYPES), min_size=1, max_size=3, unique=True).map(
            lambda ts: {"type": ts}
        ),
        st.lists(SMALL_JSON, min_size=1, max_size=3).map(lambda vs: {"enum": vs}),
        SMALL_JSON.map(lambda v: {"const": v}),
        st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]).flatmap(
            lambda k: st.one_of(SMALL_INTS, st.sampled_from([0.5, 2.5])).map(lambda v: {k: v})
        ),
        # Integer divisors only: float `multipleOf` rounding differs between implementations.
        st.integers(1, 4).map(lambda v: {"multipleOf": v}),
        st.sampled_from(
            ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
        ).flatmap(lambda k: st.integers(0, 3).map(lambda v: {k: v})),
        st.sampled_from(SCHEMA_PATTERNS).map(lambda p: {"pattern": p}),
        st.booleans().map(lambda b: {"uniqueItems": b}),
        st.dictionaries(PROPERTY_NAMES, children, max_size=3).map(lambda p: {"properties": p}),
        st.lists(PROPERTY_NAMES, max_size=3, unique=True).map(lambda r: {"required": r}),
        st.one_of(st.booleans(), children).map(lambda a: {"additionalProperties": a}),
        children.map(lambda s: {"items": s}),
        st.lists(children, min_size=1, max_size=3).map(lambda s: {"prefixItems": s}),
        st.tuples(st.lists(children, min_size=1, max_size=2), st.booleans()).map(
            lambda t: {"prefixItems": t[0], "items": t[1]}
        ),
        children.map(lambda s: {"contains": s}),
        st.lists(children, min_size=1, max_size=3).map(lambda s: {"anyOf": s}),
        st.lists(children, min_size=1, max_size=3).map(lambda s: {"oneOf": s}),
        st.lists(children, min_size=1, max_size=3).map(lambda s: {"allOf": s}),
        children.map(lambda s: {"not": s}),
        st.tuples(children, children).map(lambda t: {"if": t[0], "then": t[1]}),
    )


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(_keywords(children), min_size=1, max_size=3).map(_merge)


LOCAL_SCHEMAS = st.recursive(
    st.one_of(st.booleans(), st.just({}), st.sampled_from(SCHEMA_TYPES).map(lambda t: {"type": t})),
    _schemas,
    max_leaves=6,
)


@st.composite
def json_schemas(draw: st.DrawFn) -> Any:
    """A draft 2020-12 schema over a sensible subset, sometimes with ``$defs`` and ``$ref``."""
    defs = draw(st.dictionaries(st.sampled_from(["A", "B"]), LOCAL_SCHEMAS, max_size=2))
    if not defs:
        return draw(LOCAL_SCHEMAS)
    refs = st.sampled_from(sorted(defs)).map(lambda name: {"$ref": f"#/$defs/{name}"})
    body = draw(st.recursive(refs | LOCAL_SCHEMAS, _schemas, max_leaves=4))
    if isinstance(body, bool):
        body = {"allOf": [body]}
    return {**body, "$defs": defs}


# -- tool argument schemas -----------------------------------------------------------------------

TOOL_PROPERTIES = st.sampled_from(["a", "b", "c", "d", "e"])
TOOL_DEFS = ["A", "B", "C"]
_TOOL_SCALARS = st.one_of(st.text("xyz", max_size=2), st.integers(-3, 3), st.booleans(), st.none())


def _with(schema: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {**schema, **extra}


def _documented(schemas: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Sometimes a title, a description or a default (annotations every dialect may keep)."""
    notes = st.fixed_dictionaries(
        {}, optional={"description": st.just("what it is"), "title": st.just("It")}
    )
    return st.builds(_with, schemas, notes)


def _nullable_type(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "type": [schema["type"], "null"]}


_TOOL_STRINGS = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={"minLength": st.integers(0, 2), "maxLength": st.integers(2, 6)},
    ),
    st.sampled_from(["^[a-c]*$", "^[0-9]+$", "^a", "b$"]).map(
        lambda p: {"type": "string", "pattern": p}
    ),
    st.sampled_from(["date", "date-time", "uuid", "email", "uri", "color"]).map(
        lambda f: {"type": "string", "format": f}
    ),
    st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=4, unique=True).map(
        lambda values: {"type": "string", "enum": values}
    ),
)
_TOOL_INTEGERS = st.fixed_dictionaries(
    {"type": st.just("integer")},
    optional={
        "minimum": st.integers(-5, 0),
        "maximum": st.integers(1, 20),
        "exclusiveMaximum": st.integers(25, 30),
        "multipleOf": st.integers(1, 3),
    },
)
_TOOL_NUMBERS = st.fixed_dictionaries(
    {"type": st.just("number")},
    optional={
        "minimum": st.sampled_from([-1.5, 0, 2]),
        "exclusiveMinimum": st.sampled_from([-10, -2.5]),
        "maximum": st.sampled_from([10, 100.5]),
    },
)
_TOOL_LEAVES = st.one_of(
    _TOOL_STRINGS,
    _TOOL_INTEGERS,
    _TOOL_NUMBERS,
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.one_of(_TOOL_STRINGS, _TOOL_INTEGERS, st.just({"type": "boolean"})).map(_nullable_type),
    st.lists(_TOOL_SCALARS, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)).map(
        lambda values: {"enum": values}
    ),
    _TOOL_SCALARS.map(lambda value: {"const": value}),
)


def _close(props: dict[str, Any], required: list[str], extra: dict[str, Any]) -> dict[str, Any]:
    names = [name for name in required if name in props]
    return {"type": "object", "properties": props, "required": names, **extra}


def _tool_objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        _close,
        st.dictionaries(TOOL_PROPERTIES, children, min_size=1, max_size=3),
        st.lists(TOOL_PROPERTIES, unique=True),
        st.fixed_dictionaries({}, optional={"additionalProperties": st.just(False)}),
    )


def _tool_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    arrays = st.builds(
        _with,
        children.map(lambda items: {"type": "array", "items": items}),
        st.one_of(
            st.fixed_dictionaries(
                {}, optional={"minItems": st.integers(0, 2), "maxItems": st.integers(2, 4)}
            ),
            st.just({"uniqueItems": True}),
        ),
    )
    return st.one_of(
        arrays,
        _tool_objects(children),
        # Optional[T]: the union with null, as ferrotool derives it (and with its default).
        st.builds(
            lambda child, default: {"anyOf": [child, {"type": "null"}], **default},
            children,
            st.sampled_from([{}, {"default": None}]),
        ),
        st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches}),
        st.lists(children, min_size=2, max_size=2).map(lambda branches: {"oneOf": branches}),
        children.map(lambda child: {"allOf": [child]}),
        st.integers(-3, 3).map(lambda k: {"allOf": [{"type": "integer"}, {"minimum": k}]}),
    )


@functools.cache
def _tool_children(names: tuple[str, ...], rare: bool) -> st.SearchStrategy[Any]:
    """Property schemas that may refer to the definitions ``names`` (built once per set)."""
    leaves = _documented(_TOOL_LEAVES)
    if names:
        refs = st.sampled_from(names).map(lambda name: {"$ref": f"#/$defs/{name}"})
        leaves = st.one_of(leaves, refs, refs.map(lambda r: {**r, "description": "see it"}))
    if rare:  # constructs the strict dialects cannot express: an object without properties...
        leaves = st.one_of(leaves, st.sampled_from([{}, {"type": "object"}]))
    return st.recursive(leaves, lambda inner: _documented(_tool_containers(inner)), max_leaves=5)


@functools.cache
def _tool_definition(earlier: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """A definition that may refer to the definitions before it (no unbounded recursion)."""
    inner = _documented(_TOOL_LEAVES)
    if earlier:
        inner = st.one_of(inner, st.sampled_from(earlier).map(lambda n: {"$ref": f"#/$defs/{n}"}))
    return st.one_of(_documented(_TOOL_LEAVES), _tool_objects(inner))


# A linked list: recursion through an optional property.
_LINKED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "next": {"anyOf": [{"$ref": "#/$defs/C"}, {"type": "null"}]},
    },
    "required": ["value"],
}


@st.composite
def tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """Argument schemas as tools declare them: a root object with nested objects, arrays,
    enums, optional and required properties, unions with null, and ``$defs`` with ``$ref``
    (recursive sometimes).

    Mostly constructs the strict dialects express faithfully, and now and then one they do not
    (an object without properties, a schema of any type) so that both outcomes are met.
    """
    names = tuple(sorted(draw(st.lists(st.sampled_from(TOOL_DEFS), unique=True, max_size=2))))
    defs: dict[str, Any] = {}
    for name in names:
        if name == "C":
            defs[name] = copy.deepcopy(_LINKED)
        else:
            defs[name] = draw(_tool_definition(tuple(n for n in names if n < name)))
    root = draw(_tool_objects(_tool_children(names, draw(st.integers(0, 9)) == 0)))
    if defs:
        root["$defs"] = defs
    return root
