//! Numeric bounds and `multipleOf`: read from a schema object, then checked against numbers,
//! exact across integer and float representations.
use std::cmp::Ordering;

use serde_json::Value;

use super::big_number::BigNumber;
use crate::checks::is_multiple_of;
use crate::error::ErrorCode;
use crate::json::{Instance, Number};
use crate::jsonschema::compile::{Compiler, Reading};
use crate::jsonschema::context::{Context, fail};
use crate::jsonschema::describe::{describe, number_text};
use crate::jsonschema::node::NumberKeywords;
use crate::jsonschema::options::SchemaError;

/// Floats from here up may stand for integers beyond 64 bits, whose exact text is asked for.
const WIDE: f64 = 9_223_372_036_854_775_808.0;

/// The numeric keywords of one schema object, as they are read.
#[derive(Default)]
pub(crate) struct Reader {
    keywords: NumberKeywords,
    used: bool,
    /// Draft 4's boolean `exclusiveMinimum` / `exclusiveMaximum`: they make the bound beside
    /// them exclusive (see `finish`).
    minimum_is_exclusive: bool,
    maximum_is_exclusive: bool,
}

impl Reader {
    /// Reads `key` if it is a numeric keyword in force where `reading` says; returns whether it
    /// was.
    pub(crate) fn read(
        &mut self,
        compiler: &Compiler<'_>,
        reading: Reading,
        key: &str,
        child: &Value,
    ) -> Result<bool, SchemaError> {
        if !reading.validation {
            return Ok(false);
        }
        let keywords = &mut self.keywords;
        match key {
            "minimum" => keywords.minimum = Some(compiler.number(child)?),
            "maximum" => keywords.maximum = Some(compiler.number(child)?),
            "exclusiveMinimum" if !reading.since_7() => {
                self.minimum_is_exclusive = child.as_bool().unwrap_or(false);
                return Ok(true);
            }
            "exclusiveMaximum" if !reading.since_7() => {
                self.maximum_is_exclusive = child.as_bool().unwrap_or(false);
                return Ok(true);
            }
            "exclusiveMinimum" => keywords.exclusive_minimum = Some(compiler.number(child)?),
            "exclusiveMaximum" => keywords.exclusive_maximum = Some(compiler.number(child)?),
            "multipleOf" => {
                let divisor = compiler.number(child)?;
                if divisor.as_f64() <= 0.0 {
                    return Err(compiler.error(child, "multipleOf must be greater than 0"));
                }
                keywords.multiple_of = Some(divisor);
            }
            _ => return Ok(false),
        }
        self.used = true;
        Ok(true)
    }

    /// The numeric keywords, or `None` when there are none.
    pub(crate) fn finish(self) -> Option<Box<NumberKeywords>> {
        let mut keywords = self.keywords;
        if self.minimum_is_exclusive {
            keywords.exclusive_minimum = keywords.minimum.take();
        }
        if self.maximum_is_exclusive {
            keywords.exclusive_maximum = keywords.maximum.take();
        }
        self.used.then(|| Box::new(keywords))
    }
}

/// Validates a number against the numeric keywords.
pub(crate) fn validate<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &NumberKeywords,
    instance: &I,
) -> bool {
    let value = match instance.as_number() {
        Some(Number::F64(float)) if float.is_nan() || float.abs() >= WIDE => {
            return validate_wide(ctx, keywords, instance, Some(Number::F64(float)));
        }
        Some(value) => value,
        None => return validate_wide(ctx, keywords, instance, None),
    };
    validate_number(ctx, keywords, instance, value)
}

/// A number that may stand for an integer beyond 64 bits: compared exactly when the instance
/// gives its exact text, else as the float it is (or not at all when it has none).
#[cold]
#[inline(never)]
fn validate_wide<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &NumberKeywords,
    instance: &I,
    value: Option<Number>,
) -> bool {
    if let Some(exact) = instance.number_text().as_deref().and_then(BigNumber::parse) {
        return validate_big(ctx, keywords, instance, &exact);
    }
    value.is_none_or(|value| validate_number(ctx, keywords, instance, value))
}

