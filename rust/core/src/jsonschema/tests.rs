//! Focused checks of error codes, paths and renderings, limits, lenient mode and cycles.
#![allow(clippy::unwrap_used, clippy::panic)]

use serde_json::{Value, json};

use super::{Options, SchemaValidator};
use crate::error::{ErrorCode, Limits, LineError, PathItem, json_pointer};

fn validator(schema: &Value) -> SchemaValidator {
    SchemaValidator::compile(schema, Options::default()).unwrap()
}

fn errors(schema: &Value, instance: &Value) -> Vec<LineError> {
    let validator = validator(schema);
    assert!(!validator.is_valid(&instance));
    validator.validate(&instance).unwrap_err()
}

fn summary(errors: &[LineError]) -> Vec<(String, &'static str, String, String)> {
    errors
        .iter()
        .map(|e| {
            (
                json_pointer(&e.path),
                e.code.as_str(),
                e.expected.to_string(),
                e.found.to_string(),
            )
        })
        .collect()
}

fn order_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "customer": {"$ref": "#/$defs/customer"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
            "note": {"type": ["string", "null"]}
        },
        "required": ["customer", "items"],
        "additionalProperties": false,
        "$defs": {
            "customer": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "email": {"type": "string"},
                    "vip": {"type": "boolean"}
                },
                "required": ["id", "name", "email"]
            },
            "item": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "qty": {"type": "integer", "minimum": 1},
                    "price": {"type": "number"}
                },
                "required": ["sku", "qty", "price"]
            }
        }
    })
}

#[test]
fn valid_order_passes() {
    let instance = json!({
        "customer": {"id": 1, "name": "Ada", "email": "ada@example.com", "vip": true},
        "items": [{"sku": "A1", "qty": 2, "price": 9.5}],
        "note": null
    });
    let validator = validator(&order_schema());
    assert!(validator.is_valid(&&instance));
    assert_eq!(validator.validate(&&instance), Ok(()));
}

#[test]
fn error_codes_paths_and_renderings() {
    let instance = json!({
        "customer": {"id": "7", "name": "Ada"},
        "items": [{"sku": "A1", "qty": 0, "price": 1}, {"sku": "B", "qty": "three", "price": 2.5}],
        "note": 5,
        "extra": true
    });
    let got = summary(&errors(&order_schema(), &instance));
    let want = [
        ("/customer/id", "wrong_type", "integer", "string \"7\""),
        (
            "/customer",
            "missing_property",
            "property \"email\"",
            "object without it",
        ),
        ("/items/0/qty", "number_too_small", "at least 1", "number 0"),
        ("/items/1/qty", "wrong_type", "integer", "string \"three\""),
        ("/note", "wrong_type", "string or null", "number 5"),
        (
            "/extra",
            "unexpected_property",
            "one of the properties \"customer\", \"items\", \"note\"",
            "property \"extra\"",
        ),
    ];
    for (pointer, code, expected, found) in want {
        assert!(
            got.iter()
                .any(|g| g.0 == pointer && g.1 == code && g.2 == expected && g.3 == found),
            "missing {pointer} {code} {expected} {found} in {got:#?}"
        );
    }
    assert_eq!(got.len(), want.len(), "{got:#?}");
}

#[test]
fn enum_pattern_and_message() {
    let schema = json!({"properties": {
        "unit": {"enum": ["c", "f"]},
        "code": {"pattern": "^a+$"},
        "tags": {"type": "array", "maxItems": 2}
    }});
    let got = errors(
        &schema,
        &json!({"unit": "k", "code": "b", "tags": [1, 2, 3, 4, 5]}),
    );
    assert_eq!(
        summary(&got),
        [
            (
                "/unit".to_owned(),
                "not_in_enum",
                "one of \"c\", \"f\"".to_owned(),
                "string \"k\"".to_owned()
            ),
            (
                "/code".to_owned(),
                "pattern_mismatch",
                "matching ^a+$".to_owned(),
                "string \"b\"".to_owned()
            ),
            (
                "/tags".to_owned(),
                "array_too_long",
                "at most 2 items".to_owned(),
                "array of 5 items".to_owned()
            ),
        ]
    );
    assert_eq!(
        got[0].message(),
        "unit: expected one of \"c\", \"f\", found string \"k\" (not_in_enum)"
    );
}

#[test]
fn any_of_reports_one_no_match_and_the_best_branch() {
    let schema = json!({"anyOf": [
        {"type": "string"},
        {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    ]});
    let got = summary(&errors(&schema, &json!({"x": "1"})));
    assert_eq!(got[0].1, "no_match");
    assert_eq!(got[0].2, "string or object");
    assert_eq!(got[1].0, "/x");
    assert_eq!(got[1].1, "wrong_type");
    assert_eq!(got.len(), 2);

    let one_of = json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]});
    assert_eq!(
        errors(&one_of, &json!(3))[0].code,
        ErrorCode::MultipleMatches
    );
}

