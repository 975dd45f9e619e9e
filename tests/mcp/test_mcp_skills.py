"""Skills over MCP, both ways: a toolkit's skills served as prompts and resources (read through
the confined skill loader, changes announced), and a server's prompts and resources registered
as skills (`register_mcp(..., skills=True)`): ferrotool to ferrotool over every transport, and a
real FastMCP server."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp_support import PYTHON, SERVERS, stop
from servers import fastmcp_server
from servers.skilled import SKILLS, TIDY
from servers.skilled import toolkit as skilled_toolkit
from test_mcp_serve import serve

from ferrotool import Toolkit, ToolResultState, ToolUseBlock
from ferrotool.errors import McpError, RegistrationError
from ferrotool.mcp import McpClient, register_mcp, remove_mcp
from ferrotool.mcp.server import McpToolServer
from ferrotool.skills import (
    LOAD_SKILL,
    AgentSkill,
    FileSystemSkillRepository,
    add_skills,
    skills_of,
)
from ferrotool.skills.resources import MAX_RESOURCE_BYTES

CSV = "csv-report_local"
CSV_FILES = ("references/columns.md", "scripts/report.py")
SECRET = "the secret next to the skills"
PYTHONPATH = os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")])
"""The test servers, then this checkout's ferrotool (a served process imports it)."""
SERVE = ["-m", "ferrotool", "serve", "skilled:toolkit"]


async def load(kit: Toolkit, skill_id: str, path: str) -> str:
    """What ``load_skill_through_path`` gives: the text between its ``---`` lines."""
    call = ToolUseBlock.of("l", LOAD_SKILL, {"skillId": skill_id, "path": path})
    result = await kit.call_tool(call)
    assert result.state is ToolResultState.SUCCESS, result.content
    return result.content.split("\n---\n")[1]


def text_of(result: types.ReadResourceResult) -> str:
    (contents,) = result.contents
    assert isinstance(contents, types.TextResourceContents)
    return contents.text


# - serving: prompts and resources -


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_skill_is_a_prompt_giving_its_instructions(mode: str) -> None:
    server = McpToolServer(skilled_toolkit())
    async with Client(server.server, mode=mode) as client:
        listed = (await client.list_prompts()).prompts
        assert [(p.name, p.title, p.description) for p in listed] == [
            (CSV, "csv-report", "Summarise CSV files"),
            ("tidy_memory", "tidy", "Tidy a folder"),
        ]
        assert all(not prompt.arguments for prompt in listed)
        got = await client.get_prompt(CSV)
        assert got.description == "Summarise CSV files"
        (message,) = got.messages
        assert message.role == "user"
        assert isinstance(message.content, types.TextContent)
        skill_file = (SKILLS / "csv-report" / "SKILL.md").read_text()
        assert message.content.text == skill_file.split("---\n", 2)[2].strip()
        with pytest.raises(MCPError, match=r"unknown prompt 'csv-report'.*'csv-report_local'"):
            await client.get_prompt("csv-report")  # the name, not the id


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_skill_file_is_a_resource_under_one_template(mode: str) -> None:
    server = McpToolServer(skilled_toolkit())
    async with Client(server.server, mode=mode) as client:
        listed = (await client.list_resources()).resources
        assert [(str(r.uri), r.mime_type) for r in listed] == [
            (f"skill://{CSV}/SKILL.md", "text/markdown"),
            (f"skill://{CSV}/references/columns.md", "text/markdown"),
            (f"skill://{CSV}/scripts/report.py", "text/x-python"),
            ("skill://tidy_memory/SKILL.md", "text/markdown"),
            ("skill://tidy_memory/rules.txt", "text/plain"),
        ]
        (template,) = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "skill://{skillId}/{path}"
        report = await client.read_resource(f"skill://{CSV}/scripts/report.py")
        assert text_of(report) == (SKILLS / "csv-report" / "scripts" / "report.py").read_text()
        rules = await client.read_resource("skill://tidy_memory/rules.txt")
        assert text_of(rules) == TIDY.resources["rules.txt"]
        skill_file = text_of(await client.read_resource("skill://tidy_memory/SKILL.md"))
        assert AgentSkill.from_markdown(skill_file).content == TIDY.content


