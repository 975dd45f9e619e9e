//! Exact decimals of any size, for numbers that a 64-bit integer or float only approximates (a
//! Python `int` beyond 64 bits, a JSON integer of forty digits): `digits * 10^exponent`.
use std::cmp::Ordering;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use crate::json::Number;

/// log2(10), to estimate magnitudes before comparing exactly.
const LOG2_10: f64 = std::f64::consts::LOG2_10;
/// Exponents beyond this many decimal places are not read (a hostile `1e999999999999`).
const MAX_EXPONENT: i64 = 1_000_000_000;

/// A finite decimal `(-1)^negative * digits * 10^exponent`; zero is never negative. Trailing
/// zeros are kept (stripping them costs a division each), so equal values may differ in form.
#[derive(Debug, Clone)]
pub(crate) struct BigNumber {
    negative: bool,
    digits: BigUint,
    exponent: i64,
}

impl BigNumber {
    /// Reads JSON number syntax (`-12.5e3`) or a `0x`-prefixed hexadecimal integer (`-0x1f`),
    /// the forms [`Instance::number_text`](crate::json::Instance::number_text) gives.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if let Some(hex) = rest.strip_prefix("0x") {
            let digits = BigUint::parse_bytes(hex.as_bytes(), 16)?;
            return Some(Self::new(negative, digits, 0));
        }
        let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => {
                let exponent: i64 = exponent
                    .strip_prefix('+')
                    .unwrap_or(exponent)
                    .parse()
                    .ok()?;
                (mantissa, exponent)
            }
            None => (rest, 0),
        };
        if exponent.abs() > MAX_EXPONENT {
            return None;
        }
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty()
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mut text = String::with_capacity(whole.len() + fraction.len());
        text.push_str(whole);
        text.push_str(fraction);
        let digits = BigUint::parse_bytes(text.as_bytes(), 10)?;
        let places = i64::try_from(fraction.len()).ok()?;
        Some(Self::new(negative, digits, exponent - places))
    }

    /// A JSON number exactly: integers as they are, floats from 2^53 up (all integers) by their
    /// exact binary value, smaller floats by their shortest round-trip digits (the decimal the
    /// JSON text most likely wrote); `None` for NaN and infinities.
    pub(crate) fn from_number(number: Number) -> Option<Self> {
        const INTEGRAL: f64 = 9_007_199_254_740_992.0;
        match number {
            Number::F64(value) if value.is_finite() && value.abs() >= INTEGRAL => {
                // value = mantissa * 2^(exponent - 1075), the shift at least 1 here.
                let bits = value.to_bits();
                let exponent = (bits >> 52) & 0x7ff;
                let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
                let shift = exponent.checked_sub(1075)?;
                Some(Self::new(value < 0.0, BigUint::from(mantissa) << shift, 0))
            }
            Number::I64(value) => {
                Some(Self::new(value < 0, BigUint::from(value.unsigned_abs()), 0))
            }
            Number::U64(value) => Some(Self::new(false, BigUint::from(value), 0)),
            Number::F64(value) if value.is_finite() => Self::parse(&format!("{value:e}")),
            Number::F64(_) => None,
        }
    }

    fn new(negative: bool, digits: BigUint, exponent: i64) -> Self {
        let zero = digits.is_zero();
        Self {
            negative: negative && !zero,
            digits,
            exponent: if zero { 0 } else { exponent },
        }
    }

    /// About log2 of the magnitude (for a nonzero number).
    fn log2(&self) -> f64 {
        self.digits.bits() as f64 + self.exponent as f64 * LOG2_10
    }

    /// Orders the magnitudes exactly.
    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        match (self.digits.is_zero(), other.digits.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        // Far apart magnitudes are told apart by their estimates; close ones have close
        // exponents, so scaling one to the other's exponent stays small.
        let (left, right) = (self.log2(), other.log2());
        if left > right + 4.0 {
            return Ordering::Greater;
        }
        if right > left + 4.0 {
            return Ordering::Less;
        }
        let shift = self.exponent.abs_diff(other.exponent);
        let scale = BigUint::from(10u8).pow(u32::try_from(shift).unwrap_or(u32::MAX));
        if self.exponent >= other.exponent {
            (&self.digits * scale).cmp(&other.digits)
        } else {
            self.digits.cmp(&(&other.digits * scale))
        }
    }

    /// True when `self` is an integer multiple of `divisor` (nonzero).
    pub(crate) fn is_multiple_of(&self, divisor: &Self) -> bool {
        if self.digits.is_zero() {
            return true;
        }
        if divisor.digits.is_zero() {
            return false;
        }
        let shift = self.exponent.abs_diff(divisor.exponent);
        if self.exponent >= divisor.exponent {
            // a * 10^k / b is an integer when b / gcd(a, b) has no prime factors but at most k
            // twos and k fives.
            let mut rest = &divisor.digits / self.digits.gcd(&divisor.digits);
            for prime in [2u8, 5] {
                let prime = BigUint::from(prime);
                let mut count = 0;
                while count < shift && (&rest % &prime).is_zero() {
                    rest /= &prime;
                    count += 1;
                }
            }
            rest.is_one()
        } else {
            // a / (b * 10^k): a scaled divisor larger than `a` divides it only if `a` is 0.
            if divisor.digits.bits() as f64 + shift as f64 * LOG2_10
                > self.digits.bits() as f64 + 1.0
            {
                return false;
            }
            let scale = BigUint::from(10u8).pow(u32::try_from(shift).unwrap_or(u32::MAX));
            (&self.digits % (&divisor.digits * scale)).is_zero()
        }
    }
}

impl PartialEq for BigNumber {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for BigNumber {}

impl PartialOrd for BigNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigNumber {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(text: &str) -> BigNumber {
        BigNumber::parse(text).unwrap_or_else(|| BigNumber::new(false, BigUint::zero(), 0))
    }

    #[test]
    fn exact_order_and_multiples() {
        assert!(big("18446744073709551617") > big("18446744073709551616"));
        assert!(big("-0x10000000000000001") < big("-18446744073709551616"));
        assert!(
            big("972783798187987123879878123.188781371")
                > big("972783798187987123879878123.18878137")
        );
        assert!(big("1e400") > big("9.99e399"));
        assert_eq!(big("1.50"), big("15e-1"));
        assert!(big("1e400").is_multiple_of(&big("0.5")));
        assert!(big("123456789012345678901234567890").is_multiple_of(&big("10")));
        assert!(!big("123456789012345678901234567891").is_multiple_of(&big("10")));
        assert!(!big("1").is_multiple_of(&big("3")));
        assert!(big("1").is_multiple_of(&big("1e-400")));
        assert!(!big("1e-400").is_multiple_of(&big("1")));
        assert_eq!(BigNumber::from_number(Number::F64(0.1)), Some(big("0.1")));
        assert_eq!(
            BigNumber::from_number(Number::F64(18_446_744_073_709_551_616.0)),
            Some(big("18446744073709551616"))
        );
    }
}
