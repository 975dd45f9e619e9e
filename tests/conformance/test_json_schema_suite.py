"""The JSON Schema Test Suite through `JsonSchemaValidator`, for every draft it supports.

The required tests of drafts 2020-12, 2019-09, 7 and 4 (each folder compiled as its draft), and
the optional tests of 2020-12 (``optional/`` with ``optional/format/``) with formats asserted.
Every group ("case") of every file is one pytest test; each of its tests is checked three ways
(``is_valid``, ``validate`` and ``errors``). The suite's ``remotes/`` are served as resources
under ``http://localhost:1234/``.

Known failures are listed in ``expected_failures.toml`` (``[[failure]]`` tables with ``file``,
the path under the suite's ``tests/`` such as ``draft7/ref.json``, ``case``, ``test`` and
``reason``); the list is strict: a listed test that passes, or a listed entry that names no
test, fails the run.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

import ferrotool

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SUITE = SHARED / "corpora" / "json-schema-test-suite"
TESTS_ROOT = SUITE / "tests"
REMOTES_DIR = SUITE / "remotes"
EXPECTED_FAILURES = Path(__file__).resolve().parent / "expected_failures.toml"
REMOTE_BASE = "http://localhost:1234/"

Key = tuple[str, str, str]  # (file under tests/, case description, test description)
Draft = Literal["draft2020-12", "draft2019-09", "draft7", "draft4"]


@dataclass(frozen=True)
class Run:
    """One folder of the suite and how its schemas are compiled."""

    folder: str
    draft: Draft
    deep: bool = False
    assert_formats: bool = False
    total: int = 0


RUNS = (
    Run("draft2020-12", "draft2020-12", total=1299),
    Run("draft2020-12/optional", "draft2020-12", deep=True, assert_formats=True, total=926),
    Run("draft2019-09", "draft2019-09", total=1259),
    Run("draft7", "draft7", total=927),
    Run("draft4", "draft4", total=618),
)


def _suite_files(run: Run) -> list[Path]:
    folder = TESTS_ROOT / run.folder
    if not folder.is_dir():
        return []
    return sorted(folder.rglob("*.json") if run.deep else folder.glob("*.json"))


def _load_cases() -> list[tuple[Run, str, int, dict[str, Any]]]:
    cases = []
    for run in RUNS:
        for path in _suite_files(run):
            file = path.relative_to(TESTS_ROOT).as_posix()
            for index, case in enumerate(json.loads(path.read_text(encoding="utf-8"))):
                cases.append((run, file, index, case))
    return cases


def _load_remotes() -> dict[str, Any]:
    remotes: dict[str, Any] = {}
    if REMOTES_DIR.is_dir():
        for path in sorted(REMOTES_DIR.rglob("*.json")):
            uri = REMOTE_BASE + path.relative_to(REMOTES_DIR).as_posix()
            remotes[uri] = json.loads(path.read_text(encoding="utf-8"))
    return remotes


def _load_expected() -> dict[Key, str]:
    if not EXPECTED_FAILURES.is_file():
        return {}
    data = tomllib.loads(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    entries = data.get("failure", [])
    expected: dict[Key, str] = {}
    for entry in entries:
        key = (entry["file"], entry["case"], entry["test"])
        expected[key] = entry.get("reason", "")
    return expected


CASES = _load_cases()
REMOTES = _load_remotes()
EXPECTED = _load_expected()


def _compile(run: Run, schema: object) -> ferrotool.JsonSchemaValidator:
    return ferrotool.JsonSchemaValidator(
        schema, draft=run.draft, resources=REMOTES, assert_formats=run.assert_formats
    )


def _run_case(run: Run, file: str, case: Mapping[str, Any]) -> dict[Key, str]:
    """Run one group; return the failing tests with a short reason each."""
    failures: dict[Key, str] = {}
    description = case["description"]
    try:
        validator = _compile(run, case["schema"])
    except Exception as exc:  # any failure to compile fails every test of the group
        for test in case["tests"]:
            failures[(file, description, test["description"])] = (
                f"compile error {type(exc).__name__}: {exc}"
            )
        return failures
    for test in case["tests"]:
        key = (file, description, test["description"])
        data, valid = test["data"], test["valid"]
        problems = []
        try:
            verdict = validator.is_valid(data)
            if verdict is not valid:
                problems.append(f"is_valid returned {verdict!r}")
            try:
                validator.validate(data)
                raised = False
            except ferrotool.ValidationError as exc:
                raised = True
                if not exc.errors:
                    problems.append("validate raised a ValidationError with no errors")
            if raised is valid:
                problems.append(f"validate {'raised' if raised else 'did not raise'}")
            errors = validator.errors(data)
            if (errors == ()) is not valid:
                problems.append(f"errors() returned {len(errors)} errors")
        except Exception as exc:  # a crash is a failure of this test, not of the run
            problems.append(f"crashed with {type(exc).__name__}: {exc}")
        if problems:
            failures[key] = f"expected valid={valid}: " + "; ".join(problems)
    return failures


def test_suite_is_present() -> None:
    assert TESTS_ROOT.is_dir(), (
        f"JSON Schema Test Suite not found at {TESTS_ROOT}; the shared corpora are expected in "
        f"{SHARED} (next to the repository root)"
    )
    for run in RUNS:
        assert len(_suite_files(run)) >= 10, f"only {len(_suite_files(run))} {run.folder} files"
    assert REMOTES, f"no remote documents found under {REMOTES_DIR}"


@pytest.mark.parametrize(
    ("run", "file", "index", "case"),
    CASES,
    ids=[f"{file[:-5]}-{index}" for _, file, index, _ in CASES],
)
def test_case(run: Run, file: str, index: int, case: dict[str, Any]) -> None:
    failures = _run_case(run, file, case)
    listed = {
        key: reason for key, reason in EXPECTED.items() if key[:2] == (file, case["description"])
    }
    unexpected = {key: why for key, why in failures.items() if key not in listed}
    fixed = sorted(key[2] for key in listed if key not in failures)
    messages = [f"FAILED {test!r}: {why}" for (_, _, test), why in unexpected.items()]
    messages += [f"PASSED but listed in expected_failures.toml: {test!r}" for test in fixed]
    assert not messages, f"{file} case {index} {case['description']!r}:\n" + "\n".join(messages)


def test_expected_failures_name_real_tests() -> None:
    known = {
        (file, case["description"], test["description"])
        for _, file, _, case in CASES
        for test in case["tests"]
    }
    stale = sorted(key for key in EXPECTED if key not in known)
    assert not stale, f"expected_failures.toml lists tests that do not exist: {stale}"
    assert all(reason for reason in EXPECTED.values()), "every expected failure needs a reason"


@pytest.mark.parametrize("run", RUNS, ids=[run.folder for run in RUNS])
def test_pass_count(run: Run) -> None:
    cases = [(file, case) for case_run, file, _, case in CASES if case_run == run]
    total = sum(len(case["tests"]) for _, case in cases)
    failures: dict[Key, str] = {}
    for file, case in cases:
        failures.update(_run_case(run, file, case))
    passed = total - len(failures)
    listed = {key for key in EXPECTED if key[0].startswith(run.folder + "/")}
    if not run.deep:
        listed = {key for key in listed if "/" not in key[0][len(run.folder) + 1 :]}
    print(f"{run.folder}: {passed}/{total} passed, {len(listed)} expected failures")
    assert total == run.total, f"{total} tests found in {run.folder}, expected {run.total}"
    assert set(failures) == listed, (
        f"{passed}/{total} passed; expected exactly {total - len(listed)} "
        f"({len(listed)} listed failures)"
    )
