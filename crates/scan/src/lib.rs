//! robofilter's line classifier: one vectorised pass over a frontier line that says whether it starts with a URL and where its scheme, authority, path, fragment and fields are.
//!
//! `robofilter filter` and the Python wheel decide millions of lines per
//! second per core, and each line needs the same few facts: is it a URL at
//! all, where does its authority end (RFC 3986, for the rfc9309 dialect
//! and the host lookup), where does google/robotstxt's path start, and
//! where is the fragment. [`scan`] finds all of them in one pass over
//! blocks of octets (32 with AVX2 where the CPU has it, with the `std`
//! feature that asks it; else 16 with SSE2 on x86_64; a portable fallback
//! elsewhere) and reports them as offsets, so that the library can build
//! the path of either dialect without a second scan.
//!
//! This crate holds the `unsafe` SIMD loads so that the `robofilter`
//! library itself can forbid `unsafe` code, and the other crates need
//! none: [`quotes_and_specials`] (16 octets' JSON string structure) is
//! how CDXJ lines find their `url` without a JSON parse. It knows nothing
//! of robots.txt.
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

#[cfg(any(test, feature = "std"))]
extern crate std;

mod quotes;
#[cfg(test)]
mod tests;

pub use crate::quotes::quotes_and_specials;

use core::ops::ControlFlow;

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
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2::scan(buf, len) };
    }
    // SAFETY: the baseline pass needs nothing of the CPU.
    unsafe { scan_with::<Baseline>(buf, len) }
}

/// [`scan`] with the pass `F`.
///
/// # Safety
///
/// The CPU must have what `F` needs.
#[inline(always)]
unsafe fn scan_with<F: Finder>(buf: &[u8], len: usize) -> Option<Line> {
    let line_len = match buf[..len].last() {
        Some(b'\r') => len - 1,
        _ => len,
    };
    let scheme_len = scheme_len(&buf[..line_len])?;
    // SAFETY: this function's contract.
    let found = unsafe { F::find(buf, line_len, scheme_len + 3) };
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
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2::scan_next(buf) };
    }
    // SAFETY: the baseline pass needs nothing of the CPU.
    unsafe { scan_next_with::<Baseline>(buf) }
}

/// [`scan_next`] with the pass `F`.
///
/// # Safety
///
/// The CPU must have what `F` needs.
#[inline(always)]
unsafe fn scan_next_with<F: Finder>(buf: &[u8]) -> (usize, Option<Line>) {
    let newline = |from: usize| match memchr::memchr(b'\n', &buf[from..]) {
        Some(k) => from + k,
        None => buf.len(),
    };
    // `://` holds no `\n`, so a scheme found in `buf` is in its first line.
    let Some(scheme_len) = scheme_len(buf) else {
        return (newline(0), None);
    };
    // SAFETY: this function's contract.
    let found = unsafe { F::find(buf, buf.len(), scheme_len + 3) };
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

/// Calls `f(start, len, line)` for each line of `chunk` in order, where
/// `(len, line)` is [`scan_next`]`(&chunk[start..])` (the line is
/// `chunk[start..start + len]`), until `f` breaks or the chunk ends.
///
/// This is [`scan_next`] in a loop, with the loop inside the vector
/// pass's target feature: `f` is inlined into it, so a line costs no call
/// into the pass, and the pass's constants are set up once per chunk
/// rather than per line.
///
/// ```
/// use core::ops::ControlFlow;
/// let chunk = b"http://a.example/x\nnot a url\r\nhttps://b/";
/// let mut lines = Vec::new();
/// let _ = robofilter_scan::scan_lines(chunk, |start, len, line| {
///     lines.push((start, len, line.map(|l| l.url_len())));
///     ControlFlow::<()>::Continue(())
/// });
/// assert_eq!(lines, [(0, 18, Some(18)), (19, 10, None), (30, 10, Some(10))]);
/// ```
#[inline]
pub fn scan_lines<B>(
    chunk: &[u8],
    f: impl FnMut(usize, usize, Option<Line>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2::scan_lines(chunk, f) };
    }
    // SAFETY: the baseline pass needs nothing of the CPU.
    unsafe { scan_lines_with::<Baseline, B>(chunk, f) }
}

