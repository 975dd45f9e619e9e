"""Property tests of `JsonSchemaValidator` against jsonschema-rs on generated schemas."""

from __future__ import annotations

import jsonschema_rs
import orjson
from hypothesis import event, given, target
from hypothesis import strategies as st
from schema_strategies import SMALL_JSON, json_schemas
from strategies import JSON_VALUES

import ferrotool


@given(json_schemas(), st.lists(st.one_of(SMALL_JSON, JSON_VALUES), min_size=1, max_size=8))
def test_verdict_matches_the_oracle(schema: object, instances: list[object]) -> None:
    oracle = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
    ours = ferrotool.JsonSchemaValidator(schema)
    shown = orjson.dumps(schema).decode()
    valid = 0
    for instance in instances:
        expected = oracle.is_valid(instance)
        valid += expected
        event("valid" if expected else "invalid")
        verdict = ours.is_valid(instance)
        assert verdict is expected, f"schema {shown}\ninstance {instance!r}: oracle {expected}"
        errors = ours.errors(instance)
        assert (errors == ()) is expected, f"schema {shown}\ninstance {instance!r}: {errors}"
        assert ours.is_valid_json(orjson.dumps(instance)) is expected, "raw JSON verdict differs"
    # Steer towards schemas that accept some instances and reject others.
    target(min(valid, len(instances) - valid) / len(instances), label="mixed verdicts")
