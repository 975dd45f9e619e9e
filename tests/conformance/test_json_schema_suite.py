"""The JSON Schema Test Suite, draft 2020-12 required tests, through `JsonSchemaValidator`.

Every group ("case") of every ``tests/draft2020-12/*.json`` file (not ``optional/``) is one
pytest test; each of its tests is checked three ways (``is_valid``, ``validate`` and ``errors``).
The suite's ``remotes/`` are served as resources under ``http://localhost:1234/``.

Known failures are listed in ``expected_failures.toml`` (``[[failure]]`` tables with ``file``,
``case``, ``test`` and ``reason``); the list is strict: a listed test that passes, or a listed
entry that names no test, fails the run.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import ferrotool

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SUITE = SHARED / "corpora" / "json-schema-test-suite"
TESTS_DIR = SUITE / "tests" / "draft2020-12"
REMOTES_DIR = SUITE / "remotes"
EXPECTED_FAILURES = Path(__file__).resolve().parent / "expected_failures.toml"
REMOTE_BASE = "http://localhost:1234/"

Key = tuple[str, str, str]  # (file name, case description, test description)


def _suite_files() -> list[Path]:
    if not TESTS_DIR.is_dir():
        return []
    return sorted(TESTS_DIR.glob("*.json"))


def _load_cases() -> list[tuple[str, int, dict[str, Any]]]:
    cases = []
    for path in _suite_files():
        for index, case in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            cases.append((path.name, index, case))
    return cases


def _load_remotes() -> dict[str, Any]:
    remotes: dict[str, Any] = {}
    if REMOTES_DIR.is_dir():
        for path in sorted(REMOTES_DIR.rglob("*.json")):
            uri = REMOTE_BASE + path.relative_to(REMOTES_DIR).as_posix()
            remotes[uri] = json.loads(path.read_text(encoding="utf-8"))
    return remotes


def _file_key(name: str) -> str:
    """``ref.json``, ``draft2020-12/ref.json`` and ``ref`` all name the same file."""
    base = Path(name).name
    return base if base.endswith(".json") else base + ".json"


def _load_expected() -> dict[Key, str]:
    if not EXPECTED_FAILURES.is_file():
        return {}
    data = tomllib.loads(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    entries = data.get("failure", [])
    expected: dict[Key, str] = {}
    for entry in entries:
        key = (_file_key(entry["file"]), entry["case"], entry["test"])
        expected[key] = entry.get("reason", "")
    return expected


CASES = _load_cases()
REMOTES = _load_remotes()
EXPECTED = _load_expected()


def _compile(schema: object) -> ferrotool.JsonSchemaValidator:
    return ferrotool.JsonSchemaValidator(schema, resources=REMOTES)


def _run_case(file: str, case: Mapping[str, Any]) -> dict[Key, str]:
    """Run one group; return the failing tests with a short reason each."""
    failures: dict[Key, str] = {}
    description = case["description"]
    try:
        validator = _compile(case["schema"])
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
    assert TESTS_DIR.is_dir(), (
        f"JSON Schema Test Suite not found at {TESTS_DIR}; the shared corpora are expected in "
        f"{SHARED} (next to the repository root)"
    )
    assert len(_suite_files()) >= 40, f"only {len(_suite_files())} draft 2020-12 files found"
    assert REMOTES, f"no remote documents found under {REMOTES_DIR}"


@pytest.mark.parametrize(
    ("file", "index", "case"),
    CASES,
    ids=[f"{file[:-5]}-{index}" for file, index, _ in CASES],
)
def test_case(file: str, index: int, case: dict[str, Any]) -> None:
    failures = _run_case(file, case)
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
        for file, _, case in CASES
        for test in case["tests"]
    }
    stale = sorted(key for key in EXPECTED if key not in known)
    assert not stale, f"expected_failures.toml lists tests that do not exist: {stale}"
    assert all(reason for reason in EXPECTED.values()), "every expected failure needs a reason"


def test_pass_count() -> None:
    total = sum(len(case["tests"]) for _, _, case in CASES)
    failures: dict[Key, str] = {}
    for file, _, case in CASES:
        failures.update(_run_case(file, case))
    passed = total - len(failures)
    print(f"draft 2020-12 required: {passed}/{total} passed, {len(EXPECTED)} expected failures")
    assert total > 1200, f"only {total} tests found"
    assert set(failures) == set(EXPECTED), (
        f"{passed}/{total} passed; expected exactly {total - len(EXPECTED)} "
        f"({len(EXPECTED)} listed failures)"
    )
