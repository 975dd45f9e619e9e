"""`GeminiModel`: a `ChatModel` over Google Gemini (google-genai)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, cast, final

from ferrotool._definitions.wire import field
from ferrotool.agent.messages import (
    ArgumentsDelta,
    DeltaSink,
    ModelReply,
    ModelRequest,
    TextDelta,
    UserMessage,
    transcript_groups,
)
from ferrotool.agent.models._streams import SdkModel
from ferrotool.errors import AgentError, ProviderShapeError
from ferrotool.providers import gemini

if TYPE_CHECKING:
    from google.genai import Client  # noqa: F401  (the base class's type argument)
    from google.genai.types import (
        Content,
        ContentDict,
        ContentUnionDict,
        GenerateContentConfigDict,
        GenerateContentResponse,
        Part,
    )


@final
class GeminiModel(SdkModel["Client"]):
    """A `ChatModel` over a ``google.genai.Client``'s async models (``client.aio.models``).

    A reply that came from Gemini goes back as the model's ``Content`` as it was: its thought
    parts, and each part's ``thought_signature`` (which a thinking model needs back with its
    function calls). A streamed reply is gathered into one ``Content`` first: text pieces join
    into one part (a signature that comes after them stays with them), function calls come
    whole.

    Args:
        client: The SDK's client (its ``aio`` side is used).
        model: The model's name.
        strict: Warn for a tool whose declaration differs materially from its schema.
        stream: Stream the reply, reporting text and calls as they come.
        settings: More ``GenerateContentConfig`` fields (``temperature``,
            ``thinking_config``...), given as they are.
    """

    __slots__ = ()

    def contents(self, request: ModelRequest) -> list[Content | ContentDict]:
        """The request's transcript as Gemini contents.

        A turn's results go in one ``user`` content, with the person's text that follows them;
        the system prompt goes in the config's ``system_instruction``.
        """
        out: list[Content | ContentDict] = []
        for item in transcript_groups(request.messages):
            if isinstance(item, tuple):
                out.append(gemini.user_turn(item))
            elif isinstance(item, UserMessage):
                last = out[-1] if out else None
                if (
                    isinstance(last, dict)
                    and last.get("role") == "user"
                    and isinstance(parts := last.get("parts"), list)
                ):
                    parts.append({"text": item.text})
                else:
                    out.append({"role": "user", "parts": [{"text": item.text}]})
            else:
                native = _model_content(item.native)
                out.append(native or gemini.assistant(item.text, item.calls))
        return out

    def config(self, request: ModelRequest) -> GenerateContentConfigDict:
        """The request's config: the settings, the tools and the system instruction."""
        config = cast("GenerateContentConfigDict", dict(self.settings))
        declarations = request.tools.schemas("gemini", strict=self.strict)
        if declarations:  # the wire format, as the SDK's dict config takes it
            config["tools"] = [{"function_declarations": declarations}]
        if request.system:
            config["system_instruction"] = request.system
        return config

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """Ask the model for one turn (see `ChatModel`).

        Raises:
            AgentError: The stream ended without a response.
        """
        models = self.client.aio.models
        contents = cast("list[ContentUnionDict]", self.contents(request))
        config = self.config(request)
        if not self.stream:
            response = await models.generate_content(
                model=self.model, contents=contents, config=config
            )
            return _reply(response)
        stream = await models.generate_content_stream(
            model=self.model, contents=contents, config=config
        )
        parts: list[Part] = []
        last: GenerateContentResponse | None = None
        reported = 0
        try:
            async for chunk in stream:
                last = chunk
                for part in _parts(chunk):
                    if on_delta is not None and part.text and not part.thought:
                        on_delta(TextDelta(part.text))
                    _gather(parts, part)
                if on_delta is not None:
                    calls = gemini.tool_calls(parts)
                    for call in calls[reported:]:  # a call comes whole, in one chunk
                        on_delta(ArgumentsDelta(call.id, call.name, call.input))
                    reported = len(calls)
        finally:
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()
        if last is None:
            raise AgentError("the response stream ended without a response")
        return _reply(_whole(last, parts))


def _model_content(native: object) -> Content | ContentDict | None:
    """The model's content of a Gemini response; ``None`` for anything else."""
    if field(native, "candidates") is None:
        return None
    try:
        return gemini.model_content(native)
    except ProviderShapeError:
        return None


def _parts(response: GenerateContentResponse) -> list[Part]:
    content = response.candidates[0].content if response.candidates else None
    return list(content.parts or []) if content is not None else []


def _gather(parts: list[Part], part: Part) -> None:
    """Add a streamed part: a text piece joins the text before it (a thought to a thought)."""
    last = parts[-1] if parts else None
    if (
        last is not None
        and last.text is not None
        and part.text is not None
        and bool(last.thought) == bool(part.thought)
        and last.thought_signature is None
    ):
        parts[-1] = last.model_copy(
            update={"text": last.text + part.text, "thought_signature": part.thought_signature}
        )
    else:
        parts.append(part)


def _whole(last: GenerateContentResponse, parts: list[Part]) -> GenerateContentResponse:
    """The streamed response as one: the last chunk, with every part gathered in its content."""
    from google.genai import types  # the client's own package: installed

    content = types.Content(role="model", parts=parts)
    if last.candidates:
        candidate = last.candidates[0].model_copy(update={"content": content})
    else:
        candidate = types.Candidate(content=content)
    return last.model_copy(update={"candidates": [candidate]})


def _reply(response: GenerateContentResponse) -> ModelReply:
    """A whole response as a reply: its text, its calls, and itself to send back."""
    parts = _parts(response)
    text = "".join(part.text for part in parts if part.text and not part.thought)
    return ModelReply(text, gemini.tool_calls(parts), native=response)
