"""An ISO 8601 duration oracle for `timedelta`, independent of ferrotool's reader and writer.

ferrotool reads and writes the subset ``-?P[nW][nD][T[nH][nM][n[.f]S]]`` (docs/schema.md: "weeks,
days, hours, minutes and seconds (with up to six decimals)"; years and months have no fixed length):
at least one component, at least one after a ``T``, the units in that order, each at most once,
a fraction (one to six digits) only on the seconds, and a leading ``-`` negating the whole.

Everything here works on a duration's total number of microseconds, an `int`: a text's value
is the sum of its components times their length in microseconds, and a `timedelta` is written
from its total by integer division. ferrotool works on timedelta's days, seconds and
microseconds fields instead.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass
from typing import Final

from hypothesis import strategies as st

SECOND: Final = 1_000_000
DAY: Final = 86_400 * SECOND
UNITS: Final = {"W": 7 * DAY, "D": DAY, "H": 3600 * SECOND, "M": 60 * SECOND}
"""The length of each unit but the seconds, in microseconds."""
ONE_MICROSECOND: Final = dt.timedelta(microseconds=1)


def micros_of(value: dt.timedelta) -> int:
    """The duration's total number of microseconds."""
    return value // ONE_MICROSECOND


def timedelta_of(micros: int) -> dt.timedelta | None:
    """The `timedelta` of that many microseconds, or ``None`` outside timedelta's range."""
    try:
        return dt.timedelta(microseconds=micros)
    except OverflowError:
        return None


def render(value: dt.timedelta) -> str:
    """One spelling of ``value``: days and seconds (a trimmed fraction), ``PT0S`` for zero."""
    total = micros_of(value)
    days, rest = divmod(abs(total), DAY)
    seconds, micros = divmod(rest, SECOND)
    text = "-P" if total < 0 else "P"
    if days:
        text += f"{days}D"
    if rest or not days:
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        text += f"T{seconds}{fraction}S"
    return text


# Written for this oracle: one optional group per unit, the checks the grammar cannot make below.
_GRAMMAR: Final = re.compile(
    r"(?P<sign>-?)P(?:(?P<W>\d+)W)?(?:(?P<D>\d+)D)?"
    r"(?P<T>T(?:(?P<H>\d+)H)?(?:(?P<M>\d+)M)?(?:(?P<S>\d+)(?:\.(?P<f>\d{1,6}))?S)?)?",
    re.ASCII,
)


def read(text: str) -> int | None:
    """The value of a text in the subset, in microseconds; ``None`` for any other text."""
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        return None
    parts = match.groupdict()
    time = [parts[unit] for unit in "HMS"]
    if parts["T"] is not None and all(part is None for part in time):
        return None  # "P1DT": a T with nothing after it
    if all(parts[unit] is None for unit in "WDHMS"):
        return None  # "P", "-P"
    total = sum(int(parts[unit] or 0) * length for unit, length in UNITS.items())
    total += int(parts["S"] or 0) * SECOND + int((parts["f"] or "").ljust(6, "0"))
    return -total if parts["sign"] else total


@dataclass(frozen=True)
class Spelling:
    """A duration's components as written (``None``: the unit is left out)."""

    negative: bool
    weeks: int | None = None
    days: int | None = None
    hours: int | None = None
    minutes: int | None = None
    seconds: int | None = None
    fraction: str | None = None
    """The digits after the seconds' point."""

    def text(self) -> str:
        date = "".join(
            f"{count}{unit}"
            for count, unit in ((self.weeks, "W"), (self.days, "D"))
            if count is not None
        )
        time = "".join(
            f"{count}{unit}"
            for count, unit in ((self.hours, "H"), (self.minutes, "M"))
            if count is not None
        )
        if self.seconds is not None:
            time += f"{self.seconds}" + (f".{self.fraction}" if self.fraction else "") + "S"
        return ("-" if self.negative else "") + "P" + date + (f"T{time}" if time else "")

    def micros(self) -> int:
        """The value, computed from the components alone."""
        total = (
            (self.weeks or 0) * 7 * 86_400
            + (self.days or 0) * 86_400
            + (self.hours or 0) * 3600
            + (self.minutes or 0) * 60
            + (self.seconds or 0)
        ) * SECOND
        if self.fraction:
            total += int(self.fraction) * 10 ** (6 - len(self.fraction))
        return -total if self.negative else total


