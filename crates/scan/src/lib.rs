//! robofilter's line classifier: one vectorised pass over a frontier line that says whether it starts with a URL and where its scheme, authority, path, fragment and fields are.
//!
//! `robofilter filter` and the Python wheel decide millions of lines per
//! second per core, and each line needs the same few facts: is it a URL at
//! all, where does its authority end (RFC 3986, for the rfc9309 dialect
//! and the host lookup), where does google/robotstxt's path start, and
//! where is the fragment. [`scan`] finds all of them in one pass over
//! 16-octet blocks (SSE2 on x86_64, a portable fallback elsewhere) and
//! reports them as offsets, so that the library can build the path of
//! either dialect without a second scan.
//!
//! This crate holds the `unsafe` SIMD loads so that the `robofilter`
//! library itself can forbid `unsafe` code. It knows nothing of robots.txt.
//!
//! # What is a URL line
//!
//! A frontier line (without its `\n`, and with one trailing `\r` stripped)
//! is a URL, optionally followed by a TAB and *fields* (Nutch and
//! StormCrawler keep `URL<TAB>key=value<TAB>...`). The URL is the line up
//! to its first TAB, or the whole line. It is a URL if it starts with
//! `scheme://`, where the scheme is `[A-Za-z][A-Za-z0-9+.-]*`, holds no
//! ASCII control octet (0x00-0x1F, 0x7F) and does not end with a space.
//! Spaces inside it and octets above 0x7F (UTF-8) are allowed. The fields
//! may hold any octet but `\n`; this crate does not look at them.
//!
//! # Example
//!
//! ```
//! let line = b"https://example.com/a;b?c#top\r";
//! let url = robofilter_scan::scan(line, line.len()).unwrap();
//! assert_eq!(url.url_len(), line.len() - 1);
//! assert_eq!(url.scheme_len(), 5);
//! assert_eq!(&line[url.authority_start()..url.authority_end()], b"example.com");
//! assert_eq!(url.path_start(), Some(19));
//! assert_eq!(url.fragment(), Some(25));
//!
//! let line = b"https://example.com/a b\tfetched=1\tscore=0.5";
//! let url = robofilter_scan::scan(line, line.len()).unwrap();
//! assert_eq!(url.url_len(), 23);
//! assert_eq!(url.fields(), Some(24));
//!
//! assert_eq!(robofilter_scan::scan(b"https://example.com/a ", 22), None);
//! assert_eq!(robofilter_scan::scan(b"example.com/a", 13), None);
//! ```

#![no_std]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;

/// Facts about one URL line, all offsets into the line (see [`scan`]).
///
/// Every offset after the scheme is at least
/// [`authority_start`](Line::authority_start) and below
/// [`url_len`](Line::url_len), except `authority_end`, which is `url_len`
/// when no `/ ? #` follows `://`.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Line {
    url_len: usize,
    line_len: usize,
    scheme_len: usize,
    authority_end: usize,
    path_start: Option<usize>,
    fragment: Option<usize>,
}

impl Line {
    /// The URL's length: up to the line's first TAB, or the line's length
    /// without one trailing `\r`.
    #[inline]
    pub fn url_len(&self) -> usize {
        self.url_len
    }

    /// The line's length without one trailing `\r`: the URL, and its TAB
    /// and fields if it has them.
    #[inline]
    pub fn line_len(&self) -> usize {
        self.line_len
    }

    /// Where the fields start (just after the first TAB), if the line has
    /// a TAB. The fields are then `line[fields..line_len]`, possibly empty.
    #[inline]
    pub fn fields(&self) -> Option<usize> {
        (self.url_len < self.line_len).then_some(self.url_len + 1)
    }

    /// The length of the scheme (`[A-Za-z][A-Za-z0-9+.-]*`), which `://`
    /// follows.
    #[inline]
    pub fn scheme_len(&self) -> usize {
        self.scheme_len
    }

    /// Where the authority starts: just after `://`.
    #[inline]
    pub fn authority_start(&self) -> usize {
        self.scheme_len + 3
    }

    /// Where the authority ends (RFC 3986 section 3.2): the first `/`, `?`
    /// or `#` after `://`, or [`url_len`](Line::url_len) if there is none.
    #[inline]
    pub fn authority_end(&self) -> usize {
        self.authority_end
    }

    /// The first `/`, `?` or `;` after `://`: where google/robotstxt's
    /// `GetPathParamsQuery` starts the path (its path is `/` when this is
    /// `None` or a [`fragment`](Line::fragment) comes first).
    #[inline]
    pub fn path_start(&self) -> Option<usize> {
        self.path_start
    }

    /// The first `#` after `://`: where the fragment starts.
    #[inline]
    pub fn fragment(&self) -> Option<usize> {
        self.fragment
    }
}

