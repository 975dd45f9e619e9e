"""What the provider adapters share: reading SDK objects and wire dicts alike, and results.

A provider's response reaches an adapter either as the SDK's own object (a pydantic model with
attributes) or as a plain dict of the wire format (a proxy, a recorded transcript, a test). The
adapters read both through `field`, which costs one type check and one lookup.

A `ToolResultBlock` goes out as the provider's tool result: its text blocks joined by newlines,
its JSON blocks as JSON text, its images where the provider can carry them. Its state decides
the provider's error flag where there is one: ``ERROR``, ``DENIED`` and ``INTERRUPTED`` are
errors; ``SUCCESS`` and ``RUNNING`` are not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ferrotool._definitions.wire import ERROR_STATES, field, image_url, json_text
from ferrotool._values.calls import MODEL_ID_KEY, ToolResultBlock
from ferrotool._values.content import ImageBlock, JsonBlock, TextBlock
from ferrotool.errors import ProviderShapeError

if TYPE_CHECKING:
    from ferrotool._execution.batch import ToolBatch


def items(source: object, name: str, what: str) -> Iterable[object]:
    """A list field (``choices``, ``content``, ``parts``...); ``()`` when absent or null.

    Raises:
        ProviderShapeError: The field is there but is not a list.
    """
    value = field(source, name)
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return value
    raise ProviderShapeError(f"{what}: {name!r} is not a list: {_shown(source)}")


def _shown(source: object) -> str:
    return f"{source!r:.200}"


def results_of(results: ToolBatch | Iterable[ToolResultBlock]) -> Iterable[ToolResultBlock]:
    """The results of a batch, or the results themselves."""
    batch_results = getattr(results, "results", None)
    if isinstance(batch_results, tuple):
        return batch_results
    return results  # type: ignore[return-value]  # not a batch: an iterable of results


def result_id(result: ToolResultBlock) -> str:
    """The id of the call a result answers, as the model gave it.

    A call that waited under an id of ferrotool's (two waiting calls of a session never share
    one) answers with the model's id, which its result carries (`MODEL_ID_KEY`).

    Raises:
        ProviderShapeError: The result was never stamped with its call (``id`` is ``None``).
    """
    call_id = result.id
    if call_id is not None and "#" in call_id:  # ID_MARK: only such an id is one of ferrotool's
        model_id = result.metadata.get(MODEL_ID_KEY)
        if isinstance(model_id, str) and model_id:
            return model_id
    if call_id is None:
        raise ProviderShapeError(
            f"a result needs the id of the call it answers (use with_call): {result!r:.200}"
        )
    return call_id


def result_name(result: ToolResultBlock) -> str:
    """The tool name of a result (Gemini matches a response to its call by name).

    Raises:
        ProviderShapeError: The result has no tool name.
    """
    name = result.name
    if name is None:
        raise ProviderShapeError(
            f"a result needs the name of the tool it answers (use with_call): {result!r:.200}"
        )
    return name


def split(result: ToolResultBlock) -> tuple[str, tuple[ImageBlock, ...]]:
    """A result's text (text and JSON blocks, joined by newlines) and its images."""
    output = result.output
    if len(output) == 1 and type(output[0]) is TextBlock:  # the common case, first
        return output[0].text, ()
    texts: list[str] = []
    images: list[ImageBlock] = []
    for block in output:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, JsonBlock):
            texts.append(json_text(block.value))
        else:
            images.append(block)
    return "\n".join(texts), tuple(images)


__all__ = [
    "ERROR_STATES",
    "field",
    "image_url",
    "items",
    "json_text",
    "result_id",
    "result_name",
    "results_of",
    "split",
]
