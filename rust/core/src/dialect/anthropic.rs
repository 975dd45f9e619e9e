//! Anthropic strict tool use (`strict: true` on a tool): the strict rules with `required` kept
//! as it is, a type list split into an `anyOf`, fewer keywords than OpenAI's (no numeric
//! bounds, `minItems` of 0 or 1 only), simpler patterns, and no recursion.
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::node::{Node, resolve, subschemas};
use super::strict::{Site, Strictness, complex_pattern};
use super::walk::{Build, Parts, Rules, Treatment, Walker};

const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The rules of [`Dialect::AnthropicStrict`](super::Dialect::AnthropicStrict).
pub(super) struct Anthropic;

impl Rules for Anthropic {
    fn label(&self) -> &'static str {
        "Anthropic strict mode"
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn always_removed(&self, key: &str) -> bool {
        matches!(
            key,
            "examples" | "example" | "deprecated" | "readOnly" | "writeOnly"
        )
    }

    fn treat(&self, key: &str, value: &Value) -> Treatment {
        match key {
            "minItems" if value.as_u64().is_none_or(|n| n > 1) => Treatment::RemoveSaying(
                "removed `minItems`: Anthropic strict mode only supports 0 or 1",
            ),
            "title" | "description" | "default" | "minItems" => Treatment::Keep,
            "unevaluatedProperties" | "patternProperties" => {
                Treatment::RemoveUnfaithful("a free-form object")
            }
            "unevaluatedItems" if *value != Value::Bool(false) => {
                Treatment::RemoveUnfaithful("extra array items")
            }
            _ => Treatment::Remove,
        }
    }

    fn keeps_format(&self, value: &Value) -> bool {
        ANTHROPIC_FORMATS.contains(&value.as_str().unwrap_or_default())
    }

    fn keeps_pattern(&self, pattern: Option<&str>) -> bool {
        pattern.is_some_and(|pattern| !complex_pattern(pattern, true))
    }

    fn enumeration(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>) {
        walker.strict_enumeration(base, value, build.out);
    }

    fn constant(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>) {
        walker.strict_constant(base, value, build.out);
    }

    fn recursion<'a>(
        &self,
        walker: &mut Walker<'a>,
        node: &mut Node<'a>,
        _target: &Value,
        site: &str,
        reference: &str,
        depth: usize,
    ) -> Option<Value> {
        walker.strict_recursion(node, site, reference, depth)
    }

    /// Anthropic supports no recursion: the references that reach themselves are found first.
    fn prepare(&self, walker: &mut Walker<'_>, schema: &Value) {
        walker.cyclic = cyclic_sites(schema);
    }

    fn finish(
        &self,
        walker: &mut Walker<'_>,
        out: Map<String, Value>,
        types: Option<&[String]>,
        parts: Parts,
        pointer: &str,
        root: bool,
    ) -> Value {
        let strictness = Strictness {
            all_required: false,
            split_types: true,
        };
        walker.finish_strict(out, types, parts, Site { pointer, root }, &strictness)
    }
}

/// The pointers of the schemas holding a `$ref` that (transitively) reaches itself: a target's
/// expansion holds every reference located inside the target.
fn cyclic_sites(root: &Value) -> HashSet<String> {
    let mut sites: Vec<(String, Option<String>)> = Vec::new();
    let mut stack = vec![(root, String::new())];
    while let Some((schema, pointer)) = stack.pop() {
        let Value::Object(map) = schema else {
            continue;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = resolve(root, reference).map(|(_, target)| target);
            sites.push((pointer.clone(), target));
        }
        stack.extend(subschemas(map, &pointer));
    }
    let inside = |site: &str, target: &str| {
        target.is_empty()
            || site == target
            || site
                .strip_prefix(target)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let edges: Vec<Vec<usize>> = sites
        .iter()
        .map(|(_, target)| {
            target.as_deref().map_or_else(Vec::new, |target| {
                sites
                    .iter()
                    .enumerate()
                    .filter(|(_, (site, _))| inside(site, target))
                    .map(|(j, _)| j)
                    .collect()
            })
        })
        .collect();
    let mut cyclic = HashSet::new();
    for start in 0..sites.len() {
        let mut seen = vec![false; sites.len()];
        let mut todo = edges[start].clone();
        while let Some(next) = todo.pop() {
            if next == start {
                cyclic.insert(sites[start].0.clone());
                break;
            }
            if !seen[next] {
                seen[next] = true;
                todo.extend(edges[next].iter().copied());
            }
        }
    }
    cyclic
}
