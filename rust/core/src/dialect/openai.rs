//! OpenAI structured outputs (`strict: true` function tools, Chat Completions and Responses):
//! the strict rules with every property required (an optional one nullable), the formats and
//! numeric keywords OpenAI keeps, and its size limits, checked on the output.
use serde_json::{Map, Value};

use super::node::Node;
use super::strict::{Site, Strictness, complex_pattern};
use super::walk::{Build, Parts, Rules, Treatment, Walker};

const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_TEXT: usize = 120_000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_LARGE_ENUM_TEXT: usize = 15_000;

/// The rules of [`Dialect::OpenAiStrict`](super::Dialect::OpenAiStrict).
pub(super) struct OpenAi;

impl Rules for OpenAi {
    fn label(&self) -> &'static str {
        "OpenAI strict mode"
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn always_removed(&self, key: &str) -> bool {
        matches!(
            key,
            "default" | "examples" | "example" | "deprecated" | "readOnly" | "writeOnly"
        )
    }

    fn treat(&self, key: &str, value: &Value) -> Treatment {
        match key {
            "title" | "description" | "minItems" | "maxItems" | "exclusiveMinimum"
            | "exclusiveMaximum" | "multipleOf" => Treatment::Keep,
            "minimum" | "maximum" => Treatment::KeepNumber,
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
        OPENAI_FORMATS.contains(&value.as_str().unwrap_or_default())
    }

    fn keeps_pattern(&self, pattern: Option<&str>) -> bool {
        pattern.is_some_and(|pattern| !complex_pattern(pattern, false))
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
            all_required: true,
            split_types: false,
        };
        walker.finish_strict(out, types, parts, Site { pointer, root }, &strictness)
    }

    fn check_output(&self, walker: &mut Walker<'_>, out: &Value) {
        walker.check_openai_limits(out);
    }
}

impl Walker<'_> {
    /// OpenAI's size limits, measured on the output.
    fn check_openai_limits(&mut self, out: &Value) {
        let mut stats = Stats::default();
        stats.walk(out, 0);
        if stats.properties > OPENAI_MAX_PROPERTIES {
            let message = format!(
                "{} properties in total: OpenAI strict mode allows {OPENAI_MAX_PROPERTIES}",
                stats.properties
            );
            self.unfaithful("", "properties", message);
        }
        if stats.nesting > OPENAI_MAX_NESTING {
            let message = format!(
                "{} levels of object nesting: OpenAI strict mode allows {OPENAI_MAX_NESTING}",
                stats.nesting
            );
            self.unfaithful("", "properties", message);
        }
        if stats.enum_values > OPENAI_MAX_ENUM_VALUES {
            let message = format!(
                "{} enum values in total: OpenAI strict mode allows {OPENAI_MAX_ENUM_VALUES}",
                stats.enum_values
            );
            self.unfaithful("", "enum", message);
        }
        if stats.large_enum {
            let message = format!(
                "an enum of more than {OPENAI_LARGE_ENUM} strings totals over \
                 {OPENAI_LARGE_ENUM_TEXT} characters: over OpenAI strict mode's limit"
            );
            self.unfaithful("", "enum", message);
        }
        if stats.text > OPENAI_MAX_TEXT {
            let message = format!(
                "{} characters of property names, definition names and enum values: OpenAI \
                 strict mode allows {OPENAI_MAX_TEXT}",
                stats.text
            );
            self.unfaithful("", "properties", message);
        }
    }
}

/// Sizes OpenAI limits, measured on the output.
#[derive(Default)]
struct Stats {
    properties: usize,
    nesting: usize,
    enum_values: usize,
    large_enum: bool,
    text: usize,
}

impl Stats {
    fn walk(&mut self, schema: &Value, level: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        let mut level = level;
        if let Some(Value::Object(props)) = map.get("properties") {
            level += 1;
            self.nesting = self.nesting.max(level);
            self.properties += props.len();
            self.text += props.keys().map(String::len).sum::<usize>();
        }
        let enum_text = |values: &[Value], stats: &mut Self| {
            let text: usize = values.iter().filter_map(Value::as_str).map(str::len).sum();
            stats.text += text;
            if values.len() > OPENAI_LARGE_ENUM && text > OPENAI_LARGE_ENUM_TEXT {
                stats.large_enum = true;
            }
        };
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            enum_text(values, self);
        }
        if let Some(value) = map.get("const") {
            enum_text(std::slice::from_ref(value), self);
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = map.get(key) {
                self.text += defs.keys().map(String::len).sum::<usize>();
                for def in defs.values() {
                    self.walk(def, 0);
                }
            }
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            for sub in props.values() {
                self.walk(sub, level);
            }
        }
        if let Some(items) = map.get("items") {
            self.walk(items, level);
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            for branch in branches {
                self.walk(branch, level);
            }
        }
    }
}
