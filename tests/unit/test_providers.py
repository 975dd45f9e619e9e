"""Tool definitions per provider format and the schema dialects behind them."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import unquote

import orjson
import pytest
from agents.strict_schema import ensure_strict_json_schema
from google.genai import types as genai_types

import ferrotool
from ferrotool import Param, ToolSpec, function_schema
from ferrotool._core import provider_schema
from ferrotool._definitions.formats import (
    PROVIDER_FORMATS,
    SchemaChange,
    StrictSchemaWarning,
    ToolDefinition,
    tool_definition,
)

# -- tools --------------------------------------------------------------------------------------


def search(
    query: Annotated[str, Param(min_length=1, description="What to look for")],
    limit: Annotated[int, Param(ge=1, le=50)] = 10,
    note: str | None = None,
    mode: Literal["fast", "deep"] = "fast",
) -> list[str]:
    """Search the index."""
    return []


def tally(counts: dict[str, int], label: str) -> int:
    """Sum counts."""
    return sum(counts.values())


@dataclass(frozen=True)
class Node:
    value: int
    children: list[Node] = field(default_factory=list)


def walk(tree: Node, depth: int = 1) -> int:
    """Walk a tree."""
    return depth


def pair(point: tuple[int, str]) -> str:
    """A tuple."""
    return str(point)


def spec_of(fn: Any, **flags: Any) -> ToolSpec:
    return ToolSpec(
        name=fn.__name__,
        description=f"The {fn.__name__} tool.",
        parameters_json=function_schema(fn).schema_json,
        **flags,
    )


def canonical(fn: Any) -> dict[str, Any]:
    schema: dict[str, Any] = orjson.loads(function_schema(fn).schema_json)
    return schema


def resolve(schema: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901)."""
    target = schema
    if pointer:
        for token in pointer[1:].split("/"):
            key = unquote(token).replace("~1", "/").replace("~0", "~")
            target = target[int(key)] if isinstance(target, list) else target[key]
    return target


def sdk_fixed_point(schema: dict[str, Any]) -> None:
    """The OpenAI Agents SDK's checker accepts the schema and changes nothing."""
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema


def gemini_loads(definition: dict[str, Any]) -> genai_types.FunctionDeclaration:
    return genai_types.FunctionDeclaration.model_validate(definition)


# -- shapes -------------------------------------------------------------------------------------


def test_formats_constant() -> None:
    assert PROVIDER_FORMATS == ("openai_chat", "openai_responses", "anthropic", "gemini", "mcp")


def test_openai_chat_non_strict_sends_the_canonical_schema() -> None:
    result = tool_definition(spec_of(search), "openai_chat")
    assert result == ToolDefinition("openai_chat", "search", False, result.definition_json, ())
    assert result.definition() == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "The search tool.",
            "parameters": canonical(search),
        },
    }


def test_openai_chat_strict() -> None:
    result = tool_definition(spec_of(search), "openai_chat", strict=True)
    assert result.strict
    function = result.definition()["function"]
    assert isinstance(function, dict)
    assert function["strict"] is True
    parameters = function["parameters"]
    assert parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 50},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "mode": {"type": ["string", "null"], "enum": ["fast", "deep", None]},
        },
        "required": ["query", "limit", "note", "mode"],
        "additionalProperties": False,
    }
    sdk_fixed_point(parameters)
    lossy = {(change.pointer, change.keyword) for change in result.changes}
    assert ("/properties/query", "minLength") in lossy
    assert ("/properties/limit", "default") in lossy
    assert ("/properties/limit", "required") in lossy
    assert all(change.lossy for change in result.changes)


def test_openai_responses_always_says_strict() -> None:
    loose = tool_definition(spec_of(search), "openai_responses").definition()
    assert loose == {
        "type": "function",
        "name": "search",
        "description": "The search tool.",
        "parameters": canonical(search),
        "strict": False,
    }
    strict = tool_definition(spec_of(search), "openai_responses", strict=True)
    assert strict.definition()["strict"] is True
    assert strict.strict


def test_anthropic_shapes() -> None:
    loose = tool_definition(spec_of(search), "anthropic").definition()
    assert loose == {
        "name": "search",
        "description": "The search tool.",
        "input_schema": canonical(search),
    }
    result = tool_definition(spec_of(search), "anthropic", strict=True)
    definition = result.definition()
    assert definition["strict"] is True
    schema = definition["input_schema"]
    assert isinstance(schema, dict)
    assert schema["required"] == ["query"]  # optional stays optional
    assert schema["properties"] == {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "default": 10},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
    }
    removed = {change.keyword for change in result.changes if change.pointer.endswith("limit")}
    assert removed == {"minimum", "maximum"}


