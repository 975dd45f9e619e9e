"""`SkillFilter`: which skills, by name, a request sees."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import final


class _Base(enum.Enum):
    ALL = "all"
    NONE = "none"
    ONLY = "only"
    EXCEPT = "except"


@final
@dataclass(frozen=True, slots=True)
class SkillFilter:
    """Which skills a request sees, by skill name.

    A base filter (`all`, `none`, `only`, `except_`) decides every name; an overlay
    (`enable`, `disable`) decides only the names it lists and leaves the others to the filter
    below it. A request's filter comes from its `RuntimeContext` (a `SkillFilter` value) and
    lies over the configured one (`overlay`): a base filter there replaces the configured one,
    an overlay changes only its names.
    """

    base: _Base = _Base.ALL
    names: frozenset[str] = frozenset()
    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()
    is_overlay: bool = False

    @classmethod
    def all(cls) -> SkillFilter:
        """Every skill."""
        return cls()

    @classmethod
    def none(cls) -> SkillFilter:
        """No skill."""
        return cls(_Base.NONE)

    @classmethod
    def only(cls, *names: str) -> SkillFilter:
        """Only these skills."""
        return cls(_Base.ONLY, frozenset(names))

    @classmethod
    def except_(cls, *names: str) -> SkillFilter:
        """Every skill but these."""
        return cls(_Base.EXCEPT, frozenset(names))

    @classmethod
    def enable(cls, *names: str) -> SkillFilter:
        """An overlay that shows these skills, whatever the filter below says."""
        return cls(enabled=frozenset(names), is_overlay=True)

    @classmethod
    def disable(cls, *names: str) -> SkillFilter:
        """An overlay that hides these skills, whatever the filter below says."""
        return cls(disabled=frozenset(names), is_overlay=True)

    def allows(self, name: str) -> bool:
        """Whether the skill ``name`` is seen."""
        if name in self.disabled:
            return False
        if name in self.enabled:
            return True
        base = self.base
        if base is _Base.ALL:
            return True
        if base is _Base.NONE:
            return False
        if base is _Base.ONLY:
            return name in self.names
        return name not in self.names

    def overlay(self, runtime: SkillFilter | None) -> SkillFilter:
        """This filter with a request's filter over it (see the class)."""
        if runtime is None:
            return self
        if not runtime.is_overlay:
            return runtime
        return replace(
            self,
            enabled=(self.enabled - runtime.disabled) | runtime.enabled,
            disabled=(self.disabled - runtime.enabled) | runtime.disabled,
        )


ALL_SKILLS = SkillFilter()
"""The filter that shows every skill."""

__all__ = ["ALL_SKILLS", "SkillFilter"]
