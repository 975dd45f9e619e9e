//! JSON values: a read-only view of them, so one validator serves every input kind, a fast
//! reader of JSON text ([`scan`]), and JSON Pointers ([`pointer`]).
//!
//! The core implements [`Instance`] for `&serde_json::Value`; the binding crate implements it for
//! Python objects, so a parsed mapping is validated in place without first copying it.
pub mod pointer;
pub mod scan;

use std::borrow::Cow;

use serde_json::Value;

/// The JSON type of a value. `Integer` is a number with no fractional part (JSON Schema's rule:
/// `1.0` is an integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Null,
    Bool,
    Integer,
    Number,
    String,
    Array,
    Object,
    /// A value with no JSON meaning (a Python object that is not JSON-like).
    Other,
}

impl Kind {
    /// The JSON Schema name of the kind (`"other"` for non-JSON values).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool => "boolean",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::String => "string",
            Self::Array => "array",
            Self::Object => "object",
            Self::Other => "other",
        }
    }
}

/// True when `value` is finite with no fractional part. Avoids `f64::fract`, which on baseline
/// x86-64 is a call into libm's `trunc`.
#[inline]
pub fn is_integral(value: f64) -> bool {
    // Every float of magnitude 2^52 or more is an integer; below that the cast is exact.
    const EXACT: f64 = 4_503_599_627_370_496.0;
    if value.abs() >= EXACT {
        return value.is_finite();
    }
    #[expect(clippy::float_cmp, reason = "an exact round trip is the point")]
    let integral = (value as i64) as f64 == value;
    integral
}

impl Kind {
    /// The kind of a float value: `Integer` when integral (JSON Schema counts `1.0` as an
    /// integer), `Number` otherwise, `Other` when not finite (no JSON number).
    #[inline]
    pub fn of_float(value: f64) -> Self {
        if !value.is_finite() {
            Self::Other
        } else if is_integral(value) {
            Self::Integer
        } else {
            Self::Number
        }
    }
}

/// A JSON number, kept exact where the input was an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    I64(i64),
    U64(u64),
    F64(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Self::I64(value) => value as f64,
            Self::U64(value) => value as f64,
            Self::F64(value) => value,
        }
    }

    /// True when the number has no fractional part.
    pub fn is_integer(self) -> bool {
        match self {
            Self::I64(_) | Self::U64(_) => true,
            Self::F64(value) => is_integral(value),
        }
    }
}

/// Anything a validator can read as JSON. Cheap to clone (a reference or a refcounted handle).
pub trait Instance: Sized + Clone {
    /// An object key, readable as `&str`.
    type Key: AsRef<str>;

    fn kind(&self) -> Kind;
    fn as_bool(&self) -> Option<bool>;
    fn as_number(&self) -> Option<Number>;
    fn as_str(&self) -> Option<Cow<'_, str>>;
    /// Number of items, `None` when not an array.
    fn array_len(&self) -> Option<usize>;
    /// The items of an array; empty for anything else.
    fn array_items(&self) -> impl Iterator<Item = Self> + '_;
    /// Number of properties, `None` when not an object.
    fn object_len(&self) -> Option<usize>;
    fn object_get(&self, key: &str) -> Option<Self>;
    /// The (key, value) pairs of an object, in input order; empty for anything else.
    fn object_items(&self) -> impl Iterator<Item = (Self::Key, Self)> + '_;
    /// A `serde_json::Value` copy, used for error messages and rare slow paths.
    fn to_value(&self) -> Value;
    /// The exact value of a number that [`as_number`](Self::as_number) only approximates (an
    /// integer beyond 64 bits), as JSON number text or a `0x`-prefixed hexadecimal integer
    /// (`-0x1f`); `None` when `as_number` is exact. Asked only for numbers beyond 2^63.
    fn number_text(&self) -> Option<Cow<'_, str>> {
        None
    }
}

impl<'a> Instance for &'a Value {
    type Key = &'a String;

    fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(number) => {
                let integral =
                    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(is_integral);
                if integral {
                    Kind::Integer
                } else {
                    Kind::Number
                }
            }
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        Value::as_bool(self)
    }

    fn as_number(&self) -> Option<Number> {
        let Value::Number(number) = self else {
            return None;
        };
        if let Some(value) = number.as_i64() {
            Some(Number::I64(value))
        } else if let Some(value) = number.as_u64() {
            Some(Number::U64(value))
        } else {
            number.as_f64().map(Number::F64)
        }
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        Value::as_str(self).map(Cow::Borrowed)
    }

    fn array_len(&self) -> Option<usize> {
        self.as_array().map(Vec::len)
    }

    fn array_items(&self) -> impl Iterator<Item = Self> + '_ {
        self.as_array().into_iter().flatten()
    }

    fn object_len(&self) -> Option<usize> {
        self.as_object().map(serde_json::Map::len)
    }

    fn object_get(&self, key: &str) -> Option<Self> {
        self.as_object().and_then(|object| object.get(key))
    }

    fn object_items(&self) -> impl Iterator<Item = (Self::Key, Self)> + '_ {
        self.as_object().into_iter().flatten()
    }

    fn to_value(&self) -> Value {
        (*self).clone()
    }
}

/// JSON equality: numbers compare by value (`1 == 1.0`), objects ignore key order.
pub fn json_eq<A: Instance, B: Instance>(left: &A, right: &B) -> bool {
    match (left.kind(), right.kind()) {
        (Kind::Integer | Kind::Number, Kind::Integer | Kind::Number) => {
            match (left.as_number(), right.as_number()) {
                (Some(a), Some(b)) => numbers_eq(a, b),
                _ => false,
            }
        }
        (Kind::Null, Kind::Null) => true,
        (Kind::Bool, Kind::Bool) => left.as_bool() == right.as_bool(),
        (Kind::String, Kind::String) => left.as_str() == right.as_str(),
        (Kind::Array, Kind::Array) => {
            left.array_len() == right.array_len()
                && left
                    .array_items()
                    .zip(right.array_items())
                    .all(|(a, b)| json_eq(&a, &b))
        }
        (Kind::Object, Kind::Object) => {
            left.object_len() == right.object_len()
                && left.object_items().all(|(key, a)| {
                    right
                        .object_get(key.as_ref())
                        .is_some_and(|b| json_eq(&a, &b))
                })
        }
        _ => false,
    }
}

/// Exact numeric equality across representations.
pub fn numbers_eq(left: Number, right: Number) -> bool {
    match (left, right) {
        (Number::I64(a), Number::I64(b)) => a == b,
        (Number::U64(a), Number::U64(b)) => a == b,
        (Number::I64(a), Number::U64(b)) | (Number::U64(b), Number::I64(a)) => {
            u64::try_from(a).is_ok_and(|a| a == b)
        }
        (Number::F64(a), other) | (other, Number::F64(a)) => a == other.as_f64(),
    }
}