def test_anthropic_min_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "two": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        },
        "additionalProperties": False,
    }
    raw, changes, faithful = provider_schema(orjson.dumps(schema), "anthropic_strict")
    out = orjson.loads(raw)
    assert faithful
    assert out["properties"]["one"]["minItems"] == 1
    assert "minItems" not in out["properties"]["two"]
    assert [(c[0], c[1]) for c in changes] == [("/properties/two", "minItems")]


def test_gemini_declaration() -> None:
    result = tool_definition(spec_of(search), "gemini")
    definition = result.definition()
    assert not result.strict
    assert set(definition) == {"name", "description", "parameters"}
    parameters = definition["parameters"]
    assert isinstance(parameters, dict)
    assert parameters["properties"] == {
        "query": {"type": "string", "minLength": 1, "description": "What to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        "note": {"type": "string", "default": None, "nullable": True},
        "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
    }
    assert "additionalProperties" not in parameters
    declaration = gemini_loads(definition)
    assert declaration.parameters is not None
    assert declaration.parameters.type == genai_types.Type.OBJECT


def test_mcp_definition() -> None:
    output = b'{"type":"array","items":{"type":"string"}}'
    spec = dataclasses.replace(spec_of(search), read_only=True, output_schema_json=output)
    result = tool_definition(spec, "mcp", strict=True)
    assert not result.strict
    assert result.changes == ()
    assert result.definition() == {
        "name": "search",
        "description": "The search tool.",
        "inputSchema": canonical(search),
        "annotations": {"readOnlyHint": True},
        "outputSchema": {"type": "array", "items": {"type": "string"}},
    }
    plain = tool_definition(spec_of(tally), "mcp").definition()
    assert plain["annotations"] == {"readOnlyHint": False}
    assert "outputSchema" not in plain


def test_schema_bytes_are_spliced_unchanged() -> None:
    spec = spec_of(search)
    definition = tool_definition(spec, "anthropic").definition_json
    assert spec.parameters_json in definition


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown provider format"):
        tool_definition(spec_of(search), "bedrock")  # type: ignore[arg-type]


# -- strictness ---------------------------------------------------------------------------------


def test_free_form_dict_falls_back_with_a_warning() -> None:
    with pytest.warns(StrictSchemaWarning, match=r"tool 'tally'.*free-form object") as caught:
        result = tool_definition(spec_of(tally), "openai_chat", strict=True)
    assert len(caught) == 1
    assert not result.strict
    function = result.definition()["function"]
    assert isinstance(function, dict)
    assert "strict" not in function
    assert function["parameters"] == canonical(tally)
    reasons = [change for change in result.changes if not change.lossy]
    assert [(r.pointer, r.keyword) for r in reasons] == [
        ("/properties/counts", "additionalProperties")
    ]


def test_fallback_for_each_strict_format() -> None:
    for format in ("openai_chat", "openai_responses", "anthropic"):
        with pytest.warns(StrictSchemaWarning, match=format):
            result = tool_definition(spec_of(tally), format, strict=True)
        assert not result.strict
    with pytest.warns(StrictSchemaWarning):
        result = tool_definition(spec_of(tally), "openai_responses", strict=True)
    assert result.definition()["strict"] is False


def test_tuple_is_not_strict() -> None:
    with pytest.warns(StrictSchemaWarning, match="prefixItems"):
        result = tool_definition(spec_of(pair), "openai_chat", strict=True)
    assert not result.strict
    gemini = tool_definition(spec_of(pair), "gemini")
    items = resolve(gemini.definition(), "/parameters/properties/point/items")
    assert items == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert all(change.lossy for change in gemini.changes)


def test_spec_strict_overrides_the_argument() -> None:
    assert tool_definition(spec_of(search, strict=True), "openai_chat").strict
    assert not tool_definition(spec_of(search, strict=False), "openai_chat", strict=True).strict


def test_recursive_record() -> None:
    # OpenAI strict mode supports recursion through $defs.
    openai = tool_definition(spec_of(walk), "openai_chat", strict=True)
    assert openai.strict
    parameters = resolve(openai.definition(), "/function/parameters")
    sdk_fixed_point(parameters)
    assert parameters["$defs"]["Node"]["properties"]["children"] == {
        "type": ["array", "null"],
        "items": {"$ref": "#/$defs/Node"},
    }
    # Anthropic does not.
    with pytest.warns(StrictSchemaWarning, match="recursive"):
        anthropic = tool_definition(spec_of(walk), "anthropic", strict=True)
    assert not anthropic.strict
    # Gemini inlines three levels, then cuts.
    gemini = tool_definition(spec_of(walk), "gemini")
    definition = gemini.definition()
    gemini_loads(definition)
    tree = resolve(definition, "/parameters/properties/tree")
    for _ in range(3):
        assert tree["properties"]["value"] == {"type": "integer"}
        tree = tree["properties"]["children"]["items"]
    assert tree == {"type": "object"}
    cuts = [change for change in gemini.changes if not change.lossy]
    assert [(c.pointer, c.keyword) for c in cuts] == [
        ("/$defs/Node/properties/children/items", "$ref")
    ]
    assert "$defs" not in orjson.dumps(definition).decode()
    # Asking Gemini for strict warns about the cut.
    with pytest.warns(StrictSchemaWarning, match="cut after 3 levels"):
        tool_definition(spec_of(walk), "gemini", strict=True)


def test_warning_names_the_first_reasons() -> None:
    def many(a: dict[str, int], b: dict[str, str], c: dict[str, bool], d: dict[str, float]) -> None:
        """Four dictionaries."""

    with pytest.warns(StrictSchemaWarning, match=r"'many'.*/properties/a.*/properties/c.*1 more"):
        tool_definition(spec_of(many), "openai_chat", strict=True)


# -- changes, determinism -----------------------------------------------------------------------


def kitchen_sink(
    name: Annotated[str, Param(min_length=1, max_length=10, pattern="^[a-z]+$")],
    tags: frozenset[str] = frozenset(),
    point: tuple[int, int] = (0, 0),
    ratio: Annotated[float, Param(gt=0, lt=1, multiple_of=0.1)] = 0.5,
    extra: dict[str, int] | None = None,
    node: Node | None = None,
    when: Literal["now", "later"] | None = None,
) -> None:
    """Everything at once."""


@pytest.mark.parametrize("dialect", ["openai_strict", "anthropic_strict", "gemini"])
def test_every_change_has_a_pointer_into_the_input(dialect: str) -> None:
    raw = function_schema(kitchen_sink).schema_json
    schema = orjson.loads(raw)
    _, changes, faithful = provider_schema(raw, dialect)
    assert changes
    assert not faithful
    for pointer, keyword, message, _lossy in changes:
        target = resolve(schema, pointer)  # resolves in the canonical schema
        assert isinstance(target, dict), (pointer, keyword)
        if message.startswith(f"removed `{keyword}`"):
            assert keyword in target, (pointer, keyword, message)
    assert len(set(changes)) == len(changes)


@pytest.mark.parametrize("dialect", ["openai_strict", "anthropic_strict", "gemini"])
def test_deterministic(dialect: str) -> None:
    raw = function_schema(kitchen_sink).schema_json
    first = provider_schema(raw, dialect)
    assert provider_schema(raw, dialect) == first
    assert provider_schema(bytes(bytearray(raw)), dialect) == first
    spec = spec_of(walk)
    assert tool_definition(spec, "gemini") == tool_definition(spec, "gemini")


@pytest.mark.parametrize("dialect", ["openai_strict", "anthropic_strict", "gemini"])
def test_transformed_schemas_compile(dialect: str) -> None:
    for fn in (search, tally, walk, pair, kitchen_sink):
        raw, _, _ = provider_schema(function_schema(fn).schema_json, dialect)
        ferrotool.JsonSchemaValidator(raw)


def test_binding_errors() -> None:
    with pytest.raises(ValueError, match="unknown schema dialect"):
        provider_schema(b"{}", "openai")
    with pytest.raises(ValueError, match="invalid JSON"):
        provider_schema(b"{", "gemini")


def test_values_are_frozen() -> None:
    result = tool_definition(spec_of(search), "openai_chat", strict=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.strict = False  # type: ignore[misc]
    change = result.changes[0]
    assert isinstance(change, SchemaChange)
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.lossy = False  # type: ignore[misc]
    first = result.definition()
    first["type"] = "changed"
    assert result.definition()["type"] == "function"


# -- hand-written schemas (MCP servers, client tools) ---------------------------------------------


def transform(schema: dict[str, Any], dialect: str) -> tuple[dict[str, Any], list[Any], bool]:
    raw, changes, faithful = provider_schema(orjson.dumps(schema), dialect)
    out: dict[str, Any] = orjson.loads(raw)
    return out, list(changes), faithful


def test_openai_inlines_a_ref_with_siblings() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "description": "An A."}},
        "required": ["a"],
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}},
    }
    out, changes, faithful = transform(schema, "openai_strict")
    assert faithful
    assert out["properties"]["a"] == {
        "description": "An A.",
        "type": "object",
        "properties": {"x": {"type": ["string", "null"]}},
        "required": ["x"],
        "additionalProperties": False,
    }
    sdk_fixed_point(out)
    pointers = {(pointer, keyword) for pointer, keyword, _, _ in changes}
    assert ("/$defs/A/properties/x", "required") in pointers


