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

#[test]
fn openai_adds_null_once() {
    let cases = [
        (
            json!({"type": ["string", "null"], "enum": ["x"]}),
            json!({"type": ["string", "null"], "enum": ["x", null]}),
        ),
        (
            json!({"type": "string", "enum": ["x", null]}),
            json!({"type": ["string", "null"], "enum": ["x", null]}),
        ),
        (
            json!({"type": "string", "const": null}),
            json!({"type": ["string", "null"], "const": null}),
        ),
        (
            json!({"anyOf": [{"type": "null"}, {"type": "string"}], "enum": ["x"]}),
            json!({"anyOf": [{"type": "null"}, {"type": "string"}], "enum": ["x", null]}),
        ),
    ];
    for (property, nullable) in cases {
        let schema = json!({"type": "object", "properties": {"a": property}});
        let result = openai(&schema);
        assert!(result.faithful, "{:#?}", result.changes);
        assert_eq!(result.schema["properties"]["a"], nullable, "{property}");
        // Its own fixed point: nothing is added twice.
        assert_eq!(openai(&result.schema).schema, result.schema);
    }
}

#[test]
fn changes_inside_one_of_members_locate_the_input() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"oneOf": [
            {"type": "string", "minLength": 2},
            {"type": "array", "items": {"type": "string", "maxLength": 3}}
        ]}},
        "required": ["a"]
    });
    for dialect in [Dialect::OpenAiStrict, Dialect::AnthropicStrict] {
        let result = transform(&schema, dialect);
        at(&result.changes, "/properties/a/oneOf/0", "minLength");
        at(&result.changes, "/properties/a/oneOf/1/items", "maxLength");
        at(&result.changes, "/properties/a", "oneOf");
        assert!(
            result.changes.iter().all(|c| !c.pointer.contains("anyOf")),
            "{dialect}: {:#?}",
            result.changes
        );
    }
}

#[test]
fn gemini_folds_a_tuple_union_at_once() {
    // The positions' schemas joined as `items`: a `null` among them is `nullable` on the first
    // pass, as a second pass over the declaration read back would make it.
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "array", "prefixItems": [{"type": "null"}], "items": true},
            "b": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "null"}]},
            "c": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
        }
    });
    let result = gemini(&schema);
    let props = &result.schema["properties"];
    assert_eq!(
        props["a"],
        json!({"type": "array", "items": {"nullable": true}})
    );
    assert_eq!(
        props["b"],
        json!({"type": "array", "items": {"type": "string", "nullable": true}})
    );
    assert_eq!(
        props["c"],
        json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true}})
    );
    assert!(at(&result.changes, "/properties/a", "prefixItems").lossy);
}

// -- documents of older drafts ----------------------------------------------------------------

/// What zod-to-json-schema writes for an MCP tool: draft 7, `definitions`, closed objects,
/// numeric exclusive bounds, a `$ref` with a description beside it.
fn zod_tool() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read."},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1"], "default": "utf-8"},
            "limit": {"type": "integer", "exclusiveMinimum": 0},
            "owner": {"$ref": "#/definitions/User", "description": "Who owns it."},
            "reviewers": {"type": "array", "items": {"$ref": "#/definitions/User"}}
        },
        "required": ["path", "owner"],
        "additionalProperties": false,
        "definitions": {"User": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}},
            "required": ["name"],
            "additionalProperties": false
        }}
    })
}

fn without_schema(mut schema: Value) -> Value {
    schema.as_object_mut().unwrap().shift_remove("$schema");
    schema
}

#[test]
fn draft7_documents_read_as_their_2020_12_spelling() {
    // Nothing in this document means anything else in 2020-12: the same output, the same
    // changes, strict stays faithful, references into `definitions` stay references.
    for dialect in Dialect::ALL {
        let draft7 = transform(&zod_tool(), dialect);
        assert_eq!(
            draft7,
            transform(&without_schema(zod_tool()), dialect),
            "{dialect}"
        );
        assert!(draft7.faithful, "{dialect}: {:#?}", draft7.changes);
    }
    let result = openai(&zod_tool());
    let props = &result.schema["properties"];
    assert_eq!(
        props["reviewers"],
        json!({"type": ["array", "null"], "items": {"$ref": "#/definitions/User"}})
    );
    assert_eq!(props["owner"]["description"], json!("Who owns it."));
    assert_eq!(
        result.schema["definitions"]["User"]["required"],
        json!(["name", "email"])
    );
}

