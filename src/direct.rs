//! A candidate filter for the direct matcher.
//!
//! A rule can only match a path that starts with its literal prefix (its
//! octets before the first `*`). The prefixes go into a trie; walking the
//! path through it visits exactly the rules whose prefix the path starts
//! with, and only those are matched in full. For a group of thousands of
//! rules this turns `O(rules × path)` into roughly `O(path + candidates ×
//! path)`, without changing any verdict (the candidates are a superset of
//! the matching rules).

use crate::Dialect;
use crate::pattern;

/// A trie of literal prefixes; node 0 is the root.
#[derive(Clone, Debug, Default)]
pub(crate) struct PrefixIndex {
    nodes: Vec<Node>,
}

#[derive(Clone, Debug, Default)]
struct Node {
    /// Children by octet, sorted.
    children: Vec<(u8, u32)>,
    /// The entries whose literal prefix ends here.
    entries: Vec<u32>,
}

impl PrefixIndex {
    /// Indexes `patterns` (entry `i` is `patterns[i]`).
    pub(crate) fn new<'p>(
        patterns: impl Iterator<Item = &'p [u8]>,
        dialect: Dialect,
    ) -> PrefixIndex {
        let mut index = PrefixIndex { nodes: vec![Node::default()] };
        for (i, p) in patterns.enumerate() {
            let mut node = 0usize;
            for b in pattern::literal_prefix(p, dialect) {
                let children = &index.nodes[node].children;
                node = match children.binary_search_by_key(&b, |c| c.0) {
                    Ok(k) => children[k].1 as usize,
                    Err(k) => {
                        let id = index.nodes.len();
                        index.nodes[node].children.insert(k, (b, id as u32));
                        index.nodes.push(Node::default());
                        id
                    }
                };
            }
            index.nodes[node].entries.push(i as u32);
        }
        index
    }

    /// Calls `f` with every entry whose literal prefix `path` starts with.
    #[inline]
    pub(crate) fn candidates(&self, path: &[u8], mut f: impl FnMut(u32)) {
        let mut node = &self.nodes[0];
        node.entries.iter().for_each(|&e| f(e));
        for &b in path {
            match node.children.binary_search_by_key(&b, |c| c.0) {
                Ok(k) => node = &self.nodes[node.children[k].1 as usize],
                Err(_) => return,
            }
            node.entries.iter().for_each(|&e| f(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_rules_whose_prefix_the_path_starts_with() {
        let patterns: [&[u8]; 7] =
            [b"/a", b"/a*b", b"/ab$", b"*x", b"/b", b"/", b"/a%2Ab"];
        let google =
            PrefixIndex::new(patterns.iter().copied(), Dialect::Google);
        let got = |path: &[u8]| {
            let mut v = Vec::new();
            google.candidates(path, |e| v.push(e));
            v.sort();
            v
        };
        assert_eq!(got(b"/abc"), [0, 1, 2, 3, 5]);
        assert_eq!(got(b"/b"), [3, 4, 5]);
        assert_eq!(got(b"/a%2Ab"), [0, 1, 3, 5, 6]);
        assert_eq!(got(b"x"), [3]);
        assert_eq!(got(b""), [3]);
        // rfc9309: `%2A` in a pattern is a literal `*`.
        let rfc = PrefixIndex::new(patterns.iter().copied(), Dialect::Rfc9309);
        let mut v = Vec::new();
        rfc.candidates(b"/a*b", |e| v.push(e));
        v.sort();
        assert_eq!(v, [0, 1, 3, 5, 6]);
    }
}
