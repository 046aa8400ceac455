//! Verdict DFA construction: subset construction with pruning, then
//! minimisation.
//!
//! The NFA is implicit: a *position* is a point inside one rule's token list
//! (`Byte`, `Star` or `End`). A DFA state is the set of live positions plus the
//! best Allow and Disallow precedence among the prefix rules already matched
//! (those can never be unmatched, so they are summarised as two numbers).
//!
//! Pruning is what keeps this small. A live position of an Allow rule with
//! precedence `p` can only change the final verdict if `p > best_allow` and
//! `p >= best_disallow` (ties go to allow); a Disallow rule only if
//! `p > best_disallow` and `p > best_allow`. Positions that fail the test are
//! dropped, and a state with no live positions is one of two sinks. Precedence
//! only grows along a path, so a dropped position can never matter again.
//!
//! Moore's partition refinement then merges states with the same future
//! (labels are the only thing that distinguish states; rule identities are not
//! kept), which also merges every "the verdict is already fixed" state into its
//! sink, so the search stops as early as possible.
//!
//! Construction is bounded by [`Budget`]: past the state or work limit it gives
//! up and the caller falls back to the direct matcher. It never gives a wrong
//! automaton.

use std::collections::HashMap;

use crate::RuleKind;
use crate::pattern::Tok;

/// Limits on one group's DFA construction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Most DFA states (before minimisation).
    pub(crate) max_states: usize,
    /// Most position visits during subset construction (a proxy for time).
    pub(crate) max_work: u64,
}

/// One rule, ready for construction.
#[derive(Clone, Debug)]
pub(crate) struct BuildRule {
    pub(crate) kind: RuleKind,
    pub(crate) priority: u32,
    pub(crate) toks: Vec<Tok>,
    pub(crate) anchored: bool,
}

/// Why construction gave up.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum OverBudget {
    States,
    Work,
}

/// A built DFA: the wire bytes and its size facts.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    pub(crate) bytes: Vec<u8>,
}

#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum PTok {
    Byte(u8),
    Star,
    End,
}

struct Nfa {
    tok: Vec<PTok>,
    rule: Vec<u32>,
    starts: Vec<u32>,
    rules: Vec<BuildRule>,
}

/// A subset-construction state: live positions and the best precedence of
/// matched prefix rules.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
struct Key {
    set: Vec<u32>,
    allow: u32,
    disallow: u32,
}

impl Nfa {
    fn new(rules: &[BuildRule]) -> Nfa {
        let mut nfa = Nfa {
            tok: Vec::new(),
            rule: Vec::new(),
            starts: Vec::new(),
            rules: Vec::with_capacity(rules.len()),
        };
        for r in rules {
            let mut toks: Vec<Tok> = Vec::with_capacity(r.toks.len());
            for &t in &r.toks {
                if !(t == Tok::Star && toks.last() == Some(&Tok::Star)) {
                    toks.push(t);
                }
            }
            let mut anchored = r.anchored;
            // `*$` at the end is the same as no anchor; a trailing `*` on a
            // prefix rule matches nothing more.
            if anchored && toks.last() == Some(&Tok::Star) {
                anchored = false;
            }
            if !anchored {
                while toks.last() == Some(&Tok::Star) {
                    toks.pop();
                }
            }
            let id = nfa.rules.len() as u32;
            nfa.starts.push(nfa.tok.len() as u32);
            for t in &toks {
                nfa.tok.push(match *t {
                    Tok::Byte(b) => PTok::Byte(b),
                    Tok::Star => PTok::Star,
                });
                nfa.rule.push(id);
            }
            nfa.tok.push(PTok::End);
            nfa.rule.push(id);
            nfa.rules.push(BuildRule { toks, anchored, ..r.clone() });
        }
        nfa
    }

    /// Adds `pos` and everything reachable from it without input.
    fn close(&self, mut pos: u32, key: &mut Key) {
        loop {
            match self.tok[pos as usize] {
                PTok::Star => {
                    key.set.push(pos);
                    pos += 1;
                }
                PTok::Byte(_) => {
                    key.set.push(pos);
                    return;
                }
                PTok::End => {
                    let rule = &self.rules[self.rule[pos as usize] as usize];
                    if rule.anchored {
                        key.set.push(pos);
                    } else {
                        let best = match rule.kind {
                            RuleKind::Allow => &mut key.allow,
                            RuleKind::Disallow => &mut key.disallow,
                        };
                        *best = (*best).max(rule.priority);
                    }
                    return;
                }
            }
        }
    }

