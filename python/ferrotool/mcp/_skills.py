"""Skills over MCP, both ways: served as prompts and resources, imported from them.

A served toolkit's skills are prompts and resources, and a server's prompts and resources are
skills of a toolkit that registers it with ``register_mcp(..., skills=True)``.

Serving (`ferrotool.mcp.server`):

Each skill is a prompt named by its id (``prompts/get`` gives its instructions as a user
message), and each of its files a resource ``skill://{skillId}/{path}`` (``SKILL.md`` among
them), listed with a guessed MIME type and described by the template ``skill://{skillId}/{path}``.
A resource is read by the toolkit's own skill loader (`LoadSkillThroughPath.read_resource`), with
its confinement: a path that is not plain and relative, a file outside the skill's folder or
reached through a symlink out of it, a file larger than `MAX_RESOURCE_BYTES`: each is an MCP
error saying so, and nothing is read.

Importing (`skills_from`): each prompt of a server becomes a skill named as the prompt, its
source ``mcp-{server}`` (so its id is ``{prompt}_mcp-{server}``), its description the prompt's,
its instructions the text of ``prompts/get``; the resources ``skill://{prompt}/{path}``
become its files, read at registration (at most `MAX_RESOURCE_BYTES` each, `MAX_IMPORTED`
bytes in all). A prompt that cannot be a skill (one with a required argument, no text, a name a
skill cannot have) is left out, named in a warning on the ``ferrotool.mcp`` logger with why.
"""

from __future__ import annotations

import itertools
import logging
import mimetypes
import urllib.parse
from collections.abc import Iterable
from typing import Final

import mcp_types as types
from mcp import MCPError

from ferrotool._registry.host import ToolReader
from ferrotool.errors import McpError, SkillError
from ferrotool.mcp.client import McpClient
from ferrotool.skills.loader import LoadSkillThroughPath
from ferrotool.skills.prompt import LOAD_SKILL
from ferrotool.skills.resources import (
    MAX_RESOURCE_BYTES,
    MAX_WALKED,
    clean_path,
    disk_files,
    skill_markdown,
)
from ferrotool.skills.skill import BASE64_PREFIX, SKILL_FILE, AgentSkill, SkillSet

SKILL_SCHEME: Final = "skill"
"""The URI scheme of a skill's files: ``skill://{skillId}/{path}``."""
SKILL_TEMPLATE: Final = f"{SKILL_SCHEME}://{{skillId}}/{{path}}"
"""The resource template of every skill's files."""
RESOURCE_NOT_FOUND: Final = -32002
"""The MCP error code of a resource that cannot be read."""
MAX_IMPORTED: Final = 64 * 1024 * 1024
"""Bytes of resources one server's skills bring at most (the rest are left out, with a warning)."""
_log: Final = logging.getLogger("ferrotool.mcp")
_SAFE: Final = "-._~!$&'()*+,;=:@"
"""Characters left as they are in an id or a path segment of a URI (RFC 3986 ``pchar``)."""


def skill_uri(skill_id: str, path: str) -> str:
    """The URI of a skill's file: ``skill://{skillId}/{path}``, each part percent-encoded."""
    encoded = "/".join(urllib.parse.quote(segment, safe=_SAFE) for segment in path.split("/"))
    return f"{SKILL_SCHEME}://{urllib.parse.quote(skill_id, safe=_SAFE)}/{encoded}"


def parse_skill_uri(uri: str) -> tuple[str, str] | None:
    """The skill id and the path of a ``skill://`` URI (the id decoded), or ``None``.

    The path is decoded once; `clean_path` refuses what still decodes to a traversal.
    """
    prefix = f"{SKILL_SCHEME}://"
    if not uri.startswith(prefix):
        return None
    skill_id, slash, path = uri[len(prefix) :].partition("/")
    if not slash or not skill_id or not path:
        return None
    return urllib.parse.unquote(skill_id), urllib.parse.unquote(path)


