//! Provider dialects: what each keeps, drops and rewrites, and when strict stays faithful.
#![allow(clippy::unwrap_used, clippy::panic)]

use ferrotool_core::dialect::{Change, Dialect, GEMINI_RECURSION_DEPTH, Transformed, transform};
use serde_json::{Value, json};

fn openai(schema: &Value) -> Transformed {
    transform(schema, Dialect::OpenAiStrict)
}

fn anthropic(schema: &Value) -> Transformed {
    transform(schema, Dialect::AnthropicStrict)
}

fn gemini(schema: &Value) -> Transformed {
    transform(schema, Dialect::Gemini)
}

fn at<'c>(changes: &'c [Change], pointer: &str, keyword: &str) -> &'c Change {
    changes
        .iter()
        .find(|c| c.pointer == pointer && c.keyword == keyword)
        .unwrap_or_else(|| panic!("no change at {pointer} {keyword}: {changes:#?}"))
}

fn reasons(result: &Transformed) -> Vec<(&str, &str)> {
    result
        .changes
        .iter()
        .filter(|c| !c.lossy)
        .map(|c| (c.pointer.as_str(), c.keyword.as_str()))
        .collect()
}

/// A derived schema: a record in `$defs`, optional fields with defaults, constraints.
fn order() -> Value {
    json!({
        "type": "object",
        "properties": {
            "customer": {"$ref": "#/$defs/Customer"},
            "qty": {"type": "integer", "minimum": 1, "maximum": 99, "default": 1},
            "sku": {"type": "string", "minLength": 3, "pattern": "^[A-Z]+-[0-9]+$"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []},
            "when": {"type": "string", "format": "date-time", "examples": ["2024-05-01T10:00:00Z"]}
        },
        "required": ["customer", "sku"],
        "additionalProperties": false,
        "$defs": {
            "Customer": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "vip": {"type": "boolean", "default": false}},
                "required": ["id"],
                "additionalProperties": false,
                "description": "Who orders."
            }
        }
    })
}

#[test]
fn dialect_names() {
    for dialect in Dialect::ALL {
        assert_eq!(Dialect::parse(dialect.name()), Some(dialect));
        assert_eq!(dialect.to_string(), dialect.name());
    }
    assert_eq!(Dialect::parse("openai"), None);
}

#[test]
fn openai_strict_shape() {
    let result = openai(&order());
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema,
        json!({
            "type": "object",
            "properties": {
                "customer": {"$ref": "#/$defs/Customer"},
                "qty": {"type": ["integer", "null"], "minimum": 1, "maximum": 99},
                "sku": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                "when": {"type": ["string", "null"], "format": "date-time"}
            },
            "required": ["customer", "qty", "sku", "note", "tags", "when"],
            "additionalProperties": false,
            "$defs": {
                "Customer": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "vip": {"type": ["boolean", "null"]}},
                    "required": ["id", "vip"],
                    "additionalProperties": false,
                    "description": "Who orders."
                }
            }
        })
    );
    let changes = &result.changes;
    assert!(at(changes, "/properties/qty", "default").lossy);
    assert!(at(changes, "/properties/qty", "required").lossy);
    assert!(at(changes, "/properties/sku", "minLength").lossy);
    assert!(at(changes, "/properties/tags", "uniqueItems").lossy);
    assert!(at(changes, "/properties/when", "examples").lossy);
    assert!(at(changes, "/$defs/Customer/properties/vip", "required").lossy);
    assert_eq!(
        at(changes, "/properties/sku", "minLength").message,
        "removed `minLength`: not supported in OpenAI strict mode"
    );
}

#[test]
fn openai_optional_enum_and_const_accept_null() {
    let schema = json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"]},
            "kind": {"const": "x"},
            "ref": {"$ref": "#/$defs/R"}
        },
        "$defs": {"R": {"type": "object", "properties": {}, "additionalProperties": false}}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema["properties"],
        json!({
            "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
            "kind": {"type": ["string", "null"], "enum": ["x", null]},
            "ref": {"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]}
        })
    );
}