def _counts(digits: int) -> st.SearchStrategy[int | None]:
    return st.none() | st.integers(0, 10**digits)


@st.composite
def spellings(draw: st.DrawFn) -> Spelling:
    """Texts in the subset, components first: small and large counts, any fraction."""
    spelling = Spelling(
        negative=draw(st.booleans()),
        weeks=draw(_counts(draw(st.sampled_from([1, 3, 12])))),
        days=draw(_counts(draw(st.sampled_from([1, 3, 9, 12])))),
        hours=draw(_counts(draw(st.sampled_from([1, 2, 12])))),
        minutes=draw(_counts(draw(st.sampled_from([1, 2, 12])))),
        seconds=draw(_counts(draw(st.sampled_from([1, 2, 14])))),
    )
    if spelling.seconds is not None and draw(st.booleans()):
        fraction = draw(st.from_regex(r"[0-9]{1,6}", fullmatch=True))
        spelling = dataclasses.replace(spelling, fraction=fraction)
    if spelling.text().lstrip("-") == "P":
        spelling = Spelling(spelling.negative, days=draw(st.integers(0, 400)))
    return spelling


@st.composite
def spellings_of(draw: st.DrawFn, value: dt.timedelta) -> str:
    """Any spelling of ``value``: its microseconds spread over the units at random."""
    total = micros_of(value)
    rest = abs(total)
    counts: dict[str, int | None] = {}
    for unit, length in UNITS.items():
        count = draw(st.integers(0, rest // length))
        rest -= count * length
        counts[unit] = count if count or draw(st.booleans()) else None
    seconds, micros = divmod(rest, SECOND)
    fraction = None
    if micros:
        fraction = f"{micros:06d}".rstrip("0")
        fraction += "0" * draw(st.integers(0, 6 - len(fraction)))  # trailing zeros, or not
    written_seconds = seconds if seconds or micros or draw(st.booleans()) else None
    spelling = Spelling(
        negative=total < 0 or (total == 0 and draw(st.booleans())),
        weeks=counts["W"],
        days=counts["D"],
        hours=counts["H"],
        minutes=counts["M"],
        seconds=written_seconds,
        fraction=fraction,
    )
    if spelling.text().lstrip("-") == "P":  # nothing written: the value is zero
        spelling = Spelling(spelling.negative, seconds=0)
    assert spelling.micros() == total
    return spelling.text()


# Ways out of the subset, each applied to a text in it: (label, change).
def _breakages(text: str) -> list[tuple[str, str]]:
    sign = "-" if text.startswith("-") else ""
    body = text.removeprefix("-").removeprefix("P")  # the components
    date, _, time = body.partition("T")
    out = [
        ("years", f"{sign}P1Y{body}"),
        ("months", f"{sign}P2M{body}"),
        ("years and months", f"{sign}P1Y2M{body}"),
        ("fraction on days", f"{sign}P1.5D" + (f"T{time}" if time else "")),
        ("fraction on weeks", f"{sign}P0.5W"),
        ("fraction on hours", f"{sign}PT1.5H"),
        ("fraction on minutes", f"{sign}PT1.5M"),
        ("seven decimals", f"{sign}PT1.1234567S"),
        ("a point and no decimals", f"{sign}PT1.S"),
        ("a comma for the point", f"{sign}PT1,5S"),
        ("nothing", f"{sign}P"),
        ("a T and nothing after it", f"{sign}P{date or '1D'}T"),
        ("units out of order", f"{sign}PT1M1H"),
        ("days before weeks", f"{sign}P1D1W"),
        ("a unit twice", f"{sign}PT1H2H"),
        ("a unit without a count", f"{sign}PDT1H"),
        ("a time unit before the T", f"{sign}P1H"),
        ("a sign inside", f"P-{body or 'T0S'}"),
        ("a plus sign", f"+P{body}"),
        ("lower case", text.lower()),
        ("no P", f"{sign}{body or 'T0S'}"),
        ("a space", f" {text}"),
        ("a trailing unit letter", f"{text}S"),
    ]
    return [(label, broken) for label, broken in out if broken != text]


@st.composite
def broken_texts(draw: st.DrawFn) -> tuple[str, str]:
    """A text outside the subset, with what makes it so."""
    text = draw(spellings()).text()
    return draw(st.sampled_from(_breakages(text)))
