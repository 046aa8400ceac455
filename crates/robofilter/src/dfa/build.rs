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
//! Hopcroft's partition refinement then merges states with the same future
//! (labels are the only thing that distinguish states; rule identities are not
//! kept), which also merges every "the verdict is already fixed" state into its
//! sink, so the search stops as early as possible.
//!
//! Within one rule, a live `*` also makes every earlier position of that rule
//! redundant (see `Nfa::finish_in_place`), which keeps a long `*` chain linear.
//!
//! Construction is bounded by [`Budget`] per group and by a [`Meter`] per
//! file: past a limit it gives up and the caller splits the group or falls
//! back to the direct matcher (splitting first, into score DFAs, when those
//! fit). It never gives a wrong automaton.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use hashbrown::HashTable;

use crate::pattern::Tok;
use crate::verdict::RuleKind;

/// Limits on one group's DFA construction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Most DFA states (before minimisation).
    pub(crate) max_states: usize,
    /// Most position visits during subset construction (a proxy for time).
    pub(crate) max_work: u64,
    /// Most transition table cells (states x byte classes, before
    /// minimisation): a proxy for the octets the DFA will take.
    pub(crate) max_cells: u64,
}

/// The construction work left for a whole file, shared by every group's
/// attempts (the verdict DFA, then the parts of a split): the group
/// budgets bound one group, this bounds the file, whatever its number of
/// groups. Work is counted in the same steps as [`Budget::max_work`], plus
/// one step per table cell for minimisation and emission.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meter {
    left: u64,
    spent: u64,
}

impl Meter {
    /// A meter allowing `limit` steps.
    pub(crate) fn new(limit: u64) -> Meter {
        Meter { left: limit, spent: 0 }
    }

    /// The steps counted so far (may pass the limit by one step's size).
    pub(crate) fn spent(&self) -> u64 {
        self.spent
    }

    /// The steps left.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    fn charge(&mut self, steps: u64) {
        self.spent = self.spent.saturating_add(steps);
        self.left = self.left.saturating_sub(steps);
    }
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
    Bytes,
    /// The file's [`Meter`] ran out.
    FileWork,
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
    /// Each rule's precedence times 4, so that canonical scores can sit
    /// strictly between two precedences (see `Nfa::canonical`).
    prio: Vec<u64>,
    /// Whether each rule is an Allow (else a Disallow).
    allow: Vec<bool>,
    /// Whether states report scores (a part of a split group) rather than
    /// a verdict; finished states are then not collapsed into two sinks.
    scores: bool,
    /// For a part of a split group: the precedences (times 4, sorted) of
    /// the group's rules outside the part. Canonical scores keep their
    /// order relative to these too, which is what makes the maxima of
    /// several parts comparable (see `Nfa::canonical`).
    outside: Vec<u64>,
}

/// A subset-construction state: live positions and the best precedence of
/// matched prefix rules.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
struct Key {
    set: Vec<u32>,
    allow: u64,
    disallow: u64,
}

