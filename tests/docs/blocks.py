"""The code blocks of the documentation's pages, and the output each one shows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGES = ROOT / "docs"

_BLOCK = re.compile(
    r"^```python\n(?P<code>.*?)^```\n"
    r"(?:\n```text title=\"Output\"\n(?P<output>.*?)^```\n)?",
    re.DOTALL | re.MULTILINE,
)
_SHELL = re.compile(r"^```bash\n(?P<code>.*?)^```\n", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """A Python block of a page, and the output block that follows it, if any."""

    page: Path
    index: int
    code: str
    output: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(PAGES).with_suffix('')}-{self.index}"


def pages() -> list[Path]:
    return sorted(PAGES.rglob("*.md"))


def examples() -> list[Example]:
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for index, match in enumerate(_BLOCK.finditer(text)):
            found.append(Example(page, index, match["code"], match["output"]))
    return found


def shell_commands() -> list[str]:
    """Every command of the pages' ``bash`` blocks (continuations joined, ``&&`` split)."""
    commands: list[str] = []
    for page in pages():
        for match in _SHELL.finditer(page.read_text(encoding="utf-8")):
            joined = re.sub(r"\\\n\s*", " ", match["code"])
            for line in joined.splitlines():
                commands.extend(part.strip() for part in line.split("&&") if part.strip())
    return commands
