"""The schema document: compiled validators, JSON helpers, ``$ref`` resolution, ``allOf`` merging.

Shared by generation (`_generate`, `_scalars`) and mutation (`_mutate`); the names are private
to `ferrotool.testing`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Final
from urllib.parse import quote, unquote

import orjson

from ferrotool._core import JsonSchemaValidator
from ferrotool._values.json import JsonValue

# -- compiling ------------------------------------------------------------------------------------


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


# -- the document ---------------------------------------------------------------------------------


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


# -- reading keywords -----------------------------------------------------------------------------


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
