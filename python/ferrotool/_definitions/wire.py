"""What every adapter of a model API shares: SDK objects and wire dicts read alike, results out.

A provider's response reaches an adapter either as the SDK's own object (a pydantic model with
attributes) or as a plain dict of the wire format; `field` reads both. A `ToolResultBlock` goes
out with its JSON blocks as JSON text (`json_text`), its images as URLs (`image_url`), and the
provider's error flag set for the states in `ERROR_STATES`. The provider adapters
(`ferrotool.providers`), the model classes (`ferrotool.agent`) and the framework bridges
(`ferrotool.interop`) all write results this way.
"""

from __future__ import annotations

from typing import Final

import orjson

from ferrotool._values.calls import ToolResultState
from ferrotool._values.content import ImageBlock

ERROR_STATES: Final = frozenset(
    {ToolResultState.ERROR, ToolResultState.DENIED, ToolResultState.INTERRUPTED}
)
"""The states a provider's error flag (``is_error``, Gemini's ``error`` key) is set for."""


def field(source: object, name: str) -> object:
    """``source[name]`` of a wire dict, or ``source.name`` of an SDK object; ``None`` if absent.

    A wire value is a ``dict`` (what JSON parsers build); the check is a plain ``isinstance``,
    not the ``Mapping`` ABC's, which costs several times more on this per-call path.
    """
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)


def json_text(value: object) -> str:
    """A JSON block's value as the text the model reads."""
    return orjson.dumps(value).decode()


def image_url(image: ImageBlock) -> str:
    """An image's URL, or its data as a ``data:`` URL (what OpenAI's image inputs take)."""
    if image.url is not None:
        return image.url
    return f"data:{image.media_type};base64,{image.data}"


__all__ = ["ERROR_STATES", "field", "image_url", "json_text"]
