"""OpenAI Responses: ``function_call`` items in, ``function_call_output`` items out.

::

    batch = await view.call_tools(openai_responses.tool_calls(response), context)
    items += [*openai_responses.output_items(response), *openai_responses.result_messages(batch)]

`tool_calls` reads a ``Response`` of the SDK, its ``output`` list, or the same as wire dicts; a
call's id is its ``call_id`` (what the output item answers). `result_messages` writes one
``function_call_output`` item per result, in order; `tools` is the request's ``tools=`` list.
`output_items` gives the response's output back as input items, for a conversation that goes
on without ``previous_response_id`` (reasoning items, with their ``encrypted_content``, go back
with the calls they led to); `assistant` writes text and calls the model gave elsewhere.

How results map (the Responses API has no error flag on an output, but takes images):

- text and JSON blocks: ``output`` is the text, JSON blocks as JSON text, joined by newlines;
- images: ``output`` is an ``input_text`` part, then one ``input_image`` per image (a data URL
  for base64 data);
- every state is its text: ``ERROR``, ``DENIED`` and ``INTERRUPTED`` texts say so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, TypeAlias, cast

from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool.errors import ProviderShapeError
from ferrotool.providers._results import field, image_url, result_id, results_of, split
from ferrotool.providers.streaming import CallDelta

if TYPE_CHECKING:
    from openai.types.responses import (
        FunctionToolParam,
        ResponseFunctionToolCallParam,
        ResponseInputImageContentParam,
        ResponseInputItemParam,
    )

    from ferrotool._execution.batch import ToolBatch
    from ferrotool._registry.listing import ToolLists
else:
    FunctionToolParam: TypeAlias = dict
    ResponseFunctionToolCallParam: TypeAlias = dict
    ResponseInputImageContentParam: TypeAlias = dict
    ResponseInputItemParam: TypeAlias = dict

_block: Final = tuple.__new__
"""Builds a `ToolUseBlock` without its Python ``__new__`` frame (this runs per call)."""
_WHAT: Final = "an OpenAI response"
_NOT_RUN: Final = frozenset({"custom_tool_call"})
"""Output items that call a tool of the client's that is not a function: refused."""


def _output(response: object) -> Iterable[object]:
    if isinstance(response, (list, tuple)):
        return response
    output = field(response, "output")
    if isinstance(output, (list, tuple)):
        return output
    if field(response, "type") is not None:  # a single output item
        return (response,)
    raise ProviderShapeError(f"{_WHAT} has no output list: {response!r:.200}")


def tool_calls(response: object) -> tuple[ToolUseBlock, ...]:
    """The function calls of a response, in output order.

    Args:
        response: A ``Response`` of the SDK, its ``output`` list, one output item, or any of
            these as wire dicts. Items other than function calls (messages, reasoning, hosted
            tools) are skipped.

    Returns:
        One `ToolUseBlock` per ``function_call`` item; its id is the item's ``call_id``.

    Raises:
        ProviderShapeError: The value is not a response, a function call lacks its
            ``call_id`` or ``name``, or an item calls a free-form ``custom`` tool.
    """
    return tuple([_call(item) for item in _output(response) if _kind(item, "function_call")])


def _kind(item: object, kind: str) -> bool:
    """Whether an output item is a function call (refusing a free-form ``custom`` call)."""
    found = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    if found in _NOT_RUN:
        raise ProviderShapeError(f"{_WHAT}: only function calls can be run, got {item!r:.200}")
    return found == kind


def _call(item: object) -> ToolUseBlock:
    """One ``function_call`` item (read with direct lookups: this runs per call)."""
    if isinstance(item, dict):
        call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    else:
        call_id, name = getattr(item, "call_id", None), getattr(item, "name", None)
        arguments = getattr(item, "arguments", None)
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise ProviderShapeError(
            f"{_WHAT}: a function call needs a string call_id and name: {item!r:.200}"
        )
    return _block(ToolUseBlock, (call_id, name, arguments if isinstance(arguments, str) else "{}"))