/// [`validate`] for a number read exactly as `value`.
#[inline]
fn validate_number<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &NumberKeywords,
    instance: &I,
    value: Number,
) -> bool {
    let mut valid = true;
    if let Some(minimum) = keywords.minimum
        && compare(value, minimum) == Some(Ordering::Less)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooSmall,
            format!("at least {}", number_text(minimum)),
            describe(instance)
        );
    }
    if let Some(minimum) = keywords.exclusive_minimum
        && compare(value, minimum) != Some(Ordering::Greater)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooSmall,
            format!("greater than {}", number_text(minimum)),
            describe(instance)
        );
    }
    if let Some(maximum) = keywords.maximum
        && compare(value, maximum) == Some(Ordering::Greater)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooLarge,
            format!("at most {}", number_text(maximum)),
            describe(instance)
        );
    }
    if let Some(maximum) = keywords.exclusive_maximum
        && compare(value, maximum) != Some(Ordering::Less)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooLarge,
            format!("less than {}", number_text(maximum)),
            describe(instance)
        );
    }
    if let Some(divisor) = keywords.multiple_of
        && !is_multiple_of(value, divisor)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NotMultipleOf,
            format!("a multiple of {}", number_text(divisor)),
            describe(instance)
        );
    }
    valid
}

/// [`validate`] for a number beyond 64 bits, compared exactly.
fn validate_big<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &NumberKeywords,
    instance: &I,
    value: &BigNumber,
) -> bool {
    let mut valid = true;
    let exact = |bound: Number| BigNumber::from_number(bound);
    if let Some(minimum) = keywords.minimum
        && exact(minimum).is_some_and(|bound| *value < bound)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooSmall,
            format!("at least {}", number_text(minimum)),
            describe(instance)
        );
    }
    if let Some(minimum) = keywords.exclusive_minimum
        && exact(minimum).is_some_and(|bound| *value <= bound)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooSmall,
            format!("greater than {}", number_text(minimum)),
            describe(instance)
        );
    }
    if let Some(maximum) = keywords.maximum
        && exact(maximum).is_some_and(|bound| *value > bound)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooLarge,
            format!("at most {}", number_text(maximum)),
            describe(instance)
        );
    }
    if let Some(maximum) = keywords.exclusive_maximum
        && exact(maximum).is_some_and(|bound| *value >= bound)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NumberTooLarge,
            format!("less than {}", number_text(maximum)),
            describe(instance)
        );
    }
    if let Some(divisor) = keywords.multiple_of
        && exact(divisor).is_some_and(|divisor| !value.is_multiple_of(&divisor))
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NotMultipleOf,
            format!("a multiple of {}", number_text(divisor)),
            describe(instance)
        );
    }
    valid
}

/// Exact ordering of two JSON numbers (`None` only for NaN).
pub(crate) fn compare(left: Number, right: Number) -> Option<Ordering> {
    match (left, right) {
        (Number::I64(a), Number::I64(b)) => Some(a.cmp(&b)),
        (Number::U64(a), Number::U64(b)) => Some(a.cmp(&b)),
        (Number::I64(a), Number::U64(b)) => Some(i128::from(a).cmp(&i128::from(b))),
        (Number::U64(a), Number::I64(b)) => Some(i128::from(a).cmp(&i128::from(b))),
        (Number::F64(a), Number::F64(b)) => a.partial_cmp(&b),
        (Number::F64(a), other) => compare_float_int(a, int_of(other)),
        (other, Number::F64(b)) => compare_float_int(b, int_of(other)).map(Ordering::reverse),
    }
}

fn int_of(number: Number) -> i128 {
    match number {
        Number::I64(value) => i128::from(value),
        Number::U64(value) => i128::from(value),
        Number::F64(value) => value as i128,
    }
}

fn compare_float_int(float: f64, integer: i128) -> Option<Ordering> {
    if float.is_nan() {
        return None;
    }
    // Every i64/u64 fits in i128 and every float of that magnitude is integral, so comparing the
    // floor exactly in i128 is exact; beyond it the float decides.
    if float >= 1.7e38 {
        return Some(Ordering::Greater);
    }
    if float <= -1.7e38 {
        return Some(Ordering::Less);
    }
    let floor = float.floor();
    match (floor as i128).cmp(&integer) {
        Ordering::Equal if float > floor => Some(Ordering::Greater),
        ordering => Some(ordering),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering() {
        assert_eq!(
            compare(Number::F64(1.5), Number::I64(1)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(Number::I64(-1), Number::U64(u64::MAX)),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(Number::F64(2.0), Number::U64(2)),
            Some(Ordering::Equal)
        );
    }
}
