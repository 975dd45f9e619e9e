"""Types declared with postponed annotations, for the introspection tests."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, NamedTuple, NotRequired, Required, TypedDict

from ferrotool._schema.params import Param


@dataclasses.dataclass
class Tree:
    """A tree of integers."""

    value: int
    children: list[Tree] = dataclasses.field(default_factory=list)


class Ping(TypedDict):
    pong: Pong | None


class Pong(TypedDict, total=False):
    ping: Required[Ping]
    count: int


class Partial(TypedDict):
    must: int
    may: NotRequired[str]


class Point(NamedTuple):
    x: float
    y: float = 0.0


def forward(
    tree: Tree, ping: Ping, mode: Literal["a", "b"] = "a", later: Later | None = None
) -> None:
    """Use types declared later."""


def annotated(n: Annotated[int, Param(ge=1, description="How many")], p: Partial) -> None:
    """Strings all the way down."""


@dataclasses.dataclass
class Later:
    flag: bool
