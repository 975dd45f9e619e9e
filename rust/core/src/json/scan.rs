//! A fast reader of well-formed JSON text: the common shapes read byte by byte with nothing in
//! between (strings as slices of the input, short decimals converted without a general float
//! parser), anything else declined.
//!
//! [`Scanner`] is a cursor, not a parser: its user decides what to read next, as a typed
//! validator does when it follows its schema, and reads arrays and objects by handing
//! [`Cursor::items`] and [`Cursor::object`] visitors that are called once per item or entry,
//! positioned on it. A user's own reader that holds a scanner implements [`Cursor`] to be handed
//! back to its visitors. Nothing is built that the user did not ask for, and there is no `unsafe`
//! code: bytes are read through bounds-checked slices, which the compiler mostly proves in range.
//!
//! It reads a subset of JSON and never more: where it reads, it gives exactly what a full
//! parser gives; whatever it does not read (malformed text, a lone surrogate escape, a byte
//! out of place) ends the read with [`Declined`]. A user is expected to read the input again
//! with a full parser then, whose outcome (errors and their positions included) stands, so
//! declining is always safe, and well-formed input is read once. `rust/core/tests/scan_vs_serde.rs`
//! holds it to that against `serde_json`.
//!
//! Numbers are converted where that is exact and cheap: integers of up to 18 digits, and
//! decimals of up to 15 significant digits with no exponent. Any other number is handed back
//! as its text ([`Number::Spelled`]), checked against JSON's grammar, for the user to convert
//! with a full decoder. Values a user only passes over or keeps whole can be handed to another
//! reader from the current position ([`Scanner::with_rest`]).

/// The reader declines the input at this point: read it again with a full parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declined;

/// The kind of the next value, told by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// A number read by [`Scanner::number`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number<'j> {
    Int(i64),
    Float(f64),
    /// A number beyond the exact fast paths (long, or with an exponent), as its text: a
    /// complete JSON number, for a full decoder.
    Spelled(&'j str),
}

/// The kind of value each byte starts, if any: one load where a `match` would compare the byte
/// several times before its user compares the kind again.
const TOKENS: [Option<Token>; 256] = {
    let mut tokens = [None; 256];
    tokens[b'n' as usize] = Some(Token::Null);
    tokens[b't' as usize] = Some(Token::Bool);
    tokens[b'f' as usize] = Some(Token::Bool);
    tokens[b'"' as usize] = Some(Token::String);
    tokens[b'[' as usize] = Some(Token::Array);
    tokens[b'{' as usize] = Some(Token::Object);
    tokens[b'-' as usize] = Some(Token::Number);
    let mut digit = b'0';
    while digit <= b'9' {
        tokens[digit as usize] = Some(Token::Number);
        digit += 1;
    }
    tokens
};

/// Exact powers of ten as `f64` (all representable: up to `1e22`).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Most significant digits an integer is read with directly (`10^18 < 2^63`).
const INT_DIGITS: u32 = 18;
/// Most significant digits a decimal fraction is read with directly (`10^15 < 2^53`: the digits
/// are an exact `f64`, and one correctly rounded division by an exact power of ten gives the
/// correctly rounded value, as a full parser would).
const FLOAT_DIGITS: u32 = 15;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is zero, and maybe of bytes above such a byte: the
/// lowest bit set, if any, is always a zero byte's (a borrow only ever moves up from one).
const fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// The high bit of each byte of `word` that ends a plain run of string text (`"`, `\` or a
/// control character), and maybe of bytes above one: the lowest bit set is exact.
const fn text_ends(word: u64) -> u64 {
    zero_bytes(word ^ (ONES * b'"' as u64))
        | zero_bytes(word ^ (ONES * b'\\' as u64))
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS)
}

/// One pass over JSON text, declining what it does not read (see the module's note).
pub struct Scanner<'j> {
    text: &'j str,
    index: usize,
    /// A string with escapes, decoded.
    tape: String,
}

impl<'j> Scanner<'j> {
    pub fn new(text: &'j str) -> Self {
        Self {
            text,
            index: 0,
            tape: String::new(),
        }
    }

