"""What the provider adapter tests share: a toolkit, and one result of every kind."""

from __future__ import annotations

from typing import Annotated

from ferrotool import (
    ImageBlock,
    JsonBlock,
    Param,
    TextBlock,
    Toolkit,
    ToolResultBlock,
    ToolUseBlock,
    tool,
)

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
    "hKmMIQAAAABJRU5ErkJggg=="
)


@tool
async def get_weather(city: str, days: Annotated[int, Param(ge=1, le=14)] = 1) -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city.
        days: How many days ahead.
    """
    return f"{city}: sunny for {days} day(s)"


@tool
async def lookup(sku: str) -> dict[str, object]:
    """Look a product up."""
    return {"sku": sku, "price": 9.5}


@tool
async def chart(title: str) -> ToolResultBlock:
    """Draw a chart."""
    return ToolResultBlock.success(
        [TextBlock(f"chart {title}"), ImageBlock(media_type="image/png", data=PNG)]
    )


def toolkit() -> Toolkit:
    kit = Toolkit()
    for item in (get_weather, lookup, chart):
        kit.register(item)
    return kit


def call(id: str, name: str = "get_weather") -> ToolUseBlock:
    return ToolUseBlock(id, name, '{"city": "Paris"}')


def results_of_every_state() -> list[ToolResultBlock]:
    """One result per state and kind of content, stamped with call ids r1, r2, ..."""
    return [
        ToolResultBlock.success("sunny", id="r1", name="get_weather"),
        ToolResultBlock.error("Tool execution failed: disk full", id="r2", name="get_weather"),
        ToolResultBlock.denied(call("r3"), "Permission denied by user"),
        ToolResultBlock.interrupted(call("r4")),
        ToolResultBlock.suspended(call("r5")),
        ToolResultBlock.success('{"sku": "A1"}', id="r6", name="lookup", structured={"sku": "A1"}),
        ToolResultBlock.success([TextBlock("two"), JsonBlock({"n": 2})], id="r7", name="lookup"),
        ToolResultBlock.success(
            [TextBlock("chart"), ImageBlock(media_type="image/png", data=PNG)],
            id="r8",
            name="chart",
        ),
        ToolResultBlock.success(
            ImageBlock(media_type="image/png", url="https://example.com/a.png"),
            id="r9",
            name="chart",
        ),
    ]


ERRORS = {"r2", "r3", "r4"}
"""The ids of `results_of_every_state` whose state is an error for the providers."""

TEXTS = {
    "r1": "sunny",
    "r2": "Error: Tool execution failed: disk full",
    "r3": "Permission denied by user",
    "r4": "The tool call was interrupted before it finished.",
    "r5": "[Awaiting external execution]",
    "r6": '{"sku": "A1"}',
    "r7": 'two\n{"n":2}',
    "r8": "chart",
    "r9": "",
}
"""The text each of `results_of_every_state` is sent with."""
