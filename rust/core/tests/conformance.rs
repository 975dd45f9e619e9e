//! Runs the JSON Schema Test Suite's required draft 2020-12 tests against `SchemaValidator`.
//!
//! Known failures live in `tests/conformance/expected_failures.toml` at the repository root; a
//! listed test that passes fails the run too, so the list stays honest.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use ferrotool_core::jsonschema::{Options, SchemaValidator};
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

#[test]
fn draft2020_12_required() {
    let suite = suite_root();
    let tests_dir = suite.join("tests/draft2020-12");
    assert!(
        tests_dir.is_dir(),
        "JSON Schema Test Suite not found at {} (expected the shared corpora next to the repository)",
        tests_dir.display()
    );
    let resources = remotes(&suite.join("remotes"));
    let expected = expected_failures(&repo_root().join("tests/conformance/expected_failures.toml"));
    let mut files: Vec<PathBuf> = fs::read_dir(&tests_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();

    let (mut total, mut passed) = (0usize, 0usize);
    let mut unexpected: Vec<String> = Vec::new();
    let mut failed: BTreeSet<Key> = BTreeSet::new();
    for path in &files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        for group in &groups {
            let case = group["description"].as_str().unwrap().to_owned();
            let compiled = SchemaValidator::compile_with_resources(
                &group["schema"],
                Options::default(),
                &resources,
            );
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
                        failed.insert(key.clone());
                        if !expected.contains(&key) {
                            unexpected.push(format!("FAILED: {file} / {case} / {name}: {why}"));
                        }
                    }
                }
            }
        }
    }
    for key in &expected {
        let known = files
            .iter()
            .any(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == key.0));
        if !known {
            unexpected.push(format!("expected failure names an unknown file: {key:?}"));
        }
    }
    println!(
        "draft2020-12 conformance: {passed}/{total} passed, {} expected failures",
        failed.len()
    );
    assert!(
        unexpected.is_empty(),
        "{} unexpected results:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}
