"""``todo_write``: the model keeps a structured task list for its session.

Each call replaces the whole list. Every item is checked before anything changes; at most one
item may be in progress. The list lives in the session's `ToolContextState` (its ``data``
under ``"todos"``), written with compare-and-set, so it survives the process and never leaks
into another session. An item whose content is unchanged keeps its id and creation time.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Final, final

from ferrotool._permissions.decisions import PermissionDecision
from ferrotool._permissions.state import PermissionContext
from ferrotool._registry.derived import SessionHandle
from ferrotool._session.state import ToolContextState
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.json import JsonValue

TODO_WRITE: Final = "todo_write"
"""The tool's name."""
TODOS_KEY: Final = "todos"
"""Where the list is kept in `ToolContextState.data`."""
STATUSES: Final = ("pending", "in_progress", "completed")
PRIORITIES: Final = ("high", "medium", "low")
MAX_TODOS: Final = 200
"""Items a list may hold."""
MAX_CONTENT: Final = 2000
"""Characters an item's content may hold."""

_MARKS: Final = {"completed": "x", "in_progress": "~", "pending": " "}
_DESCRIPTION: Final = (
    "Keep a structured todo list for the current task. Each call replaces the whole list: "
    "send every item, each with its content, a status (pending, in_progress or completed) "
    "and optionally a priority (high, medium or low). Keep at most one item in_progress. "
    "Use it for tasks of three steps or more, mark an item completed as soon as it is done, "
    "and send an empty list to clear it."
)
_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The complete, updated todo list.",
            "maxItems": MAX_TODOS,
            "items": {
                "type": "object",
                "properties": {
                    "content": {
                        "type": "string",
                        "description": "What to do, in a short imperative sentence.",
                        "maxLength": MAX_CONTENT,
                    },
                    "status": {
                        "type": "string",
                        "description": "pending, in_progress or completed (default pending).",
                    },
                    "priority": {
                        "type": "string",
                        "description": "high, medium or low.",
                    },
                },
            },
        }
    },
}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def checked_items(todos: Sequence[Mapping[str, JsonValue]]) -> list[dict[str, str]] | str:
    """The items normalised (status lower-case, priority kept when known), or the error."""
    items: list[dict[str, str]] = []
    for raw in todos:
        content = _text(raw.get("content")).strip()
        status_text = _text(raw.get("status")).strip()
        status = status_text.lower() or "pending"
        if status not in STATUSES:
            return (
                f"invalid status '{status_text}' for todo '{content}'. "
                "Allowed: pending, in_progress, completed."
            )
        if not content:
            return "every todo must have non-blank content."
        item = {"content": content, "status": status}
        priority = _text(raw.get("priority")).strip().lower()
        if priority in PRIORITIES:
            item["priority"] = priority
        items.append(item)
    running = sum(item["status"] == "in_progress" for item in items)
    if running > 1:
        return (
            f"at most one task may be in_progress at a time, but {running} were provided. "
            "Keep exactly one in_progress."
        )
    return items


def stored_todos(state: ToolContextState) -> list[dict[str, JsonValue]]:
    """The session's todo list (each item: id, content, status, priority?, created_at)."""
    raw = state.data.get(TODOS_KEY)
    if not isinstance(raw, list):
        return []
    return [dict(item) for item in raw if isinstance(item, dict)]


def rebuilt(
    old: Sequence[Mapping[str, JsonValue]], items: Sequence[Mapping[str, str]]
) -> list[JsonValue]:
    """The new list, each item keeping what the old list knew of it.

    An item keeps the id and creation time of the first old item with its content; a new
    one gets fresh ones.
    """
    first: dict[str, Mapping[str, JsonValue]] = {}
    for item in old:
        content = item.get("content")
        if isinstance(content, str):
            first.setdefault(content, item)
    now = round(time.time(), 3)
    out: list[JsonValue] = []
    for item in items:
        previous = first.get(item["content"])
        entry: dict[str, JsonValue] = {
            "id": previous["id"] if previous and "id" in previous else uuid.uuid4().hex[:12],
            "content": item["content"],
            "status": item["status"],
            "created_at": previous.get("created_at", now) if previous else now,
        }
        if "priority" in item:
            entry["priority"] = item["priority"]
        out.append(entry)
    return out


def render(todos: Sequence[Mapping[str, JsonValue]]) -> str:
    """The list as the model reads it back."""
    if not todos:
        return "Todo list cleared (0 items)."
    open_count = sum(item.get("status") != "completed" for item in todos)
    lines = [f"{open_count} open todo(s):"]
    for item in todos:
        mark = _MARKS.get(str(item.get("status")), " ")
        line = f"- [{mark}] {item.get('content')}"
        if item.get("priority"):
            line += f" (priority: {item.get('priority')})"
        lines.append(line.rstrip())
    return "\n".join(lines)


@final
class TodoWrite(ToolBase[dict[str, JsonValue]]):
    """The ``todo_write`` tool (see the module). Register it with ``toolkit.register(...)``."""

    uses_session: Final = True
    """The view hands the tool its session (`SessionHandle`)."""

    def __init__(self) -> None:
        super().__init__(
            name=TODO_WRITE,
            description=_DESCRIPTION,
            input_schema=_SCHEMA,
            read_only=False,  # it writes the session's list
            concurrency_safe=False,  # two replacements in one batch would race for the list
        )

    async def check_permissions(
        self, tool_input: dict[str, JsonValue], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: it writes only the session's own list."""
        return PermissionDecision.allow("the todo list is the session's own")

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> ToolResultBlock:
        """Check every item, then replace the session's list in one compare-and-set."""
        handle = param.context.get(SessionHandle)
        if handle is None:
            return ToolResultBlock.error(
                "session state unavailable; cannot persist todo list. Call it through a view "
                "built with a session store."
            )
        raw = param.input.get("todos")
        todos = [item for item in raw if isinstance(item, dict)] if isinstance(raw, list) else []
        items = checked_items(todos)
        if isinstance(items, str):
            return ToolResultBlock.error(items)

        def change(state: ToolContextState) -> ToolContextState:
            return state.with_data(TODOS_KEY, rebuilt(stored_todos(state), items))

        stored = await handle.update(
            change, unsaved="the todo list was not saved", retry=TODO_WRITE
        )
        if isinstance(stored, ToolResultBlock):
            return stored
        todos_now = stored_todos(stored)
        return ToolResultBlock.success(
            render(todos_now),
            structured={"todos": list(todos_now)},
            metadata={"revision": stored.revision},
        )


__all__ = [
    "MAX_CONTENT",
    "MAX_TODOS",
    "PRIORITIES",
    "STATUSES",
    "TODOS_KEY",
    "TODO_WRITE",
    "TodoWrite",
    "checked_items",
    "rebuilt",
    "render",
    "stored_todos",
]
