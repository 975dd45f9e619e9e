//! The fast JSON reader (`ferrotool_core::json::scan`) against `serde_json`, on generated text.
//!
//! The law: on any text, the scanner either declines or reads exactly what `serde_json` reads,
//! and it never accepts text `serde_json` rejects. The texts are JSON values rendered with
//! random whitespace, string escapes (short, `\u` in either case, surrogate pairs) and number
//! spellings (signs, zeros, fractions, exponents, integers beyond 64 bits), and, in three cases
//! out of four, then mutated at the byte level (a byte deleted, inserted, replaced or doubled, the
//! text cut short), which is where a reader that accepts too much is caught. Text rendered from
//! a value and left unmutated must be read, not declined: a reader that declines everything
//! would otherwise pass.
//!
//! Numbers are compared as a user of the scanner sees them. `Int` and `Float` (the exact fast
//! paths) must equal `serde_json`'s value bit for bit; the one spelling they read differently is
//! `-0`, an integer zero for the scanner (as for Python's `json`) and `-0.0` for `serde_json`. A
//! number left as text (`Spelled`) must be exactly the token `serde_json` read there: its
//! decoding is its user's (jiter's, correctly rounded, in the binding), where `serde_json`'s
//! default float parser may be a few units in the last place off for long spellings, so values
//! would not compare. A spelling that decodes to infinity is declined by such a decoder, and
//! `serde_json` must reject it too.
//!
//! Bounded for CI: `CASES` cases take 20 to 40 s in a release build on two cores;
//! `PROPTEST_CASES` sets another count.

use ferrotool_core::json::scan::{Cursor, Declined, Number, Scanner, Token};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

/// The default number of cases (see the module's note); a debug build, some 40 times slower,
/// runs a sixtieth of them.
const CASES: u32 = if cfg!(debug_assertions) {
    10_000
} else {
    600_000
};

/// Deeper text is declined by this test's reader: the generator nests far less.
const MAX_DEPTH: usize = 64;

/// What the scanner read, as its user sees it.
#[derive(Debug, Clone, PartialEq)]
enum Read {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Spelled(String),
    Str(String),
    Array(Vec<Read>),
    Object(Vec<(String, Read)>),
}

/// Reads one value with the scanner, as a typed validator would with no schema to follow.
fn read(scanner: &mut Scanner<'_>, depth: usize) -> Result<Read, Declined> {
    if depth > MAX_DEPTH {
        return Err(Declined);
    }
    Ok(match scanner.token() {
        Some(Token::Null) => {
            scanner.null()?;
            Read::Null
        }
        Some(Token::Bool) => Read::Bool(scanner.boolean()?),
        Some(Token::Number) => match scanner.number()? {
            Number::Int(value) => Read::Int(value),
            Number::Float(value) => Read::Float(value),
            Number::Spelled(text) => Read::Spelled(text.to_owned()),
        },
        Some(Token::String) => Read::Str(scanner.string()?.to_owned()),
        Some(Token::Array) => {
            let mut items = Vec::new();
            scanner.items(&mut |scanner: &mut Scanner<'_>, _| {
                items.push(read(scanner, depth + 1)?);
                Ok::<(), Declined>(())
            })?;
            Read::Array(items)
        }
        Some(Token::Object) => {
            let mut entries = Vec::new();
            scanner.object(
                &mut |scanner: &mut Scanner<'_>| scanner.string().map(str::to_owned),
                &mut |scanner, key| {
                    entries.push((key, read(scanner, depth + 1)?));
                    Ok::<(), Declined>(())
                },
            )?;
            Read::Object(entries)
        }
        None => return Err(Declined),
    })
}

/// Reads a whole text: one value, then nothing but whitespace.
fn read_text(text: &str) -> Result<Read, Declined> {
    let mut scanner = Scanner::new(text);
    let value = read(&mut scanner, 0)?;
    scanner.finish()?;
    Ok(value)
}

