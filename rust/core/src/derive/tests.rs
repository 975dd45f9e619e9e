//! Unit tests of the derivation: each kind of type's schema, records and models in `$defs`,
//! byte stability, pointer escaping and the errors.
use serde_json::json;

use super::*;

fn derive(ir: &Value) -> Result<Value, DeriveError> {
    let root: Root = serde_json::from_value(ir.clone()).expect("valid IR");
    derive_schema(&root)
}

fn derive_ok(ir: &Value) -> Value {
    derive(ir).expect("derivable IR")
}

fn type_root(ty: &Value) -> Value {
    json!({"version": 1, "root": {"kind": "type", "type": ty}})
}

fn s2() -> Value {
    json!({
        "version": 1,
        "root": {"kind": "function", "record": {"name": "create_order", "description": "Create.", "fields": [
            {"name": "customer", "type": {"kind": "ref", "name": "Customer"}, "required": true},
            {"name": "items", "type": {"kind": "list", "items": {"kind": "ref", "name": "Item"}, "container": "list"}, "required": true},
            {"name": "note", "type": {"kind": "union", "variants": [{"kind": "str"}, {"kind": "null"}]}, "required": false, "default": null}
        ]}},
        "defs": {
            "Customer": {"name": "Customer", "fields": [
                {"name": "id", "type": {"kind": "int"}, "required": true},
                {"name": "name", "type": {"kind": "str"}, "required": true},
                {"name": "email", "type": {"kind": "str"}, "required": true},
                {"name": "vip", "type": {"kind": "bool"}, "required": true}
            ]},
            "Item": {"name": "Item", "fields": [
                {"name": "sku", "type": {"kind": "str"}, "required": true},
                {"name": "qty", "type": {"kind": "int", "ge": 1}, "required": true},
                {"name": "price", "type": {"kind": "float"}, "required": true}
            ]},
            "Unused": {"name": "Unused", "fields": []}
        }
    })
}

#[test]
fn function_with_records() {
    let schema = derive_ok(&s2());
    let expected = json!({
        "type": "object",
        "properties": {
            "customer": {"$ref": "#/$defs/Customer"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
        },
        "required": ["customer", "items"],
        "additionalProperties": false,
        "$defs": {
            "Customer": {"type": "object", "properties": {
                "id": {"type": "integer"}, "name": {"type": "string"},
                "email": {"type": "string"}, "vip": {"type": "boolean"}
            }, "required": ["id", "name", "email", "vip"], "additionalProperties": false},
            "Item": {"type": "object", "properties": {
                "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1},
                "price": {"type": "number"}
            }, "required": ["sku", "qty", "price"], "additionalProperties": false}
        }
    });
    assert_eq!(schema, expected);
}

#[test]
fn byte_stable() {
    let first = serde_json::to_string(&derive_ok(&s2())).expect("serializable");
    let second = serde_json::to_string(&derive_ok(&s2())).expect("serializable");
    assert_eq!(first, second);
    assert!(first.starts_with(
        r##"{"type":"object","properties":{"customer":{"$ref":"#/$defs/Customer"},"items":{"type":"array","items":{"$ref":"#/$defs/Item"}},"note":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"required":["customer","items"],"additionalProperties":false,"$defs":{"Customer":"##
    ));
}

#[test]
fn scalars_and_bounds() {
    let ir = type_root(&json!({"kind": "tuple", "items": [
        {"kind": "any"}, {"kind": "null"}, {"kind": "bool"},
        {"kind": "int", "ge": 0, "lt": 10, "multiple_of": 2},
        {"kind": "float", "gt": 0.5, "le": 1},
        {"kind": "str", "min_length": 1, "max_length": 5, "pattern": "^a"}
    ]}));
    let expected = json!({"type": "array", "prefixItems": [
        {}, {"type": "null"}, {"type": "boolean"},
        {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
        {"type": "number", "exclusiveMinimum": 0.5, "maximum": 1},
        {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a"}
    ], "items": false, "minItems": 6, "maxItems": 6});
    assert_eq!(derive_ok(&ir), expected);
}

#[test]
fn string_values() {
    let cases = [
        ("datetime", json!({"type": "string", "format": "date-time"})),
        ("date", json!({"type": "string", "format": "date"})),
        ("time", json!({"type": "string", "format": "time"})),
        (
            "timedelta",
            json!({"type": "string", "pattern": DURATION_PATTERN}),
        ),
        ("uuid", json!({"type": "string", "format": "uuid"})),
        ("path", json!({"type": "string", "format": "path"})),
        (
            "decimal",
            json!({"type": "string", "pattern": DECIMAL_PATTERN}),
        ),
    ];
    for (value, expected) in cases {
        let ir = type_root(&json!({"kind": "str_value", "value": value}));
        assert_eq!(derive_ok(&ir), expected, "{value}");
    }
}

#[test]
fn literals_and_enums() {
    let cases = [
        (
            json!({"kind": "literal", "values": ["a", "b"]}),
            json!({"type": "string", "enum": ["a", "b"]}),
        ),
        (
            json!({"kind": "literal", "values": [1]}),
            json!({"type": "integer", "const": 1}),
        ),
        (
            json!({"kind": "literal", "values": [true, 1]}),
            json!({"enum": [true, 1]}),
        ),
        (
            json!({"kind": "literal", "values": [null]}),
            json!({"type": "null"}),
        ),
        (
            json!({"kind": "literal", "values": ["a", null]}),
            json!({"enum": ["a", null]}),
        ),
        (
            json!({"kind": "enum", "name": "Color", "values": ["red", "blue"], "description": "A color."}),
            json!({"type": "string", "enum": ["red", "blue"], "title": "Color", "description": "A color."}),
        ),
        (
            json!({"kind": "annotated", "inner": {"kind": "enum", "name": "Level", "values": [1, 2]}, "meta": {"title": "Lvl"}}),
            json!({"type": "integer", "enum": [1, 2], "title": "Lvl"}),
        ),
    ];
    for (ty, expected) in cases {
        assert_eq!(derive_ok(&type_root(&ty)), expected, "{ty}");
    }
}

#[test]
fn containers() {
    let cases = [
        (
            json!({"kind": "list", "items": {"kind": "int"}, "container": "frozenset", "min": 1, "max": 3}),
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": true}),
        ),
        (
            json!({"kind": "list", "items": {"kind": "any"}, "container": "tuple"}),
            json!({"type": "array", "items": {}}),
        ),
        (
            json!({"kind": "tuple", "items": []}),
            json!({"type": "array", "maxItems": 0}),
        ),
        (
            json!({"kind": "dict", "values": {"kind": "float"}, "max": 2}),
            json!({"type": "object", "additionalProperties": {"type": "number"}, "maxProperties": 2}),
        ),
        (
            json!({"kind": "union", "variants": [{"kind": "int"}, {"kind": "union", "variants": [{"kind": "str"}, {"kind": "null"}]}]}),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}),
        ),
        (
            json!({"kind": "annotated", "inner": {"kind": "str"}, "meta": {"description": "d", "examples": ["x"], "deprecated": true}}),
            json!({"type": "string", "description": "d", "examples": ["x"], "deprecated": true}),
        ),
    ];
    for (ty, expected) in cases {
        assert_eq!(derive_ok(&type_root(&ty)), expected, "{ty}");
    }
}

#[test]
fn recursive_record_and_field_meta() {
    let ir = json!({
        "version": 1,
        "root": {"kind": "type", "type": {"kind": "ref", "name": "Node"}},
        "defs": {"Node": {"name": "Node", "description": "A tree.", "closed": true, "fields": [
            {"name": "value", "type": {"kind": "int"}, "required": true, "meta": {"description": "v"}},
            {"name": "children", "type": {"kind": "list", "items": {"kind": "ref", "name": "Node"}}, "required": false, "default": []}
        ]}}
    });
    let expected = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {
            "value": {"type": "integer", "description": "v"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []}
        }, "required": ["value"], "additionalProperties": false, "description": "A tree."}}
    });
    assert_eq!(derive_ok(&ir), expected);
}

