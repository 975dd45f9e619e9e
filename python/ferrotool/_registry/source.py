"""Where calls run when a caller hands over tools: a request's view, or a default one."""

from __future__ import annotations

from typing import TypeAlias

from ferrotool._registry.registry import Registry
from ferrotool._registry.toolkit import Toolkit
from ferrotool._registry.view import ToolView

ToolSource: TypeAlias = ToolView | Toolkit | Registry
"""Tools to run calls in: a request's view, or a toolkit's or registry's default view."""


def view_of(source: ToolSource) -> ToolView:
    """The view calls run in: the view itself, or the toolkit's or registry's default view."""
    return source if isinstance(source, ToolView) else source.view()


__all__ = ["ToolSource", "view_of"]
