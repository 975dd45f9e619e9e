"""Laws of the provider dialects (`ferrotool._core.provider_schema`), over generated schemas.

* Idempotence. The strict dialects (``openai_strict``, ``anthropic_strict``) are fixed points
  of themselves on what they produce faithfully: transforming the output again gives the same
  bytes and no change. An unfaithful output need not be one (``{"prefixItems": [false]}``
  becomes ``{"items": false}``, which the next pass reports it cannot express and removes); it
  is never sent. Gemini's output is not JSON Schema but Gemini's ``Schema`` (``nullable: true``
  instead of a ``null`` type), so Gemini is *not* idempotent (a second pass reads ``nullable``
  as an unknown keyword and drops it); the law that holds is that reading the output back as
  JSON Schema (`read_gemini`) and transforming again gives the same bytes.
* Soundness. When a transform reports its result faithful, every argument set the transformed
  schema accepts is accepted by the canonical schema once the ``null`` of a property that is
  optional there is dropped ("null stands for omitted"), *except* for the constraints the
  transform reports it dropped or loosened (a lossy change: ``minLength``, bounds, ``oneOf``
  read as ``anyOf``...), which server-side validation still checks. The law is checked against
  the canonical schema with exactly those reported keywords removed (`loosened`), so it also
  proves the report complete; where nothing was loosened, that is the canonical schema itself.
  The toolkit, given that schema, runs a call with those argument sets, and its own null
  handling reads the nulls as omitted.

Known bugs are pinned below as strict expected failures (none today); a law that works around
one does so in a named place, removed with the mark once the bug is fixed. The cases the laws
once found are kept below as examples.

Schemas come from `schema_strategies.tool_schemas` (argument schemas as tools declare them),
`schema_strategies.json_schemas` (arbitrary draft 2020-12, for idempotence) and a sample of the
BFCL corpus. Argument sets come from `ferrotool.testing.from_schema` of the transformed schema.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

import orjson
import pytest
from hypothesis import HealthCheck, currently_in_test_context, example, given, note, settings
from hypothesis import strategies as st
from schema_strategies import json_schemas, tool_schemas

from ferrotool import (
    JsonSchemaValidator,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool._core import provider_schema
from ferrotool.testing import from_schema

STRICT = ("openai_strict", "anthropic_strict")
DIALECTS = (*STRICT, "gemini")
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "bfcl" / "cases.jsonl"
CORPUS_SAMPLE = 300
SEED = 20240917

# The keywords of lossy changes that drop or loosen an assertion of the canonical schema:
# `loosened` removes them from the canonical schema where a change reports them.
LOOSENED = frozenset(
    {
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minProperties",
        "maxProperties",
        "enum",
        "const",
        "oneOf",
    }
)
# Gemini also opens closed objects, drops `items: false`, reads a tuple as a list, and drops
# properties and required names it cannot describe.
LOOSENED_BY_GEMINI = LOOSENED | {
    "additionalProperties",
    "items",
    "prefixItems",
    "properties",
    "required",
}
# The keywords of lossy changes that keep or narrow what is accepted once nulls of optional
# properties are dropped: the strict dialects close objects, make optional properties required
# and nullable, drop `default` (an annotation), add a `type` that an `enum` implies and drop
# definitions no reference points to.
NARROWED_BY_STRICT = frozenset(
    {"additionalProperties", "required", "default", "type", "$defs", "definitions"}
)
STATS: Counter[str] = Counter()

Json = Any


# -- Gemini's Schema read back as JSON Schema -----------------------------------------------------


def read_gemini(schema: Json) -> Json:
    """A Gemini ``Schema`` as the JSON Schema of the same values.

    ``nullable: true`` adds ``null`` to the ``type`` (OpenAPI 3.0.3's reading: an ``enum``
    still restricts the values) or, on a union, a ``null`` branch; every other keyword Gemini
    keeps means what it means in JSON Schema. Objects are open: Gemini has no
    ``additionalProperties``.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Json] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: read_gemini(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = read_gemini(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [read_gemini(sub) for sub in value]
        elif key != "nullable":
            out[key] = copy.deepcopy(value)
    if schema.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        else:  # any value, or null: what Gemini writes for a union of "anything" and null
            out["anyOf"] = [{}, {"type": "null"}]
    return out


# -- the canonical schema without what a transform reports it loosened ---------------------------


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _at(document: Json, pointer: str) -> Json:
    node = document
    for token in pointer.split("/")[1:] if pointer else ():
        key = _unescape(token)
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def loosened(
    canonical: Json, changes: tuple[tuple[str, str, str, bool], ...], dialect: str
) -> Json:
    """The canonical schema without the assertions the lossy changes name (at their pointers).

    ``oneOf`` is read as ``anyOf`` rather than removed. A change that is classified neither as
    loosening nor as narrowing fails the test: a new kind of change has to be classified.
    """
    out = copy.deepcopy(canonical)
    gemini = dialect == "gemini"
    loosening = LOOSENED_BY_GEMINI if gemini else LOOSENED
    narrowing = frozenset() if gemini else NARROWED_BY_STRICT
    targets = []
    for pointer, keyword, message, lossy in changes:
        assert lossy, "only lossy changes in a faithful result"
        if keyword in narrowing:
            continue
        assert keyword in loosening, f"unclassified change {keyword!r} at {pointer!r}: {message}"
        targets.append((_at(out, pointer), keyword))  # all found before any is removed
    for node, keyword in targets:
        if not isinstance(node, dict) or keyword not in node:
            continue
        if keyword == "oneOf":
            branches = node.pop("oneOf")
            if "anyOf" in node:
                node.setdefault("allOf", []).append({"anyOf": branches})
            else:
                node["anyOf"] = branches
        else:
            del node[keyword]
    return out


# -- nulls of optional properties dropped ---------------------------------------------------------


def _applicable(
    schema: Json, root: Json, seen: frozenset[int] = frozenset()
) -> Iterator[dict[str, Json]]:
    """Every subschema that applies where ``schema`` does: itself, what its ``$ref`` names, its
    ``allOf``, ``anyOf`` and ``oneOf`` members (recursively)."""
    if not isinstance(schema, dict) or id(schema) in seen:
        return
    seen = seen | {id(schema)}
    yield schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        yield from _applicable(_at(root, ref[1:]), root, seen)
    for key in ("allOf", "anyOf", "oneOf"):
        for member in schema.get(key) or ():
            yield from _applicable(member, root, seen)


def without_optional_nulls(schema: Json, value: Json, root: Json) -> Json:
    """``value`` with every ``null`` member dropped whose property is optional in an object
    schema that applies there (recursively, through objects and arrays)."""
    nodes = list(_applicable(schema, root))
    if isinstance(value, dict):
        optional: set[str] = set()
        declared: dict[str, list[Json]] = {}
        others: list[Json] = []
        for node in nodes:
            properties = node.get("properties")
            if isinstance(properties, dict):
                required = node.get("required") or ()
                for key, sub in properties.items():
                    declared.setdefault(key, []).append(sub)
                    if key not in required:
                        optional.add(key)
            if isinstance(node.get("additionalProperties"), dict):
                others.append(node["additionalProperties"])
        out = {}
        for key, item in value.items():
            if item is None and key in optional:
                continue
            for sub in declared.get(key, others):
                item = without_optional_nulls(sub, item, root)
            out[key] = item
        return out
    if isinstance(value, list):
        items = [node["items"] for node in nodes if isinstance(node.get("items"), dict)]
        out_list = []
        for item in value:
            for sub in items:
                item = without_optional_nulls(sub, item, root)
            out_list.append(item)
        return out_list
    return value


# -- the toolkit's own null handling --------------------------------------------------------------


class Accept(ToolBase[dict[str, Json]]):
    """Takes the arguments its schema accepts."""

    name = "accept"

    async def call(self, param: ToolCallParam[dict[str, Json]]) -> str:
        return "accepted"


def toolkit_errors(schema: Json, arguments: Json) -> list[dict[str, Json]]:
    """The errors of a call of a tool with this schema (none: the call ran)."""
    kit = Toolkit()
    kit.register(Accept(input_schema=schema))
    result = kit.call_tool_sync(ToolUseBlock("c", "accept", orjson.dumps(arguments).decode()))
    if result.state is ToolResultState.SUCCESS:
        return []
    errors = result.metadata.get("errors")
    assert isinstance(errors, list), result
    return cast("list[dict[str, Json]]", errors)


# -- the laws -----------------------------------------------------------------------------------


def check_idempotent(schema: Json, dialect: str) -> None:
    data = orjson.dumps(schema)
    out, _, faithful = provider_schema(data, dialect)
    if currently_in_test_context():
        note(f"{dialect}: {out.decode()}")
    if dialect == "gemini":
        again, _, _ = provider_schema(orjson.dumps(read_gemini(orjson.loads(out))), dialect)
        assert again == out
        STATS[f"{dialect} round trip"] += 1
        return
    if not faithful:
        STATS[f"{dialect} unfaithful (idempotence not claimed)"] += 1
        return
    again, more, still = provider_schema(out, dialect)
    assert again == out
    STATS[f"{dialect} idempotent"] += 1
    assert more == ()
    assert still


def check_sound(schema: Json, dialect: str, data: st.DataObject, *, toolkit: bool = True) -> None:
    """Argument sets of the transformed schema, nulls of optional properties dropped, are
    accepted by the canonical schema without what the transform reports it loosened."""
    out, changes, faithful = provider_schema(orjson.dumps(schema), dialect)
    if not faithful:
        STATS[f"{dialect} unfaithful"] += 1
        return
    transformed = orjson.loads(out)
    if dialect == "gemini":
        transformed = read_gemini(transformed)
    JsonSchemaValidator(transformed)  # a faithful result compiles
    canonical = loosened(schema, changes, dialect)
    pure = canonical == schema
    arguments = data.draw(from_schema(transformed), label="arguments")
    dropped = without_optional_nulls(schema, arguments, schema)
    note(f"transformed: {orjson.dumps(transformed).decode()}")
    note(f"checked against: {orjson.dumps(canonical).decode()}")
    note(f"nulls dropped: {orjson.dumps(dropped).decode()}")
    errors = JsonSchemaValidator(canonical).errors(dropped)
    assert not errors, [error.message for error in errors]
    STATS[f"{dialect} sound ({'pure' if pure else 'loosened'})"] += 1
    if not toolkit:
        return
    # The toolkit, given the canonical schema, runs the call with the nulls dropped, and reads
    # the nulls as omitted itself.
    assert toolkit_errors(canonical, dropped) == []
    assert toolkit_errors(canonical, arguments) == []
    STATS[f"{dialect} toolkit: nulls read as omitted"] += 1


@given(schema=st.one_of(tool_schemas(), json_schemas()))
@example(schema={"type": "null", "anyOf": [{"type": "null"}]})  # gemini once left "nullable"
def test_transforms_are_idempotent(schema: Json) -> None:
    for dialect in DIALECTS:
        check_idempotent(schema, dialect)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema=tool_schemas(), data=st.data())
def test_faithful_transforms_are_sound(schema: Json, data: st.DataObject) -> None:
    for dialect in DIALECTS:
        check_sound(schema, dialect, data)


# -- cases the laws once found, and the null cases --


def test_openai_strict_adds_null_once() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": ["x"]}}}
    out, _, faithful = provider_schema(orjson.dumps(schema), "openai_strict")
    assert faithful
    assert orjson.loads(out)["properties"]["a"] == {"type": ["string", "null"], "enum": ["x", None]}


def test_change_pointers_locate_the_input_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"oneOf": [{"type": "string", "minLength": 2}, {"type": "integer"}]}},
        "required": ["a"],
    }
    _, changes, _ = provider_schema(orjson.dumps(schema), "openai_strict")
    pointers = {pointer for pointer, keyword, _, _ in changes if keyword == "minLength"}
    assert pointers == {"/properties/a/oneOf/0"}