    /// Whether `pos` can still change the verdict.
    fn alive(&self, pos: u32, allow: u32, disallow: u32) -> bool {
        let rule = &self.rules[self.rule[pos as usize] as usize];
        let p = rule.priority;
        match rule.kind {
            RuleKind::Allow => p > allow && p >= disallow,
            RuleKind::Disallow => p > disallow && p > allow,
        }
    }

    /// Sorts, dedups and prunes; an empty set becomes a canonical sink.
    fn finish(&self, mut key: Key) -> Key {
        key.set.sort_unstable();
        key.set.dedup();
        let (a, d) = (key.allow, key.disallow);
        key.set.retain(|&p| self.alive(p, a, d));
        if key.set.is_empty() {
            let disallow = u32::from(d > a);
            return Key { set: Vec::new(), allow: 0, disallow };
        }
        key
    }

    /// Whether a path ending in this state is disallowed.
    fn label(&self, key: &Key) -> bool {
        let (mut a, mut d) = (key.allow, key.disallow);
        for &pos in &key.set {
            if self.tok[pos as usize] == PTok::End {
                let rule = &self.rules[self.rule[pos as usize] as usize];
                match rule.kind {
                    RuleKind::Allow => a = a.max(rule.priority),
                    RuleKind::Disallow => d = d.max(rule.priority),
                }
            }
        }
        d > a
    }
}

/// Byte classes: every octet that some pattern names gets its own class,
/// all other octets share one.
fn byte_classes(nfa: &Nfa) -> ([u8; 256], Vec<u8>) {
    let mut used = [false; 256];
    for t in &nfa.tok {
        if let PTok::Byte(b) = *t {
            used[usize::from(b)] = true;
        }
    }
    let mut classes = [0u8; 256];
    let mut reps: Vec<u8> = Vec::new();
    let mut other: Option<u8> = None;
    for b in 0..=255u8 {
        let class = if used[usize::from(b)] {
            reps.push(b);
            reps.len() - 1
        } else if let Some(c) = other {
            usize::from(c)
        } else {
            reps.push(b);
            other = Some((reps.len() - 1) as u8);
            reps.len() - 1
        };
        classes[usize::from(b)] = class as u8;
    }
    (classes, reps)
}

/// Builds the verdict DFA of a group, or gives up past `budget`.
pub(crate) fn build(
    rules: &[BuildRule],
    budget: Budget,
) -> Result<Built, OverBudget> {
    let nfa = Nfa::new(rules);
    let (classes, reps) = byte_classes(&nfa);
    let stride = reps.len();

    let allow_sink = Key { set: Vec::new(), allow: 0, disallow: 0 };
    let disallow_sink = Key { set: Vec::new(), allow: 0, disallow: 1 };
    let mut keys: Vec<Key> = vec![allow_sink.clone(), disallow_sink.clone()];
    let mut ids: HashMap<Key, u32> = HashMap::new();
    ids.insert(allow_sink, 0);
    ids.insert(disallow_sink, 1);
    let mut start = Key { set: Vec::new(), allow: 0, disallow: 0 };
    for &s in &nfa.starts {
        nfa.close(s, &mut start);
    }
    let start = nfa.finish(start);
    let start_id = *ids.entry(start.clone()).or_insert_with(|| {
        keys.push(start);
        (keys.len() - 1) as u32
    });

    let mut trans: Vec<u32> = vec![0; 2 * stride];
    trans[stride..2 * stride].fill(1);
    let mut work: u64 = 0;
    let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); stride];
    let mut next = 2;
    while next < keys.len() {
        let key = keys[next].clone();
        work += key.set.len() as u64;
        // What every octet does: stars stay and re-close.
        let mut base = Key { set: Vec::new(), ..key.clone() };
        let mut touched: Vec<usize> = Vec::new();
        for &pos in &key.set {
            match nfa.tok[pos as usize] {
                PTok::Star => nfa.close(pos, &mut base),
                PTok::Byte(b) => {
                    let c = usize::from(classes[usize::from(b)]);
                    if by_class[c].is_empty() {
                        touched.push(c);
                    }
                    by_class[c].push(pos + 1);
                }
                PTok::End => {}
            }
        }
        let base_key = nfa.finish(base.clone());
        let base_id = intern(&mut ids, &mut keys, base_key);
        let row = trans.len();
        trans.resize(row + stride, base_id);
        for c in touched {
            let mut k = base.clone();
            for &pos in &by_class[c] {
                nfa.close(pos, &mut k);
            }
            work += k.set.len() as u64;
            by_class[c].clear();
            trans[row + c] = intern(&mut ids, &mut keys, nfa.finish(k));
        }
        if keys.len() > budget.max_states {
            return Err(OverBudget::States);
        }
        if work > budget.max_work {
            return Err(OverBudget::Work);
        }
        next += 1;
    }
    let labels: Vec<bool> = keys.iter().map(|k| nfa.label(k)).collect();
    Ok(Built { bytes: minimize(&trans, stride, &labels, start_id, &classes) })
}

