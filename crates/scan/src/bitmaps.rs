//! Stage one of the chunk scan ([`crate::scan_lines`]): a run of a chunk's 64-octet words classified in one vector pass into bitmaps, a `u64` per word for each class of octet that a line's facts come from.
//!
//! A [`Batch`] holds the bitmaps of [`BATCH`] consecutive words, as one
//! array per class so that stage two ([`crate::lines`]) reads neighbouring
//! words of a class together. Two classes are all the facts need:
//!
//! - `stop`: the octets a URL's scan stops at: the
//!   [control](crate::is_control) octets (the newline, TAB and `\r` among
//!   them: the first one after `://` is where the URL ends, and nearly
//!   always where the line ends), and `;` and `#`, which are rare in a
//!   URL, and which stage two tells apart from the control octets by the
//!   octet;
//! - `/ ?`: both end the authority and start google's path.
//!
//! A newline or TAB bitmap would cost as much as a class, and only lines
//! with fields or that are not URLs would use it: their `\n` is found
//! with memchr. With AVX2 a class costs two to five vector instructions
//! and a movemask per 32 octets, and a store per word.
//!
//! Past the chunk's end every octet counts as a control octet: a search
//! for one stops at the chunk's end without a bounds check of its own, as
//! a line that lacks its `\n` must.
//!
//! Three classifiers fill a batch: AVX2 (two vectors a word) and SSE2
//! (four) through [`Vector`](crate::Vector), and a portable one that
//! works on eight octets in a `u64` (SWAR) for other targets.

/// Octets per word: the bits of a bitmap.
pub(crate) const WORD: usize = 64;

/// Words per batch: 4 KiB of the chunk, whose bitmaps (1 KiB) stay in
/// the L1 cache while stage two reads them.
pub(crate) const BATCH: usize = 64;

/// The bitmaps of one word: bit `i` of each is octet `i` of the word.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub(crate) struct Word {
    /// The control octets, `;` and `#`.
    pub(crate) stop: u64,
    pub(crate) slash_query: u64,
}

impl Word {
    /// The word of octets `len..` of a word whose first `len` (below
    /// [`WORD`]) belong to the chunk: they become control octets, and
    /// nothing else.
    #[inline(always)]
    fn ended_at(self, len: usize) -> Word {
        let past = !0 << len;
        Word { stop: self.stop | past, slash_query: self.slash_query & !past }
    }
}

/// The bitmaps of [`BATCH`] consecutive words, one array per class.
pub(crate) struct Batch {
    pub(crate) stop: [u64; BATCH],
    pub(crate) slash_query: [u64; BATCH],
}

impl Batch {
    /// A batch of nothing (before the first [`Classify::fill`]).
    pub(crate) const EMPTY: Batch =
        Batch { stop: [0; BATCH], slash_query: [0; BATCH] };

    #[inline(always)]
    fn set(&mut self, i: usize, w: Word) {
        self.stop[i] = w.stop;
        self.slash_query[i] = w.slash_query;
    }
}

/// A classifier of words (stage one with one instruction set), as a type
/// so that stage two is instantiated per instruction set without a
/// closure (which would not take the caller's target feature).
pub(crate) trait Classify {
    /// The bitmaps of `octets[..WORD]`.
    ///
    /// # Safety
    ///
    /// The CPU must have what the classifier needs.
    unsafe fn word(octets: &[u8]) -> Word;

    /// Fills `batch` with the bitmaps of words `first..first + BATCH` of
    /// `chunk` (word `k` is `chunk[k * WORD..]`), those at or past its end
    /// padded as the module docs say.
    ///
    /// # Safety
    ///
    /// The CPU must have what the classifier needs.
    unsafe fn fill(chunk: &[u8], first: usize, batch: &mut Batch);
}

/// [`Classify::fill`] with `C`'s [`word`](Classify::word): written once,
/// inlined into each classifier's `fill` (which has its target feature).
///
/// # Safety
///
/// The CPU must have what `C` needs.
#[inline(always)]
pub(crate) unsafe fn fill<C: Classify>(
    chunk: &[u8],
    first: usize,
    batch: &mut Batch,
) {
    let start = first.saturating_mul(WORD).min(chunk.len());
    let rest = &chunk[start..];
    let whole = (rest.len() / WORD).min(BATCH);
    for i in 0..whole {
        // SAFETY: this function's contract.
        batch.set(i, unsafe { C::word(&rest[i * WORD..(i + 1) * WORD]) });
    }
    if whole < BATCH {
        // The word the chunk's end cuts (possibly at its first octet),
        // copied and padded with an octet of no class, then those past
        // it.
        let tail = &rest[whole * WORD..];
        let mut octets = [b'a'; WORD];
        octets[..tail.len()].copy_from_slice(tail);
        // SAFETY: as above.
        let word = unsafe { C::word(&octets) };
        batch.set(whole, word.ended_at(tail.len()));
        for i in whole + 1..BATCH {
            batch.set(i, Word::default().ended_at(0));
        }
    }
}

/// The classifier every target has: SSE2 on x86_64, else the portable
/// one.
impl Classify for crate::Baseline {
    #[inline(always)]
    unsafe fn word(octets: &[u8]) -> Word {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: SSE2 is part of every x86_64 target.
            unsafe { vector::word::<core::arch::x86_64::__m128i>(octets) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            portable::word(octets)
        }
    }

    #[inline(never)]
    unsafe fn fill(chunk: &[u8], first: usize, batch: &mut Batch) {
        // SAFETY: the baseline needs nothing of the CPU.
        unsafe { fill::<Self>(chunk, first, batch) }
    }
}

