"""`OpenAIChatModel`: a `ChatModel` over the OpenAI Chat Completions API."""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from ferrotool.agent.messages import (
    DeltaSink,
    ModelReply,
    ModelRequest,
    TextDelta,
    UserMessage,
    transcript_groups,
)
from ferrotool.agent.models._streams import SdkModel, report_calls
from ferrotool.providers import openai_chat
from ferrotool.providers.streaming import ToolCallStream

if TYPE_CHECKING:
    from openai import AsyncOpenAI  # noqa: F401  (the base class's type argument)
    from openai.types.chat import ChatCompletionMessageParam


@final
class OpenAIChatModel(SdkModel["AsyncOpenAI"]):
    """A `ChatModel` over an ``openai.AsyncOpenAI`` client's Chat Completions.

    Args:
        client: The SDK's async client (any OpenAI-compatible server).
        model: The model's name.
        strict: Ask for strict tool schemas.
        stream: Stream the reply, reporting text and arguments as they come.
        settings: More request body fields (``temperature``, ``max_tokens``...), sent as they
            are.
    """

    __slots__ = ()

    def messages(self, request: ModelRequest) -> list[ChatCompletionMessageParam]:
        """The request's transcript as Chat Completions messages."""
        out: list[ChatCompletionMessageParam] = []
        if request.system:
            out.append({"role": "system", "content": request.system})
        for item in transcript_groups(request.messages):
            if isinstance(item, tuple):
                out += openai_chat.result_messages(item)
            elif isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            else:
                out.append(openai_chat.assistant(item.text or None, item.calls))
        return out

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """Ask the model for one turn (see `ChatModel`)."""
        from openai import omit  # the client's own package: installed

        create = self.client.chat.completions.create
        tools = openai_chat.tools(request.tools, strict=self.strict) or omit  # no empty list
        if not self.stream:
            completion = await create(
                model=self.model,
                messages=self.messages(request),
                tools=tools,
                extra_body=self.settings or None,
            )
            message = completion.choices[0].message
            calls = openai_chat.tool_calls(message)
            return ModelReply(message.content or "", calls, native=completion)
        stream = await create(
            model=self.model,
            messages=self.messages(request),
            tools=tools,
            stream=True,
            extra_body=self.settings or None,
        )
        calls_stream, texts = ToolCallStream(openai_chat.deltas), []
        async with stream:  # closed whatever happens, read to its end or not
            async for chunk in stream:
                delta = chunk.choices[0].delta if chunk.choices else None
                if delta is not None and delta.content:
                    texts.append(delta.content)
                    if on_delta is not None:
                        on_delta(TextDelta(delta.content))
                report_calls(calls_stream, chunk, on_delta)
        return ModelReply("".join(texts), calls_stream.blocks())
