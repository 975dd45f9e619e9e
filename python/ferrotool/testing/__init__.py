"""Hypothesis strategies for property-testing tools: valid and invalid arguments from a schema.

Given a tool's argument schema (JSON Schema draft 2020-12), `valid_arguments` generates argument
JSON that the schema accepts and `invalid_arguments` generates argument JSON that it rejects,
together with a `Mutation` saying what was broken::

    import pytest
    from hypothesis import given

    from ferrotool import ValidationError
    from ferrotool.testing import InvalidArguments, invalid_arguments, valid_arguments

    @given(valid_arguments(schema))
    def test_accepts(arguments: str) -> None:
        my_tool.call_json(arguments)

    @given(invalid_arguments(schema))
    def test_rejects(case: InvalidArguments) -> None:
        with pytest.raises(ValidationError):
            my_tool.call_json(case.arguments)

Generation follows the schema's keywords closely enough that values are rarely thrown away,
and every value is finally checked with `ferrotool.JsonSchemaValidator`: the strategies are
sound even where the generation is only approximate (``not``, ``oneOf``, ``if``,
``dependentSchemas``, ``unevaluatedProperties``...). ``format`` is generated for
``date-time``, ``date``, ``time``, ``duration``, ``uuid``, ``email``, ``ipv4``, ``ipv6``,
``hostname`` and ``uri`` (and their ``idn-``/``-reference`` variants); other formats are
annotations and get plain strings.

This module needs hypothesis: ``pip install 'ferrotool[testing]'``.
"""

from __future__ import annotations

try:
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.strategies import DrawFn, SearchStrategy
except ImportError as error:  # pragma: no cover - exercised only without hypothesis
    raise ImportError(
        "ferrotool.testing needs hypothesis: pip install 'ferrotool[testing]'"
    ) from error

import datetime as dt
import functools
import math
import re
import warnings
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final, Protocol, TypeAlias, final, runtime_checkable
from urllib.parse import quote, unquote

import orjson

from ferrotool._core import JsonSchemaValidator
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec


@runtime_checkable
class HasSpec(Protocol):
    """Anything that carries a `ToolSpec` as ``spec`` (a tool object, for instance)."""

    @property
    def spec(self) -> ToolSpec:
        """The tool's spec; ``spec.parameters`` is its argument schema."""
        ...


SchemaSource: TypeAlias = Mapping[str, JsonValue] | bool | bytes | str | ToolSpec | HasSpec
"""Where a schema can come from: a schema dict or bool, JSON text (``bytes`` or ``str``), a
`ToolSpec` or an object with a ``spec`` attribute that is one."""

MUTATION_KINDS: Final = (
    "wrong_type",
    "missing_required",
    "outside_enum",
    "not_const",
    "out_of_bounds",
    "not_multiple_of",
    "too_short",
    "too_long",
    "pattern_mismatch",
    "too_few_items",
    "too_many_items",
    "not_unique",
    "not_allowed",
    "extra_property",
    "too_few_properties",
    "too_many_properties",
    "not_json",
)
"""Every `Mutation.kind` that `invalid_arguments` produces, the most common model mistakes
first (the order in which hypothesis prefers them)."""


@final
@dataclass(frozen=True, slots=True)
class Mutation:
    """What was changed in a valid value to make it invalid.

    Attributes:
        pointer: JSON Pointer of the value changed (``""`` for the whole arguments). For
            ``missing_required`` and ``too_few_properties`` it is the object that lost a
            property, for ``extra_property`` the property added.
        kind: One of `MUTATION_KINDS`, e.g. ``"missing_required"``, ``"wrong_type"``,
            ``"outside_enum"``, ``"out_of_bounds"`` or ``"not_json"``.
        description: One line saying what was broken, e.g.
            ``'/items/0/qty: 5 replaced by 0, below the minimum 1'``.
    """

    pointer: str
    kind: str
    description: str


@final
@dataclass(frozen=True, slots=True)
class InvalidArguments:
    """Arguments that the schema rejects, and how they were made.

    Attributes:
        arguments: The arguments as JSON text (for ``not_json``, text that is not JSON at all).
        mutation: The one change that makes them invalid.
        value: The parsed value of ``arguments``; for ``not_json``, the valid value whose JSON
            text was garbled.
    """

    arguments: str
    mutation: Mutation
    value: JsonValue


# -- loading and compiling ------------------------------------------------------------------------


def _plain(value: object) -> JsonValue:
    """A JSON-like value with every mapping a `dict` and every sequence a `list`."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"not a JSON value in the schema: {value!r}")


def _load(source: SchemaSource) -> JsonValue:
    """The schema of ``source`` as a plain JSON value."""
    if isinstance(source, ToolSpec):
        return _load(source.parameters)
    if isinstance(source, bool):
        return source
    if isinstance(source, bytes | str):
        schema = orjson.loads(source)
        if not isinstance(schema, dict | bool):
            raise TypeError(f"a JSON Schema is an object or a boolean, got {source!r:.80}")
        return schema
    if isinstance(source, Mapping):
        return _plain(source)
    spec = getattr(source, "spec", None)
    if isinstance(spec, ToolSpec):
        return _load(spec.parameters)
    raise TypeError(
        "expected a JSON Schema (dict, bool, JSON bytes or str), a ToolSpec or an object with "
        f"a ToolSpec as `spec`, got {type(source).__name__}"
    )


@functools.lru_cache(maxsize=512)
def _compile(schema: bytes) -> JsonSchemaValidator:
    """The validator of a serialized schema (raises `ValueError` if the schema is invalid)."""
    return JsonSchemaValidator(schema)


_BASE: Final = "urn:ferrotool:testing:root"


@functools.lru_cache(maxsize=4096)
def _compile_at(root: bytes, pointer: str) -> JsonSchemaValidator | None:
    """The validator of the subschema at ``pointer`` inside the serialized ``root``."""
    document = orjson.loads(root)
    own_id = document.get("$id") if isinstance(document, dict) else None
    base = own_id.split("#")[0] if isinstance(own_id, str) and ":" in own_id else _BASE
    try:
        return JsonSchemaValidator(
            {"$ref": f"{base}#{quote(pointer, safe='/~')}"}, resources={base: document}
        )
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _compile_alone(schema: bytes) -> JsonSchemaValidator | None:
    """The validator of a self-contained subschema, or None if it does not compile alone."""
    try:
        return JsonSchemaValidator(schema)
    except ValueError:
        return None


def _dumps(value: JsonValue) -> str:
    return orjson.dumps(value).decode()


# -- JSON helpers ---------------------------------------------------------------------------------

_TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")
_OBJECT_KEYS: Final = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
_ARRAY_KEYS: Final = frozenset(
    {
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    }
)
_STRING_KEYS: Final = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER_KEYS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
# Keywords that constrain nothing (or nothing generation can use).
_INERT: Final = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "example",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
        "$vocabulary",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
# Keywords generation only approximates: values are checked against the subschema.
_APPROXIMATE: Final = frozenset(
    {
        "allOf",
        "oneOf",
        "not",
        "if",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "dependentSchemas",
        "dependentRequired",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "multipleOf",
        "pattern",
        "$dynamicRef",
    }
)
_SPREAD: Final = (4, 3, 2, 2, 1)
"""How many items past ``minItems`` an array may get, by nesting depth."""
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**63 - 1


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _canon(value: JsonValue) -> object:
    """A hashable key equal for values JSON Schema calls equal (``1 == 1.0``, ``true != 1``)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_canon(item) for item in value))
    return ("o", frozenset((key, _canon(item)) for key, item in value.items()))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _child(pointer: str | None, *tokens: str | int) -> str | None:
    if pointer is None:
        return None
    return pointer + "".join("/" + _escape(str(token)) for token in tokens)


