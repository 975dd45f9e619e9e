//! Scalar keyword checks (numeric bounds, string lengths and patterns), compiled once.
use std::cmp::Ordering;

use crate::error::ErrorCode;
use crate::ir::{NumberBounds, StringBounds};
use crate::json::Number;
use crate::pattern::{Budget, Pattern};

/// Orders two JSON numbers exactly when both are integers, by `f64` otherwise.
pub fn compare_numbers(left: Number, right: Number) -> Ordering {
    match (left, right) {
        (Number::I64(a), Number::I64(b)) => a.cmp(&b),
        (Number::U64(a), Number::U64(b)) => a.cmp(&b),
        (Number::I64(a), Number::U64(b)) => {
            if a < 0 {
                Ordering::Less
            } else {
                (a as u64).cmp(&b)
            }
        }
        (Number::U64(a), Number::I64(b)) => {
            if b < 0 {
                Ordering::Greater
            } else {
                a.cmp(&(b as u64))
            }
        }
        _ => left
            .as_f64()
            .partial_cmp(&right.as_f64())
            .unwrap_or(Ordering::Equal),
    }
}

/// A finite decimal `digits * 10^exponent`, exact for every float's shortest representation.
struct Decimal {
    digits: u128,
    exponent: i32,
}

fn decimal(value: f64) -> Option<Decimal> {
    if !value.is_finite() {
        return None;
    }
    // `{:e}` prints the shortest round-trip digits, e.g. `7.5e-3`.
    let mut buffer = [0u8; 40];
    let text = format_exp(value.abs(), &mut buffer)?;
    let (mantissa, exponent) = text.split_once('e')?;
    let mut exponent: i32 = exponent.parse().ok()?;
    let mut digits: u128 = 0;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    for byte in whole.bytes().chain(fraction.bytes()) {
        digits = digits
            .checked_mul(10)?
            .checked_add(u128::from(byte - b'0'))?;
    }
    exponent -= fraction.len() as i32;
    Some(Decimal { digits, exponent })
}

/// The decimal value of a JSON number: integers exactly, floats by their shortest round-trip
/// digits (the value the JSON text most likely wrote).
fn exact_decimal(number: Number) -> Option<Decimal> {
    match number {
        Number::I64(v) => Some(Decimal {
            digits: u128::from(v.unsigned_abs()),
            exponent: 0,
        }),
        Number::U64(v) => Some(Decimal {
            digits: u128::from(v),
            exponent: 0,
        }),
        Number::F64(v) => decimal(v),
    }
}

fn format_exp(value: f64, buffer: &mut [u8; 40]) -> Option<&str> {
    use std::io::Write;
    let mut cursor = std::io::Cursor::new(&mut buffer[..]);
    write!(cursor, "{value:e}").ok()?;
    let end = cursor.position() as usize;
    std::str::from_utf8(buffer.get(..end)?).ok()
}

/// True when the decimal `value` is an integer multiple of the decimal `divisor`, exactly and
/// whatever their exponents (`1e308` is a multiple of `0.5`).
fn decimal_multiple(value: &Decimal, divisor: &Decimal) -> bool {
    if value.digits == 0 {
        return true;
    }
    if divisor.digits == 0 {
        return false;
    }
    if value.exponent >= divisor.exponent {
        // value / divisor = (a / b) * 10^k: an integer when b / gcd(a, b) divides 10^k, that is
        // when it has no prime factors but at most k twos and k fives.
        let k = value.exponent.abs_diff(divisor.exponent);
        let mut rest = divisor.digits / gcd(value.digits, divisor.digits);
        for prime in [2, 5] {
            let mut count = 0;
            while rest.is_multiple_of(prime) && count < k {
                rest /= prime;
                count += 1;
            }
        }
        rest == 1
    } else {
        // value / divisor = a / (b * 10^k): a divisor beyond u128 exceeds any `a`.
        let k = value.exponent.abs_diff(divisor.exponent);
        10u128
            .checked_pow(k)
            .and_then(|scale| divisor.digits.checked_mul(scale))
            .is_some_and(|scaled| value.digits.is_multiple_of(scaled))
    }
}

const fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let rest = a % b;
        a = b;
        b = rest;
    }
    a
}

