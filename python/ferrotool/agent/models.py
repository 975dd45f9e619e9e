"""`ChatModel` adapters: the OpenAI and Anthropic SDK clients, and a scripted model for tests.

Each adapter writes the neutral transcript in its provider's shape with the provider adapters
(`ferrotool.providers.openai_chat`, `ferrotool.providers.anthropic`), sends the view's tools
from their cache, and reads the reply's text and tool calls back; with ``stream=True`` it
reports the text and each call's arguments as they arrive (`TextDelta`, `ArgumentsDelta`).
The SDKs are imported only by type checkers: install the one you use.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, cast, final

from ferrotool._definitions.wire import field
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.json import JsonValue
from ferrotool.agent.messages import (
    ArgumentsDelta,
    DeltaSink,
    ModelReply,
    ModelRequest,
    TextDelta,
    UserMessage,
    transcript_groups,
)
from ferrotool.errors import AgentError
from ferrotool.providers import anthropic, openai_chat
from ferrotool.providers.streaming import ToolCallStream

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import MessageParam
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam


def _report(calls: ToolCallStream, event: object, on_delta: DeltaSink) -> None:
    for call in calls.feed(event):
        on_delta(ArgumentsDelta(call.id, call.name, call.partial()))


@final
class OpenAIChatModel:
    """A `ChatModel` over an ``openai.AsyncOpenAI`` client's Chat Completions.

    Args:
        client: The SDK's async client (any OpenAI-compatible server).
        model: The model's name.
        strict: Ask for strict tool schemas.
        stream: Stream the reply, reporting text and arguments as they come.
        settings: More request body fields (``temperature``, ``max_tokens``...), sent as they
            are.
    """

    __slots__ = ("client", "model", "settings", "stream", "strict")

    def __init__(
        self,
        client: AsyncOpenAI,
        model: str,
        *,
        strict: bool = False,
        stream: bool = False,
        settings: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.strict = strict
        self.stream = stream
        self.settings = dict(settings or {})

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
                if on_delta is None:
                    calls_stream.feed(chunk)
                else:
                    _report(calls_stream, chunk, on_delta)
        return ModelReply("".join(texts), calls_stream.blocks())


@final
class AnthropicModel:
    """A `ChatModel` over an ``anthropic.AsyncAnthropic`` client's Messages API.

    Args:
        client: The SDK's async client.
        model: The model's name.
        max_tokens: The reply's token limit (the API requires one).
        strict: Ask for strict tool use.
        stream: Stream the reply, reporting text and arguments as they come.
        settings: More request body fields, sent as they are.
    """

    __slots__ = ("client", "max_tokens", "model", "settings", "stream", "strict")

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
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.strict = strict
        self.stream = stream
        self.settings = dict(settings or {})

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

        create = self.client.messages.create
        tools = anthropic.tools(request.tools, strict=self.strict) or omit
        if not self.stream:
            message = await create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=request.system or omit,
                messages=self.messages(request),
                tools=tools,
                extra_body=self.settings or None,
            )
            text = "".join(block.text for block in message.content if block.type == "text")
            return ModelReply(text, anthropic.tool_calls(message), native=message)
        stream = await create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=request.system or omit,
            messages=self.messages(request),
            tools=tools,
            stream=True,
            extra_body=self.settings or None,
        )
        calls_stream, texts = ToolCallStream(anthropic.deltas), []
        async with stream:
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    texts.append(event.delta.text)
                    if on_delta is not None:
                        on_delta(TextDelta(event.delta.text))
                if on_delta is None:
                    calls_stream.feed(event)
                else:
                    _report(calls_stream, event, on_delta)
        return ModelReply("".join(texts), calls_stream.blocks())


Scripted = ModelReply | Callable[[ModelRequest], ModelReply]
"""One turn of a `ScriptedModel`: a reply, or a function of the request that makes one."""


@final
class ScriptedModel:
    """A `ChatModel` that answers from a script, for tests, demos and benchmarks.

    Args:
        replies: One entry per turn, in order.

    Attributes:
        requests: Every request received, in order.
    """

    __slots__ = ("_script", "requests")

    def __init__(self, replies: Iterable[Scripted]) -> None:
        self._script: deque[Scripted] = deque(replies)
        self.requests: list[ModelRequest] = []

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """The script's next reply.

        Raises:
            AgentError: The script has no reply left.
        """
        self.requests.append(request)
        if not self._script:
            raise AgentError(f"the script has no reply for turn {len(self.requests)}")
        entry = self._script.popleft()
        return entry if isinstance(entry, ModelReply) else entry(request)

    @property
    def remaining(self) -> int:
        """How many turns the script still holds."""
        return len(self._script)


def results_in(request: ModelRequest) -> tuple[ToolResultBlock, ...]:
    """The results of the last turn's calls in a request (what a scripted reply reacts to).

    They are the results after the model's last reply (the person's text may follow them).
    """
    found: list[ToolResultBlock] = []
    for message in reversed(request.messages):
        if isinstance(message, ModelReply):
            break
        if isinstance(message, ToolResultBlock):
            found.append(message)
    return tuple(reversed(found))


__all__ = ["AnthropicModel", "OpenAIChatModel", "Scripted", "ScriptedModel", "results_in"]
