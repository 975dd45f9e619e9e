"""Hundreds of concurrent requests over one registry each see exactly their own tools."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

import anyio
import orjson

from ferrotool import (
    InMemorySessionStore,
    Registry,
    RuntimeContext,
    SchemaOnlyTool,
    Toolkit,
    ToolkitConfig,
    ToolRequestConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)

GROUPS = tuple(f"g{i}" for i in range(8))
TASKS = 240
THREADS = 60


def build_registry() -> Registry:
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    for group in GROUPS:
        kit.create_group(group, f"tools of {group}")
        for j in range(3):

            async def backend(x: int = 0, _name: str = f"{group}_t{j}") -> str:
                await anyio.sleep(0)
                return _name

            kit.register(tool(backend, name=f"{group}_t{j}"), group=group)

    @tool(inline=True)
    def common() -> str:
        """Always there."""
        return "common"

    kit.register(common)
    return kit.snapshot()


@dataclass
class Request:
    index: int
    groups: frozenset[str]
    externals: tuple[str, ...]

    @property
    def context(self) -> RuntimeContext:
        return RuntimeContext(user_id=f"user{self.index % 7}", session_id=f"session{self.index}")

    def expected(self) -> tuple[str, ...]:
        backend = [f"{group}_t{j}" for group in GROUPS if group in self.groups for j in range(3)]
        return ("reset_tools", *backend, "common", *self.externals)


async def serve(registry: Registry, store: InMemorySessionStore, request: Request) -> None:
    context = request.context
    view = await registry.open_view(context, store)
    flags = {group: group in request.groups for group in GROUPS}
    switched = await view.call_tool(ToolUseBlock.of("r", "reset_tools", flags), context)
    assert switched.state is ToolResultState.SUCCESS, switched.content
    externals = [
        SchemaOnlyTool({"name": name, "description": "client tool"}) for name in request.externals
    ]
    view = await registry.open_view(context, store, ToolRequestConfig(externals))
    assert view.names() == request.expected()
    listed = [t["function"]["name"] for t in orjson.loads(view.schemas_json())]
    assert tuple(listed) == request.expected()
    for name in view.names():
        if name == "reset_tools":
            continue
        result = await view.call_tool(ToolUseBlock(f"{request.index}-{name}", name, "{}"), context)
        assert result.id == f"{request.index}-{name}"
        if name in request.externals:
            assert result.is_suspended
        else:
            assert result.content == name
    other = f"client_{(request.index + 1) % (TASKS + THREADS)}_0"
    assert "not found" in (await view.call_tool(ToolUseBlock("o", other, "{}"), context)).content


def make_requests() -> list[Request]:
    rng = random.Random(1234)
    return [
        Request(
            i,
            frozenset(g for g in GROUPS if rng.random() < 0.4),
            tuple(f"client_{i}_{k}" for k in range(rng.randrange(0, 4))),
        )
        for i in range(TASKS + THREADS)
    ]


def test_concurrent_requests_over_one_registry() -> None:
    registry = build_registry()
    store = InMemorySessionStore()
    requests = make_requests()
    failures: list[BaseException] = []
    barrier = threading.Barrier(THREADS + 1)

    def thread_main(request: Request) -> None:
        barrier.wait()
        try:
            anyio.run(serve, registry, store, request)
        except BaseException as exc:  # collected and re-raised below
            failures.append(exc)

    threads = [threading.Thread(target=thread_main, args=(r,)) for r in requests[TASKS:]]
    for thread in threads:
        thread.start()

    async def tasks() -> None:
        barrier.wait()
        async with anyio.create_task_group() as group:
            for request in requests[:TASKS]:
                group.start_soon(serve, registry, store, request)

    anyio.run(tasks)
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(store) == TASKS + THREADS
    assert registry.names()[0] == "reset_tools"  # the registry itself never changed