#[test]
fn models_are_hoisted() {
    let address =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "title": "Address"});
    let user = json!({
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/Address"}},
        "title": "User",
        "$defs": {"Address": address}
    });
    let ir = type_root(&json!({"kind": "tuple", "items": [
        {"kind": "model", "name": "User", "schema": user},
        {"kind": "model", "name": "Address", "schema": address}
    ]}));
    let schema = derive_ok(&ir);
    assert_eq!(
        schema["$defs"],
        json!({
            "User": {"type": "object", "properties": {"home": {"$ref": "#/$defs/Address"}}, "title": "User"},
            "Address": address
        })
    );
    let recursive =
        json!({"$ref": "#/$defs/Tree", "$defs": {"Tree": {"type": "object", "title": "Tree"}}});
    let ir = type_root(&json!({"kind": "model", "name": "Tree", "schema": recursive}));
    assert_eq!(
        derive_ok(&ir),
        json!({"$ref": "#/$defs/Tree", "$defs": {"Tree": {"type": "object", "title": "Tree"}}})
    );
}

#[test]
fn errors() {
    let clash = json!({
        "version": 1,
        "root": {"kind": "type", "type": {"kind": "tuple", "items": [
            {"kind": "ref", "name": "Address"},
            {"kind": "model", "name": "User", "schema": {"type": "object", "$defs": {"Address": {"type": "string"}}}}
        ]}},
        "defs": {"Address": {"name": "Address", "fields": []}}
    });
    assert_eq!(
        derive(&clash),
        Err(DeriveError::DefsClash("Address".to_owned()))
    );
    let unknown = type_root(&json!({"kind": "ref", "name": "Nope"}));
    assert_eq!(
        derive(&unknown),
        Err(DeriveError::UnknownRecord("Nope".to_owned()))
    );
    let empty = type_root(&json!({"kind": "union", "variants": []}));
    assert_eq!(derive(&empty), Err(DeriveError::EmptyUnion));
    let zero = type_root(&json!({"kind": "int", "multiple_of": 0}));
    assert!(matches!(
        derive(&zero),
        Err(DeriveError::NonPositiveMultipleOf(_))
    ));
    let mut version = type_root(&json!({"kind": "any"}));
    version["version"] = json!(2);
    assert_eq!(derive(&version), Err(DeriveError::UnsupportedVersion(2)));
}

#[test]
fn pointer_escaping() {
    assert_eq!(pointer_fragment("Name_2"), "Name_2");
    assert_eq!(pointer_fragment("a/b~c d"), "a~1b~0c%20d");
}
