"""BFCL tool definitions through `JsonSchemaValidator`, with jsonschema-rs as the oracle.

``../shared/corpora/bfcl/cases.jsonl`` holds 8,888 tool-parameter schemas from the Berkeley
Function Calling Leaderboard with ground-truth argument sets (see its README.md). The schemas
there were normalized from BFCL's dialect once already; `normalize` below re-applies the
documented mappings, so the same code also reads raw BFCL ``parameters`` and the corpus copy is
checked to be a fixed point of it. The SAME normalized schema goes to ferrotool and to the oracle.

Checks, one test each: every schema compiles; every valid argument set is accepted; each
category of seeded mutation gets the oracle's verdict.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
import pytest

import ferrotool

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
BFCL = SHARED / "corpora" / "bfcl"
CASES_FILE = BFCL / "cases.jsonl"
SEED = 20240917

# -- the BFCL dialect ---------------------------------------------------------------------------

# BFCL type names -> JSON Schema type names (README, "The dialect"):
TYPE_MAP = {
    "dict": "object",  # every top-level `parameters` and nested objects
    "float": "number",
    "tuple": "array",  # no per-position information exists, so no `prefixItems`
    "Array": "array",  # Java
    "ArrayList": "array",  # Java
    "HashMap": "object",  # Java
    "long": "integer",  # Java
    "double": "number",  # Java
    "char": "string",  # Java
    "String": "string",  # Java and JavaScript
    "Boolean": "boolean",  # JavaScript
}
# Types that mean "anything": the `type` keyword is dropped.
ANY_TYPES = frozenset({"any", ""})
SUBSCHEMA_MAPS = ("properties", "$defs", "patternProperties")
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_SINGLE = ("items", "additionalProperties", "not", "contains")


def normalize(schema: Any) -> Any:
    """BFCL's dialect -> draft 2020-12 (a new object; the input is not changed).

    * ``type``: mapped through `TYPE_MAP`; ``any`` / ``""`` drop the keyword; in a type list
      each name is mapped and an "any" makes the whole list go.
    * ``optional`` (non-standard, values ``true``, ``"yes"``, lists...): dropped; ``required``
      already decides.
    * ``enum`` on an ``array``: the allowed item values, moved to ``items.enum``.
    * ``enum`` of strings on a ``boolean`` / ``integer`` (SGD-style ``"True"``/``"dontcare"``):
      dropped, as the corpus normalizer did (it cannot constrain anything of that type).
    * everything else is kept; nested schemas are normalized the same way.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "optional":
            continue
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: normalize(sub) for name, sub in value.items()}
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalize(sub) for sub in value]
        elif key in SUBSCHEMA_SINGLE:
            out[key] = normalize(value)
        else:
            out[key] = copy.deepcopy(value)
    kind = out.get("type")
    if isinstance(kind, str):
        if kind in ANY_TYPES:
            del out["type"]
        else:
            out["type"] = TYPE_MAP.get(kind, kind)
    elif isinstance(kind, list):
        if any(name in ANY_TYPES for name in kind):
            del out["type"]
        else:
            out["type"] = [TYPE_MAP.get(name, name) for name in kind]
    kind = out.get("type")
    enum = out.get("enum")
    if kind == "array" and isinstance(enum, list):
        items = out.setdefault("items", {})
        if isinstance(items, dict) and "enum" not in items:
            items["enum"] = out.pop("enum")
    elif (
        kind in ("boolean", "integer")
        and isinstance(enum, list)
        and any(isinstance(value, str) for value in enum)
    ):
        del out["enum"]
    return out


def test_normalizer_maps_the_dialect() -> None:
    raw = {
        "type": "dict",
        "properties": {
            "a": {"type": "float"},
            "b": {"type": "tuple", "items": {"type": "String"}},
            "c": {"type": "any", "optional": True},
            "d": {"type": "HashMap"},
            "e": {"type": "array", "enum": ["x", "y"], "items": {"type": "string"}},
            "f": {"type": "boolean", "enum": ["True", "False", "dontcare"]},
            "g": {"type": ["long", "null"]},
            "h": {"type": ""},
        },
        "required": ["a"],
    }
    assert normalize(raw) == {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "array", "items": {"type": "string"}},
            "c": {},
            "d": {"type": "object"},
            "e": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "f": {"type": "boolean"},
            "g": {"type": ["integer", "null"]},
            "h": {},
        },
        "required": ["a"],
    }
    assert raw["type"] == "dict", "normalize must not change its input"


# -- the corpus ---------------------------------------------------------------------------------


@cache
def load_cases() -> tuple[dict[str, Any], ...]:
    assert CASES_FILE.is_file(), (
        f"BFCL corpus not found at {CASES_FILE}; the shared corpora are expected in {SHARED} "
        "(next to the repository root)"
    )
    with CASES_FILE.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


def _key(schema: Any) -> bytes:
    return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)


