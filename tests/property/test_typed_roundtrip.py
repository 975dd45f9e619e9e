"""Property tests of the typed validator: dumped values come back equal; mapping parity."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson
from hypothesis import event, given
from hypothesis import strategies as st
from strategies import JSON_VALUES, Gen, Json, gens, mutations, same

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


# --- the same value, spelled in any of JSON's ways ----------------------------------------------

_WHITESPACE = st.text(alphabet=" \t\n\r", max_size=2)
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                  "\r": "\\r", "\t": "\\t"}  # fmt: skip


def _unicode_escape(char: str, upper: bool) -> str:
    code = ord(char)
    units = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10),
                                            0xDC00 + ((code - 0x10000) & 0x3FF)]  # fmt: skip
    text = "".join(f"\\u{unit:04x}" for unit in units)
    return text.upper().replace("\\U", "\\u") if upper else text


def _spell_string(draw: st.DrawFn, text: str) -> str:
    out = ['"']
    for char in text:
        how = draw(st.sampled_from(("plain", "plain", "plain", "short", "unicode", "UNICODE")))
        if how == "short" and char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif how in ("unicode", "UNICODE") or char in '"\\' or ord(char) < 0x20:
            out.append(_unicode_escape(char, upper=how == "UNICODE"))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _spell_number(draw: st.DrawFn, number: float) -> str:
    if isinstance(number, int):
        forms = [str(number)]
        if number == 0:
            forms.append("-0")
        return draw(st.sampled_from(forms))
    forms = [repr(number), f"{number:.17g}", f"{number:.17e}", f"{number:.17E}"]
    if number.is_integer() and abs(number) < 1e15:
        forms += [f"{int(number)}.0", f"{int(number)}e0", f"{int(number)}.000E+00"]
    spelled = draw(st.sampled_from(forms))
    # Python's spelling of what JSON writes otherwise ("1e-05", "inf" never reaches here).
    return spelled if "." in spelled or "e" in spelled.lower() else spelled + ".0"


@st.composite
def _spelled(draw: st.DrawFn, value: Json) -> str:
    """``value`` (JSON data) as JSON text: whitespace between tokens, escapes, number forms."""
    space = draw(_WHITESPACE)
    if isinstance(value, bool) or value is None:
        body = orjson.dumps(value).decode()
    elif isinstance(value, int | float):
        body = _spell_number(draw, value)
    elif isinstance(value, str):
        body = _spell_string(draw, value)
    elif isinstance(value, list):
        items = [draw(_spelled(item)) for item in value]
        body = "[" + ",".join(items) + draw(_WHITESPACE) + "]"
    else:
        entries = [
            draw(_WHITESPACE) + _spell_string(draw, key) + draw(_WHITESPACE) + ":"
            + draw(_spelled(item))
            for key, item in value.items()
        ]  # fmt: skip
        body = "{" + ",".join(entries) + draw(_WHITESPACE) + "}"
    return space + body + draw(_WHITESPACE)


@given(st.data())
def test_any_spelling_of_a_value_validates_to_it(data: st.DataObject) -> None:
    """Whitespace, escapes (short, ``\\u``, surrogate pairs) and number spellings change nothing."""
    gen = data.draw(gens(), label="type")
    value = data.draw(gen.values, label="value")
    text = data.draw(_spelled(orjson.loads(_dump(gen, value))), label="text")
    schema = ferrotool.type_schema(gen.tp)
    result = schema.validate_json(text)
    assert same(result, value), f"{gen!r}: {text!r} -> {result!r}, expected {value!r}"
    assert same(schema.validate_json(text.encode()), result), "bytes input differs from str"


_ANY_SCHEMAS = (
    ferrotool.type_schema(Any),
    ferrotool.type_schema(list[Any]),
    ferrotool.type_schema(dict[str, Any]),
)


@given(st.data())
def test_an_any_value_is_what_python_reads(data: st.DataObject) -> None:
    """An ``Any`` value (alone, as a list item, as a dict value) is what Python's ``json``
    reads from the text, in any spelling: repeated keys (the last value, in the first one's
    place), integers beyond 64 bits, exponents."""
    value = data.draw(JSON_VALUES, label="value")
    text = data.draw(_spelled(value), label="text")
    if isinstance(value, dict) and value and data.draw(st.booleans(), label="repeat a key"):
        key = orjson.dumps(data.draw(st.sampled_from(sorted(value)), label="key")).decode()
        again = data.draw(_spelled(data.draw(JSON_VALUES, label="again")), label="again text")
        text = f"{text.rstrip()[:-1]}, {key}: {again}}}"
    expected = json.loads(text)
    wrapped = (text, f"[{text}]", f'{{"k": {text}}}')
    reads = (expected, [expected], {"k": expected})
    for schema, raw, read in zip(_ANY_SCHEMAS, wrapped, reads, strict=True):
        result = schema.validate_json(raw)
        assert same(result, read), f"{raw!r} -> {result!r}, expected {read!r}"
        # The same keys in the same order, at every level.
        assert json.dumps(result) == json.dumps(read), f"{raw!r} -> {result!r}"


@given(st.data())
def test_damaged_text_is_invalid_json_or_what_python_reads(data: st.DataObject) -> None:
    """One character of a valid text dropped, doubled or replaced: the outcome is an
    ``invalid_json`` error where the text is no JSON any more, and otherwise the outcome of
    validating what Python's ``json`` module reads from it."""
    gen = data.draw(gens(), label="type")
    value = data.draw(gen.values, label="value")
    text = data.draw(_spelled(orjson.loads(_dump(gen, value))), label="text")
    at = data.draw(st.integers(0, len(text) - 1), label="at")
    how = data.draw(st.sampled_from(("drop", "double", "replace")), label="how")
    char = data.draw(st.sampled_from('{}[]:,"\\ 0-.e1tfnuxE+'), label="char")
    damaged = {
        "drop": text[:at] + text[at + 1 :],
        "double": text[:at] + text[at] + text[at:],
        "replace": text[:at] + char + text[at + 1 :],
    }[how]
    schema = ferrotool.type_schema(gen.tp)
    try:
        parsed = json.loads(damaged, parse_constant=_no_constant, parse_float=_finite)
    except _Overflow:
        # A number past the largest double: Python reads infinity, ferrotool refuses it.
        kind, result = _outcome(schema.validate_json, damaged)
        assert kind == "error", f"{damaged!r} read as {result!r}"
        return
    except (ValueError, RecursionError):
        parsed = _NOT_JSON
    if parsed is not _NOT_JSON and _has_surrogate(parsed):
        return  # Python reads lone surrogates; JSON text for ferrotool is UTF-8.
    kind, result = _outcome(schema.validate_json, damaged)
    if parsed is _NOT_JSON:
        event("not JSON")
        assert kind == "error", f"{damaged!r} read as {result!r}"
        assert result == [("invalid_json", ())], f"{damaged!r}: {result!r}"
        return
    expected_kind, expected = _outcome(schema.validate_python, parsed)
    event(f"still JSON: {expected_kind}")
    assert kind == expected_kind, f"{gen!r} on {damaged!r}: {result!r} vs {expected!r}"
    if kind == "ok":
        assert same(result, expected), f"{gen!r} on {damaged!r}: {result!r} != {expected!r}"


def _outcome(call: Callable[[Any], object], arg: object) -> tuple[str, object]:
    try:
        return "ok", call(arg)
    except ferrotool.ValidationError as exc:
        return "error", sorted((e.code, e.path) for e in exc.errors)


_NOT_JSON = object()


class _Overflow(Exception):
    """A JSON number too large for a double."""


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Overflow(text)
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is no JSON")


def _has_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) < 0xE000 for char in value)
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(_has_surrogate(key) or _has_surrogate(item) for key, item in value.items())
    return False
