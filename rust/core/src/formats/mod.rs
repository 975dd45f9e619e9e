//! Checkers for the string formats of JSON Schema (`format`), shared by the schema validator and
//! the typed validators.
//!
//! Each checker is a hand-written parser of its RFC's grammar (no regexes); the internationalized
//! hostnames use the `idna` crate's UTS 46 processing.
mod hostname;
mod uri;

use std::net::Ipv6Addr;
use std::str::FromStr;

pub use hostname::{is_hostname, is_idn_hostname};
pub use uri::{is_iri, is_iri_reference, is_uri, is_uri_reference, is_uri_template};

/// A format this module knows how to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Uuid,
    Email,
    IdnEmail,
    Ipv4,
    Ipv6,
    Hostname,
    IdnHostname,
    Uri,
    UriReference,
    Iri,
    IriReference,
    UriTemplate,
    JsonPointer,
    RelativeJsonPointer,
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
            "idn-email" => Self::IdnEmail,
            "ipv4" => Self::Ipv4,
            "ipv6" => Self::Ipv6,
            "hostname" => Self::Hostname,
            "idn-hostname" => Self::IdnHostname,
            "uri" => Self::Uri,
            "uri-reference" => Self::UriReference,
            "iri" => Self::Iri,
            "iri-reference" => Self::IriReference,
            "uri-template" => Self::UriTemplate,
            "json-pointer" => Self::JsonPointer,
            "relative-json-pointer" => Self::RelativeJsonPointer,
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
            Self::IdnEmail => "idn-email",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::Hostname => "hostname",
            Self::IdnHostname => "idn-hostname",
            Self::Uri => "uri",
            Self::UriReference => "uri-reference",
            Self::Iri => "iri",
            Self::IriReference => "iri-reference",
            Self::UriTemplate => "uri-template",
            Self::JsonPointer => "json-pointer",
            Self::RelativeJsonPointer => "relative-json-pointer",
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
            Self::IdnEmail => is_idn_email(value),
            Self::Ipv4 => is_ipv4(value),
            Self::Ipv6 => is_ipv6(value),
            Self::Hostname => is_hostname(value),
            Self::IdnHostname => is_idn_hostname(value),
            Self::Uri => is_uri(value),
            Self::UriReference => is_uri_reference(value),
            Self::Iri => is_iri(value),
            Self::IriReference => is_iri_reference(value),
            Self::UriTemplate => is_uri_template(value),
            Self::JsonPointer => is_json_pointer(value),
            Self::RelativeJsonPointer => is_relative_json_pointer(value),
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

/// A practical RFC 5321 mailbox: a dot-atom (or quoted) local part of at most 64 bytes, `@`,
/// and a hostname or an address literal.
pub fn is_email(value: &str) -> bool {
    mailbox(value, false)
}

/// An RFC 6531 mailbox: as [`is_email`], with UTF-8 allowed in the local part and an
/// internationalized hostname as the domain.
pub fn is_idn_email(value: &str) -> bool {
    mailbox(value, true)
}

fn mailbox(value: &str, international: bool) -> bool {
    let Some((local, domain)) = value.rsplit_once('@') else {
        return false;
    };
    if local.is_empty() || local.len() > 64 {
        return false;
    }
    let local_ok = if let Some(quoted) = local
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        quoted.chars().all(|ch| {
            ch != '"' && ch != '\\' && (!ch.is_ascii_control() && (international || ch.is_ascii()))
        })
    } else {
        !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local.chars().all(|ch| {
                ch.is_ascii_alphanumeric()
                    || "!#$%&'*+-/=?^_`{|}~.".contains(ch)
                    || (international && !ch.is_ascii())
            })
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
    if international {
        is_idn_hostname(domain)
    } else {
        is_hostname(domain)
    }
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

/// A relative JSON pointer: a non-negative integer without leading zeros, then `#` or a JSON
/// pointer.
pub fn is_relative_json_pointer(value: &str) -> bool {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits > 1 && value.starts_with('0')) {
        return false;
    }
    let rest = &value[digits..];
    rest == "#" || is_json_pointer(rest)
}

/// An ECMA-262 regular expression (in Unicode mode, which rejects identity escapes of letters
/// such as `\a`).
pub fn is_regex(value: &str) -> bool {
    regress::Regex::with_flags(value, "u").is_ok()
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
        assert!(is_email("joe.bloggs@example.com"));
        assert!(!is_email("2962"));
        assert!(is_idn_email("실례@실례.테스트"));
        assert!(!is_idn_email("user\u{ff20}example.com"));
        assert!(is_relative_json_pointer("0#"));
        assert!(!is_relative_json_pointer("01/a"));
        assert!(is_regex("^a+$"));
        assert!(!is_regex("^(abc]"));
        assert_eq!(check_format("no-such-format", "x"), None);
    }
}