/// True when `value` is an integer multiple of `divisor`, exactly: integers as integers, floats
/// as the decimals their shortest round-trip digits write (`0.0075` is a multiple of `0.0001`,
/// `1053060799.0` is not one of `25`). A zero divisor has no multiples. Both validators (the
/// JSON Schema engine and the typed one) decide `multipleOf` here.
pub fn is_multiple_of(value: Number, divisor: Number) -> bool {
    let integer = |n: Number| match n {
        Number::I64(v) => Some(i128::from(v)),
        Number::U64(v) => Some(i128::from(v)),
        Number::F64(_) => None,
    };
    if let (Some(v), Some(d)) = (integer(value), integer(divisor)) {
        return d != 0 && v % d == 0;
    }
    let (v, d) = (value.as_f64(), divisor.as_f64());
    if d == 0.0 || d.is_nan() {
        return false;
    }
    if v == 0.0 {
        return true;
    }
    if let (Some(v), Some(d)) = (exact_decimal(value), exact_decimal(divisor)) {
        return decimal_multiple(&v, &d);
    }
    let quotient = v / d;
    quotient.is_finite() && quotient.fract() == 0.0
}

fn json_number(number: &serde_json::Number) -> Number {
    if let Some(value) = number.as_i64() {
        Number::I64(value)
    } else if let Some(value) = number.as_u64() {
        Number::U64(value)
    } else {
        Number::F64(number.as_f64().unwrap_or(f64::NAN))
    }
}

/// Numeric bounds, ready to check.
#[derive(Debug, Clone, Default)]
pub struct NumberCheck {
    minimum: Option<(Number, bool)>,
    maximum: Option<(Number, bool)>,
    multiple_of: Option<Number>,
}

/// A failed check: its code and what was expected.
pub type Failure = (ErrorCode, String);

