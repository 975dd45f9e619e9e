"""`SessionHandle.update`: the one compare-and-set every session-writing tool stores through.

A stored change returns the stored state; a session that keeps changing under the update gives
the calling tool's error result, naming what was not done and the tool to call again.
"""

from __future__ import annotations

from ferrotool import (
    InMemorySessionStore,
    RuntimeContext,
    SessionKey,
    ToolContextState,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool._registry.derived import SessionHandle
from ferrotool.builtins.todo import TodoWrite


class AlwaysLosing(InMemorySessionStore):
    """A store whose every compare-and-set loses to another writer."""

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        del key, expected_revision, state
        return None


def _activate(state: ToolContextState) -> ToolContextState:
    return state.with_groups({"g": True})


async def test_a_stored_change_returns_the_stored_state() -> None:
    store = InMemorySessionStore()
    handle = SessionHandle(store, SessionKey("ann", "s"))
    stored = await handle.update(_activate, unsaved="not switched", retry="reset_tools")
    assert isinstance(stored, ToolContextState)
    assert stored.revision == 1
    assert (await store.load(SessionKey("ann", "s"))).groups == {"g": True}


async def test_a_conflict_is_the_tools_error_result() -> None:
    handle = SessionHandle(AlwaysLosing(), SessionKey("ann", "s"), attempts=2)
    stored = await handle.update(_activate, unsaved="the groups were not switched", retry="x")
    assert isinstance(stored, ToolResultBlock)
    assert stored.state is ToolResultState.ERROR
    assert stored.content == (
        "Error: the groups were not switched: this session was changed by 2 other updates "
        "meanwhile; call x again"
    )


async def test_session_writing_tools_answer_a_conflict() -> None:
    @tool
    async def lookup(q: str) -> str:
        """Look something up."""
        return q

    kit = Toolkit(ToolkitConfig(meta_tool=True, session_attempts=1))
    kit.create_group("g", "a group")
    kit.register(lookup, group="g")
    kit.register(TodoWrite())
    view = await kit.snapshot().open_view(
        RuntimeContext(user_id="ann", session_id="s"), AlwaysLosing()
    )
    switched = await view.call_tool(ToolUseBlock("c1", "reset_tools", '{"g": true}'))
    assert switched.state is ToolResultState.ERROR
    assert switched.content.startswith("Error: the tool groups were not switched: ")
    assert switched.content.endswith("call reset_tools again")
    todos = '{"todos": [{"content": "a", "status": "pending", "priority": "low", "id": "1"}]}'
    saved = await view.call_tool(ToolUseBlock("c2", "todo_write", todos))
    assert saved.state is ToolResultState.ERROR, saved.content
    assert saved.content.endswith("call todo_write again")
