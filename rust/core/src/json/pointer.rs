//! JSON Pointers (RFC 6901) and the URI fragments that carry them (RFC 3986), over
//! `serde_json::Value`: the one implementation for every `$ref` this crate follows.
//!
//! - [`percent_decode`]: a URI fragment's `%XX` escapes, decoded losslessly: a malformed escape
//!   or bytes that are not UTF-8 give `None`, never a replacement character, so two different
//!   references never decode to the same pointer.
//! - [`fragment`]: the decoded fragment of a same-document reference (`#...`).
//! - [`tokens`], [`unescape`], [`escape`], [`join`]: a pointer's reference tokens, `~1` (`/`)
//!   and `~0` (`~`) undone or applied.
//! - [`step`] and [`resolve`]: a pointer followed through a value, one token or all of them.
//!   A user that must look at each value on the way (a `$id` changing the base URI) iterates
//!   [`tokens`] and calls [`step`] itself.
//!
//! Array indices follow RFC 6901 strictly: `0`, or digits without a leading zero. Objects and
//! arrays are the only values a token steps into.
use std::borrow::Cow;

use serde_json::Value;

/// `text` with its `%XX` escapes decoded; `None` when a `%` is not followed by two hex digits or
/// the decoded bytes are not UTF-8. Borrowed when there is nothing to decode.
pub fn percent_decode(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains('%') {
        return Some(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'%' {
            let high = bytes.get(index + 1).and_then(|&digit| hex_digit(digit))?;
            let low = bytes.get(index + 2).and_then(|&digit| hex_digit(digit))?;
            out.push(high << 4 | low);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

fn hex_digit(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|value| u8::try_from(value).ok())
}

/// The decoded fragment of a same-document reference: `"#/a/b"` gives `"/a/b"`, `"#"` gives
/// `""`, `"#name"` gives `"name"` (a plain-name anchor); `None` for a reference that does not
/// start with `#` or whose fragment does not decode (see [`percent_decode`]).
pub fn fragment(reference: &str) -> Option<Cow<'_, str>> {
    percent_decode(reference.strip_prefix('#')?)
}

/// A reference token with `~1` read as `/` and `~0` as `~`. A `~` followed by anything else is
/// kept as it is.
pub fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// A string as a reference token: `~` written `~0`, `/` written `~1`.
pub fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// `pointer` extended by the (unescaped) `token`.
pub fn join(pointer: &str, token: &str) -> String {
    let token = escape(token);
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    out.push_str(&token);
    out
}

/// The unescaped reference tokens of `pointer` (`""` has none); `None` when a non-empty pointer
/// does not start with `/`.
pub fn tokens(pointer: &str) -> Option<impl Iterator<Item = Cow<'_, str>>> {
    let rest = match pointer.strip_prefix('/') {
        Some(rest) => Some(rest),
        None if pointer.is_empty() => None,
        None => return None,
    };
    Some(
        rest.into_iter()
            .flat_map(|rest| rest.split('/'))
            .map(unescape),
    )
}

/// The value `token` names inside `value`: an object's member, or an array's item by an index
/// written as RFC 6901 asks (`0`, or digits without a leading zero).
pub fn step<'a>(value: &'a Value, token: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => items.get(array_index(token)?),
        _ => None,
    }
}

fn array_index(token: &str) -> Option<usize> {
    let canonical = token == "0"
        || !token.starts_with('0')
            && !token.is_empty()
            && token.bytes().all(|b| b.is_ascii_digit());
    canonical.then(|| token.parse().ok()).flatten()
}

/// The value `pointer` names inside `root`.
pub fn resolve<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    tokens(pointer)?.try_fold(root, |value, token| step(value, &token))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{escape, fragment, join, percent_decode, resolve, step, tokens, unescape};

    #[test]
    fn percent_decoding_is_lossless() {
        assert_eq!(percent_decode("plain").as_deref(), Some("plain"));
        assert_eq!(
            percent_decode("%24defs/a%20b").as_deref(),
            Some("$defs/a b")
        );
        assert_eq!(percent_decode("caf%C3%A9").as_deref(), Some("café"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%+f"), None);
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%ff"), None, "not UTF-8");
    }

    #[test]
    fn fragments_of_same_document_references() {
        assert_eq!(fragment("#").as_deref(), Some(""));
        assert_eq!(fragment("#/%24defs/x").as_deref(), Some("/$defs/x"));
        assert_eq!(fragment("#anchor").as_deref(), Some("anchor"));
        assert_eq!(fragment("other.json#/a"), None);
    }

    #[test]
    fn tokens_are_unescaped_and_escaped_back() {
        assert_eq!(unescape("a~1b~0c"), "a/b~c");
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(join("/properties", "a/b"), "/properties/a~1b");
        let parsed: Option<Vec<String>> =
            tokens("/a~1b/~0/").map(|tokens| tokens.map(String::from).collect());
        assert_eq!(
            parsed,
            Some(vec!["a/b".to_owned(), "~".to_owned(), String::new()])
        );
        assert_eq!(tokens("").map(Iterator::count), Some(0));
        assert!(tokens("a/b").is_none());
    }

    #[test]
    fn pointers_resolve_in_values() {
        let doc = json!({"a": [10, {"b/c": true}], "": 1, "~": 2});
        assert_eq!(resolve(&doc, ""), Some(&doc));
        assert_eq!(resolve(&doc, "/a/0"), Some(&json!(10)));
        assert_eq!(resolve(&doc, "/a/1/b~1c"), Some(&json!(true)));
        assert_eq!(resolve(&doc, "/"), Some(&json!(1)));
        assert_eq!(resolve(&doc, "/~0"), Some(&json!(2)));
        assert_eq!(resolve(&doc, "/a/01"), None, "a leading zero");
        assert_eq!(resolve(&doc, "/a/+1"), None);
        assert_eq!(resolve(&doc, "/a/2"), None);
        assert_eq!(resolve(&doc, "/a/0/x"), None);
        assert_eq!(step(&doc, "missing"), None);
    }
}
