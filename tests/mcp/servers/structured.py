"""The toolkit the structured-output tests serve: ``structured:toolkit``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, TypedDict

import pydantic

from ferrotool import ToolBase, ToolCallParam, Toolkit, tool


@dataclass(frozen=True)
class Point:
    """A point."""

    x: int
    y: int
    label: str | None = None


class Span(NamedTuple):
    """A span."""

    start: int
    end: int


class Stats(TypedDict):
    """Counts."""

    words: int
    lines: int


class Owner(pydantic.BaseModel):
    """An owner."""

    name: str
    pets: list[str] = []


@tool
def point(x: int, y: int) -> Point:
    """A point at x, y.

    Args:
        x: Across.
        y: Down.
    """
    return Point(x, y)


@tool
def span(start: int, end: int) -> Span:
    """A span.

    Args:
        start: The first.
        end: The last.
    """
    return Span(start, end)


@tool
def stats(text: str) -> Stats:
    """Count words and lines.

    Args:
        text: The text.
    """
    return Stats(words=len(text.split()), lines=len(text.splitlines()))


@tool
async def owner(name: str) -> Owner:
    """An owner with no pets.

    Args:
        name: The name.
    """
    return Owner(name=name)


@tool
def double(n: int) -> int:
    """Twice n.

    Args:
        n: The number.
    """
    return 2 * n


@tool
def points(n: int) -> list[Point]:
    """n points on the diagonal.

    Args:
        n: How many.
    """
    return [Point(i, i) for i in range(n)]


@tool
def find(x: int) -> Point | None:
    """The point at x, if x is positive.

    Args:
        x: Across.
    """
    return Point(x, 0) if x > 0 else None


@tool
def scores() -> dict[str, float]:
    """Scores by name."""
    return {"a": 1.5, "b": 2.0}


@tool
def greet(name: str) -> str:
    """Greet someone.

    Args:
        name: Who.
    """
    return f"hello {name}"


class Area(ToolBase[dict[str, object]]):
    """The area of a rectangle."""

    name = "area"
    input_schema = {
        "type": "object",
        "properties": {"w": {"type": "number"}, "h": {"type": "number"}},
        "required": ["w", "h"],
    }
    output_schema = float

    async def call(self, param: ToolCallParam[dict[str, object]]) -> object:
        w, h = param.input["w"], param.input["h"]
        assert isinstance(w, (int, float))
        assert isinstance(h, (int, float))
        return float(w * h)


def toolkit() -> Toolkit:
    """Tools of every output shape."""
    kit = Toolkit()
    for item in (point, span, stats, owner, double, points, find, scores, greet):
        kit.register(item)
    kit.register(Area())
    return kit
