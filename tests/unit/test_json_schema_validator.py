"""`JsonSchemaValidator`: arbitrary draft 2020-12 schemas, error details, limits and options."""

from __future__ import annotations

import orjson
import pytest

import ferrotool
from ferrotool import JsonSchemaValidator, ValidationError

ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "customer": {"type": "string", "minLength": 1},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                "required": ["sku", "qty"],
                "additionalProperties": False,
            },
        },
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["customer", "items"],
    "additionalProperties": False,
}


def errors_of(
    validator: JsonSchemaValidator, instance: object
) -> tuple[ferrotool.ErrorDetail, ...]:
    errors = validator.errors(instance)
    with pytest.raises(ValidationError) as info:
        validator.validate(instance)
    assert info.value.errors == errors
    assert validator.is_valid(instance) is False
    return errors


def test_wrong_type_has_path_pointer_expected_and_found() -> None:
    validator = JsonSchemaValidator(ORDER_SCHEMA)
    instance = {"customer": "ann", "items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": "three"}]}
    (error,) = errors_of(validator, instance)
    assert error.code == "wrong_type"
    assert error.path == ("items", 1, "qty")
    assert error.pointer == "/items/1/qty"
    assert error.expected == "integer"
    assert "three" in error.found
    assert "items/1/qty" in error.message


@pytest.mark.parametrize(
    ("schema", "instance", "code"),
    [
        ({"type": "integer"}, "5", "wrong_type"),
        ({"required": ["a"]}, {}, "missing_property"),
        ({"additionalProperties": False}, {"x": 1}, "unexpected_property"),
        ({"propertyNames": {"maxLength": 1}}, {"xy": 1}, "invalid_property_name"),
        ({"minProperties": 1}, {}, "too_few_properties"),
        ({"maxProperties": 0}, {"a": 1}, "too_many_properties"),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, "dependency_missing"),
        ({"enum": [1, 2]}, 3, "not_in_enum"),
        ({"const": "x"}, "y", "not_const"),
        ({"minLength": 2}, "a", "string_too_short"),
        ({"maxLength": 1}, "ab", "string_too_long"),
        ({"pattern": "^a"}, "ba", "pattern_mismatch"),
        ({"minimum": 1}, 0, "number_too_small"),
        ({"exclusiveMaximum": 1}, 1, "number_too_large"),
        ({"multipleOf": 3}, 4, "not_multiple_of"),
        ({"minItems": 1}, [], "array_too_short"),
        ({"maxItems": 1}, [1, 2], "array_too_long"),
        ({"uniqueItems": True}, [1, 1.0], "duplicate_items"),
        ({"contains": {"type": "string"}}, [1], "contains_too_few"),
        ({"contains": {"type": "string"}, "maxContains": 1}, ["a", "b"], "contains_too_many"),
        ({"prefixItems": [{}], "items": False}, [1, 2], "unexpected_item"),
        ({"anyOf": [{"minimum": 5}, {"multipleOf": 2}]}, 1, "no_match"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 1, "multiple_matches"),
        ({"not": {"type": "integer"}}, 1, "not_allowed"),
        (False, 1, "false_schema"),
        ({"unevaluatedProperties": False}, {"a": 1}, "unevaluated_property"),
        ({"prefixItems": [{}], "unevaluatedItems": False}, [1, 2], "unevaluated_item"),
    ],
)
def test_each_error_code(schema: object, instance: object, code: str) -> None:
    errors = errors_of(JsonSchemaValidator(schema), instance)
    assert code in [e.code for e in errors], errors


def test_format_is_an_annotation_unless_asserted() -> None:
    schema = {"type": "string", "format": "date"}
    assert JsonSchemaValidator(schema).is_valid("not a date")
    asserted = JsonSchemaValidator(schema, assert_formats=True)
    (error,) = errors_of(asserted, "2023-02-29")
    assert error.code == "invalid_format"
    assert asserted.is_valid("2024-02-29")


def test_all_errors_are_collected_and_capped() -> None:
    validator = JsonSchemaValidator({"items": {"type": "integer"}}, max_errors=5)
    errors = errors_of(validator, ["x"] * 40)
    assert len(errors) == 5
    assert [e.path for e in errors] == [(i,) for i in range(5)]
    many = JsonSchemaValidator({"items": {"type": "integer"}})
    assert len(many.errors(["x"] * 40)) == 20
    assert len(many.errors(["x"] * 3)) == 3