impl Nfa {
    fn new(rules: &[BuildRule], scores: bool, outside: &[u32]) -> Nfa {
        let mut outside: Vec<u64> =
            outside.iter().map(|&p| u64::from(p) * 4).collect();
        outside.sort_unstable();
        outside.dedup();
        let mut nfa = Nfa {
            tok: Vec::new(),
            rule: Vec::new(),
            starts: Vec::new(),
            rules: Vec::with_capacity(rules.len()),
            prio: rules.iter().map(|r| u64::from(r.priority) * 4).collect(),
            allow: rules.iter().map(|r| r.kind == RuleKind::Allow).collect(),
            scores,
            outside,
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
                    let r = self.rule[pos as usize] as usize;
                    let rule = &self.rules[r];
                    if rule.anchored {
                        key.set.push(pos);
                    } else {
                        let best = match rule.kind {
                            RuleKind::Allow => &mut key.allow,
                            RuleKind::Disallow => &mut key.disallow,
                        };
                        *best = (*best).max(self.prio[r]);
                    }
                    return;
                }
            }
        }
    }

    /// Sorts, dedups and prunes; an empty set becomes a canonical sink.
    fn finish(&self, mut key: Key) -> Key {
        key.set.sort_unstable();
        self.finish_sorted(key)
    }

    /// [`Nfa::finish`] of a key whose set is sorted.
    fn finish_sorted(&self, mut key: Key) -> Key {
        self.finish_in_place(&mut key);
        key
    }

    /// [`Nfa::finish_sorted`] in place, keeping the set's allocation: one
    /// backward pass over the sorted set drops duplicates, dominated
    /// positions and dead rules, and finds the reference precedences that
    /// [`Nfa::canonical`] needs.
    ///
    /// *Dominated positions.* Per rule, every position before the rule's
    /// last live `*` is dropped. The rest of a rule from an earlier
    /// position is `w * rest`, where `* rest` is what remains from that
    /// `*`: every path the earlier position can still complete, the `*`
    /// completes too, so the earlier position never changes the outcome.
    /// Without this, a chain such as `/a*b*c*...` keeps every `*` it has
    /// passed, and a state of a rule with `n` stars holds up to `n`
    /// positions (quadratic construction); with it, a rule contributes at
    /// most one literal run. The minimal DFA is the same (minimisation
    /// would merge these states anyway). Positions are sorted, and a
    /// rule's positions are contiguous, so the backward pass sees each
    /// rule's last `*` first.
    ///
    /// *Dead rules.* A rule whose precedence can no longer beat the best
    /// scores (`alive`) cannot change the verdict.
    fn finish_in_place(&self, key: &mut Key) {
        let (a, d) = (key.allow, key.disallow);
        let (mut lo_a, mut lo_d) = (0, 0);
        let set = &mut key.set;
        let mut rule = u32::MAX;
        let (mut star, mut live) = (false, false);
        let mut prev = u32::MAX;
        let mut w = set.len();
        for i in (0..set.len()).rev() {
            let pos = set[i];
            if pos == prev {
                continue;
            }
            prev = pos;
            let r = self.rule[pos as usize];
            if r != rule {
                rule = r;
                star = false;
                let q = self.prio[r as usize];
                live = match self.allow[r as usize] {
                    true => q > a && q >= d,
                    false => q > d && q > a,
                };
                if live {
                    if q <= a {
                        lo_a = lo_a.max(q);
                    }
                    if q <= d {
                        lo_d = lo_d.max(q);
                    }
                }
            }
            if star || !live {
                continue;
            }
            star = self.tok[pos as usize] == PTok::Star;
            w -= 1;
            set[w] = pos;
        }
        set.drain(..w);
        if !self.scores && set.is_empty() {
            (key.allow, key.disallow) = (0, u64::from(d > a));
            return;
        }
        self.canonical(key, lo_a, lo_d);
    }

    /// Replaces the best scores by the smallest values with the same order
    /// relative to each other and to every live rule's precedence: only
    /// those comparisons decide the future, so states that differ only in
    /// irrelevant score values become one.
    ///
    /// In a part of a split group the reference set also holds every
    /// precedence outside the part. A canonical value `c(v)` then satisfies
    /// `4 lo < c(v) <= v` for the largest reference value `lo <= v`, and a
    /// value of another part is itself a reference value here, so every
    /// comparison between scores of different parts, and hence the maxima
    /// and the final verdict, comes out as with the real values.
    ///
    /// `lo_a` and `lo_d` are the largest precedences of the set's rules at
    /// most `a` and `d` (0 if none).
    fn canonical(&self, key: &mut Key, lo_a: u64, lo_d: u64) {
        let (a, d) = (key.allow, key.disallow);
        let below = |v: u64| {
            let i = self.outside.partition_point(|&q| q <= v);
            if i == 0 { 0 } else { self.outside[i - 1] }
        };
        let (lo_a, lo_d) = (lo_a.max(below(a)), lo_d.max(below(d)));
        // Values strictly inside a gap between precedences move to the
        // gap's first slots (precedences are multiples of 4, so `lo + 1` and
        // `lo + 2` stay inside the gap), keeping the order of `a` and `d`.
        let gap =
            |v: u64, lo: u64, rank: u64| if v == lo { v } else { lo + rank };
        let same_gap = a != lo_a && d != lo_d && lo_a == lo_d;
        let (ra, rd) = match (same_gap, a.cmp(&d)) {
            (true, core::cmp::Ordering::Greater) => (2, 1),
            (true, core::cmp::Ordering::Less) => (1, 2),
            _ => (1, 1),
        };
        key.allow = gap(a, lo_a, ra);
        key.disallow = gap(d, lo_d, rd);
    }

    /// The best Allow and Disallow precedence if the path ends in this
    /// state (scaled by 4, as stored).
    fn end_scores(&self, key: &Key) -> (u64, u64) {
        let (mut a, mut d) = (key.allow, key.disallow);
        for &pos in &key.set {
            if self.tok[pos as usize] == PTok::End {
                let r = self.rule[pos as usize] as usize;
                match self.rules[r].kind {
                    RuleKind::Allow => a = a.max(self.prio[r]),
                    RuleKind::Disallow => d = d.max(self.prio[r]),
                }
            }
        }
        (a, d)
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

/// A fast non-cryptographic hasher (FxHash's multiply-rotate) for the
/// subset-construction tables; keys are not attacker-chosen in a way that
/// matters here (the work budget bounds the total effort anyway).
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(buf));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n)
            .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The most NFA positions the states of one construction may hold in