def _loader(tools: ToolReader) -> LoadSkillThroughPath | None:
    loader = tools.get_tool(LOAD_SKILL)
    return loader if isinstance(loader, LoadSkillThroughPath) else None


def prompts(skills: SkillSet) -> types.ListPromptsResult:
    """One prompt per skill, named by its id, without arguments."""
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(name=skill.skill_id, title=skill.name, description=skill.description)
            for skill in skills
        ]
    )


def prompt(skills: SkillSet, name: str) -> types.GetPromptResult:
    """The skill's instructions as one user message.

    Raises:
        MCPError: No skill has the id ``name`` (``INVALID_PARAMS``, naming it).
    """
    skill = skills.by_id(name)
    if skill is None:
        known = ", ".join(repr(one.skill_id) for one in skills) or "none"
        raise MCPError(types.INVALID_PARAMS, f"unknown prompt {name!r} (the skills: {known})")
    message = types.PromptMessage(role="user", content=types.TextContent(text=skill.content))
    return types.GetPromptResult(description=skill.description, messages=[message])


def _files(skill: AgentSkill) -> list[str]:
    """``SKILL.md``, the files held in memory, then those on disk (a bounded walk)."""
    names: dict[str, None] = {SKILL_FILE: None}
    for key in sorted(skill.resources):
        if clean_path(key) is not None:
            names.setdefault(key, None)
    if skill.origin is not None:
        for key in itertools.islice(disk_files(skill.origin), MAX_WALKED):
            names.setdefault(key, None)
    return list(names)


def _mime(path: str) -> str | None:
    if path == SKILL_FILE or path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path, strict=False)[0]


def resources(skills: SkillSet) -> types.ListResourcesResult:
    """Every skill's files as ``skill://`` resources."""
    listed = [
        types.Resource(
            name=f"{skill.skill_id}/{path}",
            title=f"{skill.name}: {path}",
            uri=skill_uri(skill.skill_id, path),
            mime_type=_mime(path),
            description=skill.description if path == SKILL_FILE else None,
        )
        for skill in skills
        for path in _files(skill)
    ]
    return types.ListResourcesResult(resources=listed)


def templates() -> types.ListResourceTemplatesResult:
    """The one template of the skills' files."""
    template = types.ResourceTemplate(
        name="skill-file",
        title="A file of a skill",
        uri_template=SKILL_TEMPLATE,
        description=(
            "A file of a skill, by the skill's id and the file's path in its folder "
            f"({SKILL_FILE} holds the instructions)."
        ),
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


def read(tools: ToolReader, uri: str) -> types.ReadResourceResult:
    """A skill's file, read by the toolkit's skill loader (see the module).

    Raises:
        MCPError: The URI is not a ``skill://`` one, names no skill, or the file is refused or
            missing (the message says which).
    """
    parsed = parse_skill_uri(uri)
    if parsed is None:
        raise MCPError(RESOURCE_NOT_FOUND, f"resource {uri!r} not found: expected {SKILL_TEMPLATE}")
    skill_id, path = parsed
    loader = _loader(tools)
    skill = None if loader is None else loader.skills.by_id(skill_id)
    if loader is None or skill is None:
        raise MCPError(RESOURCE_NOT_FOUND, f"resource {uri!r} not found: no skill {skill_id!r}")
    if path == SKILL_FILE:
        return _contents(uri, path, skill_markdown(skill))
    if clean_path(path) is None:
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"resource {uri!r} refused: {path!r} is not a plain relative path in the skill "
            "(no '.', '..', empty or hidden segment, absolute or drive path, NUL, or "
            "percent-encoding of these)",
        )
    content = loader.read_resource(skill_id, path)
    if content is None:
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"resource {uri!r} not found, or refused: a skill's file must be in its folder "
            f"(no symlink out of it) and at most {MAX_RESOURCE_BYTES} bytes",
        )
    return _contents(uri, path, content)


