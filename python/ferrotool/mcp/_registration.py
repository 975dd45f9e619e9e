"""`register_mcp` and `remove_mcp`: an MCP server's tools in a toolkit, through its public API.

Registration connects the client, filters its listing, and registers one `McpTool` per good
tool in one change. A bad tool (its schema does not compile, its name is listed twice...: see
`ferrotool.mcp.tool.mcp_tools`) is left out alone: a warning on the ``ferrotool.mcp`` logger
names it and says why, and `McpClient.rejected_tools` holds it until the next listing. It then
follows the server: when the server says its tools changed, the toolkit's tools of that server
are replaced by the new listing, again in one change, so a snapshot holds either the old tools
or the new ones. Both change the toolkit through its public `Toolkit.replace` only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Final

import mcp_types as types

from ferrotool._registry.host import ToolHost, ToolReader
from ferrotool._tools.base import AgentTool
from ferrotool._values.groups import BASIC
from ferrotool.errors import RegistrationError
from ferrotool.mcp._skills import skill_source, skills_from
from ferrotool.mcp.client import McpClient
from ferrotool.mcp.tool import (
    McpTool,
    McpTrust,
    RejectedTool,
    mcp_tools,
    presets_for,
    trusted_names,
)
from ferrotool.skills.loader import LoadSkillThroughPath
from ferrotool.skills.prompt import LOAD_SKILL
from ferrotool.skills.registration import add_skills, skills_of
from ferrotool.skills.skill import SkillSet

_log: Final = logging.getLogger("ferrotool.mcp")


def _groups(group: str | Iterable[str]) -> frozenset[str]:
    return frozenset((group,) if isinstance(group, str) else group) - {BASIC}


def tools_of(toolkit: ToolReader, server: str) -> list[McpTool]:
    """The toolkit's tools that come from the MCP server named ``server``."""
    found = []
    for name in toolkit.names():
        tool = toolkit.get_tool(name)
        if isinstance(tool, McpTool) and tool.client.name == server:
            found.append(tool)
    return found