/// The classifier with the [`Vector`](crate::Vector) operations: per
/// vector, a few operations for each class and a movemask.
#[cfg(target_arch = "x86_64")]
pub(crate) mod vector {
    use core::arch::x86_64::{
        __m128i, __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256,
        _mm256_shuffle_epi8,
    };

    use super::{WORD, Word};
    use crate::Vector;

    /// The lanes of a vector that hold `;`, `#` or DEL (0x7F): with the
    /// octets 0x00-0x1F, where a URL's scan stops.
    pub(crate) trait Rare: Vector {
        /// # Safety
        ///
        /// The CPU must have the vector's target feature.
        unsafe fn rare(self) -> Self;
    }

    /// SSE2 (no lookup instruction): three compares.
    impl Rare for __m128i {
        #[inline(always)]
        unsafe fn rare(self) -> __m128i {
            // SAFETY: the trait's contract.
            unsafe {
                let (semicolon, hash) = (Self::splat(b';'), Self::splat(b'#'));
                let del = Self::splat(0x7f);
                self.eq(semicolon).or(self.eq(hash)).or(self.eq(del))
            }
        }
    }

    /// AVX2: the octet of the class that has the lane's low nibble, if
    /// any, looked up (`vpshufb`) and compared with the lane.
    impl Rare for __m256i {
        #[inline(always)]
        unsafe fn rare(self) -> __m256i {
            // Entry `n` is the octet of the class whose low nibble is `n`
            // (`#` 0x23, `;` 0x3B, DEL 0x7F), else `n ^ 1`, which never
            // equals a lane with low nibble `n`; lanes from 0x80 look up
            // 0, which they are not.
            const TABLE: [u8; 32] = {
                let mut table = [0; 32];
                let mut n = 0;
                while n < 32 {
                    table[n] = match n % 16 {
                        0x3 => b'#',
                        0xb => b';',
                        0xf => 0x7f,
                        low => low as u8 ^ 1,
                    };
                    n += 1;
                }
                table
            };
            // SAFETY: the trait's contract; `TABLE` holds 32 octets.
            unsafe {
                let table = _mm256_loadu_si256(TABLE.as_ptr().cast());
                _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, self), self)
            }
        }
    }

    /// The bitmaps of `octets[..WORD]`, `V::LANES` octets at a time.
    ///
    /// # Safety
    ///
    /// The CPU must have `V`'s target feature.
    #[inline(always)]
    pub(crate) unsafe fn word<V: Rare>(octets: &[u8]) -> Word {
        assert!(octets.len() >= WORD);
        let (mut stop, mut slash_query) = (0, 0);
        // SAFETY (every `unsafe` below): this function's contract; the
        // loads are in bounds (asserted above).
        let unit = unsafe { V::splat(0x1f) };
        let (slash, query) = unsafe { (V::splat(b'/'), V::splat(b'?')) };
        for k in 0..WORD / V::LANES {
            let at = k * V::LANES;
            let bits = |mask: u32| u64::from(mask) << at;
            unsafe {
                let v = V::load(&octets[at..]);
                stop |= bits(v.le(unit).or(v.rare()).mask());
                slash_query |= bits(v.eq(slash).or(v.eq(query)).mask());
            }
        }
        Word { stop, slash_query }
    }
}

/// The classifier for targets without SSE2: eight octets in a `u64` at a
/// time, each class's octets found with carry-free arithmetic (no
/// octet's sum spills into the next) and their flags gathered into eight
/// bits by one multiplication.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) mod portable {
    use super::{WORD, Word};

    /// The octet with value 1 in every lane.
    const ONES: u64 = u64::MAX / 0xff;
    /// The top bit of every lane.
    const TOPS: u64 = ONES << 7;

    /// The top bit of each lane of `x` that is zero.
    #[inline(always)]
    fn zero(x: u64) -> u64 {
        !(((x & !TOPS) + !TOPS) | x) & TOPS
    }

    /// The top bit of each lane of `x` that is `b`.
    #[inline(always)]
    fn eq(x: u64, b: u8) -> u64 {
        zero(x ^ (ONES * u64::from(b)))
    }

    /// The top bit of each lane of `x` below `0x20`.
    #[inline(always)]
    fn below_space(x: u64) -> u64 {
        !(((x & !TOPS) + ONES * 0x60) | x) & TOPS
    }

    /// The lanes' top bits as the eight low bits: lane `k`'s to bit `k`,
    /// by a multiplication whose partial products never meet.
    #[inline(always)]
    fn gather(tops: u64) -> u64 {
        (tops >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    }

    /// The bitmaps of `octets[..WORD]`.
    #[inline(always)]
    pub(crate) fn word(octets: &[u8]) -> Word {
        let (mut stop, mut slash_query) = (0, 0);
        for (k, lane) in octets[..WORD].chunks_exact(8).enumerate() {
            let x = u64::from_le_bytes(lane.try_into().unwrap());
            let at = 8 * k;
            let rare = eq(x, b';') | eq(x, b'#') | eq(x, 0x7f);
            stop |= gather(below_space(x) | rare) << at;
            slash_query |= gather(eq(x, b'/') | eq(x, b'?')) << at;
        }
        Word { stop, slash_query }
    }

    /// The portable classifier as a [`Classify`] of its own, for the
    /// tests (the baseline is this classifier on targets without SSE2).
    #[cfg(test)]
    pub(crate) struct Portable;

    #[cfg(test)]
    impl super::Classify for Portable {
        #[inline(always)]
        unsafe fn word(octets: &[u8]) -> Word {
            word(octets)
        }

        #[inline(never)]
        unsafe fn fill(chunk: &[u8], first: usize, batch: &mut super::Batch) {
            // SAFETY: the portable classifier needs nothing of the CPU.
            unsafe { super::fill::<Self>(chunk, first, batch) }
        }
    }
}