#[test]
fn openai_unfaithful_constructs() {
    let cases = [
        (
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            "additionalProperties",
        ),
        (
            json!({"type": "object", "additionalProperties": true, "properties": {"a": {"type": "string"}}}),
            "additionalProperties",
        ),
        (json!({"type": "object"}), "additionalProperties"),
        (
            json!({"type": "object", "patternProperties": {"^x": {"type": "string"}}}),
            "patternProperties",
        ),
        (json!({"description": "anything"}), "type"),
        (json!({"type": "array"}), "items"),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false}),
            "prefixItems",
        ),
        (json!({"type": "string", "not": {"const": "x"}}), "not"),
        (
            json!({"type": "string", "if": {"minLength": 2}, "then": {"maxLength": 3}}),
            "if",
        ),
        (
            json!({"type": "object", "properties": {}, "dependentRequired": {"a": ["b"]}}),
            "dependentRequired",
        ),
        (json!({"$ref": "#/$defs/Missing"}), "$ref"),
        (json!({"enum": [{"a": 1}]}), "enum"),
    ];
    for (sub, keyword) in cases {
        let schema = json!({"type": "object", "properties": {"p": sub}, "required": ["p"]});
        let result = openai(&schema);
        assert!(!result.faithful, "{sub}");
        assert!(
            result
                .changes
                .iter()
                .any(|c| !c.lossy && c.keyword == keyword),
            "{sub}: {:#?}",
            result.changes
        );
    }
}

#[test]
fn strict_root_must_be_an_object() {
    for root in [
        json!({"type": "string"}),
        json!({"anyOf": [{"type": "object"}, {"type": "null"}]}),
    ] {
        for dialect in Dialect::ALL {
            let result = transform(&root, dialect);
            assert!(!result.faithful, "{dialect} {root}");
            assert!(reasons(&result).contains(&("", "type")), "{dialect} {root}");
        }
    }
    // A root object without properties is a tool without arguments.
    let result = openai(&json!({"type": "object"}));
    assert!(result.faithful);
    assert_eq!(
        result.schema,
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn openai_refs_with_siblings_are_inlined() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A", "description": "The A."},
            "b": {"$ref": "#/$defs/A"}
        },
        "required": ["a", "b"],
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema["properties"]["a"],
        json!({
            "description": "The A.",
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "required": ["x"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        result.schema["properties"]["b"],
        json!({"$ref": "#/$defs/A"})
    );
}

#[test]
fn recursion() {
    let schema = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "required": ["tree"],
        "additionalProperties": false,
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node", "description": "A child."}}
            },
            "required": ["value", "children"],
            "additionalProperties": false
        }}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    // The child reference has a sibling: inlined once, then a plain reference.
    let child = &result.schema["$defs"]["Node"]["properties"]["children"]["items"];
    assert_eq!(child["description"], json!("A child."));
    assert_eq!(
        child["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );

    let result = anthropic(&schema);
    assert!(!result.faithful);
    assert_eq!(
        reasons(&result),
        vec![("/$defs/Node/properties/children/items", "$ref")]
    );

    let result = gemini(&schema);
    assert!(!result.faithful);
    let mut node = &result.schema["properties"]["tree"];
    for _ in 0..GEMINI_RECURSION_DEPTH {
        assert_eq!(node["properties"]["value"], json!({"type": "integer"}));
        node = &node["properties"]["children"]["items"];
    }
    assert_eq!(node, &json!({"type": "object", "description": "A child."}));
    assert!(!result.schema.to_string().contains("$ref"));
    assert_eq!(
        reasons(&result),
        vec![("/$defs/Node/properties/children/items", "$ref")]
    );
}

#[test]
fn anthropic_shape() {
    let result = anthropic(&order());
    assert!(result.faithful, "{:#?}", result.changes);
    let props = &result.schema["properties"];
    assert_eq!(props["qty"], json!({"type": "integer", "default": 1}));
    assert_eq!(
        props["sku"],
        json!({"type": "string", "pattern": "^[A-Z]+-[0-9]+$"})
    );
    assert_eq!(props["customer"], json!({"$ref": "#/$defs/Customer"}));
    assert_eq!(result.schema["required"], json!(["customer", "sku"]));
    assert!(at(&result.changes, "/properties/qty", "minimum").lossy);

    // Type lists become `anyOf`; complex patterns go.
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"], "description": "N."},
            "d": {"type": "string", "pattern": "^(?=\\d)\\d+$"}
        },
        "additionalProperties": false
    });
    let result = anthropic(&schema);
    assert!(result.faithful);
    assert_eq!(
        result.schema["properties"]["n"],
        json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "N."})
    );
    assert_eq!(result.schema["properties"]["d"], json!({"type": "string"}));
}

