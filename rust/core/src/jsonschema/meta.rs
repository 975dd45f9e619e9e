//! The metaschemas of drafts 2020-12, 2019-09, 7 and 4, available to `$ref` without being passed
//! in as resources.
//!
//! They are parsed once per process, and only when a reference to them is first met.
use std::sync::OnceLock;

use serde_json::Value;

const SOURCES: &[(&str, &str)] = &[
    (
        "https://json-schema.org/draft/2020-12/schema",
        include_str!("metaschemas/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/core",
        include_str!("metaschemas/core.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/applicator",
        include_str!("metaschemas/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/unevaluated",
        include_str!("metaschemas/unevaluated.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/validation",
        include_str!("metaschemas/validation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/meta-data",
        include_str!("metaschemas/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-annotation",
        include_str!("metaschemas/format-annotation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/content",
        include_str!("metaschemas/content.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-assertion",
        include_str!("metaschemas/format-assertion.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/schema",
        include_str!("metaschemas/draft2019-09/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/core",
        include_str!("metaschemas/draft2019-09/core.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/applicator",
        include_str!("metaschemas/draft2019-09/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/validation",
        include_str!("metaschemas/draft2019-09/validation.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/meta-data",
        include_str!("metaschemas/draft2019-09/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/format",
        include_str!("metaschemas/draft2019-09/format.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/content",
        include_str!("metaschemas/draft2019-09/content.json"),
    ),
    (
        "http://json-schema.org/draft-07/schema",
        include_str!("metaschemas/draft7.json"),
    ),
    (
        "http://json-schema.org/draft-04/schema",
        include_str!("metaschemas/draft4.json"),
    ),
];

/// The parsed metaschemas with their URIs.
pub(crate) fn documents() -> &'static [(&'static str, Value)] {
    static DOCUMENTS: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    DOCUMENTS.get_or_init(|| {
        SOURCES
            .iter()
            .filter_map(|(uri, text)| serde_json::from_str(text).ok().map(|value| (*uri, value)))
            .collect()
    })
}
