"""`ferrotool.durable` in one process: a durable batch is the toolkit's batch, recorded.

DBOS is launched once for the module on a SQLite file (a durable toolkit registers its workflow
before the launch). The crash and recovery tests, with real processes, are in `test_crash`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

from dbos import DBOS

from ferrotool import SuspensionKind, Toolkit, ToolResultState, ToolUseBlock, tool
from ferrotool.durable import DurableToolkit, config

pytestmark = pytest.mark.asyncio_only("DBOS runs its workflows on asyncio")

RUNS: Counter[str] = Counter()  # how often each call ran, by call id


@tool
def add(a: int, b: int, call: ToolUseBlock) -> int:
    """Add two numbers."""
    RUNS[call.id] += 1
    return a + b


@tool(idempotent=False, concurrency_safe=False)
def pay(amount: int, call: ToolUseBlock) -> str:
    """Pay an amount."""
    RUNS[call.id] += 1
    return f"paid {amount}"


@tool
def fail(call: ToolUseBlock) -> str:
    """Always fails."""
    RUNS[call.id] += 1
    raise ValueError("no luck")


@tool(external=True)
def pick_file(pattern: str) -> str:
    """Run by the client."""
    raise AssertionError("an external tool never runs here")


TOGETHER = {"left": anyio.Event(), "right": anyio.Event()}


@tool
async def meet(side: str, other: str) -> str:
    """Wait for the call of the other side: two calls that finish only if they overlap."""
    TOGETHER[side].set()
    await TOGETHER[other].wait()
    return side


GATE = {"open": anyio.Event()}


@tool
async def gated(n: int, call: ToolUseBlock) -> int:
    """Wait until the gate opens (the first time), then give ``n``."""
    RUNS[call.id] += 1
    await GATE["open"].wait()
    return n


def toolkit() -> Toolkit:
    tools = Toolkit()
    for each in (add, pay, fail, pick_file, meet, gated):
        tools.register(each)
    return tools


PLAIN = toolkit()
DURABLE = DurableToolkit(PLAIN, name="in-process")


@pytest.fixture(scope="module", autouse=True)
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    DBOS(config={**config(tmp_path_factory.mktemp("dbos"), name="tests"), "log_level": "WARNING"})
    DBOS.launch()
    yield
    DBOS.destroy()


def calls(prefix: str) -> list[ToolUseBlock]:
    return [
        ToolUseBlock.of(f"{prefix}-1", "add", {"a": 1, "b": 2}),
        ToolUseBlock.of(f"{prefix}-2", "pay", {"amount": 5}),
        ToolUseBlock.of(f"{prefix}-3", "add", {"a": "x"}),  # a validation error
        ToolUseBlock.of(f"{prefix}-4", "fail", {}),
        ToolUseBlock.of(f"{prefix}-5", "nope", {}),  # no such tool
        ToolUseBlock.of(f"{prefix}-6", "add", {"a": 3, "b": 4}),
    ]


async def test_a_durable_batch_gives_what_the_toolkit_gives() -> None:
    durable = await DURABLE.call_tools(calls("same"))
    plain = await PLAIN.call_tools(calls("same"))
    assert durable == plain
    assert [r.state for r in durable.results] == [
        ToolResultState.SUCCESS,
        ToolResultState.SUCCESS,
        ToolResultState.ERROR,
        ToolResultState.ERROR,
        ToolResultState.ERROR,
        ToolResultState.SUCCESS,
    ]


async def test_a_finished_batch_is_recorded_and_never_runs_again() -> None:
    first = await DURABLE.call_tools(calls("again"), workflow_id="again")
    ran = {f"again-{i}": 1 for i in (1, 2, 4, 6)}
    assert {key: RUNS[key] for key in ran} == ran
    assert await DURABLE.call_tools(calls("again"), workflow_id="again") == first
    assert await DURABLE.result("again", polling_interval=0.05) == first
    assert {key: RUNS[key] for key in ran} == ran  # nothing ran again


async def test_concurrency_safe_calls_run_as_overlapping_steps() -> None:
    batch = [
        ToolUseBlock.of("m-1", "meet", {"side": "left", "other": "right"}),
        ToolUseBlock.of("m-2", "meet", {"side": "right", "other": "left"}),
        ToolUseBlock.of("m-3", "pay", {"amount": 1}),
    ]
    with anyio.fail_after(30):  # a safety net: the two calls wait for each other
        done = await DURABLE.call_tools(batch, workflow_id="meet")
    assert [r.content for r in done.results] == ["left", "right", "paid 1"]


async def test_a_call_run_by_the_client_suspends_the_batch_once() -> None:
    batch = [
        ToolUseBlock.of("s-1", "add", {"a": 1, "b": 1}),
        ToolUseBlock.of("s-2", "pick_file", {"pattern": "*.py"}),
    ]
    done = await DURABLE.call_tools(batch, workflow_id="suspends")
    assert done.suspension is not None
    assert done.reply_id == done.suspension.reply_id
    (pending,) = done.suspension.pending
    assert (pending.id, pending.kind) == ("s-2", SuspensionKind.EXTERNAL)
    assert [r.state for r in done.results] == [ToolResultState.SUCCESS, ToolResultState.RUNNING]
    # The suspension is a step: the same batch again has the same reply id.
    assert await DURABLE.call_tools(batch, workflow_id="suspends") == done


async def test_a_cancelled_caller_cancels_the_batch_which_goes_on_under_its_id() -> None:
    batch = [
        ToolUseBlock.of("x-1", "add", {"a": 1, "b": 1}),
        ToolUseBlock.of("x-2", "gated", {"n": 7}),
    ]
    with anyio.move_on_after(0.5) as scope:
        await DURABLE.call_tools(batch, workflow_id="cancelled")
    assert scope.cancelled_caught  # the cancellation went on to the caller
    status = await DBOS.get_workflow_status_async("cancelled")
    assert status is not None
    assert status.status == "CANCELLED"
    GATE["open"].set()
    with anyio.fail_after(30):
        done = await DURABLE.call_tools(batch, workflow_id="cancelled")
    assert [r.content for r in done.results] == ["2", "7"]
    assert (RUNS["x-1"], RUNS["x-2"]) == (1, 2)  # the finished call was not run again


async def test_an_empty_batch_is_no_workflow() -> None:
    done = await DURABLE.call_tools([])
    assert done.results == ()


def test_a_name_is_taken_once_per_process() -> None:
    with pytest.raises(ValueError, match="'in-process'"):
        DurableToolkit(PLAIN, name="in-process")


def test_a_batch_in_a_trio_run_is_refused() -> None:
    async def main() -> None:
        await DURABLE.call_tools(calls("trio"))

    with pytest.raises(RuntimeError, match="asyncio"):
        anyio.run(main, backend="trio")


def test_the_configuration_names_a_sqlite_file_or_a_url(tmp_path: Path) -> None:
    embedded = config(tmp_path / "state", name="app")
    assert embedded["system_database_url"] == f"sqlite:///{tmp_path / 'state' / 'app.sqlite'}"
    assert (tmp_path / "state").is_dir()
    url = "postgresql://u:p@db.example/ferrotool"
    shared = config(database_url=url, application_version="7")
    assert (shared["system_database_url"], shared["application_version"]) == (url, "7")
    with pytest.raises(ValueError, match="folder"):
        config()