@cache
def compiled() -> dict[bytes, tuple[Any, ferrotool.JsonSchemaValidator, Any]]:
    """Distinct normalized schemas -> (schema, ferrotool validator, oracle validator)."""
    out: dict[bytes, tuple[Any, ferrotool.JsonSchemaValidator, Any]] = {}
    for case in load_cases():
        for raw in (case["schema"], case.get("output_schema")):
            if raw is None:
                continue
            schema = normalize(raw)
            key = _key(schema)
            if key not in out:
                oracle = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
                out[key] = (schema, ferrotool.JsonSchemaValidator(schema), oracle)
    return out


def validators(schema: Any) -> tuple[ferrotool.JsonSchemaValidator, Any]:
    _, ours, oracle = compiled()[_key(normalize(schema))]
    return ours, oracle


def ours_accepts(validator: ferrotool.JsonSchemaValidator, args: Any) -> bool:
    """ferrotool's verdict, checked to be the same through every entry point."""
    verdict = validator.is_valid(args)
    raw = orjson.dumps(args)
    assert validator.is_valid_json(raw) is verdict, f"is_valid_json disagrees on {raw!r}"
    assert (validator.errors(args) == ()) is verdict, f"errors() disagrees on {raw!r}"
    if verdict:
        assert validator.validate_json(raw) == args, f"validate_json changed {raw!r}"
    return verdict


