//! Two snapshots compared: the hosts whose stance toward an agent
//! changed, and how many made each transition.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::stance::Stance;
use crate::table::StanceTable;

/// One host's changed stance toward one agent.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Change<'t> {
    host: &'t [u8],
    agent: usize,
    old: Stance,
    new: Stance,
}

impl<'t> Change<'t> {
    /// The host's name.
    pub fn host(&self) -> &'t [u8] {
        self.host
    }

    /// The agent's index in the tables' agents.
    pub fn agent(&self) -> usize {
        self.agent
    }

    /// The stance in the old snapshot ([`Stance::Absent`]: no entry).
    pub fn old_stance(&self) -> Stance {
        self.old
    }

    /// The stance in the new snapshot ([`Stance::Absent`]: no entry).
    pub fn new_stance(&self) -> Stance {
        self.new
    }
}

/// The hosts of two finished tables for the same agents, matched by name.
///
/// ```
/// use robofilter_audit::{Comparison, Stance, StanceTable};
///
/// let mut old = StanceTable::new(&["GPTBot"]);
/// old.push(b"a.example", &[Stance::AllowsAll]);
/// old.push(b"b.example", &[Stance::AllowsAll]);
/// old.finish();
/// let mut new = StanceTable::new(&["GPTBot"]);
/// new.push(b"a.example", &[Stance::BlockedEntirely]);
/// new.push(b"b.example", &[Stance::AllowsAll]);
/// new.push(b"c.example", &[Stance::BlocksSome]);
/// new.finish();
/// let diff = Comparison::new(&old, &new);
/// let changes: Vec<_> = diff.changes().map(|c| (c.host(), c.old_stance(), c.new_stance())).collect();
/// assert_eq!(changes, [
///     (&b"a.example"[..], Stance::AllowsAll, Stance::BlockedEntirely),
///     (&b"c.example"[..], Stance::Absent, Stance::BlocksSome),
/// ]);
/// assert_eq!(diff.transitions(0)[0], (Stance::AllowsAll, Stance::BlockedEntirely, 1));
/// assert_eq!((diff.both_len(), diff.only_old_len(), diff.only_new_len()), (2, 0, 1));
/// ```
#[derive(Clone, Debug)]
pub struct Comparison<'t> {
    old: &'t StanceTable,
    new: &'t StanceTable,
    /// The hosts whose stances differ (or that are in one table only):
    /// their index in each table.
    differ: Vec<(Option<usize>, Option<usize>)>,
    both: usize,
}

impl<'t> Comparison<'t> {
    /// Matches the hosts of `old` and `new` (both finished).
    ///
    /// # Panics
    ///
    /// If the tables are not for the same agents.
    pub fn new(old: &'t StanceTable, new: &'t StanceTable) -> Comparison<'t> {
        assert_eq!(old.agents(), new.agents(), "the same agents");
        let (mut i, mut j) = (0, 0);
        let (mut differ, mut both) = (Vec::new(), 0);
        while i < old.host_len() || j < new.host_len() {
            let order = match (i < old.host_len(), j < new.host_len()) {
                (true, true) => old.host(i).0.cmp(new.host(j).0),
                (true, false) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    differ.push((Some(i), None));
                    i += 1;
                }
                Ordering::Greater => {
                    differ.push((None, Some(j)));
                    j += 1;
                }
                Ordering::Equal => {
                    both += 1;
                    if old.host(i).1 != new.host(j).1 {
                        differ.push((Some(i), Some(j)));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        Comparison { old, new, differ, both }
    }

    /// Every changed stance, by host name, then in the agents' order.
    pub fn changes(&self) -> impl Iterator<Item = Change<'t>> + '_ {
        let agents = self.old.agents().len();
        self.differ.iter().flat_map(move |&(i, j)| {
            let host = match (i, j) {
                (Some(i), _) => self.old.host(i).0,
                (None, Some(j)) => self.new.host(j).0,
                (None, None) => unreachable!("a host is in one table"),
            };
            let at = |t: &'t StanceTable, k: Option<usize>, a: usize| {
                k.map_or(Stance::Absent, |k| t.host(k).1[a])
            };
            (0..agents).filter_map(move |a| {
                let (old, new) = (at(self.old, i, a), at(self.new, j, a));
                (old != new).then_some(Change { host, agent: a, old, new })
            })
        })
    }

    /// Agent `a`'s transitions, `(old, new, hosts)`, most hosts first.
    pub fn transitions(&self, a: usize) -> Vec<(Stance, Stance, u64)> {
        let mut counts: BTreeMap<(Stance, Stance), u64> = BTreeMap::new();
        for c in self.changes().filter(|c| c.agent == a) {
            *counts.entry((c.old, c.new)).or_default() += 1;
        }
        let mut out: Vec<_> =
            counts.into_iter().map(|((o, n), k)| (o, n, k)).collect();
        out.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
        out
    }

    /// Hosts in both tables.
    pub fn both_len(&self) -> usize {
        self.both
    }

    /// Hosts in the old table only.
    pub fn only_old_len(&self) -> usize {
        self.differ.iter().filter(|d| d.1.is_none()).count()
    }

    /// Hosts in the new table only.
    pub fn only_new_len(&self) -> usize {
        self.differ.iter().filter(|d| d.0.is_none()).count()
    }

    /// Hosts with a changed stance toward at least one agent (those in
    /// one table only included).
    pub fn changed_host_len(&self) -> usize {
        self.differ.len()
    }
}
