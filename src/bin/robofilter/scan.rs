//! One vectorised pass over a URL line: is it free of control octets and
//! spaces, and where are its path and fragment?
//!
//! `filter` needs three facts per line, which the library would find with
//! three short scans (the not-a-URL check, the path start, the fragment):
//! here one pass over 16-octet blocks computes bit masks of the octets that
//! matter and reads the facts off them. The result is exactly what
//! [`MatchPath::from_url`] gives for a line that starts with `scheme://`
//! (a property test checks it).
//!
//! [`MatchPath::from_url`]: robofilter::MatchPath::from_url

use robofilter::{MatchPath, scheme_len};

/// Classifies the line `buf[..len]` (without its `\n`; `buf` may go on
/// past it) as [`robofilter::url_line`] does, in one vectorised pass: the
/// URL (without a trailing `\r`) and its path, or `None` if the line is not
/// a URL.
///
/// The Python wheel compiles this file into its extension too (by path),
/// so that both front ends classify lines with the same code.
#[inline]
pub fn url_line(buf: &[u8], len: usize) -> Option<(&[u8], MatchPath<'_>)> {
    let line = &buf[..len];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let n = scheme_len(line)?;
    match scan(buf, line.len(), n) {
        Scanned::Path(path) => Some((line, path)),
        Scanned::Bad => None,
    }
}

/// What [`scan`] found.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Scanned<'a> {
    /// The line contains an ASCII control octet, a space or DEL.
    Bad,
    /// The line's path.
    Path(MatchPath<'a>),
}

/// Scans the line `buf[..len]` (without `\r\n`), which starts with
/// `scheme://` where the scheme takes `scheme_len` octets. `buf` may go on
/// past the line (the rest of the chunk): reading whole blocks from it
/// avoids copying the line's last block.
#[inline]
pub fn scan(buf: &[u8], len: usize, scheme_len: usize) -> Scanned<'_> {
    let line = &buf[..len];
    let Some(found) = find(buf, len, scheme_len + 3) else {
        return Scanned::Bad;
    };
    // The path starts at the first `/ ? ; #` after `://`; a `#` there
    // means there is no path. The fragment starts at the first `#` after
    // the path start.
    let tail = match found.delim {
        Some(d) if line[d] != b'#' => {
            let end = match found.any_hash {
                true => {
                    memchr::memchr(b'#', &line[d..]).map_or(len, |k| d + k)
                }
                false => len,
            };
            &line[d..end]
        }
        _ => &[],
    };
    Scanned::Path(MatchPath::from_url_path(tail))
}

/// What one pass over a line found.
struct Found {
    /// The first `/ ? ; #` at or after `from`.
    delim: Option<usize>,
    /// Whether the line has a `#` anywhere.
    any_hash: bool,
}

/// One pass over `buf[..len]`: `None` if an octet is a control octet, a
/// space or DEL.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn find(buf: &[u8], len: usize, from: usize) -> Option<Found> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_setzero_si128,
    };
    // SAFETY: SSE2 is part of every x86_64 target (the baseline). Each
    // unaligned load reads 16 octets of `buf` or of `block`, which the
    // bounds checks below guarantee exist.
    unsafe {
        let space = _mm_set1_epi8(0x20);
        let del = _mm_set1_epi8(0x7f);
        let hash = _mm_set1_epi8(b'#' as i8);
        let delims = [
            _mm_set1_epi8(b'/' as i8),
            _mm_set1_epi8(b'?' as i8),
            _mm_set1_epi8(b';' as i8),
        ];
        // Unsigned `v <= 0x20` is `min(v, 0x20) == v`.
        let bad_of = |v: __m128i| {
            _mm_or_si128(
                _mm_cmpeq_epi8(_mm_min_epu8(v, space), v),
                _mm_cmpeq_epi8(v, del),
            )
        };
        let delim_of = |v: __m128i, h: __m128i| {
            _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, delims[0]),
                    _mm_cmpeq_epi8(v, delims[1]),
                ),
                _mm_or_si128(_mm_cmpeq_epi8(v, delims[2]), h),
            )
        };
        let (mut bad, mut hashes) = (_mm_setzero_si128(), _mm_setzero_si128());
        let mut delim = None;
        let mut tail_hash = false;
        let mut at = 0;
        let mut block = [b'a'; 16];
        while at < len {
            let v = if at + 16 <= buf.len() {
                _mm_loadu_si128(buf[at..at + 16].as_ptr().cast())
            } else {
                block[..buf.len() - at].copy_from_slice(&buf[at..]);
                _mm_loadu_si128(block.as_ptr().cast())
            };
            let h = _mm_cmpeq_epi8(v, hash);
            // Lanes past the line's end are ignored.
            let live: u32 =
                if len - at >= 16 { 0xffff } else { (1 << (len - at)) - 1 };
            if len - at >= 16 {
                bad = _mm_or_si128(bad, bad_of(v));
                hashes = _mm_or_si128(hashes, h);
            } else {
                if _mm_movemask_epi8(bad_of(v)) as u32 & live != 0 {
                    return None;
                }
                tail_hash = _mm_movemask_epi8(h) as u32 & live != 0;
            }
            if delim.is_none() && at + 16 > from {
                let skip = from.saturating_sub(at);
                let d = _mm_movemask_epi8(delim_of(v, h)) as u32
                    & live
                    & (0xffff << skip);
                if d != 0 {
                    delim = Some(at + d.trailing_zeros() as usize);
                }
            }
            at += 16;
        }
        if _mm_movemask_epi8(bad) != 0 {
            return None;
        }
        let any_hash = tail_hash || _mm_movemask_epi8(hashes) != 0;
        Some(Found { delim, any_hash })
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn find(buf: &[u8], len: usize, from: usize) -> Option<Found> {
    let line = &buf[..len];
    if line.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return None;
    }
    let delim = line
        .iter()
        .skip(from)
        .position(|&b| matches!(b, b'/' | b'?' | b';' | b'#'))
        .map(|k| from + k);
    Some(Found { delim, any_hash: line.contains(&b'#') })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the library's path extraction and the filter's not-a-URL
    /// rule, on random lines over the octets that matter, at every length
    /// around the block size.
    #[test]
    fn scan_matches_from_url_and_the_bad_octet_rule() {
        const PIECES: &[&[u8]] = &[
            b"a",
            b"b",
            b"/",
            b"?",
            b";",
            b"#",
            b":",
            b"//",
            b"%",
            b" ",
            b"\t",
            b"\x7f",
            b"\x00",
            b"\xe3\x83\x84",
            b"xxxxxxxxxxxx",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..200_000 {
            let scheme: &[u8] = [&b"http"[..], b"s3+x", b"h"][next(3)];
            let mut line = [scheme, b"://"].concat();
            for _ in 0..next(12) {
                line.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            let bad = line.iter().any(|&b| b <= b' ' || b == 0x7f);
            let want = if bad {
                Scanned::Bad
            } else {
                Scanned::Path(MatchPath::from_url(&line))
            };
            assert_eq!(
                scan(&line, line.len(), scheme.len()),
                want,
                "{:?}",
                line.escape_ascii().to_string()
            );
            // The same line followed by more of the chunk.
            let mut longer = line.clone();
            longer.extend_from_slice(b"\n#/ x\x00?http://y/");
            assert_eq!(scan(&longer, line.len(), scheme.len()), want);
        }
    }
}
