"""ferrotool's names beside the frameworks' in one file: a star import clobbers none of theirs.

The agent on whose behalf a tool runs is `CallingAgent`; its old name, ``Agent``, is the name
of pydantic-ai's and the Agents SDK's agent classes, so it is no longer in ``__all__``. It is
still reachable as ``ferrotool.Agent``, with a `FerrotoolDeprecationWarning`.
"""

from __future__ import annotations

import dataclasses

import agents
import orjson
import pydantic_ai
import pytest
from pydantic_ai import Agent

import ferrotool
from ferrotool import *  # noqa: F403  (what this file is about)
from ferrotool import (
    CallingAgent,
    FerrotoolDeprecationWarning,
    FerrotoolWarning,
    Toolkit,
    ToolUseBlock,
    tool,
)


@dataclasses.dataclass(frozen=True)
class Caller:
    name: str


def test_a_star_import_after_pydantic_ais_agent_keeps_it() -> None:
    assert Agent is pydantic_ai.Agent
    assert "Agent" not in ferrotool.__all__
    assert CallingAgent is ferrotool.CallingAgent


@pytest.mark.parametrize("framework", ["pydantic_ai", "agents"])
def test_a_file_importing_a_frameworks_agent_then_ferrotools_names(framework: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {framework} import Agent\nfrom ferrotool import *\n", namespace)
    assert (
        namespace["Agent"] is {"pydantic_ai": pydantic_ai.Agent, "agents": agents.Agent}[framework]
    )
    assert namespace["CallingAgent"] is CallingAgent


async def test_a_tool_receives_its_calling_agent_by_the_new_name() -> None:
    @tool
    def whoami(agent: CallingAgent) -> str:
        """Who called."""
        return agent.name

    toolkit = Toolkit()
    toolkit.register(whoami)
    call = ToolUseBlock("c1", "whoami", "{}")
    assert (await toolkit.call_tool(call, agent=Caller("planner"))).content == "planner"
    assert isinstance(Caller("x"), CallingAgent)
    assert orjson.loads(whoami.spec.parameters_json)["properties"] == {}


async def test_the_old_name_still_works_with_a_deprecation_warning() -> None:
    assert issubclass(FerrotoolDeprecationWarning, DeprecationWarning)
    assert issubclass(FerrotoolDeprecationWarning, FerrotoolWarning)
    with pytest.warns(FerrotoolDeprecationWarning, match=r"ferrotool\.Agent .*CallingAgent"):
        old = ferrotool.Agent
    assert old is CallingAgent
    with pytest.warns(FerrotoolDeprecationWarning, match="CallingAgent"):
        exec("from ferrotool import Agent", {})

    with pytest.warns(FerrotoolDeprecationWarning):

        @tool
        def whoami(agent: ferrotool.Agent) -> str:  # type: ignore[valid-type]
            """Who called."""
            return str(agent.name)  # type: ignore[attr-defined]

    toolkit = Toolkit()
    toolkit.register(whoami)
    call = ToolUseBlock("c1", "whoami", "{}")
    assert (await toolkit.call_tool(call, agent=Caller("old"))).content == "old"
