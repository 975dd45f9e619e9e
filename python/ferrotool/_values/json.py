"""JSON value types shared across ferrotool."""

from __future__ import annotations

from typing import TypeAlias

# A plain recursive alias: mypy --strict understands it and it costs nothing at runtime.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""Any value that JSON can represent, as Python builds it from ``json.loads``."""

__all__ = ["JsonValue"]
