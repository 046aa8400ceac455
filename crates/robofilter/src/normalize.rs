//! Percent-encoding normalisation of patterns and (in rfc9309) URL paths.
//!
//! The google dialect normalises patterns only: a valid `%xy` gets its hex
//! digits upper-cased and every octet >= 0x80 becomes `%XY`. URLs are matched as
//! given (so a URL with raw UTF-8 or lower-case escapes can never match an
//! escaped pattern; that is google/robotstxt's behaviour, pinned by vectors
//! E01-E18).
//!
//! The rfc9309 dialect runs patterns and URL paths through one function,
//! [`rfc9309`], so both sides always agree:
//!
//! - `%XY` that encodes an RFC 3986 unreserved octet (`A-Z a-z 0-9 - . _ ~`) is
//!   decoded;
//! - every other valid `%xy` keeps its escape, hex upper-cased;
//! - octets >= 0x80, control octets (0x00-0x1F, 0x7F) and space are encoded;
//! - everything else, malformed escapes included, is kept.
//!
//! In the URL's match target only ([`rfc9309_url`]), `%2A` and `%24` (either
//! hex case) are also decoded, to `*` and `$`: a pattern's `%2A`/`%24` is a
//! literal `*`/`$` octet (`pattern.rs`), and RFC 9309 section 2.2.2 compares
//! octets with those escapes and the characters equal, so the URL's escape
//! and its character must match it alike (docs/SEMANTICS.md section 4 item
//! 2). The pattern side keeps them escaped, so that they are never read as
//! a wildcard or an end anchor.
//!
//! The functions are streaming: they call `emit` once per output byte and stop
//! as soon as `emit` returns `false`, so the search loop can feed a URL straight
//! into an automaton and stop at a sink without normalising the rest.

const HEX: &[u8; 16] = b"0123456789ABCDEF";

#[inline]
fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[inline]
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Octets the rfc9309 normalisation may change: `%`, controls, space, DEL
/// and non-ASCII. Everything else passes through untouched.
const fn rfc9309_special_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = b == b'%' as usize || b <= 0x20 || b >= 0x7F;
        b += 1;
    }
    t
}

pub(crate) static RFC9309_SPECIAL: [bool; 256] = rfc9309_special_table();

/// Whether the rfc9309 normalisation may change `b`: [`RFC9309_SPECIAL`]
/// as arithmetic, so that a scan over a path vectorises and a test of a
/// few octets needs no table.
#[inline(always)]
pub(crate) fn rfc9309_special(b: u8) -> bool {
    b == b'%' || b.wrapping_sub(0x21) > 0x7E - 0x21
}

/// Whether the rfc9309 normalisation may change any octet of `bytes`: 16
/// octets at a time without a branch, which the compiler turns into
/// vector compares (a short-circuiting `any` tests octet by octet).
#[inline]
pub(crate) fn has_rfc9309_special(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(16);
    let rest = chunks.remainder();
    let any = |c: &[u8]| c.iter().fold(false, |a, &b| a | rfc9309_special(b));
    chunks.any(any) || any(rest)
}

/// Feeds the escape `%` + hex of `b` to `emit`.
#[inline]
fn emit_escape(b: u8, emit: &mut impl FnMut(u8) -> bool) -> bool {
    emit(b'%')
        && emit(HEX[usize::from(b >> 4)])
        && emit(HEX[usize::from(b & 15)])
}

/// The rfc9309 normalisation of a pattern (see the module docs). Returns
/// `false` if `emit` asked to stop.
#[inline]
pub(crate) fn rfc9309(bytes: &[u8], emit: impl FnMut(u8) -> bool) -> bool {
    normalise::<false>(bytes, emit)
}

/// The rfc9309 normalisation of a URL's path: as [`rfc9309`], and `%2A`
/// and `%24` are the characters `*` and `$`.
#[inline]
pub(crate) fn rfc9309_url(bytes: &[u8], emit: impl FnMut(u8) -> bool) -> bool {
    normalise::<true>(bytes, emit)
}

/// [`rfc9309`] (`URL` false) or [`rfc9309_url`] (`URL` true).
#[inline]
fn normalise<const URL: bool>(
    bytes: &[u8],
    mut emit: impl FnMut(u8) -> bool,
) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !RFC9309_SPECIAL[usize::from(b)] {
            if !emit(b) {
                return false;
            }
            i += 1;
            continue;
        }
        if b == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex_val);
            let lo = bytes.get(i + 2).copied().and_then(hex_val);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                let v = hi << 4 | lo;
                let go =
                    if is_unreserved(v) || (URL && matches!(v, b'*' | b'$')) {
                        emit(v)
                    } else {
                        emit_escape(v, &mut emit)
                    };
                if !go {
                    return false;
                }
                i += 3;
                continue;
            }
            // A malformed escape is kept verbatim.
            if !emit(b'%') {
                return false;
            }
            i += 1;
            continue;
        }
        if !emit_escape(b, &mut emit) {
            return false;
        }
        i += 1;
    }
    true
}

