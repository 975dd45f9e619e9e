"""Output schemas: the JSON Schema of a tool's structured result, from its return type.

The shapes follow the MCP SDK's convention (``func_metadata``), which MCP clients validate
``structuredContent`` against:

* A type whose schema is a JSON object (a dataclass, ``TypedDict``, ``NamedTuple``, pydantic
  model, ``dict[str, T]``) is the output schema itself; a record's definition is inlined at the
  root, since MCP asks for ``"type": "object"`` there.
* Any other type (``int``, ``float``, ``bool``, lists, tuples, unions...) is wrapped:
  ``{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}``, and the
  structured value is ``{"result": <value>}``.
* A type that says nothing about the result has no output schema: no annotation, ``str``,
  ``None``, ``object`` / ``Any``, a `ToolResultBlock`, content blocks (or lists of them), an
  awaitable of one of those, and a union with one of those in it (a union of ``str`` and
  ``None`` alone included).
"""

from __future__ import annotations

import collections.abc as cabc
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, final

import orjson
import typing_extensions

from ferrotool import _core
from ferrotool._schema.hints import function_hints, function_parts, resolve_hints
from ferrotool._schema.schema import DEFAULT_LIMITS, type_schema
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.content import CONTENT_TYPES
from ferrotool._values.json import JsonValue
from ferrotool.errors import SchemaError

_NoneType: Final = type(None)
_UNTYPED: Final = frozenset({object, typing.Any, typing_extensions.Any, ToolResultBlock})
_TEXT: Final = frozenset({str, _NoneType, None})
_AWAITABLES: Final = frozenset({cabc.Awaitable, cabc.Coroutine})
_UNIONS: Final = (typing.Union, types.UnionType)
_RESULT_KEY: Final = "result"


@final
@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A tool's output schema, and whether its structured value is wrapped.

    Attributes:
        schema_json: The JSON Schema of the structured value, serialized; its root is a JSON
            object.
        wrapped: The structured value is ``{"result": <value>}`` (the type's schema is not an
            object's).
    """

    schema_json: bytes
    wrapped: bool


def schema_output(schema: Mapping[str, JsonValue], label: str) -> OutputSchema:
    """The output of a declared JSON Schema: as is for an object's, else wrapped.

    Raises:
        SchemaError: ``schema`` is not a JSON Schema.
    """
    try:
        data = orjson.dumps(dict(schema))
        _core.JsonSchemaValidator(data)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{label}: invalid output_schema: {exc}") from exc
    return _shaped(orjson.loads(data))


def type_output(tp: object, label: str) -> OutputSchema | None:
    """The output of a return type; ``None`` when the type says nothing about the result.

    Raises:
        SchemaError: The type cannot become a JSON Schema.
    """
    inner = _awaited(tp)
    if _opaque(inner):
        return None
    try:
        schema = type_schema(inner, limits=DEFAULT_LIMITS).json_schema()
    except SchemaError as exc:
        raise SchemaError(f"{label}: the return type has no output schema: {exc}") from exc
    return _shaped(schema)


def declared_output(
    declared: Mapping[str, JsonValue] | object | None, label: str
) -> OutputSchema | None:
    """The output of a declaration: a JSON Schema dict, a type, or ``None`` for none.

    Raises:
        SchemaError: The declaration is not a JSON Schema, or the type cannot become one.
    """
    if declared is None:
        return None
    if isinstance(declared, Mapping):
        return schema_output(typing.cast("Mapping[str, JsonValue]", declared), label)
    return type_output(declared, label)


def return_output(
    fn: Callable[..., object], option: Mapping[str, JsonValue] | object | bool | None
) -> OutputSchema | None:
    """A function tool's output: derived from its return annotation unless ``option`` decides.

    ``option`` is ``False`` for none, a JSON Schema dict or a type to declare one, ``True`` to
    require the derived one, and ``None`` to derive one when the annotation allows (an
    annotation that cannot become a schema then gives none).

    Raises:
        SchemaError: The declared output is invalid, or with ``True`` the return annotation
            has no output schema.
    """
    name, target, _ = function_parts(fn)
    label = f"tool {name!r}"
    if option is False:
        return None
    if option is not None and option is not True:
        return declared_output(option, label)
    if option is True:
        annotation = _return_annotation(target, name)
        output = type_output(annotation, label)
        if output is None:
            raise SchemaError(f"{label}: the return type {annotation!r} has no output schema")
        return output
    try:
        return type_output(_return_annotation(target, name), label)
    except SchemaError:
        return None


def _return_annotation(target: object, name: str) -> object:
    hints = function_hints(target, name)
    if hints is None:
        hints = resolve_hints(target, name)
    return hints.get("return", object)


def _bare(tp: object) -> object:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _awaited(tp: object) -> object:
    tp = _bare(tp)
    if typing.get_origin(tp) in _AWAITABLES:
        args = typing.get_args(tp)
        return _awaited(args[-1]) if args else object
    return tp


def _opaque(tp: object) -> bool:
    """Whether a return type says nothing about a structured result."""
    tp = _bare(tp)
    origin = typing.get_origin(tp)
    if origin in _UNIONS:
        members = [_bare(member) for member in typing.get_args(tp)]
        return all(member in _TEXT for member in members) or any(
            _untyped(member) for member in members
        )
    return tp in _TEXT or _untyped(tp)


def _untyped(tp: object) -> bool:
    if tp in _UNTYPED or tp is typing.NoReturn or tp is typing_extensions.Never:
        return True
    if isinstance(tp, type) and issubclass(tp, CONTENT_TYPES):
        return True
    origin = typing.get_origin(tp)
    if origin in (list, tuple, cabc.Sequence):
        return any(_untyped(_bare(arg)) for arg in typing.get_args(tp) if arg is not Ellipsis)
    return _contents(tp)


def _contents(tp: object) -> bool:
    """Whether ``tp`` is a union of content blocks (`ContentBlock`)."""
    if typing.get_origin(tp) not in _UNIONS:
        return False
    return all(
        isinstance(member, type) and issubclass(member, CONTENT_TYPES)
        for member in typing.get_args(tp)
    )


def _shaped(schema: dict[str, JsonValue]) -> OutputSchema:
    root = _inlined(schema)
    if root.get("type") == "object":
        return OutputSchema(orjson.dumps(root), wrapped=False)
    defs = schema.pop("$defs", None)
    wrapper: dict[str, JsonValue] = {
        "type": "object",
        "properties": {_RESULT_KEY: schema},
        "required": [_RESULT_KEY],
    }
    if defs is not None:
        wrapper["$defs"] = defs
    return OutputSchema(orjson.dumps(wrapper), wrapped=True)


def _inlined(schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """``schema`` with a root ``$ref`` to one of its ``$defs`` replaced by the definition."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if not isinstance(ref, str) or not isinstance(defs, dict):
        return schema
    name = ref.removeprefix("#/$defs/")
    target = defs.get(name)
    if not isinstance(target, dict):
        return schema
    rest = {key: value for key, value in defs.items() if key != name}
    root: dict[str, JsonValue] = {
        **target,
        **{key: value for key, value in schema.items() if key not in ("$ref", "$defs")},
    }
    if f'"{ref}"'.encode() in orjson.dumps([target, rest]):
        rest[name] = target  # the record refers to itself
    if rest:
        root["$defs"] = rest
    return root


__all__ = [
    "OutputSchema",
    "declared_output",
    "return_output",
    "schema_output",
    "type_output",
]
