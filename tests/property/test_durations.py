"""`timedelta` as an ISO 8601 duration, against the independent oracle of `durations`.

Both directions: a `timedelta` spelled in any of the subset's ways reads back as itself, and a
text built from components reads as the value its components add up to (or is rejected when
`timedelta` cannot hold it). Texts outside the subset (years, months, bad syntax) are
rejected, by the typed validator and by the derived schema's ``pattern`` alike; and what
ferrotool writes (a parameter's default in the schema) reads back as the value.
"""

from __future__ import annotations

import datetime as dt

import orjson
import pytest
from durations import (
    Spelling,
    broken_texts,
    micros_of,
    read,
    render,
    spellings,
    spellings_of,
    timedelta_of,
)
from hypothesis import event, given
from hypothesis import strategies as st

import ferrotool
from ferrotool import JsonSchemaValidator, ValidationError, type_schema

DURATION = type_schema(dt.timedelta)
DURATION_SCHEMA = JsonSchemaValidator(DURATION.schema_json)


def process(d: dt.timedelta) -> str:
    return str(d)


PARAMETER = ferrotool.function_schema(process)


def readings(text: str) -> list[dt.timedelta | None]:
    """What each of ferrotool's readers makes of ``text`` (``None``: rejected)."""
    out: list[dt.timedelta | None] = []
    raw = orjson.dumps(text)
    for reader in (
        DURATION.validate_json,
        lambda raw: DURATION.validate_python(orjson.loads(raw)),
        lambda raw: PARAMETER.validate_json(b'{"d": %b}' % raw)["d"],
        lambda raw: PARAMETER.validate_python({"d": orjson.loads(raw)})["d"],
    ):
        try:
            value = reader(raw)
        except ValidationError:
            out.append(None)
        else:
            assert isinstance(value, dt.timedelta)
            out.append(value)
    return out


def test_the_oracle_reads_what_it_writes() -> None:
    examples = {
        "P1D": 86_400 * 10**6,
        "P1W1D": 8 * 86_400 * 10**6,
        "PT36H": 36 * 3600 * 10**6,
        "-PT1.5S": -1_500_000,
        "PT0.000001S": 1,
        "-P1DT1S": -(86_401 * 10**6),
        "PT0S": 0,
    }
    for text, micros in examples.items():
        assert read(text) == micros
    assert render(dt.timedelta(days=-1, seconds=86_399)) == "-PT1S"
    assert render(dt.timedelta(days=2, microseconds=500)) == "P2DT0.0005S"
    assert render(dt.timedelta(0)) == "PT0S"
    for text in ("P", "PT", "P1Y", "P1M", "PT1.5M", "P1DT", "PT1.1234567S", "p1d"):
        assert read(text) is None


@given(st.data())
def test_any_spelling_of_a_timedelta_reads_as_it(data: st.DataObject) -> None:
    value = data.draw(st.timedeltas(), label="value")
    text = data.draw(spellings_of(value), label="text")
    assert read(text) == micros_of(value)
    assert readings(text) == [value] * 4
    assert DURATION_SCHEMA.is_valid(text)


@given(st.timedeltas())
def test_the_oracle_spelling_reads_as_the_timedelta(value: dt.timedelta) -> None:
    text = render(value)
    assert readings(text) == [value] * 4


@given(spellings())
def test_a_text_reads_as_its_components_add_up(spelling: Spelling) -> None:
    text = spelling.text()
    expected = timedelta_of(spelling.micros())  # None: beyond what a timedelta holds
    assert read(text) == spelling.micros()
    assert readings(text) == [expected] * 4
    assert DURATION_SCHEMA.is_valid(text)


@given(broken_texts())
def test_texts_outside_the_subset_are_rejected(case: tuple[str, str]) -> None:
    label, text = case
    assert read(text) is None, label
    assert readings(text) == [None] * 4, label
    assert not DURATION_SCHEMA.is_valid(text), label


# Texts near the subset: its letters and digits in any order, mostly after a P.
NEAR = st.tuples(
    st.sampled_from(["P", "-P", "", "+P", "p"]),
    st.lists(st.sampled_from([*"TWDHMSY.,-", "0", "7", "12", "1234567"]), max_size=8),
).map(lambda parts: parts[0] + "".join(parts[1]))


@given(st.one_of(NEAR, st.text(alphabet="-+PTWDHMSYpt.,0123456789 ", max_size=14)))
def test_any_text_gets_the_oracles_verdict(text: str) -> None:
    micros = read(text)
    expected = None if micros is None else timedelta_of(micros)
    event("in the subset" if micros is not None else "outside the subset")
    assert readings(text) == [expected] * 4
    assert DURATION_SCHEMA.is_valid(text) is (micros is not None)


@given(st.timedeltas())
def test_a_default_is_written_as_the_oracle_reads_it(value: dt.timedelta) -> None:
    def wait(d: dt.timedelta = value) -> str:
        return str(d)

    schema = orjson.loads(ferrotool.function_schema(wait).schema_json)
    written = schema["properties"]["d"]["default"]
    assert read(written) == micros_of(value), written
    assert DURATION_SCHEMA.is_valid(written)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("P1Y", "years"),
        ("P1M", "months (M before the T)"),
        ("P1Y2M3D", "years and months"),
        ("P1MT1M", "months and minutes"),
        ("PT1.5M", "a fraction of a minute"),
        ("P1.5D", "a fraction of a day"),
        ("PT0.1234567S", "seven decimals"),
        ("P1DT", "a T with nothing after it"),
        ("P", "no component"),
        ("PT1H1H", "a unit twice"),
        ("P1D1W", "days before weeks"),
        ("P1000000000D", "more days than a timedelta holds"),
        ("PT99999999999999999999S", "more seconds than 64 bits hold"),
    ],
)
def test_rejected_examples(text: str, reason: str) -> None:
    assert readings(text) == [None] * 4, reason
