//! Checkers for the string formats of JSON Schema (`format`), shared by the schema validator and
//! the typed validators.
//!
//! Each checker is a hand-written parser: no regexes, no allocation.
use std::net::Ipv6Addr;
use std::str::FromStr;

/// A format this module knows how to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Uuid,
    Email,
    Ipv4,
    Ipv6,
    Hostname,
    Uri,
    UriReference,
    JsonPointer,
    Regex,
}

impl Format {
    /// The format called `name` in a schema, `None` when it is not checked here.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "date-time" => Self::DateTime,
            "date" => Self::Date,
            "time" => Self::Time,
            "duration" => Self::Duration,
            "uuid" => Self::Uuid,
            "email" => Self::Email,
            "ipv4" => Self::Ipv4,
            "ipv6" => Self::Ipv6,
            "hostname" => Self::Hostname,
            "uri" => Self::Uri,
            "uri-reference" => Self::UriReference,
            "json-pointer" => Self::JsonPointer,
            "regex" => Self::Regex,
            _ => return None,
        })
    }

    /// The schema name of the format.
    pub const fn name(self) -> &'static str {
        match self {
            Self::DateTime => "date-time",
            Self::Date => "date",
            Self::Time => "time",
            Self::Duration => "duration",
            Self::Uuid => "uuid",
            Self::Email => "email",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::Hostname => "hostname",
            Self::Uri => "uri",
            Self::UriReference => "uri-reference",
            Self::JsonPointer => "json-pointer",
            Self::Regex => "regex",
        }
    }

    /// True when `value` is a valid instance of the format.
    pub fn check(self, value: &str) -> bool {
        match self {
            Self::DateTime => is_date_time(value),
            Self::Date => is_date(value),
            Self::Time => is_time(value),
            Self::Duration => is_duration(value),
            Self::Uuid => is_uuid(value),
            Self::Email => is_email(value),
            Self::Ipv4 => is_ipv4(value),
            Self::Ipv6 => is_ipv6(value),
            Self::Hostname => is_hostname(value),
            Self::Uri => is_uri(value),
            Self::UriReference => is_uri_reference(value),
            Self::JsonPointer => is_json_pointer(value),
            Self::Regex => is_regex(value),
        }
    }
}

/// Checks `value` against the format `name`: `None` for an unknown format (which passes).
pub fn check_format(name: &str, value: &str) -> Option<bool> {
    Format::from_name(name).map(|format| format.check(value))
}

fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0u32, |acc, b| {
        acc.saturating_mul(10).saturating_add(u32::from(b - b'0'))
    }))
}

const fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// RFC 3339 `full-date`: `YYYY-MM-DD` with a real day of the month.
pub fn is_date(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() != 10 || bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (
        bytes.get(0..4).and_then(digits),
        bytes.get(5..7).and_then(digits),
        bytes.get(8..10).and_then(digits),
    ) else {
        return false;
    };
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days_in_month).contains(&day)
}

/// RFC 3339 `full-time`: `HH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`; the offset is required.
pub fn is_time(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 9 || bytes.get(2) != Some(&b':') || bytes.get(5) != Some(&b':') {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (
        bytes.get(0..2).and_then(digits),
        bytes.get(3..5).and_then(digits),
        bytes.get(6..8).and_then(digits),
    ) else {
        return false;
    };
    let mut rest = bytes.get(8..).unwrap_or_default();
    if let Some(fraction) = rest.strip_prefix(b".") {
        let count = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return false;
        }
        rest = fraction.get(count..).unwrap_or_default();
    }
    let offset_minutes: i64 = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(oh), Some(om)) = (digits(&[*h1, *h2]), digits(&[*m1, *m2])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let total = i64::from(oh * 60 + om);
            if *sign == b'+' { total } else { -total }
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second == 60 {
        // A leap second only exists at 23:59:60 UTC.
        let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// RFC 3339 `date-time`: a full date, `T`, and a full time with offset.
pub fn is_date_time(value: &str) -> bool {
    let Some((date, time)) = value.split_once(['T', 't']) else {
        return false;
    };
    is_date(date) && is_time(time)
}

/// RFC 3339 appendix A `duration`, e.g. `P1Y2M3DT4H5M6S`, `PT0.5S` is not allowed, `P2W`.
pub fn is_duration(value: &str) -> bool {
    let Some(rest) = value.strip_prefix('P') else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    let (date_part, time_part) = match rest.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (rest, None),
    };
    if let Some(weeks) = date_part.strip_suffix('W') {
        return time_part.is_none()
            && !weeks.is_empty()
            && weeks.bytes().all(|b| b.is_ascii_digit());
    }
    if !units_in_order(date_part, b"YMD") {
        return false;
    }
    match time_part {
        Some(time) => !time.is_empty() && units_in_order(time, b"HMS"),
        None => !date_part.is_empty(),
    }
}

/// `part` is a sequence of `<digits><unit>` with units drawn from `units`, in that order, and
/// without gaps (RFC 3339 allows `1Y2M` and `2M3D` but not `1Y3D`).
fn units_in_order(part: &str, units: &[u8]) -> bool {
    let mut bytes = part.as_bytes();
    let mut previous: Option<usize> = None;
    while !bytes.is_empty() {
        let count = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return false;
        }
        let Some(unit) = bytes.get(count) else {
            return false;
        };
        let Some(position) = units.iter().position(|u| u == unit) else {
            return false;
        };
        if let Some(previous) = previous
            && position != previous + 1
        {
            return false;
        }
        previous = Some(position);
        bytes = bytes.get(count + 1..).unwrap_or_default();
    }
    true
}

