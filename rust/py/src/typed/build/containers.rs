//! Arrays: reading their items one by one, and the size bounds of arrays and objects.
use ferrotool_core::error::{ErrorCode, PathItem};

use super::{Built, Context, Engine, Items, describe, is_container};
use crate::typed::outcome::Fatal;
use crate::typed::source::{Head, Source};

impl Engine {
    /// Reads an array, each item with `item` (given its index, its path pushed), or returns
    /// `None` when the value is not an array (recorded). The values built are left on
    /// `context.values` from the position returned up, for the caller to take (see
    /// [`Context::items`]) and free; the item count comes with it.
    pub(super) fn array_items<'v, 'py, S: Source<'py>>(
        source: &mut S,
        context: &mut Context<'py>,
        item: &mut impl FnMut(&mut S, &mut Context<'py>, usize) -> Built<'py>,
    ) -> Items {
        let head = source.head()?;
        if !matches!(head, Head::Array) {
            wrong_kind!(source, context, head, ErrorCode::WrongType, "array")?;
            return Ok(None);
        }
        context.enter()?;
        let base = context.values.len();
        let mut count = 0usize;
        let read = source.items(&mut |source, index| {
            count += 1;
            let before = context.errors.len();
            let value = item(source, context, index);
            context.under(before, || PathItem::Index(index));
            if let Some(value) = value? {
                context.values.push(Some(value));
            }
            Ok(())
        });
        if let Err(fatal) = read {
            context.values.truncate(base);
            return Err(fatal);
        }
        context.leave();
        Ok(Some((base, count)))
    }

    pub(super) fn check_size(
        context: &mut Context<'_>,
        count: usize,
        min: Option<u64>,
        max: Option<u64>,
        too_short: ErrorCode,
        too_long: ErrorCode,
        noun: &str,
    ) -> Result<(), Fatal> {
        let count_u64 = count as u64;
        if let Some(min) = min
            && count_u64 < min
        {
            context.error(
                too_short,
                format!("at least {min} {noun}"),
                format!("{count} {noun}"),
            )?;
        }
        if let Some(max) = max
            && count_u64 > max
        {
            context.error(
                too_long,
                format!("at most {max} {noun}"),
                format!("{count} {noun}"),
            )?;
        }
        Ok(())
    }
}