fn intern(ids: &mut HashMap<Key, u32>, keys: &mut Vec<Key>, key: Key) -> u32 {
    if let Some(&id) = ids.get(&key) {
        return id;
    }
    let id = keys.len() as u32;
    keys.push(key.clone());
    ids.insert(key, id);
    id
}

/// Moore's partition refinement, then renumbering into the wire layout.
fn minimize(
    trans: &[u32],
    stride: usize,
    labels: &[bool],
    start: u32,
    classes: &[u8; 256],
) -> Vec<u8> {
    let n = labels.len();
    let mut part: Vec<u32> = labels.iter().map(|&l| u32::from(l)).collect();
    let mut count = 2;
    let mut sig: Vec<u32> = Vec::with_capacity(stride + 1);
    loop {
        let mut blocks: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut new_part = vec![0u32; n];
        for s in 0..n {
            sig.clear();
            sig.push(part[s]);
            sig.extend(
                trans[s * stride..(s + 1) * stride]
                    .iter()
                    .map(|&t| part[t as usize]),
            );
            let len = blocks.len() as u32;
            new_part[s] = *blocks.entry(sig.clone()).or_insert(len);
        }
        let done = blocks.len() == count;
        count = blocks.len();
        part = new_part;
        if done {
            break;
        }
    }
    // Wire order: allow sink, disallow sink, allow-labelled, disallow-labelled.
    let mut order: Vec<u32> = vec![u32::MAX; count];
    let mut rep: Vec<usize> = vec![usize::MAX; count];
    for s in 0..n {
        if rep[part[s] as usize] == usize::MAX {
            rep[part[s] as usize] = s;
        }
    }
    order[part[0] as usize] = 0;
    order[part[1] as usize] = 1;
    let mut next = 2;
    for want in [false, true] {
        for b in 0..count {
            if order[b] == u32::MAX && labels[rep[b]] == want {
                order[b] = next;
                next += 1;
            }
        }
    }
    let disallow_from = (0..count)
        .filter(|&b| labels[rep[b]] && order[b] >= 2)
        .map(|b| order[b])
        .min()
        .unwrap_or(count as u32);
    let stride32 = stride as u32;
    let mut out = Vec::with_capacity(super::HEADER_LEN + count * stride * 4);
    out.extend_from_slice(&stride32.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
    out.extend_from_slice(
        &(order[part[start as usize] as usize] * stride32).to_le_bytes(),
    );
    out.extend_from_slice(&(disallow_from * stride32).to_le_bytes());
    out.extend_from_slice(classes);
    let mut by_order: Vec<usize> = vec![0; count];
    for b in 0..count {
        by_order[order[b] as usize] = rep[b];
    }
    for &s in &by_order {
        for &t in &trans[s * stride..(s + 1) * stride] {
            let id = order[part[t as usize] as usize] * stride32;
            out.extend_from_slice(&id.to_le_bytes());
        }
    }
    out
}
