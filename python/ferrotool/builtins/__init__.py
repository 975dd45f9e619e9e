"""Built-in tools: ``reset_tools`` (the meta tool), ``todo_write``, a shell, and file tools.

None is registered by default: register the ones an agent needs, each with the limits it
should have (``toolkit.register(ShellCommandTool(allow=["git status"]))``,
``for item in file_tools("/srv/work"): toolkit.register(item)``).
"""

from ferrotool.builtins._sandbox import Sandbox, SandboxWarning
from ferrotool.builtins.files import (
    InsertTextFile,
    ListDirectory,
    ViewTextFile,
    WriteTextFile,
    file_tools,
)
from ferrotool.builtins.shell import DANGEROUS_COMMANDS, ShellCommandTool
from ferrotool.builtins.todo import TodoWrite

__all__ = [
    "DANGEROUS_COMMANDS",
    "InsertTextFile",
    "ListDirectory",
    "Sandbox",
    "SandboxWarning",
    "ShellCommandTool",
    "TodoWrite",
    "ViewTextFile",
    "WriteTextFile",
    "file_tools",
]
