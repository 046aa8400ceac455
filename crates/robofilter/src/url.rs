//! URLs as robots.txt matching reads them: the scheme, the bundle host key
//! and the matchable path, per dialect, without allocation.
//!
//! # The path
//!
//! [`MatchPath::from_url`] is google/robotstxt's `GetPathParamsQuery`, the
//! google dialect's reading:
//!
//! 1. A leading `//` is skipped.
//! 2. A scheme is recognised only if `://` appears before any of `/ ? ;`; if so,
//!    everything up to and including `://` is dropped.
//! 3. The path starts at the next `/`, `?` or `;`; if there is none, it is `/`.
//! 4. A `#` before that start gives `/`; otherwise the path is cut at the first
//!    `#`.
//! 5. A `/` is prepended if the path starts with `?` or `;`.
//!
//! The rfc9309 dialect ([`MatchPath::parse`] with [`Dialect::Rfc9309`])
//! differs in one place (docs/SEMANTICS.md section 4, item 5): when a scheme is
//! recognised or the URL starts with `//`, the authority ends at the first
//! `/`, `?` or `#` (RFC 3986 section 3.2), so a `;` inside the authority
//! (`http://u;x@a.example/private`) never starts the path.
//!
//! Nothing else is done: no percent-decoding (the rfc9309 engines normalise
//! the path themselves), no dot-segment removal, no trimming. Step 5 and the
//! empty case need a byte that is not in the URL, so the result is a
//! [`MatchPath`]: an optional leading `/` plus a slice of the URL.
//!
//! # The host key
//!
//! A bundle names a host by its *key*: the authority of a `scheme://` URL
//! (up to the first `/`, `?` or `#`), without user information (up to the
//! last `@`), lower-cased, without an empty port, `:80` or `:443`. Bundles
//! do not tell schemes apart, so the two default ports are dropped whatever
//! the scheme: `http://b.example:443/` and a manifest entry `B.Example:443`
//! both have the key `b.example`. [`url_host_key`] (for URLs) and
//! [`normalize_host`] (for host names a user gives) share that one
//! function.

use crate::dialect::Dialect;
use crate::normalize;

/// The path (with query) that robots.txt patterns match, borrowed from a URL.
///
/// The matchable bytes are `/` (if [`MatchPath::has_lead_slash`]) followed by
/// [`MatchPath::tail`]. They are never empty.
///
/// # Example
///
/// ```
/// use robofilter::MatchPath;
///
/// let p = MatchPath::from_url(b"https://example.com/a?b#frag");
/// assert_eq!(p.to_vec(), b"/a?b");
/// let p = MatchPath::from_url(b"example.com?q");
/// assert_eq!(p.to_vec(), b"/?q");
/// assert_eq!(MatchPath::from_url(b"").to_vec(), b"/");
/// ```
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct MatchPath<'a> {
    lead_slash: bool,
    tail: &'a [u8],
}

impl<'a> MatchPath<'a> {
    /// `/`: the path of a URL with none.
    const ROOT: MatchPath<'static> = MatchPath { lead_slash: true, tail: b"" };