def _pointer(tokens: Sequence[str | int]) -> str:
    return "".join("/" + _escape(str(token)) for token in tokens)


def _show(value: JsonValue, limit: int = 60) -> str:
    try:
        text = _dumps(value)
    except orjson.JSONEncodeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_type(value: JsonValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _has_ref(schema: JsonValue) -> bool:
    if isinstance(schema, dict):
        if "$ref" in schema or "$dynamicRef" in schema:
            return True
        return any(_has_ref(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_ref(value) for value in schema)
    return False


def _constraining(schema: dict[str, JsonValue]) -> bool:
    return any(key not in _INERT for key in schema)


# -- ECMA-262 patterns ----------------------------------------------------------------------------

_ECMA_SPACE: Final = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_OUTSIDE: Final = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": f"[{_ECMA_SPACE}]",
    "S": f"[^{_ECMA_SPACE}]",
}
_INSIDE: Final = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}
_KEEP_ESCAPES: Final = frozenset("bBfnrtvx0123456789DWS")
# Unicode property escapes (``\\p{L}``, with the ``u`` flag), as subsets of what they match:
# generation only needs strings that match.
_LETTERS: Final = "A-Za-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u024f"
_PROPERTIES: Final = {
    "L": _LETTERS,
    "Letter": _LETTERS,
    "Alphabetic": _LETTERS,
    "Lu": "A-Z",
    "Uppercase_Letter": "A-Z",
    "Ll": "a-z",
    "Lowercase_Letter": "a-z",
    "N": "0-9",
    "Nd": "0-9",
    "Number": "0-9",
    "Decimal_Number": "0-9",
    "P": "!-#%-*,-/:;?@\\[-\\]_{}",
    "Punctuation": "!-#%-*,-/:;?@\\[-\\]_{}",
}