/// total: a memory bound of about 50 MB for groups whose states hold many live
/// positions, which the state and work budgets alone allow.
const MAX_STORED_POSITIONS: u64 = 12 << 20;

/// The result of subset construction: states (as keys) and transitions.
struct Subsets {
    nfa: Nfa,
    keys: Vec<Key>,
    trans: Vec<u32>,
    start: u32,
    classes: [u8; 256],
    stride: usize,
}

/// Builds the verdict DFA of a group, or gives up past `budget`.
pub(crate) fn build(
    rules: &[BuildRule],
    budget: Budget,
    meter: &mut Meter,
) -> Result<Vec<u8>, OverBudget> {
    let sub = construct(rules, budget, meter, false, &[])?;
    let labels: Vec<u32> = sub
        .keys
        .iter()
        .map(|k| {
            let (a, d) = sub.nfa.end_scores(k);
            u32::from(d > a)
        })
        .collect();
    let part = refine(&sub.trans, sub.stride, &labels);
    let count = part.iter().max().map_or(0, |&m| m as usize + 1);
    // Wire order: allow sink, disallow sink, allow-labelled,
    // disallow-labelled.
    let order = order_blocks(&part, count, |b0, b1| {
        [b0 == part[0], b0 == part[1], labels[b1] == 0, labels[b1] == 1]
    });
    let disallow_from = (0..sub.keys.len())
        .filter(|&s| labels[s] == 1 && order[part[s] as usize] >= 2)
        .map(|s| order[part[s] as usize])
        .min()
        .unwrap_or(count as u32);
    let table = minimal_table(&sub, &part, &order, count);
    let start = order[part[sub.start as usize] as usize];
    Ok(emit(
        &table,
        count,
        &sub,
        Head {
            kind: KIND_VERDICT,
            start,
            boundary: disallow_from,
            max_priority: 0,
        },
        &[],
    ))
}

