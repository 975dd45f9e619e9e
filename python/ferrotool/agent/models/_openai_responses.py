"""`OpenAIResponsesModel`: a `ChatModel` over the OpenAI Responses API, statelessly."""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from ferrotool._definitions.wire import field
from ferrotool.agent.messages import (
    DeltaSink,
    ModelReply,
    ModelRequest,
    TextDelta,
    UserMessage,
    transcript_groups,
)
from ferrotool.agent.models._streams import SdkModel, report_calls
from ferrotool.errors import AgentError
from ferrotool.providers import openai_responses
from ferrotool.providers.streaming import ToolCallStream

if TYPE_CHECKING:
    from openai import AsyncOpenAI  # noqa: F401  (the base class's type argument)
    from openai.types.responses import Response, ResponseInputItemParam, ResponseOutputItem


@final
class OpenAIResponsesModel(SdkModel["AsyncOpenAI"]):
    """A `ChatModel` over an ``openai.AsyncOpenAI`` client's Responses API.

    Each request carries the whole conversation in its ``input`` (no ``previous_response_id``):
    a reply that came from the Responses API goes back as its output items, reasoning items
    included, before the calls' ``function_call_output`` items. With ``store=False``, ask for
    ``include=["reasoning.encrypted_content"]`` in ``settings`` so reasoning goes back whole.

    Args:
        client: The SDK's async client.
        model: The model's name.
        strict: Ask for strict tool schemas.
        stream: Stream the reply, reporting text and arguments as they come.
        settings: More request body fields (``reasoning``, ``store``, ``include``...), sent as
            they are.
    """

    __slots__ = ()

    def items(self, request: ModelRequest) -> list[ResponseInputItemParam]:
        """The request's transcript as Responses ``input`` items.

        The system prompt is not among them: it goes as ``instructions``.
        """
        out: list[ResponseInputItemParam] = []
        for item in transcript_groups(request.messages):
            if isinstance(item, tuple):
                out += openai_responses.result_messages(item)
            elif isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            elif field(item.native, "object") == "response":  # the SDK's own response
                out += openai_responses.output_items(item.native)
            else:
                out += openai_responses.assistant(item.text, item.calls)
        return out

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """Ask the model for one turn (see `ChatModel`).

        Raises:
            AgentError: The streamed response failed, or ended before it was complete.
        """
        from openai import omit  # the client's own package: installed

        create = self.client.responses.create
        tools = openai_responses.tools(request.tools, strict=self.strict) or omit
        if not self.stream:
            response = await create(
                model=self.model,
                instructions=request.system or omit,
                input=self.items(request),
                tools=tools,
                extra_body=self.settings or None,
            )
            return _reply(response)
        stream = await create(
            model=self.model,
            instructions=request.system or omit,
            input=self.items(request),
            tools=tools,
            stream=True,
            extra_body=self.settings or None,
        )
        calls = ToolCallStream(openai_responses.deltas)
        done: dict[int, ResponseOutputItem] = {}
        final: Response | None = None
        failed: Response | None = None
        async with stream:  # closed whatever happens, read to its end or not
            async for event in stream:
                if event.type == "response.output_text.delta" and on_delta is not None:
                    on_delta(TextDelta(event.delta))
                elif event.type == "response.output_item.done":
                    done[event.output_index] = event.item
                elif event.type == "response.completed" or event.type == "response.incomplete":
                    final = event.response
                elif event.type == "response.failed":
                    failed = event.response
                if on_delta is not None:
                    report_calls(calls, event, on_delta)
        if failed is not None:
            raise AgentError(f"the response failed: {failed.error}")
        if final is None:
            raise AgentError("the response stream ended before the response was complete")
        if not final.output and done:  # a server that sends the items only one by one
            final = final.model_copy(update={"output": [done[i] for i in sorted(done)]})
        return _reply(final)


def _reply(response: Response) -> ModelReply:
    """A whole response as a reply: its text, its calls, and itself to send back."""
    return ModelReply(response.output_text, openai_responses.tool_calls(response), native=response)
