"""The example toolkit `ferrotool demo` runs: sync and async tools, records, injected context."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Final, Literal

import anyio

from ferrotool._registry.toolkit import Toolkit
from ferrotool._schema.params import Param
from ferrotool._tools.function import tool
from ferrotool._tools.inject import Injected
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import Emitter, RuntimeContext


class Unit(enum.Enum):
    """A temperature unit."""

    CELSIUS = "c"
    FAHRENHEIT = "f"


@dataclasses.dataclass(frozen=True)
class Item:
    """One line of an order."""

    sku: str
    qty: Annotated[int, Param(ge=1, description="How many, at least 1")]
    price: float


@dataclasses.dataclass(frozen=True)
class Shop:
    """An application object tools receive from the runtime context, never from the model."""

    name: str
    currency: str


@tool(read_only=True, inline=True)
def get_weather(city: str, unit: Unit = Unit.CELSIUS, days: int = 1) -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city, e.g. "Paris".
        unit: The temperature unit.
        days: How many days ahead, 1 to 14.
    """
    symbol = "°C" if unit is Unit.CELSIUS else "°F"
    return f"{city}: sunny, 21{symbol} for the next {days} day(s)"


@dataclasses.dataclass(frozen=True)
class Receipt:
    """What an order returns: a record, which its result carries as JSON (text and value)."""

    shop: str
    total: float
    currency: str
    note: str | None


@tool
async def place_order(
    items: list[Item],
    shop: Injected[Shop],
    emitter: Emitter,
    note: str | None = None,
) -> Receipt:
    """Place an order for some items.

    Args:
        items: The lines of the order.
        shop: The shop taking the order (injected from the context).
        emitter: Reports progress (injected).
        note: A note for the shop.
    """
    emitter.emit(f"pricing {len(items)} item(s)")
    await anyio.sleep(0)
    total = round(sum(item.qty * item.price for item in items), 2)
    return Receipt(shop.name, total, shop.currency, note)


@tool(read_only=True)
def convert(amount: float, rate: Annotated[float, Param(gt=0)]) -> float:
    """Convert an amount of money with an exchange rate (runs on a worker thread).

    Args:
        amount: The amount.
        rate: Units of the target currency per unit of the source.
    """
    return round(amount * rate, 2)


@tool(inline=True)
def pick(option: Literal["a", "b"]) -> str:
    """Pick one of two options.

    Args:
        option: Which one.
    """
    return f"picked {option}"


def demo_toolkit() -> Toolkit:
    """The demo's toolkit."""
    toolkit = Toolkit()
    for item in (get_weather, place_order, convert, pick):
        toolkit.register(item)
    return toolkit


DEMO_CONTEXT: Final = RuntimeContext.of(Shop("Corner Shop", "EUR"), user_id="demo-user")

DEMO_CALLS: Final = (
    ("valid, sync inline", ToolUseBlock("call_1", "get_weather", '{"city": "Paris", "days": 3}')),
    (
        "valid, async, injected context",
        ToolUseBlock(
            "call_2",
            "place_order",
            '{"items": [{"sku": "A1", "qty": 2, "price": 9.5}, {"sku": "B2", "qty": 1,'
            ' "price": 20}], "note": "leave at the door"}',
        ),
    ),
    (
        "valid, sync on a worker thread",
        ToolUseBlock("call_3", "convert", '{"amount": 10, "rate": 1.1}'),
    ),
    (
        "invalid arguments",
        ToolUseBlock(
            "call_4", "place_order", '{"items": [{"sku": "A1", "qty": "three", "price": 9.5}]}'
        ),
    ),
    (
        "value outside the enum",
        ToolUseBlock("call_5", "get_weather", '{"city": "Oslo", "unit": "k"}'),
    ),
    ("malformed JSON", ToolUseBlock("call_6", "pick", '{"option": "a"')),
    ("unknown tool", ToolUseBlock("call_7", "get_wether", '{"city": "Rome"}')),
)


__all__ = ["DEMO_CALLS", "DEMO_CONTEXT", "Receipt", "demo_toolkit"]