    /// Extracts the matchable path from a URL (see the module docs).
    ///
    /// Never fails: any byte string has a path, `/` at worst.
    #[inline]
    pub fn from_url(url: &'a [u8]) -> MatchPath<'a> {
        // Fast path for the common `letters://authority...`: the general
        // rules below reduce to "the path starts at the first `/ ? ;` after
        // `://`, and is `/` if a `#` comes first or none follows".
        let scheme =
            url.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        if scheme > 0 && url[scheme..].starts_with(b"://") {
            let from = scheme + 3;
            let Some(k) = url[from..]
                .iter()
                .position(|&b| matches!(b, b'/' | b'?' | b';' | b'#'))
            else {
                return MatchPath::ROOT;
            };
            return MatchPath::from_start(url, from + k);
        }
        let search_start = if url.starts_with(b"//") { 2 } else { 0 };
        // The first `/ ? ;` (SIMD search). A scheme is recognised if `://`
        // comes before any of them: that is exactly when the first one is
        // a `/` with a `:` before it and a `/` after it.
        let stop = |from: usize| {
            memchr::memchr3(b'/', b'?', b';', &url[from..]).map(|k| from + k)
        };
        let Some(first) = stop(search_start) else { return MatchPath::ROOT };
        let start = if url[first] == b'/'
            && first > search_start
            && url[first - 1] == b':'
            && url.get(first + 1) == Some(&b'/')
        {
            match stop(first + 2) {
                Some(s) => s,
                None => return MatchPath::ROOT,
            }
        } else {
            first
        };
        // A `#` anywhere before the path start makes the path `/`.
        if memchr::memchr(b'#', &url[search_start..start]).is_some() {
            return MatchPath::ROOT;
        }
        MatchPath::from_start(url, start)
    }

    /// The path that starts at `url[start]` (a `/`, `?`, `;` or `#`) and
    /// runs to the fragment: `/` if it starts with the `#`.
    #[inline]
    fn from_start(url: &'a [u8], start: usize) -> MatchPath<'a> {
        if url[start] == b'#' {
            return MatchPath::ROOT;
        }
        let end = memchr::memchr(b'#', &url[start..])
            .map_or(url.len(), |k| start + k);
        MatchPath::from_url_path(&url[start..end])
    }

    /// Extracts the matchable path from a URL as `dialect` reads it (see
    /// the module docs): [`MatchPath::from_url`] for the google dialect, the
    /// RFC 3986 authority for rfc9309.
    ///
    /// ```
    /// use robofilter::{Dialect, MatchPath};
    ///
    /// let url = b"http://u;x@a.example/private/x";
    /// assert_eq!(MatchPath::parse(url, Dialect::Rfc9309).to_vec(), b"/private/x");
    /// assert_eq!(MatchPath::parse(url, Dialect::Google).to_vec(), b"/;x@a.example/private/x");
    /// ```
    #[inline]
    pub fn parse(url: &'a [u8], dialect: Dialect) -> MatchPath<'a> {
        match dialect {
            Dialect::Google => MatchPath::from_url(url),
            Dialect::Rfc9309 => MatchPath::from_url_rfc9309(url),
        }
    }

    fn from_url_rfc9309(url: &'a [u8]) -> MatchPath<'a> {
        let skip = if url.starts_with(b"//") { 2 } else { 0 };
        // Where the authority starts: after a scheme recognised as in the
        // google reading (`://` before any of `/ ? ;`), or after a leading
        // `//`. Without either there is no authority to end differently.
        let first =
            memchr::memchr3(b'/', b'?', b';', &url[skip..]).map(|k| skip + k);
        let auth_start = match first {
            Some(f)
                if url[f] == b'/'
                    && f > skip
                    && url[f - 1] == b':'
                    && url.get(f + 1) == Some(&b'/') =>
            {
                f + 2
            }
            _ if skip == 2 => 2,
            _ => return MatchPath::from_url(url),
        };
        // As in the google reading, a `#` before the path makes it `/`,
        // also one before the scheme's `://`.
        if memchr::memchr(b'#', &url[skip..auth_start]).is_some() {
            return MatchPath::ROOT;
        }
        let Some(k) = memchr::memchr3(b'/', b'?', b'#', &url[auth_start..])
        else {
            return MatchPath::ROOT;
        };
        MatchPath::from_start(url, auth_start + k)
    }

    /// This path (found by the google reading, as [`MatchPath::from_url`]
    /// or a line scan gives it) as `dialect` reads `url`. The readings
    /// differ only when the google path starts at a `;` inside the
    /// authority, so only then is `url` read again.
    ///
    /// ```
    /// use robofilter::{Dialect, MatchPath};
    ///
    /// let url = b"http://u;x@a.example/private/x";
    /// let google = MatchPath::from_url(url);
    /// assert_eq!(google.for_dialect(url, Dialect::Rfc9309).to_vec(), b"/private/x");
    /// ```
    #[inline]
    pub fn for_dialect(
        self,
        url: &'a [u8],
        dialect: Dialect,
    ) -> MatchPath<'a> {
        match dialect {
            Dialect::Rfc9309 if self.tail.first() == Some(&b';') => {
                MatchPath::from_url_rfc9309(url)
            }
            _ => self,
        }
    }

    /// The path of [`has_lead_slash`](MatchPath::has_lead_slash) and
    /// [`tail`](MatchPath::tail).
    #[inline(always)]
    pub(crate) fn from_parts(lead_slash: bool, tail: &'a [u8]) -> Self {
        MatchPath { lead_slash, tail }
    }

    /// Builds a match path from bytes that are already a path (they are used
    /// as they are; an empty slice means `/`).
    #[inline]
    pub fn from_path(path: &'a [u8]) -> MatchPath<'a> {
        MatchPath { lead_slash: path.is_empty(), tail: path }
    }

    /// Builds a match path from the part of a URL that [`from_url`] would
    /// keep, found by a caller's own scan: `tail` starts at the path's
    /// first octet (`/`, `?` or `;`) and ends before the fragment; empty
    /// means `/`. A path starting with `?` or `;` gets its `/`, as in
    /// [`from_url`].
    ///
    /// ```
    /// use robofilter::MatchPath;
    ///
    /// let url = b"https://example.com?q=1#top";
    /// assert_eq!(MatchPath::from_url_path(&url[19..23]), MatchPath::from_url(url));
    /// ```
    ///
    /// [`from_url`]: MatchPath::from_url
    #[inline]
    pub fn from_url_path(tail: &'a [u8]) -> MatchPath<'a> {
        MatchPath { lead_slash: tail.first() != Some(&b'/'), tail }
    }

    /// Whether the matchable bytes start with a `/` that is not in the URL.
    #[inline]
    pub fn has_lead_slash(&self) -> bool {
        self.lead_slash
    }

    /// The part of the matchable bytes that is borrowed from the URL.
    #[inline]
    pub fn tail(&self) -> &'a [u8] {
        self.tail
    }

    /// Emits the octets the rules of `dialect` match against: the
    /// matchable bytes, normalised in the rfc9309 dialect.
    #[inline]
    pub(crate) fn matchable(self, dialect: Dialect, mut emit: impl FnMut(u8)) {
        if self.lead_slash {
            emit(b'/');
        }
        match dialect {
            Dialect::Google => self.tail.iter().for_each(|&b| emit(b)),
            Dialect::Rfc9309 => {
                normalize::rfc9309_url(self.tail, |b| {
                    emit(b);
                    true
                });
            }
        }
    }

    /// The matchable bytes as an owned vector (allocates; for tests and
    /// explanations, not the hot path).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.tail.len() + 1);
        if self.lead_slash {
            v.push(b'/');
        }
        v.extend_from_slice(self.tail);
        v
    }
}

/// The length of a URL's scheme if it starts with
/// `[A-Za-z][A-Za-z0-9+.-]*://` (RFC 3986 section 3.1, then `://`).
///
/// ```
/// assert_eq!(robofilter::scheme_len(b"https://a.example/"), Some(5));
/// assert_eq!(robofilter::scheme_len(b"s3+x://bucket/k"), Some(4));
/// assert_eq!(robofilter::scheme_len(b"mailto:x@a.example"), None);
/// ```
///
/// This is the one scheme grammar: the line classifier
/// ([`robofilter_scan`]) owns it, and every reader here uses it.
#[inline]
pub fn scheme_len(url: &[u8]) -> Option<usize> {
    robofilter_scan::scheme_len(url)
}

/// Why a URL has no host key ([`url_host_key`]).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum NoHostKey {
    /// The URL does not start with `scheme://`, or its host is empty.
    Missing,
    /// The authority holds an octet RFC 3986 does not allow there (`\`,
    /// space, `"`, `<`, `>`, `^`, backtick, `{`, `|`, `}` or a control
    /// octet). Readers disagree on which host such a URL names
    /// (`http://b.example\@a.example/` is `a.example` to some and
    /// `b.example` to others), so it has none.
    Ambiguous,
}

/// Whether `b` may not appear in an RFC 3986 authority (section 3.2: the
/// octets outside unreserved, pct-encoded, sub-delims, `:`, `@`, `[`, `]`,
/// and outside `/ ? #`, which end it). Octets above 0x7F are left to the
/// host's owner (IRIs in the wild carry raw UTF-8 hosts).
#[inline]
const fn is_forbidden_in_authority(b: u8) -> bool {
    matches!(
        b,
        0..=0x20
            | 0x7f
            | b'\\'
            | b'"'
            | b'<'
            | b'>'
            | b'^'
            | b'`'
            | b'{'
            | b'|'
            | b'}'
    )
}

/// Writes the bundle host key of `url` into `out` (see the module docs).
///
/// # Errors
///
/// [`NoHostKey::Missing`] if the URL does not start with `scheme://` or its
/// host is empty; [`NoHostKey::Ambiguous`] if its authority holds an octet
/// RFC 3986 forbids there. `out` is left empty on error.
///
/// ```
/// use robofilter::{NoHostKey, url_host_key};
///
/// let mut key = Vec::new();
/// url_host_key(b"HTTPS://User@WWW.Example.com:443/a", &mut key)?;
/// assert_eq!(key, b"www.example.com");
/// url_host_key(b"http://b.example:443/x", &mut key)?;
/// assert_eq!(key, b"b.example");
/// assert_eq!(url_host_key(b"/relative", &mut key), Err(NoHostKey::Missing));
/// assert_eq!(
///     url_host_key(b"http://b.example\\@a.example/", &mut key),
///     Err(NoHostKey::Ambiguous),
/// );
/// # Ok::<(), NoHostKey>(())
/// ```
pub fn url_host_key(url: &[u8], out: &mut Vec<u8>) -> Result<(), NoHostKey> {
    url_host_key_end(url, out).map(|_| ())
}

/// [`url_host_key`], telling also where the authority ends in `url` (the
/// offset of its first `/ ? #` after `://`, or `url.len()`): `url` up to
/// there decides the key, so a URL that starts with those octets followed
/// by `/ ? #` or nothing has the same key.
pub(crate) fn url_host_key_end(
    url: &[u8],
    out: &mut Vec<u8>,
) -> Result<usize, NoHostKey> {
    out.clear();
    let n = scheme_len(url).ok_or(NoHostKey::Missing)?;
    let rest = &url[n + 3..];
    // One pass over the authority (a few dozen octets, where a vector
    // search costs more to set up than it saves): it ends at the first
    // `/ ? #`, holds no forbidden octet, and its user information ends at
    // the last `@`.
    let (mut host_start, mut end) = (0, rest.len());
    for (i, &b) in rest.iter().enumerate() {
        match AUTHORITY_OCTETS[usize::from(b)] {
            Authority::Other => {}
            Authority::At => host_start = i + 1,
            Authority::End => {
                end = i;
                break;
            }
            Authority::Forbidden => return Err(NoHostKey::Ambiguous),
        }
    }
    push_host_key(&rest[host_start..end], out)?;
    Ok(n + 3 + end)
}

/// What an octet is to [`url_host_key`]'s pass over an authority.
#[derive(Clone, Copy)]
enum Authority {
    Other,
    /// `@`: the user information ends at the last one.
    At,
    /// `/ ? #`: the authority ends.
    End,
    /// An octet RFC 3986 forbids there.
    Forbidden,
}

/// [`Authority`] by octet.
static AUTHORITY_OCTETS: [Authority; 256] = {
    let mut table = [Authority::Other; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'@' => Authority::At,
            b'/' | b'?' | b'#' => Authority::End,
            o if is_forbidden_in_authority(o) => Authority::Forbidden,
            _ => Authority::Other,
        };
        b += 1;
    }
    table
};

/// Whether `url` has a bundle host key, written into `out` (empty if not):
/// [`url_host_key`] without the reason.
///
/// ```
/// let mut out = Vec::new();
/// assert!(robofilter::url_authority(b"http://example.com:8080?q", &mut out));
/// assert_eq!(out, b"example.com:8080");
/// assert!(!robofilter::url_authority(b"/relative/path", &mut out));
/// ```
#[inline]
pub fn url_authority(url: &[u8], out: &mut Vec<u8>) -> bool {
    url_host_key(url, out).is_ok()
}

/// The one host-key function: `host[:port]` lower-cased, an empty port,
/// `:80` and `:443` dropped. An IPv6 literal's colons are inside `[...]`.
fn push_host_key(
    host_port: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), NoHostKey> {
    // Short: a plain search beats a vector search's set-up.
    let find = |o: u8| host_port.iter().position(|&b| b == o);
    let host_end = match host_port.first() {
        Some(b'[') => find(b']').map_or(host_port.len(), |i| i + 1),
        _ => find(b':').unwrap_or(host_port.len()),
    };
    if host_end == 0 {
        return Err(NoHostKey::Missing);
    }
    let keep = match &host_port[host_end..] {
        b"" | b":" | b":80" | b":443" => host_end,
        _ => host_port.len(),
    };
    out.extend_from_slice(&host_port[..keep]);
    out.make_ascii_lowercase();
    Ok(())
}

/// Normalises a host name given by the user (a file name, a manifest
/// entry) to its bundle host key: lower-cased, without an empty port,
/// `:80` or `:443`.
///
/// # Errors
///
/// A message if the name is empty, has no host, or contains `/`, `?`, `#`,
/// `@` or an octet RFC 3986 forbids in an authority.
///
/// ```
/// assert_eq!(robofilter::normalize_host("B.Example:443").unwrap(), "b.example");
/// assert!(robofilter::normalize_host("a b").is_err());
/// ```
pub fn normalize_host(name: &str) -> Result<String, String> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Err("empty host name".to_string());
    }
    if let Some(&b) = bytes
        .iter()
        .find(|&&b| is_forbidden_in_authority(b) || b"/?#@".contains(&b))
    {
        return Err(format!(
            "host name '{}' contains {:?}, which cannot appear in an \
             authority",
            name.escape_debug(),
            char::from(b)
        ));
    }
    let mut key = Vec::with_capacity(bytes.len());
    push_host_key(bytes, &mut key)
        .map_err(|_| format!("host name '{name}' has no host"))?;
    Ok(String::from_utf8_lossy(&key).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forbidden set is the complement, within ASCII, of RFC 3986's
    /// authority octets (unreserved, `%`, sub-delims, `:`, `@`, `[`, `]`)
    /// and the `/ ? #` that end it; octets above 0x7F are allowed.
    #[test]
    fn forbidden_authority_octets_follow_rfc3986() {
        for b in 0..=u8::MAX {
            let allowed = b >= 0x80
                || b.is_ascii_alphanumeric()
                || b"-._~%!$&'()*+,;=:@[]/?#".contains(&b);
            assert_eq!(
                is_forbidden_in_authority(b),
                !allowed,
                "octet {b:#04x}"
            );
        }
    }

    macro_rules! p {
        ($url:expr, $want:expr) => {
            assert_eq!(
                MatchPath::from_url($url.as_bytes()).to_vec(),
                $want.as_bytes(),
                "url {:?}",
                $url
            );
        };
    }

    #[test]
    fn google_get_path_params_query() {
        // The cases of robots_test.cc's GetPathParamsQuery test.
        p!("", "/");
        p!("http://www.example.com", "/");
        p!("http://www.example.com/", "/");
        p!("http://www.example.com/a", "/a");
        p!("http://www.example.com/a/", "/a/");
        p!("http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/");
        p!("http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f");
        p!("example.com", "/");
        p!("example.com/", "/");
        p!("example.com/a", "/a");
        p!("example.com/a/", "/a/");
        p!("example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f");
        p!("a", "/");
        p!("a/", "/");
        p!("/a", "/a");
        p!("a/b", "/b");
        p!("example.com?a", "/?a");
        p!("example.com/a;b#c", "/a;b");
        p!("//a/b/c", "/b/c");
    }

    #[test]
    fn edge_cases() {
        p!("http://x#frag/a", "/");
        p!("foo?bar://x/a", "/?bar://x/a");
        p!("http:/a", "/a");
        p!("http://x\\a", "/");
        p!("http://u:p@x:8080/a?b#c", "/a?b");
        p!("a#b://x/c", "/");
        p!("http://x;p", "/;p");
        p!("http://x/a ", "/a ");
        p!("x:y/z", "/z");
        p!("http://", "/");
        p!("://a", "/");
        p!("http://x#", "/");
        p!("http://x?#", "/?");
        p!("HTTP://x;a#b", "/;a");
        p!("h2://x/a", "/a");
        p!("s3+x://b/k", "/k");
        p!("http://:", "/");
    }

    #[test]
    fn rfc9309_authority_ends_at_slash_query_or_fragment() {
        let cases: &[(&str, &str, &str)] = &[
            // (url, google path, rfc9309 path)
            (
                "http://u;x@a.example/private/x",
                "/;x@a.example/private/x",
                "/private/x",
            ),
            ("http://x;p", "/;p", "/"),
            ("HTTP://x;a#b", "/;a", "/"),
            ("http://x;a?q;r", "/;a?q;r", "/?q;r"),
            ("//u;x@a.example/p", "/;x@a.example/p", "/p"),
            ("http://x#frag/a", "/", "/"),
            ("http://a.example/a;b#c", "/a;b", "/a;b"),
            ("a;b/c", "/;b/c", "/;b/c"),
            ("http://", "/", "/"),
            ("//", "/", "/"),
        ];
        for &(url, google, rfc) in cases {
            let u = url.as_bytes();
            assert_eq!(
                MatchPath::parse(u, Dialect::Google).to_vec(),
                google.as_bytes(),
                "{url}"
            );
            assert_eq!(
                MatchPath::parse(u, Dialect::Rfc9309).to_vec(),
                rfc.as_bytes(),
                "{url}"
            );
        }
    }

    #[test]
    fn host_keys() {
        type Case = (&'static [u8], Result<&'static [u8], NoHostKey>);
        let cases: &[Case] = &[
            (b"http://a.example/x", Ok(b"a.example")),
            (b"http://A.Example:80/x", Ok(b"a.example")),
            (b"https://a.example:80/x", Ok(b"a.example")),
            (b"http://b.example:443/x", Ok(b"b.example")),
            (b"https://a.example:443", Ok(b"a.example")),
            (b"http://a.example:/x", Ok(b"a.example")),
            (b"ftp://u:p@a.example:21/x", Ok(b"a.example:21")),
            (b"http://u@v@a.example?x", Ok(b"a.example")),
            (b"http://u;x@a.example/private", Ok(b"a.example")),
            (b"http://[::1]:8080/", Ok(b"[::1]:8080")),
            (b"http://[::1]:80/", Ok(b"[::1]")),
            (b"http://a.example#f", Ok(b"a.example")),
            (b"http:///x", Err(NoHostKey::Missing)),
            (b"http://u@/x", Err(NoHostKey::Missing)),
            (b"http://:8080/x", Err(NoHostKey::Missing)),
            (b"a.example/x", Err(NoHostKey::Missing)),
            (b"1http://a/", Err(NoHostKey::Missing)),
            (b"ht tp://a/", Err(NoHostKey::Missing)),
            (
                b"http://b.example\\@a.example/private",
                Err(NoHostKey::Ambiguous),
            ),
            (b"http://a b.example/", Err(NoHostKey::Ambiguous)),
            (b"http://a.example|x/", Err(NoHostKey::Ambiguous)),
            (b"http://a.example\x01/", Err(NoHostKey::Ambiguous)),
            (b"http://a.example/\\ path", Ok(b"a.example")),
        ];
        let mut out = Vec::new();
        for &(url, want) in cases {
            let got = url_host_key(url, &mut out).map(|()| &out[..]);
            assert_eq!(got, want, "{:?}", url.escape_ascii().to_string());
        }
    }

    /// The host key, written plainly and independently of the code under
    /// test: `scheme://`, up to the first `/ ? #`, forbidden octets make it
    /// ambiguous, after the last `@`, then split at the port colon, lower
    /// case, and the port kept unless empty, 80 or 443.
    fn reference_host_key(url: &[u8]) -> Result<Vec<u8>, NoHostKey> {
        let colon =
            url.iter().position(|&b| b == b':').ok_or(NoHostKey::Missing)?;
        let scheme = &url[..colon];
        let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !scheme_ok || !url[colon..].starts_with(b"://") {
            return Err(NoHostKey::Missing);
        }
        let rest = &url[colon + 3..];
        let end =
            rest.iter().position(|b| b"/?#".contains(b)).unwrap_or(rest.len());
        let auth = &rest[..end];
        let forbidden: &[u8] = b" \\\"<>^`{|}";
        if auth
            .iter()
            .any(|&b| b < 0x20 || b == 0x7f || forbidden.contains(&b))
        {
            return Err(NoHostKey::Ambiguous);
        }
        let auth = match auth.iter().rposition(|&b| b == b'@') {
            Some(at) => &auth[at + 1..],
            None => auth,
        };
        let (host, port): (&[u8], &[u8]) = if auth.first() == Some(&b'[') {
            match auth.iter().position(|&b| b == b']') {
                Some(i) => auth.split_at(i + 1),
                None => (auth, b""),
            }
        } else {
            match auth.iter().position(|&b| b == b':') {
                Some(i) => auth.split_at(i),
                None => (auth, b""),
            }
        };
        if host.is_empty() {
            return Err(NoHostKey::Missing);
        }
        let mut key = host.to_ascii_lowercase();
        if !matches!(port, b"" | b":" | b":80" | b":443") {
            key.extend(port.to_ascii_lowercase());
        }
        Ok(key)
    }

    #[test]
    fn host_keys_match_the_reference_on_random_strings() {
        const PIECES: &[&[u8]] = &[
            b"http", b"HTTPS", b"s3+x", b"1", b":", b"//", b"://", b"/", b"@",
            b"?", b"#", b"[", b"]", b"80", b"443", b"A", b".", b";", b"\\",
            b" ", b"|", b"%41",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = Vec::new();
        let (mut ok, mut ambiguous) = (0, 0);
        for _ in 0..100_000 {
            let mut url = Vec::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut r = state;
            // Half the strings start like a URL, so that the authority
            // rules (not just the scheme check) are exercised.
            if r & 1 == 1 {
                url.extend_from_slice(b"http://");
            }
            r >>= 1;
            for _ in 0..(r % 9) {
                r /= 9;
                url.extend_from_slice(
                    PIECES[(r % PIECES.len() as u64) as usize],
                );
                r /= PIECES.len() as u64;
                if r == 0 {
                    r = state.rotate_left(17);
                }
            }
            let got = url_host_key(&url, &mut out).map(|()| out.clone());
            let want = reference_host_key(&url);
            assert_eq!(got, want, "{:?}", url.escape_ascii().to_string());
            ok += usize::from(want.is_ok());
            ambiguous += usize::from(want == Err(NoHostKey::Ambiguous));
        }
        // The generator reaches every outcome often enough to mean something.
        assert!(ok > 10_000 && ambiguous > 5_000, "{ok} {ambiguous}");
    }

    #[test]
    fn host_names() {
        assert_eq!(
            normalize_host("WWW.Example.com").unwrap(),
            "www.example.com"
        );
        assert_eq!(normalize_host("example.com:443").unwrap(), "example.com");
        assert_eq!(normalize_host("example.com:80").unwrap(), "example.com");
        assert_eq!(normalize_host("B.Example:443").unwrap(), "b.example");
        assert_eq!(
            normalize_host("example.com:8080").unwrap(),
            "example.com:8080"
        );
        for bad in ["", "a/b", "a b", "u@a", ":80", "a\\b", "a|b"] {
            assert!(normalize_host(bad).is_err(), "{bad:?}");
        }
        // A host name and a URL with that host have the same key.
        let mut key = Vec::new();
        for name in
            ["B.Example:443", "b.example:80", "[::1]:8080", "x.example:"]
        {
            url_host_key(format!("http://{name}/p").as_bytes(), &mut key)
                .unwrap();
            assert_eq!(
                normalize_host(name).unwrap().as_bytes(),
                &key[..],
                "{name}"
            );
        }
    }
}
