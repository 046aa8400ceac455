//! Counts of stances per agent, per category and per rank tier: the
//! numbers of `inspect --summary`, as an aligned table, JSON lines, and
//! the report.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::category::Category;
use crate::signal::{Signal, Signals};
use crate::stance::Stance;
use crate::table::StanceTable;

/// How many hosts take each stance (an agent's, or a category's), and
/// how many give each [`Signal`].
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Counts {
    n: [u64; 5],
    signals: [u64; 2],
}

impl Counts {
    /// The hosts that take stance `s` (0 for [`Stance::Absent`]).
    pub fn get(&self, s: Stance) -> u64 {
        self.n.get(s.index()).copied().unwrap_or(0)
    }

    /// The hosts that give signal `s` (whatever their stance).
    pub fn signal(&self, s: Signal) -> u64 {
        self.signals[s.index()]
    }

    /// All hosts counted.
    pub fn total(&self) -> u64 {
        self.n.iter().sum()
    }

    fn add(&mut self, s: Stance, signals: Signals, hosts: u64) {
        self.n[s.index()] += hosts;
        for g in Signal::ALL {
            if signals.has(g) {
                self.signals[g.index()] += hosts;
            }
        }
    }

    /// The counts under their JSON names, into `obj`.
    fn put(&self, obj: &mut Map<String, Value>) {
        for s in Stance::COUNTED {
            obj.insert(s.as_str().into(), json!(self.get(s)));
        }
        for g in Signal::ALL {
            obj.insert(g.as_str().into(), json!(self.signal(g)));
        }
    }
}

/// One line of a summary: an agent, or a category of agents.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Line {
    name: String,
    category: Option<Category>,
    agents: Vec<String>,
    counts: Counts,
    tiers: Vec<Counts>,
}

impl Line {
    /// The agent's product token, or the category's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent's category (a category's own, for a category).
    pub fn category(&self) -> Option<Category> {
        self.category
    }

    /// A category's agents (empty for an agent).
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// The counts over every host.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The counts among the ranked hosts of each tier
    /// ([`Summary::tiers`]).
    pub fn tier_counts(&self) -> &[Counts] {
        &self.tiers
    }

    /// The line as `inspect --summary --json` prints it.
    pub fn to_json(&self, tiers: &[u32]) -> Value {
        let mut obj = Map::new();
        if self.agents.is_empty() {
            obj.insert("agent".into(), json!(self.name));
            obj.insert(
                "category".into(),
                json!(self.category.map(|c| c.as_str())),
            );
        } else {
            obj.insert("category".into(), json!(self.name));
            obj.insert("agents".into(), json!(self.agents));
        }
        self.counts.put(&mut obj);
        if !tiers.is_empty() {
            let per: Vec<Value> = tiers
                .iter()
                .zip(&self.tiers)
                .map(|(top, c)| {
                    let mut t = Map::new();
                    t.insert("top".into(), json!(top));
                    c.put(&mut t);
                    Value::Object(t)
                })
                .collect();
            obj.insert("ranks".into(), Value::Array(per));
        }
        Value::Object(obj)
    }
}

/// The stances of a table's hosts, counted per agent and rolled up per
/// category, over every host and, given the hosts' ranks, over the ranked
/// hosts of each tier.
///
/// ```
/// use robofilter_audit::{Category, Stance, StanceTable, Summary};
///
/// let mut table = StanceTable::new(&["GPTBot", "ClaudeBot"]);
/// table.push(b"a.example", &[Stance::BlockedEntirely, Stance::AllowsAll]);
/// table.push(b"b.example", &[Stance::BlockedEntirely, Stance::BlockedEntirely]);
/// table.finish();
/// let training = Some(Category::Training);
/// let summary = Summary::new(&table, &[training, training], None);
/// let gptbot = &summary.agents()[0];
/// assert_eq!(gptbot.counts().get(Stance::BlockedEntirely), 2);
/// let roll_up = &summary.categories()[0];
/// assert_eq!(roll_up.name(), "training");
/// assert_eq!(roll_up.counts().get(Stance::BlockedEntirely), 1);
/// assert_eq!(roll_up.counts().get(Stance::BlocksSome), 1);
/// ```
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Summary {
    hosts: u64,
    tiers: Vec<u32>,
    tier_hosts: Vec<u64>,
    agents: Vec<Line>,
    categories: Vec<Line>,
}

