"""Explicit nulls for optional properties, read as the properties left out.

Strict provider schemas (OpenAI's, Anthropic's) make every property required and the optional
ones nullable, so a model sends ``null`` for every argument it leaves out. Against the tool's
canonical schema such a ``null`` may be any error (a wrong type, a value outside an enum, no
branch of a union matching). The rule: an object member whose value is ``null``, that the
canonical schema declares (``properties``) and does not require, counts as absent. It is
applied recursively through declared properties, ``additionalProperties`` schemas, array
``items`` and ``prefixItems``, ``$ref``, ``allOf`` and the branches of ``anyOf`` and ``oneOf``
(which branch applies is for validation to decide, so a ``null`` member is left out when some
branch declares it and no branch requires it).

The rule runs only on the error path: valid arguments are never re-read. The arguments are
read and written back exactly: numbers keep their text (no float rounding, no integer size
limit), strings their code points.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Final, TypeAlias

from ferrotool._values.json import JsonValue

Document: TypeAlias = object
"""A parsed JSON value whose numbers are `_Number` texts."""

_UNREADABLE: Final = frozenset({"invalid_json", "input_too_large", "nesting_too_deep"})
_MAX_REF_HOPS: Final = 32
_MAX_BRANCHES: Final = 256


class _Number(str):
    """A JSON number, kept as its text."""

    __slots__ = ()


def _no_constant(name: str) -> object:
    raise ValueError(f"not JSON: {name}")


def readable(codes: Iterable[str]) -> bool:
    """Whether arguments that failed with these error codes can be read again for nulls."""
    return _UNREADABLE.isdisjoint(codes)


def loads(text: str | bytes) -> Document:
    """Read JSON text, every number kept as its text."""
    return json.loads(text, parse_float=_Number, parse_int=_Number, parse_constant=_no_constant)


def dumps(value: Document) -> str:
    """Write a document read by `loads` back as JSON text (iteratively: no recursion)."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            out.append(item.text)
        elif isinstance(item, _Number):
            out.append(str.__str__(item))
        elif isinstance(item, str):
            out.append(json.dumps(item))
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, dict):
            stack.append(_CLOSE_OBJECT)
            members = list(item.items())
            for index in range(len(members) - 1, -1, -1):
                key, member = members[index]
                stack.append(member)
                stack.append(_Token(json.dumps(key) + ":"))
                if index:
                    stack.append(_COMMA)
            out.append("{")
        elif isinstance(item, list):
            stack.append(_CLOSE_ARRAY)
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_COMMA)
            out.append("[")
        else:
            raise TypeError(f"not a JSON document value: {type(item).__name__}")
    return "".join(out)


class _Token:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_COMMA: Final = _Token(",")
_CLOSE_OBJECT: Final = _Token("}")
_CLOSE_ARRAY: Final = _Token("]")


def drop_optional_nulls(document: Document, schema: JsonValue) -> int:
    """Remove, in place, the ``null`` members the schema declares but does not require.

    Each value is read against every schema that may apply to it (the branches of ``allOf``,
    ``anyOf`` and ``oneOf`` at every level, so an optional list of records reaches the records'
    own optional members).

    Returns:
        How many members were removed.
    """
    removed = 0
    stack: list[tuple[object, list[JsonValue]]] = [(document, [schema])]
    while stack:
        value, nodes = stack.pop()
        if isinstance(value, dict):
            properties, required, additional = _object_keywords(_branches(nodes, schema))
            for key in list(value):
                member = value[key]
                declared = properties.get(key)
                if member is None and declared and key not in required:
                    del value[key]
                    removed += 1
                elif declared:
                    stack.append((member, declared))
                elif additional:
                    stack.append((member, additional))
        elif isinstance(value, list):
            arrays = _array_keywords(_branches(nodes, schema))
            for index, element in enumerate(value):
                subs = [
                    prefix[index] if index < len(prefix) else items
                    for prefix, items in arrays
                    if index < len(prefix) or items is not None
                ]
                if subs:
                    stack.append((element, subs))
    return removed


def _branches(nodes: list[JsonValue], root: JsonValue) -> list[Mapping[str, JsonValue]]:
    """The schema objects that may apply to a value.

    That is ``nodes`` resolved, with the members of their ``allOf``, ``anyOf`` and ``oneOf``
    at every depth (a bounded number of them).
    """
    pending = [_resolve(node, root) for node in nodes]
    out: list[Mapping[str, JsonValue]] = []
    while pending and len(out) < _MAX_BRANCHES:
        current = pending.pop()
        out.append(current)
        for keyword in ("allOf", "anyOf", "oneOf"):
            members = current.get(keyword)
            if isinstance(members, list):
                pending.extend(_resolve(member, root) for member in members)
    return out


def _resolve(node: JsonValue, root: JsonValue) -> Mapping[str, JsonValue]:
    """The schema object ``node`` stands for, following local ``$ref`` pointers."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return node
        target = _pointer(root, ref[1:])
        if target is None:
            return node
        if len(node) > 1:  # siblings of $ref apply too (2020-12): merge them under allOf
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            return {"allOf": [target, siblings]}
        node = target
    return {}


def _pointer(root: JsonValue, pointer: str) -> JsonValue | None:
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return None  # an anchor: not followed
    node: JsonValue = root
    for raw in pointer[1:].split("/"):
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return None
    return node


def _object_keywords(
    branches: list[Mapping[str, JsonValue]],
) -> tuple[dict[str, list[JsonValue]], set[str], list[JsonValue]]:
    """What an object's schema branches say of its members.

    Returns the declared properties (each with every schema declaring it), the required names
    and the additional-properties schemas: a property is declared when some branch declares
    it, required when some branch requires it.
    """
    properties: dict[str, list[JsonValue]] = {}
    required: set[str] = set()
    additional: list[JsonValue] = []
    for branch in branches:
        declared = branch.get("properties")
        if isinstance(declared, dict):
            for key, sub in declared.items():
                properties.setdefault(key, []).append(sub)
        names = branch.get("required")
        if isinstance(names, list):
            required.update(name for name in names if isinstance(name, str))
        extra = branch.get("additionalProperties")
        if isinstance(extra, dict):
            additional.append(extra)
    return properties, required, additional


def _array_keywords(
    branches: list[Mapping[str, JsonValue]],
) -> list[tuple[list[JsonValue], JsonValue | None]]:
    """The ``prefixItems`` schemas and the ``items`` schema of each array schema branch."""
    out: list[tuple[list[JsonValue], JsonValue | None]] = []
    for branch in branches:
        prefix = branch.get("prefixItems")
        items = branch.get("items")
        if isinstance(prefix, list) or isinstance(items, dict):
            out.append(
                (
                    list(prefix) if isinstance(prefix, list) else [],
                    items if isinstance(items, dict) else None,
                )
            )
    return out


__all__ = ["drop_optional_nulls", "dumps", "loads", "readable"]
