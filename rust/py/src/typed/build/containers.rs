//! Containers: lists, sets and tuples read item by item, dicts entry by entry, and the size
//! bounds of arrays and objects.
use ferrotool_core::error::{ErrorCode, PathItem};
use ferrotool_core::ir::Container;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};

use super::{Built, Context, Engine, Items, describe, is_container};
use crate::typed::compile::Node;
use crate::typed::outcome::Fatal;
use crate::typed::source::{Head, Source};

impl Engine {
    /// A list, set or frozen set of `items`, with its size `bounds` (and, for sets, no
    /// duplicates).
    #[inline]
    pub(super) fn list_value<'v, 'py, S: Source<'py>>(
        &'v self,
        items: &'v Node,
        container: Container,
        (min, max): (Option<u64>, Option<u64>),
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        let mark = context.errors.len();
        let Some((base, count)) = Self::array_items(source, context, &mut |source, context, _| {
            self.child(items, source, context)
        })?
        else {
            return Ok(None);
        };
        // The container is built straight from the item values, unless an item failed.
        let built = if context.errors.len() > mark {
            None
        } else {
            let built = context.items(py, base);
            Some(match container {
                Container::List => PyList::new(py, built).map(Bound::into_any),
                Container::Tuple => PyTuple::new(py, built).map(Bound::into_any),
                Container::Set => PySet::new(py, built).map(Bound::into_any),
                Container::Frozenset => PyFrozenSet::new(py, built).map(Bound::into_any),
            })
        };
        context.values.truncate(base);
        Self::check_size(
            context,
            count,
            min,
            max,
            ErrorCode::ArrayTooShort,
            ErrorCode::ArrayTooLong,
            "items",
        )?;
        let value = match built {
            Some(value) if context.errors.len() == mark => value?,
            _ => return Ok(None),
        };
        if container.unique() && value.len()? != count {
            return context.error(
                ErrorCode::DuplicateItems,
                "unique items",
                format!("array of {count} items with duplicates"),
            );
        }
        Ok(Some(value))
    }

    /// A tuple of exactly the positions `items`.
    #[inline]
    pub(super) fn tuple_value<'v, 'py, S: Source<'py>>(
        &'v self,
        items: &'v [Node],
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        let mark = context.errors.len();
        let Some((base, count)) =
            Self::array_items(source, context, &mut |source, context, index| {
                if let Some(node) = items.get(index) {
                    return self.value(node, source, context);
                }
                source.skip()?;
                let expected = format!("exactly {} items", items.len());
                context.error(ErrorCode::UnexpectedItem, expected, "an extra item")
            })?
        else {
            return Ok(None);
        };
        let built = if context.errors.len() > mark {
            None
        } else {
            Some(PyTuple::new(py, context.items(py, base)))
        };
        context.values.truncate(base);
        if count < items.len() {
            context.error(
                ErrorCode::ArrayTooShort,
                format!("exactly {} items", items.len()),
                format!("{count} items"),
            )?;
        }
        match built {
            Some(value) if context.errors.len() == mark => Ok(Some(value?.into_any())),
            _ => Ok(None),
        }
    }

    /// A dict of string keys to `values`, with its size `bounds`.
    #[inline]
    pub(super) fn dict_value<'v, 'py, S: Source<'py>>(
        &'v self,
        values: &'v Node,
        (min, max): (Option<u64>, Option<u64>),
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        let head = source.head()?;
        if !matches!(head, Head::Object) {
            return wrong_kind!(source, context, head, ErrorCode::WrongType, "object");
        }
        context.enter()?;
        let mark = context.errors.len();
        let dict = PyDict::new(py);
        let mut count = 0usize;
        source.entries(&mut |key| PyString::new(py, key), &mut |source, key| {
            count += 1;
            let before = context.errors.len();
            let item = self.value(values, source, context);
            context.under(before, || PathItem::Key(key.to_string_lossy().into()));
            if let Some(item) = item? {
                dict.set_item(key, item)?;
            }
            Ok(())
        })?;
        context.leave();
        Self::check_size(
            context,
            count,
            min,
            max,
            ErrorCode::TooFewProperties,
            ErrorCode::TooManyProperties,
            "properties",
        )?;
        if context.errors.len() > mark {
            return Ok(None);
        }
        Ok(Some(dict.into_any()))
    }

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
