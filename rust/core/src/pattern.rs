//! ECMA-262 regular expressions (`pattern`, `patternProperties`, `Param(pattern=)`) matched in
//! bounded time, since they come from untrusted schemas.
//!
//! `regress` (an ECMA-262 engine) decides which patterns are valid: Unicode mode first, then
//! legacy mode for patterns only it accepts (identity escapes such as `\-`). A valid pattern is
//! then translated to the `regex` crate's syntax with ECMA-262's meaning kept: `\d`, `\w`, `\b`
//! are ASCII, `\s` is ECMA-262's list of spaces, `.` stops at line terminators, `[]` matches
//! nothing and `[^]` anything, `\uXXXX` (surrogate pairs joined) and `\u{...}` are code points.
//!
//! - Without lookaround or backreferences the translation runs on `regex`, whose matching time is
//!   linear in the input (a finite automaton: `^(a+)+$` cannot blow up).
//! - With them it runs on `fancy-regex`, a backtracking engine, with a budget of
//!   [`BACKTRACK_LIMIT`] backtracking steps a match: when the budget is spent the match is
//!   [`TooComplex`], which validation reports as `pattern_too_complex`, never a hang.
//! - A budget a match is not a budget a validation: a document of many strings could spend it
//!   once per string. One validation therefore threads one [`Budget`] through its matches: once
//!   a match has spent its steps, or the validation's backtracking matches together have taken
//!   [`VALIDATION_ALLOWANCE`], every further backtracking match of that validation fails at once
//!   with [`TooComplex::Validation`]. Linear patterns never touch the budget.
//!
//! A valid pattern that neither engine can take (a lookbehind of variable length, a lone
//! surrogate escape) is refused when the schema is compiled.
use std::fmt;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;

/// Backtracking steps a single match of a pattern with lookaround or backreferences may take.
pub const BACKTRACK_LIMIT: usize = 1_000_000;

/// CPU time the backtracking matches of one validation may take together. `fancy-regex` does
/// not report the steps a match took, so the allowance is timed: it bounds a document of many
/// strings that each stay just under [`BACKTRACK_LIMIT`]. A benign match takes microseconds.
/// The time is the matching thread's CPU time (wall time only where the platform has no
/// per-thread clock), so a thread preempted on a loaded machine does not spend it.
pub const VALIDATION_ALLOWANCE: Duration = Duration::from_millis(200);

/// The compiled program of the `regex` crate may use this many bytes (its default is 10 MiB).
const SIZE_LIMIT: usize = 8 << 20;

/// A backtracking match refused for its cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooComplex {
    /// This match would take more than [`BACKTRACK_LIMIT`] backtracking steps.
    Match,
    /// The validation's [`Budget`] was spent by earlier matches, so this one was not tried.
    Validation,
}

impl fmt::Display for TooComplex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Match => write!(
                f,
                "matching the pattern takes more than {BACKTRACK_LIMIT} backtracking steps"
            ),
            Self::Validation => f.write_str(
                "not tried: this validation has spent its backtracking budget on other strings",
            ),
        }
    }
}

/// The backtracking allowance of one validation, spent by its matches of patterns with
/// lookaround or backreferences (see the module notes).
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Time taken by backtracking matches so far.
    spent: Duration,
    allowance: Duration,
    /// Set when a match of the current walk spent its [`BACKTRACK_LIMIT`].
    overrun: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Self::new()
    }
}

impl Budget {
    /// A fresh budget of [`VALIDATION_ALLOWANCE`].
    pub const fn new() -> Self {
        Self::with_allowance(VALIDATION_ALLOWANCE)
    }

    /// A fresh budget of `allowance` of backtracking time.
    pub const fn with_allowance(allowance: Duration) -> Self {
        Self {
            spent: Duration::ZERO,
            allowance,
            overrun: false,
        }
    }

    /// True when further backtracking matches fail at once.
    pub fn is_spent(&self) -> bool {
        self.overrun || self.spent >= self.allowance
    }

    /// The budget for a second walk over the same value (a validation that first checks
    /// quickly, then walks again to collect its errors): the time spent carries over, so the
    /// whole validation stays within the allowance and one overrunning match a walk, while the
    /// walk may match again the string that overran the first one (strings before it are then
    /// matched, not refused, unless the allowance is spent too).
    #[must_use]
    pub const fn next_walk(self) -> Self {
        Self {
            overrun: false,
            ..self
        }
    }
}

