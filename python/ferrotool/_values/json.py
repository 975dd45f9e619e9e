"""JSON value types shared across ferrotool."""

from __future__ import annotations

from typing import TypeAlias

import orjson

# A plain recursive alias: mypy --strict understands it and it costs nothing at runtime.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""Any value that JSON can represent, as Python builds it from ``json.loads``."""


def dumps_kept(value: object) -> bytes:
    """``orjson.dumps(value)`` for bytes kept as long as a tool: copied to their exact size.

    orjson's result keeps its writer's whole buffer (4 KB at least for a small document, about
    twelve times the text for a long one); the copy holds the text and the bytes header only.
    """
    return bytes(memoryview(orjson.dumps(value)))


__all__ = ["JsonValue", "dumps_kept"]
