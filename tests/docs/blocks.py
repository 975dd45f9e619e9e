"""The code blocks of the documentation's pages and of the README, and the output each one shows.

A Python block runs as it is, by ``exec``, unless the line before it names the test that runs it
with a stand-in (a local model server, an MCP server, a sandbox)::

    <!-- example: run by tests/mcp/test_mcp_readme.py -->

Such a block is left to that test, which selects it with `marked`; ``tests/docs`` checks that
every marked block is selected by the test it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGES = ROOT / "docs"
README = ROOT / "README.md"

_BLOCK = re.compile(
    r"(?:^<!-- example: run by (?P<runner>\S+) -->\n)?"
    r"^```python\n(?P<code>.*?)^```\n"
    r"(?:\n```text title=\"Output\"\n(?P<output>.*?)^```\n)?",
    re.DOTALL | re.MULTILINE,
)
_SHELL = re.compile(r"^```bash\n(?P<code>.*?)^```\n", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """A Python block of a page, the output block that follows it, and the test that runs it."""

    page: Path
    index: int
    code: str
    output: str | None
    runner: str | None
    """The test file that runs the block with a stand-in (relative to the root), or `None`."""

    def run(self, code: str | None = None) -> None:
        """Run the block (or ``code``, the block with a stand-in) as a program of its own.

        Compiled without this module's ``from __future__ import annotations``, so that its
        annotations are evaluated as a reader's program evaluates them.
        """
        program = compile(
            self.code if code is None else code, str(self.page), "exec", dont_inherit=True
        )
        exec(program, {"__name__": "docs_example"})

    @property
    def name(self) -> str:
        if self.page == README:
            return f"README-{self.index}"
        return f"{self.page.relative_to(PAGES).with_suffix('')}-{self.index}"


def pages() -> list[Path]:
    """Every page of the site, then the README."""
    return [*sorted(PAGES.rglob("*.md")), README]


def page_examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    return [
        Example(page, index, match["code"], match["output"], match["runner"])
        for index, match in enumerate(_BLOCK.finditer(text))
    ]


def examples() -> list[Example]:
    return [example for page in pages() for example in page_examples(page)]


def plain_examples() -> list[Example]:
    """The examples that run as they are."""
    return [example for example in examples() if example.runner is None]


def marked(runner: str, containing: str) -> Example:
    """The one example marked as run by ``runner`` that holds ``containing``."""
    (found,) = [
        example for example in examples() if example.runner == runner and containing in example.code
    ]
    return found


def shell_commands(page: Path) -> list[str]:
    """Every command of a page's ``bash`` blocks (continuations joined, ``&&`` split)."""
    commands: list[str] = []
    for match in _SHELL.finditer(page.read_text(encoding="utf-8")):
        joined = re.sub(r"\\\n\s*", " ", match["code"])
        for line in joined.splitlines():
            commands.extend(part.strip() for part in line.split("&&") if part.strip())
    return commands