/// Whether a number left as text decodes to no finite float.
fn has_infinity(read: &Read) -> bool {
    match read {
        Read::Spelled(text) => !text.parse::<f64>().is_ok_and(f64::is_finite),
        Read::Array(items) => items.iter().any(has_infinity),
        Read::Object(entries) => entries.iter().any(|(_, value)| has_infinity(value)),
        _ => false,
    }
}

/// Why `read` is not what `serde_json` read, if it is not.
fn disagreement(read: &Read, value: &Value) -> Option<String> {
    let differ = || Some(format!("read {read:?}, serde_json {value}"));
    match (read, value) {
        (Read::Null, Value::Null) => None,
        (Read::Bool(flag), Value::Bool(expected)) if flag == expected => None,
        (Read::Int(number), Value::Number(expected)) => {
            let same = expected.as_i64() == Some(*number)
                || (*number == 0 && expected.as_f64() == Some(0.0));
            if same { None } else { differ() }
        }
        (Read::Float(number), Value::Number(expected)) => {
            let same =
                expected.is_f64() && expected.as_f64().map(f64::to_bits) == Some(number.to_bits());
            if same { None } else { differ() }
        }
        (Read::Spelled(text), Value::Number(expected)) => spelled_disagreement(text, expected),
        (Read::Str(text), Value::String(expected)) if text == expected => None,
        (Read::Array(items), Value::Array(expected)) => {
            if items.len() != expected.len() {
                return differ();
            }
            items
                .iter()
                .zip(expected)
                .find_map(|(item, value)| disagreement(item, value))
        }
        (Read::Object(entries), Value::Object(expected)) => {
            // A repeated key keeps its first place and takes its last value, as in serde_json's
            // ordered map.
            let mut merged: Vec<(&str, &Read)> = Vec::new();
            for (key, value) in entries {
                match merged.iter_mut().find(|(seen, _)| seen == key) {
                    Some(slot) => slot.1 = value,
                    None => merged.push((key, value)),
                }
            }
            if merged.len() != expected.len() {
                return differ();
            }
            merged.iter().zip(expected).find_map(
                |((key, value), (expected_key, expected_value))| {
                    if key == expected_key {
                        disagreement(value, expected_value)
                    } else {
                        Some(format!("key {key:?} where serde_json has {expected_key:?}"))
                    }
                },
            )
        }
        _ => differ(),
    }
}

/// Why a number left as text is not what `serde_json` read: it must be one complete JSON
/// number, the very token `serde_json` read there (`serde_json` reads a number from its token
/// alone, so the two readings are the same bit for bit).
fn spelled_disagreement(text: &str, expected: &serde_json::Number) -> Option<String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Number(alone)) if alone == *expected && text.trim() == text => None,
        _ => Some(format!("spelled {text:?} where serde_json read {expected}")),
    }
}

/// The law, on one text; `rendered` is true when the text is a value's rendering, unmutated.
fn check(text: &str, rendered: bool) -> Result<(), TestCaseError> {
    let oracle: Result<Value, _> = serde_json::from_str(text);
    let Ok(read) = read_text(text) else {
        prop_assert!(!rendered, "declined a rendered value: {text:?}");
        return Ok(());
    };
    if has_infinity(&read) {
        prop_assert!(
            oracle.is_err(),
            "serde_json reads a number beyond f64: {text:?}"
        );
        return Ok(());
    }
    let value = oracle.map_err(|error| {
        TestCaseError::fail(format!("read {text:?}, which serde_json rejects: {error}"))
    })?;
    if let Some(why) = disagreement(&read, &value) {
        return Err(TestCaseError::fail(format!("{text:?}: {why}")));
    }
    Ok(())
}

// --- rendering ------------------------------------------------------------------------------

fn whitespace() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just(String::new()),
        1 => prop::collection::vec(prop::sample::select(vec![' ', '\n', '\r', '\t']), 1..4)
            .prop_map(|spaces| spaces.into_iter().collect()),
    ]
}

fn digits(range: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(0..10u8, range)
        .prop_map(|digits| digits.into_iter().map(|d| char::from(b'0' + d)).collect())
}

