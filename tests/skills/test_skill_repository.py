"""Skill repositories: folders on disk, package resources, the request's context; filters."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrotool import RuntimeContext
from ferrotool.errors import SkillError
from ferrotool.skills import (
    BASE64_PREFIX,
    AgentSkill,
    ContextSkillRepository,
    FileSystemSkillRepository,
    PackageSkillRepository,
    SkillFilter,
    SkillSet,
    merge_skills,
)


def _skill(name: str, content: str = "do it", source: str = "custom") -> AgentSkill:
    return AgentSkill(name=name, description=f"{name} skill", content=content, source=source)


def test_skill_id_is_name_and_source() -> None:
    assert _skill("data-analysis", source="builtin").skill_id == "data-analysis_builtin"
    assert _skill("x").source == "custom"
    assert _skill("x").skill_id == "x_custom"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", " ", "'name' and 'description'"),
        ("description", "", "'name' and 'description'"),
        ("content", "  ", "must have content"),
    ],
)
def test_skill_refuses_blank_fields(field: str, value: str, message: str) -> None:
    fields = {"name": "n", "description": "d", "content": "c", field: value}
    with pytest.raises(SkillError, match=message):
        AgentSkill(
            name=fields["name"], description=fields["description"], content=fields["content"]
        )


def test_file_system_repository_reads_direct_subfolders(collection: Path) -> None:
    repository = FileSystemSkillRepository(collection)
    skills = repository.skills()
    assert skills.names == ("brand-guidelines", "docx", "pdf", "webapp-testing")
    pdf = skills.get("pdf")
    assert pdf is not None
    assert pdf.source == f"filesystem-{collection.parent.name}_skills"
    assert pdf.skill_id == f"pdf_filesystem-{collection.parent.name}_skills"
    assert pdf.origin == collection / "pdf"
    assert sorted(pdf.resources) == ["references/forms.md", "scripts/extract.py"]  # no hidden
    assert pdf.content.startswith("# PDF")
    logo = skills.get("brand-guidelines")
    assert logo is not None
    assert logo.resources["assets/logo.png"].startswith(BASE64_PREFIX)
    assert logo.resources["assets/palette.txt"] == "#112233\n#445566\n"


def test_file_system_repository_refuses_a_file_as_base(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        FileSystemSkillRepository(tmp_path / "f")


def test_broken_skill_folder_is_skipped(collection: Path) -> None:
    (collection / "broken").mkdir()
    (collection / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    assert "broken" not in FileSystemSkillRepository(collection).skills()


def test_cache_keeps_the_same_skill_until_skill_md_changes(collection: Path) -> None:
    repository = FileSystemSkillRepository(collection)
    first = repository.skills()
    again = repository.skills()
    assert again is first
    pdf = first.get("pdf")
    skill_md = collection / "pdf" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more line.\n")
    changed = repository.skills()
    assert changed is not first
    assert changed.get("pdf") is not pdf
    assert changed.get("docx") is first.get("docx")
    assert "One more line." in (changed.get("pdf") or pdf).content  # type: ignore[union-attr]


def test_same_size_edit_is_seen_by_its_modification_time(collection: Path) -> None:
    repository = FileSystemSkillRepository(collection)
    before = repository.skills().get("docx")
    skill_md = collection / "docx" / "SKILL.md"
    text = skill_md.read_text()
    skill_md.write_text(text.replace("pack.py", "pick.py"))
    stat = skill_md.stat()
    os.utime(skill_md, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    after = repository.skills().get("docx")
    assert after is not before
    assert after is not None
    assert "pick.py" in after.content


def test_removed_skill_folder_leaves_the_set(collection: Path) -> None:
    repository = FileSystemSkillRepository(collection)
    assert "docx" in repository.skills()
    (collection / "docx" / "SKILL.md").unlink()
    assert "docx" not in repository.skills()


def test_lazy_repository_reads_no_resources(collection: Path) -> None:
    skills = FileSystemSkillRepository(collection, lazy=True).skills()
    pdf = skills.get("pdf")
    assert pdf is not None
    assert not pdf.resources
    assert pdf.origin is not None


def test_symlinked_skill_folders_are_skipped(collection: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "linked").mkdir(parents=True)
    (elsewhere / "linked" / "SKILL.md").write_text("---\nname: linked\ndescription: d\n---\nx\n")
    os.symlink(elsewhere / "linked", collection / "linked")
    assert "linked" not in FileSystemSkillRepository(collection).skills()


def test_package_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "shipped_skills_pkg"
    skill = package / "skills" / "greet"
    (skill / "refs").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (skill / "SKILL.md").write_text(
        textwrap.dedent("""\
        ---
        name: greet
        description: Greet people
        ---
        Say hello; see refs/tone.md.
        """)
    )
    (skill / "refs" / "tone.md").write_text("warm\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        skills = PackageSkillRepository("shipped_skills_pkg").skills()
    finally:
        sys.modules.pop("shipped_skills_pkg", None)
    greet = skills.get("greet")
    assert greet is not None
    assert greet.source == "package-shipped_skills_pkg_skills"
    assert dict(greet.resources) == {"refs/tone.md": "warm\n"}


def test_context_repository_reads_the_request() -> None:
    session = SkillSet([_skill("mine")])
    repository = ContextSkillRepository()
    assert repository.skills(RuntimeContext.of(session)) is session
    assert len(repository.skills(RuntimeContext())) == 0
    assert len(repository.skills(None)) == 0


def test_merge_later_repository_wins_by_name() -> None:
    low = SkillSet([_skill("a", "low a", source="low"), _skill("b", "low b", source="low")])
    high = SkillSet([_skill("a", "high a", source="high")])
    merged = merge_skills([low, high])
    assert merged.names == ("a", "b")
    assert merged.get("a") is high.get("a")
    assert merged.get("b") is low.get("b")


def test_a_failing_repository_is_skipped() -> None:
    class Broken:
        def skills(self, context: RuntimeContext | None = None) -> SkillSet:
            raise OSError("gone")

    merged = merge_skills([Broken(), SkillSet([_skill("a")])])
    assert merged.names == ("a",)


@pytest.mark.parametrize(
    ("base", "runtime", "allowed"),
    [
        (SkillFilter.all(), None, {"a", "b", "c", "d"}),
        (SkillFilter.none(), None, set()),
        (SkillFilter.only("a", "b", "c"), None, {"a", "b", "c"}),
        (SkillFilter.only("a", "b", "c"), SkillFilter.disable("b"), {"a", "c"}),
        (SkillFilter.except_("a", "b"), SkillFilter.enable("a"), {"a", "c", "d"}),
        (SkillFilter.except_("a"), SkillFilter.only("d"), {"d"}),
        (SkillFilter.none(), SkillFilter.enable("c"), {"c"}),
        (SkillFilter.disable("a"), SkillFilter.enable("a"), {"a", "b", "c", "d"}),
    ],
)
def test_skill_filter(base: SkillFilter, runtime: SkillFilter | None, allowed: set[str]) -> None:
    rule = base.overlay(runtime)
    assert {name for name in "abcd" if rule.allows(name)} == allowed


def test_signature_ignores_listing_order_and_source() -> None:
    a, b = _skill("a"), _skill("b")
    assert SkillSet([a, b]).signature == SkillSet([b, a]).signature
    assert SkillSet([a]).signature == SkillSet([_skill("a", source="other")]).signature


@pytest.mark.parametrize(
    "change",
    [
        {"content": "other"},
        {"resources": {"r.txt": "1"}},
        {"resources": {"r.txt": "2"}},
        {"resources": {"s.txt": "1"}},
        {"origin": Path("/somewhere")},
    ],
)
def test_signature_changes_with_content(change: dict[str, object]) -> None:
    base = {"name": "a", "description": "d", "content": "c", "resources": {"r.txt": "0"}}
    before = SkillSet([AgentSkill(**base)])  # type: ignore[arg-type]
    after = SkillSet([AgentSkill(**{**base, **change})])  # type: ignore[arg-type]
    assert before.signature != after.signature


_NAMES = st.sampled_from(["a", "b", "c", "d", "e"])


@given(
    names=st.lists(_NAMES, min_size=1, max_size=5, unique=True),
    contents=st.lists(st.text(min_size=1, max_size=5).filter(str.strip), min_size=5, max_size=5),
    data=st.data(),
)
def test_signature_is_a_function_of_the_named_contents(
    names: list[str], contents: list[str], data: st.DataObject
) -> None:
    skills = [_skill(name, contents[index]) for index, name in enumerate(names)]
    shuffled = data.draw(st.permutations(skills))
    assert SkillSet(skills).signature == SkillSet(shuffled).signature
    changed = data.draw(st.sampled_from(range(len(skills))))
    edited = list(skills)
    edited[changed] = _skill(names[changed], contents[changed] + "!")
    assert SkillSet(edited).signature != SkillSet(skills).signature


_FILTERS = st.one_of(
    st.builds(SkillFilter.all),
    st.builds(SkillFilter.none),
    st.builds(lambda n: SkillFilter.only(*n), st.frozensets(_NAMES)),
    st.builds(lambda n: SkillFilter.except_(*n), st.frozensets(_NAMES)),
    st.builds(lambda n: SkillFilter.enable(*n), st.frozensets(_NAMES)),
    st.builds(lambda n: SkillFilter.disable(*n), st.frozensets(_NAMES)),
)


@given(base=_FILTERS, runtime=st.one_of(st.none(), _FILTERS), name=_NAMES)
def test_overlay_law(base: SkillFilter, runtime: SkillFilter | None, name: str) -> None:
    combined = base.overlay(runtime)
    if runtime is None:
        assert combined == base
    elif not runtime.is_overlay:
        assert combined.allows(name) == runtime.allows(name)
    elif name in runtime.enabled or name in runtime.disabled:
        assert combined.allows(name) == (name in runtime.enabled)
    else:
        assert combined.allows(name) == base.allows(name)
