"""BFCL tool definitions through every provider dialect, checked by the providers' own SDKs.

For each of the 8,888 BFCL tool schemas (``../shared/corpora/bfcl/cases.jsonl``, see
``test_bfcl.py``):

* the ``openai_chat`` strict definition, where strict was applied, passes the OpenAI Agents SDK's
  strict-schema checker unchanged (ours is already its fixed point); the others fell back with at
  least one reason that is more than a lossy change;
* the ``gemini`` declaration loads into ``google.genai.types.FunctionDeclaration``;
* every transformed schema compiles, and the ground-truth argument sets are accepted by the
  strict schemas (OpenAI's once omitted optional keys are sent as ``null``).
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

import ferrotool
from ferrotool import ToolSpec
from ferrotool._core import provider_schema
from ferrotool._definitions.formats import StrictSchemaWarning, tool_definition

CASES_FILE = Path(__file__).resolve().parents[2].parent / "shared/corpora/bfcl/cases.jsonl"
CASES = 8888
MAX_FALLBACKS = 300  # 180 at the time of writing: untyped values and free-form objects
DIALECTS = ("openai_strict", "anthropic_strict", "gemini")

pytestmark = pytest.mark.skipif(
    not CASES_FILE.is_file(), reason=f"BFCL corpus not found at {CASES_FILE}"
)


@cache
def load_cases() -> tuple[dict[str, Any], ...]:
    with CASES_FILE.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


def tool_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "_"


@cache
def specs() -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(
            name=tool_name(case["name"]),
            description=case["description"],
            parameters_json=orjson.dumps(case["schema"]),
        )
        for case in load_cases()
    )


@cache
def transformed(
    dialect: str,
) -> tuple[tuple[bytes, tuple[tuple[str, str, str, bool], ...], bool], ...]:
    return tuple(provider_schema(spec.parameters_json, dialect) for spec in specs())


def test_corpus_size() -> None:
    assert len(load_cases()) == CASES


def test_openai_strict_passes_the_agents_sdk_checker(record_property: Any) -> None:
    from agents.strict_schema import ensure_strict_json_schema

    strict = fallback = 0
    rejected: list[str] = []
    unexplained: list[str] = []
    for spec in specs():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = tool_definition(spec, "openai_chat", strict=True)
        warned = [w for w in caught if issubclass(w.category, StrictSchemaWarning)]
        assert len(warned) == len(caught), [str(w.message) for w in caught]
        function = result.definition()["function"]
        assert isinstance(function, dict)
        parameters = function["parameters"]
        if result.strict:
            strict += 1
            assert function["strict"] is True
            assert not warned
            try:
                checked = ensure_strict_json_schema(copy.deepcopy(parameters))  # type: ignore[arg-type]
            except Exception as error:
                rejected.append(f"{spec.name}: {type(error).__name__}: {error}")
                continue
            if checked != parameters:
                rejected.append(f"{spec.name}: the checker changed the schema")
        else:
            fallback += 1
            assert "strict" not in function
            assert parameters == orjson.loads(spec.parameters_json)
            assert len(warned) == 1
            if all(change.lossy for change in result.changes):
                unexplained.append(spec.name)
    summary = f"openai strict: {strict} faithful, {fallback} fell back (of {CASES})"
    print(summary)
    record_property("openai_strict_faithful", strict)
    record_property("openai_strict_fallback", fallback)
    assert strict + fallback == CASES
    assert not rejected, f"{len(rejected)} rejected by the SDK:\n" + "\n".join(rejected[:20])
    assert not unexplained, f"fallbacks without a reason: {unexplained[:20]}"
    assert fallback <= MAX_FALLBACKS, summary


def test_gemini_declarations_load(record_property: Any) -> None:
    from google.genai import types as genai_types

    loaded = 0
    for spec in specs():
        definition = tool_definition(spec, "gemini").definition()
        genai_types.FunctionDeclaration.model_validate(definition)
        loaded += 1
    print(f"gemini: {loaded} declarations loaded")
    record_property("gemini_loaded", loaded)
    assert loaded == CASES


@pytest.mark.parametrize("dialect", DIALECTS)
def test_transformed_schemas_compile(dialect: str) -> None:
    failures = []
    for spec, (schema, _, _) in zip(specs(), transformed(dialect), strict=True):
        try:
            ferrotool.JsonSchemaValidator(schema)
        except ValueError as error:
            failures.append(f"{spec.name}: {error}")
    assert not failures, f"{len(failures)} failed to compile:\n" + "\n".join(failures[:20])


def nulls_for_omitted(schema: Any, value: Any) -> Any:
    """Arguments as OpenAI strict mode sends them: every omitted optional key as ``null``."""
    if not isinstance(schema, dict):
        return value
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        filled = {key: nulls_for_omitted(properties.get(key), item) for key, item in value.items()}
        for key in properties:
            filled.setdefault(key, None)
        return filled
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [nulls_for_omitted(schema["items"], item) for item in value]
    return value


@pytest.mark.parametrize(
    ("dialect", "prepare"),
    [("openai_strict", nulls_for_omitted), ("anthropic_strict", lambda schema, args: args)],
)
def test_valid_args_accepted_by_strict_schemas(
    dialect: str, prepare: Callable[[Any, Any], Any]
) -> None:
    """Strict schemas only loosen, except that objects are closed: ground-truth sets that use
    undeclared keys (BFCL's objects are open) are the only ones rejected."""
    counts: Counter[str] = Counter()
    unexpected: list[str] = []
    for case, (schema, _, faithful) in zip(load_cases(), transformed(dialect), strict=True):
        if not faithful:
            continue
        validator = ferrotool.JsonSchemaValidator(schema)
        for which in ("valid_args", "valid_args_minimal"):
            for args in case.get(which) or ():
                counts["sets"] += 1
                errors = validator.errors(prepare(case["schema"], args))
                if not errors:
                    counts["accepted"] += 1
                elif all(error.code == "unexpected_property" for error in errors):
                    counts["undeclared keys"] += 1
                else:
                    shown = [error.message for error in errors[:3]]
                    unexpected.append(f"{case['id']} {which}: {shown}")
    summary = f"{dialect}: {dict(counts)}"
    print(summary)
    assert counts["sets"] >= 5000, summary
    assert counts["undeclared keys"] <= 10, summary
    assert not unexpected, f"{len(unexpected)} rejected:\n" + "\n".join(unexpected[:20])


def test_deterministic_over_the_corpus() -> None:
    for spec, first in zip(specs()[:500], transformed("openai_strict"), strict=False):
        assert provider_schema(spec.parameters_json, "openai_strict") == first
