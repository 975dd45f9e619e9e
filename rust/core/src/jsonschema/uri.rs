//! Just enough RFC 3986 to resolve `$id` and `$ref` against a base URI.

/// The five components of a URI reference, borrowed from the input.
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn parse(reference: &str) -> Parts<'_> {
    let (rest, fragment) = match reference.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (reference, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.split_once(':') {
        Some((scheme, tail))
            if scheme
                .chars()
                .next()
                .is_some_and(|ch| ch.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "+-.".contains(ch))
                && !scheme.contains('/') =>
        {
            (Some(scheme), tail)
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(tail) => match tail.find('/') {
            Some(slash) => (Some(&tail[..slash]), &tail[slash..]),
            None => (Some(tail), ""),
        },
        None => (None, rest),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

/// RFC 3986 section 5.2.4.
fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing_slash = false;
    for (index, segment) in segments.iter().enumerate() {
        if index == 0 && absolute {
            continue;
        }
        match *segment {
            "." => trailing_slash = index == last,
            ".." => {
                output.pop();
                trailing_slash = index == last;
            }
            other => {
                output.push(other);
                trailing_slash = false;
            }
        }
    }
    let mut result = String::with_capacity(path.len());
    if absolute {
        result.push('/');
    }
    result.push_str(&output.join("/"));
    if trailing_slash && !result.ends_with('/') {
        result.push('/');
    }
    result
}

/// Resolves `reference` against the absolute `base` (RFC 3986 section 5.2.2).
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let r = parse(reference);
    if r.scheme.is_some() {
        return compose(
            r.scheme,
            r.authority,
            &remove_dot_segments(r.path),
            r.query,
            r.fragment,
        );
    }
    let b = parse(base);
    if r.authority.is_some() {
        return compose(
            b.scheme,
            r.authority,
            &remove_dot_segments(r.path),
            r.query,
            r.fragment,
        );
    }
    if r.path.is_empty() {
        return compose(
            b.scheme,
            b.authority,
            b.path,
            r.query.or(b.query),
            r.fragment,
        );
    }
    let path = if r.path.starts_with('/') {
        remove_dot_segments(r.path)
    } else if b.authority.is_some() && b.path.is_empty() {
        remove_dot_segments(&format!("/{}", r.path))
    } else {
        let directory = b.path.rfind('/').map_or("", |slash| &b.path[..=slash]);
        remove_dot_segments(&format!("{directory}{}", r.path))
    };
    compose(b.scheme, b.authority, &path, r.query, r.fragment)
}

fn compose(
    scheme: Option<&str>,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
) -> String {
    let mut out = String::new();
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push(':');
    }
    if let Some(authority) = authority {
        out.push_str("//");
        out.push_str(authority);
    }
    out.push_str(path);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// Splits an absolute URI into the document part and the fragment (without `#`).
pub(crate) fn split_fragment(uri: &str) -> (&str, &str) {
    uri.split_once('#').unwrap_or((uri, ""))
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn resolves_references() {
        assert_eq!(resolve("http://a/b/c/d;p?q", "g"), "http://a/b/c/g");
        assert_eq!(resolve("http://a/b/c/d;p?q", "../g"), "http://a/b/g");
        assert_eq!(resolve("http://a/b/c/d;p?q", "#s"), "http://a/b/c/d;p?q#s");
        assert_eq!(resolve("http://a/b/c/d;p?q", "/g"), "http://a/g");
        assert_eq!(resolve("http://a/b/c/d;p?q", "./"), "http://a/b/c/");
        assert_eq!(
            resolve("urn:uuid:1234", "#/$defs/x"),
            "urn:uuid:1234#/$defs/x"
        );
        assert_eq!(
            resolve("json-schema:///", "tree.json"),
            "json-schema:///tree.json"
        );
        assert_eq!(resolve("http://x/y.json", "http://z/w#a"), "http://z/w#a");
    }
}
