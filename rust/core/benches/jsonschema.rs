//! Timing of schema compilation and validation for the S2 order schema (run with
//! `cargo bench -p ferrotool-core --bench jsonschema`); compare with `jsonschema-rs` from Python.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use ferrotool_core::jsonschema::{Options, SchemaValidator};
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

fn time(name: &str, iterations: u32, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    let per = start.elapsed().as_secs_f64() / f64::from(iterations) * 1e9;
    println!("{name:<32} {per:>10.0} ns");
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
    let mut bad = order(3);
    bad["items"][1]["qty"] = json!("three");
    time("validate S2 invalid", 100_000, || {
        assert!(validator.validate(black_box(&&bad)).is_err());
    });
}
