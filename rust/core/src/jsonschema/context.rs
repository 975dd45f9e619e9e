//! The state of one validation walk, and the macros every keyword uses to record a failure.
//!
//! This module is a leaf of the validator: keywords import it, and it imports none of them. The
//! walk's descent into a subschema ([`Context::child`], [`Context::apply`]) is implemented beside
//! the dispatcher in `validate.rs`, so a keyword reaches the dispatcher only through the context.
use std::borrow::Cow;

use serde_json::Value;

use super::node::{DynamicRef, Node, NodeId, Resource};
use crate::error::{ErrorCode, LineError, Path, PathItem};
use crate::pattern::Budget;

/// A string read as another type in lenient mode: where, and the value it became.
#[derive(Debug, Clone, PartialEq)]
pub struct Coercion {
    /// Path of the string in the instance.
    pub path: Path,
    /// The number or boolean it was read as.
    pub value: Value,
}

/// Nested node evaluations allowed before the walk gives up with `nesting_too_deep`. Compilation
/// rejects reference cycles that stay on one value, so this only bounds the native stack against
/// a very large `max_depth` or a cycle through `$dynamicRef`.
pub(crate) const MAX_CALLS: u32 = 1024;

/// One step into the instance, borrowed until it is needed for an error path.
#[derive(Clone, Copy)]
pub(crate) enum Step<'k> {
    Key(&'k str),
    Index(usize),
}

impl Step<'_> {
    fn to_item(self) -> PathItem {
        match self {
            Step::Key(key) => PathItem::Key(key.into()),
            Step::Index(index) => PathItem::Index(index),
        }
    }
}

/// Per-call state; nothing in it allocates unless an error, coercion or dynamic scope is recorded.
#[allow(clippy::struct_excessive_bools)] // Independent flags read on hot paths; an enum would not help.
pub(crate) struct Context<'a> {
    pub nodes: &'a [Node],
    pub resources: &'a [Resource],
    pub lenient: bool,
    pub max_depth: u32,
    pub max_errors: usize,
    /// Collect mode: record errors instead of stopping at the first.
    pub collect: bool,
    /// Record coercions (collect mode of `validate_lenient`).
    pub record: bool,
    /// Set when some string was read as another type.
    pub coerced: bool,
    /// Set when `max_errors` is reached: unwind without further checks.
    pub stop: bool,
    pub track_scope: bool,
    pub depth: u32,
    pub calls: u32,
    pub scope: Vec<u32>,
    pub errors: Vec<LineError>,
    pub coercions: Vec<Coercion>,
    /// The validation's backtracking budget, spent only by patterns with lookaround or
    /// backreferences (one for the whole validation: see [`Budget::next_walk`]).
    pub budget: Budget,
}

impl<'a> Context<'a> {
    /// Records an error at the current value (its path is completed on the way out).
    pub(crate) fn error(
        &mut self,
        code: ErrorCode,
        expected: impl Into<Cow<'static, str>>,
        found: impl Into<Cow<'static, str>>,
    ) {
        if self.errors.len() < self.max_errors {
            self.errors
                .push(LineError::new(code, Vec::new(), expected, found));
        }
        if self.errors.len() >= self.max_errors {
            self.stop = true;
        }
    }

    /// Records an error at the child `step` of the current value.
    pub(crate) fn error_at(
        &mut self,
        step: Step<'_>,
        code: ErrorCode,
        expected: impl Into<Cow<'static, str>>,
        found: impl Into<Cow<'static, str>>,
    ) {
        let before = self.errors.len();
        self.error(code, expected, found);
        if self.errors.len() > before
            && let Some(error) = self.errors.last_mut()
        {
            error.path.push(step.to_item());
        }
    }

    pub(crate) fn node(&self, id: NodeId) -> Option<&'a Node> {
        self.nodes.get(id as usize)
    }

    /// Runs `check` in fast mode, whatever the current mode.
    pub(crate) fn quietly(&mut self, check: impl FnOnce(&mut Self) -> bool) -> bool {
        let collect = self.collect;
        self.collect = false;
        let valid = check(self);
        self.collect = collect;
        valid
    }

    /// Adds `step` to the (reversed) paths of the errors and coercions recorded since the marks.
    pub(crate) fn append_step(&mut self, step: Step<'_>, errors: usize, coercions: usize) {
        for error in self.errors.get_mut(errors..).unwrap_or_default() {
            error.path.push(step.to_item());
        }
        for coercion in self.coercions.get_mut(coercions..).unwrap_or_default() {
            coercion.path.push(step.to_item());
        }
    }

    /// Pushes `resource` on the dynamic scope unless it is already innermost.
    pub(crate) fn enter_scope(&mut self, resource: u32) -> bool {
        if self.scope.last() == Some(&resource) {
            return false;
        }
        self.scope.push(resource);
        true
    }

    /// The `$dynamicRef` target given the current dynamic scope.
    pub(crate) fn dynamic_target(&self, reference: &DynamicRef) -> NodeId {
        if let Some(anchor) = &reference.anchor {
            for resource in &self.scope {
                let anchors = self
                    .resources
                    .get(*resource as usize)
                    .map(|r| &r.dynamic_anchors);
                if let Some((_, id)) =
                    anchors.and_then(|list| list.iter().find(|(name, _)| name == anchor))
                {
                    return *id;
                }
            }
        }
        reference.target
    }
}

/// Marks a failed check: returns `false` at once in fast mode, otherwise records and goes on.
macro_rules! check {
    ($ctx:ident, $valid:ident, $ok:expr) => {
        if !$ok {
            if !$ctx.collect || $ctx.stop {
                return false;
            }
            $valid = false;
        }
    };
}
pub(crate) use check;

/// Records an error built lazily (only in collect mode) and marks the check failed.
macro_rules! fail {
    ($ctx:ident, $valid:ident, $code:expr, $expected:expr, $found:expr) => {{
        if !$ctx.collect {
            return false;
        }
        $ctx.error($code, $expected, $found);
        $valid = false;
        if $ctx.stop {
            return false;
        }
    }};
}
pub(crate) use fail;

/// Like `fail!`, for an error about the child `step` of the current value.
macro_rules! fail_at {
    ($ctx:ident, $valid:ident, $step:expr, $code:expr, $expected:expr, $found:expr) => {{
        if !$ctx.collect {
            return false;
        }
        $ctx.error_at($step, $code, $expected, $found);
        $valid = false;
        if $ctx.stop {
            return false;
        }
    }};
}
pub(crate) use fail_at;
