//! `unevaluatedProperties` and `unevaluatedItems`: which properties and items the successful
//! subschemas of a node evaluated, found by walking them again only for schemas that ask.
use crate::error::ErrorCode;
use crate::json::Instance;
use crate::jsonschema::context::{Context, MAX_CALLS, Step, check, fail_at};
use crate::jsonschema::describe::{describe, property_text};
use crate::jsonschema::node::{Node, NodeId, Schema};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Properties,
    Items,
}

/// Validates the properties no subschema of `schema` evaluated against `unevaluated`.
pub(crate) fn unevaluated_properties<I: Instance>(
    ctx: &mut Context<'_>,
    schema: &Schema,
    unevaluated: NodeId,
    instance: &I,
) -> bool {
    let count = instance.object_len().unwrap_or(0);
    if count == 0 {
        return true;
    }
    let mut marks = vec![false; count];
    collect_schema(ctx, schema, instance, &mut marks, Target::Properties, false);
    let forbid = matches!(ctx.node(unevaluated), Some(Node::Bool(false)));
    let mut valid = true;
    for ((key, value), seen) in instance.object_items().zip(marks) {
        if seen {
            continue;
        }
        let key = key.as_ref();
        if forbid {
            fail_at!(
                ctx,
                valid,
                Step::Key(key),
                ErrorCode::UnevaluatedProperty,
                "no property not covered by the schema",
                property_text(key)
            );
        } else {
            check!(ctx, valid, ctx.child(Step::Key(key), unevaluated, &value));
        }
    }
    valid
}

/// Validates the items no subschema of `schema` evaluated against `unevaluated`.
pub(crate) fn unevaluated_items<I: Instance>(
    ctx: &mut Context<'_>,
    schema: &Schema,
    unevaluated: NodeId,
    instance: &I,
) -> bool {
    let count = instance.array_len().unwrap_or(0);
    if count == 0 {
        return true;
    }
    let mut marks = vec![false; count];
    collect_schema(ctx, schema, instance, &mut marks, Target::Items, false);
    let forbid = matches!(ctx.node(unevaluated), Some(Node::Bool(false)));
    let mut valid = true;
    for (index, (item, seen)) in instance.array_items().zip(marks).enumerate() {
        if seen {
            continue;
        }
        if forbid {
            fail_at!(
                ctx,
                valid,
                Step::Index(index),
                ErrorCode::UnevaluatedItem,
                "no item not covered by the schema",
                describe(&item)
            );
        } else {
            check!(
                ctx,
                valid,
                ctx.child(Step::Index(index), unevaluated, &item)
            );
        }
    }
    valid
}

fn is_valid<I: Instance>(ctx: &mut Context<'_>, id: NodeId, instance: &I) -> bool {
    ctx.quietly(|ctx| ctx.apply(id, instance))
}

fn collect_node<I: Instance>(
    ctx: &mut Context<'_>,
    id: NodeId,
    instance: &I,
    marks: &mut [bool],
    target: Target,
) {
    let Some(Node::Schema(schema)) = ctx.node(id) else {
        return;
    };
    if ctx.calls >= MAX_CALLS {
        return;
    }
    ctx.calls += 1;
    let pushed = ctx.track_scope && ctx.enter_scope(schema.resource);
    collect_schema(ctx, schema, instance, marks, target, true);
    if pushed {
        ctx.scope.pop();
    }
    ctx.calls -= 1;
}

/// Marks what `schema` (known to be valid for `instance`) evaluated. `nested` is false for the
/// schema that owns the `unevaluated*` keyword being checked.
fn collect_schema<I: Instance>(
    ctx: &mut Context<'_>,
    schema: &Schema,
    instance: &I,
    marks: &mut [bool],
    target: Target,
    nested: bool,
) {
    match target {
        Target::Properties => {
            if let Some(object) = &schema.object {
                if (nested && object.unevaluated.is_some()) || object.additional.is_some() {
                    marks.fill(true);
                    return;
                }
                for ((key, _), mark) in instance.object_items().zip(marks.iter_mut()) {
                    let key = key.as_ref();
                    if object.property(key).is_some()
                        || object.pattern_properties.iter().any(|(pattern, _)| {
                            pattern.is_match_within(key, &mut ctx.budget) == Ok(true)
                        })
                    {
                        *mark = true;
                    }
                }
                for (name, id) in &object.dependent_schemas {
                    if instance.object_get(name).is_some() {
                        collect_node(ctx, *id, instance, marks, target);
                    }
                }
            }
        }
        Target::Items => {
            if let Some(array) = &schema.array {
                if (nested && array.unevaluated.is_some()) || array.items.is_some() {
                    marks.fill(true);
                    return;
                }
                for mark in marks.iter_mut().take(array.prefix_items.len()) {
                    *mark = true;
                }
                if let Some(contains) = array.contains {
                    for (index, item) in instance.array_items().enumerate() {
                        if is_valid(ctx, contains, &item)
                            && let Some(mark) = marks.get_mut(index)
                        {
                            *mark = true;
                        }
                    }
                }
            }
        }
    }
    let Some(apply) = &schema.apply else { return };
    if let Some(id) = apply.reference {
        collect_node(ctx, id, instance, marks, target);
    }
    if let Some(reference) = &apply.dynamic_reference {
        let id = ctx.dynamic_target(reference);
        collect_node(ctx, id, instance, marks, target);
    }
    for id in &apply.all_of {
        collect_node(ctx, *id, instance, marks, target);
    }
    for id in apply.any_of.iter().chain(&apply.one_of) {
        if is_valid(ctx, *id, instance) {
            collect_node(ctx, *id, instance, marks, target);
        }
    }
    if let Some(condition) = apply.if_ {
        if is_valid(ctx, condition, instance) {
            collect_node(ctx, condition, instance, marks, target);
            if let Some(id) = apply.then_ {
                collect_node(ctx, id, instance, marks, target);
            }
        } else if let Some(id) = apply.else_ {
            collect_node(ctx, id, instance, marks, target);
        }
    }
}