async def test_a_binary_file_is_a_blob(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "icons"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: icons\ndescription: Icons\n---\nUse logo.png.\n")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\x00")
    kit = Toolkit()
    add_skills(kit, FileSystemSkillRepository(folder.parent, source="t", lazy=True))
    async with Client(McpToolServer(kit).server, mode="legacy") as client:
        (contents,) = (await client.read_resource("skill://icons_t/logo.png")).contents
    assert isinstance(contents, types.BlobResourceContents)
    assert contents.mime_type == "image/png"
    assert contents.blob == "iVBORw0KGgr/AA=="


# - serving: an attacker's reads -


@pytest.fixture
def exposed(tmp_path: Path) -> McpToolServer:
    """A skill folder with every trap an attacker could use, and a secret outside it."""
    (tmp_path / "secret.txt").write_text(SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text(SECRET)
    folder = tmp_path / "skills" / "trap"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: trap\ndescription: Traps\n---\nNothing here.\n")
    (folder / "ok.md").write_text("fine")
    (folder / ".env").write_text(SECRET)
    os.symlink(tmp_path / "secret.txt", folder / "link.txt")
    os.symlink(outside, folder / "linked")
    os.mkfifo(folder / "pipe")  # opened, it would block a reader that waits for a writer
    with open(folder / "huge.bin", "wb") as huge:  # sparse: no disk spent on it
        huge.truncate(MAX_RESOURCE_BYTES + 1)
    kit = Toolkit()
    add_skills(kit, FileSystemSkillRepository(folder.parent, source="t", lazy=True))
    return McpToolServer(kit)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../secret.txt", "not a plain relative path"),
        ("%2e%2e/secret.txt", "not a plain relative path"),
        ("%252e%252e%252fsecret.txt", "not a plain relative path"),
        ("..%5csecret.txt", "not a plain relative path"),
        ("/" + "/".join(("etc", "passwd")), "not a plain relative path"),
        ("C:/Windows/win.ini", "not a plain relative path"),
        ("./ok.md", "not a plain relative path"),
        ("ok.md%00.png", "not a plain relative path"),
        (".env", "not a plain relative path"),
        ("link.txt", "not found, or refused"),
        ("linked/notes.md", "not found, or refused"),
        ("huge.bin", "not found, or refused"),
        ("pipe", "not found, or refused"),
        ("missing.md", "not found, or refused"),
    ],
)
async def test_reads_past_the_skill_folder_are_refused(
    exposed: McpToolServer, path: str, why: str
) -> None:
    async with Client(exposed.server, mode="legacy") as client:
        assert text_of(await client.read_resource("skill://trap_t/ok.md")) == "fine"
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"skill://trap_t/{path}")
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
    assert why in raised.value.error.message
    assert raised.value.error.code == -32002
    assert SECRET not in raised.value.error.message
    # Neither listed: hidden files and symlinks are not the skill's files.
    assert listed == ["skill://trap_t/SKILL.md", "skill://trap_t/huge.bin", "skill://trap_t/ok.md"]


@pytest.mark.parametrize(
    "uri",
    ["skill://nobody/SKILL.md", "skill://trap_t", "skill:///etc/passwd", "file:///etc/passwd"],
)
async def test_uris_naming_no_skill_file_are_errors(exposed: McpToolServer, uri: str) -> None:
    async with Client(exposed.server, mode="legacy") as client:
        with pytest.raises(MCPError, match="not found"):
            await client.read_resource(uri)


# - serving: the toolkit followed, its changes announced -


