//! Stage two of the chunk scan ([`crate::scan_lines`]): each line's facts read off stage one's bitmaps ([`crate::bitmaps`]) by bit arithmetic, with no loop over the line's octets.
//!
//! simdjson's structural index is the model: one vector pass classifies
//! the octets, and the parser then works on bits. Per line:
//!
//! - the scheme is tested on the line's first octets (nearly always
//!   `https://` or `http://`, one compare each: [`crate::scheme_len`]);
//! - from just after `://`, the first octet where the URL's scan stops
//!   (a control octet, `;` or `#`) is the lowest set bit of the `stop`
//!   bitmap, and the first `/ ?` the lowest of its bitmap. The 128 bits
//!   from `://` on (two funnel shifts of three words) hold the rest of
//!   nearly every URL, whatever octet of a word it starts at, so the
//!   branch to the scan of longer URLs is almost never taken;
//! - that octet is nearly always the `\n` (or the `\r` before it), which
//!   ends the URL and the line. A `;` or `#` there (in about one URL in
//!   fifteen in a crawl frontier) is the first of its kind, and the scan
//!   goes on at the next set bit: a step per `;` or `#`, never per octet
//!   of the URL. A TAB ends the URL, and memchr finds the `\n` after the
//!   fields, as it does after any other control octet and in a line that
//!   is not a URL;
//! - a longer URL, one that stops at another control octet, and a line
//!   that is not a URL go to [`Lines::other_line`], which reads the
//!   bitmaps 128 octets at a time. `f` is called in two places, so that
//!   the common line's facts reach it in registers.
//!
//! A line's end is not searched for apart: it is where the URL's scan
//! stops. That puts the scan on the chain from one line's start to the
//! next, but lines are short (a word or two each), and the chain is a few
//! loads and bit operations long.
//!
//! Stage two asks for words in increasing order only, so the bitmaps are
//! built [`BATCH`] words at a time just ahead of it: they stay in the L1
//! cache, and a chunk of any size needs no more memory than one batch.

use core::marker::PhantomData;
use core::ops::ControlFlow;

use crate::bitmaps::{BATCH, Batch, Classify, WORD};
use crate::{Found, Line, NONE, scheme_len};

/// [`crate::scan_lines`] with the classifier `C`.
///
/// # Safety
///
/// The CPU must have what `C` needs.
#[inline(always)]
pub(crate) unsafe fn scan_lines_with<C: Classify, B>(
    chunk: &[u8],
    mut f: impl FnMut(usize, usize, Option<Line>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    if chunk.is_empty() {
        return ControlFlow::Continue(());
    }
    // SAFETY: this function's contract (and below).
    let mut lines = unsafe { Lines::<C>::new(chunk) };
    let mut start = 0;
    while start < chunk.len() {
        // `f` is called apart for the common line and the others, so
        // that the common line's facts reach it in registers (not through
        // the memory a call out of line returns them in).
        let end = match unsafe { lines.common_line(start) } {
            Some((end, line)) => {
                f(start, end - start, line)?;
                end
            }
            None => {
                let (end, line) = unsafe { lines.other_line(start) };
                f(start, end - start, line)?;
                end
            }
        };
        start = end + 1;
    }
    ControlFlow::Continue(())
}

/// Stage two's state: the chunk, and the batch of bitmaps that holds the
/// words it reads now.
struct Lines<'c, C> {
    chunk: &'c [u8],
    /// The index of the batch's first word.
    first: usize,
    batch: Batch,
    classify: PhantomData<C>,
}