#[derive(Debug, Clone)]
enum Engine {
    /// Linear-time matching.
    Linear(regex::Regex),
    /// Backtracking within [`BACKTRACK_LIMIT`].
    Bounded(fancy_regex::Regex),
}

/// A compiled ECMA-262 pattern and its source text (for error messages).
#[derive(Debug, Clone)]
pub struct Pattern {
    source: Box<str>,
    engine: Engine,
}

impl Pattern {
    /// Compiles the ECMA-262 pattern `source`; `Err` says why it is not one this can match.
    pub fn new(source: &str) -> Result<Self, String> {
        if let Err(unicode_error) = regress::Regex::with_flags(source, "u")
            && regress::Regex::new(source).is_err()
        {
            return Err(format!("invalid regex {source:?}: {unicode_error}"));
        }
        let unsupported = |why: String| {
            format!("regex {source:?} uses an ECMA-262 feature that cannot be matched here: {why}")
        };
        let translation = translate(source)
            .ok_or_else(|| unsupported("a lone surrogate or a non-ASCII group name".to_owned()))?;
        let engine = if translation.backtracking {
            fancy_regex::RegexBuilder::new(&translation.text)
                .backtrack_limit(BACKTRACK_LIMIT)
                .delegate_size_limit(SIZE_LIMIT)
                .build()
                .map(Engine::Bounded)
                .map_err(|error| unsupported(error.to_string()))?
        } else {
            regex::RegexBuilder::new(&translation.text)
                .size_limit(SIZE_LIMIT)
                .build()
                .map(Engine::Linear)
                .map_err(|error| unsupported(error.to_string()))?
        };
        Ok(Self {
            source: source.into(),
            engine,
        })
    }

    /// The pattern as written in the schema.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when matching takes time linear in the input (no lookaround or backreferences).
    pub fn is_linear(&self) -> bool {
        matches!(self.engine, Engine::Linear(_))
    }

    /// Whether the pattern matches anywhere in `text` (patterns are not anchored), as the only
    /// match of a validation.
    pub fn is_match(&self, text: &str) -> Result<bool, TooComplex> {
        self.is_match_within(text, &mut Budget::new())
    }

    /// Like [`is_match`](Self::is_match), as one match of a validation that spends `budget`:
    /// a backtracking match fails at once when the budget is spent, and is timed against it
    /// otherwise. A linear match leaves the budget alone.
    #[inline]
    pub fn is_match_within(&self, text: &str, budget: &mut Budget) -> Result<bool, TooComplex> {
        match &self.engine {
            Engine::Linear(regex) => Ok(regex.is_match(text)),
            Engine::Bounded(regex) => bounded_match(regex, text, budget),
        }
    }
}

/// A backtracking match within the validation's `budget`.
#[inline(never)]
fn bounded_match(
    regex: &fancy_regex::Regex,
    text: &str,
    budget: &mut Budget,
) -> Result<bool, TooComplex> {
    if budget.is_spent() {
        return Err(TooComplex::Validation);
    }
    let start = Started::now();
    let outcome = regex.is_match(text);
    budget.spent += start.elapsed();
    outcome.map_err(|_| {
        budget.overrun = true;
        TooComplex::Match
    })
}

/// When a timed match started: on the thread's CPU clock where there is one, and on the wall
/// clock (also the fallback should the CPU clock fail later).
struct Started {
    cpu: Option<ThreadTime>,
    wall: Instant,
}

impl Started {
    #[inline]
    fn now() -> Self {
        Self {
            cpu: ThreadTime::try_now().ok(),
            wall: Instant::now(),
        }
    }

    #[inline]
    fn elapsed(&self) -> Duration {
        self.cpu
            .as_ref()
            .and_then(|cpu| cpu.try_elapsed().ok())
            .unwrap_or_else(|| self.wall.elapsed())
    }
}

/// ECMA-262 `.`: anything but a line terminator.
const DOT: &str = r"[^\n\r\x{2028}\x{2029}]";
/// ECMA-262 `\s`: white space and line terminators.
const SPACES: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const DIGITS: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";

/// A pattern in the `regex` crate's syntax, and whether it needs backtracking.
struct Translation {
    text: String,
    backtracking: bool,
}

/// Reads a valid ECMA-262 pattern, writing the `regex` crate's equivalent.
struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    backtracking: bool,
}