/// Builds a *score* DFA for part of a group: each state is labelled with
/// the best Allow and Disallow precedence a path ending there has matched,
/// so the parts of a split group can be combined by taking maxima.
/// Pruning stays valid across parts (a pruned rule can never change the
/// verdict of the whole group, whatever the other parts match).
pub(crate) fn build_scores(
    rules: &[BuildRule],
    outside: &[u32],
    budget: Budget,
    meter: &mut Meter,
) -> Result<Vec<u8>, OverBudget> {
    let sub = construct(rules, budget, meter, true, outside)?;
    let mut label_ids: FxMap<(u64, u64), u32> = FxMap::default();
    let mut label_values: Vec<(u64, u64)> = Vec::new();
    let labels: Vec<u32> = sub
        .keys
        .iter()
        .map(|k| {
            let pair = sub.nfa.end_scores(k);
            *label_ids.entry(pair).or_insert_with(|| {
                label_values.push(pair);
                label_values.len() as u32 - 1
            })
        })
        .collect();
    let part = refine(&sub.trans, sub.stride, &labels);
    let count = part.iter().max().map_or(0, |&m| m as usize + 1);
    // Absorbing blocks (every class leads back to the block) come first,
    // so the search can stop as soon as it enters one.
    let mut absorbing = vec![true; count];
    for s in 0..sub.keys.len() {
        let b = part[s];
        let row = &sub.trans[s * sub.stride..(s + 1) * sub.stride];
        if row.iter().any(|&t| part[t as usize] != b) {
            absorbing[b as usize] = false;
        }
    }
    let order = order_blocks(&part, count, |b0, _| {
        [absorbing[b0 as usize], !absorbing[b0 as usize], false, false]
    });
    let absorbing_end = absorbing.iter().filter(|&&a| a).count() as u32;
    let table = minimal_table(&sub, &part, &order, count);
    let mut rep = vec![0usize; count];
    for s in 0..sub.keys.len() {
        rep[order[part[s] as usize] as usize] = s;
    }
    let mut extra = Vec::with_capacity(count * 8);
    for &s in &rep {
        let (a, d) = label_values[labels[s] as usize];
        // Stored times 4, canonical: only their order matters.
        for v in [a, d] {
            let v = u32::try_from(v).expect("precedence x 4 fits u32");
            extra.extend_from_slice(&v.to_le_bytes());
        }
    }
    let start = order[part[sub.start as usize] as usize];
    let max_priority = rules.iter().map(|r| r.priority).max().unwrap_or(0);
    let max_priority = max_priority.checked_mul(4).expect("fits u32");
    Ok(emit(
        &table,
        count,
        &sub,
        Head {
            kind: KIND_SCORES,
            start,
            boundary: absorbing_end,
            max_priority,
        },
        &extra,
    ))
}

/// Subset construction within the group's `budget` and the file's
/// `meter`, which is charged with the work done whether or not it succeeds.
fn construct(
    rules: &[BuildRule],
    budget: Budget,
    meter: &mut Meter,
    scores: bool,
    outside: &[u32],
) -> Result<Subsets, OverBudget> {
    let (limit, over) = if meter.left() < budget.max_work {
        (meter.left(), OverBudget::FileWork)
    } else {
        (budget.max_work, OverBudget::Work)
    };
    let mut work = 0;
    let result = construct_within(
        rules,
        budget,
        Limit { work: limit, over },
        scores,
        outside,
        &mut work,
    );
    meter.charge(work);
    result
}

/// The work limit of one construction and what to report past it.
#[derive(Clone, Copy)]
struct Limit {
    work: u64,
    over: OverBudget,
}