class Heard:
    """The notifications a client receives; `change` waits for the end of one change's."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._tools = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ServerNotification):
            self.seen.append(message.method)
            if message.method == "notifications/tools/list_changed":
                self._tools.set()  # the last of a change's announcements

    async def change(self) -> list[str]:
        """The announcements of the next change (the tools' comes last)."""
        with anyio.fail_after(10):
            await self._tools.wait()
        seen, self.seen, self._tools = self.seen, [], anyio.Event()
        return seen


async def test_a_handshake_session_is_told_when_skills_change() -> None:
    kit = skilled_toolkit()
    server = McpToolServer(kit)
    heard = Heard()
    async with Client(server.server, mode="legacy", message_handler=heard) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None
        assert capabilities.prompts.list_changed
        assert capabilities.resources is not None
        assert capabilities.resources.list_changed
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed
        add_skills(kit, AgentSkill(name="new", description="A new skill", content="Do it."))
        assert await heard.change() == [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]
        names = [p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts]
        assert names == [CSV, "new_custom", "tidy_memory"]
        tools = (await client.list_tools(cache_mode="bypass")).tools
        (loader,) = [tool for tool in tools if tool.name == LOAD_SKILL]
        assert "new_custom" in loader.input_schema["properties"]["skillId"]["enum"]

        kit.remove(LOAD_SKILL)  # every skill goes with the loader
        assert len(await heard.change()) == 3  # the skills went too
        assert (await client.list_prompts(cache_mode="bypass")).prompts == []
        assert (await client.list_resources(cache_mode="bypass")).resources == []


async def test_a_change_that_keeps_the_skills_announces_the_tools_only() -> None:
    kit = skilled_toolkit()
    heard = Heard()
    async with Client(McpToolServer(kit).server, mode="legacy", message_handler=heard) as client:
        await client.list_prompts()
        kit.create_group("extra", "More tools")  # the loader is rebuilt, its skills the same
        assert await heard.change() == ["notifications/tools/list_changed"]


async def test_a_stateless_client_hears_of_changes_on_its_listen_stream() -> None:
    kit = skilled_toolkit()
    server = McpToolServer(kit)
    async with Client(server.server, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        events: list[str] = []
        async with client.listen(prompts_list_changed=True, resources_list_changed=True) as sub:
            add_skills(kit, AgentSkill(name="new", description="A new skill", content="Do it."))
            with anyio.fail_after(10):
                async for event in sub:
                    events.append(type(event).__name__)
                    if len(events) == 2:
                        break
        assert events == ["PromptsListChanged", "ResourcesListChanged"]
        assert "new_custom" in [p.name for p in (await client.list_prompts()).prompts]


async def test_a_registry_is_served_as_it_is() -> None:
    kit = skilled_toolkit()
    server = McpToolServer(kit.snapshot())
    async with Client(server.server, mode="legacy") as client:
        prompts = client.server_capabilities.prompts
        assert prompts is not None
        assert not prompts.list_changed
        add_skills(kit, AgentSkill(name="new", description="A new skill", content="Do it."))
        names = [p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts]
    assert names == [CSV, "tidy_memory"]


def test_a_toolkit_tells_its_watchers_after_each_change() -> None:
    kit = Toolkit()
    seen: list[tuple[str, ...]] = []
    kit.on_change("w", lambda: seen.append(kit.snapshot().names()))
    kit.snapshot()
    kit.create_group("g", "A group")
    add_skills(kit, TIDY)
    kit.on_change("w", None)
    kit.remove(LOAD_SKILL)
    assert seen == [(), (LOAD_SKILL,)]  # each change seen complete; none after removal


# - importing: a server's prompts as skills -


async def check_round_trip(client: McpClient) -> None:
    """Register the skilled server's skills; each loads as it does on the served toolkit."""
    served, kit = skilled_toolkit(), Toolkit()
    with anyio.fail_after(60):
        await register_mcp(kit, client, skills=True)
        try:
            ids = sorted(skill.skill_id for skill in skills_of(kit))
            assert ids == [f"{CSV}_mcp-{client.name}", f"tidy_memory_mcp-{client.name}"]
            for old, paths in ((CSV, CSV_FILES), ("tidy_memory", ("rules.txt",))):
                new = f"{old}_mcp-{client.name}"
                for path in ("SKILL.md", *paths):
                    assert await load(kit, new, path) == await load(served, old, path)
            description = skills_of(kit).get(CSV)
            assert description is not None
            assert description.description == "Summarise CSV files"
            assert [tool.name for tool in (kit.get_spec(n) for n in kit.names()) if tool] == [
                f"mcp__{client.name}__count",
                f"mcp__{client.name}__{LOAD_SKILL}",
                LOAD_SKILL,
            ]
        finally:
            removed = await remove_mcp(kit, client.name)
    assert f"{CSV}_mcp-{client.name}" in removed
    assert not len(skills_of(kit))
    assert kit.names() == ()


async def test_round_trip_in_process() -> None:
    await check_round_trip(McpClient.in_process("served", McpToolServer(skilled_toolkit())))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_round_trip_over_stdio(mode: str) -> None:
    client = McpClient.stdio("served", PYTHON, SERVE, env={"PYTHONPATH": PYTHONPATH}, mode=mode)
    await check_round_trip(client)


@pytest.fixture(scope="module")
def skilled_http() -> Iterator[int]:
    process, port = serve("skilled:toolkit", "--transport", "streamable-http")
    yield port
    stop(process)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_round_trip_over_streamable_http(skilled_http: int, mode: str) -> None:
    url = f"http://127.0.0.1:{skilled_http}/mcp"
    await check_round_trip(McpClient.streamable_http("served", url, mode=mode))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_reads_skills_over_http_and_stdio(
    skilled_http: int, mode: str
) -> None:
    url = f"http://127.0.0.1:{skilled_http}/mcp"
    with anyio.fail_after(60):
        async with Client(streamable_http_client(url), mode=mode) as client:
            assert [p.name for p in (await client.list_prompts()).prompts] == [CSV, "tidy_memory"]
            read = await client.read_resource(f"skill://{CSV}/references/columns.md")
            assert text_of(read) == (SKILLS / "csv-report/references/columns.md").read_text()
            with pytest.raises(MCPError, match="not a plain relative path"):
                await client.read_resource(f"skill://{CSV}/../csv-report/SKILL.md")
        served = StdioServerParameters(command=PYTHON, args=SERVE, env={"PYTHONPATH": PYTHONPATH})
        async with Client(served, mode=mode) as client:
            got = await client.get_prompt("tidy_memory")
            assert isinstance(got.messages[0].content, types.TextContent)
            assert got.messages[0].content.text == TIDY.content


async def test_prompts_named_as_skills_of_the_toolkit_are_refused() -> None:
    kit = Toolkit()
    add_skills(kit, AgentSkill(name=CSV, description="Mine", content="My own."))
    client = McpClient.in_process("served", McpToolServer(skilled_toolkit()))
    try:
        with pytest.raises(RegistrationError, match=f"'served'.*'{CSV}'"):
            await register_mcp(kit, client, skills=True)
    finally:
        await client.close()
    assert kit.names() == (LOAD_SKILL,)  # nothing registered
    mine = skills_of(kit).get(CSV)
    assert mine is not None
    assert mine.content == "My own."


async def test_without_skills_the_prompts_stay_on_the_server() -> None:
    kit = Toolkit()
    client = McpClient.in_process("served", McpToolServer(skilled_toolkit()))
    await register_mcp(kit, client)
    try:
        assert not len(skills_of(kit))
        assert [p.name for p in await client.list_prompts()] == [CSV, "tidy_memory"]
    finally:
        await remove_mcp(kit, "served")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_fastmcp_servers_prompts_become_skills(
    fastmcp_http: int, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    kit = Toolkit()
    client = McpClient.streamable_http("fast", f"http://127.0.0.1:{fastmcp_http}/mcp", mode=mode)
    with anyio.fail_after(60), caplog.at_level(logging.WARNING, "ferrotool.mcp"):
        await register_mcp(kit, client, skills=True)
        try:
            (skill,) = skills_of(kit)
            assert (skill.skill_id, skill.description) == (
                "review_mcp-fast",
                "Review a change carefully.",
            )
            assert await load(kit, "review_mcp-fast", "SKILL.md") == fastmcp_server.REVIEW
            assert await load(kit, "review_mcp-fast", "checklist.md") == fastmcp_server.CHECKLIST
            assert {"mcp__fast__add", "mcp__fast__count"} <= set(kit.names())
        finally:
            await remove_mcp(kit, "fast")
    (warning,) = [r.getMessage() for r in caplog.records if "greet" in r.getMessage()]
    assert "prompt 'greet' is not a skill: it needs the arguments name" in warning


async def test_the_client_reaches_prompts_and_resources_directly() -> None:
    client = McpClient.in_process("served", McpToolServer(skilled_toolkit()))
    async with client:
        assert [p.name for p in await client.list_prompts()] == [CSV, "tidy_memory"]
        assert len(await client.list_resources()) == 5
        rules = await client.read_resource("skill://tidy_memory/rules.txt")
        assert text_of(rules) == TIDY.resources["rules.txt"]
        with pytest.raises(McpError, match=r"failed to give its prompt 'nope'.*unknown prompt"):
            await client.get_prompt("nope")
        with pytest.raises(McpError, match=r"failed to read its resource.*not a plain relative"):
            await client.read_resource("skill://tidy_memory/../../etc/passwd")
