//! The verdict DFA: an automaton whose states already know the verdict.
//!
//! Every merged rule group compiles into one deterministic automaton over the
//! octets of the (normalised) path. A state is labelled with the verdict the
//! path would get if it ended there, so deciding a URL is one table lookup per
//! octet and one comparison at the end, whatever the number of rules.
//!
//! Two states are special: once no rule that could still change the verdict is
//! alive, the walk enters one of two absorbing *sinks* (allow, disallow) and
//! stops early. Literal-only groups usually decide after a few octets.
//!
//! The walk steps four octets between tests for a sink. In the rfc9309
//! dialect the path is normalised as it is walked; octets the
//! normalisation leaves alone (all but `%`, controls, space, DEL and
//! non-ASCII) are each their own normalisation, so runs of four of them
//! are stepped as in google, and the normaliser takes over from the first
//! group of four that holds another.
//!
//! A step is `table[class..][id]` for tables of more than 255 entries:
//! the row `table[class..]` does not depend on the state, so the core
//! computes it beside the walk, and the chain from one state to the next
//! is one load where `table[id + class]` is an add and a load (long walks
//! 7-9 % faster, the mixed-host frontier 2.4 %, for 8 % more
//! instructions; the lab notes in docs/records).
//!
//! # Wire format (little-endian, 4-byte aligned)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | `stride`: number of byte classes (1..=256) |
//! | 4 | 4 | `state_len`: number of states (>= 2) |
//! | 8 | 4 | `start`: start state id |
//! | 12 | 4 | `disallow_from`: first id of the disallow-labelled states |
//! | 16 | 4 | `width`: octets per state id, 2 or 4 |
//! | 20 | 4 | `kind`: 0 verdict DFA, 1 score DFA |
//! | 24 | 4 | score DFA: 4 x the highest precedence of its rules (else 0) |
//! | 28 | 4 | reserved, zero |
//! | 32 | 256 | byte -> class map |
//! | 288 | `width` x `state_len` x `stride` | transitions |
//! | (4-aligned) | 8 x `state_len` | score DFAs only: best Allow, Disallow precedence per state (x 4, canonical) |
//!
//! State ids are premultiplied by `stride` (the id of state `i` is
//! `i * stride`), so a transition is `table[id + class]`. State 0 is the allow
//! sink and state 1 (id `stride`) the disallow sink; states `2..` are ordered
//! allow-labelled first, so the verdict at the end of the path is "disallow"
//! exactly when `id == stride || id >= disallow_from`.
//!
//! A *score DFA* is one part of a group too large for one automaton (see
//! `compile.rs`): its states carry the best Allow and Disallow precedence
//! matched so far instead of a verdict, the parts are combined by taking
//! maxima, and field 12 is instead the end of the absorbing states (ids
//! below it never change again, so the walk stops there).
//!
//! Ids are 2 octets wide whenever `state_len * stride <= 65536` (almost
//! every real group), which halves the table and its cache footprint.
//! Byte classes are merged after minimisation wherever two classes lead to
//! the same state everywhere.
//!
//! # Batches: interleaved lanes
//!
//! One walk is a chain of dependent loads (`table[s + class]` needs the
//! previous `s`), so a single path uses the core's memory-level
//! parallelism poorly. [`decide_lanes`] keeps [`LANES`] walks in flight and
//! advances each by four octets per round, so that the out-of-order core
//! overlaps the loads of independent paths; a lane whose path ends (or that
//! reaches a sink) writes its verdict and is refilled with the next path at
//! once (AMAC style: no lane idles while paths remain). A lane carries its
//! own table and byte classes, so the paths of one batch may belong to
//! different automata (a mixed-host frontier). Issue 13 measured 1.5x per
//! URL for four lanes in lockstep and nothing more from eight.
//!
//! Lanes take verdict DFAs with 2-octet ids and, in the rfc9309 dialect,
//! paths that normalisation leaves unchanged (no `%`, control, space or
//! non-ASCII octet); every other item is walked alone, at once, by
//! [`Dfa::decide`]. Octets are read four at a time from fixed-size arrays,
//! so the only bounds check left per octet is the table's, whose
//! transitions were checked when the file was loaded.

#[cfg(feature = "compile")]
pub(crate) mod build;

/// Walks in flight in [`decide_lanes`].
pub(crate) const LANES: usize = 4;

use crate::dialect::Dialect;
use crate::error::LoadError;
use crate::normalize::{self, rfc9309_special};
use crate::url::MatchPath;
use crate::verdict::Verdict;

pub(crate) const HEADER_LEN: usize = 32 + 256;

/// A verdict DFA borrowed from a rules file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dfa<'a> {
    classes: &'a [u8; 256],
    table: Table<'a>,
    stride: u32,
    start: u32,
    /// Verdict DFA: first id of the disallow-labelled states. Score DFA:
    /// end of the absorbing states.
    boundary: u32,
    /// Score DFA only: (allow, disallow) precedence per state.
    scores: Option<&'a [u32]>,
    /// Score DFA only: 4 x the highest precedence of the part's rules.
    max_priority: u32,
}