fn construct_within(
    rules: &[BuildRule],
    budget: Budget,
    limit: Limit,
    scores: bool,
    outside: &[u32],
    work: &mut u64,
) -> Result<Subsets, OverBudget> {
    // Reading the rules is work too: a rule of 16 k octets costs as much
    // as 16 k states of one position.
    *work += rules.iter().map(|r| r.toks.len() as u64 + 1).sum::<u64>();
    if *work > limit.work {
        return Err(limit.over);
    }
    let nfa = Nfa::new(rules, scores, outside);
    let (classes, reps) = byte_classes(&nfa);
    let stride = reps.len();

    let allow_sink = Key { set: Vec::new(), allow: 0, disallow: 0 };
    let disallow_sink = Key { set: Vec::new(), allow: 0, disallow: 1 };
    let mut states = States::default();
    states.intern(&allow_sink);
    states.intern(&disallow_sink);
    let mut start = Key { set: Vec::new(), allow: 0, disallow: 0 };
    for &s in &nfa.starts {
        nfa.close(s, &mut start);
    }
    let start = nfa.finish(start);
    let start_id = states.intern(&start);

    let mut trans: Vec<u32> = vec![0; 2 * stride];
    trans[stride..2 * stride].fill(1);
    let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); stride];
    // Scratch keys, reused for every state: a successor's set is built
    // here and copied into the state list only if it is a new state.
    let mut current: Vec<u32> = Vec::new();
    let mut base = Key { set: Vec::new(), allow: 0, disallow: 0 };
    let mut base_key = base.clone();
    let mut extra = base.clone();
    let mut succ = base.clone();
    let mut next = 2;
    while next < states.keys.len() {
        let key = &states.keys[next];
        current.clone_from(&key.set);
        let (allow, disallow) = (key.allow, key.disallow);
        *work += current.len() as u64;
        // What every octet does: stars stay and re-close.
        base.set.clear();
        (base.allow, base.disallow) = (allow, disallow);
        let mut touched: Vec<usize> = Vec::new();
        for &pos in &current {
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
        base.set.sort_unstable();
        base.set.dedup();
        base_key.clone_from(&base);
        nfa.finish_in_place(&mut base_key);
        let base_id = states.intern(&base_key);
        let row = trans.len();
        trans.resize(row + stride, base_id);
        for c in touched {
            // The class's own positions are few: sort those and merge them
            // into the sorted base rather than sorting the union.
            extra.set.clear();
            (extra.allow, extra.disallow) = (base.allow, base.disallow);
            for &pos in &by_class[c] {
                nfa.close(pos, &mut extra);
            }
            extra.set.sort_unstable();
            merge_into(&base.set, &extra.set, &mut succ.set);
            (succ.allow, succ.disallow) = (extra.allow, extra.disallow);
            *work += succ.set.len() as u64;
            by_class[c].clear();
            nfa.finish_in_place(&mut succ);
            trans[row + c] = states.intern(&succ);
            // Checked per class: one state of a large group can cost
            // stride x positions steps.
            if *work > limit.work {
                return Err(limit.over);
            }
        }
        if states.keys.len() > budget.max_states {
            return Err(OverBudget::States);
        }
        if *work > limit.work {
            return Err(limit.over);
        }
        if (states.keys.len() * stride) as u64 > budget.max_cells
            || states.stored > MAX_STORED_POSITIONS
        {
            return Err(OverBudget::Bytes);
        }
        next += 1;
    }
    let keys = states.keys;
    // Minimisation and emission take a few passes over the table.
    *work += (keys.len() * stride) as u64;
    if *work > limit.work {
        return Err(limit.over);
    }
    Ok(Subsets { nfa, keys, trans, start: start_id, classes, stride })
}

/// The sorted union of two sorted lists, without duplicates, into `out`
/// (cleared first).
fn merge_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out.dedup();
}

/// The states of one subset construction, each stored once: `keys[id]`
/// is state `id`, and `table` finds a key's id by its hash (a key is
/// copied in only when it is a new state, so a lookup allocates nothing).
#[derive(Default)]
struct States {
    keys: Vec<Key>,
    table: HashTable<u32>,
    /// The positions of the keys stored.
    stored: u64,
}

impl States {
    /// The id of `key`, a new one if it is new.
    fn intern(&mut self, key: &Key) -> u32 {
        let hash = key_hash(key);
        let States { keys, table, stored } = self;
        if let Some(&id) = table.find(hash, |&id| keys[id as usize] == *key) {
            return id;
        }
        *stored += key.set.len() as u64;
        let id = keys.len() as u32;
        keys.push(key.clone());
        table.insert_unique(hash, id, |&id| key_hash(&keys[id as usize]));
        id
    }
}

fn key_hash(key: &Key) -> u64 {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    h.finish()
}