/// A number as JSON text, in one of many spellings.
fn number() -> impl Strategy<Value = String> {
    let integer = prop_oneof![
        Just("0".to_owned()),
        (1..10u8, digits(0..24)).prop_map(|(lead, rest)| format!("{lead}{rest}")),
    ];
    let spelled = (
        any::<bool>(),
        integer,
        prop::option::of(digits(1..24)),
        prop::option::of((
            prop::sample::select(vec!["e", "E", "e+", "e-", "E+", "E-"]),
            digits(1..4),
        )),
    )
        .prop_map(|(negative, integer, fraction, exponent)| {
            let sign = if negative { "-" } else { "" };
            let fraction = fraction
                .map(|digits| format!(".{digits}"))
                .unwrap_or_default();
            let exponent = exponent
                .map(|(mark, digits)| format!("{mark}{digits}"))
                .unwrap_or_default();
            format!("{sign}{integer}{fraction}{exponent}")
        });
    let float = any::<f64>()
        .prop_filter("finite", |value| value.is_finite())
        .prop_flat_map(|value| {
            prop::sample::select(vec![
                format!("{value:?}"),
                format!("{value:e}"),
                format!("{value:E}"),
            ])
        });
    prop_oneof![
        any::<i64>().prop_map(|value| value.to_string()),
        any::<u64>().prop_map(|value| value.to_string()),
        (-1000..1000i32, 0..1000u32).prop_map(|(whole, cents)| format!("{whole}.{cents:02}")),
        float,
        spelled,
    ]
}

/// A character likely to matter to a string reader, or any character.
fn character() -> impl Strategy<Value = char> {
    prop_oneof![
        2 => any::<char>(),
        2 => prop::char::range('a', 'z'),
        1 => prop::sample::select(vec![
            '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\0', '\u{1f}', '\u{7f}', ' ',
            'é', '\u{2028}', '\u{ffff}', '\u{10000}', '😀', '\u{10ffff}',
        ]),
    ]
}

/// One character inside a JSON string, by `how`: as itself where JSON allows, escaped as
/// `\uXXXX` (lower or upper case, a surrogate pair beyond the basic plane) or by a short escape.
fn render_char(out: &mut String, character: char, how: u8) {
    let short = match character {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        _ => None,
    };
    let must_escape = matches!(character, '"' | '\\') || u32::from(character) < 0x20;
    match (how % 4, short) {
        (0, _) if !must_escape => out.push(character),
        (0 | 1, Some(short)) => out.push_str(short),
        _ => {
            let mut units = [0u16; 2];
            for unit in character.encode_utf16(&mut units) {
                let spelled = if how.is_multiple_of(2) {
                    format!("\\u{unit:04x}")
                } else {
                    format!("\\u{unit:04X}")
                };
                out.push_str(&spelled);
            }
        }
    }
}

/// A string as JSON text, quotes included.
fn string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (character(), prop_oneof![3 => Just(0u8), 1 => any::<u8>()]),
        0..12,
    )
    .prop_map(|characters| {
        let mut out = String::from('"');
        for (character, how) in characters {
            render_char(&mut out, character, how);
        }
        out.push('"');
        out
    })
}

/// A JSON value as text, nested up to a few levels.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        number(),
        string(),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            (
                prop::collection::vec((whitespace(), inner.clone(), whitespace()), 0..6),
                whitespace()
            )
                .prop_map(|(items, empty)| {
                    if items.is_empty() {
                        return format!("[{empty}]");
                    }
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(before, item, after)| format!("{before}{item}{after}"))
                        .collect();
                    format!("[{}]", items.join(","))
                }),
            (
                prop::collection::vec(
                    (whitespace(), string(), whitespace(), whitespace(), inner),
                    0..6
                ),
                whitespace()
            )
                .prop_map(|(entries, empty)| {
                    if entries.is_empty() {
                        return format!("{{{empty}}}");
                    }
                    let entries: Vec<String> = entries
                        .into_iter()
                        .map(|(before, key, colon, after, value)| {
                            format!("{before}{key}{colon}:{after}{value}")
                        })
                        .collect();
                    format!("{{{}}}", entries.join(","))
                }),
        ]
    })
}

