"""OpenAI Chat Completions: tool calls in, tool messages out.

A backend puts ferrotool between its client and its transcript in two lines::

    batch = await view.call_tools(openai_chat.tool_calls(completion), context)
    messages += [openai_chat.assistant_message(completion), *openai_chat.result_messages(batch)]

`tool_calls` reads the SDK's ``ChatCompletion`` or ``ChatCompletionMessage`` and the same as
wire dicts (the first choice's message); `result_messages` writes one ``tool`` message per
result, in order; `tools` is the request's ``tools=`` list.

How results map (Chat Completions has no error flag and no images in tool messages):

- text and JSON blocks: the message's text, JSON blocks as JSON text, joined by newlines;
- images: one ``user`` message after all the tool messages, naming each call, with its images
  as ``image_url`` parts (a data URL for base64 data);
- every state is its text: ``ERROR``, ``DENIED`` and ``INTERRUPTED`` texts say so
  (``Error: ...``, ``Permission denied by user``, ``The tool call was interrupted...``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, TypeAlias

from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool.errors import ProviderShapeError
from ferrotool.providers._results import (
    field,
    image_url,
    items,
    result_id,
    results_of,
    split,
)
from ferrotool.providers.streaming import EVERY_CALL, CallDelta

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartParam,
        ChatCompletionMessageParam,
        ChatCompletionMessageToolCallParam,
        ChatCompletionToolMessageParam,
        ChatCompletionToolParam,
    )

    from ferrotool._execution.batch import ToolBatch
    from ferrotool._registry.listing import ToolLists
else:  # the names exist at run time too, as plain dicts (see `ferrotool.providers.shapes`)
    ChatCompletionAssistantMessageParam: TypeAlias = dict
    ChatCompletionContentPartParam: TypeAlias = dict
    ChatCompletionMessageParam: TypeAlias = dict
    ChatCompletionMessageToolCallParam: TypeAlias = dict
    ChatCompletionToolMessageParam: TypeAlias = dict
    ChatCompletionToolParam: TypeAlias = dict

_block: Final = tuple.__new__
"""Builds a `ToolUseBlock` without its Python ``__new__`` frame (this runs per call)."""
_WHAT: Final = "an OpenAI chat completion"


def _message(source: object) -> object:
    """The message of a completion (its first choice), or the message itself."""
    choices = field(source, "choices")
    if choices is None:
        return source
    if not isinstance(choices, (list, tuple)) or not choices:
        raise ProviderShapeError(f"{_WHAT} has no choices: {source!r:.200}")
    return field(choices[0], "message")


def tool_calls(completion: object) -> tuple[ToolUseBlock, ...]:
    """The tool calls of a chat completion, in order.

    Args:
        completion: A ``ChatCompletion`` or ``ChatCompletionMessage`` of the SDK, or either
            as a wire dict (``{"choices": [{"message": ...}]}`` or ``{"role": "assistant",
            "tool_calls": [...]}``). A completion's first choice is read.

    Returns:
        One `ToolUseBlock` per function call, with the arguments as the model wrote them (``()``
        when the model called no tool).

    Raises:
        ProviderShapeError: The value is not a chat completion, or a call is not a function
            call (OpenAI's free-form ``custom`` tools are not ferrotool tools).
    """
    return tuple([_call(call) for call in items(_message(completion), "tool_calls", _WHAT)])


def _call(call: object) -> ToolUseBlock:
    """One tool call (read with direct lookups: this runs per call)."""
    if isinstance(call, dict):
        call_id, function = call.get("id"), call.get("function")
        name = arguments = None
        if isinstance(function, dict):
            name, arguments = function.get("name"), function.get("arguments")
    else:
        call_id, function = getattr(call, "id", None), getattr(call, "function", None)
        name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
    if function is None:
        raise ProviderShapeError(f"{_WHAT}: only function tool calls can be run, got {call!r:.200}")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise ProviderShapeError(f"{_WHAT}: a tool call needs a string id and name: {call!r:.200}")
    return _block(ToolUseBlock, (call_id, name, arguments if isinstance(arguments, str) else "{}"))


def _call_param(call: ToolUseBlock) -> ChatCompletionMessageToolCallParam:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def assistant_message(completion: object) -> ChatCompletionAssistantMessageParam:
    """The model's message, as the transcript's ``assistant`` message param.

    Args:
        completion: What `tool_calls` reads.
    """
    message = _message(completion)
    content = field(message, "content")
    return assistant(content if isinstance(content, str) else None, tool_calls(message))


def assistant(
    text: str | None, calls: Iterable[ToolUseBlock]
) -> ChatCompletionAssistantMessageParam:
    """An ``assistant`` message param of text and tool calls."""
    param: ChatCompletionAssistantMessageParam = {"role": "assistant", "content": text}
    calls_params = [_call_param(call) for call in calls]
    if calls_params:
        param["tool_calls"] = calls_params
    return param


def result_messages(
    results: ToolBatch | Iterable[ToolResultBlock],
) -> list[ChatCompletionMessageParam]:
    """The ``tool`` messages answering the calls, in order (see the module for the mapping).

    Args:
        results: A `ToolBatch` or its results, each stamped with its call's id.

    Returns:
        One ``tool`` message per result, then one ``user`` message with their images if any
        result has images.

    Raises:
        ProviderShapeError: A result has no call id.
    """
    messages: list[ChatCompletionMessageParam] = []
    images: list[ChatCompletionContentPartParam] = []
    for result in results_of(results):
        call_id = result_id(result)
        text, result_images = split(result)
        message: ChatCompletionToolMessageParam = {
            "role": "tool",
            "tool_call_id": call_id,
            "content": text,
        }
        messages.append(message)
        if result_images:
            images.append({"type": "text", "text": f"Images returned by tool call {call_id}:"})
            images += [
                {"type": "image_url", "image_url": {"url": image_url(image)}}
                for image in result_images
            ]
    if images:
        messages.append({"role": "user", "content": images})
    return messages


def tools(source: ToolLists, *, strict: bool = False) -> list[ChatCompletionToolParam]:
    """The ``tools=`` list of a request: ``source.schemas("openai_chat", strict=strict)``.

    Args:
        source: A `ToolView`, `Registry` or `Toolkit`.
        strict: Ask for strict schemas (each tool that can be made strict faithfully).
    """
    return source.schemas("openai_chat", strict=strict)


def deltas(chunk: object) -> tuple[CallDelta, ...]:
    """The tool-call pieces of a streamed ``ChatCompletionChunk`` (SDK object or wire dict).

    Calls are numbered by their ``index``; a chunk whose first choice ends with ``tool_calls``
    (or ``stop``) completes every call so far.
    """
    choices = field(chunk, "choices")
    if not isinstance(choices, (list, tuple)) or not choices:
        return ()
    choice = choices[0]
    pieces: list[CallDelta] = []
    for call in items(field(choice, "delta") or {}, "tool_calls", "a chat completion chunk"):
        index = field(call, "index")
        function = field(call, "function")
        call_id, name, arguments = field(call, "id"), field(function, "name"), None
        if function is not None:
            arguments = field(function, "arguments")
        pieces.append(
            CallDelta(
                index if isinstance(index, int) else 0,
                call_id if isinstance(call_id, str) else None,
                name if isinstance(name, str) else None,
                arguments if isinstance(arguments, str) else "",
            )
        )
    if field(choice, "finish_reason") is not None:
        pieces.append(CallDelta(EVERY_CALL, done=True))
    return tuple(pieces)


__all__ = [
    "assistant",
    "assistant_message",
    "deltas",
    "result_messages",
    "tool_calls",
    "tools",
]