/// Classifies the line `buf[..len]` (without its `\n`) in one pass: its
/// [`Line`] facts, or `None` if it does not start with a URL (see the crate
/// docs: after one trailing `\r` is stripped and up to the first TAB, no
/// `scheme://` at the start, a control octet, or a trailing space).
///
/// `buf` may go on past `len` (the rest of the caller's chunk): the octets
/// there never change the result, and reading whole blocks from them saves
/// copying the line's last block.
///
/// # Panics
///
/// If `len > buf.len()`.
///
/// ```
/// let chunk = b"http://a.example/x#f\nnot a url\n";
/// let line = robofilter_scan::scan(chunk, 20).unwrap();
/// assert_eq!((line.authority_end(), line.path_start()), (16, Some(16)));
/// assert_eq!(line.fragment(), Some(18));
/// assert_eq!(robofilter_scan::scan(&chunk[21..], 9), None);
/// ```
#[inline]
pub fn scan(buf: &[u8], len: usize) -> Option<Line> {
    let line_len = match buf[..len].last() {
        Some(b'\r') => len - 1,
        _ => len,
    };
    let scheme_len = scheme_len(&buf[..line_len])?;
    let found = find(buf, line_len, scheme_len + 3);
    if found.url_end < line_len && buf[found.url_end] != b'\t' {
        return None;
    }
    found.line(buf, line_len, scheme_len)
}

/// Classifies the first line of `buf` (up to its first `\n`, or all of
/// `buf`) and finds where it ends, in one pass for a line without fields:
/// `(end, line)` where `end` is the offset of the `\n` (`buf.len()` if
/// there is none) and `line` is [`scan`]`(buf, end)`.
///
/// This is how a frontier is read: the pass that classifies a URL line
/// stops at its first control octet, which for most lines is the `\n`
/// (or the `\r` before it), so the newline is not searched for apart.
/// Only a line with fields, or one that is not a URL, is searched on for
/// its `\n`.
///
/// ```
/// let chunk = b"http://a.example/x\r\nnot a url\nhttp://b/\tf=1\n";
/// let (end, line) = robofilter_scan::scan_next(chunk);
/// assert_eq!((end, line.unwrap().url_len()), (19, 18));
/// let (end, line) = robofilter_scan::scan_next(&chunk[20..]);
/// assert_eq!((end, line), (9, None));
/// let (end, line) = robofilter_scan::scan_next(&chunk[30..]);
/// assert_eq!((end, line.unwrap().fields()), (13, Some(10)));
/// ```
#[inline]
pub fn scan_next(buf: &[u8]) -> (usize, Option<Line>) {
    let newline = |from: usize| match memchr::memchr(b'\n', &buf[from..]) {
        Some(k) => from + k,
        None => buf.len(),
    };
    // `://` holds no `\n`, so a scheme found in `buf` is in its first line.
    let Some(scheme_len) = scheme_len(buf) else {
        return (newline(0), None);
    };
    let found = find(buf, buf.len(), scheme_len + 3);
    let stop = found.url_end;
    let (end, line_len) = match buf.get(stop) {
        None | Some(b'\n') => (stop, stop),
        Some(b'\r') => match buf.get(stop + 1) {
            None | Some(b'\n') => (stop + 1, stop),
            Some(_) => return (newline(stop), None),
        },
        Some(b'\t') => {
            let end = newline(stop);
            match buf[stop..end].last() {
                Some(b'\r') => (end, end - 1),
                _ => (end, end),
            }
        }
        Some(_) => return (newline(stop), None),
    };
    (end, found.line(buf, line_len, scheme_len))
}

/// The length of the scheme if `line` starts with
/// `[A-Za-z][A-Za-z0-9+.-]*://` (whatever follows).
///
/// ```
/// assert_eq!(robofilter_scan::scheme_len(b"s3+x://bucket/key"), Some(4));
/// assert_eq!(robofilter_scan::scheme_len(b"1http://x/"), None);
/// assert_eq!(robofilter_scan::scheme_len(b"http:/x"), None);
/// ```
#[inline]
pub fn scheme_len(line: &[u8]) -> Option<usize> {
    // Nearly every frontier URL is http or https.
    if line.starts_with(b"https://") {
        return Some(5);
    } else if line.starts_with(b"http://") {
        return Some(4);
    }
    let (first, rest) = line.split_first()?;
    let scheme =
        |b: &&u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-');
    let n = rest.iter().take_while(scheme).count();
    (first.is_ascii_alphabetic() && rest[n..].starts_with(b"://"))
        .then_some(n + 1)
}

/// No such octet (an offset no line reaches).
const NONE: usize = usize::MAX;