pub(crate) const KIND_VERDICT: u32 = 0;
pub(crate) const KIND_SCORES: u32 = 1;

/// Numbers the blocks of a partition: blocks are sorted by the first
/// `true` of `rank(block, a state of the block)` (a 4-level priority), ties
/// in block order.
fn order_blocks(
    part: &[u32],
    count: usize,
    rank: impl Fn(u32, usize) -> [bool; 4],
) -> Vec<u32> {
    let mut rep = vec![usize::MAX; count];
    for (s, &b) in part.iter().enumerate() {
        if rep[b as usize] == usize::MAX {
            rep[b as usize] = s;
        }
    }
    let level = |b: usize| {
        let r = rank(b as u32, rep[b]);
        r.iter().position(|&x| x).unwrap_or(4)
    };
    let mut blocks: Vec<usize> = (0..count).collect();
    blocks.sort_by_key(|&b| (level(b), b));
    let mut order = vec![0u32; count];
    for (i, &b) in blocks.iter().enumerate() {
        order[b] = i as u32;
    }
    order
}

/// The minimal DFA's table, state-major in wire order, targets as wire
/// state numbers (not yet premultiplied).
fn minimal_table(
    sub: &Subsets,
    part: &[u32],
    order: &[u32],
    count: usize,
) -> Vec<u32> {
    let stride = sub.stride;
    let mut rep = vec![0usize; count];
    for (s, &b) in part.iter().enumerate() {
        rep[order[b as usize] as usize] = s;
    }
    rep.iter()
        .flat_map(|&s| &sub.trans[s * stride..(s + 1) * stride])
        .map(|&t| order[part[t as usize] as usize])
        .collect()
}

/// Writes a DFA in the wire format (see the module docs of `dfa`): merges
/// byte classes with identical columns, picks 2- or 4-octet ids, and
/// appends `extra` (score labels) 4-byte aligned.
/// The per-DFA header fields that differ between the two kinds.
struct Head {
    kind: u32,
    /// Start state number (not premultiplied).
    start: u32,
    /// `disallow_from` or `absorbing_end` (not premultiplied).
    boundary: u32,
    max_priority: u32,
}

fn emit(
    table: &[u32],
    count: usize,
    sub: &Subsets,
    head: Head,
    extra: &[u8],
) -> Vec<u8> {
    let Head { kind, start, boundary, max_priority } = head;
    let stride = sub.stride;
    let mut columns: HashMap<Vec<u32>, u8> = HashMap::new();
    let mut class_map = vec![0u8; stride];
    let mut kept: Vec<usize> = Vec::new();
    for (c, slot) in class_map.iter_mut().enumerate() {
        let column: Vec<u32> =
            (0..count).map(|s| table[s * stride + c]).collect();
        let next_id = columns.len() as u8;
        *slot = *columns.entry(column).or_insert_with(|| {
            kept.push(c);
            next_id
        });
    }
    let new_stride = kept.len() as u32;
    let classes: Vec<u8> =
        sub.classes.iter().map(|&c| class_map[usize::from(c)]).collect();
    let narrow = count as u64 * u64::from(new_stride) <= 1 << 16;
    let width: u32 = if narrow { 2 } else { 4 };

    let cells = count * kept.len();
    let mut out =
        Vec::with_capacity(super::HEADER_LEN + cells * 4 + extra.len() + 2);
    for field in [
        new_stride,
        count as u32,
        start * new_stride,
        boundary * new_stride,
        width,
        kind,
        max_priority,
        0,
    ] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    out.extend_from_slice(&classes);
    for s in 0..count {
        for &c in &kept {
            let id = table[s * stride + c] * new_stride;
            if narrow {
                out.extend_from_slice(&(id as u16).to_le_bytes());
            } else {
                out.extend_from_slice(&id.to_le_bytes());
            }
        }
    }
    if !extra.is_empty() {
        out.resize(out.len().next_multiple_of(4), 0);
        out.extend_from_slice(extra);
    }
    out
}

