"""`Tracing` with no tracer provider set makes no span: the call goes straight through."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ferrotool import Toolkit, ToolkitConfig, ToolResultState, ToolUseBlock, tool
from ferrotool.telemetry import Tracing


@tool
async def double(n: int) -> int:
    """Twice n."""
    return 2 * n


def _no_tracer(*args: object, **kwargs: object) -> trace.Tracer:
    raise AssertionError("no tracer is taken while nothing records spans")


@pytest.mark.parametrize("provider", [None, trace.NoOpTracerProvider()])
async def test_no_provider_means_no_span_and_the_same_result(
    provider: trace.TracerProvider | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    monkeypatch.setattr(trace, "get_tracer", _no_tracer)
    kit = Toolkit(ToolkitConfig(middleware=[Tracing(tracer_provider=provider)]))
    kit.register(double)
    result = await kit.call_tool(ToolUseBlock("c1", "double", '{"n": 4}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "8")


async def test_a_provider_set_later_is_used_from_then_on(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    current: list[trace.TracerProvider] = [trace.ProxyTracerProvider()]
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: current[0])
    kit = Toolkit(ToolkitConfig(middleware=[Tracing()]))
    kit.register(double)
    await kit.call_tool(ToolUseBlock("c1", "double", '{"n": 1}'))
    assert exporter.get_finished_spans() == ()
    current[0] = provider
    await kit.call_tool(ToolUseBlock("c2", "double", '{"n": 2}'))
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool double"
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.call.id"] == "c2"
