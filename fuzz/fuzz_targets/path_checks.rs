//! The `path` fuzz target's checks and their plain references, shared by
//! the fuzz target (`path.rs` beside this file) and the default test run
//! (`tests/main.rs` includes this file; `tests/fuzz_replay.rs` runs it),
//! so that the two can never drift apart.

use robofilter::{Dialect, MatchPath, NoHostKey, url_authority, url_host_key};

/// The path target: the path in both dialects and the host key, each
/// against a reference written out step by step here, never through the
/// library's own helpers.
pub fn check(data: &[u8]) {
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        let path = MatchPath::parse(data, dialect);
        let want = reference_path(data, dialect == Dialect::Rfc9309);
        assert_eq!(path.to_vec(), want, "{dialect:?} {}", data.escape_ascii());
        // The same path from the google reading's result, as the line scan
        // gets it, and from the tail alone.
        assert_eq!(
            MatchPath::from_url(data).for_dialect(data, dialect),
            path,
            "{dialect:?} {}",
            data.escape_ascii()
        );
        let tail = path.tail();
        if !tail.is_empty() {
            let at = tail.as_ptr() as usize - data.as_ptr() as usize;
            assert!(at + tail.len() <= data.len());
            assert_eq!(MatchPath::from_url_path(tail), path);
        }
    }
    assert_eq!(
        MatchPath::from_url(data),
        MatchPath::parse(data, Dialect::Google)
    );

    // What `out` held before must not survive either outcome.
    let mut key = b"stale".to_vec();
    let got = url_host_key(data, &mut key).map(|()| key.clone());
    assert_eq!(got, reference_host_key(data), "{}", data.escape_ascii());
    if got.is_err() {
        assert!(key.is_empty(), "{}", data.escape_ascii());
    }
    let mut out = b"stale".to_vec();
    assert_eq!(url_authority(data, &mut out), got.is_ok());
    assert_eq!(out, got.unwrap_or_default());
}

/// The matchable path, written out from google/robotstxt's
/// `GetPathParamsQuery` (robots.cc) with `find`-style searches. `rfc9309`
/// applies docs/SEMANTICS.md section 4 item 5: when a scheme is recognised or
/// the URL starts with `//`, the path starts at the first `/ ? #` after the
/// authority instead of the first `/ ? ;`; everything else is the same.
pub fn reference_path(url: &[u8], rfc9309: bool) -> Vec<u8> {
    let find = |from: usize, set: &[u8]| {
        (from..url.len()).find(|&i| set.contains(&url[i]))
    };
    let find_str = |from: usize, needle: &[u8]| {
        (from..url.len()).find(|&i| url[i..].starts_with(needle))
    };
    let search_start = if url.starts_with(b"//") { 2 } else { 0 };
    let early_path = find(search_start, b"/?;");
    let mut protocol_end = find_str(search_start, b"://");
    if let (Some(e), Some(p)) = (early_path, protocol_end)
        && e < p
    {
        protocol_end = None;
    }
    let has_authority = protocol_end.is_some() || search_start == 2;
    let protocol_end = protocol_end.map_or(search_start, |p| p + 3);
    let stops: &[u8] = if rfc9309 && has_authority { b"/?#" } else { b"/?;" };
    let Some(path_start) = find(protocol_end, stops) else {
        return b"/".to_vec();
    };
    let hash = find(search_start, b"#");
    if hash.is_some_and(|h| h < path_start) {
        return b"/".to_vec();
    }
    let path_end = hash.unwrap_or(url.len());
    let mut out = Vec::new();
    if url[path_start] != b'/' {
        out.push(b'/');
    }
    out.extend_from_slice(&url[path_start..path_end]);
    out
}

/// The bundle host key as src/url.rs's module docs define it, written out:
/// `scheme://` (a letter, then letters, digits, `+ - .`), the authority up
/// to the first `/ ? #`, ambiguous if it holds an octet RFC 3986 forbids
/// there (checked first, on the whole authority), the host after the last
/// `@`, an IPv6 literal up to its `]`, otherwise up to the first `:`;
/// missing if the host is empty; lower-cased; the port kept unless it is
/// empty, `80` or `443`.
pub fn reference_host_key(url: &[u8]) -> Result<Vec<u8>, NoHostKey> {
    let mut i = 0;
    while i < url.len()
        && (url[i].is_ascii_alphanumeric() || b"+-.".contains(&url[i]))
    {
        i += 1;
    }
    if i == 0 || !url[0].is_ascii_alphabetic() || !url[i..].starts_with(b"://")
    {
        return Err(NoHostKey::Missing);
    }
    let mut authority = Vec::new();
    for &b in &url[i + 3..] {
        if b == b'/' || b == b'?' || b == b'#' {
            break;
        }
        authority.push(b);
    }
    for &b in &authority {
        let forbidden = b <= 0x1f
            || b == 0x7f
            || matches!(
                b,
                b' ' | b'\\'
                    | b'"'
                    | b'<'
                    | b'>'
                    | b'^'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
            );
        if forbidden {
            return Err(NoHostKey::Ambiguous);
        }
    }
    if let Some(at) = authority.iter().rposition(|&b| b == b'@') {
        authority.drain(..=at);
    }
    let host_len = if authority.first() == Some(&b'[') {
        authority
            .iter()
            .position(|&b| b == b']')
            .map_or(authority.len(), |k| k + 1)
    } else {
        authority.iter().position(|&b| b == b':').unwrap_or(authority.len())
    };
    if host_len == 0 {
        return Err(NoHostKey::Missing);
    }
    let port = authority.split_off(host_len);
    if port != b"" && port != b":" && port != b":80" && port != b":443" {
        authority.extend_from_slice(&port);
    }
    Ok(authority.to_ascii_lowercase())
}