/// The google dialect's pattern normalisation: upper-case the hex of valid
/// escapes and escape octets >= 0x80. Nothing else changes.
pub(crate) fn google_pattern(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            let (h, l) = (bytes[i + 1], bytes[i + 2]);
            if hex_val(h).is_some() && hex_val(l).is_some() {
                out.extend_from_slice(&[
                    b'%',
                    h.to_ascii_uppercase(),
                    l.to_ascii_uppercase(),
                ]);
                i += 3;
                continue;
            }
        }
        if b >= 0x80 {
            emit_escape(b, &mut |x| {
                out.push(x);
                true
            });
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// Normalises an Allow/Disallow value for `dialect` (or a Content-Usage
/// path: the usage rules of [`crate::usage`] are normalised when loaded).
pub(crate) fn pattern(
    bytes: &[u8],
    dialect: crate::dialect::Dialect,
) -> Vec<u8> {
    match dialect {
        crate::dialect::Dialect::Google => google_pattern(bytes),
        crate::dialect::Dialect::Rfc9309 => {
            let mut out = Vec::with_capacity(bytes.len());
            rfc9309(bytes, |b| {
                out.push(b);
                true
            });
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9309_special_is_the_table() {
        for b in 0..=255u8 {
            assert_eq!(rfc9309_special(b), RFC9309_SPECIAL[usize::from(b)]);
        }
    }

    /// `has_rfc9309_special` finds a special octet at any position of
    /// paths of every length up to 40 (whole chunks and the remainder).
    #[test]
    fn has_rfc9309_special_finds_any_position() {
        for len in 0..=40 {
            let plain = vec![b'a'; len];
            assert!(!has_rfc9309_special(&plain), "{len}");
            for at in 0..len {
                for special in [b'%', b' ', 0x7F, 0x80, 0xFF, 0x00] {
                    let mut p = plain.clone();
                    p[at] = special;
                    assert!(has_rfc9309_special(&p), "{len} {at} {special}");
                }
            }
        }
    }

    #[cfg(feature = "compile")]
    fn rfc(s: &[u8]) -> Vec<u8> {
        pattern(s, crate::dialect::Dialect::Rfc9309)
    }

    #[cfg(feature = "compile")]
    #[test]
    fn google_patterns() {
        let g = google_pattern;
        assert_eq!(g(b"/%7ea"), b"/%7Ea");
        assert_eq!(g("/ツ".as_bytes()), b"/%E3%83%84");
        assert_eq!(g(b"/a%zz%a"), b"/a%zz%a");
        assert_eq!(g(b"/a b%2f"), b"/a b%2F");
        assert_eq!(g(b"/\xe9"), b"/%E9");
        assert_eq!(g(b"%4"), b"%4");
        assert_eq!(g(b"%41"), b"%41");
    }

    #[cfg(feature = "compile")]
    #[test]
    fn rfc9309_both_sides() {
        assert_eq!(rfc(b"/foo/bar/%62%61%7A"), b"/foo/bar/baz");
        assert_eq!(rfc(b"/%7ejoe"), b"/~joe");
        assert_eq!(rfc(b"/a%2fb"), b"/a%2Fb");
        assert_eq!(rfc(b"/a%2A%24"), b"/a%2A%24");
        assert_eq!(rfc("/ツ".as_bytes()), b"/%E3%83%84");
        assert_eq!(rfc(b"/a b\x01\x7f"), b"/a%20b%01%7F");
        assert_eq!(rfc(b"/%zz%4"), b"/%zz%4");
        assert_eq!(rfc(b"/%25%2541"), b"/%25%2541");
        assert_eq!(rfc(b"*$"), b"*$");
    }

    #[cfg(feature = "compile")]
    #[test]
    fn rfc9309_url_decodes_star_and_dollar_escapes_only() {
        let url = |s: &[u8]| {
            let mut out = Vec::new();
            rfc9309_url(s, |b| {
                out.push(b);
                true
            });
            out
        };
        assert_eq!(url(b"/a%2A%2a%24/b"), b"/a**$/b");
        assert_eq!(url(b"/a*$"), b"/a*$");
        // Every other escape as in a pattern.
        assert_eq!(url(b"/%7e%2f%20%e9"), b"/~%2F%20%E9");
        // A pattern keeps them escaped: a literal octet, never a wildcard.
        assert_eq!(rfc(b"/a%2a%24"), b"/a%2A%24");
    }

    #[test]
    fn rfc9309_stops_when_asked() {
        let mut seen = Vec::new();
        let done = rfc9309(b"/%E3%83", |b| {
            seen.push(b);
            seen.len() < 3
        });
        assert!(!done);
        assert_eq!(seen, b"/%E");
    }
}
