//! Duration strings for `timedelta`: `-?P[nW][nD][T[nH][nM][n[.ffffff]S]]`, the ISO 8601 subset that maps
//! exactly onto days, seconds and microseconds (no years or months, whose length varies).
//!
//! The derived schema carries [`DURATION_PATTERN`], so it states exactly what this parser accepts.

/// The ECMA-262 pattern equivalent to [`parse_duration`].
pub const DURATION_PATTERN: &str =
    r"^-?P(?=\d|T\d)(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d{1,6})?S)?)?$";

/// Parses a duration into `(days, seconds, microseconds)`, all carrying the sign.
pub fn parse_duration(text: &str) -> Option<(i64, i64, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let rest = rest.strip_prefix('P')?;
    let (date_part, time_part) = match rest.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (rest, None),
    };
    let mut days: i64 = 0;
    let mut seconds: i64 = 0;
    let mut micros: i64 = 0;
    let mut any = false;
    let mut units = Units::new(date_part);
    let mut last_rank = 0;
    while let Some((digits, fraction, unit)) = units.step()? {
        let rank = match unit {
            'W' => 1,
            'D' => 2,
            _ => return None,
        };
        if rank <= last_rank || fraction.is_some() {
            return None;
        }
        last_rank = rank;
        any = true;
        let value: i64 = digits.parse().ok()?;
        days = days.checked_add(if unit == 'W' {
            value.checked_mul(7)?
        } else {
            value
        })?;
    }
    if let Some(time_part) = time_part {
        let mut units = Units::new(time_part);
        let mut last_rank = 0;
        let mut any_time = false;
        while let Some((digits, fraction, unit)) = units.step()? {
            let (rank, scale) = match unit {
                'H' => (1, 3600),
                'M' => (2, 60),
                'S' => (3, 1),
                _ => return None,
            };
            if rank <= last_rank || (fraction.is_some() && unit != 'S') {
                return None;
            }
            last_rank = rank;
            any_time = true;
            let value: i64 = digits.parse().ok()?;
            seconds = seconds.checked_add(value.checked_mul(scale)?)?;
            if let Some(fraction) = fraction {
                if fraction.is_empty() || fraction.len() > 6 {
                    return None;
                }
                let padded = format!("{fraction:0<6}");
                micros = padded.parse().ok()?;
            }
        }
        if !any_time {
            return None;
        }
        any = true;
    }
    if !any {
        return None;
    }
    if negative {
        Some((-days, -seconds, -micros))
    } else {
        Some((days, seconds, micros))
    }
}

/// Splits `12H30M5.5S` into `("12", None, 'H')`, `("30", None, 'M')`, `("5", Some("5"), 'S')`.
struct Units<'a> {
    rest: &'a str,
}

impl<'a> Units<'a> {
    fn new(text: &'a str) -> Self {
        Self { rest: text }
    }

    /// `Some(None)` at the end, `None` on malformed input.
    #[expect(
        clippy::option_option,
        reason = "outer None is a parse failure, inner None the end"
    )]
    fn step(&mut self) -> Option<Option<(&'a str, Option<&'a str>, char)>> {
        if self.rest.is_empty() {
            return Some(None);
        }
        let digits_end = self
            .rest
            .find(|ch: char| !ch.is_ascii_digit())
            .unwrap_or(self.rest.len());
        if digits_end == 0 {
            return None;
        }
        let digits = self.rest.get(..digits_end)?;
        let mut tail = self.rest.get(digits_end..)?;
        let mut fraction = None;
        if let Some(after_dot) = tail.strip_prefix('.') {
            let end = after_dot
                .find(|ch: char| !ch.is_ascii_digit())
                .unwrap_or(after_dot.len());
            fraction = Some(after_dot.get(..end)?);
            tail = after_dot.get(end..)?;
        }
        let unit = tail.chars().next()?;
        self.rest = tail.get(unit.len_utf8()..)?;
        Some(Some((digits, fraction, unit)))
    }
}