/// Partitions states into blocks of equivalent states (same label, and same
/// block after every byte class), returning each state's block.
///
/// Blocks are kept as contiguous ranges of `elems`; splitting a block moves
/// the states that lead into the splitter to its front. Every popped
/// splitter is used for all byte classes at once, and only the smaller half
/// of a split block goes back on the worklist (unless the block was already
/// on it), which gives the `log n` bound.
fn refine(trans: &[u32], stride: usize, labels: &[u32]) -> Vec<u32> {
    let n = labels.len();
    // Inverse transitions per class, in CSR form: the states that move into
    // `t` on class `c` are inv[off[c * n + t]..off[c * n + t + 1]].
    let mut off = vec![0u32; stride * n + 1];
    for s in 0..n {
        for c in 0..stride {
            let t = trans[s * stride + c] as usize;
            off[c * n + t + 1] += 1;
        }
    }
    for i in 0..stride * n {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut inv = vec![0u32; n * stride];
    for s in 0..n {
        for c in 0..stride {
            let t = trans[s * stride + c] as usize;
            let slot = &mut fill[c * n + t];
            inv[*slot as usize] = s as u32;
            *slot += 1;
        }
    }

    // The initial partition: one block per label, blocks numbered by label.
    let label_len = labels.iter().max().map_or(0, |&m| m as usize + 1);
    let mut elems: Vec<u32> = (0..n as u32).collect();
    elems.sort_by_key(|&s| labels[s as usize]);
    let mut pos = vec![0u32; n];
    for (i, &s) in elems.iter().enumerate() {
        pos[s as usize] = i as u32;
    }
    let mut block_of: Vec<u32> = labels.to_vec();
    let mut start: Vec<u32> = vec![0; label_len];
    let mut end: Vec<u32> = vec![0; label_len];
    for (i, &s) in elems.iter().enumerate() {
        let l = labels[s as usize] as usize;
        if end[l] == 0 {
            start[l] = i as u32;
        }
        end[l] = i as u32 + 1;
    }
    let mut marked: Vec<u32> = vec![0; label_len];
    let mut on_list: Vec<bool> = vec![true; label_len];
    let mut worklist: Vec<u32> = (0..label_len as u32).collect();
    let mut splitter: Vec<u32> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();

    while let Some(b) = worklist.pop() {
        on_list[b as usize] = false;
        splitter.clear();
        splitter.extend_from_slice(
            &elems[start[b as usize] as usize..end[b as usize] as usize],
        );
        for c in 0..stride {
            for &t in &splitter {
                let i = c * n + t as usize;
                for &s in &inv[off[i] as usize..off[i + 1] as usize] {
                    let y = block_of[s as usize] as usize;
                    // Move `s` to the front (marked part) of its block.
                    let front = start[y] + marked[y];
                    let ps = pos[s as usize];
                    let other = elems[front as usize];
                    elems.swap(front as usize, ps as usize);
                    pos[other as usize] = ps;
                    pos[s as usize] = front;
                    if marked[y] == 0 {
                        touched.push(y as u32);
                    }
                    marked[y] += 1;
                }
            }
            for y in touched.drain(..) {
                let y = y as usize;
                let m = marked[y];
                marked[y] = 0;
                if m == end[y] - start[y] {
                    continue;
                }
                // Split: the marked front becomes a new block.
                let nb = start.len() as u32;
                start.push(start[y]);
                end.push(start[y] + m);
                marked.push(0);
                start[y] += m;
                for &s in &elems
                    [start[nb as usize] as usize..end[nb as usize] as usize]
                {
                    block_of[s as usize] = nb;
                }
                let smaller_is_new = m <= end[y] - start[y];
                if on_list[y] || smaller_is_new {
                    on_list.push(true);
                    worklist.push(nb);
                } else {
                    on_list.push(false);
                    on_list[y] = true;
                    worklist.push(y as u32);
                }
            }
        }
    }
    block_of
}
