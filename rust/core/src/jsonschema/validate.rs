//! The validation walk: one generic function per node, run either in fast mode (stop at the first
//! failure, record nothing) or in collect mode (record every error and coercion).
//!
//! Error paths are built backwards: an error is recorded with an empty path and each enclosing
//! descent appends its step on the way out, so the valid path never touches a path at all.
use std::borrow::Cow;

use serde_json::Value;

use super::Coercion;
use super::annotations;
use super::describe::{describe, describe_branches, types_expected};
use super::node::{Applicators, Node, NodeId, Schema, types, types_accept};
use super::{array, number, object, string};
use crate::error::{ErrorCode, LineError, PathItem};
use crate::json::{Instance, Kind, json_eq};

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
pub(crate) struct Ctx<'a> {
    pub nodes: &'a [Node],
    pub resources: &'a [super::node::Resource],
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
}

impl<'a> Ctx<'a> {
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

    /// Validates `instance`, a child of the current value at `step`, against node `id`.
    #[allow(clippy::inline_always)] // Measured: the fast paths below are worth a call per child.
    #[inline(always)]
    pub(crate) fn child<I: Instance>(&mut self, step: Step<'_>, id: NodeId, instance: &I) -> bool {
        // A child whose schema checks only `type`, and that type matches, needs no descent: the
        // depth and call budgets are checked as the descent would. Inlined into the callers'
        // loops, this spares such children a call.
        if let Some(Node::Schema(schema)) = self.node(id)
            && self.depth < self.max_depth
            && self.calls < MAX_CALLS
        {
            if schema.types_only && types_accept(schema.types, instance.kind()) {
                return true;
            }
            // In fast mode a schema that never descends needs none of the descent's bookkeeping
            // (error paths, depth, dynamic scope) either.
            if schema.leaf && !self.collect {
                return validate_schema(self, schema, instance);
            }
            // Nor does a plain object schema, checked in one pass; it counts as a descent and a
            // schema evaluation for the budgets its own children see.
            if schema.plain_object
                && !self.collect
                && !self.track_scope
                && let Some(keywords) = &schema.object
            {
                self.depth += 1;
                self.calls += 1;
                let valid = object::validate_plain(self, keywords, instance);
                self.calls -= 1;
                self.depth -= 1;
                return valid;
            }
        }
        self.descend(step, id, instance)
    }

