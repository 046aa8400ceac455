//! Patterns as the matcher sees them, and the direct (automaton-free) matcher.
//!
//! A normalised Allow/Disallow value is read as a sequence of tokens:
//!
//! - `*` matches any run of octets, the empty run included;
//! - `$` as the **last** octet anchors the match at the end of the path; anywhere
//!   else it is a literal `$`;
//! - in the rfc9309 dialect, `%2A` and `%24` are a literal `*` and `$` octet
//!   (RFC 9309 §2.2.3), never a wildcard or an anchor;
//! - every other octet matches itself.
//!
//! A pattern is anchored at the first octet of the path and, unless it ends in
//! `$`, needs to match only a prefix of it. Its precedence is the octet length
//! of the normalised text, wildcards included (google/robotstxt's rule: `/*****`
//! beats `/fish`).
//!
//! The direct matcher here is the reference the automata are tested against and
//! the engine of last resort for groups whose automaton exceeds its budget. It
//! is `O(path × pattern)` per rule with no allocation and no exponential
//! backtracking: on a mismatch it retries only from the most recent `*`, which is
//! enough for patterns whose only wildcard is `*`.

use crate::dialect::Dialect;

/// One token of a pattern.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Tok {
    /// Matches exactly this octet.
    Byte(u8),
    /// Matches any run of octets.
    Star,
}

/// Reads the token at `pattern[i..]`: the token, its width in octets, and
/// whether it is the end anchor (which has no token).
#[inline]
fn tok_at(pattern: &[u8], i: usize, dialect: Dialect) -> (Option<Tok>, usize) {
    let b = pattern[i];
    match b {
        b'*' => (Some(Tok::Star), 1),
        b'$' if i + 1 == pattern.len() => (None, 1),
        b'%' if dialect == Dialect::Rfc9309 => {
            match pattern.get(i + 1..i + 3) {
                Some(b"2A") => (Some(Tok::Byte(b'*')), 3),
                Some(b"24") => (Some(Tok::Byte(b'$')), 3),
                _ => (Some(Tok::Byte(b'%')), 1),
            }
        }
        _ => (Some(Tok::Byte(b)), 1),
    }
}

/// The octets a pattern's match must start with: its tokens up to the first
/// `*` (all of them if there is none).
#[cfg(any(test, feature = "compile"))]
pub(crate) fn literal_prefix(pattern: &[u8], dialect: Dialect) -> Vec<u8> {
    let mut out = Vec::with_capacity(pattern.len());
    push_literal_prefix(pattern, dialect, &mut out);
    out
}

/// Appends [`literal_prefix`]'s octets to `out`.
///
/// The octets before the first `*` (a `*` octet is always a wildcard:
/// `%2A` is three other octets), less an end anchor; only an rfc9309
/// pattern with a `%` among them is read token by token. Loading a
/// bundle member's direct group calls this once per rule.
pub(crate) fn push_literal_prefix(
    pattern: &[u8],
    dialect: Dialect,
    out: &mut Vec<u8>,
) {
    let literal = match memchr::memchr(b'*', pattern) {
        Some(star) => &pattern[..star],
        None => pattern.strip_suffix(b"$").unwrap_or(pattern),
    };
    if dialect == Dialect::Google || !literal.contains(&b'%') {
        out.extend_from_slice(literal);
        return;
    }
    let mut i = 0;
    loop {
        let run = plain_len(&pattern[i..], dialect);
        out.extend_from_slice(&pattern[i..i + run]);
        i += run;
        if i == pattern.len() {
            return;
        }
        match tok_at(pattern, i, dialect) {
            (Some(Tok::Byte(b)), width) => {
                out.push(b);
                i += width;
            }
            _ => return,
        }
    }
}

/// The length of the run of octets at the start of `s` that are literals
/// whatever follows them: all but `*`, `$` and, in the rfc9309 dialect,
/// `%` (a search far cheaper per octet than [`tok_at`]).
#[inline]
fn plain_len(s: &[u8], dialect: Dialect) -> usize {
    let found = match dialect {
        Dialect::Google => memchr::memchr2(b'*', b'$', s),
        Dialect::Rfc9309 => memchr::memchr3(b'*', b'$', b'%', s),
    };
    found.unwrap_or(s.len())
}

