"""Property tests of derived schemas: metaschema-valid, and the same verdict as jsonschema-rs.

The oracle validates the derived schema with formats asserted; ferrotool's typed validator must
accept exactly the same JSON documents (it builds Python values, but may not be stricter or
looser than the schema it publishes).
"""

from __future__ import annotations

import functools

import jsonschema_rs
import orjson
from hypothesis import assume, event, given, target
from hypothesis import strategies as st
from strategies import JSON_VALUES, gens, mutations

import ferrotool

METASCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"


@given(gens())
def test_derived_schema_is_valid_against_the_2020_12_metaschema(gen: object) -> None:
    schema = ferrotool.type_schema(gen.tp).json_schema()  # type: ignore[attr-defined]
    assert jsonschema_rs.meta.is_valid(schema), f"{gen!r}: {schema}"
    # The dialect is 2020-12 whether or not `$schema` is given.
    assert jsonschema_rs.meta.is_valid({**schema, "$schema": METASCHEMA_URI}), f"{gen!r}: {schema}"
    jsonschema_rs.Draft202012Validator(schema, validate_formats=True)  # compiles (patterns...)


@functools.cache
def _oracle(schema_bytes: bytes) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(orjson.loads(schema_bytes), validate_formats=True)


def _has_huge_float(value: object) -> bool:
    if isinstance(value, float):
        return abs(value) >= 2.0**53
    if isinstance(value, dict):
        return any(_has_huge_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_huge_float(item) for item in value)
    return False


@given(st.data())
def test_typed_verdict_matches_the_oracle(data: st.DataObject) -> None:
    gen = data.draw(gens(), label="type")
    source = data.draw(st.sampled_from(["valid", "mutated", "random"]), label="source")
    if source == "random":
        instance = data.draw(JSON_VALUES, label="instance")
    else:
        instance = gen.dump(data.draw(gen.values, label="value"))
        if source == "mutated":
            instance = data.draw(mutations(instance), label="instance")
    # ferrotool judges the JSON text, the oracle the Python float: beyond 2**53 an integral
    # float's shortest text (2.877483430553081e+17, a multiple of 25) and its binary value
    # (287748343055308096, not one) are different integers, and `multipleOf` may tell them apart.
    assume(not _has_huge_float(instance))
    schema = ferrotool.type_schema(gen.tp)
    expected = _oracle(schema.schema_json).is_valid(instance)
    raw = orjson.dumps(instance)
    try:
        schema.validate_json(raw)
        ours = True
    except ferrotool.ValidationError:
        ours = False
    event(f"{source}: {'valid' if expected else 'invalid'}")
    target(float(expected), label="valid instances")
    assert ours is expected, (
        f"{gen!r}\nschema {schema.schema_json.decode()}\ninstance {raw.decode()}\n"
        f"oracle valid={expected}, ferrotool valid={ours}"
    )
