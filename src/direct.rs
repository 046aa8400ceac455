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
//! the matching rules). Building it takes two allocations.

use crate::dialect::Dialect;
use crate::pattern;

/// Literal prefixes, sorted.
#[derive(Clone, Debug, Default)]
pub(crate) struct PrefixIndex {
    /// The prefixes, concatenated.
    octets: Vec<u8>,
    /// Per prefix, sorted by prefix: (offset, length, entry).
    spans: Vec<(u32, u32, u32)>,
}

impl PrefixIndex {
    /// Indexes `patterns` (entry `i` is `patterns[i]`).
    pub(crate) fn new<'p>(
        patterns: impl Iterator<Item = &'p [u8]>,
        dialect: Dialect,
    ) -> PrefixIndex {
        let mut octets = Vec::new();
        let mut spans = Vec::new();
        for (i, p) in patterns.enumerate() {
            let start = octets.len();
            pattern::push_literal_prefix(p, dialect, &mut octets);
            let len = octets.len() - start;
            spans.push((start as u32, len as u32, i as u32));
        }
        let mut index = PrefixIndex { octets, spans };
        let mut spans = core::mem::take(&mut index.spans);
        spans.sort_by(|a, b| index.prefix(a).cmp(index.prefix(b)));
        index.spans = spans;
        index
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
            let b = path[k];
            let at = |s: &(u32, u32, u32)| self.octets[(s.0 as usize) + k];
            let range = &self.spans[lo..hi];
            let start = range.partition_point(|s| at(s) < b);
            let end = range.partition_point(|s| at(s) <= b);
            (lo, hi) = (lo + start, lo + end);
        }
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
        let alphabet = [b'/', b'a', b'b', b'*'];
        let mut words: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..4 {
            let longer: Vec<Vec<u8>> = words
                .iter()
                .flat_map(|w| {
                    alphabet.iter().map(move |&c| [&w[..], &[c]].concat())
                })
                .collect();
            words.extend(longer);
            words.sort();
            words.dedup();
        }
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
}