/// Calls `f` with each pair of adjacent literal octets after the pattern's
/// first `*` (a pair is never split by a `*`): a path the pattern matches
/// contains every one of them.
pub(crate) fn literal_pairs_after_star(
    pattern: &[u8],
    dialect: Dialect,
    mut f: impl FnMut(u8, u8),
) {
    // A `*` octet is always a wildcard (`%2A` is three other octets), so
    // tokens start again right after the first one.
    let Some(star) = memchr::memchr(b'*', pattern) else {
        return;
    };
    // The previous token, if it was a literal octet.
    let mut prev = None;
    let mut i = star + 1;
    while i < pattern.len() {
        let (tok, width) = tok_at(pattern, i, dialect);
        prev = match tok {
            Some(Tok::Byte(b)) => {
                if let Some(a) = prev {
                    f(a, b);
                }
                Some(b)
            }
            Some(Tok::Star) | None => None,
        };
        i += width;
    }
}

#[cfg(feature = "compile")]
/// Splits a normalised pattern into tokens and an end-anchor flag.
pub(crate) fn tokens(pattern: &[u8], dialect: Dialect) -> (Vec<Tok>, bool) {
    let mut toks = Vec::with_capacity(pattern.len());
    let mut anchored = false;
    let mut i = 0;
    while i < pattern.len() {
        let (tok, width) = tok_at(pattern, i, dialect);
        match tok {
            Some(t) => toks.push(t),
            None => anchored = true,
        }
        i += width;
    }
    (toks, anchored)
}

/// Whether the normalised `pattern` matches the (normalised) `path`.
///
/// An empty pattern matches everything; callers treat it as "no rule"
/// because its precedence is 0.
pub(crate) fn matches(pattern: &[u8], dialect: Dialect, path: &[u8]) -> bool {
    let (mut t, mut p) = (0, 0);
    // The most recent `*`: pattern index after it, and the path index it
    // has consumed up to.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if t == pattern.len() {
            return true;
        }
        let (tok, width) = tok_at(pattern, t, dialect);
        let advanced = match tok {
            None if p == path.len() => return true,
            None => false,
            Some(Tok::Star) => {
                t += width;
                star = Some((t, p));
                continue;
            }
            Some(Tok::Byte(b)) => p < path.len() && path[p] == b,
        };
        if advanced {
            t += width;
            p += 1;
            continue;
        }
        match star {
            Some((st, sp)) if sp < path.len() => {
                star = Some((st, sp + 1));
                t = st;
                p = sp + 1;
            }
            _ => return false,
        }
    }
}

/// The index.htm rule (google/robotstxt): an Allow pattern whose last
/// segment starts with `index.htm` also allows exactly its directory. Returns
/// the derived pattern `<everything up to the last />$`.
pub(crate) fn index_html_alias(pattern: &[u8]) -> Option<Vec<u8>> {
    let slash = pattern.iter().rposition(|&b| b == b'/')?;
    if !pattern[slash..].starts_with(b"/index.htm") {
        return None;
    }
    let mut derived = pattern[..=slash].to_vec();
    derived.push(b'$');
    Some(derived)
}

