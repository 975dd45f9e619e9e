//! Short renderings of values and schema expectations for error messages.
use serde_json::Value;

use super::node::{Node, NodeId, types};
use crate::error::describe_str;
use crate::json::{Instance, Kind, Number};

/// Longest rendering of a schema value (`const`, `enum` member) before it is cut.
const MAX_RENDER: usize = 40;
/// `enum` members listed before `...`.
const MAX_CHOICES: usize = 8;

/// `property "name"`, bounded like other renderings.
pub(crate) fn property_text(name: &str) -> String {
    describe_str(name).replacen("string", "property", 1)
}

/// `number 5`, `string "abc"`, `array of 3 items`, `object`, ...
pub(crate) fn describe<I: Instance>(instance: &I) -> String {
    match instance.kind() {
        Kind::Null => "null".to_owned(),
        Kind::Bool => match instance.as_bool() {
            Some(true) => "boolean true".to_owned(),
            _ => "boolean false".to_owned(),
        },
        Kind::Integer | Kind::Number => match instance.as_number() {
            Some(number) => format!("number {}", number_text(number)),
            None => "number".to_owned(),
        },
        Kind::String => instance
            .as_str()
            .map_or_else(|| "string".to_owned(), |s| describe_str(&s)),
        Kind::Array => match instance.array_len() {
            Some(1) => "array of 1 item".to_owned(),
            Some(count) => format!("array of {count} items"),
            None => "array".to_owned(),
        },
        Kind::Object => "object".to_owned(),
        Kind::Other => "a non-JSON value".to_owned(),
    }
}

/// A number as JSON would print it.
pub(crate) fn number_text(number: Number) -> String {
    match number {
        Number::I64(value) => value.to_string(),
        Number::U64(value) => value.to_string(),
        Number::F64(value) => {
            serde_json::Number::from_f64(value).map_or_else(|| value.to_string(), |n| n.to_string())
        }
    }
}

/// `integer`, `string or null`, `integer, string or null`.
pub(crate) fn types_expected(set: u8) -> String {
    let names: Vec<&str> = [
        (types::INTEGER, "integer"),
        (types::NUMBER, "number"),
        (types::STRING, "string"),
        (types::BOOLEAN, "boolean"),
        (types::OBJECT, "object"),
        (types::ARRAY, "array"),
        (types::NULL, "null"),
    ]
    .iter()
    .filter(|(bit, _)| set & bit != 0)
    .map(|(_, name)| *name)
    .collect();
    join_or(&names)
}

fn join_or(names: &[&str]) -> String {
    match names {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Compact JSON for a schema value, cut after a few dozen characters.
pub(crate) fn render(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= MAX_RENDER {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_RENDER).collect();
    cut.push_str("...");
    cut
}

/// `one of "c", "f"` for an `enum`.
pub(crate) fn one_of(values: &[Value]) -> String {
    let mut out = String::from("one of ");
    for (index, value) in values.iter().enumerate() {
        if index == MAX_CHOICES {
            out.push_str(", ...");
            break;
        }
        if index > 0 {
            out.push_str(", ");
        }
        out.push_str(&render(value));
    }
    out
}

/// What an `anyOf` / `oneOf` wanted: the union of the branches' types when every branch names
/// them, otherwise a count of alternatives.
pub(crate) fn describe_branches(nodes: &[Node], branches: &[NodeId], one: bool) -> String {
    let mut set = 0u8;
    let mut all_typed = true;
    for id in branches {
        match nodes.get(*id as usize) {
            Some(Node::Schema(schema)) if schema.types != 0 => set |= schema.types,
            _ => all_typed = false,
        }
    }
    let quantifier = if one { "exactly one" } else { "one" };
    if all_typed && branches.len() > 1 && set.count_ones() as usize == branches.len() {
        return types_expected(set);
    }
    format!(
        "a value matching {quantifier} of {} schemas",
        branches.len()
    )
}
