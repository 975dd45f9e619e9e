"""Property tests of the typed validator: dumped values come back equal; mapping parity."""

from __future__ import annotations

import orjson
from hypothesis import event, given
from hypothesis import strategies as st
from strategies import Gen, gens, mutations, same

import ferrotool


def _dump(gen: Gen, value: object) -> bytes:
    return orjson.dumps(gen.dump(value))


@given(st.data())
def test_dumped_value_validates_back_to_itself(data: st.DataObject) -> None:
    gen = data.draw(gens(), label="type")
    value = data.draw(gen.values, label="value")
    raw = _dump(gen, value)
    schema = ferrotool.type_schema(gen.tp)
    result = schema.validate_json(raw)
    assert same(result, value), f"{gen!r}: {raw!r} -> {result!r}, expected {value!r}"
    assert same(schema.validate_json(raw.decode()), value), "str input differs from bytes input"


@given(st.data())
def test_mapping_and_raw_json_agree(data: st.DataObject) -> None:
    """``validate_python(orjson.loads(raw))`` and ``validate_json(raw)``: same verdict and value."""
    gen = data.draw(gens(), label="type")
    value = data.draw(gen.values, label="value")
    raw = _dump(gen, value)
    if data.draw(st.booleans(), label="mutate"):
        raw = orjson.dumps(data.draw(mutations(orjson.loads(raw)), label="mutated"))
    schema = ferrotool.type_schema(gen.tp)
    outcomes = []
    for call, arg in ((schema.validate_json, raw), (schema.validate_python, orjson.loads(raw))):
        try:
            outcomes.append(("ok", call(arg)))
        except ferrotool.ValidationError as exc:
            outcomes.append(("error", sorted((e.code, e.path) for e in exc.errors)))
    (kind_json, out_json), (kind_py, out_py) = outcomes
    event(f"verdict: {kind_json}")
    assert kind_json == kind_py, f"{gen!r} on {raw!r}: json {outcomes[0]}, python {outcomes[1]}"
    if kind_json == "ok":
        assert same(out_json, out_py), f"{gen!r} on {raw!r}: {out_json!r} != {out_py!r}"
