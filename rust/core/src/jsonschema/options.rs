//! What a schema is compiled with, and what a schema that cannot be compiled reports.
use std::fmt;

use crate::error::Limits;

/// How a schema is compiled and applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Accept strings that read as the integer, number or boolean the schema wants (`"5"`).
    pub lenient: bool,
    /// Treat `format` as an assertion rather than an annotation.
    pub assert_formats: bool,
    /// Depth and error-count limits applied while validating.
    pub limits: Limits,
    /// The draft of a document that does not name one in `$schema`.
    pub draft: Draft,
}

/// A JSON Schema draft: which keywords a schema resource has, and what they mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Draft {
    /// Draft 4: `id`, `definitions`, `dependencies`, array `items` with `additionalItems`, boolean
    /// `exclusiveMinimum`/`exclusiveMaximum`, `$ref` replacing its siblings.
    Draft4,
    /// Draft 7 (and 6): `$id`, `const`, `contains`, `propertyNames`, `if`/`then`/`else`, numeric
    /// exclusive bounds; otherwise as draft 4.
    Draft7,
    /// Draft 2019-09: `$anchor`, `$defs`, `$recursiveRef`, `unevaluated*`, `dependentSchemas`,
    /// `dependentRequired`, `minContains`/`maxContains`; `$ref` beside other keywords; array
    /// `items` with `additionalItems` still.
    Draft201909,
    /// Draft 2020-12: `prefixItems`, `$dynamicRef`.
    #[default]
    Draft202012,
}

impl Draft {
    /// The draft named `name`: `"draft2020-12"`, `"draft2019-09"`, `"draft7"` or `"draft4"`.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "draft2020-12" => Self::Draft202012,
            "draft2019-09" => Self::Draft201909,
            "draft7" => Self::Draft7,
            "draft4" => Self::Draft4,
            _ => return None,
        })
    }

    /// The name [`from_name`](Self::from_name) reads.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Draft202012 => "draft2020-12",
            Self::Draft201909 => "draft2019-09",
            Self::Draft7 => "draft7",
            Self::Draft4 => "draft4",
        }
    }

    /// The draft whose metaschema is `uri` (`$schema`), with or without an empty fragment, over
    /// `http` or `https`. Draft 6 documents are read as draft 7, which only adds keywords.
    pub fn from_metaschema(uri: &str) -> Option<Self> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let path = uri
            .strip_prefix("https://json-schema.org/")
            .or_else(|| uri.strip_prefix("http://json-schema.org/"))?;
        Some(match path {
            "draft/2020-12/schema" => Self::Draft202012,
            "draft/2019-09/schema" => Self::Draft201909,
            "draft-07/schema" | "draft-06/schema" => Self::Draft7,
            "draft-04/schema" => Self::Draft4,
            _ => return None,
        })
    }

    /// The keyword naming a schema resource: `id` in draft 4, `$id` after.
    pub(crate) const fn id_keyword(self) -> &'static str {
        match self {
            Self::Draft4 => "id",
            _ => "$id",
        }
    }

    /// True when `$ref` replaces every other keyword of its schema (drafts 4 to 7).
    pub(crate) const fn ref_replaces_siblings(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft7)
    }
}

/// A schema that cannot be compiled: where (JSON pointer into the schema) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON pointer to the offending part of the schema (`""` for the root).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "invalid schema: {}", self.message)
        } else {
            write!(f, "invalid schema at {}: {}", self.pointer, self.message)
        }
    }
}

impl std::error::Error for SchemaError {}
