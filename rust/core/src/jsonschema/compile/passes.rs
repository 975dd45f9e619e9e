//! Passes over the finished node arena: they rewrite and annotate nodes so validation does
//! less work per visit, and change no outcome.
use crate::jsonschema::node::{Node, NodeId, types};

/// Points every use of a schema that is only a `$ref` at its target, saving a hop per use. Only
/// done without dynamic references, where entering the intermediate resource could matter.
pub(super) fn skip_pure_references(nodes: &mut [Node], root: NodeId) -> NodeId {
    const MAX_HOPS: usize = 64;
    let targets: Vec<NodeId> = (0..nodes.len() as NodeId)
        .map(|start| {
            let mut id = start;
            for _ in 0..MAX_HOPS {
                match nodes.get(id as usize) {
                    Some(Node::Schema(schema)) => match schema.pure_reference() {
                        Some(next) => id = next,
                        None => break,
                    },
                    _ => break,
                }
            }
            id
        })
        .collect();
    let resolve = |id: NodeId| targets.get(id as usize).copied().unwrap_or(id);
    for node in nodes.iter_mut() {
        if let Node::Schema(schema) = node {
            for id in schema.ids_mut() {
                *id = resolve(*id);
            }
        }
    }
    resolve(root)
}

/// Records, on each schema, facts validation would otherwise work out on every visit.
pub(super) fn mark_shortcuts(nodes: &mut [Node]) {
    let false_nodes: Vec<bool> = nodes
        .iter()
        .map(|node| matches!(node, Node::Bool(false)))
        .collect();
    for node in nodes.iter_mut() {
        if let Node::Schema(schema) = node {
            schema.types_only = schema.only_types();
            schema.leaf =
                schema.array.is_none() && schema.object.is_none() && schema.apply.is_none();
            if let Some(object) = &mut schema.object {
                object.forbid_additional = object
                    .additional
                    .is_some_and(|id| false_nodes.get(id as usize).copied().unwrap_or(false));
            }
            schema.plain_object = schema.types == types::OBJECT
                && schema.enumeration.is_none()
                && schema.constant.is_none()
                && schema.apply.is_none()
                && schema
                    .object
                    .as_ref()
                    .is_some_and(|object| object.is_plain());
        }
    }
}

/// Turns `anyOf` of branches that only check `type` (e.g. `string` or `null`) into one `type`
/// bit set on a schema that has none.
pub(super) fn merge_type_unions(nodes: &mut [Node]) {
    for index in 0..nodes.len() {
        let union = match nodes.get(index) {
            Some(Node::Schema(schema)) if schema.types == 0 => {
                let Some(apply) = &schema.apply else { continue };
                if apply.any_of.len() < 2 {
                    continue;
                }
                let mut union = 0u8;
                for id in &apply.any_of {
                    match nodes.get(*id as usize) {
                        Some(Node::Schema(branch)) if branch.only_types() => union |= branch.types,
                        _ => {
                            union = 0;
                            break;
                        }
                    }
                }
                union
            }
            _ => continue,
        };
        if union == 0 {
            continue;
        }
        if let Some(Node::Schema(schema)) = nodes.get_mut(index) {
            schema.types = union;
            if let Some(apply) = &mut schema.apply {
                apply.any_of.clear();
                if apply.is_empty() {
                    schema.apply = None;
                }
            }
        }
    }
}

/// True when a node matches a pattern with lookaround or backreferences.
pub(super) fn has_backtracking_pattern(nodes: &[Node]) -> bool {
    nodes.iter().any(|node| {
        let Node::Schema(schema) = node else {
            return false;
        };
        let string = schema
            .string
            .as_ref()
            .and_then(|keywords| keywords.pattern.as_ref())
            .is_some_and(|pattern| !pattern.is_linear());
        let object = schema.object.as_ref().is_some_and(|keywords| {
            keywords
                .pattern_properties
                .iter()
                .any(|(pattern, _)| !pattern.is_linear())
        });
        string || object
    })
}
