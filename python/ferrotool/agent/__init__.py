"""A small agent loop: a model, a view's tools, and the turns between them.

`run_agent` runs model -> tool calls -> results -> model until the model answers without calling
a tool, yielding the execution engine's events as they happen, and stops at a suspension
(approval, client tools) with the `PausedRun` that `resume_agent` continues from. `ChatModel` is
the one method a model needs; `OpenAIChatModel`, `OpenAIResponsesModel`, `AnthropicModel` and
`GeminiModel` adapt the SDK clients and `ScriptedModel` plays a script for tests.
"""

from ferrotool.agent.loop import (
    AgentEvent,
    AgentRun,
    Instructions,
    ModelResponded,
    RunFinished,
    RunOutcome,
    RunSuspended,
    TurnLimitReached,
    TurnSteps,
    resume_agent,
    run_agent,
)
from ferrotool.agent.messages import (
    ArgumentsDelta,
    ChatModel,
    DeltaSink,
    Message,
    ModelDelta,
    ModelReply,
    ModelRequest,
    PausedRun,
    TextDelta,
    UserMessage,
)
from ferrotool.agent.models import (
    AnthropicModel,
    GeminiModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    Scripted,
    ScriptedModel,
    results_in,
)

__all__ = [
    "AgentEvent",
    "AgentRun",
    "AnthropicModel",
    "ArgumentsDelta",
    "ChatModel",
    "DeltaSink",
    "GeminiModel",
    "Instructions",
    "Message",
    "ModelDelta",
    "ModelReply",
    "ModelRequest",
    "ModelResponded",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "PausedRun",
    "RunFinished",
    "RunOutcome",
    "RunSuspended",
    "Scripted",
    "ScriptedModel",
    "TextDelta",
    "TurnLimitReached",
    "TurnSteps",
    "UserMessage",
    "results_in",
    "resume_agent",
    "run_agent",
]