def test_missing_and_unknown_properties_are_all_reported() -> None:
    errors = errors_of(JsonSchemaValidator(ORDER_SCHEMA), {"extra": 1})
    codes = sorted(e.code for e in errors)
    assert codes == ["missing_property", "missing_property", "unexpected_property"]
    expected = " ".join(e.expected for e in errors if e.code == "missing_property")
    assert "customer" in expected
    assert "items" in expected


def test_validate_json_returns_the_parsed_value() -> None:
    validator = JsonSchemaValidator(ORDER_SCHEMA)
    instance = {"customer": "ann", "items": [{"sku": "a", "qty": 2}], "unit": "c"}
    raw = orjson.dumps(instance)
    assert validator.validate_json(raw) == instance
    assert validator.validate_json(raw.decode()) == instance
    assert validator.is_valid_json(raw)
    with pytest.raises(ValidationError) as info:
        validator.validate_json(b'{"customer": ""}')
    assert sorted(e.code for e in info.value.errors) == ["missing_property", "string_too_short"]


def test_invalid_json_has_its_position() -> None:
    validator = JsonSchemaValidator({})
    with pytest.raises(ValidationError) as info:
        validator.validate_json(b"[1,\n  2,,]")
    (error,) = info.value.errors
    assert error.code == "invalid_json"
    assert "line 2" in error.found
    assert "column" in error.found
    assert not validator.is_valid_json(b"[1,")


def test_input_too_large_and_nesting_too_deep() -> None:
    validator = JsonSchemaValidator({}, max_bytes=64)
    with pytest.raises(ValidationError) as info:
        validator.validate_json(b"[" + b"1," * 100 + b"1]")
    assert info.value.errors[0].code == "input_too_large"
    deep = JsonSchemaValidator({"items": {"items": {}}})
    with pytest.raises(ValidationError) as info:
        deep.validate_json(b"[" * 100_000 + b"]" * 100_000)
    assert info.value.errors[0].code == "nesting_too_deep"


@pytest.mark.parametrize("max_depth", [2, 64, 128])
def test_max_depth_is_honoured_for_raw_json(max_depth: int) -> None:
    """Nesting up to ``max_depth`` levels is accepted, one more is ``nesting_too_deep``."""
    validator = JsonSchemaValidator({}, max_depth=max_depth)
    assert validator.is_valid_json(b"[" * max_depth + b"]" * max_depth)
    deeper = b"[" * (max_depth + 1) + b"]" * (max_depth + 1)
    with pytest.raises(ValidationError) as info:
        validator.validate_json(deeper)
    assert info.value.errors[0].code == "nesting_too_deep"


@pytest.mark.parametrize("max_depth", [0, 129, 1000])
def test_max_depth_beyond_the_parsers_bound_is_refused(max_depth: int) -> None:
    with pytest.raises(ValueError, match="max_depth must be between 1 and 128"):
        JsonSchemaValidator({}, max_depth=max_depth)


def test_deep_python_input_is_rejected_where_the_schema_descends() -> None:
    """Raw JSON is bounded before parsing; a Python value is bounded wherever validation goes
    into it (a value the schema never looks into cannot make the validator recurse)."""
    nested: list[object] = []
    for _ in range(50_000):
        nested = [nested]
    assert not JsonSchemaValidator({}).is_valid_json(b"[" * 50_000 + b"]" * 50_000)
    recursive = JsonSchemaValidator({"type": "array", "items": {"$ref": "#"}})
    assert not recursive.is_valid(nested)
    assert recursive.errors(nested)[0].code == "nesting_too_deep"
    assert JsonSchemaValidator({}).is_valid(nested)


def test_json_semantics_and_lenient_mode() -> None:
    integer = JsonSchemaValidator({"type": "integer"})
    assert integer.is_valid(1.0)
    assert not integer.is_valid(True)
    assert not integer.is_valid("5")
    assert not JsonSchemaValidator({"type": "number"}).is_valid(False)
    lenient = JsonSchemaValidator({"type": "integer"}, lenient=True)
    assert lenient.lenient
    assert lenient.is_valid("5")
    assert lenient.validate_json(b'"5"') == 5
    assert not lenient.is_valid("five")
    assert JsonSchemaValidator({"type": "boolean"}, lenient=True).validate_json(b'"true"') is True
    assert JsonSchemaValidator({"type": "array"}).is_valid((1, 2))


