//! The validation walk: one generic function per node, run either in fast mode (stop at the first
//! failure, record nothing) or in collect mode (record every error and coercion).
//!
//! Error paths are built backwards: an error is recorded with an empty path and each enclosing
//! descent appends its step on the way out, so the valid path never touches a path at all.
//!
//! This is the hub: it dispatches to the keyword groups in `keywords/`, which come back to it
//! only through [`Context::child`] and [`Context::apply`], implemented here.
use serde_json::Value;

use super::context::{Coercion, Context, MAX_CALLS, Step, check, fail};
use super::describe::{describe, describe_branches, one_of, render, types_expected};
use super::keywords::{annotations, array, number, object, string};
use super::node::{Applicators, Node, NodeId, Schema, types, types_accept};
use crate::error::ErrorCode;
use crate::json::{Instance, Kind, json_eq};

impl Context<'_> {
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

    /// Validates `instance` against node `id` in place (same value, same path).
    pub(crate) fn apply<I: Instance>(&mut self, id: NodeId, instance: &I) -> bool {
        validate_node(self, id, instance)
    }
}

/// Validates `instance` against node `id` in place (same path).
#[allow(clippy::inline_always)] // Measured: folding it into its callers saves a call per node.
#[inline(always)]
pub(crate) fn validate_node<I: Instance>(ctx: &mut Context<'_>, id: NodeId, instance: &I) -> bool {
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
    let pushed = ctx.track_scope && ctx.enter_scope(schema.resource);
    let valid = validate_schema(ctx, schema, instance);
    if pushed {
        ctx.scope.pop();
    }
    ctx.calls -= 1;
    valid
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
    ctx: &mut Context<'a>,
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
    ctx: &mut Context<'_>,
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
                one_of(&enumeration.values),
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
            render(constant),
            describe(instance)
        );
    }
    valid
}

fn validate_schema<'a, I: Instance>(
    ctx: &mut Context<'a>,
    schema: &'a Schema,
    instance: &I,
) -> bool {
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

/// Index of the first branch that validates `instance` (fast mode).
fn first_match<I: Instance>(
    ctx: &mut Context<'_>,
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
fn record_branch<I: Instance>(ctx: &mut Context<'_>, id: NodeId, instance: &I) {
    if ctx.collect && ctx.record {
        validate_node(ctx, id, instance);
    }
}

/// The one branch worth reporting when none matched: the only one whose `type` admits the value.
fn best_branch<I: Instance>(
    ctx: &Context<'_>,
    branches: &[NodeId],
    instance: &I,
) -> Option<NodeId> {
    let kind = instance.kind();
    let mut candidates = branches.iter().filter(|id| match ctx.node(**id) {
        Some(Node::Schema(schema)) => schema.types != 0 && types_accept(schema.types, kind),
        _ => false,
    });
    let first = candidates.next()?;
    candidates.next().is_none().then_some(*first)
}

fn report_no_match<I: Instance>(
    ctx: &mut Context<'_>,
    branches: &[NodeId],
    instance: &I,
    one: bool,
) {
    let expected = describe_branches(ctx.nodes, branches, one);
    ctx.error(ErrorCode::NoMatch, expected, describe(instance));
    if !ctx.stop
        && let Some(best) = best_branch(ctx, branches, instance)
    {
        validate_node(ctx, best, instance);
    }
}

fn validate_applicators<'a, I: Instance>(
    ctx: &mut Context<'a>,
    apply: &'a Applicators,
    instance: &I,
) -> bool {
    let mut valid = true;
    if let Some(target) = apply.reference {
        check!(ctx, valid, validate_node(ctx, target, instance));
    }
    if let Some(reference) = &apply.dynamic_reference {
        let target = ctx.dynamic_target(reference);
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