#[test]
fn draft7_ref_stands_for_its_target_alone() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/S", "maxLength": 2, "description": "P."}},
        "required": ["p"],
        "definitions": {"S": {"type": "string", "minLength": 1}}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    // `maxLength` beside `$ref` is ignored in draft 7: dropped, the meaning kept; the
    // description stays (an annotation for the model).
    assert_eq!(
        result.schema["properties"]["p"],
        json!({"description": "P.", "type": "string"})
    );
    let dropped = at(&result.changes, "/properties/p", "maxLength");
    assert!(dropped.lossy);
    assert!(dropped.message.contains("draft 7"), "{}", dropped.message);
    // In 2020-12 the sibling applies.
    let result = gemini(&without_schema(schema));
    assert_eq!(result.schema["properties"]["p"]["maxLength"], json!(2));
}

#[test]
fn draft7_tuples_become_prefix_items() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "range": {
                "type": "array",
                "items": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 9}],
                "additionalItems": false
            },
            "open": {"type": "array", "items": {"type": "integer"}, "additionalItems": false}
        },
        "required": ["range", "open"]
    });
    let tuple = json!({
        "type": "object",
        "properties": {
            "range": {
                "type": "array",
                "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 9}],
                "items": false
            },
            "open": {"type": "array", "items": {"type": "integer"}}
        },
        "required": ["range", "open"]
    });
    for dialect in Dialect::ALL {
        let draft7 = transform(&schema, dialect);
        let canonical = transform(&tuple, dialect);
        assert_eq!(draft7.schema, canonical.schema, "{dialect}");
        assert_eq!(draft7.faithful, canonical.faithful, "{dialect}");
        let read = at(&draft7.changes, "/properties/range", "items");
        assert!(
            read.lossy && read.message.contains("prefixItems"),
            "{read:?}"
        );
        assert!(at(&draft7.changes, "/properties/range", "additionalItems").lossy);
        // `additionalItems` beside a single `items` schema has no effect.
        assert!(at(&draft7.changes, "/properties/open", "additionalItems").lossy);
        // Changes inside the positions name the input's pointers.
        if dialect == Dialect::AnthropicStrict {
            at(&draft7.changes, "/properties/range/items/0", "minimum");
        }
        if dialect == Dialect::OpenAiStrict {
            at(&draft7.changes, "/properties/range/items/1", "maxLength");
        }
    }
    let result = gemini(&schema);
    assert_eq!(
        result.schema["properties"]["range"]["items"],
        json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 9}]})
    );
}

#[test]
fn draft4_exclusive_bounds_and_ids() {
    // An OpenAPI 2 / draft 4 document: `id`, boolean exclusive bounds, `definitions`.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "https://example.com/pets/update",
        "type": "object",
        "properties": {
            "petId": {"type": "integer", "format": "int64", "minimum": 0, "exclusiveMinimum": true},
            "weight": {"type": "number", "exclusiveMaximum": true, "maximum": 500, "minimum": 0, "exclusiveMinimum": false},
            "status": {"type": "string", "enum": ["available", "pending", "sold"]},
            "tag": {"$ref": "#/definitions/Tag"},
            "kind": {"type": "string", "const": "pet"}
        },
        "required": ["petId"],
        "definitions": {"Tag": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    let props = &result.schema["properties"];
    assert_eq!(
        props["petId"],
        json!({"type": "integer", "exclusiveMinimum": 0})
    );
    assert_eq!(
        props["weight"],
        json!({"type": ["number", "null"], "exclusiveMaximum": 500, "minimum": 0})
    );
    // `const` is not a keyword of draft 4: it never restricted anything.
    assert_eq!(props["kind"], json!({"type": ["string", "null"]}));
    assert_eq!(
        props["tag"],
        json!({"anyOf": [{"$ref": "#/definitions/Tag"}, {"type": "null"}]})
    );
    let read = at(&result.changes, "/properties/petId", "exclusiveMinimum");
    assert!(read.lossy);
    assert_eq!(
        read.message,
        "read draft 4's `exclusiveMinimum: true` beside `minimum: 0` as `exclusiveMinimum: 0`"
    );
    assert!(at(&result.changes, "/properties/weight", "exclusiveMinimum").lossy);
    assert!(at(&result.changes, "/properties/kind", "const").lossy);
    assert!(
        result.changes.iter().all(|c| c.keyword != "id"),
        "`id` is an identifier: {:#?}",
        result.changes
    );
    // Gemini: an exclusive bound on an integer is exact.
    let result = gemini(&schema);
    assert_eq!(
        result.schema["properties"]["petId"],
        json!({"type": "integer", "format": "int64", "minimum": 1})
    );
}

#[test]
fn dependencies_are_read_as_their_2020_12_keywords() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
        "dependencies": {"card": ["billing"], "billing": {"required": ["card"]}}
    });
    let result = openai(&schema);
    assert!(!result.faithful);
    assert_eq!(
        at(&result.changes, "", "dependencies").message,
        "read `dependencies` as `dependentRequired` and `dependentSchemas`"
    );
    assert_eq!(
        reasons(&result),
        vec![("", "dependentRequired"), ("", "dependentSchemas")]
    );
}

