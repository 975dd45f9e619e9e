"""SKILL.md front matter: the safe, bounded YAML reading and the line-by-line fallback."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrotool.errors import SkillError
from ferrotool.skills import AgentSkill, markdown
from ferrotool.skills.markdown import (
    MAX_FRONT_MATTER,
    parse_front_matter,
    parse_lines,
    split_front_matter,
)

MISSING = "The SKILL.md must have a YAML Front Matter including `name` and `description` fields."


def test_front_matter_and_body() -> None:
    metadata, body = split_front_matter("---\nname: a\ndescription: b\n---\n\nbody\n")
    assert dict(metadata) == {"name": "a", "description": "b"}
    assert body.strip() == "body"


def test_no_front_matter_is_all_body() -> None:
    metadata, body = split_front_matter("# just text\n")
    assert not metadata
    assert body == "# just text\n"


def test_empty_front_matter_has_no_metadata() -> None:
    metadata, body = split_front_matter("---\n---\nbody")
    assert not metadata
    assert body == "body"


@pytest.mark.parametrize(
    "text",
    [
        "---\ndescription: d\n---\nbody",
        "---\nname: n\n---\nbody",
        "---\nname: '  '\ndescription: d\n---\nbody",
        "---\nname: n\ndescription: 3\n---\nbody",
        "no front matter at all",
    ],
)
def test_missing_or_blank_name_or_description_is_refused(text: str) -> None:
    with pytest.raises(SkillError) as caught:
        AgentSkill.from_markdown(text)
    assert str(caught.value) == MISSING


@pytest.mark.parametrize("body", ["", "\n\n  \n"])
def test_empty_body_is_refused(body: str) -> None:
    with pytest.raises(SkillError, match="must have content except for the YAML Front Matter"):
        AgentSkill.from_markdown(f"---\nname: n\ndescription: d\n---\n{body}")


def test_broken_yaml_falls_back_to_lines() -> None:
    text = (
        "---\nname: pdf\ndescription: Extract text: tables, forms\nnotes: |\n  block\n"
        '  - item\n  indented: x\nempty:\nquoted: "q"\n---\nbody'
    )
    skill = AgentSkill.from_markdown(text)
    assert skill.name == "pdf"
    assert skill.description == "Extract text: tables, forms"
    assert skill.metadata.get("quoted") == "q"
    assert "notes" not in skill.metadata
    assert "empty" not in skill.metadata
    assert "indented" not in skill.metadata


def test_too_long_front_matter_is_ignored() -> None:
    filler = "x" * (MAX_FRONT_MATTER + 1)
    text = f"---\nname: a\ndescription: b\nfiller: {filler}\n---\nbody"
    with pytest.raises(SkillError, match="name"):
        AgentSkill.from_markdown(text)


def test_duplicate_keys_are_refused_by_yaml() -> None:
    # refused by the YAML reading; the line reading keeps the first
    assert parse_front_matter("name: a\nname: b\ndescription: d")["name"] == "a"


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 12):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines += ["name: bomb", "description: d"]
    # refused before anything is expanded: the skill is an error naming the bound
    with pytest.raises(SkillError, match="more than 10 aliases"):
        parse_front_matter("\n".join(lines))


def test_deep_nesting_is_bounded() -> None:
    deep = "[" * 200 + "]" * 200
    with pytest.raises(SkillError, match="200 brackets open at once"):
        parse_front_matter(f"name: n\ndescription: d\ndeep: {deep}")
    with pytest.raises(SkillError, match="nested deeper than 10"):
        parse_front_matter("name: n\ndescription: d\ndeep: " + "[" * 20 + "]" * 20)


def test_nested_values_become_json() -> None:
    metadata = parse_front_matter(
        "name: n\ndescription: d\ncreated: 2024-01-02\nmeta:\n  tags: [a, b]\n  1: skipped\n"
    )
    assert metadata["created"] == "2024-01-02"
    assert metadata["meta"] == {"tags": ["a", "b"]}


def test_non_mapping_front_matter_is_ignored() -> None:
    assert parse_front_matter("- a\n- b") == {}


def test_without_pyyaml_every_front_matter_is_read_by_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(markdown, "HAVE_YAML", False)
    skill = AgentSkill.from_markdown("---\nname: n\ndescription: d\nlist:\n  - a\n---\nbody")
    assert (skill.name, skill.description) == ("n", "d")
    assert "list" not in skill.metadata


_VALUE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r'\"#"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() and s.strip() == s and s[0] not in "|>-&*!%@`[{")


@given(name=_VALUE, description=_VALUE)
def test_line_reading_keeps_simple_values(name: str, description: str) -> None:
    parsed = parse_lines(f"name: {name}\ndescription: {description}")
    assert parsed == {"name": name, "description": description}


@given(text=st.text(max_size=300))
def test_any_text_parses_or_is_refused_with_skill_error(text: str) -> None:
    try:
        skill = AgentSkill.from_markdown(text)
    except SkillError:
        return
    assert skill.name.strip()
    assert skill.description.strip()
    assert skill.content.strip()