// --- mutation -------------------------------------------------------------------------------

/// One byte-level change to a text.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(Index),
    Insert(Index, u8),
    Replace(Index, u8),
    Double(Index, Index),
    Cut(Index),
}

/// A byte likely to matter to a JSON reader, or any byte.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        1 => any::<u8>(),
        3 => prop::sample::select(b"\"\\{}[],:0123456789-+.eEtrufalsn \t\n\r\x0cu/bx\x00\x1f\x7f\xc3\xa9\xff".to_vec()),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), byte()).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        (any::<Index>(), byte()).prop_map(|(at, byte)| Mutation::Replace(at, byte)),
        (any::<Index>(), any::<Index>()).prop_map(|(at, to)| Mutation::Double(at, to)),
        any::<Index>().prop_map(Mutation::Cut),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for mutation in mutations {
        let length = bytes.len();
        match mutation {
            Mutation::Delete(at) if length > 0 => {
                bytes.remove(at.index(length));
            }
            Mutation::Insert(at, byte) => bytes.insert(at.index(length + 1), *byte),
            Mutation::Replace(at, byte) if length > 0 => bytes[at.index(length)] = *byte,
            Mutation::Double(at, to) if length > 0 => {
                let (start, end) = (at.index(length), to.index(length));
                let (start, end) = (start.min(end), start.max(end) + 1);
                let copy = bytes[start..end].to_vec();
                bytes.splice(start..start, copy);
            }
            Mutation::Cut(at) => bytes.truncate(at.index(length + 1)),
            _ => {}
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

fn document() -> impl Strategy<Value = (String, Vec<Mutation>)> {
    (
        (whitespace(), value(), whitespace())
            .prop_map(|(before, value, after)| format!("{before}{value}{after}")),
        prop_oneof![
            1 => Just(Vec::new()),
            3 => prop::collection::vec(mutation(), 1..4),
        ],
    )
}

// --- the tests ------------------------------------------------------------------------------

#[test]
fn scan_reads_what_serde_json_reads_or_declines() -> Result<(), String> {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(&document(), |(text, mutations)| {
            if mutations.is_empty() {
                check(&text, true)
            } else {
                check(&mutate(&text, &mutations), false)
            }
        })
        .map_err(|failure| failure.to_string())
}

/// Spellings each of the fast paths and the declines turn on, checked one by one.
#[test]
fn scan_edge_cases_agree_with_serde_json() -> Result<(), String> {
    let read = [
        "0",
        "-0",
        "-0.0",
        "1.5",
        "123456789012345678",
        "1234567890123456789",
        "-9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "0.1",
        "0.123456789012345",
        "0.1234567890123456",
        "1e5",
        "1E-5",
        "2.5e+3",
        "1e-400",
        "\"\"",
        "\"a\\u00e9\\uD83D\\uDE00\\/\"",
        "[]",
        "{}",
        " [ 1 , { \"a\" : [ ] } ] ",
        "{\"a\":1,\"a\":2}",
        "true",
        "false",
        "null",
        "\"\u{7f}\u{2028}\"",
    ];
    for text in read {
        check(text, true).map_err(|error| format!("{text}: {error}"))?;
    }
    let declined = [
        "",
        " ",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "NaN",
        "Infinity",
        "tru",
        "nul",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "[1 2]",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"abc",
        "[1",
        "1 2",
        "\u{c}1",
        "1e400",
        "\"\\u12\"",
    ];
    for text in declined {
        let rejected = serde_json::from_str::<Value>(text).is_err();
        let declined = read_text(text).map_or(true, |value| has_infinity(&value));
        assert!(rejected, "serde_json reads {text:?}");
        assert!(declined, "the scanner reads {text:?}");
    }
    Ok(())
}
