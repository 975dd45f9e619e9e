//! Provider schema dialects: a canonical JSON Schema (draft 2020-12) → the subset a model
//! provider accepts for tool arguments, with every change reported.
//!
//! Three dialects:
//!
//! - [`Dialect::OpenAiStrict`]: OpenAI structured outputs / `strict: true` function tools. Every
//!   object is closed (`additionalProperties: false`) and lists every property in `required`; a
//!   property that was optional becomes nullable (`null` stands for "omitted", so a caller drops
//!   `null` values of properties that did not accept `null` before validating) and loses its
//!   `default`. Kept: `type` (lists included), `enum`, `const`, `anyOf`, `$ref`/`$defs`
//!   (recursion included), string `pattern` and `format` (date-time, time, date, duration, email,
//!   hostname, ipv4, ipv6, uuid), numeric bounds and `multipleOf`, `minItems`/`maxItems`,
//!   `title`, `description`. A `$ref` with sibling keywords is inlined (merged with its target),
//!   as the OpenAI Agents SDK's checker does, so the output is a fixed point of that checker.
//! - [`Dialect::AnthropicStrict`]: Anthropic strict tool use. Every object is closed; `required`
//!   is kept as is. Kept: `enum`/`const` of primitive values, `anyOf`, `$ref`/`$defs`
//!   (non-recursive), `default`, `title`, `description`, simple `pattern`s, `format` (the OpenAI
//!   set plus uri), `minItems` of 0 or 1. A `type` list becomes an `anyOf` of one branch per type.
//! - [`Dialect::Gemini`]: the google-genai SDK's `Schema` (`FunctionDeclaration.parameters`):
//!   every `$ref` is inlined (a recursive one down to [`GEMINI_RECURSION_DEPTH`] levels, then
//!   cut to a plain `{"type": "object"}`), `$defs` and `additionalProperties` go, a nullable
//!   type becomes `nullable: true`, `const` a one-value `enum` (strings; Gemini enums hold
//!   strings only), `examples` the single `example`, and every keyword the SDK's `Schema` lacks
//!   is removed (`format` stays: Gemini accepts any value). Type names stay lowercase (the SDK
//!   reads them case-insensitively).
//!
//! `oneOf` becomes `anyOf` and `allOf` is merged into its parent in every dialect.
//!
//! # Lossy changes and faithfulness
//!
//! Each [`Change`] names the schema it applies to (a JSON Pointer into the *input* document), the
//! keyword and what was done. A change is either:
//!
//! - **merely lossy** (`lossy: true`): a constraint or an annotation was dropped or loosened
//!   (`minLength`, numeric bounds under Anthropic, `uniqueItems`, `default`, `examples`, an
//!   unknown `format`, `oneOf` read as `anyOf`, a complex `pattern`...), an open object with
//!   declared properties was closed, or an optional property became required-and-nullable. The
//!   model may then send a value the canonical validator rejects; that is acceptable because
//!   validation still happens server-side, and the schema still describes what the tool takes;
//! - **unfaithful** (`lossy: false`): the dialect cannot express the construct, and a grammar
//!   built from the result would demand or forbid something materially different, so the tool
//!   must not be sent as strict. These are: free-form objects (`additionalProperties` true or a
//!   schema, `patternProperties`, `unevaluatedProperties` other than `false`, or a nested object
//!   without declared properties: closing it leaves only `{}`); a schema without a type (any
//!   value); an array without `items`; tuples (`prefixItems`: positions are lost); `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `dependencies`; `$dynamicRef`;
//!   a `$ref` that cannot be resolved; an `allOf` or `$ref` whose parts cannot be merged; enums of
//!   objects or arrays; recursion under Anthropic (unsupported) and recursion Gemini has to cut;
//!   a root that is not a plain object; OpenAI's size limits (more than 5000 properties, more
//!   than 10 levels of object nesting, more than 1000 enum values, more than 120,000 characters
//!   of names and values, or an enum of more than 250 strings totalling over 15,000
//!   characters); a `false` schema.
//!
//! [`Transformed::faithful`] is true exactly when every change is merely lossy. For Gemini, which
//! has no strict flag, `faithful == false` means the declaration is structurally different from
//! the canonical schema (a recursion cut, a conditional dropped...), for the caller to warn about.
//!
//! A root object without declared properties (`{"type": "object"}`, what MCP servers send for a
//! tool without arguments) is closed as an argument-less tool: merely lossy. Nested, the same
//! schema is a free-form dictionary: unfaithful.
//!
//! The output is deterministic: keywords keep their input order, added keywords come after them
//! in a fixed order, and changes are listed in the order the walk meets them (each once).
//!
//! # Layout
//!
//! `transform` walks the input once (`walk.rs`: `$ref` inlining, `allOf` merging, budgets) and
//! translates each node's keywords (`keywords.rs`); what the providers do differently is asked
//! of their [`Rules`](walk::Rules): `openai.rs`, `anthropic.rs` (both finishing objects the
//! strict way, `strict.rs`) and `gemini.rs`. `node.rs` reads the input and its references,
//! `merge.rs` combines and reshapes schemas.
#![expect(
    clippy::doc_markdown,
    reason = "product names (OpenAI, Gemini) are not code"
)]

mod anthropic;
mod gemini;
mod keywords;
mod merge;
mod node;
mod openai;
mod strict;
mod walk;

use std::fmt;

use serde_json::Value;

use anthropic::Anthropic;
use gemini::Gemini;
use openai::OpenAi;
use walk::{Rules, Walker};

pub use gemini::GEMINI_RECURSION_DEPTH;
pub use walk::Change;

/// A provider's schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI structured outputs (`strict: true` function tools, Chat Completions and Responses).
    OpenAiStrict,
    /// Anthropic strict tool use (`strict: true` on a tool).
    AnthropicStrict,
    /// Gemini function declarations (the google-genai SDK's `Schema`).
    Gemini,
}

impl Dialect {
    /// Every dialect, in a fixed order.
    pub const ALL: [Self; 3] = [Self::OpenAiStrict, Self::AnthropicStrict, Self::Gemini];

    /// The dialect named `openai_strict`, `anthropic_strict` or `gemini`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|dialect| dialect.name() == name)
    }

    /// The name [`Dialect::parse`] reads.
    pub const fn name(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai_strict",
            Self::AnthropicStrict => "anthropic_strict",
            Self::Gemini => "gemini",
        }
    }

    /// The rules the walk follows for this dialect.
    fn rules(self) -> &'static dyn Rules {
        match self {
            Self::OpenAiStrict => &OpenAi,
            Self::AnthropicStrict => &Anthropic,
            Self::Gemini => &Gemini,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A transformed schema with what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformed {
    /// The schema in the dialect.
    pub schema: Value,
    /// Every change, in the order met, each once.
    pub changes: Vec<Change>,
    /// Whether the result may be sent as strict: every change is merely lossy.
    pub faithful: bool,
}

/// Transform a canonical JSON Schema into `dialect`, reporting every change.
pub fn transform(schema: &Value, dialect: Dialect) -> Transformed {
    let rules = dialect.rules();
    let mut walker = Walker::new(rules, schema);
    rules.prepare(&mut walker, schema);
    let out = walker.schema(schema, "", true);
    walker.check_root(&out);
    rules.check_output(&mut walker, &out);
    let changes = walker.into_changes();
    let faithful = changes.iter().all(|change| change.lossy);
    Transformed {
        schema: out,
        changes,
        faithful,
    }
}