fn translate(source: &str) -> Option<Translation> {
    let mut translator = Translator {
        chars: source.chars().collect(),
        at: 0,
        out: String::with_capacity(source.len() + 16),
        backtracking: false,
    };
    translator.pattern()?;
    Some(Translation {
        text: translator.out,
        backtracking: translator.backtracking,
    })
}

impl Translator {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(offset, ch)| self.peek(offset) == Some(ch))
    }

    fn pattern(&mut self) -> Option<()> {
        while let Some(ch) = self.peek(0) {
            self.at += 1;
            match ch {
                '\\' => self.escape(false)?,
                '[' => self.class()?,
                '.' => self.out.push_str(DOT),
                '(' => self.group()?,
                '{' if self.quantifier_ahead() => {
                    self.out.push('{');
                    while let Some(next) = self.peek(0) {
                        self.at += 1;
                        self.out.push(next);
                        if next == '}' {
                            break;
                        }
                    }
                }
                ')' | '|' | '*' | '+' | '?' | '^' | '$' => self.out.push(ch),
                other => push_literal(&mut self.out, other),
            }
        }
        Some(())
    }

    /// After `{`: digits, optionally `,` and digits, then `}` (else `{` is a literal brace).
    fn quantifier_ahead(&self) -> bool {
        let mut offset = 0;
        let digits = |offset: &mut usize| {
            let start = *offset;
            while self.peek(*offset).is_some_and(|c| c.is_ascii_digit()) {
                *offset += 1;
            }
            *offset > start
        };
        if !digits(&mut offset) {
            return false;
        }
        if self.peek(offset) == Some(',') {
            offset += 1;
            digits(&mut offset);
        }
        self.peek(offset) == Some('}')
    }

    /// After `(`.
    fn group(&mut self) -> Option<()> {
        if self.peek(0) != Some('?') {
            self.out.push('(');
            return Some(());
        }
        for lookaround in ["?=", "?!", "?<=", "?<!"] {
            if self.starts_with(lookaround) {
                self.backtracking = true;
                self.out.push('(');
                self.out.push_str(lookaround);
                self.at += lookaround.chars().count();
                return Some(());
            }
        }
        if self.starts_with("?<") {
            self.at += 2;
            let name = self.name()?;
            self.out.push_str("(?<");
            self.out.push_str(&name);
            self.out.push('>');
            return Some(());
        }
        // `(?:`.
        self.out.push('(');
        Some(())
    }

    /// A group name up to `>` (consumed); the `regex` crate takes ASCII names only.
    fn name(&mut self) -> Option<String> {
        let mut name = String::new();
        while let Some(ch) = self.peek(0) {
            self.at += 1;
            if ch == '>' {
                return Some(name);
            }
            if !(ch.is_ascii_alphanumeric() || ch == '_') {
                return None;
            }
            name.push(ch);
        }
        None
    }

    /// After `\`, outside (`in_class` false) or inside a class.
    fn escape(&mut self, in_class: bool) -> Option<()> {
        let ch = self.peek(0)?;
        self.at += 1;
        let set = |negated: bool, items: &str| {
            if in_class && !negated {
                items.to_owned()
            } else {
                format!("[{}{items}]", if negated { "^" } else { "" })
            }
        };
        match ch {
            'd' => self.out.push_str(&set(false, DIGITS)),
            'D' => self.out.push_str(&set(true, DIGITS)),
            'w' => self.out.push_str(&set(false, WORD)),
            'W' => self.out.push_str(&set(true, WORD)),
            's' => self.out.push_str(&set(false, SPACES)),
            'S' => self.out.push_str(&set(true, SPACES)),
            'b' if in_class => self.out.push_str(r"\x08"),
            'b' => self.out.push_str(r"(?-u:\b)"),
            'B' => self.out.push_str(r"(?-u:\B)"),
            'n' | 'r' | 't' | 'f' | 'v' => {
                self.out.push('\\');
                self.out.push(ch);
            }
            '0' if !self.peek(0).is_some_and(|c| c.is_ascii_digit()) => {
                self.out.push_str(r"\x00");
            }
            '1'..='9' if !in_class => {
                self.backtracking = true;
                self.out.push('\\');
                self.out.push(ch);
                while let Some(digit) = self.peek(0).filter(char::is_ascii_digit) {
                    self.at += 1;
                    self.out.push(digit);
                }
            }
            'k' if !in_class && self.peek(0) == Some('<') => {
                self.at += 1;
                let name = self.name()?;
                self.backtracking = true;
                self.out.push_str(r"\k<");
                self.out.push_str(&name);
                self.out.push('>');
            }
            'c' if self.peek(0).is_some_and(|c| c.is_ascii_alphabetic()) => {
                let letter = self.peek(0)?;
                self.at += 1;
                push_code_point(&mut self.out, u32::from(letter) % 32);
            }
            'x' if self.hex_ahead(2) => {
                let value = self.hex(2)?;
                push_code_point(&mut self.out, value);
            }
            'u' if self.peek(0) == Some('{') => {
                self.at += 1;
                let mut value: u32 = 0;
                while let Some(digit) = self.peek(0).and_then(|c| c.to_digit(16)) {
                    self.at += 1;
                    value = value.checked_mul(16)?.checked_add(digit)?;
                }
                if self.peek(0) != Some('}') {
                    return None;
                }
                self.at += 1;
                char::from_u32(value)?;
                push_code_point(&mut self.out, value);
            }
            'u' if self.hex_ahead(4) => {
                let unit = self.hex(4)?;
                let value = if (0xD800..0xDC00).contains(&unit)
                    && self.peek(0) == Some('\\')
                    && self.peek(1) == Some('u')
                {
                    self.at += 2;
                    let low = self.hex(4)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    unit
                };
                char::from_u32(value)?;
                push_code_point(&mut self.out, value);
            }
            'p' | 'P' if self.peek(0) == Some('{') => {
                self.out.push('\\');
                self.out.push(ch);
                while let Some(next) = self.peek(0) {
                    self.at += 1;
                    self.out.push(next);
                    if next == '}' {
                        break;
                    }
                }
            }
            other => push_literal(&mut self.out, other),
        }
        Some(())
    }

    fn hex_ahead(&self, count: usize) -> bool {
        (0..count).all(|offset| self.peek(offset).is_some_and(|c| c.is_ascii_hexdigit()))
    }

    fn hex(&mut self, count: usize) -> Option<u32> {
        let mut value = 0;
        for _ in 0..count {
            value = value * 16 + self.peek(0)?.to_digit(16)?;
            self.at += 1;
        }
        Some(value)
    }

    /// After `[`: a class, with `[` `&` `~` escaped (set syntax in the `regex` crate) and `-`
    /// a range only between two characters.
    fn class(&mut self) -> Option<()> {
        let negated = self.peek(0) == Some('^');
        if negated {
            self.at += 1;
        }
        if self.peek(0) == Some(']') {
            self.at += 1;
            // `[]` matches nothing, `[^]` any character.
            self.out.push_str(if negated {
                r"[\x{0}-\x{10FFFF}]"
            } else {
                r"[^\x{0}-\x{10FFFF}]"
            });
            return Some(());
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        // Whether the last item was a single character (so `-` after it may start a range).
        let mut after_char = false;
        loop {
            let ch = self.peek(0)?;
            self.at += 1;
            match ch {
                ']' => break,
                '\\' => {
                    let class_escape = self
                        .peek(0)
                        .is_some_and(|c| "dDwWsS".contains(c) || (c == 'p' || c == 'P'));
                    self.escape(true)?;
                    after_char = !class_escape;
                }
                '-' if after_char && self.peek(0).is_some_and(|c| c != ']') => {
                    self.out.push('-');
                    after_char = false;
                }
                other => {
                    push_literal(&mut self.out, other);
                    after_char = true;
                }
            }
        }
        self.out.push(']');
        Some(())
    }
}