#[test]
fn max_errors_caps_the_list() {
    let schema = json!({"items": {"type": "string"}});
    let limits = Limits {
        max_errors: 3,
        ..Limits::DEFAULT
    };
    let validator = SchemaValidator::compile(
        &schema,
        Options {
            limits,
            ..Options::default()
        },
    )
    .unwrap();
    let instance = json!([1, 2, 3, 4, 5, 6]);
    let got = validator.validate(&&instance).unwrap_err();
    assert_eq!(got.len(), 3);
    assert_eq!(got[2].path, vec![PathItem::Index(2)]);
}

fn nested_arrays(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let schema = json!({"items": {"$ref": "#"}});
    let validator = validator(&schema);
    let deep = nested_arrays(100_000);
    assert!(!validator.is_valid(&&deep));
    let got = validator.validate(&&deep).unwrap_err();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].code, ErrorCode::NestingTooDeep);
    assert_eq!(got[0].path.len(), 129);
    // Dropping a 100,000-deep value recurses; leak it instead of risking the test's stack.
    std::mem::forget(deep);

    let unique = json!({"uniqueItems": true});
    let deep_pair = Value::Array(vec![nested_arrays(1000), nested_arrays(1000)]);
    let got = self::validator(&unique).validate(&&deep_pair).unwrap_err();
    assert_eq!(got[0].code, ErrorCode::NestingTooDeep);
    std::mem::forget(deep_pair);
}

fn nested_objects(depth: usize) -> Value {
    let mut value = json!({});
    for _ in 0..depth {
        value = json!({ "a": value });
    }
    value
}

#[test]
fn plain_object_schemas_agree_in_both_modes() {
    let closed = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "minLength": 2}},
        "required": ["a"],
        "additionalProperties": false
    });
    let open = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["b"]
    });
    let instances = [
        json!({"a": 1, "b": "xy"}),
        json!({"b": "xy", "a": 1}),
        json!({"a": 1}),
        json!({"b": "xy"}),
        json!({"a": 1, "b": "x"}),
        json!({"a": "1"}),
        json!({"a": 1, "c": null}),
        json!({}),
        json!([1]),
        json!("a"),
        json!(null),
    ];
    for schema in [closed, open] {
        let validator = validator(&schema);
        for instance in &instances {
            assert_eq!(
                validator.is_valid(&instance),
                validator.validate(&instance).is_ok(),
                "{schema} {instance}"
            );
        }
    }
    assert!(!self::validator(&json!({"type": "object", "required": ["a"]})).is_valid(&&json!({})));

    let recursive = self::validator(&json!({
        "type": "object",
        "properties": {"a": {"$ref": "#"}},
        "additionalProperties": false
    }));
    assert!(recursive.is_valid(&&nested_objects(100)));
    let deep = nested_objects(200);
    assert!(!recursive.is_valid(&&deep));
    let got = recursive.validate(&&deep).unwrap_err();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].code, ErrorCode::NestingTooDeep);
}

#[test]
fn self_reference_without_progress_is_a_schema_error() {
    for (schema, pointer) in [
        (json!({"$ref": "#"}), ""),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            "/$defs/a",
        ),
        (
            json!({"anyOf": [{"$ref": "#"}], "unevaluatedProperties": false}),
            "",
        ),
    ] {
        let error = SchemaValidator::compile(&schema, Options::default()).unwrap_err();
        assert_eq!(error.pointer, pointer, "{error}");
        assert!(error.message.contains("cycle"), "{error}");
    }
    // Recursion that descends into the value is fine.
    let tree = validator(&json!({"properties": {"next": {"$ref": "#"}}, "type": "object"}));
    assert!(tree.is_valid(&&json!({"next": {"next": {}}})));
    assert!(!tree.is_valid(&&json!({"next": {"next": 1}})));
}