/// Every string of at most `max_len` octets over `alphabet`, sorted: the
/// exhaustive inputs of this module's and `direct.rs`'s tests.
#[cfg(test)]
pub(crate) fn words(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut words = vec![Vec::new()];
    for _ in 0..max_len {
        let longer: Vec<Vec<u8>> = words
            .iter()
            .flat_map(|w| alphabet.iter().map(|&b| [&w[..], &[b]].concat()))
            .collect();
        words.extend(longer);
        words.sort();
        words.dedup();
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pat: &str, path: &str) -> bool {
        matches(pat.as_bytes(), Dialect::Google, path.as_bytes())
    }

    #[test]
    fn literal_pairs() {
        let pairs = |p: &[u8], d| {
            let mut out = Vec::new();
            literal_pairs_after_star(p, d, |a, b| out.push([a, b]));
            out
        };
        assert_eq!(pairs(b"/a/b", Dialect::Google), [[0u8; 2]; 0]);
        assert_eq!(pairs(b"/a*.ph$", Dialect::Google), [*b".p", *b"ph"]);
        assert_eq!(pairs(b"/*x*yz*w", Dialect::Google), [*b"yz"]);
        assert_eq!(pairs(b"*%2Aab", Dialect::Rfc9309), [*b"*a", *b"ab"]);
        assert_eq!(pairs(b"*%2A", Dialect::Google), [*b"%2", *b"2A"]);
        assert_eq!(pairs(b"/**", Dialect::Google), [[0u8; 2]; 0]);
    }

    /// The prefix and the pairs against a token-by-token reading, on
    /// every pattern of up to five octets over the octets that matter.
    #[test]
    fn prefix_and_pairs_agree_with_the_tokens() {
        let patterns = words(b"/a*$%2A4", 5);
        for d in [Dialect::Google, Dialect::Rfc9309] {
            for p in &patterns {
                let mut toks = Vec::new();
                let mut i = 0;
                while i < p.len() {
                    let (tok, width) = tok_at(p, i, d);
                    toks.push(tok);
                    i += width;
                }
                let prefix: Vec<u8> = toks
                    .iter()
                    .map_while(|t| match t {
                        Some(Tok::Byte(b)) => Some(*b),
                        _ => None,
                    })
                    .collect();
                assert_eq!(literal_prefix(p, d), prefix, "{d:?} {p:?}");
                let after = toks.iter().skip_while(|t| **t != Some(Tok::Star));
                let after: Vec<_> = after.collect();
                let want: Vec<[u8; 2]> = after
                    .windows(2)
                    .filter_map(|w| match (w[0], w[1]) {
                        (Some(Tok::Byte(a)), Some(Tok::Byte(b))) => {
                            Some([*a, *b])
                        }
                        _ => None,
                    })
                    .collect();
                let mut got = Vec::new();
                literal_pairs_after_star(p, d, |a, b| got.push([a, b]));
                assert_eq!(got, want, "{d:?} {p:?}");
            }
        }
    }

    #[test]
    fn google_matching() {
        assert!(m("/fish", "/fishheads"));
        assert!(!m("/fish/", "/fish"));
        assert!(m("/*.php", "/index?f=filename.php/"));
        assert!(!m("/*.php$", "/filename.php?parameters"));
        assert!(m("/*.php$", "/a.php"));
        assert!(!m("/*.php$", "/a.php/b.phpx"));
        assert!(m("/*.php$", "/a.php/b.php"));
        assert!(m("/foo$bar", "/foo$bar"));
        assert!(m("/foo-$$", "/foo-$"));
        assert!(m("/a$*", "/a$zz"));
        assert!(!m("$", "/"));
        assert!(m("*", "/"));
        assert!(m("/*$", "/"));
        assert!(!m("foo", "/foo"));
        assert!(m("*foo", "/a?b=foo"));
        assert!(m("", "/x"));
        assert!(m("/a*b*c", "/aXbYbc"));
        assert!(!m("/a*b*c$", "/aXbYbcd"));
    }

    #[test]
    fn rfc9309_literal_escapes() {
        let r = |pat: &str, path: &str| {
            matches(pat.as_bytes(), Dialect::Rfc9309, path.as_bytes())
        };
        assert!(r("/a-%2A.html", "/a-*.html"));
        assert!(!r("/a-%2A.html", "/a-x.html"));
        assert!(r("/foo-%24", "/foo-$"));
        assert!(!r("/foo-%24", "/foo-"));
        assert!(r("/foo-%24", "/foo-$bar"));
        assert!(r("/%2", "/%2"));
    }

    #[test]
    fn index_html() {
        let a = |p: &str| index_html_alias(p.as_bytes());
        assert_eq!(a("/a/index.html"), Some(b"/a/$".to_vec()));
        assert_eq!(a("/index.html?x=1"), Some(b"/$".to_vec()));
        assert_eq!(a("/*/index.htm"), Some(b"/*/$".to_vec()));
        assert_eq!(a("/a/Index.html"), None);
        assert_eq!(a("/a/index.ht"), None);
        assert_eq!(a("index.html"), None);
    }
}
