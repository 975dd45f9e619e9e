//! Timing of schema compilation and validation for the S2 order schema (run with
//! `cargo bench -p ferrotool-core --bench jsonschema`); compare with `jsonschema-rs` from Python.
//! The same shape is also timed as a draft 7 and a draft 4 document (`definitions`, `$schema`),
//! which should stay within 10% of 2020-12.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use ferrotool_core::jsonschema::{Draft, Options, SchemaValidator};
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

fn main() {
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
