//! Scalar keyword checks (numeric bounds, string lengths and patterns), compiled once.
use std::cmp::Ordering;

use crate::error::ErrorCode;
use crate::ir::{NumberBounds, StringBounds};
use crate::json::Number;
use crate::pattern::Pattern;

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

/// True when `value` is an integer multiple of `divisor`, tolerating binary rounding of decimal
/// fractions (`0.0075` is a multiple of `0.0001`).
pub fn is_multiple_of(value: Number, divisor: Number) -> bool {
    match (value, divisor) {
        (Number::I64(a), Number::I64(b)) if b != 0 => a % b == 0,
        (Number::U64(a), Number::U64(b)) if b != 0 => a % b == 0,
        _ => {
            let divisor = divisor.as_f64();
            let value = value.as_f64();
            if divisor == 0.0 || !value.is_finite() {
                return false;
            }
            let quotient = value / divisor;
            if !quotient.is_finite() {
                return false;
            }
            if quotient.abs() >= 2f64.powi(53) {
                // Beyond 2^53 every representable quotient is an integer; decide exactly instead.
                return (value % divisor) == 0.0;
            }
            (quotient - quotient.round()).abs() <= quotient.abs().max(1.0) * 1e-9
        }
    }
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

    /// Checks one string; lengths count code points.
    pub fn check(&self, value: &str) -> Result<(), Failure> {
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
            match pattern.is_match(value) {
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
