"""`AgentSkill` (one skill) and `SkillSet` (the skills one request sees, with a signature)."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, final

from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import SkillError
from ferrotool.skills.markdown import split_front_matter

SKILL_FILE: Final = "SKILL.md"
"""The file that makes a folder a skill: front matter, then the instructions."""
BASE64_PREFIX: Final = "base64:"
"""Marks a resource whose bytes are not UTF-8: the rest is their base64."""
DEFAULT_SOURCE: Final = "custom"
"""The source of a skill built in code."""

_MISSING_FIELDS: Final = (
    "The SKILL.md must have a YAML Front Matter including `name` and `description` fields."
)
_MISSING_BODY: Final = "The SKILL.md must have content except for the YAML Front Matter."
_NO_RESOURCES: Final[Mapping[str, str]] = MappingProxyType({})
_NO_METADATA: Final[Mapping[str, JsonValue]] = MappingProxyType({})


def _bad_name(name: str) -> str | None:
    """What makes ``name`` unfit to name a skill (its id names folders and groups), if any."""
    for char in name:
        if char in "/\\":
            return "a path separator"
        if unicodedata.category(char) in ("Cc", "Cs"):
            return f"a control character ({char!r})"
    return None


@final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AgentSkill:
    """A skill: instructions a model loads on demand, and the files they refer to.

    Attributes:
        name: The skill's name (tool groups bind to it: `ferrotool.skills.create_skill_tool_group`);
            no slash, backslash or control character.
        description: When to use it; the skills prompt lists it.
        content: The instructions (``SKILL.md`` without its front matter).
        resources: Files held in memory, by their path relative to the skill folder (binary
            files as ``base64:...``).
        source: Where the skill comes from (``custom``, ``filesystem-<parent>_<folder>``...).
        origin: The skill's folder on disk, if any: resources not held in memory are read
            from there on demand, confined to it.
        metadata: Every front-matter field, as JSON.
    """

    name: str
    description: str
    content: str
    resources: Mapping[str, str] = field(default_factory=lambda: _NO_RESOURCES)
    source: str = DEFAULT_SOURCE
    origin: Path | None = None
    metadata: Mapping[str, JsonValue] = field(default_factory=lambda: _NO_METADATA)
    _digest: list[bytes] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name.strip() or not self.description.strip():
            raise SkillError("The skill must have 'name' and 'description' fields.")
        bad = _bad_name(self.name)
        if bad is not None:
            raise SkillError(f"The skill's name {self.name!r} holds {bad}")
        if not self.content.strip():
            raise SkillError("The skill must have content")
        if not self.source.strip():
            raise SkillError("The skill's source must not be blank")
        if not isinstance(self.resources, MappingProxyType):
            object.__setattr__(self, "resources", MappingProxyType(dict(self.resources)))
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def skill_id(self) -> str:
        """``<name>_<source>``: what the model names the skill by."""
        return f"{self.name}_{self.source}"

    @classmethod
    def from_markdown(
        cls,
        text: str,
        *,
        resources: Mapping[str, str] | None = None,
        source: str = DEFAULT_SOURCE,
        origin: Path | None = None,
    ) -> AgentSkill:
        """Build a skill from the text of its ``SKILL.md``.

        Raises:
            SkillError: The front matter has no non-blank ``name`` or ``description`` string,
                the name holds a path separator or a control character, the front matter is
                past a bound of `ferrotool.skills.markdown`, or nothing follows it.
        """
        metadata, body = split_front_matter(text)
        name, description = metadata.get("name"), metadata.get("description")
        if not isinstance(name, str) or not name.strip():
            raise SkillError(_MISSING_FIELDS)
        if not isinstance(description, str) or not description.strip():
            raise SkillError(_MISSING_FIELDS)
        if not body.strip():
            raise SkillError(_MISSING_BODY)
        return cls(
            name=name.strip(),
            description=description.strip(),
            content=body.strip(),
            resources=resources or _NO_RESOURCES,
            source=source,
            origin=origin,
            metadata=metadata,
        )

    def digest(self) -> bytes:
        """SHA-256 of what a view materialises: name, content, sorted resources, origin.

        The source is not part of it: the same skill from another repository shares a view.
        Computed once (the skill is immutable).
        """
        if self._digest:
            return self._digest[0]
        sha = hashlib.sha256()
        sha.update(self.name.encode())
        sha.update(b"\x00")
        sha.update(self.content.encode())
        sha.update(b"\x00")
        for key in sorted(self.resources):
            sha.update(key.encode())
            sha.update(b"\x00")
            sha.update(self.resources[key].encode())
            sha.update(b"\x00")
        if self.origin is not None:
            sha.update(os.fsencode(self.origin))
        sha.update(b"\x01")
        self._digest.append(sha.digest())
        return self._digest[0]

    def with_origin(self, origin: Path) -> AgentSkill:
        """The same skill, its files on disk in ``origin``."""
        return AgentSkill(
            name=self.name,
            description=self.description,
            content=self.content,
            resources=self.resources,
            source=self.source,
            origin=origin,
            metadata=self.metadata,
        )

    def __repr__(self) -> str:
        return f"<AgentSkill {self.skill_id!r}>"


@final
class SkillSet:
    """Skills by name, in a stable order (by name), with a content signature.

    A `SkillSet` is also a repository that always answers itself, and a value a request puts
    in its `RuntimeContext` for `ContextSkillRepository`. Immutable.
    """

    __slots__ = ("_by_name", "_signature")

    def __init__(self, skills: Iterable[AgentSkill] = ()) -> None:
        by_name: dict[str, AgentSkill] = {}
        for skill in skills:
            by_name[skill.name] = skill  # a later skill of the same name wins
        self._by_name: Mapping[str, AgentSkill] = MappingProxyType(dict(sorted(by_name.items())))
        self._signature: str | None = None

    @property
    def signature(self) -> str:
        """SHA-256 (hex) over the skills' digests, in name order; computed once.

        Equal for the same skills whatever the order they were listed in; different when any
        name, content, resource key or value, or origin differs.
        """
        if self._signature is None:
            sha = hashlib.sha256()
            for skill in self._by_name.values():
                sha.update(skill.digest())
            self._signature = sha.hexdigest()
        return self._signature

    def get(self, name: str) -> AgentSkill | None:
        """The skill of that name, if any."""
        return self._by_name.get(name)

    def by_id(self, skill_id: str) -> AgentSkill | None:
        """The skill of that id, if any."""
        for skill in self._by_name.values():
            if skill.skill_id == skill_id:
                return skill
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """The skills' names, sorted."""
        return tuple(self._by_name)

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """This set (a `SkillSet` is a repository of itself)."""
        return self

    def __iter__(self) -> Iterator[AgentSkill]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"<SkillSet of {len(self._by_name)} skills>"


EMPTY_SKILLS: Final = SkillSet()
"""No skills."""

__all__ = [
    "BASE64_PREFIX",
    "DEFAULT_SOURCE",
    "EMPTY_SKILLS",
    "SKILL_FILE",
    "AgentSkill",
    "SkillSet",
]