def arg_sets() -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(case id, which list, schema, argument set) for every ground-truth set."""
    for case in load_cases():
        for which in ("valid_args", "valid_args_minimal"):
            for args in case.get(which) or ():
                yield case["id"], which, case["schema"], args


# -- tests --------------------------------------------------------------------------------------


def test_corpus_size_and_fixed_point() -> None:
    cases = load_cases()
    assert len(cases) == 8888, f"{len(cases)} cases, expected 8,888"
    changed = [case["id"] for case in cases if normalize(case["schema"]) != case["schema"]]
    # The corpus copy is already normalized: re-normalizing must change nothing.
    assert not changed, f"{len(changed)} corpus schemas are not normalized, e.g. {changed[:5]}"


def test_every_schema_compiles() -> None:
    failures = []
    count = 0
    for case in load_cases():
        for which in ("schema", "output_schema"):
            raw = case.get(which)
            if raw is None:
                continue
            count += 1
            try:
                ferrotool.JsonSchemaValidator(normalize(raw))
            except Exception as exc:
                failures.append(f"{case['id']} {which}: {type(exc).__name__}: {exc}")
    assert count == 8888 + 161, f"{count} schemas found"
    assert not failures, f"{len(failures)}/{count} schemas failed to compile:\n" + "\n".join(
        failures[:20]
    )


def test_valid_arg_sets_are_accepted() -> None:
    counts: Counter[str] = Counter()
    ours_only: list[str] = []
    data_errors: list[str] = []
    for case_id, which, schema, args in arg_sets():
        counts[which] += 1
        ours, oracle = validators(schema)
        if ours_accepts(ours, args):
            counts["accepted"] += 1
        elif oracle.is_valid(args):
            ours_only.append(f"{case_id} {which}: {orjson.dumps(args).decode()[:200]}")
        else:
            data_errors.append(f"{case_id} {which}")
    total = counts["valid_args"] + counts["valid_args_minimal"]
    summary = (
        f"{counts['accepted']}/{total} sets accepted ({counts['valid_args']} full, "
        f"{counts['valid_args_minimal']} minimal); {len(data_errors)} data errors "
        f"(rejected by the oracle too): {data_errors[:10]}"
    )
    print(summary)
    assert total >= 5000, summary
    assert not ours_only, f"{len(ours_only)} sets rejected by ferrotool only; {summary}\n" + (
        "\n".join(ours_only[:20])
    )


def test_ground_truth_violations_rejected_like_the_oracle() -> None:
    """The corpus' known-bad sets (BFCL data errors) get the oracle's verdict (mostly: reject)."""
    checked = 0
    disagreements = []
    for case in load_cases():
        for violation in case.get("ground_truth_violations") or ():
            ours, oracle = validators(case["schema"])
            checked += 1
            expected = oracle.is_valid(violation["args"])
            if ours_accepts(ours, violation["args"]) is not expected:
                disagreements.append(f"{case['id']}: oracle valid={expected}, {violation['args']}")
    assert checked >= 100, f"only {checked} violation sets found"
    assert not disagreements, f"{len(disagreements)}/{checked} disagree:\n" + "\n".join(
        disagreements[:20]
    )


# -- mutations ----------------------------------------------------------------------------------

Mutation = Callable[[random.Random, dict[str, Any], dict[str, Any]], dict[str, Any] | None]


def drop_required(rng: random.Random, schema: dict[str, Any], args: dict[str, Any]) -> Any:
    present = [name for name in schema.get("required", []) if name in args]
    if not present:
        return None
    out = dict(args)
    del out[rng.choice(present)]
    return out


def _swap(rng: random.Random, value: Any) -> Any:
    """A value of another JSON type, close to what a model might send by mistake."""
    if isinstance(value, bool):
        return rng.choice(["true" if value else "false", int(value)])
    if isinstance(value, int):
        return rng.choice([str(value), [value], value + 0.5])
    if isinstance(value, float):
        return rng.choice([str(value), True])
    if isinstance(value, str):
        return rng.choice([123, True, None, [value]])
    if isinstance(value, list):
        return rng.choice([{"0": value[0]} if value else {}, "[]"])
    if isinstance(value, dict):
        return rng.choice([list(value.values()), "{}"])
    return "null"


def swap_type(rng: random.Random, schema: dict[str, Any], args: dict[str, Any]) -> Any:
    candidates = [name for name in args if name in schema.get("properties", {})]
    if not candidates:
        return None
    name = rng.choice(candidates)
    out = dict(args)
    value = args[name]
    # One level down half of the time, so nested objects and arrays are reached too.
    if isinstance(value, dict) and value and rng.random() < 0.5:
        inner = rng.choice(sorted(value))
        out[name] = {**value, inner: _swap(rng, value[inner])}
    elif isinstance(value, list) and value and rng.random() < 0.5:
        index = rng.randrange(len(value))
        out[name] = [*value[:index], _swap(rng, value[index]), *value[index + 1 :]]
    else:
        out[name] = _swap(rng, value)
    return out


def outside_enum(rng: random.Random, schema: dict[str, Any], args: dict[str, Any]) -> Any:
    properties = schema.get("properties", {})
    candidates = [
        name
        for name in args
        if isinstance(properties.get(name), dict) and isinstance(properties[name].get("enum"), list)
    ]
    if not candidates:
        return None
    name = rng.choice(candidates)
    allowed = properties[name]["enum"]
    strings = [value for value in allowed if isinstance(value, str)]
    if strings:
        value: Any = rng.choice(strings)
        replacement: Any = rng.choice([value.upper() + "_X", value + " ", value[:-1], "unknown"])
    else:
        numbers = [value for value in allowed if isinstance(value, int | float)]
        replacement = (max(numbers) + 1) if numbers else "unknown"
    out = dict(args)
    out[name] = replacement
    return out


def unknown_key(rng: random.Random, schema: dict[str, Any], args: dict[str, Any]) -> Any:
    """An extra key: BFCL objects are open, so this is accepted unless the oracle says no."""
    out = dict(args)
    out[f"zz_extra_{rng.randrange(1000)}"] = rng.choice([1, "x", None, [], {}])
    return out


MUTATIONS: dict[str, Mutation] = {
    "drop_required": drop_required,
    "swap_type": swap_type,
    "outside_enum": outside_enum,
    "unknown_key": unknown_key,
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutations_get_the_oracle_verdict(name: str) -> None:
    mutate = MUTATIONS[name]
    rng = random.Random(f"{SEED}-{name}")
    verdicts: Counter[bool] = Counter()
    disagreements = []
    for case_id, which, schema, args in arg_sets():
        ours, oracle = validators(schema)
        mutated = mutate(rng, normalize(schema), args)
        if mutated is None:
            continue
        expected = oracle.is_valid(mutated)
        verdicts[expected] += 1
        if ours_accepts(ours, mutated) is not expected:
            shown = orjson.dumps(mutated).decode()[:300]
            disagreements.append(f"{case_id} {which}: oracle valid={expected}: {shown}")
    total = sum(verdicts.values())
    summary = f"{name}: {total} mutated sets, {verdicts[False]} invalid, {verdicts[True]} valid"
    print(summary)
    assert total >= 1000, summary
    if name != "unknown_key":
        assert verdicts[False] >= total // 2, f"mutation rarely invalidates: {summary}"
    assert not disagreements, f"{len(disagreements)} disagreements; {summary}\n" + "\n".join(
        disagreements[:20]
    )


def test_unknown_key_under_closed_schema_gets_the_oracle_verdict() -> None:
    """Closing the top-level object (``additionalProperties: false``) makes an extra key invalid."""
    rng = random.Random(f"{SEED}-closed")
    closed: dict[bytes, tuple[ferrotool.JsonSchemaValidator, Any]] = {}
    verdicts: Counter[bool] = Counter()
    disagreements = []
    for case_id, which, schema, args in arg_sets():
        key = _key(schema)
        if key not in closed:
            shut = {**normalize(schema), "additionalProperties": False}
            closed[key] = (
                ferrotool.JsonSchemaValidator(shut),
                jsonschema_rs.Draft202012Validator(shut, validate_formats=False),
            )
        ours, oracle = closed[key]
        for mutated in (args, unknown_key(rng, schema, args)):
            expected = oracle.is_valid(mutated)
            verdicts[expected] += 1
            if ours_accepts(ours, mutated) is not expected:
                disagreements.append(f"{case_id} {which}: oracle valid={expected}: {mutated}")
    summary = f"closed: {sum(verdicts.values())} sets, {verdicts[False]} invalid"
    assert verdicts[False] >= 5000, summary
    assert not disagreements, f"{len(disagreements)} disagreements; {summary}\n" + "\n".join(
        disagreements[:20]
    )