/// [`scan_lines`] with the pass `F`.
///
/// # Safety
///
/// The CPU must have what `F` needs.
#[inline(always)]
unsafe fn scan_lines_with<F: Finder, B>(
    chunk: &[u8],
    mut f: impl FnMut(usize, usize, Option<Line>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut start = 0;
    while start < chunk.len() {
        // SAFETY: this function's contract.
        let (len, line) = unsafe { scan_next_with::<F>(&chunk[start..]) };
        f(start, len, line)?;
        start += len + 1;
    }
    ControlFlow::Continue(())
}

/// Calls `f(i, buf, line)` for each `i` in `0..n` in order, where
/// `(buf, len) = value(i)` and `line` is [`scan`]`(buf, len)`, until `f`
/// breaks: how a column of values (an Arrow string array, whose values
/// sit one after another in one buffer) is read, with the loop inside
/// the vector pass's target feature, as [`scan_lines`] reads a chunk of
/// lines, so that `f` is inlined into it and a value costs no call.
///
/// ```
/// use core::ops::ControlFlow;
/// let data = b"http://a.example/xnot a url";
/// let offsets = [0, 18, 27];
/// let mut lines = Vec::new();
/// let _ = robofilter_scan::scan_each(
///     2,
///     |i| (&data[offsets[i]..], offsets[i + 1] - offsets[i]),
///     |i, _, line| {
///         lines.push((i, line.map(|l| l.url_len())));
///         ControlFlow::<()>::Continue(())
///     },
/// );
/// assert_eq!(lines, [(0, Some(18)), (1, None)]);
/// ```
#[inline]
pub fn scan_each<'v, B>(
    n: usize,
    value: impl Fn(usize) -> (&'v [u8], usize),
    f: impl FnMut(usize, &'v [u8], Option<Line>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2::scan_each(n, value, f) };
    }
    // SAFETY: the baseline pass needs nothing of the CPU.
    unsafe { scan_each_with::<Baseline, B>(n, value, f) }
}

/// [`scan_each`] with the pass `F`.
///
/// # Safety
///
/// The CPU must have what `F` needs.
#[inline(always)]
unsafe fn scan_each_with<'v, F: Finder, B>(
    n: usize,
    value: impl Fn(usize) -> (&'v [u8], usize),
    mut f: impl FnMut(usize, &'v [u8], Option<Line>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    for i in 0..n {
        let (buf, len) = value(i);
        // SAFETY: this function's contract.
        let line = unsafe { scan_with::<F>(buf, len) };
        f(i, buf, line)?;
    }
    ControlFlow::Continue(())
}

/// The length of the scheme if `line` starts with
/// `[A-Za-z][A-Za-z0-9+.-]*://` (whatever follows).
///
/// ```
/// assert_eq!(robofilter_scan::scheme_len(b"s3+x://bucket/key"), Some(4));
/// assert_eq!(robofilter_scan::scheme_len(b"1http://x/"), None);
/// assert_eq!(robofilter_scan::scheme_len(b"http:/x"), None);
/// ```
#[inline(always)]
pub fn scheme_len(line: &[u8]) -> Option<usize> {
    // Nearly every frontier URL is http or https: tested where the line
    // is scanned, any other scheme out of line.
    if line.starts_with(b"https://") {
        return Some(5);
    } else if line.starts_with(b"http://") {
        return Some(4);
    }
    other_scheme_len(line)
}

/// [`scheme_len`] of a line that starts with neither `http://` nor
/// `https://`.
#[inline(never)]
fn other_scheme_len(line: &[u8]) -> Option<usize> {
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

/// A pass over a line (see [`find`]) as a type, so that [`scan_with`] and
/// [`scan_next_with`] are instantiated per pass without a closure: a
/// closure does not take the target feature of the function it is
/// written in, and the AVX2 pass's intrinsics would be calls.
trait Finder {
    /// [`find`] with this pass.
    ///
    /// # Safety
    ///
    /// The CPU must have what the pass needs.
    unsafe fn find(buf: &[u8], limit: usize, from: usize) -> Found;
}

/// The pass every target has: SSE2 on x86_64, else the portable one.
struct Baseline;

impl Finder for Baseline {
    #[inline(always)]
    unsafe fn find(buf: &[u8], limit: usize, from: usize) -> Found {
        find(buf, limit, from)
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

/// The SIMD operations of [`simd::find`], on vectors of `LANES` octets.
///
/// # Safety
///
/// Every method needs the CPU to have the vector's target feature: always
/// true of SSE2 on x86_64, checked at run time for AVX2.
#[cfg(target_arch = "x86_64")]
trait Vector: Copy {
    /// Octets per vector (at most 32: masks are `u32`).
    const LANES: usize;
    unsafe fn splat(b: u8) -> Self;
    /// The first `LANES` octets of `block`, which holds at least that
    /// many.
    unsafe fn load(block: &[u8]) -> Self;
    unsafe fn eq(self, b: Self) -> Self;
    unsafe fn or(self, b: Self) -> Self;
    /// Lanes where `self <= b` (unsigned).
    unsafe fn le(self, b: Self) -> Self;
    /// One bit per lane, set where the lane's top bit is.
    unsafe fn mask(self) -> u32;
}

/// Implements [`Vector`] for the vector type `$v` of `$lanes` octets with
/// its target feature's intrinsics.
#[cfg(target_arch = "x86_64")]
macro_rules! vector {
    (
        $v:ty,
        $lanes:expr,
        $splat:ident,
        $load:ident,
        $eq:ident,
        $or:ident,
        $min:ident,
        $mask:ident $(,)?
    ) => {
        // SAFETY (every method): the CPU has the target feature (the
        // trait's contract), and `load` checks its length first. SSE2's
        // value intrinsics are safe functions since Rust 1.87 but `unsafe
        // fn`s before, and the crate builds with Rust 1.85: hence
        // `unsafe` blocks that may be unused.
        #[allow(unused_unsafe)]
        impl Vector for $v {
            const LANES: usize = $lanes;

            #[inline(always)]
            unsafe fn splat(b: u8) -> $v {
                unsafe { $splat(b as i8) }
            }

            #[inline(always)]
            unsafe fn load(block: &[u8]) -> $v {
                assert!(block.len() >= $lanes);
                // No alignment needed.
                unsafe { $load(block.as_ptr().cast()) }
            }

            #[inline(always)]
            unsafe fn eq(self, b: $v) -> $v {
                unsafe { $eq(self, b) }
            }

            #[inline(always)]
            unsafe fn or(self, b: $v) -> $v {
                unsafe { $or(self, b) }
            }

            #[inline(always)]
            unsafe fn le(self, b: $v) -> $v {
                unsafe { $eq($min(self, b), self) }
            }

            #[inline(always)]
            unsafe fn mask(self) -> u32 {
                unsafe { $mask(self) as u32 }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
use vector;

/// SSE2, part of every x86_64 target: 16 lanes.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use super::{Found, Vector};

    super::vector!(
        __m128i,
        16,
        _mm_set1_epi8,
        _mm_loadu_si128,
        _mm_cmpeq_epi8,
        _mm_or_si128,
        _mm_min_epu8,
        _mm_movemask_epi8,
    );

    /// [`super::simd::find`] in 16-octet blocks.
    #[inline(always)]
    pub(crate) fn find(buf: &[u8], limit: usize, from: usize) -> Found {
        // SAFETY: SSE2 is part of every x86_64 target.
        unsafe { super::simd::find::<__m128i>(buf, limit, from) }
    }
}

/// AVX2, where the CPU has it (checked once, at run time): 32 lanes, so
/// a line's authority and the rest of a typical URL take a block each.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8,
        _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
    };
    use core::sync::atomic::{AtomicU8, Ordering};

    use core::ops::ControlFlow;

    use super::{Finder, Found, Line, Vector};

    super::vector!(
        __m256i,
        32,
        _mm256_set1_epi8,
        _mm256_loadu_si256,
        _mm256_cmpeq_epi8,
        _mm256_or_si256,
        _mm256_min_epu8,
        _mm256_movemask_epi8,
    );

    /// Whether the CPU has AVX2: asked once, then remembered. Without
    /// `std` (which asks the CPU and the OS) the answer is no.
    #[inline(always)]
    pub(crate) fn available() -> bool {
        // 0: not asked yet, 1: no, 2: yes.
        static HAS: AtomicU8 = AtomicU8::new(0);
        match HAS.load(Ordering::Relaxed) {
            0 => {
                let has = detect();
                HAS.store(1 + u8::from(has), Ordering::Relaxed);
                has
            }
            known => known == 2,
        }
    }

    #[cfg(any(test, feature = "std"))]
    fn detect() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    #[cfg(not(any(test, feature = "std")))]
    fn detect() -> bool {
        false
    }

    /// [`super::simd::find`] in 32-octet blocks (the tests check its raw
    /// facts).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 ([`available`]).
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn find(buf: &[u8], limit: usize, from: usize) -> Found {
        // SAFETY: the CPU has AVX2 (this function's contract).
        unsafe { super::simd::find::<__m256i>(buf, limit, from) }
    }

    /// The AVX2 pass as a [`Finder`].
    pub(crate) struct Avx2;

    impl Finder for Avx2 {
        #[inline(always)]
        unsafe fn find(buf: &[u8], limit: usize, from: usize) -> Found {
            // SAFETY: the CPU has AVX2 (the trait's contract).
            unsafe { super::simd::find::<__m256i>(buf, limit, from) }
        }
    }

    /// [`super::scan_next`] with the AVX2 pass.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn scan_next(buf: &[u8]) -> (usize, Option<Line>) {
        // SAFETY: the CPU has AVX2 (this function's contract).
        unsafe { super::scan_next_with::<Avx2>(buf) }
    }

    /// [`super::scan_lines`] with the AVX2 pass.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn scan_lines<B>(
        chunk: &[u8],
        f: impl FnMut(usize, usize, Option<Line>) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        // SAFETY: the CPU has AVX2 (this function's contract).
        unsafe { super::scan_lines_with::<Avx2, B>(chunk, f) }
    }

    /// [`super::scan_each`] with the AVX2 pass.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn scan_each<'v, B>(
        n: usize,
        value: impl Fn(usize) -> (&'v [u8], usize),
        f: impl FnMut(usize, &'v [u8], Option<Line>) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        // SAFETY: the CPU has AVX2 (this function's contract).
        unsafe { super::scan_each_with::<Avx2, B>(n, value, f) }
    }

    /// [`super::scan`] with the AVX2 pass.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn scan(buf: &[u8], len: usize) -> Option<Line> {
        // SAFETY: the CPU has AVX2 (this function's contract).
        unsafe { super::scan_with::<Avx2>(buf, len) }
    }
}

/// The vector pass, for any [`Vector`]: per block, vector compares give
/// bit masks of the octets that matter; the pass stops at the block of
/// the first control octet (a TAB ends the URL there, any other ends the
/// answer), and the first offset of each class is read off its mask
/// until it is found.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{Found, NONE, Vector};

    /// The block at `buf[at..]`; past `buf`'s end (the chunk ends inside
    /// this block) a copy of what is left, padded with lanes the callers
    /// ignore.
    #[inline(always)]
    unsafe fn block<V: Vector>(buf: &[u8], at: usize) -> V {
        match buf.get(at..at + V::LANES) {
            // SAFETY (both): the trait's contract is the caller's.
            Some(block) => unsafe { V::load(block) },
            None => {
                let mut block = [b'a'; 32];
                block[..buf.len() - at].copy_from_slice(&buf[at..]);
                unsafe { V::load(&block) }
            }
        }
    }

    /// The lanes of a block with `n` octets left before the limit.
    #[inline(always)]
    fn live<V: Vector>(n: usize) -> u32 {
        match n {
            n if n >= V::LANES => all::<V>(),
            n => (1 << n) - 1,
        }
    }

    /// Every lane of a block.
    #[inline(always)]
    fn all<V: Vector>() -> u32 {
        u32::MAX >> (32 - V::LANES)
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

    /// The state of one pass: the splatted octets it compares with, and
    /// the first `/ ?`, `;` and `#` found so far at or after `from`.
    ///
    /// Methods rather than closures: a closure does not take the target
    /// feature of the function it is written in, so in the AVX2 instance
    /// its intrinsics were calls (callgrind: twice the instructions).
    struct Pass<V> {
        unit: V,
        del: V,
        slash: V,
        query: V,
        semicolon: V,
        hash: V,
        slash_query: usize,
        semi: usize,
        hash_at: usize,
    }

    impl<V: Vector> Pass<V> {
        /// # Safety
        ///
        /// The CPU must have `V`'s target feature (so must every method's
        /// caller).
        #[inline(always)]
        unsafe fn new() -> Pass<V> {
            // SAFETY: this function's contract.
            unsafe {
                Pass {
                    unit: V::splat(0x1f),
                    del: V::splat(0x7f),
                    slash: V::splat(b'/'),
                    query: V::splat(b'?'),
                    semicolon: V::splat(b';'),
                    hash: V::splat(b'#'),
                    slash_query: NONE,
                    semi: NONE,
                    hash_at: NONE,
                }
            }
        }

        /// The control octets' lanes (see [`is_control`](super::is_control)).
        #[inline(always)]
        unsafe fn controls(&self, v: V) -> V {
            // SAFETY: the contract of `new`.
            unsafe { v.le(self.unit).or(v.eq(self.del)) }
        }

        /// Phase 1 on the block `v` at `at` with lanes `live`: `Err` stops
        /// the pass at a control octet, `Ok(true)` when `/ ?` was found.
        #[inline(always)]
        unsafe fn phase1(
            &mut self,
            v: V,
            at: usize,
            live: u32,
        ) -> Result<bool, usize> {
            // SAFETY: the contract of `new`.
            unsafe {
                let stop = self.controls(v).mask() & live;
                let want = before(stop, live);
                let sq = v.eq(self.slash).or(v.eq(self.query)).mask() & want;
                // `;` and `#` are rare: one mask tells whether either is
                // here.
                let (s, h) = (v.eq(self.semicolon), v.eq(self.hash));
                if s.or(h).mask() & want != 0 {
                    self.semi = self.semi.min(first(at, s.mask() & want));
                    self.hash_at =
                        self.hash_at.min(first(at, h.mask() & want));
                }
                self.slash_query = first(at, sq);
                match stop {
                    0 => Ok(sq != 0),
                    stop => Err(at + stop.trailing_zeros() as usize),
                }
            }
        }

        /// Phase 2 on the block `v` at `at` with lanes `live`: where the
        /// URL ends, if it ends in this block.
        #[inline(always)]
        unsafe fn phase2(
            &mut self,
            v: V,
            at: usize,
            live: u32,
        ) -> Option<usize> {
            // SAFETY: the contract of `new`.
            unsafe {
                let hash = v.eq(self.hash);
                if self.controls(v).or(hash).mask() & live == 0 {
                    return None;
                }
                let stop = self.controls(v).mask() & live;
                if self.hash_at == NONE {
                    self.hash_at = first(at, hash.mask() & before(stop, live));
                }
                (stop != 0).then(|| at + stop.trailing_zeros() as usize)
            }
        }

        /// What the pass found, with the URL ending at `url_end`.
        #[inline(always)]
        fn found(&self, url_end: usize) -> Found {
            Found {
                url_end,
                path: self.slash_query.min(self.semi),
                authority: self.slash_query.min(self.hash_at),
                hash: self.hash_at,
            }
        }
    }

    /// In two phases: up to the first `/ ?` after `from` (the authority's
    /// end and, nearly always, google's path start: in the first block or
    /// two), every class is looked for; after it, only the first `#` and
    /// the first control octet still matter, so the rest of the line costs
    /// one compare mask and one branch per block.
    ///
    /// # Safety
    ///
    /// The CPU must have `V`'s target feature.
    #[inline(always)]
    pub(super) unsafe fn find<V: Vector>(
        buf: &[u8],
        limit: usize,
        from: usize,
    ) -> Found {
        assert!(limit <= buf.len());
        // SAFETY (every `unsafe` below): the CPU has `V`'s target feature
        // (this function's contract).
        let mut pass = unsafe { Pass::<V>::new() };
        // `scheme://` holds no control octet: the pass starts after it,
        // so that every lane it looks at is at or after `from`.
        let mut at = from;
        // Phase 1, a block at a time (whole blocks need no lanes masked).
        loop {
            let step = match buf[..limit].get(at..at + V::LANES) {
                Some(whole) => unsafe {
                    pass.phase1(V::load(whole), at, all::<V>())
                },
                None if at < limit => unsafe {
                    pass.phase1(block(buf, at), at, live::<V>(limit - at))
                },
                None => break,
            };
            at += V::LANES;
            match step {
                Ok(false) => {}
                Ok(true) => break,
                Err(url_end) => return pass.found(url_end),
            }
        }
        // Phase 2: whole blocks first (no lanes past the limit to mask),
        // then the block the limit cuts.
        while let Some(whole) = buf[..limit].get(at..at + V::LANES) {
            let end = unsafe { pass.phase2(V::load(whole), at, all::<V>()) };
            if let Some(url_end) = end {
                return pass.found(url_end);
            }
            at += V::LANES;
        }
        if at < limit {
            let v = unsafe { block(buf, at) };
            let end = unsafe { pass.phase2(v, at, live::<V>(limit - at)) };
            if let Some(url_end) = end {
                return pass.found(url_end);
            }
        }
        pass.found(limit)
    }
}
