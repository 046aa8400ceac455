//! Every host's stances toward a list of agents: what a summary, a report
//! and a comparison of two snapshots are made from.

use std::collections::HashMap;

use robofilter::{Bundle, HostRules};

use crate::signal::Signals;
use crate::stance::Stance;

/// The stances of many hosts toward the same agents, sorted by host name
/// once [`StanceTable::finish`] has run.
///
/// Hosts with the same stances (and signals, [`Signals`]) share one row
/// (most hosts treat most agents alike), which is also how the report
/// stores them.
///
/// ```
/// use robofilter_audit::{Stance, StanceTable};
///
/// let mut table = StanceTable::new(&["GPTBot", "CCBot"]);
/// table.push(b"b.example", &[Stance::AllowsAll, Stance::BlockedEntirely]);
/// table.push(b"a.example", &[Stance::AllowsAll, Stance::BlockedEntirely]);
/// table.finish();
/// assert_eq!(table.host_len(), 2);
/// assert_eq!(table.row_len(), 1);
/// assert_eq!(table.host(0).0, b"a.example");
/// assert_eq!(table.find(b"b.example"), Some(1));
/// ```
#[derive(Clone, Debug, Default)]
pub struct StanceTable {
    agents: Vec<String>,
    /// Host names and the index of their row.
    hosts: Vec<(Box<[u8]>, u32)>,
    rows: Vec<Box<[Stance]>>,
    /// Per row, the signals toward each agent.
    signals: Vec<Box<[Signals]>>,
    row_of: HashMap<RowKey, u32>,
}

/// A row's stances and signals, which identify it.
type RowKey = (Box<[Stance]>, Box<[Signals]>);

impl StanceTable {
    /// An empty table for `agents`.
    pub fn new(agents: &[&str]) -> StanceTable {
        StanceTable {
            agents: agents.iter().map(|a| a.to_string()).collect(),
            ..StanceTable::default()
        }
    }

    /// Adds a host and its stance toward each agent, in the agents' order.
    ///
    /// # Panics
    ///
    /// If `stances` does not hold one stance per agent.
    pub fn push(&mut self, host: &[u8], stances: &[Stance]) {
        let none = vec![Signals::default(); stances.len()];
        self.push_with(host, stances, &none);
    }

    /// [`StanceTable::push`] with the host's signals toward each agent.
    ///
    /// # Panics
    ///
    /// If `stances` or `signals` does not hold one entry per agent.
    pub fn push_with(
        &mut self,
        host: &[u8],
        stances: &[Stance],
        signals: &[Signals],
    ) {
        assert_eq!(stances.len(), self.agents.len(), "one stance per agent");
        assert_eq!(signals.len(), self.agents.len(), "one entry per agent");
        let key = (stances.into(), signals.into());
        let row = match self.row_of.get(&key) {
            Some(&row) => row,
            None => {
                let row = self.rows.len() as u32;
                self.rows.push(stances.into());
                self.signals.push(signals.into());
                self.row_of.insert(key, row);
                row
            }
        };
        self.hosts.push((host.into(), row));
    }

    /// Adds every host of `bundle`, given the stances of each of its
    /// members (`members[m]`, from [`member_stances`]) and, if counted,
    /// their signals (from [`member_signals`]); hosts whose entry is a
    /// fetch outcome take its stance, and give no signal.
    ///
    /// [`member_stances`]: crate::member_stances
    /// [`member_signals`]: crate::member_signals
    ///
    /// # Panics
    ///
    /// If `members` (or `signals`) does not hold one row per member, each
    /// with one entry per agent.
    pub fn push_bundle(
        &mut self,
        bundle: &Bundle<'_>,
        members: &[Vec<Stance>],
        signals: Option<&[Vec<Signals>]>,
    ) {
        assert_eq!(members.len(), bundle.member_len(), "one row per member");
        let n = self.agents.len();
        let fixed = |s: Stance| vec![s; n];
        let (allowed, failed) =
            (fixed(Stance::AllowsAll), fixed(Stance::FailedToFetch));
        let none = vec![Signals::default(); n];
        for h in bundle.hosts() {
            let (row, says) = match h.rules() {
                HostRules::Member(m) => {
                    (&members[m], signals.map_or(&none, |s| &s[m]))
                }
                HostRules::AllowAll => (&allowed, &none),
                HostRules::DisallowAll => (&failed, &none),
            };
            self.push_with(h.name(), row, says);
        }
    }

    /// Sorts the hosts by name: call it once every host is in.
    pub fn finish(&mut self) {
        self.hosts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }

    /// The agents, in the order of each host's stances.
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// The number of hosts.
    pub fn host_len(&self) -> usize {
        self.hosts.len()
    }

    /// Host `i`'s name and its stance toward each agent.
    ///
    /// # Panics
    ///
    /// If `i` is out of range.
    pub fn host(&self, i: usize) -> (&[u8], &[Stance]) {
        let (name, row) = &self.hosts[i];
        (name, &self.rows[*row as usize])
    }

    /// The index of host `i`'s row of stances ([`StanceTable::row`]).
    pub fn row_of(&self, i: usize) -> usize {
        self.hosts[i].1 as usize
    }

    /// The number of distinct rows of stances.
    pub fn row_len(&self) -> usize {
        self.rows.len()
    }

    /// Row `r`: a stance per agent, shared by every host with those
    /// stances.
    pub fn row(&self, r: usize) -> &[Stance] {
        &self.rows[r]
    }

    /// Row `r`'s signals toward each agent.
    pub fn row_signals(&self, r: usize) -> &[Signals] {
        &self.signals[r]
    }

    /// The index of the host called `name` (the table must be finished).
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.hosts.binary_search_by(|h| (*h.0).cmp(name)).ok()
    }
}