def _contents(uri: str, path: str, content: str) -> types.ReadResourceResult:
    mime = _mime(path)
    item: types.TextResourceContents | types.BlobResourceContents
    if content.startswith(BASE64_PREFIX):
        item = types.BlobResourceContents(
            uri=uri,
            mime_type=mime or "application/octet-stream",
            blob=content[len(BASE64_PREFIX) :],
        )
    else:
        item = types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=content)
    return types.ReadResourceResult(contents=[item])


# - importing: a server's prompts and resources as skills -


def skill_source(server: str) -> str:
    """The source of the skills imported from the MCP server named ``server``."""
    return f"mcp-{server}"


async def skills_from(client: McpClient) -> tuple[AgentSkill, ...]:
    """The server's prompts as skills, their ``skill://`` resources as their files.

    Raises:
        McpError: The server failed to list or give its prompts or resources.
    """
    listed = await client.list_prompts()
    if not listed:
        return ()
    files: dict[str, list[tuple[str, str]]] = {}
    for resource in await client.list_resources():
        parsed = parse_skill_uri(str(resource.uri))
        if parsed is not None and parsed[1] != SKILL_FILE:
            files.setdefault(parsed[0], []).append((parsed[1], str(resource.uri)))
    budget = [MAX_IMPORTED]
    skills: list[AgentSkill] = []
    for item in listed:
        required = [arg.name for arg in item.arguments or () if arg.required]
        if required:
            _left_out(client, item.name, f"it needs the arguments {', '.join(required)}")
            continue
        given = await client.get_prompt(item.name)
        content = "\n\n".join(
            message.content.text
            for message in given.messages
            if isinstance(message.content, types.TextContent)
        )
        description = item.description or given.description or item.title or item.name
        held = await _fetched(client, item.name, files.get(item.name, ()), budget)
        try:
            skill = AgentSkill(
                name=item.name,
                description=description,
                content=content,
                resources=held,
                source=skill_source(client.name),
            )
        except SkillError as error:
            _left_out(client, item.name, str(error))
            continue
        skills.append(skill)
    return tuple(skills)


async def _fetched(
    client: McpClient, name: str, files: Iterable[tuple[str, str]], budget: list[int]
) -> dict[str, str]:
    """A prompt's ``skill://`` files, read now within the budget left (``budget[0]``)."""
    held: dict[str, str] = {}
    for path, uri in files:
        if clean_path(path) is None:
            _log.warning(
                "MCP server '%s' skill %r: file %r left out: not a plain relative path",
                client.name,
                name,
                path,
            )
            continue
        try:
            result = await client.read_resource(uri)
        except McpError as error:
            _log.warning(
                "MCP server '%s' skill %r: file %r left out: %s", client.name, name, path, error
            )
            continue
        for contents in result.contents[:1]:
            if isinstance(contents, types.BlobResourceContents):
                size = len(contents.blob) * 3 // 4
                text = BASE64_PREFIX + contents.blob
            else:
                size = len(contents.text.encode("utf-8", "surrogatepass"))
                text = contents.text
            if size > min(MAX_RESOURCE_BYTES, budget[0]):
                _log.warning(
                    "MCP server '%s' skill %r: file %r left out: %d bytes, past the bound",
                    client.name,
                    name,
                    path,
                    size,
                )
                continue
            budget[0] -= size
            held[path] = text
    return held


def _left_out(client: McpClient, name: str, why: str) -> None:
    _log.warning("MCP server '%s' prompt %r is not a skill: %s", client.name, name, why)


__all__ = [
    "MAX_IMPORTED",
    "RESOURCE_NOT_FOUND",
    "SKILL_SCHEME",
    "SKILL_TEMPLATE",
    "parse_skill_uri",
    "prompt",
    "prompts",
    "read",
    "resources",
    "skill_source",
    "skill_uri",
    "skills_from",
    "templates",
]