#[test]
fn gemini_shape() {
    let result = gemini(&order());
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema,
        json!({
            "type": "object",
            "properties": {
                "customer": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "vip": {"type": "boolean", "default": false}},
                    "required": ["id"],
                    "description": "Who orders."
                },
                "qty": {"type": "integer", "minimum": 1, "maximum": 99, "default": 1},
                "sku": {"type": "string", "minLength": 3, "pattern": "^[A-Z]+-[0-9]+$"},
                "note": {"type": "string", "default": null, "nullable": true},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                "when": {"type": "string", "format": "date-time", "example": "2024-05-01T10:00:00Z"}
            },
            "required": ["customer", "sku"]
        })
    );
    assert!(at(&result.changes, "", "additionalProperties").lossy);
    assert!(at(&result.changes, "/properties/tags", "uniqueItems").lossy);
}

#[test]
fn all_of_is_merged() {
    let schema = json!({
        "type": "object",
        "properties": {"p": {"allOf": [
            {"type": "number", "minimum": 0},
            {"type": "integer", "minimum": 2, "description": "Two or more."}
        ]}},
        "required": ["p"],
        "additionalProperties": false
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema["properties"]["p"],
        json!({"type": "integer", "minimum": 2, "description": "Two or more."})
    );
    let conflicting = json!({
        "type": "object",
        "properties": {"p": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["p"]
    });
    let result = openai(&conflicting);
    assert!(!result.faithful);
    assert_eq!(reasons(&result), vec![("/properties/p", "type")]);
}

#[test]
fn deterministic_and_pure() {
    let schema = order();
    for dialect in Dialect::ALL {
        let first = transform(&schema, dialect);
        let second = transform(&schema, dialect);
        assert_eq!(first, second);
        assert_eq!(
            serde_json::to_vec(&first.schema).unwrap(),
            serde_json::to_vec(&second.schema).unwrap()
        );
    }
    assert_eq!(schema, order(), "the input is not changed");
}

#[test]
fn hostile_inputs_do_not_blow_up() {
    // A `$ref` fan-out that would expand exponentially when inlined.
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({"type": "string"}));
    for level in 1..40 {
        let previous = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({"type": "object", "properties": {"a": {"$ref": previous}, "b": {"$ref": previous}}}),
        );
    }
    let schema =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d39"}}, "$defs": defs});
    let result = gemini(&schema);
    assert!(!result.faithful);
    // A reference to itself, and a chain of references.
    let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}});
    for dialect in Dialect::ALL {
        let result = transform(&schema, dialect);
        assert!(!result.faithful, "{dialect}");
    }
    let schema = json!({"$ref": "#"});
    for dialect in Dialect::ALL {
        assert!(!transform(&schema, dialect).faithful);
    }
}

#[test]
fn pointers_are_escaped_and_percent_decoded() {
    let schema = json!({
        "type": "object",
        "properties": {"a/b": {"$ref": "#/$defs/with%20space"}, "c~d": {"type": "string", "minLength": 1}},
        "required": ["a/b", "c~d"],
        "$defs": {"with space": {"type": "string", "maxLength": 3}}
    });
    let result = anthropic(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    at(&result.changes, "/properties/c~0d", "minLength");
    at(&result.changes, "/$defs/with space", "maxLength");
    let result = gemini(&schema);
    assert_eq!(
        result.schema["properties"]["a/b"],
        json!({"type": "string", "maxLength": 3})
    );
}