def _translate(pattern: str) -> str:
    """An ECMA-262 regex rewritten for Python's `re` (the differences tool schemas meet)."""
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            i += 2
            if in_class and nxt in _INSIDE:
                out.append(_INSIDE[nxt])
            elif not in_class and nxt in _OUTSIDE:
                out.append(_OUTSIDE[nxt])
            elif nxt == "u" and i < n and pattern[i] == "{":
                end = pattern.find("}", i)
                if end < 0:
                    out.append("u")
                    continue
                out.append(f"\\U{int(pattern[i + 1 : end] or '0', 16):08x}")
                i = end + 1
            elif nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", pattern[i : i + 4]):
                out.append("\\u" + pattern[i : i + 4])
                i += 4
            elif nxt in "pP" and i < n and pattern[i] == "{":
                end = pattern.find("}", i)
                letters = _PROPERTIES.get(pattern[i + 1 : end]) if end > 0 else None
                if letters is None or nxt == "P":
                    raise ValueError(f"unsupported property escape in {pattern!r}")
                out.append(letters if in_class else f"[{letters}]")
                i = end + 1
            elif nxt == "c" and i < n and pattern[i].isalpha():
                out.append(f"\\x{ord(pattern[i]) % 32:02x}")
                i += 1
            elif nxt == "k" and i < n and pattern[i] == "<":
                end = pattern.find(">", i)
                out.append(f"(?P={pattern[i + 1 : end]})")
                i = end + 1
            elif nxt in _KEEP_ESCAPES or (in_class and nxt in "dws"):
                out.append("\\" + nxt)
            else:
                out.append(re.escape(nxt))
            continue
        i += 1
        if in_class:
            if char == "]":
                in_class = False
                out.append(char)
            elif char in "[&~|":
                out.append("\\" + char)
            else:
                out.append(char)
        elif char == "[":
            if pattern.startswith("]", i):
                out.append("(?!)")
                i += 1
            elif pattern.startswith("^]", i):
                out.append("(?s:.)")
                i += 2
            else:
                in_class = True
                out.append(char)
                if pattern.startswith("^", i):
                    out.append("^")
                    i += 1
        elif char == "$":
            out.append("\\Z")
        elif char == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif (
            char == "("
            and pattern.startswith("?<", i)
            and not pattern.startswith(("?<=", "?<!"), i)
        ):
            out.append("(?P<")
            i += 2
        else:
            out.append(char)
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str] | None:
    """The ECMA-262 ``pattern`` compiled for Python, or None if it cannot be."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(_translate(pattern))
    except (re.error, ValueError, OverflowError):
        return None


# -- formats --------------------------------------------------------------------------------------

_CHARS: Final = st.characters(codec="utf-8")
_OFFSETS: Final = st.one_of(
    st.just(dt.UTC),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
        lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
    ),
)


def _duration(parts: tuple[int, int, int, int, int]) -> str:
    """An RFC 3339 duration: weeks alone, or days and a contiguous run of H, M, S."""
    days, hours, minutes, seconds, weeks = parts
    if weeks:
        return f"P{weeks}W"
    date = f"{days}D" if days else ""
    units = ((hours, "H"), (minutes, "M"), (seconds, "S"))
    used = [index for index, (amount, _) in enumerate(units) if amount]
    time = (
        "".join(f"{amount}{unit}" for amount, unit in units[used[0] : used[-1] + 1]) if used else ""
    )
    if not date and not time:
        return "PT0S"
    return "P" + date + ("T" + time if time else "")


# Hyphens only from the fourth character on: `--` in the third and fourth places is reserved
# (RFC 5891), and validators that check formats reject it.
_LABEL: Final = r"(?:[a-z0-9]{1,3}|[a-z0-9]{3}[a-z0-9-]{0,8}[a-z0-9])"
_HOST: Final = rf"{_LABEL}(?:\.{_LABEL}){{0,3}}"
_SMALL: Final = st.integers(min_value=0, max_value=400)
_FORMATS: Final[dict[str, SearchStrategy[str]]] = {
    "date-time": st.datetimes(timezones=_OFFSETS).map(lambda value: value.isoformat()),
    "date": st.dates().map(lambda value: value.isoformat()),
    "time": st.times(timezones=_OFFSETS).map(lambda value: value.isoformat()),
    "duration": st.tuples(_SMALL, _SMALL, _SMALL, _SMALL, st.sampled_from([0, 0, 0, 1, 2])).map(
        _duration
    ),
    "uuid": st.uuids().map(str),
    "email": st.from_regex(
        rf"[a-z0-9]{{1,10}}(?:\.[a-z0-9]{{1,6}})?@{_HOST}\.[a-z]{{2,6}}", fullmatch=True
    ),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
    "hostname": st.from_regex(_HOST, fullmatch=True),
    "uri": st.from_regex(
        rf"https?://{_HOST}(?::[1-9][0-9]{{1,3}})?(?:/[A-Za-z0-9._~-]{{0,8}}){{0,3}}"
        r"(?:\?[a-z]{1,6}=[A-Za-z0-9]{0,6})?",
        fullmatch=True,
    ),
    "json-pointer": st.from_regex(r"(?:/(?:[a-z0-9]|~0|~1){0,6}){0,4}", fullmatch=True),
}
_FORMATS["idn-email"] = _FORMATS["email"]
_FORMATS["idn-hostname"] = _FORMATS["hostname"]
_FORMATS["uri-reference"] = _FORMATS["uri"]
_FORMATS["iri"] = _FORMATS["uri"]
_FORMATS["iri-reference"] = _FORMATS["uri"]

# -- any JSON -------------------------------------------------------------------------------------

_SCALARS: Final[SearchStrategy[JsonValue]] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=_INT_MIN, max_value=_INT_MAX),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_CHARS, max_size=10),
)


_NOTHING: Final = st.nothing()


def _one_of(options: Sequence[SearchStrategy[JsonValue]]) -> SearchStrategy[JsonValue]:
    """``st.one_of`` without the options known to be empty (`_NOTHING` if all are)."""
    kept = [option for option in options if option is not _NOTHING]
    if not kept:
        return _NOTHING
    return kept[0] if len(kept) == 1 else st.one_of(kept)


def _extend(children: SearchStrategy[JsonValue]) -> SearchStrategy[JsonValue]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(_CHARS, max_size=8), children, max_size=3),
    )


_ANY: Final[SearchStrategy[JsonValue]] = st.recursive(_SCALARS, _extend, max_leaves=8)

# -- merging subschemas (allOf, $ref with siblings, anyOf branches) -------------------------------

_LOWER: Final = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER: Final = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
_SUBSCHEMA: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)


def _types_of(value: JsonValue) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return list(_TYPES)


def _intersect_types(first: JsonValue, second: JsonValue) -> list[JsonValue]:
    theirs = _types_of(second)
    out: list[JsonValue] = []
    for name in _types_of(first):
        if name in theirs:
            kept = name
        elif (name == "integer" and "number" in theirs) or (
            name == "number" and "integer" in theirs
        ):
            kept = "integer"
        else:
            continue
        if kept not in out:
            out.append(kept)
    return out


def _merge(first: JsonValue, second: JsonValue) -> JsonValue:
    """A schema close to ``allOf: [first, second]``, for generation (checked afterwards)."""
    if first is False or second is False:
        return False
    if not isinstance(first, dict):
        return second if isinstance(second, dict | bool) else True
    if not isinstance(second, dict):
        return first
    out = dict(first)
    for key, theirs in second.items():
        if key not in out:
            out[key] = theirs
            continue
        ours = out[key]
        if key == "type":
            out[key] = _intersect_types(ours, theirs)
        elif key == "required" and isinstance(ours, list) and isinstance(theirs, list):
            out[key] = ours + [name for name in theirs if name not in ours]
        elif key in ("properties", "patternProperties", "dependentSchemas") and (
            isinstance(ours, dict) and isinstance(theirs, dict)
        ):
            merged = dict(ours)
            for name, sub in theirs.items():
                merged[name] = _merge(merged[name], sub) if name in merged else sub
            out[key] = merged
        elif key in _SUBSCHEMA:
            out[key] = _merge(ours, theirs)
        elif key == "prefixItems" and isinstance(ours, list) and isinstance(theirs, list):
            longer = ours if len(ours) >= len(theirs) else theirs
            out[key] = [
                _merge(ours[i], theirs[i]) if i < min(len(ours), len(theirs)) else longer[i]
                for i in range(len(longer))
            ]
        elif key in _LOWER and _is_number(ours) and _is_number(theirs):
            out[key] = max(ours, theirs)  # type: ignore[type-var]  # numbers, checked above
        elif key in _UPPER and _is_number(ours) and _is_number(theirs):
            out[key] = min(ours, theirs)  # type: ignore[type-var]  # numbers, checked above
        elif key == "enum" and isinstance(ours, list) and isinstance(theirs, list):
            allowed = {_canon(item) for item in theirs}
            out[key] = [item for item in ours if _canon(item) in allowed]
        elif key == "const" and _canon(ours) != _canon(theirs):
            out["enum"] = []
        elif key == "uniqueItems":
            out[key] = ours is True or theirs is True
        elif key in ("anyOf", "oneOf") and isinstance(ours, list) and isinstance(theirs, list):
            if len(ours) * len(theirs) <= 32:
                out[key] = [_merge(left, right) for left in ours for right in theirs]
        elif key == "allOf" and isinstance(ours, list) and isinstance(theirs, list):
            out[key] = ours + theirs
        elif key == "$ref":
            rest = out.get("allOf")
            out["allOf"] = [*(rest if isinstance(rest, list) else []), {"$ref": theirs}]
        elif key == "not":
            out[key] = {"anyOf": [ours, theirs]}
    return out


# -- the generator --------------------------------------------------------------------------------


class _Document:
    """A root schema: resolving ``$ref`` and checking values against its subschemas."""

    def __init__(self, root: JsonValue) -> None:
        self.root = root
        self.data = orjson.dumps(root)
        self.validator = _compile(self.data)
        self._anchors: dict[str, tuple[JsonValue, str]] = {}
        self._index(root, "")
        own_id = root.get("$id") if isinstance(root, dict) else None
        self._own_id = own_id.split("#")[0] if isinstance(own_id, str) else None

    def _index(self, node: JsonValue, pointer: str) -> None:
        if isinstance(node, dict):
            for key in ("$anchor", "$dynamicAnchor"):
                anchor = node.get(key)
                if isinstance(anchor, str):
                    self._anchors.setdefault(anchor, (node, pointer))
            for key, value in node.items():
                if key not in ("enum", "const", "default", "examples"):
                    self._index(value, f"{pointer}/{_escape(key)}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                self._index(value, f"{pointer}/{index}")

    def resolve(self, ref: str) -> tuple[JsonValue, str] | None:
        """The schema a local ``$ref`` points to and its JSON Pointer, or None."""
        base, _, fragment = ref.partition("#")
        if base and base != self._own_id:
            return None
        fragment = unquote(fragment)
        if not fragment.startswith("/"):
            if not fragment:
                return self.root, ""
            return self._anchors.get(fragment)
        node: JsonValue = self.root
        for raw in fragment[1:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node, fragment

    def check(self, node: JsonValue, pointer: str | None) -> Callable[[JsonValue], bool] | None:
        """A predicate for values valid against ``node`` (at ``pointer``), if one compiles."""
        if pointer == "":
            return self.validator.is_valid
        if pointer is not None:
            validator = _compile_at(self.data, pointer)
        elif not _has_ref(node):
            validator = _compile_alone(orjson.dumps(node))
        else:
            validator = None
        return None if validator is None else validator.is_valid


Chain: TypeAlias = tuple[str, ...]


class _Builder:
    """Builds the strategy of a schema, node by node."""

    def __init__(self, document: _Document, max_depth: int) -> None:
        self.doc = document
        self.max_depth = max_depth
        self.cap = max_depth + 16
        self._cache: dict[tuple[str, int, Chain], SearchStrategy[JsonValue]] = {}

    def build(
        self, node: JsonValue, pointer: str | None, depth: int, chain: Chain = ()
    ) -> SearchStrategy[JsonValue]:
        """The strategy of ``node``; ``depth`` counts enclosing arrays and objects."""
        if pointer is None:
            return self._build(node, None, depth, chain)
        key = (pointer, depth, chain)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._build(node, pointer, depth, chain)
            self._cache[key] = cached
        return cached

    def _build(
        self, node: JsonValue, pointer: str | None, depth: int, chain: Chain
    ) -> SearchStrategy[JsonValue]:
        if node is False:
            return _NOTHING
        if not isinstance(node, dict) or not _constraining(node):
            return self._any(depth)
        if depth > self.cap:
            return _NOTHING
        strategy = self._generate(node, pointer, depth, chain)
        if strategy is not _NOTHING and pointer != "" and self._approximate(node):
            check = self.doc.check(node, pointer)
            if check is not None:
                strategy = strategy.filter(check)
        return strategy

    def _approximate(self, node: dict[str, JsonValue]) -> bool:
        if any(key in _APPROXIMATE for key in node):
            return True
        if "$ref" in node:
            return any(key not in _INERT and key != "$ref" for key in node)
        return False

    def _any(self, depth: int) -> SearchStrategy[JsonValue]:
        return _SCALARS if depth >= self.max_depth else _ANY

    def _flatten(self, node: JsonValue, chain: Chain) -> tuple[JsonValue, Chain]:
        """Resolve top-level ``$ref`` and merge ``allOf`` into one schema."""
        for _ in range(32):
            if not isinstance(node, dict):
                return node, chain
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in chain:
                    return False, chain
                target = self.doc.resolve(ref)
                rest = {key: value for key, value in node.items() if key != "$ref"}
                node = _merge(True if target is None else target[0], rest)
                chain = (*chain, ref)
                continue
            parts = node.get("allOf")
            if isinstance(parts, list):
                merged: JsonValue = {key: value for key, value in node.items() if key != "allOf"}
                for part in parts:
                    merged = _merge(merged, part)
                node = merged
                continue
            return node, chain
        if isinstance(node, dict):
            node = {key: value for key, value in node.items() if key not in ("$ref", "allOf")}
        return node, chain

    def _generate(
        self, node: dict[str, JsonValue], pointer: str | None, depth: int, chain: Chain
    ) -> SearchStrategy[JsonValue]:
        ref = node.get("$ref")
        if isinstance(ref, str) and not any(key not in _INERT and key != "$ref" for key in node):
            if ref in chain:
                return _NOTHING
            target = self.doc.resolve(ref)
            if target is None:
                return self._any(depth)
            schema, where = target
            return st.deferred(lambda: self.build(schema, where, depth, (*chain, ref)))
        if isinstance(ref, str) or "allOf" in node:
            flat, flat_chain = self._flatten(node, chain)
            return self.build(flat, None, depth, flat_chain)
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                return self._choice(node, key, branches, pointer, depth, chain)
        if isinstance(node.get("if"), dict | bool):
            rest = {key: value for key, value in node.items() if key not in ("if", "then", "else")}
            then = _merge(_merge(rest, node["if"]), node.get("then", True))
            otherwise = _merge(rest, node.get("else", True))
            return _one_of(
                [self.build(then, None, depth, chain), self.build(otherwise, None, depth, chain)]
            )
        if "enum" in node or "const" in node:
            values = [node["const"]] if "const" in node else node["enum"]
            if not isinstance(values, list):
                return _NOTHING
            check = self.doc.check(node, pointer)
            allowed = [value for value in values if check is None or check(value)]
            return st.sampled_from(allowed) if allowed else _NOTHING
        return self._typed(node, pointer, depth, chain)

    def _choice(
        self,
        node: dict[str, JsonValue],
        key: str,
        branches: list[JsonValue],
        pointer: str | None,
        depth: int,
        chain: Chain,
    ) -> SearchStrategy[JsonValue]:
        rest = {name: value for name, value in node.items() if name != key}
        options: list[tuple[JsonValue, str | None]]
        if _constraining(rest):
            options = [(_merge(rest, branch), None) for branch in branches]
        else:
            options = [(branch, _child(pointer, key, i)) for i, branch in enumerate(branches)]
        ends = [self._ends(schema, chain, 4) for schema, _ in options]
        ending = [option for option, end in zip(options, ends, strict=True) if end]
        if depth >= self.max_depth:
            options = ending or options
        else:
            # Branches that end first: hypothesis prefers (and shrinks towards) the first one.
            options = ending + [
                option for option, end in zip(options, ends, strict=True) if not end
            ]
        if not options:
            return _NOTHING
        return _one_of([self.build(schema, where, depth, chain) for schema, where in options])

    def _ends(self, node: JsonValue, chain: Chain, budget: int) -> bool:
        """Whether ``node`` has a value that follows no ``$ref`` (a way out of recursion)."""
        if not isinstance(node, dict):
            return node is not False
        if budget <= 0:
            return False
        ref = node.get("$ref")
        if isinstance(ref, str):
            return False
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and not any(
                self._ends(branch, chain, budget - 1) for branch in branches
            ):
                return False
        parts = node.get("allOf")
        if isinstance(parts, list) and not all(
            self._ends(part, chain, budget - 1) for part in parts
        ):
            return False
        if "enum" in node or "const" in node:
            return True
        types = self._types(node)
        if any(name not in ("array", "object") for name in types):
            return True
        if "array" in types:
            items = node.get("items", True)
            minimum = node.get("minItems", 0)
            if not (isinstance(minimum, int) and minimum > 0) or self._ends(
                items, chain, budget - 1
            ):
                return True
        if "object" in types:
            properties = node.get("properties")
            properties = properties if isinstance(properties, dict) else {}
            required = node.get("required")
            names = (
                [name for name in required if isinstance(name, str)]
                if isinstance(required, list)
                else []
            )
            if all(self._ends(properties.get(name, True), chain, budget - 1) for name in names):
                return True
        return False

    def _types(self, node: dict[str, JsonValue]) -> list[str]:
        declared = node.get("type")
        if isinstance(declared, str | list):
            types = [name for name in _types_of(declared) if name in _TYPES]
        else:
            keys = node.keys()
            types = [
                name
                for name, group in (
                    ("object", _OBJECT_KEYS),
                    ("array", _ARRAY_KEYS),
                    ("string", _STRING_KEYS),
                    ("number", _NUMBER_KEYS),
                )
                if not group.isdisjoint(keys)
            ]
            if not types:
                types = list(_TYPES)
        if "integer" in types and "number" in types:
            types.remove("integer")
        return types

    def _typed(
        self, node: dict[str, JsonValue], pointer: str | None, depth: int, chain: Chain
    ) -> SearchStrategy[JsonValue]:
        types = self._types(node)
        if depth >= self.max_depth:
            scalars = [name for name in types if name not in ("array", "object")]
            types = scalars or types
        options: list[SearchStrategy[JsonValue]] = []
        for name in types:
            if name == "null":
                options.append(st.none())
            elif name == "boolean":
                options.append(st.booleans())
            elif name == "integer":
                options.append(_integers(node))
            elif name == "number":
                options.append(_numbers(node))
            elif name == "string":
                options.append(_strings(node))
            elif name == "array":
                options.append(self._array(node, pointer, depth))
            else:
                options.append(self._object(node, pointer, depth))
        if node.get("nullable") is True and "null" not in types:
            check = self.doc.check(node, pointer)
            if check is not None and check(None):
                options.append(st.none())
        return _one_of(options)

    # -- arrays and objects --

    def _array(
        self, node: dict[str, JsonValue], pointer: str | None, depth: int
    ) -> SearchStrategy[JsonValue]:
        minimal = depth >= self.max_depth
        inner = depth + 1
        prefix_schemas = node.get("prefixItems")
        prefix_list = prefix_schemas if isinstance(prefix_schemas, list) else []
        items = node.get("items", True)
        contains = node.get("contains")
        min_contains = _count(node.get("minContains"), 1) if "contains" in node else 0
        low = max(_count(node.get("minItems"), 0), min_contains)
        top = node.get("maxItems")
        # Fewer optional items deeper down, so that recursive arrays stay small.
        high = low if minimal else low + _SPREAD[min(depth, len(_SPREAD) - 1)]
        if isinstance(top, int) and not isinstance(top, bool):
            high = min(high, top)
        if items is False:
            high = min(high, len(prefix_list))
        if low > high:
            return _NOTHING
        prefix = [
            self.build(schema, _child(pointer, "prefixItems", i), inner)
            for i, schema in enumerate(prefix_list)
        ]
        rest = self.build(items, _child(pointer, "items"), inner)
        if rest is _NOTHING:
            high = min(high, len(prefix))
        if _NOTHING in prefix:
            high = min(high, prefix.index(_NOTHING))
        if low > high:
            return _NOTHING
        hits: SearchStrategy[JsonValue] | None = None
        if min_contains > 0:
            if items is True or (isinstance(items, dict) and not _constraining(items)):
                hits = self.build(contains, _child(pointer, "contains"), inner)
            else:
                hits = self.build(_merge(items, contains), None, inner)
            if hits is _NOTHING:
                return _NOTHING
        unique = node.get("uniqueItems") is True

        @st.composite
        def arrays(draw: DrawFn) -> JsonValue:
            # Known only now: whether a recursive item schema has values at all.
            longest = min(high, len(prefix)) if rest.is_empty else high
            assume(low <= longest)
            size = draw(st.integers(min_value=low, max_value=longest))
            spots: set[int] = set()
            if hits is not None:
                start = len(prefix) if size - len(prefix) >= min_contains else 0
                spots = set(
                    draw(
                        st.lists(
                            st.integers(min_value=start, max_value=size - 1),
                            min_size=min_contains,
                            max_size=min_contains,
                            unique=True,
                        )
                    )
                )
            out: list[JsonValue] = []
            seen: set[object] = set()
            for index in range(size):
                if index in spots and hits is not None:
                    strategy = hits
                else:
                    strategy = prefix[index] if index < len(prefix) else rest
                for _ in range(8):
                    value = draw(strategy)
                    if not unique or _canon(value) not in seen:
                        break
                else:
                    assume(False)
                seen.add(_canon(value))
                out.append(value)
            return out

        return arrays()

    def _object(
        self, node: dict[str, JsonValue], pointer: str | None, depth: int
    ) -> SearchStrategy[JsonValue]:
        minimal = depth >= self.max_depth
        inner = depth + 1
        raw_properties = node.get("properties")
        properties = raw_properties if isinstance(raw_properties, dict) else {}
        raw_required = node.get("required")
        required: list[str] = []
        for name in raw_required if isinstance(raw_required, list) else []:
            if isinstance(name, str) and name not in required:
                required.append(name)
        additional = node.get("additionalProperties", True)
        if "additionalProperties" not in node and node.get("unevaluatedProperties") is False:
            additional = False
        raw_patterns = node.get("patternProperties")
        patterns: list[tuple[re.Pattern[str] | None, str, JsonValue]] = [
            (_regex(source), source, schema)
            for source, schema in (raw_patterns.items() if isinstance(raw_patterns, dict) else ())
        ]

        def value_of(name: str) -> SearchStrategy[JsonValue] | None:
            if name in properties:
                return self.build(properties[name], _child(pointer, "properties", name), inner)
            for regex, source, schema in patterns:
                if regex is not None and regex.search(name):
                    return self.build(schema, _child(pointer, "patternProperties", source), inner)
            if additional is False:
                return None
            return self.build(additional, _child(pointer, "additionalProperties"), inner)

        raw_dependent = node.get("dependentRequired")
        dependent = raw_dependent if isinstance(raw_dependent, dict) else {}

        def with_dependencies(name: str, present: Container[str]) -> list[str]:
            """``name`` and the properties it requires (``dependentRequired``), not yet present."""
            out: list[str] = []
            todo = [name]
            while todo:
                current = todo.pop()
                if current in present or current in out:
                    continue
                out.append(current)
                wanted = dependent.get(current)
                todo += (
                    [other for other in wanted if isinstance(other, str)]
                    if isinstance(wanted, list)
                    else []
                )
            return out

        needed: list[tuple[str, SearchStrategy[JsonValue]]] = []
        for first in required:
            for name in with_dependencies(first, [name for name, _ in needed]):
                strategy = value_of(name)
                if strategy is None or strategy is _NOTHING:
                    return _NOTHING
                needed.append((name, strategy))
        optional = [
            (name, self.build(schema, _child(pointer, "properties", name), inner))
            for name, schema in properties.items()
            if name not in required and schema is not False
        ]
        optional = [(name, strategy) for name, strategy in optional if strategy is not _NOTHING]
        pattern_entries = [
            (
                st.from_regex(regex).filter(lambda key: key not in properties),
                self.build(schema, _child(pointer, "patternProperties", source), inner),
            )
            for regex, source, schema in patterns
            if regex is not None and schema is not False
        ]
        pattern_entries = [entry for entry in pattern_entries if entry[1] is not _NOTHING]
        extra: tuple[SearchStrategy[str], SearchStrategy[JsonValue]] | None = None
        if additional is not False and all(regex is not None for regex, _, _ in patterns):
            names = node.get("propertyNames")
            keys: SearchStrategy[str]
            if isinstance(names, dict):
                keys = self.build(names, _child(pointer, "propertyNames"), inner).filter(
                    lambda key: isinstance(key, str)
                )  # type: ignore[assignment]  # filtered to strings
            else:
                keys = st.text(_CHARS, min_size=1, max_size=10)
            compiled = [regex for regex, _, _ in patterns if regex is not None]
            extra = (
                keys.filter(
                    lambda key: (
                        key not in properties and not any(regex.search(key) for regex in compiled)
                    )
                ),
                self.build(additional, _child(pointer, "additionalProperties"), inner),
            )
        least = _count(node.get("minProperties"), 0)
        most_raw = node.get("maxProperties")
        most = most_raw if isinstance(most_raw, int) and not isinstance(most_raw, bool) else None
        if most is not None and len(needed) > most:
            return _NOTHING

        @st.composite
        def objects(draw: DrawFn) -> JsonValue:
            out: dict[str, JsonValue] = {name: draw(strategy) for name, strategy in needed}
            room = (most if most is not None else len(out) + 99) - len(out)
            if not minimal:
                for name, strategy in optional:
                    if strategy.is_empty:  # a recursive schema without values
                        continue
                    if name not in out and room > 0 and draw(st.booleans()):
                        room -= add(draw, out, with_dependencies(name, out), room)
                for keys, values in pattern_entries:
                    if room > 0 and draw(st.booleans()):
                        key = draw(keys)
                        if key not in out:
                            out[key] = draw(values)
                            room -= 1
                if extra is not None and room > 0 and not extra[1].is_empty:
                    for _ in range(draw(st.integers(min_value=0, max_value=min(2, room)))):
                        key = draw(extra[0])
                        if key not in out:
                            out[key] = draw(extra[1])
                            room -= 1
            missing = optional[:]
            attempts = 0
            while len(out) < least and attempts < 4 * least + 8:
                attempts += 1
                missing = [(name, strategy) for name, strategy in missing if name not in out]
                if missing:
                    add(draw, out, with_dependencies(missing[0][0], out), len(out) + 99)
                elif pattern_entries:
                    keys, values = pattern_entries[attempts % len(pattern_entries)]
                    key = draw(keys)
                    if key not in out:
                        out[key] = draw(values)
                elif extra is not None:
                    key = draw(extra[0])
                    if key not in out:
                        out[key] = draw(extra[1])
                else:
                    break
            assume(len(out) >= least)
            for name in list(out):
                add(draw, out, with_dependencies(name, ())[1:], len(out) + 99)
            return out

        def add(draw: DrawFn, out: dict[str, JsonValue], names: list[str], room: int) -> int:
            """Add ``names`` if there is room for all of them; return how many were added."""
            new = [name for name in names if name not in out]
            if len(new) > room:
                return 0
            for name in new:
                strategy = strategy_of(name)
                assume(strategy is not None)
                assert strategy is not None
                out[name] = draw(strategy)
            return len(new)

        known = dict(needed) | dict(optional)

        def strategy_of(name: str) -> SearchStrategy[JsonValue] | None:
            return known[name] if name in known else value_of(name)

        return objects()


def _count(value: JsonValue, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return default


def _bounds(
    node: dict[str, JsonValue],
) -> tuple[int | float | None, bool, int | float | None, bool]:
    """(low, low is exclusive, high, high is exclusive) of a numeric schema."""
    ends: list[tuple[int | float | None, bool]] = []
    for inclusive, exclusive, pick in (
        ("minimum", "exclusiveMinimum", max),
        ("maximum", "exclusiveMaximum", min),
    ):
        bound = node.get(inclusive)
        value: int | float | None = bound if _is_number(bound) else None  # type: ignore[assignment]
        strict = False
        flag = node.get(exclusive)
        if flag is True and value is not None:
            strict = True
        elif _is_number(flag):
            assert isinstance(flag, int | float)
            if value is None or pick(flag, value) == flag:
                value, strict = flag, True
        ends.append((value, strict))
    return ends[0][0], ends[0][1], ends[1][0], ends[1][1]


def _step(node: dict[str, JsonValue]) -> Fraction | None:
    multiple = node.get("multipleOf")
    if not _is_number(multiple):
        return None
    assert isinstance(multiple, int | float)
    step = Fraction(repr(multiple)) if isinstance(multiple, float) else Fraction(multiple)
    return step if step > 0 else None


def _integer_range(node: dict[str, JsonValue]) -> tuple[int, int]:
    low, low_strict, high, high_strict = _bounds(node)
    first = _INT_MIN
    if low is not None:
        first = max(first, math.floor(low) + 1 if low_strict else math.ceil(low))
    last = _INT_MAX
    if high is not None:
        last = min(last, math.ceil(high) - 1 if high_strict else math.floor(high))
    return first, last


def _integers(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    first, last = _integer_range(node)
    step = _step(node)
    if step is not None:
        # An integer n is a multiple of p/q (in lowest terms) exactly when p divides n.
        grain = step.numerator
        first, last = -(-first // grain), last // grain
        if first > last:
            return _NOTHING
        return st.integers(min_value=first, max_value=last).map(lambda k: k * grain)
    if first <= last:
        return st.integers(min_value=first, max_value=last)
    low, _, high, _ = _bounds(node)
    if (low is not None and low > _INT_MAX) or (high is not None and high < _INT_MIN):
        # Integers too big for 64 bits: JSON writes them as floats, which are integral there.
        return _floats(node).filter(lambda value: isinstance(value, float) and value.is_integer())
    return _NOTHING


def _floats(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    """Finite floats within the bounds of ``node``."""
    low, low_strict, high, high_strict = _bounds(node)
    smallest = None if low is None else float(low)
    largest = None if high is None else float(high)
    if smallest is not None and low_strict:
        smallest = math.nextafter(smallest, math.inf)
    if largest is not None and high_strict:
        largest = math.nextafter(largest, -math.inf)
    if smallest is not None and largest is not None and smallest > largest:
        return _NOTHING
    if (smallest is not None and math.isinf(smallest)) or (
        largest is not None and math.isinf(largest)
    ):
        return _NOTHING
    return st.floats(min_value=smallest, max_value=largest, allow_nan=False, allow_infinity=False)


def _numbers(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    low, low_strict, high, high_strict = _bounds(node)
    step = _step(node)
    if step is not None:
        first = None if low is None else math.ceil(Fraction(low) / step)
        last = None if high is None else math.floor(Fraction(high) / step)
        if first is None:
            first = -(10**6) if last is None else min(-(10**6), last - 10**6)
        if last is None:
            last = max(10**6, first + 10**6)
        if low is not None and low_strict and first * step == low:
            first += 1
        if high is not None and high_strict and last * step == high:
            last -= 1
        if first > last:
            return _NOTHING
        exact = Decimal(step.numerator) / Decimal(step.denominator)
        return st.integers(min_value=first, max_value=last).map(lambda k: _multiple(k, step, exact))
    options: list[SearchStrategy[JsonValue]] = [_integers(node), _floats(node)]
    return _one_of(options)


def _multiple(k: int, step: Fraction, exact: Decimal) -> JsonValue:
    value = k * step
    if value.denominator == 1 and _INT_MIN <= value.numerator <= _INT_MAX:
        return value.numerator
    return float(Decimal(k) * exact)


def _strings(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    shortest = _count(node.get("minLength"), 0)
    longest_raw = node.get("maxLength")
    longest = _count(longest_raw, -1) if longest_raw is not None else None
    if longest is not None and longest < 0:
        longest = None
    if longest is not None and shortest > longest:
        return _NOTHING
    pattern = node.get("pattern")
    regex = _regex(pattern) if isinstance(pattern, str) else None
    plain: SearchStrategy[str]
    if regex is not None:
        plain = st.from_regex(regex, fullmatch=True)
        if longest is None:
            plain = st.one_of(plain, st.from_regex(regex, fullmatch=False))
        if shortest > 0 or longest is not None:
            plain = plain.filter(
                lambda text: shortest <= len(text) and (longest is None or len(text) <= longest)
            )
    else:
        plain = st.text(
            _CHARS,
            min_size=shortest,
            max_size=longest if longest is not None else shortest + 20,
        )
    fmt = node.get("format")
    if not isinstance(fmt, str) or fmt not in _FORMATS:
        return plain
    formatted = _FORMATS[fmt]

    def fits(text: str) -> bool:
        return (
            shortest <= len(text)
            and (longest is None or len(text) <= longest)
            and (regex is None or regex.search(text) is not None)
        )

    @st.composite
    def strings(draw: DrawFn) -> JsonValue:
        # The format when it also meets the other keywords, else a plain string: ``format``
        # only annotates, so a string that misses it is still valid.
        text = draw(formatted)
        return text if fits(text) else draw(plain)

    return strings()


# -- mutations ------------------------------------------------------------------------------------

Path: TypeAlias = tuple[str | int, ...]


def _replace(value: JsonValue, path: Path, new: JsonValue) -> JsonValue:
    """A copy of ``value`` with the value at ``path`` replaced (containers on the way copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        return {**value, head: _replace(value[head], rest, new)}
    if isinstance(value, list) and isinstance(head, int):
        return [*value[:head], _replace(value[head], rest, new), *value[head + 1 :]]
    raise KeyError(head)


def _where(path: Path) -> str:
    return _pointer(path) or "the arguments"


_SAMPLES: Final[dict[str, Callable[[JsonValue], JsonValue]]] = {
    "null": lambda value: None,
    "boolean": lambda value: True,
    "integer": lambda value: 1,
    "number": lambda value: 1.5,
    "string": lambda value: _dumps(value) if isinstance(value, int | float | bool) else "x",
    "array": lambda value: [value],
    "object": lambda value: {"value": value},
}


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: Path
    kind: str
    description: str
    value: JsonValue


class _Mutator:
    """Finds the mutations of a valid value that a schema rejects."""

    def __init__(self, document: _Document) -> None:
        self.doc = document

    def _walk(
        self,
        node: JsonValue,
        value: JsonValue,
        path: Path,
        out: list[tuple[Path, JsonValue, dict[str, JsonValue]]],
        seen: set[tuple[int, Path]],
    ) -> None:
        if not isinstance(node, dict) or len(out) >= 400 or (id(node), path) in seen:
            return
        seen.add((id(node), path))
        out.append((path, value, node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self.doc.resolve(ref)
            if target is not None:
                self._walk(target[0], value, path, out, seen)
        for key in ("allOf", "anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                for branch in branches:
                    self._walk(branch, value, path, out, seen)
        for key in ("then", "else"):
            self._walk(node.get(key), value, path, out, seen)
        if isinstance(value, dict):
            properties = node.get("properties")
            properties = properties if isinstance(properties, dict) else {}
            patterns = node.get("patternProperties")
            patterns = patterns if isinstance(patterns, dict) else {}
            for name, item in value.items():
                matched = name in properties
                if matched:
                    self._walk(properties[name], item, (*path, name), out, seen)
                for source, schema in patterns.items():
                    regex = _regex(source)
                    if regex is not None and regex.search(name):
                        matched = True
                        self._walk(schema, item, (*path, name), out, seen)
                if not matched:
                    self._walk(node.get("additionalProperties"), item, (*path, name), out, seen)
        elif isinstance(value, list):
            prefix = node.get("prefixItems")
            prefix = prefix if isinstance(prefix, list) else []
            for index, item in enumerate(value):
                schema = prefix[index] if index < len(prefix) else node.get("items")
                self._walk(schema, item, (*path, index), out, seen)

    def candidates(self, value: JsonValue) -> list[_Candidate]:
        """Every mutation found for ``value`` that the schema rejects, in a stable order."""
        spots: list[tuple[Path, JsonValue, dict[str, JsonValue]]] = []
        self._walk(self.doc.root, value, (), spots, set())
        found: list[_Candidate] = []
        done: set[str] = set()
        for path, here, node in spots:
            for kind, description, replacement, pointer_path in _mutations(node, here):
                try:
                    mutated = _replace(value, path, replacement)
                    text = _dumps(mutated)
                except (KeyError, orjson.JSONEncodeError):
                    continue
                if text in done or self.doc.validator.is_valid(mutated):
                    continue
                done.add(text)
                where = (*path, *pointer_path)
                found.append(_Candidate(where, kind, f"{_where(path)}: {description}", mutated))
        return found


def _mutations(
    node: dict[str, JsonValue], value: JsonValue
) -> Iterator[tuple[str, str, JsonValue, Path]]:
    """(kind, description, replacement, extra path to the change) for one schema and value."""
    shown = _show(value)
    declared = node.get("type")
    if isinstance(declared, str | list):
        allowed = set(_types_of(declared))
        if "number" in allowed:
            allowed.add("integer")
        for name in _TYPES:
            if name not in allowed and name != _json_type(value):
                sample = _SAMPLES[name](value)
                yield (
                    "wrong_type",
                    f"{_json_type(value)} {shown} replaced by {name} {_show(sample)}, "
                    f"expected {'/'.join(_types_of(declared))}",
                    sample,
                    (),
                )
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        members = {_canon(member) for member in enum}
        for sample in _outside(enum):
            if _canon(sample) not in members:
                yield (
                    "outside_enum",
                    f"{shown} replaced by {_show(sample)}, not one of {_show(enum, 80)}",
                    sample,
                    (),
                )
    if "const" in node:
        for sample in _outside([node["const"]]):
            if _canon(sample) != _canon(node["const"]):
                yield (
                    "not_const",
                    f"{shown} replaced by {_show(sample)}, not the constant",
                    sample,
                    (),
                )
    forbidden = node.get("not")
    if isinstance(forbidden, dict) and not _has_ref(forbidden):
        check = _compile_alone(orjson.dumps(forbidden))
        samples = [_SAMPLES[name](value) for name in _TYPES]
        listed = forbidden.get("enum")
        samples[:0] = listed if isinstance(listed, list) else []
        if "const" in forbidden:
            samples.insert(0, forbidden["const"])
        for sample in samples:
            if check is not None and check.is_valid(sample):
                yield (
                    "not_allowed",
                    f"{shown} replaced by {_show(sample)}, which the 'not' schema forbids",
                    sample,
                    (),
                )
    if isinstance(value, dict):
        yield from _object_mutations(node, value)
    elif isinstance(value, list):
        yield from _array_mutations(node, value)
    elif isinstance(value, str):
        yield from _string_mutations(node, value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield from _number_mutations(node, value)


_GROWTH: Final = 1000
"""Limits past this many items or properties (100 times as many characters) are not exceeded:
the arguments would be too big to be useful."""


def _outside(members: list[JsonValue]) -> list[JsonValue]:
    strings = [member for member in members if isinstance(member, str)]
    numbers = [member for member in members if _is_number(member)]
    out: list[JsonValue] = []
    if strings:
        out += [strings[0] + "_x", strings[0].upper() + "X", "unknown"]
    if numbers:
        out.append(max(numbers) + 1)  # type: ignore[type-var, operator]  # numbers
    if any(isinstance(member, bool) for member in members):
        out.append(not next(member for member in members if isinstance(member, bool)))
    if not out:
        out.append("unknown")
    return out


def _object_mutations(
    node: dict[str, JsonValue], value: dict[str, JsonValue]
) -> Iterator[tuple[str, str, JsonValue, Path]]:
    required = node.get("required")
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and name in value:
            rest = {key: item for key, item in value.items() if key != name}
            yield "missing_required", f"required property {name!r} removed", rest, ()
    closed = node.get("additionalProperties") is False or (
        "additionalProperties" not in node and node.get("unevaluatedProperties") is False
    )
    properties = node.get("properties")
    known = properties if isinstance(properties, dict) else {}
    if closed:
        name = "unexpected"
        while name in value or name in known:
            name += "_"
        yield (
            "extra_property",
            f"property {name!r} added, where no other properties are allowed",
            {**value, name: True},
            (name,),
        )
    least = node.get("minProperties")
    if isinstance(least, int) and least > 0 and len(value) >= least:
        keep = list(value)[: least - 1]
        yield (
            "too_few_properties",
            f"{len(value) - len(keep)} properties removed, fewer than minProperties {least}",
            {key: value[key] for key in keep},
            (),
        )
    most = node.get("maxProperties")
    if isinstance(most, int) and not isinstance(most, bool) and 0 <= most <= _GROWTH:
        grown = dict(value)
        index = 0
        while len(grown) <= most:
            grown.setdefault(f"extra_{index}", True)
            index += 1
        yield (
            "too_many_properties",
            f"{len(grown)} properties, more than maxProperties {most}",
            grown,
            (),
        )


def _array_mutations(
    node: dict[str, JsonValue], value: list[JsonValue]
) -> Iterator[tuple[str, str, JsonValue, Path]]:
    least = node.get("minItems")
    if isinstance(least, int) and least > 0 and len(value) >= least:
        yield (
            "too_few_items",
            f"{len(value) - least + 1} items removed, fewer than minItems {least}",
            value[: least - 1],
            (),
        )
    most = node.get("maxItems")
    if isinstance(most, int) and not isinstance(most, bool) and 0 <= most <= _GROWTH:
        filler: JsonValue = value[-1] if value else None
        grown = value + [filler] * (most + 1 - len(value))
        yield (
            "too_many_items",
            f"{len(grown)} items, more than maxItems {most}",
            grown,
            (),
        )
    if node.get("uniqueItems") is True and value:
        if len(value) >= 2:
            copied = [value[0], value[0], *value[2:]]
            yield "not_unique", "item 1 replaced by a copy of item 0", copied, ()
        yield "not_unique", "item 0 appended again", [*value, value[0]], ()


def _string_mutations(
    node: dict[str, JsonValue], value: str
) -> Iterator[tuple[str, str, JsonValue, Path]]:
    shown = _show(value)
    least = node.get("minLength")
    if isinstance(least, int) and least > 0:
        cut = value[: least - 1]
        yield "too_short", f"{shown} cut to {_show(cut)}, shorter than minLength {least}", cut, ()
    most = node.get("maxLength")
    if isinstance(most, int) and not isinstance(most, bool) and 0 <= most <= 100 * _GROWTH:
        grown = value + (value[-1:] or "x") * (most + 1 - len(value))
        yield (
            "too_long",
            f"{shown} grown to {len(grown)} characters, over maxLength {most}",
            grown,
            (),
        )
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        for sample in ("", " ", "~!", value + "\u0000", "\u00e9" * 3, "0"):
            yield (
                "pattern_mismatch",
                f"{shown} replaced by {_show(sample)}, which does not match {pattern!r}",
                sample,
                (),
            )


def _number_mutations(
    node: dict[str, JsonValue], value: int | float
) -> Iterator[tuple[str, str, JsonValue, Path]]:
    low, low_strict, high, high_strict = _bounds(node)
    whole = isinstance(value, int)
    if low is not None:
        below: JsonValue = low if low_strict else (math.floor(low) - 1 if whole else low - 1)
        word = "the exclusive minimum" if low_strict else "below the minimum"
        yield "out_of_bounds", f"{value} replaced by {_show(below)}, {word} {low}", below, ()
    if high is not None:
        above: JsonValue = high if high_strict else (math.ceil(high) + 1 if whole else high + 1)
        word = "the exclusive maximum" if high_strict else "above the maximum"
        yield "out_of_bounds", f"{value} replaced by {_show(above)}, {word} {high}", above, ()
    step = _step(node)
    if step is not None:
        samples: list[JsonValue] = [value + 1] if whole and step > 1 else []
        if abs(value) < 2**50:  # exact enough as a float
            samples.append(float(value + step / 2))
        for sample in samples:
            yield (
                "not_multiple_of",
                f"{value} replaced by {_show(sample)}, not a multiple of {node['multipleOf']}",
                sample,
                (),
            )


def _garbled(text: str) -> list[tuple[str, str]]:
    """Texts close to ``text`` that are not JSON, each with what was done."""
    out = [
        (text[: max(len(text) - 1, 0)], "the last character cut off"),
        (text[: len(text) // 2], "cut in half"),
        (text + "}", "a stray '}' appended"),
        ("", "empty"),
    ]
    if text.endswith(("}", "]")) and len(text) > 2:
        out.append((text[:-1] + "," + text[-1], "a trailing comma added"))
    if '"' in text:
        out.append((text.replace('"', "'"), "double quotes replaced by single quotes"))
    unquoted = re.sub(r'"([A-Za-z_][A-Za-z0-9_]*)":', r"\1:", text)
    if unquoted != text:
        out.append((unquoted, "object keys unquoted"))
    pythonic = text.replace("true", "True").replace("false", "False").replace("null", "None")
    if pythonic != text:
        out.append((pythonic, "JSON literals written the Python way"))
    return out


def _not_json(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return True
    return False


# -- the public API -------------------------------------------------------------------------------


def _prepare(schema: SchemaSource, max_depth: int) -> tuple[_Document, SearchStrategy[JsonValue]]:
    if max_depth < 0:
        raise ValueError(f"max_depth must be a non-negative integer, got {max_depth!r}")
    return _prepared(orjson.dumps(_load(schema)), max_depth)


@functools.lru_cache(maxsize=256)
def _prepared(data: bytes, max_depth: int) -> tuple[_Document, SearchStrategy[JsonValue]]:
    """The document and strategy of a serialized schema, built once (strategies are immutable)."""
    document = _Document(orjson.loads(data))
    strategy = _Builder(document, max_depth).build(document.root, "", 0)
    return document, strategy.filter(document.validator.is_valid)


def from_schema(schema: SchemaSource, *, max_depth: int = 6) -> SearchStrategy[JsonValue]:
    """A strategy for JSON values (as Python builds them) that ``schema`` accepts.

    Generation follows the keywords of draft 2020-12 (types, ``enum``/``const``, objects,
    arrays, strings with ``pattern`` and ``format``, numbers with bounds and ``multipleOf``,
    ``anyOf``/``oneOf``/``allOf``/``not``/``if``, local ``$ref`` including recursion) and every
    value is checked with `ferrotool.JsonSchemaValidator`, so each one is valid. Unknown keywords
    are ignored; OpenAPI's ``nullable`` adds ``null`` where the validator allows it.

    Args:
        schema: The schema: a dict or bool, JSON text, a `ToolSpec` or an object with one as
            ``spec``.
        max_depth: Arrays and objects nested this deep are kept as small as the schema allows
            (required properties only, ``minItems`` items), and recursive schemas take a
            branch that ends.

    Returns:
        The strategy. Drawing from it fails with hypothesis' ``Unsatisfiable`` when the schema
        accepts nothing.

    Raises:
        ValueError: The schema is invalid (the validator does not compile it), or ``max_depth``
            is negative.
        TypeError: ``schema`` is none of the accepted kinds.
    """
    return _prepare(schema, max_depth)[1]


def valid_arguments(tool: SchemaSource) -> SearchStrategy[str]:
    """A strategy for argument JSON texts that the tool's schema accepts.

    Args:
        tool: The argument schema: a dict or bool, JSON text, a `ToolSpec` or an object with
            one as ``spec``.

    Returns:
        JSON texts (``orjson.dumps(value).decode()``) of values drawn from `from_schema`.

    Raises:
        ValueError: The schema is invalid.
        TypeError: ``tool`` is none of the accepted kinds.
    """
    return from_schema(tool).map(_dumps)


def invalid_arguments(
    tool: SchemaSource, *, include_malformed_json: bool = False
) -> SearchStrategy[InvalidArguments]:
    """A strategy for argument JSON texts that the tool's schema rejects, with what is wrong.

    Each example is a valid value (from `from_schema`) with one mutation applied: a required
    property removed, a value of the wrong type, a value outside the ``enum``, a property the
    schema does not allow, a number out of bounds, a string too short, too long or not matching
    its ``pattern``, an array with too few, too many or repeated items... Every mutation is
    checked to make the value invalid; the kinds available for a value are drawn evenly.

    Args:
        tool: The argument schema: a dict or bool, JSON text, a `ToolSpec` or an object with
            one as ``spec``.
        include_malformed_json: Also produce texts that are not JSON at all (truncated, single
            quotes, trailing commas...), with the kind ``"not_json"``.

    Returns:
        The strategy. For a schema that rejects nothing (``true``, ``{}``) it only has
        ``not_json`` examples, or none (hypothesis' ``Unsatisfiable``) without them.

    Raises:
        ValueError: The schema is invalid.
        TypeError: ``tool`` is none of the accepted kinds.
    """
    document, valid = _prepare(tool, 6)
    mutator = _Mutator(document)

    @st.composite
    def invalid(draw: DrawFn) -> InvalidArguments:
        value = draw(valid)
        by_kind: dict[str, list[_Candidate]] = {}
        for candidate in mutator.candidates(value):
            by_kind.setdefault(candidate.kind, []).append(candidate)
        if include_malformed_json:
            text = _dumps(value)
            for garbled, what in _garbled(text):
                if _not_json(garbled) and not document.validator.is_valid_json(garbled):
                    by_kind.setdefault("not_json", []).append(
                        _Candidate((), "not_json", f"the arguments' JSON {what}", garbled)
                    )
        assume(by_kind)
        kind = draw(st.sampled_from([kind for kind in MUTATION_KINDS if kind in by_kind]))
        chosen = draw(st.sampled_from(by_kind[kind]))
        if kind == "not_json":
            assert isinstance(chosen.value, str)
            return InvalidArguments(
                arguments=chosen.value,
                mutation=Mutation(pointer="", kind=kind, description=chosen.description),
                value=value,
            )
        return InvalidArguments(
            arguments=_dumps(chosen.value),
            mutation=Mutation(
                pointer=_pointer(chosen.path), kind=kind, description=chosen.description
            ),
            value=chosen.value,
        )

    return invalid()


__all__ = [
    "MUTATION_KINDS",
    "HasSpec",
    "InvalidArguments",
    "Mutation",
    "SchemaSource",
    "from_schema",
    "invalid_arguments",
    "valid_arguments",
]
