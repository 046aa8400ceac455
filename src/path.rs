//! URL to matchable path, without allocation.
//!
//! This is google/robotstxt's `GetPathParamsQuery`, used by both dialects:
//!
//! 1. A leading `//` is skipped.
//! 2. A scheme is recognised only if `://` appears before any of `/ ? ;`; if so,
//!    everything up to and including `://` is dropped.
//! 3. The path starts at the next `/`, `?` or `;`; if there is none, it is `/`.
//! 4. A `#` before that start gives `/`; otherwise the path is cut at the first
//!    `#`.
//! 5. A `/` is prepended if the path starts with `?` or `;`.
//!
//! Nothing else is done: no percent-decoding, no dot-segment removal, no
//! trimming. Step 5 and the empty case need a byte that is not in the URL, so
//! the result is a [`MatchPath`]: an optional leading `/` plus a slice of the
//! URL.

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
    /// Extracts the matchable path from a URL (see the module docs).
    ///
    /// Never fails: any byte string has a path, `/` at worst.
    #[inline]
    pub fn from_url(url: &'a [u8]) -> MatchPath<'a> {
        const ROOT: MatchPath<'static> =
            MatchPath { lead_slash: true, tail: b"" };
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
                return ROOT;
            };
            let start = from + k;
            if url[start] == b'#' {
                return ROOT;
            }
            let end = memchr::memchr(b'#', &url[start..])
                .map_or(url.len(), |k| start + k);
            let tail = &url[start..end];
            return MatchPath { lead_slash: url[start] != b'/', tail };
        }
        let search_start = if url.starts_with(b"//") { 2 } else { 0 };
        // The first `/ ? ;` (SIMD search). A scheme is recognised if `://`
        // comes before any of them: that is exactly when the first one is
        // a `/` with a `:` before it and a `/` after it.
        let stop = |from: usize| {
            memchr::memchr3(b'/', b'?', b';', &url[from..]).map(|k| from + k)
        };
        let Some(first) = stop(search_start) else { return ROOT };
        let start = if url[first] == b'/'
            && first > search_start
            && url[first - 1] == b':'
            && url.get(first + 1) == Some(&b'/')
        {
            match stop(first + 2) {
                Some(s) => s,
                None => return ROOT,
            }
        } else {
            first
        };
        // A `#` anywhere before the path start makes the path `/`.
        if memchr::memchr(b'#', &url[search_start..start]).is_some() {
            return ROOT;
        }
        let end = memchr::memchr(b'#', &url[start..])
            .map_or(url.len(), |k| start + k);
        let tail = &url[start..end];
        MatchPath { lead_slash: url[start] != b'/', tail }
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

#[cfg(test)]
mod tests {
    use super::MatchPath;

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
}