    /// [`child`](Self::child) by descent.
    #[inline(never)]
    fn descend<I: Instance>(&mut self, step: Step<'_>, id: NodeId, instance: &I) -> bool {
        let errors = self.errors.len();
        let coercions = self.coercions.len();
        self.depth += 1;
        let valid = if self.depth > self.max_depth
            && matches!(instance.kind(), Kind::Array | Kind::Object)
        {
            if self.collect {
                self.error(
                    ErrorCode::NestingTooDeep,
                    format!("at most {} levels of nesting", self.max_depth),
                    describe(instance),
                );
            }
            false
        } else {
            validate_node(self, id, instance)
        };
        self.depth -= 1;
        if self.collect {
            self.append_step(step, errors, coercions);
        }
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

/// Validates `instance` against node `id` in place (same path).
#[allow(clippy::inline_always)] // Measured: folding it into its callers saves a call per node.
#[inline(always)]
pub(crate) fn validate_node<I: Instance>(ctx: &mut Ctx<'_>, id: NodeId, instance: &I) -> bool {
    let schema = match ctx.node(id) {
        Some(Node::Schema(schema)) => schema,
        Some(Node::Bool(false)) => {
            if ctx.collect {
                ctx.error(
                    ErrorCode::FalseSchema,
                    "nothing (schema is false)",
                    describe(instance),
                );
            }
            return false;
        }
        Some(Node::Bool(true)) | None => return true,
    };
    if ctx.calls >= MAX_CALLS {
        if ctx.collect {
            ctx.error(
                ErrorCode::NestingTooDeep,
                format!("at most {MAX_CALLS} nested schema evaluations"),
                describe(instance),
            );
        }
        return false;
    }
    ctx.calls += 1;
    let pushed = ctx.track_scope && enter_scope(ctx, schema.resource);
    let valid = validate_schema(ctx, schema, instance);
    if pushed {
        ctx.scope.pop();
    }
    ctx.calls -= 1;
    valid
}

/// Pushes `resource` on the dynamic scope unless it is already innermost.
pub(crate) fn enter_scope(ctx: &mut Ctx<'_>, resource: u32) -> bool {
    if ctx.scope.last() == Some(&resource) {
        return false;
    }
    ctx.scope.push(resource);
    true
}

/// Reads a string as the first of integer, number, boolean that `set` allows.
fn coerce(text: &str, set: u8) -> Option<Value> {
    let text = text.trim();
    if set & types::BOOLEAN != 0 {
        match text {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    if set & (types::INTEGER | types::NUMBER) != 0 {
        if let Ok(integer) = text.parse::<i64>() {
            return Some(Value::from(integer));
        }
        if let Ok(integer) = text.parse::<u64>() {
            return Some(Value::from(integer));
        }
        let looks_numeric = text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        if looks_numeric
            && let Some(number) = text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
        {
            let value = Value::Number(number);
            let integral = <&Value as Instance>::kind(&&value) == Kind::Integer;
            if set & types::NUMBER != 0 || integral {
                return Some(value);
            }
        }
    }
    None
}

/// A value whose type the schema rejects: read it as another type in lenient mode, else fail.
#[inline(never)]
fn wrong_type<'a, I: Instance>(
    ctx: &mut Ctx<'a>,
    schema: &'a Schema,
    instance: &I,
    kind: Kind,
) -> bool {
    if ctx.lenient && kind == Kind::String && schema.types & types::COERCIBLE != 0 {
        let coerced = instance
            .as_str()
            .and_then(|text| coerce(&text, schema.types));
        if let Some(value) = coerced {
            let ok = validate_schema(ctx, schema, &&value);
            if ok {
                ctx.coerced = true;
                if ctx.collect && ctx.record {
                    ctx.coercions.push(Coercion {
                        path: Vec::new(),
                        value,
                    });
                }
            }
            return ok;
        }
    }
    if ctx.collect {
        ctx.error(
            ErrorCode::WrongType,
            types_expected(schema.types),
            describe(instance),
        );
    }
    false
}

/// `enum` and `const`.
#[inline(never)]
fn validate_values<I: Instance>(
    ctx: &mut Ctx<'_>,
    schema: &Schema,
    instance: &I,
    kind: Kind,
) -> bool {
    let mut valid = true;
    if let Some(enumeration) = &schema.enumeration {
        let found = match (&enumeration.strings, kind) {
            (Some(strings), Kind::String) => instance
                .as_str()
                .is_some_and(|text| strings.contains(&*text)),
            (Some(_), _) => false,
            // A string equals only a string: read the text once rather than per choice.
            (None, Kind::String) => instance.as_str().is_some_and(|text| {
                enumeration
                    .values
                    .iter()
                    .any(|value| value.as_str() == Some(&*text))
            }),
            (None, _) => enumeration
                .values
                .iter()
                .any(|value| json_eq(&value, instance)),
        };
        if !found {
            fail!(
                ctx,
                valid,
                ErrorCode::NotInEnum,
                super::describe::one_of(&enumeration.values),
                describe(instance)
            );
        }
    }
    if let Some(constant) = &schema.constant
        && !json_eq(&&**constant, instance)
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NotConst,
            super::describe::render(constant),
            describe(instance)
        );
    }
    valid
}

fn validate_schema<'a, I: Instance>(ctx: &mut Ctx<'a>, schema: &'a Schema, instance: &I) -> bool {
    let kind = instance.kind();
    let mut valid = true;
    if schema.types != 0 && !types_accept(schema.types, kind) {
        return wrong_type(ctx, schema, instance, kind);
    }
    if schema.types_only {
        return true;
    }
    if schema.enumeration.is_some() || schema.constant.is_some() {
        check!(ctx, valid, validate_values(ctx, schema, instance, kind));
    }
    match kind {
        Kind::String => {
            if let Some(keywords) = &schema.string {
                check!(ctx, valid, string::validate(ctx, keywords, instance));
            }
        }
        Kind::Integer | Kind::Number => {
            if let Some(keywords) = &schema.number {
                check!(ctx, valid, number::validate(ctx, keywords, instance));
            }
        }
        Kind::Array => {
            if let Some(keywords) = &schema.array {
                check!(ctx, valid, array::validate(ctx, keywords, instance));
            }
        }
        Kind::Object => {
            if let Some(keywords) = &schema.object {
                check!(ctx, valid, object::validate(ctx, keywords, instance));
            }
        }
        _ => {}
    }
    if let Some(apply) = &schema.apply {
        check!(ctx, valid, validate_applicators(ctx, apply, instance));
    }
    match kind {
        Kind::Object => {
            if let Some(unevaluated) = schema.object.as_ref().and_then(|o| o.unevaluated) {
                check!(
                    ctx,
                    valid,
                    annotations::unevaluated_properties(ctx, schema, unevaluated, instance)
                );
            }
        }
        Kind::Array => {
            if let Some(unevaluated) = schema.array.as_ref().and_then(|a| a.unevaluated) {
                check!(
                    ctx,
                    valid,
                    annotations::unevaluated_items(ctx, schema, unevaluated, instance)
                );
            }
        }
        _ => {}
    }
    valid
}