/// The transition table, at the width it was stored with.
#[derive(Clone, Copy, Debug)]
enum Table<'a> {
    U16(&'a [u16]),
    U32(&'a [u32]),
}

/// A stored state id.
trait StateId: Copy {
    fn get(self) -> u32;
}

impl StateId for u16 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
}

impl StateId for u32 {
    #[inline(always)]
    fn get(self) -> u32 {
        self
    }
}

/// One transition of [`Dfa::walk`] from state id `s` on octet `b`: with
/// `ROWS`, each class starts a row of the table (see `Dfa::walk`).
#[inline(always)]
fn step<T: StateId, const ROWS: bool>(
    table: &[T],
    classes: &[u8; 256],
    s: u32,
    b: u8,
) -> u32 {
    let c = usize::from(classes[usize::from(b)]);
    if ROWS {
        table[c..][s as usize].get()
    } else {
        table[(s + c as u32) as usize].get()
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl<'a> Dfa<'a> {
    /// Reads and validates a DFA. `bytes` must be 4-byte aligned (the
    /// container guarantees it). With `check_table`, every transition is
    /// checked, so a search never fails a bounds check; without it (for a
    /// DFA checked when its file was loaded) lookups stay bounds-checked.
    pub(crate) fn from_bytes_with(
        bytes: &'a [u8],
        check_table: bool,
    ) -> Result<Dfa<'a>, LoadError> {
        let bad = |what: &'static str| Err(LoadError::engine(what));
        if bytes.len() < HEADER_LEN {
            return bad("verdict DFA shorter than its header");
        }
        let stride = le_u32(bytes, 0);
        let state_len = le_u32(bytes, 4);
        let start = le_u32(bytes, 8);
        let boundary = le_u32(bytes, 12);
        let width = le_u32(bytes, 16);
        let kind = le_u32(bytes, 20);
        if kind > 1 {
            return bad("unknown DFA kind");
        }
        if !(1..=256).contains(&stride) || state_len < 2 {
            return bad("verdict DFA has an invalid stride or state count");
        }
        if width != 2 && width != 4 {
            return bad("verdict DFA has an invalid state id width");
        }
        let cells = u64::from(stride) * u64::from(state_len);
        let Some(end) = cells
            .checked_mul(u64::from(width))
            .and_then(|n| usize::try_from(n).ok()?.checked_add(HEADER_LEN))
        else {
            return bad("verdict DFA table size overflows");
        };
        let labels_at = if kind == 1 { end.next_multiple_of(4) } else { end };
        let labels_len = if kind == 1 { state_len as usize * 8 } else { 0 };
        if labels_at.checked_add(labels_len) != Some(bytes.len())
            || cells > u64::from(u32::MAX)
        {
            return bad("verdict DFA table length does not match its header");
        }
        let classes: &[u8; 256] =
            bytes[32..HEADER_LEN].try_into().expect("256 bytes");
        // A maximum, not `any`: it vectorises (a member's load checks its
        // groups' classes twice, 1 % of the mixed frontier's instructions
        // as an early-exit loop).
        if u32::from(classes.iter().copied().max().unwrap_or(0)) >= stride {
            return bad("verdict DFA byte class out of range");
        }
        let limit = cells as u32;
        let valid = |id: u32| id % stride == 0 && id < limit;
        // A verdict DFA has its two sinks below the boundary.
        let boundary_ok = kind == 1 || boundary >= 2 * stride;
        if !valid(start)
            || !valid(boundary) && boundary != limit
            || !boundary_ok
        {
            return bad("verdict DFA start or label boundary out of range");
        }
        // A search reads `table[id + class]` with `class < stride`: every
        // transition must be at most the last row's start. (That it is a
        // multiple of the stride is not needed for safety, only for sense;
        // the checksum covers sense, and a maximum vectorises where a
        // division per cell would not.)
        let last_row = limit - stride;
        let raw = &bytes[HEADER_LEN..end];
        let unaligned =
            |_| LoadError::engine("verdict DFA table is misaligned");
        let table = if width == 2 {
            let t: &[u16] =
                bytemuck::try_cast_slice(raw).map_err(unaligned)?;
            if check_table
                && t.iter().copied().max().map_or(0, u32::from) > last_row
            {
                return bad("verdict DFA transition out of range");
            }
            Table::U16(t)
        } else {
            let t: &[u32] =
                bytemuck::try_cast_slice(raw).map_err(unaligned)?;
            if check_table && t.iter().copied().max().unwrap_or(0) > last_row {
                return bad("verdict DFA transition out of range");
            }
            Table::U32(t)
        };
        let scores = if kind == 1 {
            let t: &[u32] = bytemuck::try_cast_slice(&bytes[labels_at..])
                .map_err(unaligned)?;
            Some(t)
        } else {
            None
        };
        let max_priority = le_u32(bytes, 24);
        Ok(Dfa {
            classes,
            table,
            stride,
            start,
            boundary,
            scores,
            max_priority,
        })
    }

    /// The number of states.
    pub(crate) fn state_len(&self) -> usize {
        let cells = match self.table {
            Table::U16(t) => t.len(),
            Table::U32(t) => t.len(),
        };
        cells / self.stride as usize
    }

    /// The number of byte classes.
    pub(crate) fn stride(&self) -> usize {
        self.stride as usize
    }

    /// A score DFA's highest precedence (times 4, like its scores).
    pub(crate) fn max_priority(&self) -> u32 {
        self.max_priority
    }

    /// Whether this is a score DFA (a part of a split group).
    pub(crate) fn is_scores(&self) -> bool {
        self.scores.is_some()
    }

    /// The state after `b` from state id `s`.
    #[inline]
    fn next(&self, s: u32, b: u8) -> u32 {
        let at = (s + u32::from(self.classes[usize::from(b)])) as usize;
        match self.table {
            Table::U16(t) => t.get(at).map_or(0, |&x| u32::from(x)),
            Table::U32(t) => t.get(at).copied().unwrap_or(0),
        }
    }

    /// One octet per byte class (the smallest), so that a search over all
    /// octets visits each distinct transition once.
    fn class_representatives(&self) -> Vec<u8> {
        let mut seen = vec![false; self.stride as usize];
        let mut out = Vec::new();
        for b in 0..=255u8 {
            let c = usize::from(self.classes[usize::from(b)]);
            if !seen[c] {
                seen[c] = true;
                out.push(b);
            }
        }
        out
    }

    /// Verdict DFA: whether some octet string starting with `/` and not
    /// starting with `exempt` ends in an allow-labelled state, that is,
    /// whether the group allows some path outside `exempt`. Exact: a
    /// breadth-first search over (state, octets of `exempt` matched so far)
    /// pairs, each visited once, so at most `states x (exempt.len() + 1)`
    /// steps of one transition per byte class.
    pub(crate) fn allows_some_path_outside(&self, exempt: &[u8]) -> bool {
        self.reaches(exempt, true)
    }

    /// Verdict DFA: whether some path gets `allow` (else: disallow)
    /// outside `exempt` (see [`Dfa::allows_some_path_outside`]).
    pub(crate) fn reaches(&self, exempt: &[u8], want_allow: bool) -> bool {
        let allow =
            |s: u32| (s != self.stride && s < self.boundary) == want_allow;
        let reps = self.class_representatives();
        // `k`: how many octets of `exempt` the path has matched so far;
        // `k == exempt.len() + 1` once it has left it.
        let off = exempt.len() + 1;
        let states = self.state_len();
        let mut seen = vec![false; states * (off + 1)];
        let mut todo = Vec::new();
        let mut push = |s: u32, k: usize, todo: &mut Vec<(u32, usize)>| {
            let i = (s / self.stride) as usize * (off + 1) + k;
            if !seen[i] {
                seen[i] = true;
                todo.push((s, k));
            }
        };
        let first = self.next(self.start, b'/');
        let k0 = if exempt.first() == Some(&b'/') { 1 } else { off };
        push(first, k0, &mut todo);
        while let Some((s, k)) = todo.pop() {
            if k == exempt.len() {
                // The path starts with `exempt`: it and every extension
                // are exempt.
                continue;
            }
            if allow(s) {
                return true;
            }
            // The sinks never leave.
            if s == self.stride || s == 0 {
                continue;
            }
            for &b in &reps {
                let t = self.next(s, b);
                if k < exempt.len() {
                    // Octets of the same class lead to the same state but
                    // may or may not continue `exempt`.
                    let want = exempt[k];
                    if self.classes[usize::from(b)]
                        == self.classes[usize::from(want)]
                    {
                        push(t, k + 1, &mut todo);
                        let others = (0..=255u8).any(|o| {
                            o != want
                                && self.classes[usize::from(o)]
                                    == self.classes[usize::from(b)]
                        });
                        if !others {
                            continue;
                        }
                    }
                }
                push(t, off, &mut todo);
            }
        }
        false
    }

    /// Score DFA: the start state, the state after an octet, and a state's
    /// (allow, disallow) scores, for searches over a split group's parts.
    pub(crate) fn start_id(&self) -> u32 {
        self.start
    }

    /// See [`Dfa::start_id`].
    pub(crate) fn step(&self, s: u32, b: u8) -> u32 {
        self.next(s, b)
    }

    /// See [`Dfa::start_id`]: `(0, 0)` for a verdict DFA.
    pub(crate) fn state_scores(&self, s: u32) -> (u32, u32) {
        let i = (s / self.stride) as usize * 2;
        let labels = self.scores.unwrap_or(&[]);
        match (labels.get(i), labels.get(i + 1)) {
            (Some(&a), Some(&d)) => (a, d),
            _ => (0, 0),
        }
    }

    /// The byte classes as a map (for searches over several automata).
    pub(crate) fn classes(&self) -> &'a [u8; 256] {
        self.classes
    }

    /// Decides a path: one transition per octet until a sink or the end.
    /// Inlined everywhere: out of line behind `Matcher::decide_path`, it
    /// cost 3 % more instructions per URL on one host.
    #[inline(always)]
    pub(crate) fn decide(
        &self,
        path: MatchPath<'_>,
        dialect: Dialect,
    ) -> Verdict {
        let s = self.run_here(path, dialect, 2 * self.stride);
        if s == self.stride || s >= self.boundary {
            Verdict::Disallow
        } else {
            Verdict::Allow
        }
    }

    /// A score DFA's best (allow, disallow) precedence for a path.
    #[inline]
    pub(crate) fn scores(
        &self,
        path: MatchPath<'_>,
        dialect: Dialect,
    ) -> (u32, u32) {
        self.label(self.run(path, dialect, self.boundary))
    }

    /// A score DFA's (allow, disallow) label of state id `s`.
    #[inline]
    fn label(&self, s: u32) -> (u32, u32) {
        let i = (s / self.stride) as usize * 2;
        let labels = self.scores.unwrap_or(&[]);
        (labels[i], labels[i + 1])
    }

    /// [`Dfa::scores`] of `N` score DFAs over one path, walked in
    /// lockstep: the parts' walks are independent chains of table loads,
    /// so stepping them together lets the core overlap them where one
    /// after the other each waits on its own loads (a split group's parts
    /// all walk the same path, usually to its end). The walk stops when
    /// every part has reached a state that can no longer change.
    ///
    /// Parts whose tables differ in id width are walked one by one.
    #[inline]
    pub(crate) fn scores_lockstep<const N: usize>(
        parts: &[Dfa<'_>; N],
        path: MatchPath<'_>,
        dialect: Dialect,
    ) -> [(u32, u32); N] {
        let narrow = |p: &Dfa<'_>| matches!(p.table, Table::U16(_));
        let states = if parts.iter().all(narrow) {
            let tables = parts.each_ref().map(|p| match p.table {
                Table::U16(t) => t,
                Table::U32(_) => &[],
            });
            lockstep(parts, tables, path, dialect)
        } else if !parts.iter().any(narrow) {
            let tables = parts.each_ref().map(|p| match p.table {
                Table::U32(t) => t,
                Table::U16(_) => &[],
            });
            lockstep(parts, tables, path, dialect)
        } else {
            return parts.each_ref().map(|p| p.scores(path, dialect));
        };
        core::array::from_fn(|i| parts[i].label(states[i]))
    }

    /// Walks from the start state until an id below `stop_below` (a state
    /// that can no longer change) or the end of the path.
    #[inline]
    fn run(
        &self,
        path: MatchPath<'_>,
        dialect: Dialect,
        stop_below: u32,
    ) -> u32 {
        self.run_here(path, dialect, stop_below)
    }

    /// [`Dfa::run`], inlined where it is called: [`Dfa::decide`] walks
    /// nearly every URL, and a call there cost its six register saves and
    /// restores per URL (3 % of one host's instructions). The score walks
    /// call [`Dfa::run`], out of line: inlined there too, the mixed-host
    /// frontier took 0.9 % more instructions.
    #[inline(always)]
    fn run_here(
        &self,
        path: MatchPath<'_>,
        dialect: Dialect,
        stop_below: u32,
    ) -> u32 {
        match self.table {
            Table::U16(t) => self.walk_table(t, path, dialect, stop_below),
            Table::U32(t) => self.walk_table(t, path, dialect, stop_below),
        }
    }

    /// [`Dfa::walk`] by rows for tables of more than 255 entries.
    #[inline(always)]
    fn walk_table<T: StateId>(
        &self,
        table: &[T],
        path: MatchPath<'_>,
        dialect: Dialect,
        stop_below: u32,
    ) -> u32 {
        if table.len() > 255 {
            self.walk::<T, true>(table, path, dialect, stop_below)
        } else {
            self.walk::<T, false>(table, path, dialect, stop_below)
        }
    }

    #[inline(always)]
    fn walk<T: StateId, const ROWS: bool>(
        &self,
        table: &[T],
        path: MatchPath<'_>,
        dialect: Dialect,
        stop_below: u32,
    ) -> u32 {
        let classes = self.classes;
        // With more than 255 entries every class (an octet) starts a row
        // inside the table, and the compiler, told so once, checks only
        // the state's index per step.
        if ROWS {
            assert!(
                table.len() > 255,
                "`walk_table` walks rows of long tables"
            );
        }
        // One transition, as a macro over an `#[inline(always)]` function
        // rather than a closure: the wheel's loop over an Arrow column
        // called the closure once per octet (1.5x the CLI's instructions
        // per URL), where the CLI's loop had it inlined.
        macro_rules! next {
            ($s:expr, $b:expr) => {
                step::<T, ROWS>(table, classes, $s, $b)
            };
        }
        let mut s = self.start;
        if s < stop_below {
            return s;
        }
        if path.has_lead_slash() {
            s = next!(s, b'/');
            if s < stop_below {
                return s;
            }
        }
        match dialect {
            Dialect::Google => {
                // States below `stop_below` loop to themselves, so testing
                // for them once every four octets ends in the same state
                // with a quarter of the branches.
                let mut rest = path.tail();
                while let [a, b, c, d, tail @ ..] = rest {
                    s = next!(next!(next!(next!(s, *a), *b), *c), *d);
                    if s < stop_below {
                        return s;
                    }
                    rest = tail;
                }
                for &b in rest {
                    s = next!(s, b);
                }
            }
            Dialect::Rfc9309 => {
                // An octet the normalisation leaves alone is a unit of its
                // own: four such at a time as in google, then the
                // normaliser from the first group of four with another.
                let mut rest = path.tail();
                while let [a, b, c, d, tail @ ..] = rest {
                    if !plain4([*a, *b, *c, *d]) {
                        break;
                    }
                    s = next!(next!(next!(next!(s, *a), *b), *c), *d);
                    if s < stop_below {
                        return s;
                    }
                    rest = tail;
                }
                normalize::rfc9309_url(rest, |b| {
                    s = next!(s, b);
                    s >= stop_below
                });
            }
        }
        s
    }
}

/// A verdict DFA that owns its tables: one built in memory while URLs are
/// decided (see `check.rs`), not borrowed from a rules file.
#[derive(Debug)]
pub(crate) struct OwnedDfa {
    classes: Box<[u8; 256]>,
    table: OwnedTable,
    stride: u32,
    start: u32,
    boundary: u32,
}

/// [`OwnedDfa`]'s transitions, at the width they were built with.
#[derive(Debug)]
#[cfg_attr(not(feature = "compile"), allow(dead_code))]
enum OwnedTable {
    U16(Box<[u16]>),
    U32(Box<[u32]>),
}

// Built only with the compiler.
#[cfg_attr(not(feature = "compile"), allow(dead_code))]
impl OwnedDfa {
    /// Copies a verdict DFA's tables (`None` for a score DFA).
    pub(crate) fn new(dfa: &Dfa<'_>) -> Option<OwnedDfa> {
        if dfa.is_scores() {
            return None;
        }
        let table = match dfa.table {
            Table::U16(t) => OwnedTable::U16(t.into()),
            Table::U32(t) => OwnedTable::U32(t.into()),
        };
        Some(OwnedDfa {
            classes: Box::new(*dfa.classes),
            table,
            stride: dfa.stride,
            start: dfa.start,
            boundary: dfa.boundary,
        })
    }

    /// The automaton, borrowed: no check, the tables were checked when
    /// they were copied.
    #[inline]
    pub(crate) fn get(&self) -> Dfa<'_> {
        let table = match &self.table {
            OwnedTable::U16(t) => Table::U16(t),
            OwnedTable::U32(t) => Table::U32(t),
        };
        Dfa {
            classes: &self.classes,
            table,
            stride: self.stride,
            start: self.start,
            boundary: self.boundary,
            scores: None,
            max_priority: 0,
        }
    }

    /// The octets its tables take.
    pub(crate) fn size(&self) -> usize {
        let cells = match &self.table {
            OwnedTable::U16(t) => t.len() * 2,
            OwnedTable::U32(t) => t.len() * 4,
        };
        256 + cells
    }
}

