//! Numeric bounds and `multipleOf`, exact across integer and float representations.
use std::cmp::Ordering;

use super::big_number::BigNumber;
use crate::error::ErrorCode;
use crate::json::{Instance, Number};
use crate::jsonschema::context::{Context, fail};
use crate::jsonschema::describe::{describe, number_text};
use crate::jsonschema::node::NumberKeywords;

/// Floats from here up may stand for integers beyond 64 bits, whose exact text is asked for.
const WIDE: f64 = 9_223_372_036_854_775_808.0;

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
        && !is_multiple(value, divisor)
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

/// True when `value` is an integer multiple of `divisor` (which is positive).
pub(crate) fn is_multiple(value: Number, divisor: Number) -> bool {
    let integer = |n: Number| match n {
        Number::I64(v) => Some(i128::from(v)),
        Number::U64(v) => Some(i128::from(v)),
        Number::F64(_) => None,
    };
    if let (Some(v), Some(d)) = (integer(value), integer(divisor)) {
        return d != 0 && v % d == 0;
    }
    let (v, d) = (value.as_f64(), divisor.as_f64());
    if v == 0.0 {
        return true;
    }
    if let (Some(v), Some(d)) = (exact_decimal(value), exact_decimal(divisor)) {
        return decimal_multiple(&v, &d);
    }
    let quotient = v / d;
    quotient.is_finite() && quotient.fract() == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples() {
        assert!(is_multiple(Number::F64(0.0075), Number::F64(0.0001)));
        assert!(!is_multiple(Number::F64(0.00751), Number::F64(0.0001)));
        assert!(is_multiple(Number::F64(4.5), Number::F64(1.5)));
        assert!(!is_multiple(Number::I64(35), Number::F64(1.5)));
        assert!(!is_multiple(Number::F64(1e308), Number::F64(0.123_456_789)));
        assert!(is_multiple(Number::I64(12_391_239_123), Number::F64(1e-8)));
        assert!(is_multiple(Number::I64(10), Number::I64(5)));
        assert!(is_multiple(Number::F64(1e308), Number::F64(0.5)));
        assert!(!is_multiple(Number::F64(1e-300), Number::F64(3e-300)));
        // An integer is exact, not its nearest float's shortest digits.
        assert!(!is_multiple(
            Number::I64(-1_729_382_256_910_270_464),
            Number::F64(5.0)
        ));
        assert!(is_multiple(
            Number::I64(-1_729_382_256_910_270_460),
            Number::F64(5.0)
        ));
    }

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