async def register_mcp(
    toolkit: ToolHost,
    client: McpClient,
    *,
    group: str | Iterable[str] = (),
    presets: Mapping[str, Mapping[str, object]] | None = None,
    enable: Iterable[str] = (),
    disable: Iterable[str] = (),
    trust: McpTrust = False,
    skills: bool = False,
) -> tuple[AgentTool, ...]:
    """Connect an MCP client and register its server's tools as ``mcp__{server}__{tool}``.

    The toolkit then follows the server: when it says its tools changed, they are replaced by
    the new listing (one change: a snapshot holds the old tools or the new).

    Only a tool the server marks ``readOnlyHint: true`` runs without asking; every other one
    asks (the MCP defaults: a missing ``readOnlyHint`` is false, a missing ``destructiveHint``
    true), unless ``trust`` covers it. A bad tool in the listing (its schema does not compile,
    its name is empty or listed twice) is left out alone, named in a warning and in
    ``client.rejected_tools``; the others register.

    Args:
        toolkit: The toolkit (any `ToolHost`).
        client: The server's client (initialized here if it is not yet).
        group: The group or groups the tools join (checked before connecting).
        presets: Fixed arguments per tool, by the tool's name on the server.
        enable: When not empty, only these tools (by their names on the server).
        disable: Tools to leave out (ignored when ``enable`` is given).
        trust: Which tools run without asking (`McpTrust`): ``False``, the read-only ones;
            ``True``, all of them; or a collection of names on the server. Deny and ask rules
            still apply, and ``EXPLORE`` mode still denies what is not read-only.
        skills: Also make the server's prompts skills (``load_skill_through_path`` loads
            them): each prompt without a required argument is a skill named as the prompt,
            its id ``{prompt}_mcp-{server}``, its instructions the prompt's text, and the
            server's ``skill://{prompt}/{path}`` resources its files, read now. A prompt that
            cannot be a skill is left out with a warning. Read once: `remove_mcp` removes them.

    Returns:
        The registered tools (`McpTool`).

    Raises:
        RegistrationError: A group does not exist, a name is taken, or (with ``skills``) a
            skill of the toolkit has the name of one of the server's prompts; nothing is
            registered then.
        McpError: The server could not be reached.
        TypeError: ``trust`` is neither a flag nor a collection of names.
    """
    if not isinstance(client, McpClient):
        raise TypeError(f"an McpClient is needed, not {type(client).__name__}")
    trusted = trusted_names(trust)
    groups = _groups(group)
    known = {existing.name for existing in toolkit.groups()}
    for name in sorted(groups - known):
        raise RegistrationError(f"Tool group '{name}' does not exist")
    enabled, disabled = frozenset(enable), frozenset(disable)
    await client.initialize()
    imported = await skills_from(client) if skills else ()
    taken = sorted(skill.name for skill in imported if skill.name in skills_of(toolkit))
    if taken:
        raise RegistrationError(
            f"MCP server '{client.name}' has prompts named as skills the toolkit holds: "
            f"{', '.join(map(repr, taken))}"
        )

    def listed(listing: tuple[types.Tool, ...], old: Iterable[str]) -> tuple[AgentTool, ...]:
        """Replace the tools named ``old`` by those of ``listing``, in one change."""
        tools, rejected = mcp_tools(
            client, listing, enable=enabled, disable=disabled, trust=trusted
        )
        _report(client, rejected)
        fixed = {tool.name: p for tool in tools if (p := presets_for(presets, tool)) is not None}
        return toolkit.replace(old, tools, group=groups, presets=fixed)

    registered = listed(client.tools, ())
    if imported:
        add_skills(toolkit, *imported)

    async def follow(listing: tuple[types.Tool, ...]) -> None:
        old = [tool.name for tool in tools_of(toolkit, client.name) if tool.client is client]
        new = listed(listing, old)
        _log.info("MCP server '%s' changed its tools: now %d", client.name, len(new))

    # Keyed by the toolkit: `remove_mcp` stops following (the client then holds no reference).
    client.on_tools_changed(toolkit, follow)
    return registered


def _report(client: McpClient, rejected: tuple[RejectedTool, ...]) -> None:
    """Keep the bad tools on the client, and name each in a warning (the SDK's too)."""
    client._rejected(rejected)
    for item in client.rejected_tools:
        _log.warning("MCP server '%s' tool %r is left out: %s", client.name, item.name, item.reason)


async def remove_mcp(toolkit: ToolHost, name: str) -> tuple[str, ...]:
    """Remove every tool of the MCP server named ``name`` and close its client.

    With removal disabled (``allow_removal=False``) this is a no-op, as `Toolkit.remove` is:
    the tools stay, the client stays open, a warning is logged (logger ``ferrotool.mcp``) and
    ``()`` is returned.

    The skills it brought (``skills=True``) go too.

    Returns:
        The names of the tools removed, then the ids of the skills removed (none for a server
        not registered: nothing happens then).
    """
    tools = tools_of(toolkit, name)
    source = skill_source(name)
    gone = tuple(skill.skill_id for skill in skills_of(toolkit) if skill.source == source)
    if not tools and not gone:
        return ()
    if not toolkit.config.allow_removal:
        _log.warning("MCP server %r not removed: removal is disabled for this toolkit", name)
        return ()
    names = tuple(tool.name for tool in tools)
    toolkit.replace(names)
    if gone:

        def build(old: AgentTool | None) -> AgentTool | None:
            if not isinstance(old, LoadSkillThroughPath):
                return old
            kept = SkillSet(skill for skill in old.skills if skill.source != source)
            return LoadSkillThroughPath(kept, toolkit.groups()) if len(kept) else None

        toolkit.rebuild(LOAD_SKILL, build)
    for client in {id(tool.client): tool.client for tool in tools}.values():
        client.on_tools_changed(toolkit, None)
        await client.close()
    return names + gone


__all__ = ["register_mcp", "remove_mcp", "tools_of"]
