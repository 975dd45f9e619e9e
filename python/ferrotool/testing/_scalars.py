"""Strategies for the leaves of a value: numbers, strings and their formats, any JSON."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Final

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ferrotool._values.json import JsonValue
from ferrotool.testing._document import _bounds, _count, _step
from ferrotool.testing._regex import _regex

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**63 - 1


# -- formats --------------------------------------------------------------------------------------

_CHARS: Final = st.characters(codec="utf-8")
_OFFSETS: Final = st.one_of(
    st.just(dt.UTC),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
        lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
    ),
)


def _duration(parts: tuple[int, int, int, int, int]) -> str:
    """An RFC 3339 duration: weeks alone, or days and a contiguous run of H, M, S."""
    days, hours, minutes, seconds, weeks = parts
    if weeks:
        return f"P{weeks}W"
    date = f"{days}D" if days else ""
    units = ((hours, "H"), (minutes, "M"), (seconds, "S"))
    used = [index for index, (amount, _) in enumerate(units) if amount]
    time = (
        "".join(f"{amount}{unit}" for amount, unit in units[used[0] : used[-1] + 1]) if used else ""
    )
    if not date and not time:
        return "PT0S"
    return "P" + date + ("T" + time if time else "")


# Hyphens only from the fourth character on: `--` in the third and fourth places is reserved
# (RFC 5891), and validators that check formats reject it.
_LABEL: Final = r"(?:[a-z0-9]{1,3}|[a-z0-9]{3}[a-z0-9-]{0,8}[a-z0-9])"
_HOST: Final = rf"{_LABEL}(?:\.{_LABEL}){{0,3}}"
_SMALL: Final = st.integers(min_value=0, max_value=400)
_FORMATS: Final[dict[str, SearchStrategy[str]]] = {
    "date-time": st.datetimes(timezones=_OFFSETS).map(lambda value: value.isoformat()),
    "date": st.dates().map(lambda value: value.isoformat()),
    "time": st.times(timezones=_OFFSETS).map(lambda value: value.isoformat()),
    "duration": st.tuples(_SMALL, _SMALL, _SMALL, _SMALL, st.sampled_from([0, 0, 0, 1, 2])).map(
        _duration
    ),
    "uuid": st.uuids().map(str),
    "email": st.from_regex(
        rf"[a-z0-9]{{1,10}}(?:\.[a-z0-9]{{1,6}})?@{_HOST}\.[a-z]{{2,6}}", fullmatch=True
    ),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
    "hostname": st.from_regex(_HOST, fullmatch=True),
    "uri": st.from_regex(
        rf"https?://{_HOST}(?::[1-9][0-9]{{1,3}})?(?:/[A-Za-z0-9._~-]{{0,8}}){{0,3}}"
        r"(?:\?[a-z]{1,6}=[A-Za-z0-9]{0,6})?",
        fullmatch=True,
    ),
    "json-pointer": st.from_regex(r"(?:/(?:[a-z0-9]|~0|~1){0,6}){0,4}", fullmatch=True),
}
_FORMATS["idn-email"] = _FORMATS["email"]
_FORMATS["idn-hostname"] = _FORMATS["hostname"]
_FORMATS["uri-reference"] = _FORMATS["uri"]
_FORMATS["iri"] = _FORMATS["uri"]
_FORMATS["iri-reference"] = _FORMATS["uri"]

# -- any JSON -------------------------------------------------------------------------------------

_SCALARS: Final[SearchStrategy[JsonValue]] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=_INT_MIN, max_value=_INT_MAX),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_CHARS, max_size=10),
)


_NOTHING: Final = st.nothing()


def _one_of(options: Sequence[SearchStrategy[JsonValue]]) -> SearchStrategy[JsonValue]:
    """``st.one_of`` without the options known to be empty (`_NOTHING` if all are)."""
    kept = [option for option in options if option is not _NOTHING]
    if not kept:
        return _NOTHING
    return kept[0] if len(kept) == 1 else st.one_of(kept)


def _extend(children: SearchStrategy[JsonValue]) -> SearchStrategy[JsonValue]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(_CHARS, max_size=8), children, max_size=3),
    )


_ANY: Final[SearchStrategy[JsonValue]] = st.recursive(_SCALARS, _extend, max_leaves=8)

# -- numbers and strings --------------------------------------------------------------------------


def _integer_range(node: dict[str, JsonValue]) -> tuple[int, int]:
    low, low_strict, high, high_strict = _bounds(node)
    first = _INT_MIN
    if low is not None:
        first = max(first, math.floor(low) + 1 if low_strict else math.ceil(low))
    last = _INT_MAX
    if high is not None:
        last = min(last, math.ceil(high) - 1 if high_strict else math.floor(high))
    return first, last


def _integers(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    first, last = _integer_range(node)
    step = _step(node)
    if step is not None:
        # An integer n is a multiple of p/q (in lowest terms) exactly when p divides n.
        grain = step.numerator
        first, last = -(-first // grain), last // grain
        if first > last:
            return _NOTHING
        return st.integers(min_value=first, max_value=last).map(lambda k: k * grain)
    if first <= last:
        return st.integers(min_value=first, max_value=last)
    low, _, high, _ = _bounds(node)
    if (low is not None and low > _INT_MAX) or (high is not None and high < _INT_MIN):
        # Integers too big for 64 bits: JSON writes them as floats, which are integral there.
        return _floats(node).filter(lambda value: isinstance(value, float) and value.is_integer())
    return _NOTHING


def _floats(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    """Finite floats within the bounds of ``node``."""
    low, low_strict, high, high_strict = _bounds(node)
    smallest = None if low is None else float(low)
    largest = None if high is None else float(high)
    if smallest is not None and low_strict:
        smallest = math.nextafter(smallest, math.inf)
    if largest is not None and high_strict:
        largest = math.nextafter(largest, -math.inf)
    if smallest is not None and largest is not None and smallest > largest:
        return _NOTHING
    if (smallest is not None and math.isinf(smallest)) or (
        largest is not None and math.isinf(largest)
    ):
        return _NOTHING
    return st.floats(min_value=smallest, max_value=largest, allow_nan=False, allow_infinity=False)


def _numbers(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    low, low_strict, high, high_strict = _bounds(node)
    step = _step(node)
    if step is not None:
        first = None if low is None else math.ceil(Fraction(low) / step)
        last = None if high is None else math.floor(Fraction(high) / step)
        if first is None:
            first = -(10**6) if last is None else min(-(10**6), last - 10**6)
        if last is None:
            last = max(10**6, first + 10**6)
        if low is not None and low_strict and first * step == low:
            first += 1
        if high is not None and high_strict and last * step == high:
            last -= 1
        if first > last:
            return _NOTHING
        exact = Decimal(step.numerator) / Decimal(step.denominator)
        return st.integers(min_value=first, max_value=last).map(lambda k: _multiple(k, step, exact))
    options: list[SearchStrategy[JsonValue]] = [_integers(node), _floats(node)]
    return _one_of(options)


def _multiple(k: int, step: Fraction, exact: Decimal) -> JsonValue:
    value = k * step
    if value.denominator == 1 and _INT_MIN <= value.numerator <= _INT_MAX:
        return value.numerator
    return float(Decimal(k) * exact)


def _strings(node: dict[str, JsonValue]) -> SearchStrategy[JsonValue]:
    shortest = _count(node.get("minLength"), 0)
    longest_raw = node.get("maxLength")
    longest = _count(longest_raw, -1) if longest_raw is not None else None
    if longest is not None and longest < 0:
        longest = None
    if longest is not None and shortest > longest:
        return _NOTHING
    pattern = node.get("pattern")
    regex = _regex(pattern) if isinstance(pattern, str) else None
    plain: SearchStrategy[str]
    if regex is not None:
        plain = st.from_regex(regex, fullmatch=True)
        if longest is None:
            plain = st.one_of(plain, st.from_regex(regex, fullmatch=False))
        if shortest > 0 or longest is not None:
            plain = plain.filter(
                lambda text: shortest <= len(text) and (longest is None or len(text) <= longest)
            )
    else:
        plain = st.text(
            _CHARS,
            min_size=shortest,
            max_size=longest if longest is not None else shortest + 20,
        )
    fmt = node.get("format")
    if not isinstance(fmt, str) or fmt not in _FORMATS:
        return plain
    formatted = _FORMATS[fmt]

    def fits(text: str) -> bool:
        return (
            shortest <= len(text)
            and (longest is None or len(text) <= longest)
            and (regex is None or regex.search(text) is not None)
        )

    @st.composite
    def strings(draw: DrawFn) -> JsonValue:
        # The format when it also meets the other keywords, else a plain string: ``format``
        # only annotates, so a string that misses it is still valid.
        text = draw(formatted)
        return text if fits(text) else draw(plain)

    return strings()
