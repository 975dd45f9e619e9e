"""todo_write: whole-list replacement per session, checked before any change."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrotool import (
    InMemorySessionStore,
    RuntimeContext,
    SessionKey,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
)
from ferrotool.builtins.todo import TODO_WRITE, TodoWrite, checked_items, render, stored_todos

CONTEXT = RuntimeContext(user_id="u", session_id="s")
KEY = SessionKey("u", "s")


async def _view(store: InMemorySessionStore) -> ToolView:
    toolkit = Toolkit()
    toolkit.register(TodoWrite())
    return await toolkit.snapshot().open_view(CONTEXT, store)


async def _write(store: InMemorySessionStore, todos: object) -> ToolResultBlock:
    view = await _view(store)
    return await view.call_tool(ToolUseBlock.of("t", TODO_WRITE, {"todos": todos}), CONTEXT)  # type: ignore[dict-item]


def test_flags_are_honest() -> None:
    spec = TodoWrite().spec
    assert (spec.read_only, spec.concurrency_safe) == (False, False)


async def test_list_is_written_and_rendered() -> None:
    store = InMemorySessionStore()
    result = await _write(
        store,
        [
            {"content": "Plan", "status": "completed"},
            {"content": "Build", "status": "In_Progress", "priority": "HIGH"},
            {"content": "Ship", "status": " ", "priority": "urgent"},
        ],
    )
    assert result.state is ToolResultState.SUCCESS
    assert result.content == (
        "2 open todo(s):\n- [x] Plan\n- [~] Build (priority: high)\n- [ ] Ship"
    )
    todos = stored_todos(await store.load(KEY))
    assert [t["status"] for t in todos] == ["completed", "in_progress", "pending"]
    assert "priority" not in todos[2]  # not high, medium or low: dropped


async def test_two_in_progress_is_refused_and_nothing_changes() -> None:
    store = InMemorySessionStore()
    await _write(store, [{"content": "a"}])
    before = await store.load(KEY)
    result = await _write(
        store,
        [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
    )
    assert result.state is ToolResultState.ERROR
    assert result.content == (
        "Error: at most one task may be in_progress at a time, but 2 were provided. "
        "Keep exactly one in_progress."
    )
    after = await store.load(KEY)
    assert after == before


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        (
            [{"content": "x", "status": "done"}],
            "Error: invalid status 'done' for todo 'x'. Allowed: pending, in_progress, completed.",
        ),
        (
            [{"content": "  ", "status": "pending"}],
            "Error: every todo must have non-blank content.",
        ),
    ],
)
async def test_invalid_items(todos: object, message: str) -> None:
    store = InMemorySessionStore()
    result = await _write(store, todos)
    assert result.content == message
    assert (await store.load(KEY)).revision == 0


async def test_ids_are_kept_for_unchanged_content_and_empty_clears() -> None:
    store = InMemorySessionStore()
    await _write(store, [{"content": "a"}, {"content": "b"}])
    first = {t["content"]: t["id"] for t in stored_todos(await store.load(KEY))}
    await _write(store, [{"content": "b", "status": "completed"}, {"content": "c"}])
    second = {t["content"]: t["id"] for t in stored_todos(await store.load(KEY))}
    assert second["b"] == first["b"]
    assert second["c"] not in first.values()
    result = await _write(store, [])
    assert result.content == "Todo list cleared (0 items)."
    assert stored_todos(await store.load(KEY)) == []


async def test_missing_todos_clears() -> None:
    store = InMemorySessionStore()
    await _write(store, [{"content": "a"}])
    view = await _view(store)
    result = await view.call_tool(ToolUseBlock.of("t", TODO_WRITE, {}), CONTEXT)
    assert result.content == "Todo list cleared (0 items)."


async def test_without_a_session_it_says_so() -> None:
    toolkit = Toolkit()
    toolkit.register(TodoWrite())
    result = await toolkit.call_tool(ToolUseBlock.of("t", TODO_WRITE, {"todos": []}))
    assert result.state is ToolResultState.ERROR
    assert "session state unavailable" in result.content


async def test_sessions_do_not_share_lists() -> None:
    store = InMemorySessionStore()
    toolkit = Toolkit()
    toolkit.register(TodoWrite())
    registry = toolkit.snapshot()

    async def one(index: int) -> None:
        context = RuntimeContext(user_id="u", session_id=f"s{index}")
        view = await registry.open_view(context, store)
        call = ToolUseBlock.of("t", TODO_WRITE, {"todos": [{"content": f"task {index}"}]})
        await view.call_tool(call, context)

    async with anyio.create_task_group() as group:
        for index in range(50):
            group.start_soon(one, index)
    for index in range(50):
        todos = stored_todos(await store.load(SessionKey("u", f"s{index}")))
        assert [t["content"] for t in todos] == [f"task {index}"]


_STATUS = st.sampled_from(["pending", "in_progress", "completed", "PENDING", "", "bogus"])
_ITEM = st.fixed_dictionaries({"content": st.text(max_size=5), "status": _STATUS})


@given(todos=st.lists(_ITEM, max_size=6))
def test_checks_agree_with_the_rules(todos: list[dict[str, str]]) -> None:
    checked = checked_items(todos)
    statuses = [t["status"].strip().lower() or "pending" for t in todos]
    valid = all(s in ("pending", "in_progress", "completed") for s in statuses)
    blank = any(not t["content"].strip() for t in todos)
    running = statuses.count("in_progress")
    if not valid or blank or running > 1:
        assert isinstance(checked, str)
    else:
        assert isinstance(checked, list)
        rendered = render(checked)
        open_count = sum(s != "completed" for s in statuses)
        assert rendered.startswith(f"{open_count} open") or not checked


def test_session_data_round_trips_and_is_read_only() -> None:
    from ferrotool import ToolContextState

    state = ToolContextState().with_data("todos", [{"content": "a"}]).with_data("x", 1)
    again = ToolContextState.from_json(state.to_json())
    assert again == state
    assert dict(again.data) == {"todos": [{"content": "a"}], "x": 1}
    assert state.with_data("x", None).data.keys() == {"todos"}
    with pytest.raises(TypeError):
        state.data["y"] = 2  # type: ignore[index]
    old = b'{"format": 2, "groups": {}, "skills": [], "pending_calls": [], "permissions": {}}'
    assert not ToolContextState.from_json(old).data
