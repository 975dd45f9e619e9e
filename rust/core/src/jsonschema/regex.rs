//! ECMA-262 patterns (`pattern`, `patternProperties`), compiled once with `regress`.
use regress::Regex;

/// A compiled pattern and its source text (for error messages).
pub(crate) struct Pattern {
    pub source: Box<str>,
    regex: Regex,
}

impl Pattern {
    /// Compiles `source` in Unicode mode, falling back to legacy mode for patterns that only the
    /// latter accepts (e.g. identity escapes such as `\-` outside classes).
    pub(crate) fn new(source: &str) -> Result<Self, String> {
        let regex = match Regex::with_flags(source, "u") {
            Ok(regex) => regex,
            Err(unicode_error) => Regex::new(source)
                .map_err(|_| format!("invalid regex {source:?}: {unicode_error}"))?,
        };
        Ok(Self {
            source: source.into(),
            regex,
        })
    }

    /// True when the pattern matches anywhere in `text` (patterns are not anchored).
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.find(text).is_some()
    }
}
