//! Timing of schema compilation and validation for the S2 order schema (run with
//! `cargo bench -p ferrotool-core --bench jsonschema`); compare with `jsonschema-rs` from Python.
//! The same shape is also timed as a draft 7 and a draft 4 document (`definitions`, `$schema`),
//! which should stay within 10% of 2020-12.
//!
//! Patterns: `^(a+)+$` against `a` x n + `!` for n = 10^3 and 10^6 (linear growth, where a
//! backtracking engine takes exponential time), and the slowest pattern of the JSON Schema Test
//! Suite's 2020-12 folder on the same inputs; then validation of 50 strings against a linear
//! and a backtracking `pattern` (what the per-validation backtracking budget costs when it is not
//! spent), and of 50 hostile strings against a backreference (what it saves when it is).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use ferrotool_core::jsonschema::{Draft, Options, SchemaValidator};
use ferrotool_core::pattern::Pattern;
use serde_json::{Value, json};

fn s2_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "customer": {"$ref": "#/$defs/Customer"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
        },
        "required": ["customer", "items"],
        "additionalProperties": false,
        "$defs": {
            "Customer": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "email": {"type": "string"},
                    "vip": {"type": "boolean"}
                },
                "required": ["id", "name", "email", "vip"],
                "additionalProperties": false
            },
            "Item": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "qty": {"type": "integer", "minimum": 1},
                    "price": {"type": "number"}
                },
                "required": ["sku", "qty", "price"],
                "additionalProperties": false
            }
        }
    })
}

/// S2 written as an older draft: `$schema`, `definitions` and references to them.
fn s2_schema_in(draft: Draft) -> Value {
    let text = s2_schema().to_string().replace("$defs", "definitions");
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    schema["$schema"] = json!(match draft {
        Draft::Draft4 => "http://json-schema.org/draft-04/schema#",
        Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
        Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
        Draft::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
    });
    schema
}

fn order(items: usize) -> Value {
    let items: Vec<Value> = (0..items)
        .map(|i| json!({"sku": format!("SKU-{i:04}"), "qty": 1 + i % 5, "price": 9.99 + i as f64}))
        .collect();
    json!({
        "customer": {"id": 42, "name": "Ada Lovelace", "email": "ada@example.com", "vip": true},
        "items": items,
        "note": "Leave at the door."
    })
}

/// Times `f`: the fastest of seven timed loops of `iterations` calls (the least disturbed by
/// other work on the machine), per call.
fn time(name: &str, iterations: u32, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..iterations {
            f();
        }
        best = best.min(start.elapsed().as_secs_f64() / f64::from(iterations) * 1e9);
    }
    println!("{name:<40} {best:>10.0} ns");
}

