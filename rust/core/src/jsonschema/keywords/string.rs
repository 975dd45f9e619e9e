//! `minLength`, `maxLength` (in code points), `pattern` and asserted `format`.
use crate::error::{ErrorCode, describe_str};
use crate::json::Instance;
use crate::jsonschema::context::{Context, fail};
use crate::jsonschema::describe::describe;
use crate::jsonschema::node::StringKeywords;

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
