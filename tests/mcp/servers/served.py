"""The toolkit the ``ferrotool serve`` tests serve: ``served:toolkit``."""

from __future__ import annotations

import os
from dataclasses import dataclass

import anyio

from ferrotool import (
    Emitter,
    PermissionContext,
    PermissionDecision,
    SchemaOnlyTool,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    tool,
)


@dataclass(frozen=True)
class Sum:
    """A sum."""

    total: int


@tool(read_only=True)
def add(a: int, b: int) -> Sum:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return Sum(a + b)


@tool
async def steps(count: int, emitter: Emitter) -> str:
    """Report progress, then finish.

    Args:
        count: How many steps.
    """
    for step in range(count):
        emitter.emit(f"step {step + 1}")
        await anyio.sleep(0)
    return f"{count} steps"


@tool
def secret() -> str:
    """A tool of the admin group."""
    return "the secret"


class Delete(ToolBase[dict[str, object]]):
    """Delete a file (asks first)."""

    name = "delete_file"
    input_schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }

    async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
        return f"deleted {param.input['path']}"

    async def check_permissions(
        self, tool_input: dict[str, object], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Delete {tool_input['path']}?")


def toolkit() -> Toolkit:
    """The served toolkit: plain tools, progress, a group, an approval, a client tool."""
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    kit.create_group("admin", "Administration tools")
    kit.register(add)
    kit.register(steps)
    kit.register(secret, group="admin")
    kit.register(Delete())
    kit.register(
        SchemaOnlyTool(
            {
                "name": "ask_user",
                "description": "Ask the user a question (the client answers).",
                "parameters": {
                    "type": "object",
                    "properties": {"question": {"type": "string"}},
                    "required": ["question"],
                },
            }
        )
    )
    return kit


@tool(read_only=True)
def pid() -> int:
    """The serving process's id."""
    return os.getpid()


def toolkit_with_pid() -> Toolkit:
    """The served toolkit, plus ``pid`` (which worker process answered)."""
    kit = toolkit()
    kit.register(pid)
    return kit