    #[inline]
    fn bytes(&self) -> &'j [u8] {
        self.text.as_bytes()
    }

    /// The next byte that is not JSON whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(&byte) = bytes.get(self.index) {
            if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(byte);
            }
            self.index += 1;
        }
        None
    }

    /// The kind of the next value, or `None` at the end of the text or at a byte that starts no
    /// JSON value. It passes the whitespace before the value: [`Self::null`],
    /// [`Self::boolean`], [`Self::string`] and [`Self::number`] read at the current position,
    /// so they are called after this has told the value's kind (or for an object's key, which
    /// [`Cursor::object`] positions), and decline anywhere else.
    #[inline]
    pub fn token(&mut self) -> Option<Token> {
        TOKENS[usize::from(self.peek()?)]
    }

    /// Consumes `byte` as the next non-whitespace byte, or declines.
    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), Declined> {
        if self.peek() == Some(byte) {
            self.index += 1;
            Ok(())
        } else {
            Err(Declined)
        }
    }

    /// After the whole value: only whitespace may follow.
    #[inline]
    pub fn finish(&mut self) -> Result<(), Declined> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(Declined),
        }
    }

    /// Consumes the literal `word` (`true`, `false`, `null`) at the current position.
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Result<(), Declined> {
        if self
            .bytes()
            .get(self.index..)
            .is_some_and(|rest| rest.starts_with(word))
        {
            self.index += word.len();
            Ok(())
        } else {
            Err(Declined)
        }
    }

    /// Consumes `null` at the current position.
    #[inline]
    pub fn null(&mut self) -> Result<(), Declined> {
        self.literal(b"null")
    }

    /// Consumes `true` or `false` at the current position.
    #[inline]
    pub fn boolean(&mut self) -> Result<bool, Declined> {
        match self.bytes().get(self.index) {
            Some(&b't') => self.literal(b"true").map(|()| true),
            Some(&b'f') => self.literal(b"false").map(|()| false),
            _ => Err(Declined),
        }
    }

    /// Consumes the string at the current position: a slice of the input, or of the reader's
    /// own buffer when it has escapes (valid until the next string is read).
    #[inline]
    pub fn string(&mut self) -> Result<&str, Declined> {
        let bytes = self.bytes();
        if bytes.get(self.index) != Some(&b'"') {
            return Err(Declined);
        }
        let start = self.index + 1;
        let mut at = start;
        // Eight bytes at a time up to the first that ends plain text, then byte by byte.
        while let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let ends = text_ends(u64::from_le_bytes(word));
            if ends != 0 {
                at += (ends.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
        loop {
            match bytes.get(at) {
                Some(b'"') => {
                    self.index = at + 1;
                    // Both ends are ASCII, so on character boundaries of the input.
                    return self.text.get(start..at).ok_or(Declined);
                }
                Some(b'\\') => return self.escaped(start, at),
                Some(&byte) if byte >= 0x20 => at += 1,
                _ => return Err(Declined),
            }
        }
    }

    /// The rest of a string from its first escape at `at`, decoded into the tape.
    #[cold]
    #[inline(never)]
    fn escaped(&mut self, start: usize, mut at: usize) -> Result<&str, Declined> {
        let text = self.text;
        let bytes = self.bytes();
        self.tape.clear();
        let mut run = start;
        loop {
            match bytes.get(at) {
                Some(b'"') => {
                    self.tape.push_str(text.get(run..at).ok_or(Declined)?);
                    self.index = at + 1;
                    return Ok(&self.tape);
                }
                Some(b'\\') => {
                    self.tape.push_str(text.get(run..at).ok_or(Declined)?);
                    let escape = bytes.get(at + 1).copied().ok_or(Declined)?;
                    at += 2;
                    let decoded = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = hex4(bytes, at)?;
                            at += 4;
                            if (0xD800..0xDC00).contains(&unit) {
                                // A high surrogate: only a low one may follow.
                                if bytes.get(at..at + 2) != Some(b"\\u") {
                                    return Err(Declined);
                                }
                                let low = hex4(bytes, at + 2)?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return Err(Declined);
                                }
                                at += 6;
                                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                unit
                            }
                            .try_into()
                            .map_err(|_| Declined)?
                        }
                        _ => return Err(Declined),
                    };
                    self.tape.push(decoded);
                    run = at;
                }
                Some(&byte) if byte >= 0x20 => at += 1,
                _ => return Err(Declined),
            }
        }
    }

    /// Consumes the number at the current position, in JSON's grammar.
    #[expect(
        clippy::inline_always,
        reason = "measured: 2% fewer instructions on the S4 benchmark, no result in memory"
    )]
    #[inline(always)]
    pub fn number(&mut self) -> Result<Number<'j>, Declined> {
        let bytes = self.bytes();
        let start = self.index;
        let mut at = start;
        let negative = bytes.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let mut digits: u64 = 0;
        let mut count: u32 = 0;
        match bytes.get(at) {
            Some(b'0') => {
                at += 1;
                count = 1;
            }
            Some(b'1'..=b'9') => {
                while let Some(&digit @ b'0'..=b'9') = bytes.get(at) {
                    digits = digits
                        .wrapping_mul(10)
                        .wrapping_add(u64::from(digit - b'0'));
                    count += 1;
                    at += 1;
                }
            }
            _ => return Err(Declined),
        }
        let mut fraction: u32 = 0;
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            while let Some(&digit @ b'0'..=b'9') = bytes.get(at) {
                digits = digits
                    .wrapping_mul(10)
                    .wrapping_add(u64::from(digit - b'0'));
                fraction += 1;
                at += 1;
            }
            if fraction == 0 {
                return Err(Declined);
            }
        }
        let exponent = matches!(bytes.get(at), Some(b'e' | b'E'));
        if exponent {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let before = at;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            if at == before {
                return Err(Declined);
            }
        }
        self.index = at;
        let total = count + fraction;
        if fraction == 0 && !exponent && total <= INT_DIGITS {
            // At most 18 digits: no overflow above, and the value fits an `i64` either way.
            let value = digits as i64;
            return Ok(Number::Int(if negative { -value } else { value }));
        }
        if fraction > 0
            && !exponent
            && total <= FLOAT_DIGITS
            && let Some(scale) = POW10.get(fraction as usize)
        {
            let value = digits as f64 / scale;
            return Ok(Number::Float(if negative { -value } else { value }));
        }
        // Long or with an exponent: the number's text, for a full decoder.
        self.text
            .get(start..at)
            .map(Number::Spelled)
            .ok_or(Declined)
    }

    /// Consumes `spelled` when the text goes on with exactly these bytes: an object key can be
    /// matched as its JSON text, quotes included, when it needs no escape. Nothing is consumed
    /// otherwise.
    #[inline]
    pub fn key_is(&mut self, spelled: &[u8]) -> bool {
        let matched = self
            .bytes()
            .get(self.index..)
            .is_some_and(|rest| rest.starts_with(spelled));
        if matched {
            self.index += spelled.len();
        }
        matched
    }

    /// Hands the text from the next value on (whitespace passed) to `read`, another reader,
    /// which returns what it read and how many bytes that took; the scanner goes on after them.
    /// For values passed over or kept whole (skipped, captured, or needed as raw text).
    pub fn with_rest<T, E: From<Declined>>(
        &mut self,
        read: impl FnOnce(&'j [u8]) -> Result<(T, usize), E>,
    ) -> Result<T, E> {
        self.peek();
        let rest = self.bytes().get(self.index..).unwrap_or_default();
        let (value, length) = read(rest)?;
        if length > rest.len() {
            return Err(E::from(Declined));
        }
        self.index += length;
        Ok(value)
    }
}

