//! A candidate filter for the direct matcher.
//!
//! A rule can only match a path that starts with its literal prefix (its
//! octets before the first `*`). The prefixes are sorted, which makes the
//! array an implicit trie: walking the path narrows a range of entries one
//! octet at a time, and the entries whose whole prefix has been walked are
//! exactly the rules whose prefix the path starts with. Only those are
//! matched in full. For a group of thousands of rules this turns
//! `O(rules × path)` into roughly `O(path × log rules + candidates ×
//! path)`, without changing any verdict (the candidates are a superset of
//! the matching rules). Building it takes a sort and a few allocations;
//! the compiler stores a direct group's rules in this order, so that
//! loading only checks it (or, with index.html aliases, the merge sort
//! takes the rules as one sorted run and places the aliases). The first
//! 8 octets of every prefix are also kept as a number, in an array of
//! their own, so that a search step over them is one load (a step over
//! the later octets reads a span, then an octet at its offset).
//!
//! A rule with a `*` names octets after it that a matching path must
//! contain; [`Pairs`] keeps their adjacent pairs, hashed, so that most
//! candidates that cannot match are dropped with an AND and a compare
//! instead of a substring search.

use crate::dialect::Dialect;
use crate::pattern;

/// Literal prefixes, sorted.
#[derive(Clone, Debug, Default)]
pub(crate) struct PrefixIndex {
    /// The prefixes, concatenated.
    octets: Vec<u8>,
    /// Per prefix, sorted by prefix: (offset, length, entry).
    spans: Vec<(u32, u32, u32)>,
    /// Per span, its prefix's first 8 octets (zero-padded) as a
    /// big-endian number: a search over the first 8 octets reads one
    /// array, where the spans and then the octets are two loads each
    /// waiting on the last.
    heads: Vec<u64>,
}

impl PrefixIndex {
    /// Indexes `patterns` (entry `i` is `patterns[i]`).
    pub(crate) fn new<'p>(
        patterns: impl Iterator<Item = &'p [u8]> + Clone,
        dialect: Dialect,
    ) -> PrefixIndex {
        // A literal prefix is at most its pattern's length.
        let (count, len) =
            patterns.clone().fold((0, 0), |(n, l), p| (n + 1, l + p.len()));
        let mut octets = Vec::with_capacity(len);
        let mut spans = Vec::with_capacity(count);
        for (i, p) in patterns.enumerate() {
            let start = octets.len();
            pattern::push_literal_prefix(p, dialect, &mut octets);
            let len = octets.len() - start;
            spans.push((start as u32, len as u32, i as u32));
        }
        let mut index = PrefixIndex { octets, spans, heads: Vec::new() };
        // A compiled direct group's rules come in this order, so their
        // prefixes are laid out in it too: nothing to sort or move.
        let in_order =
            |w: &[(u32, u32, u32)]| index.prefix(&w[0]) <= index.prefix(&w[1]);
        if index.spans.windows(2).all(in_order) {
            index.heads = index.heads();
            return index;
        }
        let spans = core::mem::take(&mut index.spans);
        // Sorted by the first 16 octets as a number, then by the whole
        // prefix, then by entry: the order of a stable sort by prefix, with
        // far fewer slice comparisons. Zero padding never orders two
        // prefixes wrongly, but leaves ties (`a` and `a\0`, or prefixes
        // that differ only after 16 octets) for the slices to settle. The
        // sort is the standard library's merge sort: it walks a run that is
        // already sorted (a compiled direct group's rules, before the
        // index.html aliases appended to them) in one pass of comparisons,
        // where the unstable sort partitions it again.
        let mut keyed: Vec<(u128, (u32, u32, u32))> =
            spans.into_iter().map(|s| (index.head(&s), s)).collect();
        keyed.sort_by(|(ha, a), (hb, b)| {
            ha.cmp(hb)
                .then_with(|| index.prefix(a).cmp(index.prefix(b)))
                .then(a.2.cmp(&b.2))
        });
        // The prefixes laid out in sorted order, so that a search reads
        // neighbouring octets.
        let mut octets = Vec::with_capacity(index.octets.len());
        let spans = keyed
            .into_iter()
            .map(|(_, s)| {
                let at = octets.len() as u32;
                octets.extend_from_slice(index.prefix(&s));
                (at, s.1, s.2)
            })
            .collect();
        let mut index = PrefixIndex { octets, spans, heads: Vec::new() };
        index.heads = index.heads();
        index
    }

    /// The spans' [`PrefixIndex::heads`]: the high half of each
    /// [`PrefixIndex::head`].
    fn heads(&self) -> Vec<u64> {
        let head = |s| match self.prefix(s) {
            [a, b, c, d, e, f, g, h, ..] => {
                u64::from_be_bytes([*a, *b, *c, *d, *e, *f, *g, *h])
            }
            // Shorter: zero-padded.
            p => p
                .iter()
                .zip((0..8).rev())
                .fold(0, |head, (&b, at)| head | u64::from(b) << (8 * at)),
        };
        self.spans.iter().map(head).collect()
    }

    /// A prefix's first 16 octets, zero-padded, as a big-endian number.
    fn head(&self, span: &(u32, u32, u32)) -> u128 {
        let p = self.prefix(span);
        let mut head = [0; 16];
        let n = p.len().min(16);
        head[..n].copy_from_slice(&p[..n]);
        u128::from_be_bytes(head)
    }

    fn prefix(&self, span: &(u32, u32, u32)) -> &[u8] {
        &self.octets[span.0 as usize..(span.0 + span.1) as usize]
    }

    /// Calls `f` with every entry whose literal prefix `path` starts with.
    #[inline]
    pub(crate) fn candidates(&self, path: &[u8], mut f: impl FnMut(u32)) {
        // Invariant: every span in `lo..hi` has a prefix that starts with
        // `path[..k]`; the ones exactly `k` long sort first.
        let (mut lo, mut hi) = (0, self.spans.len());
        for k in 0..=path.len() {
            while lo < hi && self.spans[lo].1 as usize == k {
                f(self.spans[lo].2);
                lo += 1;
            }
            if lo == hi || k == path.len() {
                return;
            }
            // Every span left is longer than `k`: its octet at `k` is
            // a real one, in its head for the first 8.
            let b = path[k];
            let narrowed = if k < 8 {
                let shift = 56 - 8 * k as u32;
                narrow(&self.heads[lo..hi], b, |h| (h >> shift) as u8)
            } else {
                let at = |s: &(u32, u32, u32)| self.octets[s.0 as usize + k];
                narrow(&self.spans[lo..hi], b, at)
            };
            let Some((start, end)) = narrowed else { return };
            (lo, hi) = (lo + start, lo + end);
        }
    }
}