/// What one pass found: where it stopped, and the first offset at or
/// after `from` and before that stop of each class of octets, [`NONE`] if
/// there is none.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
struct Found {
    /// The first control octet, or the limit: where the URL ends if that
    /// octet is a TAB (or the line's end).
    url_end: usize,
    /// `/ ? ;`: google's path start.
    path: usize,
    /// `/ ? #`: the authority's end.
    authority: usize,
    /// `#`.
    hash: usize,
}

impl Found {
    /// The facts of a line of `line_len` octets whose URL ends at
    /// `self.url_end` (the caller has checked the octet there), or `None`
    /// if the URL ends with a space.
    #[inline(always)]
    fn line(
        self,
        buf: &[u8],
        line_len: usize,
        scheme_len: usize,
    ) -> Option<Line> {
        // The URL is not empty: it starts with `scheme://`.
        if buf[self.url_end - 1] == b' ' {
            return None;
        }
        let some = |k: usize| (k != NONE).then_some(k);
        Some(Line {
            url_len: self.url_end,
            line_len,
            scheme_len,
            authority_end: self.authority.min(self.url_end),
            path_start: some(self.path),
            fragment: some(self.hash),
        })
    }
}

/// Whether `b` is a control octet (a TAB ends the URL; any other makes the
/// line not a URL).
#[inline(always)]
fn is_control(b: u8) -> bool {
    (b < b' ') | (b == 0x7f)
}

/// One pass over `buf[..limit]` up to its first [control](is_control)
/// octet: where that is (`limit` if there is none), and the first octets
/// of each class at or after `from` before it.
///
/// `buf[..from]` must hold no control octet (it is `scheme://`), so the
/// pass may start at `from`.
#[inline(always)]
fn find(buf: &[u8], limit: usize, from: usize) -> Found {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::find(buf, limit, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        portable::find(buf, limit, from)
    }
}

/// The fallback for targets without SSE2: the first control octet, then
/// memchr's searches (SIMD on aarch64 and wasm32 too) in the URL.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable {
    use super::{Found, NONE, is_control};

    #[inline(always)]
    pub(crate) fn find(buf: &[u8], limit: usize, from: usize) -> Found {
        let line = &buf[..limit];
        let url_end =
            line.iter().position(|&b| is_control(b)).unwrap_or(limit);
        let rest = line.get(from..url_end).unwrap_or_default();
        let at = |k: Option<usize>| k.map_or(NONE, |k| from + k);
        Found {
            url_end,
            path: at(memchr::memchr3(b'/', b'?', b';', rest)),
            authority: at(memchr::memchr3(b'/', b'?', b'#', rest)),
            hash: at(memchr::memchr(b'#', rest)),
        }
    }
}