def test_one_of_all_of_and_conditionals() -> None:
    schema = {
        "type": "object",
        "properties": {
            "choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "both": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
                ]
            },
        },
        "required": ["choice", "both"],
        "additionalProperties": False,
    }
    out, changes, faithful = transform(schema, "openai_strict")
    assert faithful, changes
    assert out["properties"]["choice"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert out["properties"]["both"]["required"] == ["a", "b"]
    sdk_fixed_point(out)
    conditional = {**schema, "if": {"required": ["choice"]}, "then": {"required": ["both"]}}
    _, changes, faithful = transform(conditional, "openai_strict")
    assert not faithful
    assert {(c[1], c[3]) for c in changes} >= {("if", False), ("then", False)}


def test_open_objects() -> None:
    no_args = {"type": "object"}
    out, changes, faithful = transform(no_args, "openai_strict")
    assert faithful
    assert out == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
    sdk_fixed_point(out)
    open_with_properties = {"type": "object", "properties": {"q": {"type": "string"}}}
    out, changes, faithful = transform(open_with_properties, "anthropic_strict")
    assert faithful
    assert out["additionalProperties"] is False
    assert [(c[0], c[1], c[3]) for c in changes] == [("", "additionalProperties", True)]
    nested = {"type": "object", "properties": {"meta": {"type": "object"}}}
    _, changes, faithful = transform(nested, "openai_strict")
    assert not faithful
    assert ("/properties/meta", "additionalProperties", False) in {
        (c[0], c[1], c[3]) for c in changes
    }


def test_untyped_and_item_less_schemas_are_not_strict() -> None:
    schema = {
        "type": "object",
        "properties": {"anything": {"description": "Any value."}, "list": {"type": "array"}},
    }
    _, changes, faithful = transform(schema, "openai_strict")
    assert not faithful
    reasons = {(c[0], c[1]) for c in changes if not c[3]}
    assert reasons == {("/properties/anything", "type"), ("/properties/list", "items")}


def test_gemini_rewrites() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "kind": {"const": "circle"},
            "size": {"type": ["number", "null"], "exclusiveMinimum": 0, "examples": [1, 2]},
            "count": {"type": "integer", "exclusiveMinimum": 0},
            "when": {"type": "string", "format": "date-time"},
            "either": {"type": ["string", "integer"]},
            "ref": {"$ref": "#/$defs/R"},
        },
        "required": ["kind", "missing"],
        "$defs": {"R": {"type": "string", "enum": ["a", "b", None]}},
    }
    out, changes, faithful = transform(schema, "gemini")
    assert faithful
    assert out == {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["circle"]},
            "size": {"type": "number", "minimum": 0, "example": 1, "nullable": True},
            "count": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date-time"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "ref": {"type": "string", "enum": ["a", "b"], "nullable": True},
        },
        "required": ["kind"],
    }
    gemini_loads({"name": "shapes", "parameters": out})
    keywords = {c[1] for c in changes}
    assert {"exclusiveMinimum", "examples", "required"} <= keywords


def test_limits_under_openai() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for level in range(12):
        deep = {
            "type": "object",
            "properties": {f"l{level}": deep},
            "required": [f"l{level}"],
            "additionalProperties": False,
        }
    _, changes, faithful = transform(deep, "openai_strict")
    assert not faithful
    assert any("levels of object nesting" in c[2] for c in changes)
    big_enum = {
        "type": "object",
        "properties": {"e": {"type": "string", "enum": [f"v{i}" for i in range(1001)]}},
        "required": ["e"],
        "additionalProperties": False,
    }
    _, changes, faithful = transform(big_enum, "openai_strict")
    assert not faithful
    assert [c[1] for c in changes] == ["enum"]
