"""Valid values: the strategy of a schema, built node by node (`_Builder`)."""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Final, TypeAlias

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ferrotool._values.json import JsonValue
from ferrotool.testing._document import (
    _INERT,
    _TYPES,
    _canon,
    _child,
    _constraining,
    _count,
    _Document,
    _merge,
    _types_of,
)
from ferrotool.testing._regex import _regex
from ferrotool.testing._scalars import (
    _ANY,
    _CHARS,
    _NOTHING,
    _SCALARS,
    _integers,
    _numbers,
    _one_of,
    _strings,
)

# -- the keywords of each type --------------------------------------------------------------------

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