impl NumberCheck {
    pub fn new(bounds: &NumberBounds) -> Self {
        let lower = |inclusive: &Option<serde_json::Number>,
                     exclusive: &Option<serde_json::Number>,
                     lower: bool| {
            let inclusive = inclusive.as_ref().map(|n| (json_number(n), false));
            let exclusive = exclusive.as_ref().map(|n| (json_number(n), true));
            match (inclusive, exclusive) {
                (Some(a), Some(b)) => {
                    // Keep the tighter of the two bounds.
                    let order = compare_numbers(a.0, b.0);
                    let a_tighter = if lower {
                        order == Ordering::Greater
                    } else {
                        order == Ordering::Less
                    };
                    Some(if a_tighter { a } else { b })
                }
                (a, b) => a.or(b),
            }
        };
        Self {
            minimum: lower(&bounds.ge, &bounds.gt, true),
            maximum: lower(&bounds.le, &bounds.lt, false),
            multiple_of: bounds.multiple_of.as_ref().map(json_number),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.minimum.is_none() && self.maximum.is_none() && self.multiple_of.is_none()
    }

    /// Checks one number against every bound; returns the first failure.
    pub fn check(&self, value: Number) -> Result<(), Failure> {
        if let Some((bound, exclusive)) = self.minimum {
            let order = compare_numbers(value, bound);
            if order == Ordering::Less || (exclusive && order == Ordering::Equal) {
                let relation = if exclusive {
                    "greater than"
                } else {
                    "at least"
                };
                return Err((
                    ErrorCode::NumberTooSmall,
                    format!("{relation} {}", render(bound)),
                ));
            }
        }
        if let Some((bound, exclusive)) = self.maximum {
            let order = compare_numbers(value, bound);
            if order == Ordering::Greater || (exclusive && order == Ordering::Equal) {
                let relation = if exclusive { "less than" } else { "at most" };
                return Err((
                    ErrorCode::NumberTooLarge,
                    format!("{relation} {}", render(bound)),
                ));
            }
        }
        if let Some(divisor) = self.multiple_of
            && !is_multiple_of(value, divisor)
        {
            return Err((
                ErrorCode::NotMultipleOf,
                format!("a multiple of {}", render(divisor)),
            ));
        }
        Ok(())
    }
}

/// Renders a number the way JSON would.
pub fn render(number: Number) -> String {
    match number {
        Number::I64(value) => value.to_string(),
        Number::U64(value) => value.to_string(),
        Number::F64(value) => {
            if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e16 {
                format!("{value:.1}")
            } else {
                value.to_string()
            }
        }
    }
}

/// String bounds, with the pattern compiled once.
#[derive(Debug, Clone)]
pub struct StringCheck {
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<Pattern>,
}

impl StringCheck {
    /// Compiles the bounds; a pattern that is not an ECMA-262 regular expression is an error.
    pub fn new(bounds: &StringBounds) -> Result<Self, String> {
        let pattern = match &bounds.pattern {
            Some(source) => Some(Pattern::new(source)?),
            None => None,
        };
        Ok(Self {
            min_length: bounds.min_length,
            max_length: bounds.max_length,
            pattern,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.min_length.is_none() && self.max_length.is_none() && self.pattern.is_none()
    }

    /// Checks one string as the only check of a validation; lengths count code points.
    pub fn check(&self, value: &str) -> Result<(), Failure> {
        self.check_within(value, &mut Budget::new())
    }

    /// Like [`check`](Self::check), as one check of a validation whose pattern matches spend
    /// `budget` (see [`Budget`]).
    pub fn check_within(&self, value: &str, budget: &mut Budget) -> Result<(), Failure> {
        if self.min_length.is_some() || self.max_length.is_some() {
            let length = value.chars().count() as u64;
            if let Some(minimum) = self.min_length
                && length < minimum
            {
                return Err((
                    ErrorCode::StringTooShort,
                    format!("at least {minimum} characters"),
                ));
            }
            if let Some(maximum) = self.max_length
                && length > maximum
            {
                return Err((
                    ErrorCode::StringTooLong,
                    format!("at most {maximum} characters"),
                ));
            }
        }
        if let Some(pattern) = &self.pattern {
            match pattern.is_match_within(value, budget) {
                Ok(true) => {}
                Ok(false) => {
                    return Err((
                        ErrorCode::PatternMismatch,
                        format!("a string matching {}", pattern.source()),
                    ));
                }
                Err(too_complex) => {
                    return Err((
                        ErrorCode::PatternTooComplex,
                        format!("a string matching {} ({too_complex})", pattern.source()),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_are_exact() {
        assert!(is_multiple_of(Number::F64(0.0075), Number::F64(0.0001)));
        assert!(!is_multiple_of(Number::F64(0.00751), Number::F64(0.0001)));
        assert!(is_multiple_of(Number::F64(4.5), Number::F64(1.5)));
        assert!(!is_multiple_of(Number::I64(35), Number::F64(1.5)));
        assert!(!is_multiple_of(
            Number::F64(1e308),
            Number::F64(0.123_456_789)
        ));
        assert!(is_multiple_of(
            Number::I64(12_391_239_123),
            Number::F64(1e-8)
        ));
        assert!(is_multiple_of(Number::I64(10), Number::I64(5)));
        assert!(is_multiple_of(Number::F64(1e308), Number::F64(0.5)));
        assert!(!is_multiple_of(Number::F64(1e-300), Number::F64(3e-300)));
        // An integer is exact, not its nearest float's shortest digits.
        assert!(!is_multiple_of(
            Number::I64(-1_729_382_256_910_270_464),
            Number::F64(5.0)
        ));
        assert!(is_multiple_of(
            Number::I64(-1_729_382_256_910_270_460),
            Number::F64(5.0)
        ));
        // Not within a relative tolerance: the quotient 42122431.96 is no integer.
        assert!(!is_multiple_of(
            Number::F64(1_053_060_799.0),
            Number::I64(25)
        ));
        assert!(is_multiple_of(
            Number::F64(1_053_060_800.0),
            Number::I64(25)
        ));
        assert!(!is_multiple_of(
            Number::F64(0.300_000_000_000_000_04),
            Number::F64(0.1)
        ));
        assert!(!is_multiple_of(Number::I64(5), Number::I64(0)));
        assert!(!is_multiple_of(
            Number::F64(f64::INFINITY),
            Number::F64(0.5)
        ));
        assert!(!is_multiple_of(Number::F64(f64::NAN), Number::F64(0.5)));
    }

    #[test]
    fn typed_bounds_check_multiple_of_exactly() {
        let bounds = NumberBounds {
            multiple_of: Some(serde_json::Number::from(25)),
            ..NumberBounds::default()
        };
        let check = NumberCheck::new(&bounds);
        assert_eq!(
            check.check(Number::F64(1_053_060_799.0)),
            Err((ErrorCode::NotMultipleOf, "a multiple of 25".to_owned()))
        );
        assert_eq!(check.check(Number::F64(1_053_060_800.0)), Ok(()));
        assert_eq!(check.check(Number::I64(-75)), Ok(()));
    }
}