impl Summary {
    /// Counts `table`, whose agents have `categories` (one each, `None`
    /// for an agent without), and with `ranks`, `(tiers, host_ranks)`
    /// (from [`Ranks`](crate::Ranks)), per tier too.
    ///
    /// # Panics
    ///
    /// If `categories` does not hold one entry per agent, or the host
    /// ranks one per host.
    pub fn new(
        table: &StanceTable,
        categories: &[Option<Category>],
        ranks: Option<(&[u32], &[Option<u32>])>,
    ) -> Summary {
        let agents = table.agents();
        assert_eq!(categories.len(), agents.len(), "one category per agent");
        let tiers: Vec<u32> = ranks.map(|r| r.0.to_vec()).unwrap_or_default();
        // Hosts per row of stances: over all hosts, then per tier.
        let width = 1 + tiers.len();
        let mut per_row = vec![0u64; table.row_len() * width];
        for i in 0..table.host_len() {
            let at = table.row_of(i) * width;
            per_row[at] += 1;
            let rank = ranks.and_then(|r| r.1[i]);
            for (k, &top) in tiers.iter().enumerate() {
                if rank.is_some_and(|r| r <= top) {
                    per_row[at + 1 + k] += 1;
                }
            }
        }
        let tier_hosts: Vec<u64> = (0..tiers.len())
            .map(|k| per_row.iter().skip(1 + k).step_by(width).sum())
            .collect();
        // `of(stances, signals)`: a row's stance and signals for a line.
        type Of<'f> =
            &'f dyn Fn(&[Stance], &[Signals]) -> Option<(Stance, Signals)>;
        let count = |of: Of| {
            let mut all = Counts::default();
            let mut per = vec![Counts::default(); tiers.len()];
            for r in 0..table.row_len() {
                let Some((s, g)) = of(table.row(r), table.row_signals(r))
                else {
                    continue;
                };
                let hosts = &per_row[r * width..(r + 1) * width];
                all.add(s, g, hosts[0]);
                for (c, &n) in per.iter_mut().zip(&hosts[1..]) {
                    c.add(s, g, n);
                }
            }
            (all, per)
        };
        let agent_lines = agents
            .iter()
            .enumerate()
            .map(|(a, name)| {
                let (counts, tiers) =
                    count(&|row, says| Some((row[a], says[a])));
                Line {
                    name: name.clone(),
                    category: categories[a],
                    agents: Vec::new(),
                    counts,
                    tiers,
                }
            })
            .collect();
        let category_lines = Category::ALL
            .into_iter()
            .filter_map(|c| {
                let members: Vec<usize> = (0..agents.len())
                    .filter(|&a| categories[a] == Some(c))
                    .collect();
                if members.is_empty() {
                    return None;
                }
                // A category's host gives a signal if it gives it to any
                // of the category's agents.
                let (counts, tiers) = count(&|row, says| {
                    let stance =
                        Stance::combine(members.iter().map(|&a| row[a]))?;
                    let signals = members
                        .iter()
                        .fold(Signals::default(), |g, &a| g.union(says[a]));
                    Some((stance, signals))
                });
                Some(Line {
                    name: c.as_str().to_string(),
                    category: Some(c),
                    agents: members
                        .iter()
                        .map(|&a| agents[a].clone())
                        .collect(),
                    counts,
                    tiers,
                })
            })
            .collect();
        Summary {
            hosts: table.host_len() as u64,
            tiers,
            tier_hosts,
            agents: agent_lines,
            categories: category_lines,
        }
    }

    /// The number of hosts.
    pub fn host_len(&self) -> u64 {
        self.hosts
    }

    /// The rank tiers (the top 1,000, 10,000, ...), empty without ranks.
    pub fn tiers(&self) -> &[u32] {
        &self.tiers
    }

