"""`ChatModel` adapters: the OpenAI, Anthropic and Gemini SDK clients, and a scripted model.

Each adapter writes the neutral transcript in its provider's shape with the provider adapters
of `ferrotool.providers`, sends the view's tools from their cache, and reads the reply's text and
tool calls back; with ``stream=True`` it reports the text and each call's arguments as they
arrive (`TextDelta`, `ArgumentsDelta`). A reply keeps the provider's own response
(`ModelReply.native`), and the next request sends back from it what the provider needs:
Anthropic's thinking blocks with their signatures, the Responses API's reasoning items, Gemini's
thought signatures.

The SDKs are imported only by type checkers: install the one you use.
"""

from ferrotool.agent.models._anthropic import AnthropicModel
from ferrotool.agent.models._gemini import GeminiModel
from ferrotool.agent.models._openai_chat import OpenAIChatModel
from ferrotool.agent.models._openai_responses import OpenAIResponsesModel
from ferrotool.agent.models._scripted import Scripted, ScriptedModel, results_in

__all__ = [
    "AnthropicModel",
    "GeminiModel",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Scripted",
    "ScriptedModel",
    "results_in",
]