/// The walk of [`Dfa::scores_lockstep`]: each part's final state id.
///
/// [`Dfa::walk`] is this walk for one automaton, kept apart on purpose:
/// `Dfa::run` written as `lockstep::<_, 1>` (with a per-part stop bound)
/// gave the same verdicts for 2.5 % more instructions on the single-host
/// workload (callgrind, 1.382 G against 1.416 G, 2.2 M URLs), the cost
/// of the hottest loop of every verdict.
#[inline(always)]
fn lockstep<T: StateId, const N: usize>(
    parts: &[Dfa<'_>; N],
    tables: [&[T]; N],
    path: MatchPath<'_>,
    dialect: Dialect,
) -> [u32; N] {
    let next = |i: usize, s: u32, b: u8| {
        let class = u32::from(parts[i].classes[usize::from(b)]);
        tables[i][(s + class) as usize].get()
    };
    // Ids below a score DFA's boundary loop to themselves (see `run`).
    let settled =
        |s: &[u32; N]| s.iter().zip(parts).all(|(&s, p)| s < p.boundary);
    let mut s = parts.each_ref().map(|p| p.start);
    if settled(&s) {
        return s;
    }
    if path.has_lead_slash() {
        for (i, s) in s.iter_mut().enumerate() {
            *s = next(i, *s, b'/');
        }
    }
    match dialect {
        Dialect::Google => {
            let mut rest = path.tail();
            while let [a, b, c, d, tail @ ..] = rest {
                if settled(&s) {
                    return s;
                }
                for (i, s) in s.iter_mut().enumerate() {
                    *s =
                        next(i, next(i, next(i, next(i, *s, *a), *b), *c), *d);
                }
                rest = tail;
            }
            for &b in rest {
                for (i, s) in s.iter_mut().enumerate() {
                    *s = next(i, *s, b);
                }
            }
        }
        Dialect::Rfc9309 => {
            // As in `Dfa::walk`: octets the normalisation leaves alone
            // four at a time, then the normaliser.
            let mut rest = path.tail();
            while let [a, b, c, d, tail @ ..] = rest {
                if settled(&s) {
                    return s;
                }
                if !plain4([*a, *b, *c, *d]) {
                    break;
                }
                for (i, s) in s.iter_mut().enumerate() {
                    *s =
                        next(i, next(i, next(i, next(i, *s, *a), *b), *c), *d);
                }
                rest = tail;
            }
            normalize::rfc9309_url(rest, |b| {
                for (i, s) in s.iter_mut().enumerate() {
                    *s = next(i, *s, b);
                }
                !settled(&s)
            });
        }
    }
    s
}

/// Whether the rfc9309 normalisation leaves all four octets alone, so
/// that each is a unit of its own (one compare chain, no short circuit).
#[inline(always)]
fn plain4([a, b, c, d]: [u8; 4]) -> bool {
    !(rfc9309_special(a)
        | rfc9309_special(b)
        | rfc9309_special(c)
        | rfc9309_special(d))
}

/// One walk of [`decide_lanes`]: all it needs, so that lanes may walk
/// different automata.
#[derive(Clone, Copy)]
struct Lane<'t, 'p> {
    table: &'t [u16],
    classes: &'t [u8; 256],
    state: u32,
    /// Octets not walked yet.
    rest: &'p [u8],
    /// The sinks are the ids below (`2 * stride`).
    stop_below: u32,
    /// First id of the disallow-labelled states.
    boundary: u32,
    /// Where the verdict goes.
    item: usize,
}

impl<'t, 'p> Lane<'t, 'p> {
    /// A lane for `path`, or the verdict at once for an item lanes do not
    /// take (see the module docs).
    #[inline]
    fn start(
        dfa: &Dfa<'t>,
        path: MatchPath<'p>,
        dialect: Dialect,
        item: usize,
    ) -> Result<Lane<'t, 'p>, Verdict> {
        let Table::U16(table) = dfa.table else {
            return Err(dfa.decide(path, dialect));
        };
        if dialect == Dialect::Rfc9309
            && normalize::has_rfc9309_special(path.tail())
        {
            return Err(dfa.decide(path, dialect));
        }
        let mut lane = Lane {
            table,
            classes: dfa.classes,
            state: dfa.start,
            rest: path.tail(),
            stop_below: 2 * dfa.stride,
            boundary: dfa.boundary,
            item,
        };
        // A sink loops to itself: stepping from one changes nothing.
        if path.has_lead_slash() {
            lane.state = lane.next(lane.state, b'/');
        }
        // Decided already (a group that disallows `/`): no lane needed.
        if lane.state < lane.stop_below {
            return Err(lane.finish());
        }
        Ok(lane)
    }

    #[inline(always)]
    fn next(&self, s: u32, b: u8) -> u32 {
        let class = u32::from(self.classes[usize::from(b)]);
        u32::from(self.table[(s + class) as usize])
    }

    /// The verdict once fewer than four octets are left or the state is a
    /// sink.
    #[inline]
    fn finish(&self) -> Verdict {
        let mut s = self.state;
        if s >= self.stop_below {
            for &b in self.rest {
                s = self.next(s, b);
            }
        }
        if s == self.stop_below / 2 || s >= self.boundary {
            Verdict::Disallow
        } else {
            Verdict::Allow
        }
    }
}

/// Decides every item of `items`, `(index, dfa, path, dialect)`, into
/// `out[index]`, with the walks of up to [`LANES`] paths interleaved (see
/// the module docs). Gives exactly [`Dfa::decide`]'s verdicts.
///
/// # Panics
///
/// If an index is out of bounds for `out`.
pub(crate) fn decide_lanes<'t, 'p>(
    items: impl Iterator<Item = (usize, Dfa<'t>, MatchPath<'p>, Dialect)>,
    out: &mut [Verdict],
) {
    decide_lanes_n::<LANES, _>(items, out)
}

/// [`decide_lanes`] with `N` lanes.
#[inline]
fn decide_lanes_n<
    't,
    'p,
    const N: usize,
    I: Iterator<Item = (usize, Dfa<'t>, MatchPath<'p>, Dialect)>,
>(
    mut items: I,
    out: &mut [Verdict],
) {
    // The next lane's walk; items lanes do not take are decided here.
    let mut fill = |out: &mut [Verdict]| {
        for (i, dfa, path, dialect) in items.by_ref() {
            match Lane::start(&dfa, path, dialect, i) {
                Ok(lane) => return Some(lane),
                Err(v) => out[i] = v,
            }
        }
        None
    };
    let mut lanes: [Option<Lane<'t, 'p>>; N] = [None; N];
    for lane in &mut lanes {
        *lane = fill(out);
    }
    loop {
        let mut live = false;
        for slot in &mut lanes {
            let Some(lane) = slot else { continue };
            live = true;
            if let Some((q, tail)) = lane.rest.split_first_chunk::<4>() {
                let s = lane.state;
                let s = lane.next(
                    lane.next(lane.next(lane.next(s, q[0]), q[1]), q[2]),
                    q[3],
                );
                lane.state = s;
                lane.rest = tail;
                if s >= lane.stop_below && tail.len() >= 4 {
                    continue;
                }
            }
            out[lane.item] = lane.finish();
            *slot = fill(out);
        }
        if !live {
            break;
        }
    }
}

/// One walk of [`decide_lanes_one`]: the automaton is the batch's.
#[derive(Clone, Copy)]
struct Walk<'p> {
    state: u32,
    rest: &'p [u8],
    item: usize,
}

