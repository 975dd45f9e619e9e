"""Invalid values: the mutations of a valid value that break exactly one keyword of the schema."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, TypeAlias

import orjson

from ferrotool._values.json import JsonValue
from ferrotool.testing._document import (
    _TYPES,
    _bounds,
    _canon,
    _compile_alone,
    _Document,
    _dumps,
    _has_ref,
    _is_number,
    _json_type,
    _pointer,
    _show,
    _step,
    _types_of,
)
from ferrotool.testing._regex import _regex

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