/// The part `start..end` of `range`, sorted by the octets `at` reads,
/// whose octet is `b` (empty if none is), or `None` when `b` is below the
/// first entry's octet or above the last's. Those two entries bound the
/// range's octets, and often settle it without a search (entries share
/// long prefixes: `/wiki/Special:...`).
#[inline(always)]
fn narrow<T>(
    range: &[T],
    b: u8,
    at: impl Fn(&T) -> u8,
) -> Option<(usize, usize)> {
    match (at(&range[0]), at(&range[range.len() - 1])) {
        (first, last) if first == b && last == b => {
            return Some((0, range.len()));
        }
        (first, last) if b < first || last < b => return None,
        _ => {}
    }
    let start = range.partition_point(|s| at(s) < b);
    let end = start + range[start..].partition_point(|s| at(s) <= b);
    Some((start, end))
}

/// A set of octet pairs, hashed into 128 bits (a Bloom filter with one
/// hash function). If `s` contains every pair of `t`, then
/// `Pairs::of(s).covers(Pairs::of(t))`; the converse may fail.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub(crate) struct Pairs(u128);

impl Pairs {
    /// The pairs of adjacent octets in `s`.
    #[inline]
    pub(crate) fn of(s: &[u8]) -> Pairs {
        // Two 64-bit halves, each bit set without a branch: a 128-bit
        // shift by a variable costs several instructions per pair.
        let (mut low, mut high) = (0u64, 0u64);
        for w in s.windows(2) {
            let bit = Pairs::bit(w[0], w[1]);
            let one = 1u64 << (bit & 63);
            let in_high = 0u64.wrapping_sub(u64::from(bit >> 6));
            high |= one & in_high;
            low |= one & !in_high;
        }
        Pairs(u128::from(high) << 64 | u128::from(low))
    }

    /// The bit (0 to 127) of the pair `a b`.
    #[inline]
    fn bit(a: u8, b: u8) -> u32 {
        let pair = (u32::from(a) << 8) | u32::from(b);
        pair.wrapping_mul(0x9E37_79B1) >> 25
    }

    /// Adds the pair `a b`.
    #[inline]
    pub(crate) fn add(&mut self, a: u8, b: u8) {
        self.0 |= 1 << Pairs::bit(a, b);
    }

