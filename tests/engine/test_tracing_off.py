"""`Tracing` with no tracer provider set makes no span: the call goes straight through."""

from __future__ import annotations

import os

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
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(trace, "get_tracer", _no_tracer)
    kit = Toolkit(ToolkitConfig(middleware=[Tracing(tracer_provider=provider)]))
    kit.register(double)
    result = await kit.call_tool(ToolUseBlock("c1", "double", '{"n": 4}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "8")


async def test_a_provider_set_later_is_used_from_then_on(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)  # what set_tracer_provider sets
    kit = Toolkit(ToolkitConfig(middleware=[Tracing()]))
    kit.register(double)
    await kit.call_tool(ToolUseBlock("c1", "double", '{"n": 1}'))
    assert exporter.get_finished_spans() == ()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    await kit.call_tool(ToolUseBlock("c2", "double", '{"n": 2}'))
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool double"
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.call.id"] == "c2"


class _CountingEnviron(dict[str, str]):
    """An environment that counts how often it is read."""

    reads = 0

    def __contains__(self, key: object) -> bool:
        type(self).reads += 1
        return super().__contains__(key)

    def __getitem__(self, key: str) -> str:
        type(self).reads += 1
        return super().__getitem__(key)

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        type(self).reads += 1
        return super().get(key, default)


async def test_tracing_off_reads_no_environment_and_takes_no_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    tracing = Tracing()
    called: list[str] = []

    async def spy(call: ToolUseBlock, context: object, next: object) -> object:
        raise AssertionError("an inactive layer is never called")

    monkeypatch.setattr(Tracing, "__call__", spy)
    kit = Toolkit(ToolkitConfig(middleware=[tracing]))
    kit.register(double)
    environ = _CountingEnviron(os.environ)
    monkeypatch.setattr(os, "environ", environ)
    for n in range(3):
        result = await kit.call_tool(ToolUseBlock(f"c{n}", "double", f'{{"n": {n}}}'))
        called.append(result.content)
    assert called == ["0", "2", "4"]
    assert _CountingEnviron.reads == 0
    assert not tracing.active()


async def test_tracing_on_is_active_and_makes_the_span(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    tracing = Tracing()
    assert tracing.active()
    kit = Toolkit(ToolkitConfig(middleware=[tracing]))
    kit.register(double)
    result = await kit.call_tool(ToolUseBlock("c1", "double", '{"n": 5}'))
    assert result.content == "10"
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool double"
