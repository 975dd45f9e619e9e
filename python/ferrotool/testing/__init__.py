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

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias, final, runtime_checkable

import orjson

from ferrotool._extras import requires_extra
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec

with requires_extra("ferrotool.testing", "testing"):
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.strategies import DrawFn, SearchStrategy

    # The package: _document (the schema document: validators, $ref resolution, allOf
    # merging), _regex (ECMA-262 patterns for Python), _scalars (numbers, strings, formats, any
    # JSON), _generate (valid values), _mutate (one violation each).
    from ferrotool.testing._document import _Document, _dumps, _pointer
    from ferrotool.testing._generate import _Builder
    from ferrotool.testing._mutate import _Candidate, _garbled, _Mutator, _not_json


@runtime_checkable
class HasSpec(Protocol):
    """Anything that carries a `ToolSpec` as ``spec`` (a tool object, for instance)."""

    @property
    def spec(self) -> ToolSpec:
        """The tool's spec; ``spec.parameters_json`` is its argument schema."""
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


# -- loading the schema ---------------------------------------------------------------------------


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
        return _load(source.parameters_json)
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
        return _load(spec.parameters_json)
    raise TypeError(
        "expected a JSON Schema (dict, bool, JSON bytes or str), a ToolSpec or an object with "
        f"a ToolSpec as `spec`, got {type(source).__name__}"
    )


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
