//! `minLength`, `maxLength` (in code points), `pattern` and asserted `format`: read from a
//! schema object, then checked against string values.
use serde_json::Value;

use crate::error::{ErrorCode, describe_str};
use crate::formats::Format;
use crate::json::Instance;
use crate::jsonschema::compile::{Compiler, Reading};
use crate::jsonschema::context::{Context, fail};
use crate::jsonschema::describe::describe;
use crate::jsonschema::node::StringKeywords;
use crate::jsonschema::options::SchemaError;

/// The string keywords of one schema object, as they are read.
#[derive(Default)]
pub(crate) struct Reader {
    keywords: StringKeywords,
    /// Some keyword read checks something (a `format` this validator does not know does not).
    used: bool,
}

impl Reader {
    /// Reads `key` if it is a string keyword in force where `reading` says; returns whether it
    /// was.
    pub(crate) fn read(
        &mut self,
        compiler: &Compiler<'_>,
        reading: Reading,
        key: &str,
        child: &Value,
    ) -> Result<bool, SchemaError> {
        let keywords = &mut self.keywords;
        match key {
            "minLength" if reading.validation => keywords.min_length = Some(compiler.count(child)?),
            "maxLength" if reading.validation => keywords.max_length = Some(compiler.count(child)?),
            "pattern" if reading.validation => {
                let Value::String(source) = child else {
                    return Err(compiler.error(child, "expected a string"));
                };
                keywords.pattern = Some(compiler.pattern(child, source)?);
            }
            "format" if reading.assert_formats => {
                let Some(format) = child.as_str().and_then(Format::from_name) else {
                    return Ok(true);
                };
                keywords.format = Some(format);
            }
            _ => return Ok(false),
        }
        self.used = true;
        Ok(true)
    }

    /// The string keywords, or `None` when none of them checks anything.
    pub(crate) fn finish(self) -> Option<Box<StringKeywords>> {
        self.used.then(|| Box::new(self.keywords))
    }
}

/// Validates a string value against the string keywords.
pub(crate) fn validate<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &StringKeywords,
    instance: &I,
) -> bool {
    let Some(text) = instance.as_str() else {
        return true;
    };
    let mut valid = true;
    if keywords.min_length.is_some() || keywords.max_length.is_some() {
        // Byte length bounds the code point count from above, so short strings skip counting.
        let bytes = text.len() as u64;
        let needs_count = keywords.min_length.is_some_and(|min| bytes >= min)
            || keywords.max_length.is_some_and(|max| bytes > max);
        let length = if needs_count {
            text.chars().count() as u64
        } else {
            bytes
        };
        if let Some(min) = keywords.min_length
            && length < min
        {
            fail!(
                ctx,
                valid,
                ErrorCode::StringTooShort,
                format!("at least {min} character{}", plural(min)),
                format!(
                    "{} ({length} character{})",
                    describe_str(&text),
                    plural(length)
                )
            );
        }
        if let Some(max) = keywords.max_length
            && length > max
        {
            fail!(
                ctx,
                valid,
                ErrorCode::StringTooLong,
                format!("at most {max} character{}", plural(max)),
                format!("{} ({length} characters)", describe_str(&text))
            );
        }
    }
    if let Some(pattern) = &keywords.pattern {
        match pattern.is_match_within(&text, &mut ctx.budget) {
            Ok(true) => {}
            Ok(false) => fail!(
                ctx,
                valid,
                ErrorCode::PatternMismatch,
                format!("matching {}", pattern.source()),
                describe(instance)
            ),
            Err(too_complex) => fail!(
                ctx,
                valid,
                ErrorCode::PatternTooComplex,
                format!("matching {} ({too_complex})", pattern.source()),
                describe(instance)
            ),
        }
    }
    if let Some(format) = keywords.format
        && !format.check(&text)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::InvalidFormat,
            format.name(),
            describe(instance)
        );
    }
    valid
}

fn plural(count: u64) -> &'static str {
    if count == 1 { "" } else { "s" }
}
