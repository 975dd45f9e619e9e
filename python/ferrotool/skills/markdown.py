"""``SKILL.md``: front matter (YAML between ``---`` lines) and the instructions after it.

A skill folder comes from outside (a repository, a user's upload), so its front matter is read
with bounds: at most `MAX_FRONT_MATTER` characters (a longer block is ignored), a safe YAML
loader that builds only plain values, refuses duplicate keys, and allows at most `MAX_ALIASES`
aliases and `MAX_DEPTH` levels of nesting. Front matter past a bound (too many aliases, too
deep, an integer longer than `MAX_NUMBER_TEXT` characters or beyond 64 bits, a date that does
not exist) is a `SkillError` saying which bound. Front matter that is not valid YAML is read
line by line instead (top-level ``key: value`` lines), so a skill whose description holds an
unquoted colon still loads. Without PyYAML installed (the ``skills`` extra) every front matter
is read that way.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from ferrotool._values.json import JsonValue
from ferrotool.errors import SkillError

try:  # the ``skills`` extra
    import yaml

    HAVE_YAML: bool = True
    """Whether PyYAML is installed (else every front matter is read line by line)."""
except ImportError:  # pragma: no cover - PyYAML is a test dependency
    HAVE_YAML = False

MAX_FRONT_MATTER: Final = 16384
"""Characters of front matter read at most; a longer block is ignored as a whole."""
MAX_ALIASES: Final = 10
"""YAML aliases allowed in one front matter (bounds the expansion of shared nodes)."""
MAX_DEPTH: Final = 10
"""Nesting levels allowed in one front matter."""
MAX_NUMBER_TEXT: Final = 100
"""Characters of one integer's text read at most (a longer one is refused before it is read:
Python's own limit is 4,300 digits, and the conversion's cost grows with the length)."""
MAX_BRACKETS: Final = 64
"""Unclosed ``[`` and ``{`` allowed at any point of a front matter, counted before the YAML
reading (in quoted text too): PyYAML's scanner slows down with the square of the flow depth,
before its nesting is seen (8,000 of them took 0.36 s)."""
_BRACKETS: Final = re.compile(r"[\[\]{}]")
_INT_RANGE: Final = range(-(2**63), 2**64)
"""Integers JSON tools can hold: signed or unsigned 64 bits."""

_FRONT_MATTER: Final = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(?P<front>.*?)^---[ \t]*(?:\r?\n|\Z)(?P<body>.*)\Z",
    re.DOTALL | re.MULTILINE,
)
_EMPTY_FRONT: Final = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n---[ \t]*(?:\r?\n|\Z)(?P<body>.*)\Z", re.S
)
_LINE: Final = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)$")
_NO_METADATA: Final[Mapping[str, JsonValue]] = MappingProxyType({})


def split_front_matter(text: str) -> tuple[Mapping[str, JsonValue], str]:
    """Split ``SKILL.md`` text into its metadata and its body.

    Text without front matter is all body, with no metadata; so is front matter whose top
    level is not a mapping, or that is longer than `MAX_FRONT_MATTER`.
    """
    match = _EMPTY_FRONT.match(text)
    if match is not None:
        return _NO_METADATA, match.group("body")
    match = _FRONT_MATTER.match(text)
    if match is None:
        return _NO_METADATA, text
    front, body = match.group("front"), match.group("body")
    if len(front) > MAX_FRONT_MATTER or not front.strip():
        return _NO_METADATA, body
    return MappingProxyType(parse_front_matter(front)), body


def parse_front_matter(front: str) -> dict[str, JsonValue]:
    """The metadata of a front-matter block: safe YAML, else the line-by-line reading.

    Raises:
        SkillError: The block is YAML past one of the bounds (see the module), or holds a
            value YAML itself cannot build (a date that does not exist).
    """
    if not HAVE_YAML:
        return parse_lines(front)
    depth = deepest = 0
    for bracket in _BRACKETS.findall(front):
        depth = depth + 1 if bracket in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    if deepest > MAX_BRACKETS:
        raise SkillError(
            f"the front matter is past a bound: {deepest} brackets open at once "
            f"(at most {MAX_BRACKETS})"
        )
    try:
        loaded = yaml.load(front, Loader=_BoundedLoader)
        if not isinstance(loaded, dict):
            return {}
        return {key: _plain(value, 0) for key, value in loaded.items() if isinstance(key, str)}
    except _LimitError as error:
        raise SkillError(f"the front matter is past a bound: {error}") from None
    except yaml.YAMLError:
        return parse_lines(front)
    except (ValueError, OverflowError, TypeError, RecursionError) as error:
        # A constructor's own failure: a date that does not exist, a number it cannot build.
        raise SkillError(f"the front matter cannot be read: {error}") from None


def parse_lines(front: str) -> dict[str, JsonValue]:
    """Read top-level ``key: value`` lines, skipping what needs real YAML.

    Indented lines, list items, block scalars (``|``, ``>``) and empty values are skipped;
    matching quotes around a value are removed.
    """
    out: dict[str, JsonValue] = {}
    for line in front.splitlines():
        if not line or line[0] in " \t-#":
            continue
        match = _LINE.match(line.rstrip())
        if match is None:
            continue
        key, value = match.group(1), match.group(2).strip()
        if not value or value[0] in "|>":
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out.setdefault(key, value)
    return out


def _plain(value: object, depth: int) -> JsonValue:
    """A YAML value as JSON: scalars, string-keyed maps (in order) and lists."""
    if depth > MAX_DEPTH:
        raise _LimitError("front matter nested too deeply")
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if value not in _INT_RANGE:
            raise _LimitError(f"an integer of {value.bit_length()} bits does not fit in 64 bits")
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v, depth + 1) for k, v in value.items() if isinstance(k, str)}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    return str(value)


class _LimitError(ValueError):
    """Front matter past one of the bounds: the skill is refused."""


if HAVE_YAML:

    class _BoundedLoader(yaml.SafeLoader):
        """PyYAML's safe loader with bounds on aliases and depth, and no duplicate keys."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._aliases = 0
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise _LimitError(f"more than {MAX_ALIASES} aliases")
            self._depth += 1
            if self._depth > MAX_DEPTH + 1:
                raise _LimitError(f"nested deeper than {MAX_DEPTH}")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            text = str(node.value)
            if len(text) > MAX_NUMBER_TEXT:
                raise _LimitError(
                    f"an integer of {len(text)} digits (at most {MAX_NUMBER_TEXT} characters; "
                    "integers must fit in 64 bits)"
                )
            return super().construct_yaml_int(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: the base class reports it
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    _BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


__all__ = [
    "MAX_ALIASES",
    "MAX_BRACKETS",
    "MAX_DEPTH",
    "MAX_FRONT_MATTER",
    "MAX_NUMBER_TEXT",
    "parse_front_matter",
    "parse_lines",
    "split_front_matter",
]
