//! The error model shared by every validator: stable codes, JSON paths, and limits.
use std::borrow::Cow;
use std::fmt;

/// A stable, `snake_case` error code. The names are public API: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The input is not valid JSON (the message carries the position).
    InvalidJson,
    /// The input is larger than `Limits::max_bytes`.
    InputTooLarge,
    /// The input nests deeper than `Limits::max_depth`.
    NestingTooDeep,
    /// The value has the wrong JSON type.
    WrongType,
    /// A required property is missing.
    MissingProperty,
    /// A property that the schema does not allow is present.
    UnexpectedProperty,
    /// A property name fails `propertyNames`.
    InvalidPropertyName,
    /// Fewer properties than `minProperties`.
    TooFewProperties,
    /// More properties than `maxProperties`.
    TooManyProperties,
    /// A property required by `dependentRequired` is missing.
    DependencyMissing,
    /// The value is not one of the allowed values (`enum`, `Literal`, `Enum`).
    NotInEnum,
    /// The value differs from `const`.
    NotConst,
    /// The string is shorter than `minLength`.
    StringTooShort,
    /// The string is longer than `maxLength`.
    StringTooLong,
    /// The string does not match `pattern`.
    PatternMismatch,
    /// Matching `pattern` (one with lookaround or backreferences) took more backtracking steps
    /// than allowed, so the string is refused unmatched.
    PatternTooComplex,
    /// The string does not match its `format` (when formats are asserted, and always for typed values).
    InvalidFormat,
    /// The number is below `minimum` / `exclusiveMinimum`.
    NumberTooSmall,
    /// The number is above `maximum` / `exclusiveMaximum`.
    NumberTooLarge,
    /// The number is not a multiple of `multipleOf`.
    NotMultipleOf,
    /// The array has fewer items than `minItems`.
    ArrayTooShort,
    /// The array has more items than `maxItems`.
    ArrayTooLong,
    /// The array has duplicate items but `uniqueItems` is set.
    DuplicateItems,
    /// Fewer items match `contains` than `minContains` (default 1).
    ContainsTooFew,
    /// More items match `contains` than `maxContains`.
    ContainsTooMany,
    /// An item is present where the schema allows none (`items: false`, a fixed tuple's extra item).
    UnexpectedItem,
    /// No subschema of `anyOf` / `oneOf` / a union matched.
    NoMatch,
    /// More than one subschema of `oneOf` matched.
    MultipleMatches,
    /// The value matched a `not` subschema.
    NotAllowed,
    /// The schema is `false`: nothing is valid here.
    FalseSchema,
    /// A property not evaluated by any subschema, while `unevaluatedProperties` forbids it.
    UnevaluatedProperty,
    /// An item not evaluated by any subschema, while `unevaluatedItems` forbids it.
    UnevaluatedItem,
    /// The value is well-typed JSON but cannot become the requested Python value.
    InvalidValue,
}

impl ErrorCode {
    /// The stable `snake_case` name of the code.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::InputTooLarge => "input_too_large",
            Self::NestingTooDeep => "nesting_too_deep",
            Self::WrongType => "wrong_type",
            Self::MissingProperty => "missing_property",
            Self::UnexpectedProperty => "unexpected_property",
            Self::InvalidPropertyName => "invalid_property_name",
            Self::TooFewProperties => "too_few_properties",
            Self::TooManyProperties => "too_many_properties",
            Self::DependencyMissing => "dependency_missing",
            Self::NotInEnum => "not_in_enum",
            Self::NotConst => "not_const",
            Self::StringTooShort => "string_too_short",
            Self::StringTooLong => "string_too_long",
            Self::PatternMismatch => "pattern_mismatch",
            Self::PatternTooComplex => "pattern_too_complex",
            Self::InvalidFormat => "invalid_format",
            Self::NumberTooSmall => "number_too_small",
            Self::NumberTooLarge => "number_too_large",
            Self::NotMultipleOf => "not_multiple_of",
            Self::ArrayTooShort => "array_too_short",
            Self::ArrayTooLong => "array_too_long",
            Self::DuplicateItems => "duplicate_items",
            Self::ContainsTooFew => "contains_too_few",
            Self::ContainsTooMany => "contains_too_many",
            Self::UnexpectedItem => "unexpected_item",
            Self::NoMatch => "no_match",
            Self::MultipleMatches => "multiple_matches",
            Self::NotAllowed => "not_allowed",
            Self::FalseSchema => "false_schema",
            Self::UnevaluatedProperty => "unevaluated_property",
            Self::UnevaluatedItem => "unevaluated_item",
            Self::InvalidValue => "invalid_value",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One step of a JSON path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathItem {
    Key(Box<str>),
    Index(usize),
}

/// Where a value sits inside the input, outermost step first.
pub type Path = Vec<PathItem>;

/// Renders a path as a JSON Pointer (RFC 6901), `""` for the root.
pub fn json_pointer(path: &[PathItem]) -> String {
    let mut out = String::new();
    for item in path {
        out.push('/');
        match item {
            PathItem::Key(key) => {
                for ch in key.chars() {
                    match ch {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        _ => out.push(ch),
                    }
                }
            }
            PathItem::Index(index) => out.push_str(&index.to_string()),
        }
    }
    out
}

/// One validation error, short enough to hand back to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    pub code: ErrorCode,
    pub path: Path,
    /// What the schema expected, e.g. `integer`, `at least 1`, `one of "c", "f"`.
    pub expected: Cow<'static, str>,
    /// What was found, a short rendering of the value, e.g. `string "three"`.
    pub found: Cow<'static, str>,
}

impl LineError {
    pub fn new(
        code: ErrorCode,
        path: Path,
        expected: impl Into<Cow<'static, str>>,
        found: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            code,
            path,
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// A one-line message: `items/2/qty: expected integer, found string "three" (wrong_type)`.
    pub fn message(&self) -> String {
        let pointer = json_pointer(&self.path);
        let location = if pointer.is_empty() {
            "input"
        } else {
            &pointer[1..]
        };
        format!(
            "{location}: expected {}, found {} ({})",
            self.expected, self.found, self.code
        )
    }
}

/// Bounds that protect validators from hostile or accidental input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays and objects accepted (the root value is depth 0).
    pub max_depth: u16,
    /// Largest raw JSON input accepted, in bytes.
    pub max_bytes: usize,
    /// Errors collected before validation stops; the rest are not reported.
    pub max_errors: usize,
}

impl Limits {
    pub const DEFAULT: Self = Self {
        max_depth: 128,
        max_bytes: 8 * 1024 * 1024,
        max_errors: 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Renders a short, bounded description of a found value for error messages.
pub fn describe_str(value: &str) -> String {
    const MAX_CHARS: usize = 40;
    let mut out = String::from("string \"");
    for (count, ch) in value.chars().enumerate() {
        if count == MAX_CHARS {
            out.push_str("...");
            break;
        }
        out.extend(ch.escape_debug());
    }
    out.push('"');
    out
}
