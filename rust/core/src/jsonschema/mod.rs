//! A compiled JSON Schema draft 2020-12 validator, generic over [`Instance`] so the same compiled
//! schema checks `serde_json` values and foreign (Python) values in place.
//!
//! Compilation turns the schema into an arena of nodes with every keyword pre-parsed and every
//! `$ref` resolved to an index; validation walks that arena without allocating on success.
//!
//! Error conventions: each [`LineError`] carries the path of the offending value. A missing
//! required property is reported at the object's path with `expected` naming the property
//! (`property "city"`); an unexpected or unevaluated property at the property's own path. When no
//! branch of `anyOf`/`oneOf` matches, one `no_match` error is reported at the value, followed by
//! the errors of the only branch whose `type` admits the value, if there is exactly one.
mod compile;
mod context;
mod describe;
mod keywords;
mod meta;
mod node;
mod options;
mod uri;
mod validate;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::error::LineError;
use crate::json::Instance;
use crate::pattern::Budget;
use compile::Compiled;
pub use context::Coercion;
use context::Context;
pub use options::{Draft, Options, SchemaError};
use validate::validate_node;

/// A compiled schema, cheap to clone and share between threads.
#[derive(Clone)]
pub struct SchemaValidator {
    compiled: Arc<Compiled>,
    options: Options,
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("nodes", &self.compiled.nodes.len())
            .field("options", &self.options)
            .finish()
    }
}

impl SchemaValidator {
    /// Compiles `schema`; every `$ref` must resolve inside it (or to the 2020-12 metaschemas).
    pub fn compile(schema: &Value, options: Options) -> Result<Self, SchemaError> {
        Self::compile_with_resources(schema, options, &[])
    }

    /// Compiles `schema` with other documents available to `$ref` by absolute URI.
    pub fn compile_with_resources(
        schema: &Value,
        options: Options,
        resources: &[(String, Value)],
    ) -> Result<Self, SchemaError> {
        let compiled = compile::compile(schema, &options, resources)?;
        Ok(Self {
            compiled: Arc::new(compiled),
            options,
        })
    }

    /// The options the validator was compiled with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    fn context(&self, collect: bool, budget: Budget) -> Context<'_> {
        let limits = &self.options.limits;
        Context {
            nodes: &self.compiled.nodes,
            resources: &self.compiled.resources,
            lenient: self.options.lenient,
            max_depth: u32::from(limits.max_depth),
            max_errors: limits.max_errors.max(1),
            collect,
            record: false,
            coerced: false,
            stop: false,
            track_scope: self.compiled.dynamic,
            depth: 0,
            calls: 0,
            scope: Vec::new(),
            errors: Vec::new(),
            coercions: Vec::new(),
            budget,
        }
    }

    /// Runs one walk with `budget` and returns its context.
    fn run<'s, I: Instance>(
        &'s self,
        instance: &I,
        collect: bool,
        record: bool,
        budget: Budget,
    ) -> (bool, Context<'s>) {
        let mut ctx = self.context(collect, budget);
        ctx.record = record;
        let valid = validate_node(&mut ctx, self.compiled.root, instance);
        for error in &mut ctx.errors {
            error.path.reverse();
        }
        for coercion in &mut ctx.coercions {
            coercion.path.reverse();
        }
        (valid, ctx)
    }

    /// True when `instance` is valid; stops at the first failure and allocates nothing on success.
    pub fn is_valid<I: Instance>(&self, instance: &I) -> bool {
        // No errors or coercions are recorded, so there is no context to hand back.
        let mut ctx = self.context(false, Budget::new());
        validate_node(&mut ctx, self.compiled.root, instance)
    }

    /// True when the schema holds a pattern with lookaround or backreferences, whose matches
    /// backtrack (within the validation's budget) rather than run in linear time.
    pub fn has_backtracking_pattern(&self) -> bool {
        self.compiled.backtracking
    }

    /// Every error (up to `limits.max_errors`), or `Ok` when `instance` is valid.
    pub fn validate<I: Instance>(&self, instance: &I) -> Result<(), Vec<LineError>> {
        // The quick walk first (allocation-free on success), then the collecting walk, one
        // backtracking budget for both.
        let mut fast = self.context(false, Budget::new());
        if validate_node(&mut fast, self.compiled.root, instance) {
            return Ok(());
        }
        let (_, ctx) = self.run(instance, true, false, fast.budget.next_walk());
        Err(non_empty(ctx.errors, instance))
    }

    /// Like [`validate`](Self::validate), also returning every string read as a number, integer
    /// or boolean (only ever non-empty when `options.lenient` is set).
    pub fn validate_lenient<I: Instance>(
        &self,
        instance: &I,
    ) -> Result<Vec<Coercion>, Vec<LineError>> {
        let (valid, fast) = self.run(instance, false, false, Budget::new());
        if valid && !fast.coerced {
            return Ok(Vec::new());
        }
        let (_, ctx) = self.run(instance, true, true, fast.budget.next_walk());
        if valid {
            Ok(ctx.coercions)
        } else {
            Err(non_empty(ctx.errors, instance))
        }
    }
}

/// An invalid instance always gets at least one error, even if the failing check was one that
/// only runs quietly (e.g. the evaluation budget inside a `not`).
fn non_empty<I: Instance>(mut errors: Vec<LineError>, instance: &I) -> Vec<LineError> {
    if errors.is_empty() {
        errors.push(LineError::new(
            crate::error::ErrorCode::InvalidValue,
            Vec::new(),
            "a value valid against the schema",
            describe::describe(instance),
        ));
    }
    errors
}

#[cfg(test)]
mod tests;