def test_schema_as_text_or_bytes() -> None:
    for schema in ('{"type": "integer"}', b'{"type": "integer"}'):
        validator = JsonSchemaValidator(schema)
        assert validator.is_valid(3)
        assert not validator.is_valid("3")


def test_resources_serve_remote_references() -> None:
    schema = {"$ref": "http://example.com/item.json"}
    remote = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
    validator = JsonSchemaValidator(schema, resources={"http://example.com/item.json": remote})
    assert validator.is_valid({"id": 1})
    assert not validator.is_valid({"id": "1"})
    assert not validator.is_valid({})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strng"},
        {"pattern": "("},
        {"$ref": "http://example.com/missing.json"},
        {"$ref": "#/$defs/nope"},
        {"minimum": "1"},
        '{"type": ',
    ],
)
def test_invalid_schemas_raise_value_error(schema: object) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message is checked below when it helps
        JsonSchemaValidator(schema)


def test_invalid_schema_message_points_at_the_problem() -> None:
    with pytest.raises(ValueError, match="/properties/a/pattern"):
        JsonSchemaValidator({"properties": {"a": {"pattern": "("}}})


def test_raw_json_input_type_and_encoding() -> None:
    validator = JsonSchemaValidator({})
    with pytest.raises(TypeError):
        validator.validate_json(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"(?i)utf-?8"):
        validator.validate_json(b'"\xff"')


def test_multiple_of_is_exact_for_large_integers() -> None:
    # An integer is compared exactly, not through its nearest float's shortest digits.
    assert not JsonSchemaValidator({"multipleOf": 5.0}).is_valid(-1729382256910270464)
    assert JsonSchemaValidator({"multipleOf": 5.0}).is_valid(-1729382256910270460)
    assert not JsonSchemaValidator({"multipleOf": 5}).is_valid(-1729382256910270464)


ITEMS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 3},
        "qty": {"type": "integer", "minimum": 1},
        "price": {"type": "number", "maximum": 10},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": ["name", "qty"],
    "additionalProperties": False,
}


def test_subclasses_of_json_types_read_like_the_plain_types() -> None:
    import collections
    import enum

    class Text(str):
        pass

    class Count(int):
        pass

    class Price(float):
        pass

    class Color(enum.StrEnum):
        RED = "red"

    class Size(enum.IntEnum):
        BIG = 20

    validator = JsonSchemaValidator(ITEMS_SCHEMA)
    plain = {"name": "abcd", "qty": 0, "price": 12.5, "tags": ["a", 1], "extra": {"a": "x"}}
    fancy = collections.OrderedDict(
        [
            (Text("name"), Text("abcd")),
            ("qty", Count(0)),
            ("price", Price(12.5)),
            ("tags", ("a", 1)),
            ("extra", collections.defaultdict(int, {"a": "x"})),
        ]
    )
    assert errors_of(validator, fancy) == errors_of(validator, plain)
    assert validator.is_valid({"name": Color.RED, "qty": Size.BIG})
    assert not validator.is_valid({"name": "a", "qty": True})


def test_keys_that_are_not_strings_read_as_their_text() -> None:
    closed = JsonSchemaValidator({"additionalProperties": False})
    (error,) = errors_of(closed, {(1, 2): 2})
    assert error.code == "unexpected_property"
    assert error.path == ("(1, 2)",)
    assert not closed.is_valid({None: 1})
    keyed = JsonSchemaValidator({"patternProperties": {"^1$": {"type": "integer"}}})
    (error,) = errors_of(keyed, {1: "x"})
    assert error.path == ("1",)


def test_lookups_in_large_objects() -> None:
    large = {f"k{i}": i for i in range(100)}
    assert JsonSchemaValidator({"properties": {"k5": {"type": "integer"}}}).is_valid(large)
    (error,) = errors_of(JsonSchemaValidator({"properties": {"k5": {"type": "string"}}}), large)
    assert error.path == ("k5",)
    assert error.code == "wrong_type"
    (error,) = errors_of(JsonSchemaValidator({"required": ["k5", "zz"]}), large)
    assert error.code == "missing_property"
    assert "zz" in error.expected
    dependent = JsonSchemaValidator({"dependentRequired": {"k1": ["k99", "k100"]}})
    (error,) = errors_of(dependent, large)
    assert "k100" in error.expected