    /// The number of ranked hosts in each tier.
    pub fn tier_host_len(&self) -> &[u64] {
        &self.tier_hosts
    }

    /// One line per agent, in the agents' order.
    pub fn agents(&self) -> &[Line] {
        &self.agents
    }

    /// One line per category that has agents, in [`Category::ALL`]'s
    /// order: each host's stance toward the category is
    /// [`Stance::combine`] of its stances toward the category's agents.
    pub fn categories(&self) -> &[Line] {
        &self.categories
    }

    /// The lines of agents, or with `by_category` of categories.
    pub fn lines(&self, by_category: bool) -> &[Line] {
        if by_category { &self.categories } else { &self.agents }
    }

    /// Writes one JSON object per line ([`Line::to_json`]).
    ///
    /// # Errors
    ///
    /// Any error of `out`.
    pub fn write_json(
        &self,
        out: &mut dyn Write,
        by_category: bool,
    ) -> io::Result<()> {
        for line in self.lines(by_category) {
            serde_json::to_writer(&mut *out, &line.to_json(&self.tiers))?;
            writeln!(out)?;
        }
        Ok(())
    }

    /// Writes an aligned table: one row per line (with a category column
    /// when an agent has one, an undecided column and each signal's
    /// column when a count is not 0), then the same for each rank tier,
    /// and the number of hosts.
    ///
    /// # Errors
    ///
    /// Any error of `out`.
    pub fn write_table(
        &self,
        out: &mut dyn Write,
        by_category: bool,
    ) -> io::Result<()> {
        let lines = self.lines(by_category);
        let undecided = lines.iter().any(|l| {
            l.counts.get(Stance::Undecided) > 0
                || l.tiers.iter().any(|t| t.get(Stance::Undecided) > 0)
        });
        let mut head: Vec<String> = Vec::new();
        if by_category {
            head.extend(["category".into(), "agents".into()]);
        } else {
            head.push("agent".into());
            if lines.iter().any(|l| l.category.is_some()) {
                head.push("category".into());
            }
        }
        let first_counts = head.len();
        let counted = &Stance::COUNTED[..if undecided { 5 } else { 4 }];
        head.extend(counted.iter().map(|s| s.label().to_string()));
        // The signal columns, where a host gives one.
        let signals: Vec<Signal> = Signal::ALL
            .into_iter()
            .filter(|&g| lines.iter().any(|l| l.counts.signal(g) > 0))
            .collect();
        head.extend(signals.iter().map(|g| g.label().to_string()));
        let row = |l: &Line, c: &Counts| -> Vec<String> {
            let mut row = vec![l.name.clone()];
            if by_category {
                row.push(l.agents.len().to_string());
            } else if first_counts == 2 {
                row.push(l.category.map_or("-", |c| c.as_str()).to_string());
            }
            row.extend(counted.iter().map(|&s| c.get(s).to_string()));
            row.extend(signals.iter().map(|&g| c.signal(g).to_string()));
            row
        };
        let all: Vec<Vec<String>> =
            lines.iter().map(|l| row(l, &l.counts)).collect();
        write_aligned(out, &head, &all, first_counts)?;
        writeln!(out, "({} hosts)", self.hosts)?;
        for (k, top) in self.tiers.iter().enumerate() {
            writeln!(
                out,
                "\ntop {top}: {} ranked hosts with an entry",
                self.tier_hosts[k]
            )?;
            let rows: Vec<Vec<String>> =
                lines.iter().map(|l| row(l, &l.tiers[k])).collect();
            write_aligned(out, &head, &rows, first_counts)?;
        }
        Ok(())
    }
}

/// Writes `head` and `rows` in columns two spaces apart: the first
/// `left` columns aligned left, the others right.
fn write_aligned(
    out: &mut dyn Write,
    head: &[String],
    rows: &[Vec<String>],
    left: usize,
) -> io::Result<()> {
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for cells in std::iter::once(head).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            if i < left {
                line.push_str(c);
                if i + 1 < cells.len() {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(c);
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