    /// Whether the set has no pair.
    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every pair of `other` may be in `self`.
    #[inline]
    pub(crate) fn covers(self, other: Pairs) -> bool {
        other.0 & !self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_rules_whose_prefix_the_path_starts_with() {
        let patterns: [&[u8]; 8] =
            [b"/a", b"/a*b", b"/ab$", b"*x", b"/b", b"/", b"/a%2Ab", b"/a"];
        let google =
            PrefixIndex::new(patterns.iter().copied(), Dialect::Google);
        let got = |path: &[u8]| {
            let mut v = Vec::new();
            google.candidates(path, |e| v.push(e));
            v.sort();
            v
        };
        assert_eq!(got(b"/abc"), [0, 1, 2, 3, 5, 7]);
        assert_eq!(got(b"/b"), [3, 4, 5]);
        assert_eq!(got(b"/a%2Ab"), [0, 1, 3, 5, 6, 7]);
        assert_eq!(got(b"x"), [3]);
        assert_eq!(got(b""), [3]);
        // rfc9309: `%2A` in a pattern is a literal `*`.
        let rfc = PrefixIndex::new(patterns.iter().copied(), Dialect::Rfc9309);
        let mut v = Vec::new();
        rfc.candidates(b"/a*b", |e| v.push(e));
        v.sort();
        assert_eq!(v, [0, 1, 3, 5, 6, 7]);
    }

    /// Against the definition, on every path over a small alphabet.
    #[test]
    fn candidates_match_a_linear_scan() {
        let words = pattern::words(b"/ab*", 4);
        let patterns: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        let index =
            PrefixIndex::new(patterns.iter().copied(), Dialect::Google);
        for path in &words {
            let mut got = Vec::new();
            index.candidates(path, |e| got.push(e as usize));
            got.sort();
            let want: Vec<usize> = (0..patterns.len())
                .filter(|&i| {
                    let p =
                        pattern::literal_prefix(patterns[i], Dialect::Google);
                    path.starts_with(&p)
                })
                .collect();
            assert_eq!(got, want, "{:?}", path.escape_ascii());
        }
    }

    /// Patterns in prefix order (as the compiler stores a direct group's
    /// rules) are indexed where they are; the same patterns in reverse
    /// order are sorted first: the same candidates either way.
    #[test]
    fn patterns_in_prefix_order_give_the_same_candidates() {
        let words = pattern::words(b"/ab*", 3);
        let mut patterns: Vec<&[u8]> =
            words.iter().map(Vec::as_slice).collect();
        patterns.sort_by_cached_key(|p| {
            pattern::literal_prefix(p, Dialect::Google)
        });
        let kept = PrefixIndex::new(patterns.iter().copied(), Dialect::Google);
        let order: Vec<u32> = kept.spans.iter().map(|s| s.2).collect();
        assert!(order.is_sorted());
        let n = patterns.len();
        let reversed = patterns.iter().rev().copied();
        let sorted = PrefixIndex::new(reversed, Dialect::Google);
        for path in &words {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            kept.candidates(path, |e| a.push(e as usize));
            sorted.candidates(path, |e| b.push(n - 1 - e as usize));
            a.sort();
            b.sort();
            assert_eq!(a, b, "{:?}", path.escape_ascii());
        }
    }

    /// The sort's ties: prefixes that share 16 octets or more, and prefixes
    /// that differ only by trailing NUL octets (the same 16-octet head).
    #[test]
    fn candidates_match_a_linear_scan_past_sixteen_octets() {
        let stem = b"/aaaaaaaaaaaaaaa";
        let tails = pattern::words(b"a\0/", 3);
        // In reverse order, so that entry order never settles a tie.
        let words: Vec<Vec<u8>> = tails
            .iter()
            .rev()
            .flat_map(|t| [[&stem[..], t].concat(), t.clone()])
            .collect();
        let patterns: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let index = PrefixIndex::new(patterns.iter().copied(), dialect);
            for path in &words {
                let mut got = Vec::new();
                index.candidates(path, |e| got.push(e as usize));
                got.sort();
                let want: Vec<usize> = (0..patterns.len())
                    .filter(|&i| path.starts_with(patterns[i]))
                    .collect();
                assert_eq!(got, want, "{:?}", path.escape_ascii());
            }
        }
    }

    /// Never drops a path that contains the needle: every needle of up to
    /// three octets and path of up to five over a small alphabet.
    #[test]
    fn pairs_never_drop_a_containing_path() {
        let (paths, needles) =
            (pattern::words(b"ab/%", 5), pattern::words(b"ab/%", 3));
        let mut dropped = 0;
        for needle in &needles {
            for path in &paths {
                let found = needle.is_empty()
                    || path.windows(needle.len()).any(|w| w == &needle[..]);
                let kept = Pairs::of(path).covers(Pairs::of(needle));
                assert!(kept || !found, "{path:?} {needle:?}");
                dropped += usize::from(!kept);
            }
        }
        assert!(dropped > 0);
        // `of` sets the bits `add` sets, pair by pair.
        for path in
            paths.iter().chain([&b"\xff\x00/wiki/Special:x"[..].to_vec()])
        {
            let mut added = Pairs::default();
            path.windows(2).for_each(|w| added.add(w[0], w[1]));
            assert_eq!(Pairs::of(path), added, "{path:?}");
        }
        assert!(Pairs::of(b"").is_empty() && Pairs::of(b"a").is_empty());
        assert!(!Pairs::of(b"ab").is_empty());
        // The set of a 57-octet path lets through fewer than half of all
        // 65,536 pairs.
        let path =
            b"/wiki/Special:Search?search=robots&title=Special%3ASearch";
        let have = Pairs::of(path);
        let kept = (0..=255u8)
            .flat_map(|a| (0..=255u8).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                let mut one = Pairs::default();
                one.add(a, b);
                have.covers(one)
            })
            .count();
        assert!(kept < 65_536 / 2, "{kept}");
    }
}
