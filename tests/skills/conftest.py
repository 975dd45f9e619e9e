"""Skill folders in the shape of the public skill collections, built per test."""

from __future__ import annotations

from pathlib import Path

import pytest

COLLECTION: dict[str, dict[str, str | bytes]] = {
    "pdf": {
        "SKILL.md": (
            "---\nname: pdf\ndescription: Extract text and tables from PDF files; fill forms.\n"
            "license: Apache-2.0\nallowed-tools:\n  - execute_shell_command\n---\n\n"
            "# PDF\n\nRun `python scripts/extract.py <file>`; see references/forms.md.\n"
        ),
        "scripts/extract.py": "import sys\nprint('text of', sys.argv[1])\n",
        "references/forms.md": "# Forms\nFill fields in order.\n",
    },
    "docx": {
        "SKILL.md": (
            "---\nname: docx\ndescription: 'Create and edit Word documents: tracked changes.'\n"
            "---\n# DOCX\nUse scripts/pack.py and read ooxml.md first.\n"
        ),
        "ooxml.md": "# OOXML\nParts and relationships.\n",
        "scripts/pack.py": "print('packed')\n",
        "scripts/__init__.py": "",
    },
    "brand-guidelines": {
        "SKILL.md": (
            "---\nname: brand-guidelines\ndescription: Apply the brand's colours and type\n---\n"
            "Use the palette in assets/palette.txt.\n"
        ),
        "assets/palette.txt": "#112233\n#445566\n",
        "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
    },
    "webapp-testing": {
        "SKILL.md": (
            "---\nname: webapp-testing\ndescription: Test local web applications\n"
            "metadata:\n  version: 2\n  tags: [web, test]\n---\n"
            "Start the server with scripts/with_server.py, then run the checks.\n"
        ),
        "scripts/with_server.py": "print('server up')\n",
        "examples/console.py": "print('console')\n",
    },
}


def write_tree(root: Path, tree: dict[str, dict[str, str | bytes]]) -> Path:
    for skill, files in tree.items():
        for relative, content in files.items():
            target = root / skill / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """A skills folder with four skills, their scripts, references and assets."""
    root = write_tree(tmp_path / "skills", COLLECTION)
    (root / ".hidden-skill").mkdir()
    (root / ".hidden-skill" / "SKILL.md").write_text("---\nname: h\ndescription: h\n---\nh\n")
    (root / "pdf" / ".env").write_text("SECRET=1\n")
    (root / "pdf" / ".cache").mkdir()
    (root / "pdf" / ".cache" / "x.txt").write_text("x")
    (root / "not-a-skill").mkdir()
    return root