/// Every `pattern` and `patternProperties` key of the suite's draft 2020-12 tests (empty when the
/// shared corpora are not beside the repository).
fn suite_patterns() -> Vec<String> {
    fn collect(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                for (key, child) in object {
                    match (key.as_str(), child) {
                        ("pattern", Value::String(source)) => out.push(source.clone()),
                        ("patternProperties", Value::Object(patterns)) => {
                            out.extend(patterns.keys().cloned());
                        }
                        _ => {}
                    }
                    collect(child, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpora/json-schema-test-suite/tests/draft2020-12");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|entry| entry.ok().map(|entry| entry.path())) {
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(value) = serde_json::from_str::<Value>(&text)
            {
                collect(&value, &mut out);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The median of `samples` (sorted in place).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Seconds per match of `pattern` against `text` (median of five).
fn match_time(pattern: &Pattern, text: &str) -> f64 {
    let mut samples: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(pattern.is_match(black_box(text)).ok());
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(&mut samples)
}

/// Times `f` as the median of `runs` timed loops of `iterations` calls, per call.
fn time_median(name: &str, iterations: u32, runs: usize, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                f();
            }
            start.elapsed().as_secs_f64() / f64::from(iterations) * 1e9
        })
        .collect();
    println!("{name:<40} {:>10.0} ns (median)", median(&mut samples));
}

/// Validation of 50 strings against one `pattern`: linear, backtracking within its budget, and
/// backtracking past it on every string.
fn pattern_validation() {
    let array_of = |pattern: &str| {
        let schema = json!({"type": "array", "items": {"type": "string", "pattern": pattern}});
        SchemaValidator::compile(&schema, Options::default()).unwrap()
    };
    let strings = Value::Array((0..50).map(|i| json!(format!("item-{i:04}"))).collect());
    let linear = array_of(r"^[a-z]+-\d+$");
    let lookahead = array_of(r"^(?=[a-z])[a-z]+-\d+$");
    for (name, validator) in [("linear", &linear), ("lookahead", &lookahead)] {
        time_median(&format!("is_valid 50 strings, {name}"), 2_000, 11, || {
            assert!(validator.is_valid(black_box(&&strings)));
        });
        time_median(&format!("validate 50 strings, {name}"), 2_000, 11, || {
            assert!(validator.validate(black_box(&&strings)).is_ok());
        });
    }
    let hostile = Value::Array(
        (0..50)
            .map(|_| json!(format!("{}!", "a".repeat(40))))
            .collect(),
    );
    let backreference = array_of(r"^(?:(a+)+\1)+$");
    time_median("validate 50 hostile strings, backref", 1, 3, || {
        assert!(backreference.validate(black_box(&&hostile)).is_err());
    });
}

fn patterns() {
    let inputs: Vec<(u32, String)> = [3, 6]
        .into_iter()
        .map(|power| (power, format!("{}!", "a".repeat(10usize.pow(power)))))
        .collect();
    let nested = Pattern::new("^(a+)+$").unwrap();
    for (power, text) in &inputs {
        let seconds = match_time(&nested, text);
        println!(
            "{:<40} {:>10.0} ns",
            format!("^(a+)+$ on 10^{power} chars"),
            seconds * 1e9
        );
    }
    let compiled: Vec<Pattern> = suite_patterns()
        .iter()
        .filter_map(|source| Pattern::new(source).ok())
        .collect();
    let Some((power, text)) = inputs.last() else {
        return;
    };
    let worst = compiled
        .iter()
        .map(|pattern| (match_time(pattern, text), pattern))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, pattern)) = worst {
        for (power, text) in &inputs {
            let seconds = match_time(pattern, text);
            println!(
                "{:<40} {:>10.0} ns",
                format!("suite's slowest {:?} on 10^{power}", pattern.source()),
                seconds * 1e9
            );
        }
    }
    println!(
        "({} suite patterns, the slowest on 10^{power} chars shown)",
        compiled.len()
    );
}

fn main() {
    patterns();
    pattern_validation();
    let schema = s2_schema();
    time("compile S2", 20_000, || {
        black_box(SchemaValidator::compile(black_box(&schema), Options::default()).unwrap());
    });
    let validator = SchemaValidator::compile(&schema, Options::default()).unwrap();
    for n in [3, 100] {
        let instance = order(n);
        time(
            &format!("is_valid S2 ({n} items)"),
            200_000 / n as u32,
            || {
                assert!(validator.is_valid(black_box(&&instance)));
            },
        );
        time(
            &format!("validate S2 ({n} items)"),
            200_000 / n as u32,
            || {
                assert!(validator.validate(black_box(&&instance)).is_ok());
            },
        );
    }
    for draft in [Draft::Draft201909, Draft::Draft7, Draft::Draft4] {
        let schema = s2_schema_in(draft);
        time(&format!("compile S2 {}", draft.name()), 20_000, || {
            black_box(SchemaValidator::compile(black_box(&schema), Options::default()).unwrap());
        });
        let validator = SchemaValidator::compile(&schema, Options::default()).unwrap();
        let instance = order(100);
        time(
            &format!("is_valid S2 {} (100 items)", draft.name()),
            2_000,
            || {
                assert!(validator.is_valid(black_box(&&instance)));
            },
        );
    }
    let mut bad = order(3);
    bad["items"][1]["qty"] = json!("three");
    time("validate S2 invalid", 100_000, || {
        assert!(validator.validate(black_box(&&bad)).is_err());
    });
}