def result_messages(
    results: ToolBatch | Iterable[ToolResultBlock],
) -> list[ResponseInputItemParam]:
    """The ``function_call_output`` items answering the calls, in order.

    Args:
        results: A `ToolBatch` or its results, each stamped with its call's id.

    Returns:
        Items of the next request's ``input`` (typed as the SDK's input items, so the list
        joins others as it is).

    Raises:
        ProviderShapeError: A result has no call id.
    """
    outputs: list[ResponseInputItemParam] = []
    for result in results_of(results):
        call_id = result_id(result)
        text, images = split(result)
        if not images:
            outputs.append({"type": "function_call_output", "call_id": call_id, "output": text})
            continue
        image_parts: list[ResponseInputImageContentParam] = [
            {"type": "input_image", "image_url": image_url(image)} for image in images
        ]
        outputs.append(
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": [{"type": "input_text", "text": text}, *image_parts],
            }
        )
    return outputs


def output_items(response: object) -> list[ResponseInputItemParam]:
    """A response's output, in order, as items of the next request's ``input``.

    Every item goes back as the model wrote it (reasoning items with their ``encrypted_content``
    when the request asked for it with ``include=["reasoning.encrypted_content"]``, messages,
    function calls), so the next request needs no ``previous_response_id``.

    Args:
        response: What `tool_calls` reads: a ``Response`` of the SDK, its ``output`` list, one
            output item, or any of these as wire dicts.

    Raises:
        ProviderShapeError: The value is not a response, or an item is neither a dict nor an
            SDK model.
    """
    return [_input_item(item) for item in _output(response)]


def _input_item(item: object) -> ResponseInputItemParam:
    if isinstance(item, dict):
        return cast("ResponseInputItemParam", item)
    dump = getattr(item, "model_dump", None)
    if not callable(dump):
        raise ProviderShapeError(f"{_WHAT}: an output item is not an object: {item!r:.200}")
    return cast("ResponseInputItemParam", dump(mode="json", exclude_unset=True))


def assistant(text: str, calls: Iterable[ToolUseBlock]) -> list[ResponseInputItemParam]:
    """Input items for what the model said: an ``assistant`` message, then its function calls.

    For a transcript that does not hold the model's own response (see `output_items`).
    """
    items: list[ResponseInputItemParam] = []
    if text:
        items.append({"role": "assistant", "content": text})
    for call in calls:
        function_call: ResponseFunctionToolCallParam = {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        items.append(function_call)
    return items


def tools(source: ToolLists, *, strict: bool = False) -> list[FunctionToolParam]:
    """The ``tools=`` list of a request: ``source.schemas("openai_responses", strict=strict)``.

    Args:
        source: A `ToolView`, `Registry` or `Toolkit`.
        strict: Ask for strict schemas (each tool that can be made strict faithfully).
    """
    return source.schemas("openai_responses", strict=strict)


def deltas(event: object) -> tuple[CallDelta, ...]:
    """The tool-call pieces of one streamed Responses event (SDK object or wire dict).

    ``response.output_item.added`` with a function call starts a call (numbered by its
    ``output_index``), ``response.function_call_arguments.delta`` adds text to it, and
    ``response.function_call_arguments.done`` (or the item's ``response.output_item.done``)
    ends it.
    """
    kind = field(event, "type")
    index = field(event, "output_index")
    if not isinstance(index, int):
        return ()
    if kind == "response.function_call_arguments.delta":
        delta = field(event, "delta")
        return (CallDelta(index, arguments=delta if isinstance(delta, str) else ""),)
    if kind == "response.function_call_arguments.done":
        return (CallDelta(index, done=True),)
    if kind in ("response.output_item.added", "response.output_item.done"):
        item = field(event, "item")
        if field(item, "type") != "function_call":
            return ()
        call_id, name = field(item, "call_id"), field(item, "name")
        return (
            CallDelta(
                index,
                call_id if isinstance(call_id, str) else None,
                name if isinstance(name, str) else None,
                done=kind == "response.output_item.done",
            ),
        )
    return ()


__all__ = ["assistant", "deltas", "output_items", "result_messages", "tool_calls", "tools"]