/// RFC 4122 textual UUID: `8-4-4-4-12` hexadecimal digits.
pub fn is_uuid(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        })
}

/// A practical RFC 5321 mailbox: a dot-atom (or quoted) local part, `@`, and a hostname or an
/// address literal.
pub fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.rsplit_once('@') else {
        return false;
    };
    if local.is_empty() || local.len() > 64 {
        return false;
    }
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        local[1..local.len() - 1]
            .chars()
            .all(|ch| ch != '"' && ch != '\\' && !ch.is_control())
    } else {
        !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(ch))
    };
    if !local_ok {
        return false;
    }
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.strip_prefix("IPv6:") {
            Some(address) => is_ipv6(address),
            None => is_ipv4(literal),
        };
    }
    is_hostname(domain)
}

/// Dotted-quad IPv4 address without leading zeros.
pub fn is_ipv4(value: &str) -> bool {
    let mut count = 0;
    for part in value.split('.') {
        count += 1;
        if count > 4
            || part.is_empty()
            || part.len() > 3
            || (part.len() > 1 && part.starts_with('0'))
        {
            return false;
        }
        match digits(part.as_bytes()) {
            Some(octet) if octet <= 255 => {}
            _ => return false,
        }
    }
    count == 4
}

/// RFC 4291 IPv6 address (no zone identifier).
pub fn is_ipv6(value: &str) -> bool {
    value.is_ascii() && !value.contains('%') && Ipv6Addr::from_str(value).is_ok()
}

/// RFC 1123 hostname: dot-separated labels of letters, digits and inner hyphens. A label with
/// `--` in its third and fourth places is reserved (RFC 5891 section 4.2.3.1) unless it is an
/// `xn--` A-label.
pub fn is_hostname(value: &str) -> bool {
    let value = value.strip_suffix('.').unwrap_or(value);
    if value.is_empty() || value.len() > 253 {
        return false;
    }
    value.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && (label.get(2..4) != Some("--")
                || label.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("xn")))
    })
}

fn is_uri_char(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(ch)
}

fn percent_encoding_ok(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.iter().enumerate().all(|(index, byte)| {
        *byte != b'%'
            || (bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

/// An absolute RFC 3986 URI: a scheme, `:`, and only URI characters.
pub fn is_uri(value: &str) -> bool {
    let Some((scheme, _)) = value.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|ch| ch.is_ascii_alphabetic())
        && chars.all(|ch| ch.is_ascii_alphanumeric() || "+-.".contains(ch))
        && is_uri_reference(value)
}

/// An RFC 3986 URI reference (absolute or relative).
pub fn is_uri_reference(value: &str) -> bool {
    value.chars().all(is_uri_char) && percent_encoding_ok(value) && value.matches('#').count() <= 1
}

/// RFC 6901 JSON pointer: empty, or `/`-separated tokens where `~` only escapes `0` or `1`.
pub fn is_json_pointer(value: &str) -> bool {
    if value.is_empty() {
        return true;
    }
    if !value.starts_with('/') {
        return false;
    }
    let bytes = value.as_bytes();
    bytes
        .iter()
        .enumerate()
        .all(|(index, byte)| *byte != b'~' || matches!(bytes.get(index + 1), Some(b'0' | b'1')))
}

/// An ECMA-262 regular expression.
pub fn is_regex(value: &str) -> bool {
    regress::Regex::with_flags(value, "u").is_ok() || regress::Regex::new(value).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2024-13-01"));
        assert!(is_time("12:30:00Z"));
        assert!(is_time("12:30:00.123+02:00"));
        assert!(!is_time("12:30:00"));
        assert!(is_time("23:59:60Z"));
        assert!(!is_time("22:59:60Z"));
        assert!(is_date_time("2024-01-01T00:00:00Z"));
        assert!(!is_date_time("2024-01-01 00:00:00Z"));
    }

    #[test]
    fn durations() {
        for ok in [
            "P1Y",
            "P1Y2M3DT4H5M6S",
            "PT1S",
            "P2W",
            "P1D",
            "PT36H",
            "P1M2D",
        ] {
            assert!(is_duration(ok), "{ok}");
        }
        for bad in [
            "P", "PT", "P1", "1Y", "P1S", "P1Y3D", "P2W1D", "PT1D", "P1YT",
        ] {
            assert!(!is_duration(bad), "{bad}");
        }
    }

    #[test]
    fn network_and_ids() {
        assert!(is_uuid("2eb8aa08-aa98-11ea-b4aa-73b441d16380"));
        assert!(!is_uuid("2eb8aa08aa9811eab4aa73b441d16380"));
        assert!(is_ipv4("192.168.0.1"));
        assert!(!is_ipv4("192.168.0.01"));
        assert!(!is_ipv4("256.1.1.1"));
        assert!(is_ipv6("::1"));
        assert!(!is_ipv6("12345::"));
        assert!(is_hostname("www.example.com"));
        assert!(!is_hostname("-bad.example"));
        assert!(!is_hostname("ab--c.example"));
        assert!(is_hostname("xn--bcher-kva.example"));
        assert!(is_hostname("a--b.example"));
        assert!(is_email("joe.bloggs@example.com"));
        assert!(!is_email("2962"));
        assert!(is_uri("http://example.com/a?b#c"));
        assert!(!is_uri("//example.com"));
        assert!(is_regex("^a+$"));
        assert!(!is_regex("^(abc]"));
        assert_eq!(check_format("no-such-format", "x"), None);
    }
}