/// The `$dynamicRef` target given the current dynamic scope.
pub(crate) fn dynamic_target(ctx: &Ctx<'_>, reference: &super::node::DynamicRef) -> NodeId {
    if let Some(anchor) = &reference.anchor {
        for resource in &ctx.scope {
            let anchors = ctx
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

/// Index of the first branch that validates `instance` (fast mode).
pub(crate) fn first_match<I: Instance>(
    ctx: &mut Ctx<'_>,
    branches: &[NodeId],
    instance: &I,
) -> Option<usize> {
    let collect = ctx.collect;
    ctx.collect = false;
    let found = branches
        .iter()
        .position(|id| validate_node(ctx, *id, instance));
    ctx.collect = collect;
    found
}

/// Re-runs a branch that is known to match in collect mode, so its coercions are recorded.
fn record_branch<I: Instance>(ctx: &mut Ctx<'_>, id: NodeId, instance: &I) {
    if ctx.collect && ctx.record {
        validate_node(ctx, id, instance);
    }
}

/// The one branch worth reporting when none matched: the only one whose `type` admits the value.
fn best_branch<I: Instance>(ctx: &Ctx<'_>, branches: &[NodeId], instance: &I) -> Option<NodeId> {
    let kind = instance.kind();
    let mut candidates = branches.iter().filter(|id| match ctx.node(**id) {
        Some(Node::Schema(schema)) => schema.types != 0 && types_accept(schema.types, kind),
        _ => false,
    });
    let first = candidates.next()?;
    candidates.next().is_none().then_some(*first)
}

fn report_no_match<I: Instance>(ctx: &mut Ctx<'_>, branches: &[NodeId], instance: &I, one: bool) {
    let expected = describe_branches(ctx, branches, one);
    ctx.error(ErrorCode::NoMatch, expected, describe(instance));
    if !ctx.stop
        && let Some(best) = best_branch(ctx, branches, instance)
    {
        validate_node(ctx, best, instance);
    }
}

fn validate_applicators<'a, I: Instance>(
    ctx: &mut Ctx<'a>,
    apply: &'a Applicators,
    instance: &I,
) -> bool {
    let mut valid = true;
    if let Some(target) = apply.reference {
        check!(ctx, valid, validate_node(ctx, target, instance));
    }
    if let Some(reference) = &apply.dynamic_reference {
        let target = dynamic_target(ctx, reference);
        check!(ctx, valid, validate_node(ctx, target, instance));
    }
    for id in &apply.all_of {
        check!(ctx, valid, validate_node(ctx, *id, instance));
    }
    if !apply.any_of.is_empty() {
        if let Some(index) = first_match(ctx, &apply.any_of, instance) {
            if let Some(id) = apply.any_of.get(index) {
                record_branch(ctx, *id, instance);
            }
        } else {
            if !ctx.collect {
                return false;
            }
            report_no_match(ctx, &apply.any_of, instance, false);
            valid = false;
            if ctx.stop {
                return false;
            }
        }
    }
    if !apply.one_of.is_empty() {
        let mut matched: Option<usize> = None;
        let mut second: Option<usize> = None;
        for (index, id) in apply.one_of.iter().enumerate() {
            if ctx.quietly(|ctx| validate_node(ctx, *id, instance)) {
                if matched.is_none() {
                    matched = Some(index);
                } else {
                    second = Some(index);
                    break;
                }
            }
        }
        match (matched, second) {
            (Some(index), None) => {
                if let Some(id) = apply.one_of.get(index) {
                    record_branch(ctx, *id, instance);
                }
            }
            (None, _) => {
                if !ctx.collect {
                    return false;
                }
                report_no_match(ctx, &apply.one_of, instance, true);
                valid = false;
                if ctx.stop {
                    return false;
                }
            }
            (Some(first), Some(other)) => fail!(
                ctx,
                valid,
                ErrorCode::MultipleMatches,
                format!("exactly one of {} schemas to match", apply.one_of.len()),
                format!(
                    "{} matching schemas {first} and {other}",
                    describe(instance)
                )
            ),
        }
    }
    if let Some(not) = apply.not
        && ctx.quietly(|ctx| validate_node(ctx, not, instance))
    {
        fail!(
            ctx,
            valid,
            ErrorCode::NotAllowed,
            "a value not matching the `not` schema",
            describe(instance)
        );
    }
    if let (Some(condition), true) = (apply.if_, apply.then_.is_some() || apply.else_.is_some()) {
        let branch = if ctx.quietly(|ctx| validate_node(ctx, condition, instance)) {
            apply.then_
        } else {
            apply.else_
        };
        if let Some(branch) = branch {
            check!(ctx, valid, validate_node(ctx, branch, instance));
        }
    }
    valid
}
