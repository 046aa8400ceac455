//! A ranking of domains (`rank,domain` lines, such as the Tranco list),
//! joined with a table's hosts: the tiers of the data-consent studies
//! (top 1 k, 10 k, 100 k).

use core::fmt;
use std::collections::HashMap;

use crate::table::StanceTable;

/// Domains and their ranks.
///
/// A domain stands for the host of the same name, or if the table has no
/// such host, for `www.` and the domain (rankings list registrable
/// domains; a crawl often keeps the `www.` host). A host named by
/// several domains takes the best rank.
///
/// ```
/// use robofilter_audit::{Ranks, Stance, StanceTable};
///
/// let ranks = Ranks::parse(b"rank,domain\n1,a.example\n2,b.example\n3,c.example\n")?;
/// assert_eq!(ranks.tiers(), [1000]);
/// let mut table = StanceTable::new(&["A"]);
/// table.push(b"a.example", &[Stance::AllowsAll]);
/// table.push(b"www.b.example", &[Stance::AllowsAll]);
/// table.push(b"z.example", &[Stance::AllowsAll]);
/// table.finish();
/// assert_eq!(ranks.host_ranks(&table), [Some(1), Some(2), None]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Ranks {
    domains: Vec<(String, u32)>,
    max: u32,
}

impl Ranks {
    /// Reads `rank,domain` lines (a first line that does not start with a
    /// number is a header; empty lines are skipped; a `\r` before the
    /// line's end is dropped; fields after the domain are not read).
    /// Domains are compared in lower case, without a final `.`.
    ///
    /// # Errors
    ///
    /// A [`RanksError`] naming the first line that is not a positive rank,
    /// a comma and a domain.
    pub fn parse(text: &[u8]) -> Result<Ranks, RanksError> {
        let mut best: HashMap<String, u32> = HashMap::new();
        let mut max = 0;
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let bad = || RanksError { line: i + 1 };
            let line = std::str::from_utf8(line).map_err(|_| bad())?;
            let mut fields = line.split(',');
            let rank = fields.next().unwrap_or("").trim();
            let domain = fields.next().map(str::trim).unwrap_or("");
            let Ok(rank) = rank.parse::<u32>() else {
                if i == 0 {
                    continue;
                }
                return Err(bad());
            };
            let domain = domain.strip_suffix('.').unwrap_or(domain);
            if rank == 0 || domain.is_empty() {
                return Err(bad());
            }
            let at = best.entry(domain.to_ascii_lowercase()).or_insert(rank);
            *at = (*at).min(rank);
            max = max.max(rank);
        }
        let mut domains: Vec<(String, u32)> = best.into_iter().collect();
        domains.sort_unstable_by_key(|d| d.1);
        Ok(Ranks { domains, max })
    }

    /// The number of domains.
    pub fn len(&self) -> usize {
        self.domains.len()
    }

    /// Whether there are no domains.
    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    /// The tiers: the top 1,000, 10,000, ... up to the first that holds
    /// every rank.
    pub fn tiers(&self) -> Vec<u32> {
        let mut tiers = vec![1000u32];
        while tiers.last().is_some_and(|&t| t < self.max) {
            match tiers.last().and_then(|t| t.checked_mul(10)) {
                Some(t) => tiers.push(t),
                None => break,
            }
        }
        tiers
    }

    /// The rank of each host of `table` (finished), in the table's order;
    /// `None` for a host no domain names.
    pub fn host_ranks(&self, table: &StanceTable) -> Vec<Option<u32>> {
        let mut ranks = vec![None; table.host_len()];
        for (domain, rank) in &self.domains {
            let www = format!("www.{domain}");
            let found = table
                .find(domain.as_bytes())
                .or_else(|| table.find(www.as_bytes()));
            if let Some(i) = found {
                let r: &mut Option<u32> = &mut ranks[i];
                *r = Some(r.map_or(*rank, |r| r.min(*rank)));
            }
        }
        ranks
    }
}

/// A line of a ranking that is not `rank,domain`.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct RanksError {
    line: usize,
}

impl fmt::Display for RanksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: not `rank,domain` (a rank from 1, a comma, a domain, \
             as in the Tranco list)",
            self.line
        )
    }
}

impl std::error::Error for RanksError {}
