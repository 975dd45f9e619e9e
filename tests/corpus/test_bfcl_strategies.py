"""`ferrotool.testing` over real tool schemas: a sample of the BFCL corpus.

Every 20th of the 8,888 tool definitions in ``../shared/corpora/bfcl/cases.jsonl`` (already in
draft 2020-12, see tests/corpus/test_bfcl.py), plus the output schemas of the sampled cases:
a few valid and invalid argument sets are generated for each distinct schema and checked
against jsonschema-rs (the oracle) and ferrotool's `JsonSchemaValidator`. Generation must
neither fail (``Unsatisfiable``, health checks) nor produce a set the oracle disagrees with.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ferrotool
from ferrotool.testing import InvalidArguments, invalid_arguments, valid_arguments

CASES_FILE = (
    Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "bfcl" / "cases.jsonl"
)
EVERY = 20
EXAMPLES = 4

pytestmark = pytest.mark.skipif(not CASES_FILE.is_file(), reason=f"no BFCL corpus at {CASES_FILE}")


@cache
def sampled_schemas() -> tuple[tuple[str, Any], ...]:
    """(case id, schema) for each distinct schema of every EVERY-th case, in file order."""
    out: dict[bytes, tuple[str, Any]] = {}
    with CASES_FILE.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if index % EVERY or not line.strip():
                continue
            case = json.loads(line)
            for which in ("schema", "output_schema"):
                schema = case.get(which)
                if schema is not None:
                    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
                    out.setdefault(key, (f"{case['id']} {which}", schema))
    return tuple(out.values())


def test_generated_arguments_get_the_oracle_verdict() -> None:
    samples = sampled_schemas()
    kinds: Counter[str] = Counter()
    problems: list[str] = []
    checked = 0
    for case_id, schema in samples:
        oracle = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
        ours = ferrotool.JsonSchemaValidator(schema)
        found: list[tuple[str, InvalidArguments]] = []

        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(valid_arguments(schema), invalid_arguments(schema, include_malformed_json=True))
        def collect(text: str, case: InvalidArguments) -> None:
            found.append((text, case))  # noqa: B023  # run right here, in this iteration

        try:
            collect()
        except Exception as error:  # Unsatisfiable, a failed health check...
            problems.append(f"{case_id}: generation failed: {type(error).__name__}: {error}")
            continue
        for text, case in found:
            checked += 1
            kinds[case.mutation.kind] += 1
            if not (oracle.is_valid(orjson.loads(text)) and ours.is_valid_json(text)):
                problems.append(f"{case_id}: valid set rejected: {text[:300]}")
            if ours.is_valid_json(case.arguments):
                problems.append(f"{case_id}: invalid set accepted by ferrotool: {case}")
            if case.mutation.kind != "not_json" and oracle.is_valid(orjson.loads(case.arguments)):
                problems.append(f"{case_id}: invalid set accepted by the oracle: {case}")
    summary = (
        f"{len(samples)} schemas, {checked} valid and {checked} invalid sets, kinds {dict(kinds)}"
    )
    print(summary)
    assert len(samples) >= 300, summary
    assert checked >= EXAMPLES * len(samples) * 0.9, summary
    assert {"wrong_type", "missing_required", "outside_enum", "not_json"} <= set(kinds), summary
    assert not problems, f"{len(problems)} problems; {summary}\n" + "\n".join(problems[:20])


@given(st.data())
@settings(max_examples=20, deadline=None)
def test_any_sampled_schema(data: st.DataObject) -> None:
    """Across runs, more examples land on other schemas of the sample."""
    case_id, schema = data.draw(st.sampled_from(sampled_schemas()), label="schema")
    text = data.draw(valid_arguments(schema), label="arguments")
    assert jsonschema_rs.Draft202012Validator(schema, validate_formats=False).is_valid(
        orjson.loads(text)
    ), case_id