/// The SSE2 pass (SSE2 is part of every x86_64 target): per 16-octet
/// block, vector compares give bit masks of the octets that matter; the
/// pass stops at the block of the first control octet (a TAB ends the URL
/// there, any other ends the answer), and the first offset of each class
/// is read off its mask until it is found.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use super::{Found, NONE};

    // The value intrinsics below are safe functions since Rust 1.87 (SSE2
    // is enabled for every x86_64 target) but `unsafe fn`s before, and the
    // crate builds with Rust 1.85: hence `unsafe` blocks that may be unused.

    #[inline(always)]
    fn splat(b: u8) -> __m128i {
        // SAFETY: SSE2 is part of every x86_64 target; no memory access.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_set1_epi8(b as i8)
        }
    }

    #[inline(always)]
    fn eq(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of every x86_64 target; no memory access.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_cmpeq_epi8(a, b)
        }
    }

    #[inline(always)]
    fn or(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of every x86_64 target; no memory access.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_or_si128(a, b)
        }
    }

    /// Lanes where `a <= b` (unsigned): `min(a, b) == a`.
    #[inline(always)]
    fn le(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of every x86_64 target; no memory access.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_cmpeq_epi8(_mm_min_epu8(a, b), a)
        }
    }

    /// One bit per lane, set where the lane's top bit is.
    #[inline(always)]
    fn mask(a: __m128i) -> u32 {
        // SAFETY: SSE2 is part of every x86_64 target; no memory access.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_movemask_epi8(a) as u32
        }
    }

    #[inline(always)]
    fn load(block: &[u8; 16]) -> __m128i {
        // SAFETY: `block` is 16 readable octets, `_mm_loadu_si128` has no
        // alignment requirement, and SSE2 is part of every x86_64 target.
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    /// The 16 octets at `buf[at..]`; past `buf`'s end (the chunk ends
    /// inside this block) a copy of what is left, padded with lanes the
    /// callers ignore.
    #[inline(always)]
    fn block(buf: &[u8], at: usize) -> __m128i {
        match buf.get(at..at + 16) {
            Some(block) => load(block.try_into().expect("16 octets")),
            None => {
                let mut block = [b'a'; 16];
                block[..buf.len() - at].copy_from_slice(&buf[at..]);
                load(&block)
            }
        }
    }

    /// The lanes of a block with `n` octets left before the limit.
    #[inline(always)]
    fn live(n: usize) -> u32 {
        match n {
            n if n >= 16 => 0xffff,
            n => (1 << n) - 1,
        }
    }

    /// The lanes below the first set bit of `control`, or `live` if none
    /// is set: the block's lanes that belong to the URL.
    #[inline(always)]
    fn before(control: u32, live: u32) -> u32 {
        match control {
            0 => live,
            c => (1 << c.trailing_zeros()) - 1,
        }
    }

    /// The offset of the first set bit of `m` in the block at `at`.
    #[inline(always)]
    fn first(at: usize, m: u32) -> usize {
        match m {
            0 => NONE,
            m => at + m.trailing_zeros() as usize,
        }
    }

    /// In two phases: up to the first `/ ?` after `from` (the authority's
    /// end and, nearly always, google's path start: in the first block or
    /// two), every class is looked for; after it, only the first `#` and
    /// the first control octet still matter, so the rest of the line costs
    /// one compare mask and one branch per block.
    #[inline(always)]
    pub(crate) fn find(buf: &[u8], limit: usize, from: usize) -> Found {
        assert!(limit <= buf.len());
        let (unit, del) = (splat(0x1f), splat(0x7f));
        let (slash, query) = (splat(b'/'), splat(b'?'));
        let (semicolon, hash) = (splat(b';'), splat(b'#'));
        let control = |v: __m128i| or(le(v, unit), eq(v, del));
        // The first `/ ?`, `;` and `#` at or after `from`.
        let (mut slash_query, mut semi, mut hash_at) = (NONE, NONE, NONE);
        let found =
            |url_end, slash_query: usize, semi: usize, hash_at| Found {
                url_end,
                path: slash_query.min(semi),
                authority: slash_query.min(hash_at),
                hash: hash_at,
            };
        // `scheme://` holds no control octet: the pass starts after it,
        // so that every lane it looks at is at or after `from`.
        let mut at = from;
        // Phase 1, a block at a time (whole blocks need no lanes masked):
        // `Err` stops the pass at a control octet, `Ok(true)` when `/ ?`
        // was found.
        let mut phase1 = |v: __m128i, at: usize, live: u32| {
            let stop = mask(control(v)) & live;
            let want = before(stop, live);
            let sq = mask(or(eq(v, slash), eq(v, query))) & want;
            // `;` and `#` are rare: one mask tells whether either is here.
            let (s, h) = (eq(v, semicolon), eq(v, hash));
            if mask(or(s, h)) & want != 0 {
                semi = semi.min(first(at, mask(s) & want));
                hash_at = hash_at.min(first(at, mask(h) & want));
            }
            slash_query = first(at, sq);
            match stop {
                0 => Ok(sq != 0),
                stop => Err(at + stop.trailing_zeros() as usize),
            }
        };
        loop {
            let step = match buf[..limit].get(at..at + 16) {
                Some(whole) => phase1(
                    load(whole.try_into().expect("16 octets")),
                    at,
                    0xffff,
                ),
                None if at < limit => {
                    phase1(block(buf, at), at, live(limit - at))
                }
                None => break,
            };
            at += 16;
            match step {
                Ok(false) => {}
                Ok(true) => break,
                Err(url_end) => {
                    return found(url_end, slash_query, semi, hash_at);
                }
            }
        }
        // Phase 2: whole blocks first (no lanes past the limit to mask),
        // then the block the limit cuts.
        let mut phase2 = |v: __m128i, at: usize, live: u32| {
            if mask(or(control(v), eq(v, hash))) & live == 0 {
                return None;
            }
            let stop = mask(control(v)) & live;
            if hash_at == NONE {
                hash_at = first(at, mask(eq(v, hash)) & before(stop, live));
            }
            (stop != 0).then(|| at + stop.trailing_zeros() as usize)
        };
        while let Some(whole) = buf[..limit].get(at..at + 16) {
            if let Some(url_end) =
                phase2(load(whole.try_into().expect("16 octets")), at, 0xffff)
            {
                return found(url_end, slash_query, semi, hash_at);
            }
            at += 16;
        }
        if at < limit {
            if let Some(url_end) = phase2(block(buf, at), at, live(limit - at))
            {
                return found(url_end, slash_query, semi, hash_at);
            }
        }
        found(limit, slash_query, semi, hash_at)
    }
}