def test_strings_with_lone_surrogates() -> None:
    closed = JsonSchemaValidator({"additionalProperties": False})
    (error,) = errors_of(closed, {"\ud800": 1})
    assert error.code == "unexpected_property"
    assert error.path == ("\ufffd" * 3,)
    # A lone surrogate reads as U+FFFD per byte of its UTF-8 form.
    short = JsonSchemaValidator({"type": "string", "maxLength": 3})
    assert short.is_valid("\ud800")
    assert not short.is_valid("\ud800a")
    assert JsonSchemaValidator({"enum": ["x", "\ud800"]}).is_valid("\ud800")


def test_numbers_beyond_64_bits_and_non_finite_floats() -> None:
    positive = JsonSchemaValidator({"type": "integer", "minimum": 0})
    assert positive.is_valid(2**64)
    assert positive.is_valid(2**70)
    assert not positive.is_valid(-(2**70))
    assert not positive.is_valid(-1)
    assert JsonSchemaValidator({"const": 2**64 - 1}).is_valid(2**64 - 1)
    (error,) = errors_of(JsonSchemaValidator({"type": "number"}), float("nan"))
    assert error.code == "wrong_type"
    assert not JsonSchemaValidator({"type": "number"}).is_valid(float("inf"))
    assert JsonSchemaValidator({"type": "integer"}).is_valid(3.0)


def test_values_with_no_json_meaning() -> None:
    (error,) = errors_of(JsonSchemaValidator({"type": "object"}), {1, 2})
    assert error.code == "wrong_type"
    assert error.found == "a non-JSON value"
    assert JsonSchemaValidator({}).is_valid(object())


def test_validation_leaves_the_garbage_collector_as_it_was() -> None:
    import gc

    validator = JsonSchemaValidator(ITEMS_SCHEMA)
    assert gc.isenabled()
    assert not validator.is_valid({"name": 1})
    assert gc.isenabled()
    gc.disable()
    try:
        assert validator.is_valid({"name": "a", "qty": 2})
        assert validator.errors({"qty": 0})
        assert not gc.isenabled()
    finally:
        gc.enable()


DRAFT7_DEPENDENCIES = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
    "dependencies": {"card": ["billing"]},
}


def test_schema_of_a_draft_follows_its_dollar_schema() -> None:
    validator = JsonSchemaValidator(DRAFT7_DEPENDENCIES)
    assert validator.draft == "draft2020-12"  # the default; `$schema` wins over it
    assert validator.is_valid({"card": "x", "billing": "y"})
    [error] = validator.errors({"card": "x"})
    assert error.code == "dependency_missing"
    # Draft 7's array `items` and `additionalItems`.
    tuple_schema = {
        "$schema": "http://json-schema.org/draft-07/schema",
        "items": [{"type": "integer"}],
        "additionalItems": False,
    }
    assert JsonSchemaValidator(tuple_schema).is_valid([1])
    assert not JsonSchemaValidator(tuple_schema).is_valid([1, 2])


def test_draft_argument_selects_the_draft_of_a_document_without_dollar_schema() -> None:
    schema = {"maximum": 5, "exclusiveMaximum": True}
    draft4 = JsonSchemaValidator(schema, draft="draft4")
    assert draft4.draft == "draft4"
    assert draft4.is_valid(4)
    assert not draft4.is_valid(5)
    with pytest.raises(ValueError, match="exclusiveMaximum"):
        JsonSchemaValidator(schema)  # in 2020-12 it must be a number
    assert not JsonSchemaValidator({"items": [{"type": "string"}]}, draft="draft7").is_valid([1])
    with pytest.raises(ValueError, match="unknown draft"):
        JsonSchemaValidator({}, draft="draft3")  # type: ignore[arg-type]


def test_unknown_dollar_schema_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"unknown \$schema \"https://example.com/my-meta\""):
        JsonSchemaValidator({"$schema": "https://example.com/my-meta", "type": "string"})


def test_format_assertion_vocabulary_asserts_formats() -> None:
    metaschema = {
        "$id": "https://example.com/format-assertion-meta",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$vocabulary": {
            "https://json-schema.org/draft/2020-12/vocab/core": True,
            "https://json-schema.org/draft/2020-12/vocab/format-assertion": False,
        },
    }
    schema = {"$schema": "https://example.com/format-assertion-meta", "format": "ipv4"}
    validator = JsonSchemaValidator(schema, resources={metaschema["$id"]: metaschema})
    assert validator.is_valid("127.0.0.1")
    assert not validator.is_valid("not-an-ipv4")
    assert JsonSchemaValidator({"format": "ipv4"}).is_valid("not-an-ipv4")  # an annotation
