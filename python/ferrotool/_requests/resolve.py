"""The one rule by which a request's name resolves: its external tools, the backend's, or none.

A request's external tools (usually the client's `SchemaOnlyTool` definitions) and the
backend's registered tools meet under the request's `ToolMergeMode`. Both the registry's
`get_tool(name, config)` and every `ToolView` resolve names with these two functions.
"""

from __future__ import annotations

from ferrotool._requests.config import ToolMergeMode


def external_wins(mode: ToolMergeMode, backend_visible: bool) -> bool:
    """Whether a request's external tool is the one its name resolves to.

    Args:
        mode: The request's merge mode.
        backend_visible: Whether a backend tool of the same name is visible to the request.
    """
    if mode is ToolMergeMode.AGENT_ONLY:
        return False
    if mode is ToolMergeMode.MERGE_BACKEND_PRIORITY:
        return not backend_visible
    return True


def backend_allowed(mode: ToolMergeMode) -> bool:
    """Whether the backend's tools take part in a request of this mode at all."""
    return mode is not ToolMergeMode.EXTERNAL_ONLY


__all__ = ["backend_allowed", "external_wins"]