impl<'c, C: Classify> Lines<'c, C> {
    /// # Safety
    ///
    /// The CPU must have what `C` needs (so must every method's caller).
    #[inline(always)]
    unsafe fn new(chunk: &'c [u8]) -> Lines<'c, C> {
        let mut lines = Lines {
            chunk,
            first: 0,
            batch: Batch::EMPTY,
            classify: PhantomData,
        };
        // SAFETY: this function's contract.
        unsafe { C::fill(chunk, 0, &mut lines.batch) };
        lines
    }

    /// The index in the batch of the word that holds octet `at`, where
    /// the next two words are too (all a [`window`] reads), after filling
    /// the batch from that word if it lacks any of them. Words are asked
    /// for in increasing order only, so each is classified about once.
    #[inline(always)]
    unsafe fn words(&mut self, at: usize) -> usize {
        let w = at / WORD;
        let i = w.wrapping_sub(self.first);
        if i <= BATCH - 3 {
            return i;
        }
        // SAFETY: the contract of `new`.
        unsafe { C::fill(self.chunk, w, &mut self.batch) };
        self.first = w;
        0
    }

    /// The common line at `start`, a URL whose rest after `://` is under
    /// 128 octets and that ends there (or at a TAB): where it ends (its
    /// `\n`, or the chunk's end) and its facts, read off the 128 bits of
    /// each bitmap from `://` on (see the module docs). `None` for any
    /// other line.
    #[inline(always)]
    unsafe fn common_line(
        &mut self,
        start: usize,
    ) -> Option<(usize, Option<Line>)> {
        let chunk = self.chunk;
        // `://` holds no `\n`, so a scheme found here is in this line.
        let scheme_len = scheme_len(&chunk[start..])?;
        let from = start + scheme_len + 3;
        let shift = from % WORD;
        // SAFETY: the contract of `new`.
        let i = unsafe { self.words(from) };
        // Words `i..i + 3` are in the batch: said so that the compiler
        // checks no index below.
        let i = i.min(BATCH - 3);
        let at = from - start;
        let stops = window(&self.batch.stop, i, shift);
        let mut found = self.stops(start, at, stops).ok()?;
        let (end, line_end) = self.line_end(start + found.url_end)?;
        // The first `/ ?` is nearly always in the first 64 bits; one past
        // the URL (none in it) is as good as none (see `Found`).
        let slash_query = window(&self.batch.slash_query, i, shift);
        let slash_query = at
            + match slash_query as u64 {
                0 => slash_query.trailing_zeros() as usize,
                bits => bits.trailing_zeros() as usize,
            };
        found.path = found.path.min(slash_query);
        found.authority = found.authority.min(slash_query);
        // The URL is not empty: it starts with `scheme://`.
        let last = chunk[start + found.url_end - 1];
        Some((end, found.line(last, line_end - start, scheme_len)))
    }

    /// The URL's end and its first `;` and `#` (as `path` and `authority`
    /// so far, and `hash`) off `stops`, the `stop` bits of the octets from
    /// offset `at` of the line at `start` on: the first that is neither a
    /// `;` nor a `#` ends the URL. If none does, the first `;` and `#`
    /// (either [`NONE`]) as the error.
    #[inline(always)]
    fn stops(
        &self,
        start: usize,
        at: usize,
        mut stops: u128,
    ) -> Result<Found, (usize, usize)> {
        let (mut semicolon, mut hash) = (NONE, NONE);
        while stops != 0 {
            let k = at + stops.trailing_zeros() as usize;
            match self.chunk.get(start + k) {
                // The first of each is the first found: `k` goes up.
                Some(b';') => semicolon = semicolon.min(k),
                Some(b'#') => hash = hash.min(k),
                _ => {
                    return Ok(Found {
                        url_end: k,
                        path: semicolon,
                        authority: hash,
                        hash,
                    });
                }
            }
            stops &= stops - 1;
        }
        Err((semicolon, hash))
    }

    /// Any line at `start` (those that are not
    /// [common](Self::common_line) in particular): where it ends (its
    /// `\n`, or the chunk's end), and its facts.
    #[cold]
    #[inline(never)]
    unsafe fn other_line(&mut self, start: usize) -> (usize, Option<Line>) {
        let chunk = self.chunk;
        let Some(scheme_len) = scheme_len(&chunk[start..]) else {
            return (self.newline(start), None);
        };
        // SAFETY: the contract of `new`.
        let found = unsafe { self.url(start, start + scheme_len + 3) };
        // The first control octet, or the chunk's end.
        let stop = start + found.url_end;
        let Some((end, line_end)) = self.line_end(stop) else {
            return (self.newline(stop + 1), None);
        };
        // The URL is not empty: it starts with `scheme://`.
        let last = chunk[stop - 1];
        (end, found.line(last, line_end - start, scheme_len))
    }

    /// Where the line whose URL stops at `stop` (a control octet, `;`,
    /// `#`, or the chunk's end) ends, and where its text does (before a
    /// `\r` that ends it): `None` if the URL is not one, or its facts are
    /// not all known (the octet is neither a TAB nor the line's end).
    #[inline(always)]
    fn line_end(&self, stop: usize) -> Option<(usize, usize)> {
        let chunk = self.chunk;
        Some(match chunk.get(stop) {
            None | Some(b'\n') => (stop, stop),
            Some(b'\r') if chunk.get(stop + 1).is_none_or(|&b| b == b'\n') => {
                (stop + 1, stop)
            }
            Some(b'\t') => {
                let end = self.newline(stop + 1);
                match chunk[end - 1] {
                    b'\r' => (end, end - 1),
                    _ => (end, end),
                }
            }
            _ => return None,
        })
    }

    /// The first `\n` at or after `from`, or the chunk's end.
    #[inline(always)]
    fn newline(&self, from: usize) -> usize {
        match memchr::memchr(b'\n', &self.chunk[from..]) {
            Some(k) => from + k,
            None => self.chunk.len(),
        }
    }

    /// For the line at `start` whose authority starts at `from`: its
    /// first control octet at or after `from` (the chunk's end if there
    /// is none) as `url_end`, and the first octet of each class at or
    /// after `from` before it, all as offsets from `start` (at or past
    /// `url_end`, or [`NONE`], if there is none, as [`Found`] allows): 128
    /// octets at a time.
    #[inline(always)]
    unsafe fn url(&mut self, start: usize, from: usize) -> Found {
        let (mut slash_query, mut semicolon, mut hash) = (NONE, NONE, NONE);
        let mut at = from;
        loop {
            let shift = at % WORD;
            // SAFETY: the contract of `new`.
            let i = unsafe { self.words(at) };
            // As in `common_line`.
            let i = i.min(BATCH - 3);
            let rel = at - start;
            // Each step is past the last: the first found is the lowest.
            let bits = window(&self.batch.slash_query, i, shift);
            if slash_query == NONE && bits != 0 {
                slash_query = rel + bits.trailing_zeros() as usize;
            }
            let stops = window(&self.batch.stop, i, shift);
            match self.stops(start, rel, stops) {
                Ok(mut found) => {
                    found.path = found.path.min(semicolon).min(slash_query);
                    found.hash = found.hash.min(hash);
                    found.authority = found.hash.min(slash_query);
                    return found;
                }
                // No control octet in these 128: their `;` and `#` count.
                Err((s, h)) => {
                    (semicolon, hash) = (semicolon.min(s), hash.min(h))
                }
            }
            at += 128;
        }
    }
}

/// The 128 bits of a class's bitmaps from bit `shift` (below 64) of word
/// `i` on: two funnel shifts of words `i..i + 3`.
#[inline(always)]
fn window(bits: &[u64; BATCH], i: usize, shift: usize) -> u128 {
    let (a, b, c) = (bits[i], bits[i + 1], bits[i + 2]);
    let low = ((u128::from(b) << 64 | u128::from(a)) >> shift) as u64;
    let high = ((u128::from(c) << 64 | u128::from(b)) >> shift) as u64;
    u128::from(high) << 64 | u128::from(low)
}
