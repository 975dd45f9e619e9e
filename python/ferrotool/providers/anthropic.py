"""Anthropic Messages: ``tool_use`` blocks in, ``tool_result`` blocks out.

::

    batch = await view.call_tools(anthropic.tool_calls(message), context)
    messages += [{"role": "assistant", "content": message.content}, anthropic.user_turn(batch)]

`tool_calls` reads a ``Message`` of the SDK, its ``content`` list, or the same as wire dicts;
the parsed ``input`` becomes the call's JSON text. `result_messages` writes one ``tool_result``
content block per result, in order (Anthropic wants them all in the one ``user`` message that
follows the model's turn: `user_turn` builds it); `tools` is the request's ``tools=`` list.

How results map:

- text and JSON blocks: ``content`` is the text, JSON blocks as JSON text, joined by newlines
  (left out when empty);
- images: ``content`` is a ``text`` block, then one ``image`` block per image (a ``base64`` or
  ``url`` source);
- ``ERROR``, ``DENIED`` and ``INTERRUPTED`` set ``is_error``, the text saying why;
  ``SUCCESS`` and ``RUNNING`` do not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, TypeAlias

import orjson

from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import ImageBlock
from ferrotool.errors import ProviderShapeError
from ferrotool.providers._results import (
    ERROR_STATES,
    field,
    items,
    result_id,
    results_of,
    split,
)
from ferrotool.providers.streaming import CallDelta

if TYPE_CHECKING:
    from anthropic.types import (
        ImageBlockParam,
        MessageParam,
        TextBlockParam,
        ToolParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
    )

    from ferrotool._execution.batch import ToolBatch
    from ferrotool._registry.listing import ToolLists
else:
    ImageBlockParam: TypeAlias = dict
    MessageParam: TypeAlias = dict
    TextBlockParam: TypeAlias = dict
    ToolParam: TypeAlias = dict
    ToolResultBlockParam: TypeAlias = dict
    ToolUseBlockParam: TypeAlias = dict

_block: Final = tuple.__new__
"""Builds a `ToolUseBlock` without its Python ``__new__`` frame (this runs per call)."""
_WHAT: Final = "an Anthropic message"


def _content(message: object) -> Iterable[object]:
    if isinstance(message, (list, tuple)):
        return message
    return items(message, "content", _WHAT)


def tool_calls(message: object) -> tuple[ToolUseBlock, ...]:
    """The ``tool_use`` blocks of a message, in order.

    Args:
        message: A ``Message`` of the SDK, its ``content`` list, or either as wire dicts.
            Other blocks (text, thinking, server tools the API ran itself) are skipped.

    Returns:
        One `ToolUseBlock` per ``tool_use`` block, its ``input`` as JSON text.

    Raises:
        ProviderShapeError: The value is not a message, or a ``tool_use`` block lacks its id,
            name or object ``input``.
    """
    return tuple([_call(block) for block in _content(message) if _type(block) == "tool_use"])


def _type(block: object) -> object:
    return block.get("type") if isinstance(block, dict) else getattr(block, "type", None)


def _call(block: object) -> ToolUseBlock:
    """One ``tool_use`` block (read with direct lookups: this runs per call)."""
    if isinstance(block, dict):
        call_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
    else:
        call_id, name = getattr(block, "id", None), getattr(block, "name", None)
        tool_input = getattr(block, "input", None)
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise ProviderShapeError(
            f"{_WHAT}: a tool_use block needs a string id and name: {block!r:.200}"
        )
    try:
        arguments = "{}" if tool_input is None else orjson.dumps(tool_input).decode()
    except TypeError:
        raise ProviderShapeError(f"{_WHAT}: a tool_use input is not JSON: {block!r:.200}") from None
    return _block(ToolUseBlock, (call_id, name, arguments))


def _image(image: ImageBlock) -> ImageBlockParam:
    if image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": image.media_type,  # type: ignore[typeddict-item]  # any MIME type
            "data": image.data or "",
        },
    }


def result_messages(
    results: ToolBatch | Iterable[ToolResultBlock],
) -> list[ToolResultBlockParam]:
    """The ``tool_result`` blocks answering the calls, in order (see the module).

    Args:
        results: A `ToolBatch` or its results, each stamped with its call's id.

    Raises:
        ProviderShapeError: A result has no call id.
    """
    blocks: list[ToolResultBlockParam] = []
    for result in results_of(results):
        text, images = split(result)
        block: ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": result_id(result),
            "is_error": result.state in ERROR_STATES,
        }
        if images:
            parts: list[TextBlockParam | ImageBlockParam] = []
            if text:
                parts.append({"type": "text", "text": text})
            parts += [_image(image) for image in images]
            block["content"] = parts
        elif text:
            block["content"] = text
        blocks.append(block)
    return blocks


def user_turn(results: ToolBatch | Iterable[ToolResultBlock]) -> MessageParam:
    """The ``user`` message that carries every result of the model's turn."""
    return {"role": "user", "content": result_messages(results)}


def assistant(text: str, calls: Iterable[ToolUseBlock]) -> MessageParam:
    """An ``assistant`` message param of text and ``tool_use`` blocks.

    A call's arguments go back as the object the model wrote (``{}`` when they were not an
    object: Anthropic's ``input`` is always one).
    """
    content: list[TextBlockParam | ToolUseBlockParam] = []
    if text:
        content.append({"type": "text", "text": text})
    content += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.input)}
        for call in calls
    ]
    return {"role": "assistant", "content": content}


def tools(source: ToolLists, *, strict: bool = False) -> list[ToolParam]:
    """The ``tools=`` list of a request: ``source.schemas("anthropic", strict=strict)``.

    Args:
        source: A `ToolView`, `Registry` or `Toolkit`.
        strict: Ask for strict tool use (each tool that can be made strict faithfully).
    """
    return source.schemas("anthropic", strict=strict)


def deltas(event: object) -> tuple[CallDelta, ...]:
    """The tool-call pieces of one streamed Messages event (SDK object or wire dict).

    ``content_block_start`` with a ``tool_use`` block starts a call (numbered by the block's
    ``index``), ``content_block_delta`` with an ``input_json_delta`` adds its
    ``partial_json``, and ``content_block_stop`` ends it.
    """
    kind = field(event, "type")
    index = field(event, "index")
    if not isinstance(index, int):
        return ()
    if kind == "content_block_delta":
        delta = field(event, "delta")
        if field(delta, "type") != "input_json_delta":
            return ()
        text = field(delta, "partial_json")
        return (CallDelta(index, arguments=text if isinstance(text, str) else ""),)
    if kind == "content_block_start":
        block = field(event, "content_block")
        if field(block, "type") != "tool_use":
            return ()
        call_id, name = field(block, "id"), field(block, "name")
        return (
            CallDelta(
                index,
                call_id if isinstance(call_id, str) else None,
                name if isinstance(name, str) else None,
            ),
        )
    if kind == "content_block_stop":
        return (CallDelta(index, done=True),)
    return ()


__all__ = ["assistant", "deltas", "result_messages", "tool_calls", "tools", "user_turn"]
