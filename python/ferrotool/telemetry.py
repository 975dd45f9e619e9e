"""OpenTelemetry spans for tool calls, after the GenAI semantic conventions (extra ``otel``).

`Tracing` is a middleware: add it to a toolkit (``ToolkitConfig(middleware=[Tracing()])``) or
to one view, and each call becomes a span named ``execute_tool {tool name}`` with the
attributes ``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.tool.name``,
``gen_ai.tool.call.id`` and ``gen_ai.tool.type``; a call that does not succeed sets the span's
status to error, with ``error.type`` (``denied``, ``interrupted``, ``error``) and the result's
text as the description. Arguments (``gen_ai.tool.call.arguments``) and results
(``gen_ai.tool.call.result``) are recorded only when asked for: they may hold personal data.

Spans come from the tracer provider set globally (``opentelemetry.trace.set_tracer_provider``)
or the one given. A toolkit without this middleware pays nothing for tracing; one with it keeps
the Rust direct call inside (the span wraps the call, it does not replace it), and while no
provider is set (or a no-op one is) the layer is left out of each call (its ``active()`` says
no): one check a call, with no environment read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, final

from ferrotool import _core
from ferrotool._execution.middleware import Next
from ferrotool._extras import requires_extra
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import RuntimeContext

with requires_extra("ferrotool.telemetry", "otel"):
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

_OPERATION: Final = "execute_tool"
_ERROR_TYPES: Final = {
    ToolResultState.ERROR: "error",
    ToolResultState.DENIED: "denied",
    ToolResultState.INTERRUPTED: "interrupted",
}
_MAX_RECORDED: Final = 8192
# Providers that record nothing: the proxy OpenTelemetry hands out before one is set globally,
# and the explicit no-op one.
_SILENT: Final = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
_PROXY: Final = trace.ProxyTracerProvider()
_UNKNOWN: Final = object()
_ENVIRONMENT_PROVIDER: Final = "OTEL_PYTHON_TRACER_PROVIDER"


@final
class Tracing:
    """A middleware that makes every call an OpenTelemetry span.

    Args:
        record_arguments: Record the call's raw arguments on the span.
        record_results: Record the result's text on the span.
        tracer_provider: The provider to take the tracer from; the global one by default.
    """

    __slots__ = (
        "_from_environment",
        "_provider",
        "_tracer",
        "_tracer_of",
        "active",
        "record_arguments",
        "record_results",
    )

    def __init__(
        self,
        *,
        record_arguments: bool = False,
        record_results: bool = False,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.record_arguments: Final[bool] = record_arguments
        self.record_results: Final[bool] = record_results
        self._provider = tracer_provider
        self._tracer: trace.Tracer | None = None
        self._tracer_of: TracerProvider | None = None
        # Whether the environment names a provider for OpenTelemetry to load when first asked:
        # read once here, not at each call.
        self._from_environment = _ENVIRONMENT_PROVIDER in os.environ
        self.active: Callable[[], object] = self._is_active
        """Whether calls are traced now (truthy: a provider that may record spans is set).

        The onion asks this before each call and leaves the layer out when it says no, so a
        toolkit with tracing off runs its calls as one without middleware. With no provider
        given and none named by the environment, it reads OpenTelemetry's global provider slot
        through a `ferrotool._core.IsSet` (``None`` until ``set_tracer_provider``): the onion
        reads that slot with one dictionary lookup and no call.
        """
        slot = getattr(trace, "_TRACER_PROVIDER", _UNKNOWN)
        if tracer_provider is None and not self._from_environment and slot is not _UNKNOWN:
            self.active = _core.IsSet(vars(trace), "_TRACER_PROVIDER")

    def _is_active(self) -> bool:
        """Whether a provider that records spans is set (or given)."""
        return self._active_tracer() is not None

    def _global_provider(self) -> TracerProvider:
        """The provider set globally, read without OpenTelemetry's environment lookup."""
        provider = getattr(trace, "_TRACER_PROVIDER", _UNKNOWN)
        if provider is None and not self._from_environment:
            return _PROXY  # none set, and none to load
        if isinstance(provider, TracerProvider):
            return provider
        return trace.get_tracer_provider()  # to be loaded, or an OpenTelemetry that moved it

    def _active_tracer(self) -> trace.Tracer | None:
        """The tracer to use now, or None when no provider records spans.

        Read at each call, so that a provider set after the toolkit was built is the one used;
        with none set (OpenTelemetry's proxy) or a no-op one, the call runs with no span at all.
        """
        provider = self._provider or self._global_provider()
        if isinstance(provider, _SILENT):
            return None
        if provider is not self._tracer_of:
            self._tracer = trace.get_tracer("ferrotool", tracer_provider=provider)
            self._tracer_of = provider
        return self._tracer

    async def __call__(
        self, call: ToolUseBlock, context: RuntimeContext, next: Next
    ) -> ToolResultBlock:
        """Run the call inside its span (or straight through, when nothing records spans)."""
        tracer = self._active_tracer()
        if tracer is None:
            return await next(call, context)
        with tracer.start_as_current_span(
            f"{_OPERATION} {call.name}", kind=SpanKind.INTERNAL, record_exception=True
        ) as span:
            span.set_attribute("gen_ai.operation.name", _OPERATION)
            span.set_attribute("gen_ai.tool.name", call.name)
            span.set_attribute("gen_ai.tool.call.id", call.id)
            span.set_attribute("gen_ai.tool.type", "function")
            if self.record_arguments:
                span.set_attribute("gen_ai.tool.call.arguments", _clip(str(call.arguments)))
            result = await next(call, context)
            self._finish(span, result)
            return result

    def _finish(self, span: Span, result: ToolResultBlock) -> None:
        if self.record_results:
            span.set_attribute("gen_ai.tool.call.result", _clip(result.content))
        error_type = _ERROR_TYPES.get(result.state)
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, _clip(result.content)))
        elif result.needs_approval or result.is_suspended:
            span.set_attribute("ferrotool.tool.call.waiting", True)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_RECORDED else text[:_MAX_RECORDED] + "..."


__all__ = ["Tracing"]
