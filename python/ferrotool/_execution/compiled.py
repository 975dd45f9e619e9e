"""A registered tool compiled for calling: `CompiledTool`, and its provider-definition cache."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, final

from ferrotool import _core
from ferrotool._definitions.formats import ProviderFormat, tool_definition
from ferrotool._permissions.engine import Checked
from ferrotool._tools.base import AgentTool
from ferrotool._tools.function import FunctionTool
from ferrotool._values.execution import DEFAULTS, UNSET, ExecutionConfig
from ferrotool._values.spec import ToolSpec


class Invoke(enum.Enum):
    """How a tool's call runs, decided when it is compiled."""

    AWAIT = "await"
    """An ``async def`` function tool: awaited on the caller's event loop."""
    INLINE = "inline"
    """A sync function tool declared ``inline=True``: called on the caller's thread."""
    THREAD = "thread"
    """A sync function tool: called on a worker thread of the toolkit's bounded pool."""
    CALL = "call"
    """Any other tool: its ``call(param)`` is awaited."""


@final
class Definitions:
    """A tool's provider definitions, each built on first use.

    The one mutable part of a compiled tool: a cache (one definition per format and
    strictness, never changed once built).
    """

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: dict[tuple[str, bool], bytes] = {}

    def get(self, spec: ToolSpec, format: ProviderFormat, strict: bool) -> bytes:
        """The definition of ``spec`` for ``format``, as JSON bytes."""
        key = (format, strict)
        built = self._built.get(key)
        if built is None:
            built = tool_definition(spec, format, strict=strict).definition_json
            self._built[key] = built
        return built


@final
@dataclass(frozen=True, slots=True, eq=False)
class CompiledTool:
    """A registered tool, compiled for calling (see `ferrotool._execution.pipeline`).

    Attributes:
        tool: The tool as registered.
        spec: What the model sees (presets hidden from the schema).
        origin: Where the tool was defined (``module.qualname``), for error messages.
        presets: Fixed argument values merged over the model's.
        function: The function tool, when the tool is one.
        checks_permissions: The tool has its own `ToolBase.check_permissions`.
        checked: The tool, when it has rule matching and suggestions of its own (a
            `ferrotool._permissions.engine.Checked`, found out once here: the runtime
            protocol check is too slow for every call); else ``None``.
        parse: Validates raw JSON arguments into the tool's input; raises `ValidationError`.
        invoke: How a call runs.
        own_execution: The tool's own execution settings (its timeout among them).
        execution: How a call runs when the call itself sets nothing: the tool's own settings
            over the toolkit's and the defaults (an inline tool has no timeout).
        direct: The whole call in Rust, for a tool that needs no step besides validate,
            invoke and convert (`_core.DirectCall`); ``None`` for every other tool.
        wraps_output: Its structured value is wrapped in ``{"result": ...}`` (an output
            schema that is not an object's).
        groups: The tool groups it belongs to (empty: ``basic``).
        seq: Its registration order in the table.
        definitions: Its provider definitions (a cache).
    """

    tool: AgentTool
    spec: ToolSpec
    origin: str
    presets: Mapping[str, object]
    function: FunctionTool[Any, Any] | None
    checks_permissions: bool
    parse: Callable[[str], Any]
    invoke: Invoke
    checked: Checked | None = None
    own_execution: ExecutionConfig = UNSET
    execution: ExecutionConfig = DEFAULTS
    direct: _core.DirectCall | None = None
    wraps_output: bool = False
    groups: frozenset[str] = frozenset()
    seq: int = 0
    definitions: Definitions = field(default_factory=Definitions)

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.spec.name

    def execution_for(self, call_config: ExecutionConfig | None) -> ExecutionConfig:
        """How a call runs with the call's own settings.

        The tool's settings come first, then the call's, then the toolkit's.
        """
        if call_config is None:
            return self.execution
        merged = self.own_execution.over(call_config, self.execution)
        if self.invoke is Invoke.INLINE and merged.timeout is not None:
            return dataclasses.replace(merged, timeout=None)
        return merged

    def direct_for(self, sync: bool) -> _core.DirectCall | None:
        """The tool's direct call, if a caller of this kind may run it as is.

        The tool's half of the one routing decision (`ToolView.route` holds the request's):
        the tool has a direct call (`ferrotool._execution.pipeline` compiles one when the call
        needs no step besides parse, invoke and convert), and it runs where the caller is: an
        async caller awaits it unless the tool runs on a worker thread (the pipeline sends those
        to the pool); a sync caller runs it unless the tool is ``async def``.
        """
        if self.invoke is (Invoke.AWAIT if sync else Invoke.THREAD):
            return None
        return self.direct


__all__ = ["CompiledTool", "Definitions", "Invoke"]
