//! `uri`, `uri-reference` (RFC 3986), `iri`, `iri-reference` (RFC 3987) and `uri-template`
//! (RFC 6570), each checked against its grammar in one pass over the text.
use std::net::Ipv6Addr;
use std::str::FromStr;

/// What a component may hold beyond unreserved characters, percent escapes and sub-delimiters.
#[derive(Clone, Copy)]
struct Allowed {
    /// ASCII punctuation allowed besides (`:@` in a path segment, `:@/?` in a query, ...).
    extra: &'static [u8],
    /// IRI: the `ucschar` code points too.
    iri: bool,
    /// IRI query: the private-use code points too.
    private: bool,
}

const SUB_DELIMS: &[u8] = b"!$&'()*+,;=";

const fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3987 `ucschar`.
fn is_ucschar(ch: char) -> bool {
    let code = u32::from(ch);
    matches!(code, 0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF)
        || (0x10000..=0xEFFFD).contains(&code) && code & 0xFFFF <= 0xFFFD
}

/// RFC 3987 `iprivate`.
fn is_iprivate(ch: char) -> bool {
    matches!(u32::from(ch), 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x10_0000..=0x10_FFFD)
}

/// True when every character of `text` is allowed by `allowed`, and every `%` starts an escape.
fn component(text: &str, allowed: Allowed) -> bool {
    let bytes = text.as_bytes();
    let mut chars = text.char_indices();
    while let Some((index, ch)) = chars.next() {
        if ch == '%' {
            let escape = bytes.get(index + 1..index + 3);
            if !escape.is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            chars.next();
            chars.next();
            continue;
        }
        let ok = match u8::try_from(ch) {
            Ok(byte) if byte.is_ascii() => {
                is_unreserved(byte) || SUB_DELIMS.contains(&byte) || allowed.extra.contains(&byte)
            }
            _ => allowed.iri && (is_ucschar(ch) || (allowed.private && is_iprivate(ch))),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// RFC 3986 scheme: a letter, then letters, digits, `+`, `-` and `.`.
fn is_scheme(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`.
fn authority(text: &str, iri: bool) -> bool {
    let plain = Allowed {
        extra: b"",
        iri,
        private: false,
    };
    let (userinfo, rest) = match text.split_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, text),
    };
    if let Some(userinfo) = userinfo
        && !component(
            userinfo,
            Allowed {
                extra: b":",
                ..plain
            },
        )
    {
        return false;
    }
    let (host, port) = if let Some(literal) = rest.strip_prefix('[') {
        let Some((inside, after)) = literal.split_once(']') else {
            return false;
        };
        if !ip_literal(inside) {
            return false;
        }
        match after {
            "" => ("", None),
            _ => match after.strip_prefix(':') {
                Some(port) => ("", Some(port)),
                None => return false,
            },
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        }
    };
    port.is_none_or(|port| port.bytes().all(|b| b.is_ascii_digit())) && component(host, plain)
}

/// `IPv6address / IPvFuture` inside brackets.
fn ip_literal(text: &str) -> bool {
    if let Some(future) = text.strip_prefix(['v', 'V']) {
        let Some((version, rest)) = future.split_once('.') else {
            return false;
        };
        return !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_hexdigit())
            && !rest.is_empty()
            && rest
                .bytes()
                .all(|b| is_unreserved(b) || SUB_DELIMS.contains(&b) || b == b':');
    }
    text.is_ascii() && Ipv6Addr::from_str(text).is_ok()
}

/// Checks a URI (`absolute`) or URI reference; `iri` widens the characters to RFC 3987's.
fn reference(value: &str, absolute: bool, iri: bool) -> bool {
    let pchar = Allowed {
        extra: b":@",
        iri,
        private: false,
    };
    let (rest, fragment) = match value.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (value, None),
    };
    if let Some(fragment) = fragment
        && !component(
            fragment,
            Allowed {
                extra: b":@/?",
                ..pchar
            },
        )
    {
        return false;
    }
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    if let Some(query) = query
        && !component(
            query,
            Allowed {
                extra: b":@/?",
                private: iri,
                ..pchar
            },
        )
    {
        return false;
    }
    let scheme_end = rest.find(':').filter(|colon| !rest[..*colon].contains('/'));
    let hier = match scheme_end {
        Some(colon) if is_scheme(&rest[..colon]) => &rest[colon + 1..],
        _ if absolute => return false,
        _ => {
            // A relative reference's first segment has no colon (`path-noscheme`).
            let first = rest.split('/').next().unwrap_or("");
            if first.contains(':') {
                return false;
            }
            rest
        }
    };
    let path = match hier.strip_prefix("//") {
        Some(tail) => {
            let end = tail.find('/').unwrap_or(tail.len());
            if !authority(&tail[..end], iri) {
                return false;
            }
            &tail[end..]
        }
        None => hier,
    };
    path.split('/').all(|segment| component(segment, pchar))
}

/// An absolute RFC 3986 URI.
pub fn is_uri(value: &str) -> bool {
    reference(value, true, false)
}

/// An RFC 3986 URI reference (absolute or relative).
pub fn is_uri_reference(value: &str) -> bool {
    reference(value, false, false)
}

/// An absolute RFC 3987 IRI.
pub fn is_iri(value: &str) -> bool {
    reference(value, true, true)
}

/// An RFC 3987 IRI reference.
pub fn is_iri_reference(value: &str) -> bool {
    reference(value, false, true)
}

/// An RFC 6570 URI template (level 4): literals and `{...}` expressions of variables with
/// optional operators, prefixes (`:1` to `:9999`) and explode modifiers (`*`).
pub fn is_uri_template(value: &str) -> bool {
    let mut rest = value;
    while !rest.is_empty() {
        let literal_end = rest.find(['{', '}']).unwrap_or(rest.len());
        if !template_literal(&rest[..literal_end]) {
            return false;
        }
        rest = &rest[literal_end..];
        let Some(open) = rest.strip_prefix('{') else {
            // A `}` with no `{` before it, or the end.
            return rest.is_empty();
        };
        let Some((expression, after)) = open.split_once('}') else {
            return false;
        };
        if !template_expression(expression) {
            return false;
        }
        rest = after;
    }
    true
}

fn template_literal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut chars = text.char_indices();
    while let Some((index, ch)) = chars.next() {
        let ok = match ch {
            '%' => {
                let escape = bytes.get(index + 1..index + 3);
                chars.next();
                chars.next();
                escape.is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit))
            }
            ' ' | '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}' => false,
            ch if ch.is_ascii() => !ch.is_ascii_control(),
            ch => is_ucschar(ch) || is_iprivate(ch),
        };
        if !ok {
            return false;
        }
    }
    true
}

fn template_expression(text: &str) -> bool {
    let list = text
        .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
        .unwrap_or(text);
    !list.is_empty() && list.split(',').all(template_varspec)
}

fn template_varspec(text: &str) -> bool {
    let (name, prefix) = match text.split_once(':') {
        Some((name, prefix)) => (name, Some(prefix)),
        None => (text.strip_suffix('*').unwrap_or(text), None),
    };
    if let Some(prefix) = prefix {
        let bytes = prefix.as_bytes();
        let ok = (1..=4).contains(&bytes.len())
            && bytes.iter().all(u8::is_ascii_digit)
            && bytes.first() != Some(&b'0');
        if !ok {
            return false;
        }
    }
    // varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded
    !name.is_empty() && !name.starts_with('.') && !name.ends_with('.') && !name.contains("..") && {
        let bytes = name.as_bytes();
        let mut index = 0;
        let mut ok = true;
        while let Some(&byte) = bytes.get(index) {
            if byte == b'%' {
                ok &= bytes
                    .get(index + 1..index + 3)
                    .is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit));
                index += 3;
            } else {
                ok &= byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.';
                index += 1;
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert!(is_uri("http://example.com/a?b#c"));
        assert!(is_uri(
            "urn:oasis:names:specification:docbook:dtd:xml:4.1.2"
        ));
        assert!(!is_uri("//example.com"));
        assert!(!is_uri("http://example.com:abc/path"));
        assert!(!is_uri("http:/[::1]"));
        assert!(is_uri_reference("./this:that"));
        assert!(!is_uri_reference("1:b"));
        assert!(!is_uri_reference("//a@b@example.com/"));
        assert!(is_iri("http://ƒøø.ßår/?∂éœ=πîx#πîüx"));
        assert!(!is_iri("http://ƒøø.ßår/\n"));
        assert!(is_uri_template(
            "http://example.com/dictionary/{term:1}/{term}"
        ));
        assert!(!is_uri_template("{v:01}"));
        assert!(!is_uri_template("foo}bar"));
        assert!(is_uri_template("{%41}"));
    }
}
