//! Unions: the variants a value's shape allows, each tried in turn on a captured copy when
//! more than one does.
use ferrotool_core::error::ErrorCode;

use super::{Built, Context, Engine, describe, is_container};
use crate::typed::compile::{Node, mask};
use crate::typed::outcome::Fatal;
use crate::typed::source::{Shape, Source};

const fn shape_bit(shape: Shape) -> u8 {
    match shape {
        Shape::Null => mask::NULL,
        Shape::Bool => mask::BOOL,
        Shape::Number => mask::NUMBER,
        Shape::String => mask::STRING,
        Shape::Array => mask::ARRAY,
        Shape::Object => mask::OBJECT,
        Shape::Other => 0,
    }
}

impl Engine {
    pub(super) fn union<'v, 'py, S: Source<'py>>(
        &'v self,
        variants: &'v [(u8, Node)],
        expected: &str,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        let shape = source.shape()?;
        // Leniently, a string may also become a number or a boolean.
        let bit = if context.lenient && shape == Shape::String {
            mask::STRING | mask::NUMBER | mask::BOOL
        } else {
            shape_bit(shape)
        };
        let mut candidates = variants
            .iter()
            .filter(|(variant_mask, _)| variant_mask & bit != 0);
        let first = candidates.next();
        let second = candidates.next();
        match (first, second) {
            (Some((_, only)), None) => return self.value(only, source, context),
            (None, _) => {
                let head = source.head()?;
                return wrong_kind!(source, context, head, ErrorCode::NoMatch, expected);
            }
            _ => {}
        }
        let captured = source.capture()?;
        let saved_max = context.max_errors;
        for (variant_mask, variant) in variants {
            if variant_mask & bit == 0 {
                continue;
            }
            let mark = context.errors.len();
            // A trial stops at its first error; its errors are discarded.
            context.max_errors = mark + 1;
            let mut tree = captured.tree(py);
            let depth = context.depth;
            let outcome = self.value(variant, &mut tree, context);
            context.depth = depth;
            context.max_errors = saved_max;
            let failed = context.errors.len() > mark;
            context.errors.truncate(mark);
            match outcome {
                Ok(Some(value)) if !failed => return Ok(Some(value)),
                Ok(_) | Err(Fatal::Stop) => {}
                Err(other) => return Err(other),
            }
        }
        let found = describe(&captured.tree(py).head()?);
        context.error(ErrorCode::NoMatch, expected, found)
    }
}
