"""Python values as plain JSON data: schema defaults and examples.

A default is shown in a schema when JSON can carry it (enums as their value, date/times as ISO
8601, durations as ISO 8601 durations, tuples and sets as arrays, ``Decimal`` and paths as
strings); any other value is `UNREPRESENTABLE` and left out.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import sys
from typing import Final, cast

import orjson

from ferrotool._schema.ir import FieldIR
from ferrotool._values.json import JsonValue

# JSON numbers that orjson (and the IR) can carry as integers.
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**64 - 1


def set_default(field: FieldIR, value: object) -> None:
    """Put ``value`` as JSON into ``field["default"]``, or leave it out if JSON cannot carry it."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        field["default"] = cast("JsonValue", value)
        return
    if kind is int:
        if INT_MIN <= cast("int", value) <= INT_MAX:
            field["default"] = cast("int", value)
        return
    if kind is float:
        if math.isfinite(cast("float", value)):
            field["default"] = cast("float", value)
        return
    converted = to_json(value)
    if converted is not UNREPRESENTABLE:
        field["default"] = cast("JsonValue", converted)


UNREPRESENTABLE: Final = object()


def to_json(value: object) -> object:
    """``value`` as plain JSON data, or `UNREPRESENTABLE`."""
    try:
        return orjson.loads(orjson.dumps(value, default=_encode_extra))
    except (TypeError, orjson.JSONEncodeError):
        return UNREPRESENTABLE


def _encode_extra(value: object) -> object:
    """Orjson's hook for values it does not serialize natively."""
    if isinstance(value, dt.timedelta):
        return iso_duration(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise TypeError("not a finite decimal")
        return str(value)
    pathlib = sys.modules.get("pathlib")  # a path exists only once pathlib is loaded
    if pathlib is not None and isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    if isinstance(value, tuple):
        as_dict = getattr(value, "_asdict", None)
        return as_dict() if as_dict is not None else list(value)
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def iso_duration(value: dt.timedelta) -> str:
    """An ISO 8601 duration (``P1DT2H3M4.5S``), with a leading ``-`` when negative."""
    if value < dt.timedelta(0):
        return "-" + iso_duration(-value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    time = ""
    if hours:
        time += f"{hours}H"
    if minutes:
        time += f"{minutes}M"
    if value.microseconds:
        time += f"{seconds}.{value.microseconds:06d}".rstrip("0") + "S"
    elif seconds:
        time += f"{seconds}S"
    text = "P" + (f"{value.days}D" if value.days else "") + (f"T{time}" if time else "")
    return "PT0S" if text == "P" else text


__all__ = ["INT_MAX", "INT_MIN", "UNREPRESENTABLE", "iso_duration", "set_default", "to_json"]