def test_gemini_folds_a_null_position_of_a_tuple_at_once() -> None:
    schema = {"prefixItems": [{"type": "null"}], "items": True}
    out, _, _ = provider_schema(orjson.dumps(schema), "gemini")
    assert orjson.loads(out) == {"items": {"nullable": True}}
    check_idempotent(schema, "gemini")


def test_null_for_an_optional_literal_is_omitted() -> None:
    def pick(kind: Literal["x", "y"] = "x", size: int | str = 1) -> str:
        return f"{kind} {size}"

    kit = Toolkit()
    kit.register(tool(pick, inline=True))
    spec = kit.get_spec("pick")
    assert spec is not None
    out, _, faithful = provider_schema(spec.parameters_json, "openai_strict")
    arguments = {"kind": None, "size": None}
    assert faithful
    assert JsonSchemaValidator(orjson.loads(out)).is_valid(arguments)
    result = kit.call_tool_sync(ToolUseBlock("c", "pick", orjson.dumps(arguments).decode()))
    assert result.content == "x 1"


def test_null_in_an_optional_member_inside_a_union_is_omitted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "where": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                        "required": ["city"],
                    },
                    {"type": "null"},
                ]
            }
        },
    }
    out, _, faithful = provider_schema(orjson.dumps(schema), "openai_strict")
    arguments = {"where": {"city": "Oslo", "zip": None}}
    assert faithful
    assert JsonSchemaValidator(orjson.loads(out)).is_valid(arguments)
    assert toolkit_errors(schema, arguments) == []


# -- the BFCL corpus ------------------------------------------------------------------------------


@cache
def corpus_sample() -> tuple[Json, ...]:
    with CORPUS.open(encoding="utf-8") as handle:
        schemas = [json.loads(line)["schema"] for line in handle if line.strip()]
    return tuple(random.Random(SEED).sample(schemas, CORPUS_SAMPLE))


needs_corpus = pytest.mark.skipif(not CORPUS.is_file(), reason=f"BFCL corpus not found at {CORPUS}")


@needs_corpus
def test_transforms_are_idempotent_on_the_corpus() -> None:
    for schema in corpus_sample():
        for dialect in DIALECTS:
            try:
                check_idempotent(schema, dialect)
            except AssertionError as error:
                raise AssertionError(f"{dialect}: {orjson.dumps(schema).decode()}") from error


@needs_corpus
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_faithful_transforms_are_sound_on_the_corpus(data: st.DataObject) -> None:
    schema = data.draw(st.sampled_from(corpus_sample()), label="schema")
    for dialect in DIALECTS:
        check_sound(schema, dialect, data, toolkit=False)


def teardown_module() -> None:
    print("\n" + "\n".join(f"{key}: {value}" for key, value in sorted(STATS.items())))
