"""`AnthropicModel`: a `ChatModel` over the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast, final

from ferrotool._definitions.wire import field
from ferrotool._values.json import JsonValue
from ferrotool.agent.messages import (
    DeltaSink,
    ModelReply,
    ModelRequest,
    TextDelta,
    UserMessage,
    transcript_groups,
)
from ferrotool.agent.models._streams import SdkModel, report_calls
from ferrotool.providers import anthropic
from ferrotool.providers.streaming import ToolCallStream

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import Message, MessageParam


@final
class AnthropicModel(SdkModel["AsyncAnthropic"]):
    """A `ChatModel` over an ``anthropic.AsyncAnthropic`` client's Messages API.

    Each reply is kept whole (streamed or not) and goes back in the next request as it was:
    ``thinking`` blocks with their signatures and ``redacted_thinking`` blocks included, as the
    API requires of a thinking model that called a tool.

    Args:
        client: The SDK's async client.
        model: The model's name.
        max_tokens: The reply's token limit (the API requires one).
        strict: Ask for strict tool use.
        stream: Stream the reply, reporting text and arguments as they come.
        settings: More request body fields (``thinking``, ``temperature``...), sent as they
            are.
    """

    __slots__ = ("max_tokens",)

    max_tokens: int

    def __init__(
        self,
        client: AsyncAnthropic,
        model: str,
        *,
        max_tokens: int = 1024,
        strict: bool = False,
        stream: bool = False,
        settings: Mapping[str, JsonValue] | None = None,
    ) -> None:
        super().__init__(client, model, strict=strict, stream=stream, settings=settings)
        self.max_tokens = max_tokens

    def messages(self, request: ModelRequest) -> list[MessageParam]:
        """The request's transcript as Messages API messages.

        A turn's results go in one ``user`` message, with the person's text that follows them
        (Anthropic wants the roles to alternate); a reply that came from Anthropic goes back
        as it was (thinking blocks included).
        """
        out: list[MessageParam] = []
        for item in transcript_groups(request.messages):
            if isinstance(item, tuple):
                out.append(anthropic.user_turn(item))
            elif isinstance(item, UserMessage):
                last = out[-1] if out else None
                if (
                    last is not None
                    and last["role"] == "user"
                    and isinstance(last["content"], list)
                ):
                    last["content"].append({"type": "text", "text": item.text})
                else:
                    out.append({"role": "user", "content": item.text})
            elif field(item.native, "role") == "assistant":  # the SDK's own message
                native = {"role": "assistant", "content": field(item.native, "content")}
                out.append(cast("MessageParam", native))
            else:
                out.append(anthropic.assistant(item.text, item.calls))
        return out

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """Ask the model for one turn (see `ChatModel`)."""
        from anthropic import omit  # the client's own package: installed

        tools = anthropic.tools(request.tools, strict=self.strict) or omit
        if not self.stream:
            message = await self.client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=request.system or omit,
                messages=self.messages(request),
                tools=tools,
                extra_body=self.settings or None,
            )
            return _reply(message)
        calls = ToolCallStream(anthropic.deltas)
        async with self.client.messages.stream(
            model=self.model,
            max_tokens=self.max_tokens,
            system=request.system or omit,
            messages=self.messages(request),
            tools=tools,
            extra_body=self.settings or None,
        ) as stream:  # closed whatever happens, read to its end or not
            async for event in stream:
                if on_delta is None:
                    continue
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    on_delta(TextDelta(event.delta.text))
                else:
                    report_calls(calls, event, on_delta)
            return _reply(await stream.get_final_message())


def _reply(message: Message) -> ModelReply:
    """A whole message as a reply: its text, its calls, and itself to send back."""
    text = "".join(block.text for block in message.content if block.type == "text")
    return ModelReply(text, anthropic.tool_calls(message), native=message)
