"""Content blocks: what a tool result is made of (text, image, JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, TypeAlias, final

import orjson

from ferrotool._values.json import JsonValue


class TextBlock(NamedTuple):
    """Text for the model. Immutable (a named tuple, for speed: results are built per call).

    Attributes:
        text: The text.
    """

    text: str

    def __eq__(self, other: object) -> bool:
        return type(other) is TextBlock and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((TextBlock, self.text))

    @property
    def type(self) -> Literal["text"]:
        """The block's kind in JSON: ``"text"``."""
        return "text"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ImageBlock:
    """An image, by URL or as base64 data.

    Attributes:
        media_type: The MIME type, e.g. ``"image/png"``.
        data: The image bytes, base64-encoded, or ``None`` when given by URL.
        url: Where the image is, or ``None`` when given as data.
    """

    media_type: str
    data: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("an ImageBlock needs exactly one of data and url")

    @property
    def type(self) -> Literal["image"]:
        """The block's kind in JSON: ``"image"``."""
        return "image"


@final
@dataclass(frozen=True, slots=True)
class JsonBlock:
    """A JSON value for programs rather than the model (the structured side of a result).

    Attributes:
        value: Any JSON value.
    """

    value: JsonValue

    @property
    def type(self) -> Literal["json"]:
        """The block's kind in JSON: ``"json"``."""
        return "json"

    def __hash__(self) -> int:
        return hash(orjson.dumps(self.value, option=orjson.OPT_SORT_KEYS))


ContentBlock: TypeAlias = TextBlock | ImageBlock | JsonBlock
"""Any content block."""

CONTENT_TYPES: Final = (TextBlock, ImageBlock, JsonBlock)


def content_to_json(block: ContentBlock) -> dict[str, JsonValue]:
    """The JSON form of a block: ``{"type": "text", "text": ...}`` and so on."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        out: dict[str, JsonValue] = {"type": "image", "media_type": block.media_type}
        if block.data is not None:
            out["data"] = block.data
        if block.url is not None:
            out["url"] = block.url
        return out
    return {"type": "json", "value": block.value}


def content_from_json(raw: object) -> ContentBlock:
    """Read a block from its JSON form.

    Raises:
        ValueError: ``raw`` is not a content block.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"a content block is a JSON object, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind == "text" and isinstance(raw.get("text"), str):
        return TextBlock(raw["text"])
    if kind == "image" and isinstance(raw.get("media_type"), str):
        data, url = raw.get("data"), raw.get("url")
        if (data is None or isinstance(data, str)) and (url is None or isinstance(url, str)):
            return ImageBlock(media_type=raw["media_type"], data=data, url=url)
    if kind == "json" and "value" in raw:
        return JsonBlock(raw["value"])
    raise ValueError(f"not a content block: {raw!r:.200}")


__all__ = [
    "CONTENT_TYPES",
    "ContentBlock",
    "ImageBlock",
    "JsonBlock",
    "TextBlock",
    "content_from_json",
    "content_to_json",
]