/// `ch` as a literal, escaped when the `regex` crate would read it otherwise.
fn push_literal(out: &mut String, ch: char) {
    if ch.is_ascii_punctuation() && r"\.+*?()|[]{}^$#&-~".contains(ch) {
        out.push('\\');
    }
    out.push(ch);
}

fn push_code_point(out: &mut String, value: u32) {
    use std::fmt::Write;
    // Writing to a `String` cannot fail.
    let _ = write!(out, r"\x{{{value:X}}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern)
            .map_err(|error| format!("{pattern}: {error}"))
            .and_then(|p| p.is_match(text).map_err(|e| e.to_string()))
            == Ok(true)
    }

    #[test]
    fn ecma_semantics() {
        assert!(matches(r"^\d+$", "123"));
        assert!(!matches(r"^\d+$", "١٢٣"));
        assert!(!matches(r"^\w$", "é"));
        assert!(matches(r"^\s$", "\u{FEFF}"));
        assert!(!matches(r"^.$", "\n"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(!matches(r"[]", "a"));
        assert!(matches(r"^\u00e9$", "é"));
        assert!(matches(r"^\uD83D\uDE00$", "😀"));
        assert!(matches(r"^\u{1F600}$", "😀"));
        assert!(matches(r"^[a-c\-]+$", "a-b"));
        assert!(matches(r"^\p{Letter}+$", "héllo"));
        assert!(matches(r"a{", "a{"));
        assert!(matches(r"^[&~]+$", "&~"));
        assert!(matches(r"\bfoo\b", "a foo b"));
        assert!(!matches(r"^abc$", "abc\n"));
        assert!(matches(r"^\cJ$", "\n"));
        assert!(matches(r"\-", "-"));
        assert!(Pattern::new("(abc").is_err());
    }

    #[test]
    fn engines() {
        let linear = Pattern::new("^(a+)+$").ok();
        assert!(linear.as_ref().is_some_and(Pattern::is_linear));
        let text = format!("{}!", "a".repeat(100_000));
        assert_eq!(linear.map(|p| p.is_match(&text)), Some(Ok(false)));
        let bounded = Pattern::new(r"^(?=(a+)+$)\1").ok();
        assert!(bounded.as_ref().is_some_and(|p| !p.is_linear()));
        assert!(matches(r"(a)\1", "xaa"));
        assert!(matches(r"(?<x>a)\k<x>", "aa"));
        assert!(matches(r"(?<!b)a", "ca"));
        let hard = Pattern::new(r"^(?:(a+)+\1)+$").ok();
        let text = format!("{}!", "a".repeat(40));
        assert_eq!(
            hard.map(|p| p.is_match(&text)),
            Some(Err(TooComplex::Match))
        );
    }

    #[test]
    fn one_budget_a_validation() {
        let (hard, linear) = (Pattern::new(r"^(?:(a+)+\1)+$"), Pattern::new("^a+$"));
        assert!(hard.is_ok() && linear.is_ok());
        let (Ok(hard), Ok(linear)) = (hard, linear) else {
            return;
        };
        let hostile = format!("{}!", "a".repeat(40));
        let mut budget = Budget::new();
        assert_eq!(hard.is_match_within("aa", &mut budget), Ok(true));
        assert!(!budget.is_spent());
        assert_eq!(
            hard.is_match_within(&hostile, &mut budget),
            Err(TooComplex::Match)
        );
        assert!(budget.is_spent());
        // Every further backtracking match of the validation fails at once, even a benign one:
        // not tried, so it spends nothing.
        let spent = budget.spent;
        for _ in 0..50 {
            assert_eq!(
                hard.is_match_within(&hostile, &mut budget),
                Err(TooComplex::Validation)
            );
        }
        assert_eq!(budget.spent, spent);
        assert_eq!(
            hard.is_match_within("aa", &mut budget),
            Err(TooComplex::Validation)
        );
        // Linear patterns never spend it, nor are refused by it.
        assert_eq!(linear.is_match_within("aaa", &mut budget), Ok(true));
        // A second walk of the validation may try one more overrunning match, no more.
        let mut second = budget.next_walk();
        assert!(!second.is_spent());
        assert_eq!(
            hard.is_match_within(&hostile, &mut second),
            Err(TooComplex::Match)
        );
        assert!(second.is_spent());
    }

    #[test]
    fn the_allowance_bounds_matches_that_stay_within_their_steps() {
        let lookahead = Pattern::new(r"^(?=a)a+$");
        assert!(lookahead.as_ref().is_ok_and(|p| !p.is_linear()));
        let Ok(lookahead) = lookahead else {
            return;
        };
        let mut budget = Budget::with_allowance(Duration::ZERO);
        assert!(budget.is_spent());
        assert_eq!(
            lookahead.is_match_within("aaa", &mut budget),
            Err(TooComplex::Validation)
        );
        let mut budget = Budget::with_allowance(Duration::from_nanos(1));
        assert_eq!(lookahead.is_match_within("aaa", &mut budget), Ok(true));
        // That match took at least the nanosecond allowed: the next one is refused, and so is
        // every match of a second walk, since time spent carries over.
        assert!(budget.is_spent());
        assert_eq!(
            lookahead.is_match_within("aaa", &mut budget),
            Err(TooComplex::Validation)
        );
        assert!(budget.next_walk().is_spent());
    }
}