/// A reader built on a [`Scanner`]: the scanner itself, or a user's own reader that holds one.
/// Arrays and objects are read through this trait, so that the visitors called for their items
/// and entries are handed the user's reader (with whatever else it carries) positioned on each.
pub trait Cursor<'j> {
    /// The scanner the reader reads with.
    fn scanner(&mut self) -> &mut Scanner<'j>;

    /// Reads the array that is the next value: `visit` is called once per item, with its index,
    /// positioned on it, and must consume it.
    #[inline]
    fn items<E: From<Declined>>(
        &mut self,
        visit: &mut impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        self.scanner().expect(b'[')?;
        if self.scanner().peek() == Some(b']') {
            self.scanner().index += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            visit(self, index)?;
            index += 1;
            let scanner = self.scanner();
            match scanner.peek() {
                Some(b',') => scanner.index += 1,
                Some(b']') => {
                    scanner.index += 1;
                    return Ok(());
                }
                _ => return Err(E::from(Declined)),
            }
        }
    }

    /// Reads the object that is the next value: for each entry, `key` reads the key
    /// (positioned on its opening quote, with [`Scanner::string`] or [`Scanner::key_is`]) and
    /// `visit` the value, given what `key` returned.
    #[inline]
    fn object<K, E: From<Declined>>(
        &mut self,
        key: &mut impl FnMut(&mut Self) -> Result<K, E>,
        visit: &mut impl FnMut(&mut Self, K) -> Result<(), E>,
    ) -> Result<(), E> {
        let scanner = self.scanner();
        scanner.expect(b'{')?;
        match scanner.peek() {
            Some(b'}') => {
                scanner.index += 1;
                return Ok(());
            }
            Some(b'"') => {}
            _ => return Err(E::from(Declined)),
        }
        loop {
            let mapped = key(self)?;
            self.scanner().expect(b':')?;
            visit(self, mapped)?;
            let scanner = self.scanner();
            match scanner.peek() {
                Some(b',') => {
                    scanner.index += 1;
                    if scanner.peek() != Some(b'"') {
                        return Err(E::from(Declined));
                    }
                }
                Some(b'}') => {
                    scanner.index += 1;
                    return Ok(());
                }
                _ => return Err(E::from(Declined)),
            }
        }
    }
}