/// [`decide_lanes`] for paths that all go through `dfa`: `out[i]` gets the
/// verdict of `paths[i]`. The lanes hold only a state and the octets left,
/// so the table, the classes and the bounds stay in registers.
///
/// # Panics
///
/// If `out` is shorter than `paths`.
pub(crate) fn decide_lanes_one(
    dfa: &Dfa<'_>,
    paths: &[MatchPath<'_>],
    dialect: Dialect,
    out: &mut [Verdict],
) {
    let Table::U16(table) = dfa.table else {
        for (v, &p) in out.iter_mut().zip(paths) {
            *v = dfa.decide(p, dialect);
        }
        return;
    };
    let classes = dfa.classes;
    let (stride, stop_below, boundary) =
        (dfa.stride, 2 * dfa.stride, dfa.boundary);
    let next = |s: u32, b: u8| {
        u32::from(table[(s + u32::from(classes[usize::from(b)])) as usize])
    };
    let verdict = |s: u32| {
        if s == stride || s >= boundary {
            Verdict::Disallow
        } else {
            Verdict::Allow
        }
    };
    let mut items = paths.iter().enumerate();
    let mut fill = |out: &mut [Verdict]| {
        for (i, &path) in items.by_ref() {
            let tail = path.tail();
            if dialect == Dialect::Rfc9309
                && normalize::has_rfc9309_special(tail)
            {
                out[i] = dfa.decide(path, dialect);
                continue;
            }
            let mut s = dfa.start;
            if path.has_lead_slash() {
                s = next(s, b'/');
            }
            if s < stop_below || tail.is_empty() {
                out[i] = verdict(s);
                continue;
            }
            return Some(Walk { state: s, rest: tail, item: i });
        }
        None
    };
    let mut lanes: [Option<Walk<'_>>; LANES] = [None; LANES];
    for lane in &mut lanes {
        *lane = fill(out);
    }
    loop {
        let mut live = false;
        for slot in &mut lanes {
            let Some(w) = slot else { continue };
            live = true;
            let mut s = w.state;
            if let Some((q, tail)) = w.rest.split_first_chunk::<4>() {
                s = next(next(next(next(s, q[0]), q[1]), q[2]), q[3]);
                w.state = s;
                w.rest = tail;
                if s >= stop_below && tail.len() >= 4 {
                    continue;
                }
            }
            if s >= stop_below {
                for &b in w.rest {
                    s = next(s, b);
                }
            }
            out[w.item] = verdict(s);
            *slot = fill(out);
        }
        if !live {
            break;
        }
    }
}

/// Both state id widths give the reference's verdicts, in every walk, and
/// the narrower is written whenever it fits.
#[cfg(all(test, feature = "compile"))]
mod width_tests {
    use super::build::{self, Budget, BuildRule, Meter};
    use super::{Dfa, HEADER_LEN, decide_lanes, decide_lanes_one, le_u32};
    use crate::dialect::Dialect;
    use crate::pattern;
    use crate::url::MatchPath;
    use crate::verdict::{RuleKind, Verdict};

    fn build_dfa(rules: &[(RuleKind, Vec<u8>)]) -> Vec<u8> {
        let rules: Vec<BuildRule> = rules
            .iter()
            .map(|(kind, p)| {
                let (toks, anchored) = pattern::tokens(p, Dialect::Google);
                BuildRule {
                    kind: *kind,
                    priority: p.len() as u32,
                    toks,
                    anchored,
                }
            })
            .collect();
        let budget = Budget {
            max_states: 50_000,
            max_work: 25_000_000,
            max_cells: 4 << 20,
        };
        build::build(&rules, budget, &mut Meter::new(u64::MAX)).unwrap()
    }

    /// The same automaton with its transitions written `width` octets wide
    /// (written independently of `build::emit`, from the ids it stored).
    fn reencode(bytes: &[u8], width: u32) -> Vec<u8> {
        let cells = (le_u32(bytes, 0) * le_u32(bytes, 4)) as usize;
        let old = le_u32(bytes, 16) as usize;
        let mut out = bytes[..HEADER_LEN].to_vec();
        out[16..20].copy_from_slice(&width.to_le_bytes());
        for i in 0..cells {
            let at = HEADER_LEN + i * old;
            let id = match old {
                2 => u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
                _ => le_u32(bytes, at),
            };
            match width {
                2 => out.extend_from_slice(
                    &u16::try_from(id).unwrap().to_le_bytes(),
                ),
                _ => out.extend_from_slice(&id.to_le_bytes()),
            }
        }
        out
    }

    /// The reference: the longest matching pattern wins, Allow on ties.
    fn reference(rules: &[(RuleKind, Vec<u8>)], path: &[u8]) -> Verdict {
        let best = |want: RuleKind| {
            rules
                .iter()
                .filter(|(k, p)| {
                    *k == want && pattern::matches(p, Dialect::Google, path)
                })
                .map(|(_, p)| p.len())
                .max()
        };
        if best(RuleKind::Disallow) > best(RuleKind::Allow) {
            Verdict::Disallow
        } else {
            Verdict::Allow
        }
    }

    /// Deterministic paths over some octets the rules use and others,
    /// and each rule's pattern (without `*`), shortened and extended.
    fn paths(rules: &[(RuleKind, Vec<u8>)]) -> Vec<Vec<u8>> {
        let alphabet = b"/abxyz0123456789p.";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut out: Vec<Vec<u8>> = rules
            .iter()
            .flat_map(|(_, p)| {
                let p: Vec<u8> =
                    p.iter().copied().filter(|&b| b != b'*').collect();
                let p = p.strip_suffix(b"$").unwrap_or(&p).to_vec();
                [p[..p.len() - 1].to_vec(), [&p[..], b"x"].concat(), p]
            })
            .collect();
        out.extend((0..3000).map(|_| {
            let len = (next() % 14) as usize;
            let mut p = vec![b'/'];
            for _ in 0..len {
                p.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            p
        }));
        out
    }

    fn check(rules: &[(RuleKind, Vec<u8>)], built_width: u32, widths: &[u32]) {
        let built = build_dfa(rules);
        assert_eq!(le_u32(&built, 16), built_width, "the narrowest width");
        let encoded: Vec<Vec<u32>> = widths
            .iter()
            .map(|&w| {
                // u32-aligned copies, as the container guarantees.
                let bytes = reencode(&built, w);
                let mut words = vec![0u32; bytes.len().div_ceil(4)];
                bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..bytes.len()]
                    .copy_from_slice(&bytes);
                words
            })
            .collect();
        let dfas: Vec<Dfa<'_>> = encoded
            .iter()
            .zip(widths)
            .map(|(words, &w)| {
                let bytes = bytemuck::cast_slice::<u32, u8>(words);
                let cells = (le_u32(bytes, 0) * le_u32(bytes, 4)) as usize;
                let len = HEADER_LEN + cells * w as usize;
                Dfa::from_bytes_with(&bytes[..len], true).unwrap()
            })
            .collect();
        let paths = paths(rules);
        let mps: Vec<MatchPath<'_>> =
            paths.iter().map(|p| MatchPath::from_path(p)).collect();
        let want: Vec<Verdict> =
            paths.iter().map(|p| reference(rules, p)).collect();
        assert!(want.contains(&Verdict::Allow));
        assert!(want.contains(&Verdict::Disallow));
        for dfa in &dfas {
            for (mp, w) in mps.iter().zip(&want) {
                assert_eq!(dfa.decide(*mp, Dialect::Google), *w);
            }
            let mut out = vec![Verdict::Allow; mps.len()];
            decide_lanes_one(dfa, &mps, Dialect::Google, &mut out);
            assert_eq!(out, want);
        }
        // One batch whose lanes mix the widths.
        let mut out = vec![Verdict::Allow; mps.len()];
        let items = mps
            .iter()
            .enumerate()
            .map(|(i, mp)| (i, dfas[i % dfas.len()], *mp, Dialect::Google));
        decide_lanes(items, &mut out);
        assert_eq!(out, want);
    }

    fn rule(kind: RuleKind, p: &str) -> (RuleKind, Vec<u8>) {
        (kind, p.as_bytes().to_vec())
    }

    #[test]
    fn small_automata_take_two_octets_and_agree_with_four() {
        use RuleKind::{Allow, Disallow};
        let rules = [
            rule(Disallow, "/a*b"),
            rule(Allow, "/ab*y"),
            rule(Disallow, "/x*y$"),
            rule(Allow, "/x"),
            rule(Disallow, "/p12"),
            rule(Allow, "/p1*.z"),
        ];
        check(&rules, 2, &[2, 4]);
    }

    /// A class at or past the stride is refused wherever it is: the last
    /// octet's too (the check is a maximum over all 256).
    #[test]
    fn a_byte_class_past_the_stride_is_refused() {
        let built = build_dfa(&[rule(RuleKind::Disallow, "/a*b")]);
        let stride = le_u32(&built, 0);
        let mut words = vec![0u32; built.len().div_ceil(4)];
        let bytes = &mut bytemuck::cast_slice_mut::<u32, u8>(&mut words)
            [..built.len()];
        bytes.copy_from_slice(&built);
        assert!(Dfa::from_bytes_with(bytes, true).is_ok());
        for at in [32, 32 + usize::from(b'/'), HEADER_LEN - 1] {
            let was = bytes[at];
            for (class, ok) in
                [(stride - 1, true), (stride, false), (255, false)]
            {
                bytes[at] = class as u8;
                let got = Dfa::from_bytes_with(bytes, false);
                let what = format!("class {class} at {at}");
                assert_eq!(got.is_ok(), ok, "{what}");
                if let Err(e) = got {
                    assert!(
                        e.to_string().contains("byte class"),
                        "{what}: {e}"
                    );
                }
            }
            bytes[at] = was;
        }
    }

    #[test]
    fn large_automata_take_four_octets() {
        // 1,500 literal paths of 12 pseudo-random hex digits: after the
        // first few octets each path is alone, so its remaining octets are
        // distinct states: over 65,536 cells after minimisation.
        let rules: Vec<(RuleKind, Vec<u8>)> = (0..1500u32)
            .map(|i| {
                let kind = if i % 3 == 0 {
                    RuleKind::Allow
                } else {
                    RuleKind::Disallow
                };
                let h = i.wrapping_mul(0x9E37_79B9).rotate_left(7);
                (kind, format!("/p{h:08x}{:04x}", h >> 16).into_bytes())
            })
            .collect();
        check(&rules, 4, &[4]);
    }
}