#[test]
fn lenient_coercion() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "s": {"type": "string"},
        "u": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    }});
    let options = Options {
        lenient: true,
        ..Options::default()
    };
    let lenient = SchemaValidator::compile(&schema, options).unwrap();
    let strict = validator(&schema);
    let instance = json!({"n": "5", "x": "-2.5", "b": "true", "s": "7", "u": "3"});
    assert!(!strict.is_valid(&&instance));
    assert!(lenient.is_valid(&&instance));
    let coercions = lenient.validate_lenient(&&instance).unwrap();
    let got: Vec<(String, Value)> = coercions
        .iter()
        .map(|c| (json_pointer(&c.path), c.value.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("/n".to_owned(), json!(5)),
            ("/x".to_owned(), json!(-2.5)),
            ("/b".to_owned(), json!(true)),
            ("/u".to_owned(), json!(3)),
        ]
    );
    // The coerced value is still checked, and "2.5" is not an integer.
    let bad = json!({"n": "0", "x": "abc"});
    let got = summary(&lenient.validate_lenient(&&bad).unwrap_err());
    assert_eq!(got[0].0, "/n");
    assert_eq!(got[0].1, "number_too_small");
    assert_eq!(got[1].1, "wrong_type");
    assert!(!lenient.is_valid(&&json!({"n": "2.5"})));
    assert!(
        strict
            .validate_lenient(&&json!({"n": 3}))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn json_number_semantics() {
    let integer = validator(&json!({"type": "integer"}));
    assert!(integer.is_valid(&&json!(1.0)));
    assert!(!integer.is_valid(&&json!("5")));
    assert!(!integer.is_valid(&&json!(true)));
    assert!(!validator(&json!({"type": "number"})).is_valid(&&json!(false)));
}

#[test]
fn formats_are_annotations_unless_asserted() {
    let schema = json!({"format": "date-time"});
    assert!(validator(&schema).is_valid(&&json!("yesterday")));
    let asserting = SchemaValidator::compile(
        &schema,
        Options {
            assert_formats: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(!asserting.is_valid(&&json!("yesterday")));
    assert!(asserting.is_valid(&&json!("2024-05-01T10:00:00+02:00")));
    assert_eq!(
        asserting.validate(&&json!("x")).unwrap_err()[0].code,
        ErrorCode::InvalidFormat
    );
}

#[test]
fn schema_errors_point_into_the_schema() {
    let bad_regex = SchemaValidator::compile(
        &json!({"properties": {"a": {"pattern": "(unclosed"}}}),
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(bad_regex.pointer, "/properties/a/pattern");
    let bad_ref = SchemaValidator::compile(
        &json!({"items": {"$ref": "#/$defs/nope"}}),
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(bad_ref.pointer, "/items/$ref");
    assert!(bad_ref.to_string().contains("cannot resolve"));
}

#[test]
fn reference_fragments_are_json_pointers_read_strictly() {
    let defs = json!({
        "a b": {"type": "integer"},
        "%": {"type": "string"},
        "%zz": {},
        "\u{fffd}": {},
        "x/y": {"type": "boolean"},
        "list": [{"type": "null"}, {"type": "array"}]
    });
    let resolves = |reference: &str, instance: &Value| {
        let schema = json!({"$defs": defs, "$ref": reference});
        validator(&schema).is_valid(&instance)
    };
    assert!(resolves("#/$defs/a%20b", &json!(1)));
    assert!(resolves("#/%24defs/%25", &json!("s")));
    assert!(resolves("#/$defs/x~1y", &json!(true)));
    assert!(resolves("#/$defs/list/1", &json!([])));
    // A malformed escape, bytes that are not UTF-8, an index with a sign or a leading zero:
    // refused (RFC 3986, RFC 6901), never read as a guess (`%zz` as itself, `%ff` as U+FFFD,
    // `01` as `1`), even where the guess would name a schema.
    for reference in [
        "#/$defs/%zz",
        "#/$defs/%ff",
        "#/$defs/list/01",
        "#/$defs/list/+1",
    ] {
        let schema = json!({"$defs": defs, "$ref": reference});
        let error = SchemaValidator::compile(&schema, Options::default()).unwrap_err();
        assert!(
            error.to_string().contains("cannot resolve"),
            "{reference}: {error}"
        );
    }
}

#[test]
fn validator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SchemaValidator>();
}

#[test]
fn one_backtracking_budget_a_validation() {
    // A backreference needs backtracking; nested quantifiers then explode on a near miss.
    let schema = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"pattern": r"^(?:(a+)+\1)+$"}}},
        "patternProperties": {r"^(?=x)x+$": true}
    });
    let limits = Limits {
        max_errors: 100,
        ..Limits::default()
    };
    let options = Options {
        limits,
        ..Options::default()
    };
    let validator = SchemaValidator::compile(&schema, options).unwrap();
    assert!(validator.has_backtracking_pattern());
    assert!(
        !super::SchemaValidator::compile(&json!({"pattern": "^(a+)+$"}), Options::default())
            .unwrap()
            .has_backtracking_pattern()
    );
    let hostile = format!("{}!", "a".repeat(40));
    let mut tags: Vec<Value> = vec![json!("aa")];
    tags.extend((0..50).map(|_| json!(hostile)));
    let instance = json!({"tags": tags, "xx": 1});
    let start = std::time::Instant::now();
    let errors = validator.validate(&&instance).unwrap_err();
    let elapsed = start.elapsed();
    // Every hostile string is reported, the benign one before them is not, and the names matched
    // by a lookahead after the budget is spent ("tags" itself, then "xx") are refused for their
    // cost too.
    let codes: Vec<(String, &str)> = errors
        .iter()
        .map(|e| (json_pointer(&e.path), e.code.as_str()))
        .collect();
    let mut expected: Vec<(String, &str)> = (1..=50)
        .map(|index| (format!("/tags/{index}"), "pattern_too_complex"))
        .collect();
    expected.push(("/tags".to_owned(), "pattern_too_complex"));
    expected.push(("/xx".to_owned(), "pattern_too_complex"));
    assert_eq!(codes, expected);
    assert!(errors[0].expected.contains("backtracking steps"));
    assert!(errors[1].expected.contains("backtracking budget"));
    // Two overrunning matches (one a walk) and the rest refused at once: far below 50 matches'
    // worth of the per-match budget, even on a slow machine.
    assert!(elapsed < std::time::Duration::from_secs(5), "{elapsed:?}");
    // A fresh validation starts with a fresh budget.
    assert!(validator.is_valid(&&json!({"tags": ["aa"], "xx": 1})));
}