#[test]
fn draft2019_recursive_refs_in_one_resource_are_refs() {
    let tree = json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "$recursiveAnchor": true,
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$recursiveRef": "#"}}
        },
        "required": ["name", "children"],
        "additionalProperties": false
    });
    let result = openai(&tree);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    assert!(
        at(
            &result.changes,
            "/properties/children/items",
            "$recursiveRef"
        )
        .lossy
    );
    // Anthropic supports no recursion; Gemini cuts it.
    assert!(!anthropic(&tree).faithful);
    assert!(!gemini(&tree).faithful);
    // With a resource of its own below the root, the reference is dynamic: not expressible.
    let mut nested = tree.clone();
    nested["properties"]["name"]["$id"] = json!("https://example.com/name");
    let result = openai(&nested);
    assert!(!result.faithful);
    assert!(reasons(&result).contains(&("/properties/children/items", "$recursiveRef")));
}

#[test]
fn older_drafts_drop_what_they_do_not_have() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema",
        "type": "object",
        "properties": {
            "a": {"type": "string", "$id": "#name"},
            "b": {"$ref": "#name"}
        },
        "required": ["a", "b"],
        "unevaluatedProperties": {"type": "integer"},
        "dependentRequired": {"a": ["b"]}
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    for keyword in ["unevaluatedProperties", "dependentRequired"] {
        let dropped = at(&result.changes, "", keyword);
        assert!(dropped.lossy);
        assert_eq!(
            dropped.message,
            format!("dropped `{keyword}`: not a keyword of draft 7")
        );
    }
    // A plain-name `$id` is an anchor before 2019-09.
    assert_eq!(result.schema["properties"]["b"], json!({"type": "string"}));
    // Draft 6 reads as draft 7; an unknown `$schema` as 2020-12.
    let mut draft6 = schema.clone();
    draft6["$schema"] = json!("http://json-schema.org/draft-06/schema#");
    assert_eq!(openai(&draft6).schema, result.schema);
    let mut custom = schema;
    custom["$schema"] = json!("https://example.com/my-meta");
    assert!(!openai(&custom).faithful);
}

#[test]
fn a_named_zod_schema_is_its_definition() {
    // zod-to-json-schema with a name: the root is a `$ref` into `definitions`. Strict output is
    // the definition itself, without the copy of it no reference points to any more.
    let schema = json!({
        "$ref": "#/definitions/search",
        "definitions": {
            "search": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "filter": {"$ref": "#/definitions/filter"}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "filter": {"type": "object", "properties": {"lang": {"type": "string"}}, "additionalProperties": false},
            "unused": {"type": "integer"}
        },
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    let result = openai(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema,
        json!({
            "definitions": {"filter": {
                "type": "object",
                "properties": {"lang": {"type": ["string", "null"]}},
                "required": ["lang"],
                "additionalProperties": false
            }},
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "filter": {"anyOf": [{"$ref": "#/definitions/filter"}, {"type": "null"}]}
            },
            "required": ["query", "filter"],
            "additionalProperties": false
        })
    );
    for name in ["search", "unused"] {
        let removed = at(
            &result.changes,
            &format!("/definitions/{name}"),
            "definitions",
        );
        assert!(removed.lossy);
    }
    // The same for Anthropic; Gemini inlines everything anyway.
    let result = anthropic(&schema);
    assert!(result.faithful, "{:#?}", result.changes);
    assert_eq!(
        result.schema["definitions"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["filter"]
    );
    assert!(gemini(&schema).schema.get("definitions").is_none());
}