impl<'j> Cursor<'j> for Scanner<'j> {
    #[inline]
    fn scanner(&mut self) -> &mut Scanner<'j> {
        self
    }
}

/// Four hex digits at `at` as a UTF-16 code unit.
fn hex4(bytes: &[u8], at: usize) -> Result<u32, Declined> {
    let digits = bytes.get(at..at + 4).ok_or(Declined)?;
    digits.iter().try_fold(0u32, |unit, &digit| {
        let value = char::from(digit).to_digit(16).ok_or(Declined)?;
        Ok(unit << 4 | value)
    })
}

#[cfg(test)]
mod tests {
    use super::{text_ends, zero_bytes};

    /// The index of the first byte the word test stops at, if any.
    fn first_end(text: [u8; 8]) -> Option<u32> {
        let ends = text_ends(u64::from_le_bytes(text));
        (ends != 0).then(|| ends.trailing_zeros() / 8)
    }

    #[test]
    fn word_tests_find_the_first_byte_that_ends_plain_text() {
        assert_eq!(zero_bytes(u64::from_le_bytes(*b"abcdefgh")), 0);
        assert_ne!(zero_bytes(u64::from_le_bytes(*b"abc\0efgh")), 0);
        assert_eq!(first_end(*b"plain ok"), None);
        assert_eq!(first_end(*b"ab\"defgh"), Some(2));
        assert_eq!(first_end(*b"abcdefg\\"), Some(7));
        assert_eq!(first_end(*b"abc\ndefg"), Some(3));
        assert_eq!(first_end(*b"\x1fbcdefgh"), Some(0));
        assert_eq!(first_end(*b"\0\"\\\n\x01\x1f\"\\"), Some(0));
        assert_eq!(first_end(*b"a\x01\x00\"bcde"), Some(1));
        // Non-ASCII bytes are text (UTF-8 continuation and lead bytes).
        assert_eq!(first_end(*b"caf\xc3\xa9 ok"), None);
        assert_eq!(first_end(*b"\xff\xfe\x80\x81\x90\xa0\xc0\xe0"), None);
        assert_eq!(first_end(*b"\xff\xa0\x80\x9f\"\xa0\xc0\xe0"), Some(4));
    }

    #[test]
    fn the_first_end_is_exact_for_every_byte_at_every_place() {
        for place in 0..8 {
            for byte in 0..=255u8 {
                let mut text = *b"abcdefgh";
                text[place] = byte;
                let ends = byte == b'"' || byte == b'\\' || byte < 0x20;
                assert_eq!(
                    first_end(text),
                    ends.then_some(place as u32),
                    "{byte:#x} at {place}"
                );
            }
        }
    }

    #[test]
    fn the_first_end_is_exact_for_every_pair_of_bytes() {
        let stops = |byte: u8| byte == b'"' || byte == b'\\' || byte < 0x20;
        for low in 0..8 {
            for high in low + 1..8 {
                for first in 0..=255u8 {
                    for second in 0..=255u8 {
                        let mut text = *b"abcdefgh";
                        text[low] = first;
                        text[high] = second;
                        let expected = if stops(first) {
                            Some(low as u32)
                        } else if stops(second) {
                            Some(high as u32)
                        } else {
                            None
                        };
                        assert_eq!(first_end(text), expected, "{text:?}");
                    }
                }
            }
        }
    }
}
