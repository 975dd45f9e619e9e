"""`ScriptedModel`: a `ChatModel` that plays a script, for tests, demos and benchmarks."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import final

from ferrotool._values.calls import ToolResultBlock
from ferrotool.agent.messages import DeltaSink, ModelReply, ModelRequest
from ferrotool.errors import AgentError

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

    _script: deque[Scripted]
    requests: list[ModelRequest]

    def __init__(self, replies: Iterable[Scripted]) -> None:
        self._script = deque(replies)
        self.requests = []

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
