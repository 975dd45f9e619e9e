//! Runs the JSON Schema Test Suite against `SchemaValidator`: the required tests of drafts
//! 2020-12, 2019-09, 7 and 4 (each compiled as that draft), and the optional tests of 2020-12
//! (`optional/`, `optional/format/`) with formats asserted.
//!
//! Known failures live in `tests/conformance/expected_failures.toml` at the repository root, keyed
//! by the file's path under the suite's `tests/` (`draft7/ref.json`); a listed test that passes
//! fails the run too, so the list stays honest.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use ferrotool_core::jsonschema::{Draft, Options, SchemaValidator};
use serde_json::Value;

fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/json-schema-test-suite")
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `remotes/`, served as `http://localhost:1234/<relative path>`.
fn remotes(root: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let value: Value =
                    serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
                out.push((format!("http://localhost:1234/{relative}"), value));
            }
        }
    }
    out
}

/// A (file, case, test) key.
type Key = (String, String, String);

/// Reads the `[[failure]]` tables of the expected-failures file (basic strings only).
fn expected_failures(path: &Path) -> BTreeSet<Key> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut out = BTreeSet::new();
    let mut current: Vec<(String, String)> = Vec::new();
    let mut flush = |current: &mut Vec<(String, String)>| {
        if current.is_empty() {
            return;
        }
        let get = |name: &str| {
            current.iter().find(|(k, _)| k == name).map_or_else(
                || panic!("expected_failures.toml: entry without `{name}`: {current:?}"),
                |(_, v)| v.clone(),
            )
        };
        get("reason");
        out.insert((get("file"), get("case"), get("test")));
        current.clear();
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "[[failure]]" {
            flush(&mut current);
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("bad line: {line}"));
        current.push((key.trim().to_owned(), parse_basic_string(value.trim())));
    }
    flush(&mut current);
    out
}

fn parse_basic_string(text: &str) -> String {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or_else(|| panic!("expected a quoted string: {text}"));
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            other => panic!("unsupported escape {other:?} in {text}"),
        }
    }
    out
}

/// Every `.json` file under `dir`, recursively when `deep`, sorted.
fn suite_files(dir: &Path, deep: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if deep {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Runs the tests of `folder` (`draft7`, or `draft2020-12/optional` with `deep` for its
/// subfolders) compiled with `options`, checks them against the expected failures and returns
/// (passed, total).
fn run_suite(folder: &str, deep: bool, options: Options) -> (usize, usize) {
    let suite = suite_root();
    let tests_root = suite.join("tests");
    let tests_dir = tests_root.join(folder);
    assert!(
        tests_dir.is_dir(),
        "JSON Schema Test Suite not found at {} (expected the shared corpora next to the repository)",
        tests_dir.display()
    );
    let resources = remotes(&suite.join("remotes"));
    let expected = expected_failures(&repo_root().join("tests/conformance/expected_failures.toml"));
    let files = suite_files(&tests_dir, deep);
    let relative = |path: &Path| {
        path.strip_prefix(&tests_root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/")
    };

    let (mut total, mut passed) = (0usize, 0usize);
    let mut unexpected: Vec<String> = Vec::new();
    let mut ran: BTreeSet<String> = BTreeSet::new();
    for path in &files {
        let file = relative(path);
        ran.insert(file.clone());
        let groups: Vec<Value> = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        for group in &groups {
            let case = group["description"].as_str().unwrap().to_owned();
            let compiled =
                SchemaValidator::compile_with_resources(&group["schema"], options, &resources);
            for test in group["tests"].as_array().unwrap() {
                total += 1;
                let name = test["description"].as_str().unwrap().to_owned();
                let want = test["valid"].as_bool().unwrap();
                let outcome = match &compiled {
                    Ok(validator) => {
                        let fast = validator.is_valid(&&test["data"]);
                        let full = validator.validate(&&test["data"]).is_ok();
                        if fast == want && full == want {
                            Ok(())
                        } else {
                            Err(format!("is_valid={fast} validate={full}, expected {want}"))
                        }
                    }
                    Err(error) => Err(format!("schema error: {error}")),
                };
                let key = (file.clone(), case.clone(), name.clone());
                match outcome {
                    Ok(()) => {
                        passed += 1;
                        if expected.contains(&key) {
                            unexpected.push(format!(
                                "PASSED but listed as expected failure: {file} / {case} / {name}"
                            ));
                        }
                    }
                    Err(why) => {
                        if !expected.contains(&key) {
                            unexpected.push(format!("FAILED: {file} / {case} / {name}: {why}"));
                        }
                    }
                }
            }
        }
    }
    for key in &expected {
        let in_folder = key.0.starts_with(&format!("{folder}/"))
            && (deep || !key.0[folder.len() + 1..].contains('/'));
        if in_folder && !ran.contains(&key.0) {
            unexpected.push(format!("expected failure names an unknown file: {key:?}"));
        }
    }
    println!("{folder} conformance: {passed}/{total} passed");
    assert!(
        unexpected.is_empty(),
        "{} unexpected results:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    (passed, total)
}

fn with_draft(draft: Draft) -> Options {
    Options {
        draft,
        ..Options::default()
    }
}

#[test]
fn draft2020_12_required() {
    let (_, total) = run_suite("draft2020-12", false, with_draft(Draft::Draft202012));
    assert_eq!(total, 1299);
}

#[test]
fn draft2020_12_optional_with_formats() {
    let options = Options {
        assert_formats: true,
        ..with_draft(Draft::Draft202012)
    };
    let (_, total) = run_suite("draft2020-12/optional", true, options);
    assert_eq!(total, 926);
}

#[test]
fn draft2019_09_required() {
    let (_, total) = run_suite("draft2019-09", false, with_draft(Draft::Draft201909));
    assert_eq!(total, 1259);
}

#[test]
fn draft7_required() {
    let (_, total) = run_suite("draft7", false, with_draft(Draft::Draft7));
    assert_eq!(total, 927);
}

#[test]
fn draft4_required() {
    let (_, total) = run_suite("draft4", false, with_draft(Draft::Draft4));
    assert_eq!(total, 618);
}
