//! A host's stance toward an agent, from its compiled rules (exactly, by
//! searching the automata) or its fetch outcome.

use core::fmt;
use std::collections::HashMap;

use robofilter::{AgentError, HostRules, Rules};

/// What a host's robots.txt (or its fetch outcome) says to one agent.
///
/// ```
/// use robofilter::{AlignedBytes, Compiler, Rules};
/// use robofilter_audit::{Stance, member_stances};
///
/// let robots = b"User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /\n";
/// let bytes = AlignedBytes::from(&Compiler::new().compile(robots)?[..]);
/// let rules = Rules::from_bytes(bytes.as_bytes())?;
/// let got = member_stances(&rules, &["GPTBot", "Googlebot"])?;
/// assert_eq!(got, [Stance::BlockedEntirely, Stance::BlocksSome]);
/// assert_eq!(Stance::BlocksSome.as_str(), "blocks_some");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Stance {
    /// Every path but `/robots.txt` is disallowed.
    BlockedEntirely,
    /// Some paths are disallowed, some allowed.
    BlocksSome,
    /// No path is disallowed (also a robots.txt that was unavailable,
    /// 4xx: RFC 9309 allows everything then).
    AllowsAll,
    /// The robots.txt could not be fetched (5xx, 429, no response): RFC
    /// 9309 disallows everything.
    FailedToFetch,
    /// Not decided within the search budget of a group that neither
    /// automaton could hold (see `Matcher::blocks_entirely`).
    Undecided,
    /// The host has no entry (only in a comparison of two snapshots).
    Absent,
}

impl Stance {
    /// The stances a host with an entry can have, in the order of the
    /// summary's columns.
    pub const COUNTED: [Stance; 5] = [
        Stance::BlockedEntirely,
        Stance::BlocksSome,
        Stance::AllowsAll,
        Stance::FailedToFetch,
        Stance::Undecided,
    ];

    /// The name in JSON and CSV: `blocked_entirely`, `blocks_some`,
    /// `allows_all`, `failed_to_fetch`, `undecided` or `absent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stance::BlockedEntirely => "blocked_entirely",
            Stance::BlocksSome => "blocks_some",
            Stance::AllowsAll => "allows_all",
            Stance::FailedToFetch => "failed_to_fetch",
            Stance::Undecided => "undecided",
            Stance::Absent => "absent",
        }
    }

    /// The name in text tables: `blocked entirely`, `blocks some paths`,
    /// `allows all`, `failed to fetch`, `undecided` or `absent`.
    pub fn label(self) -> &'static str {
        match self {
            Stance::BlockedEntirely => "blocked entirely",
            Stance::BlocksSome => "blocks some paths",
            Stance::AllowsAll => "allows all",
            Stance::FailedToFetch => "failed to fetch",
            Stance::Undecided => "undecided",
            Stance::Absent => "absent",
        }
    }

    /// The stance's position in [`Stance::COUNTED`] (`Absent` is last,
    /// after them).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stance of a host whose entry is a fetch outcome, whatever the
    /// agent; `None` for a host with rules (see [`member_stances`]).
    pub fn of_outcome(rules: HostRules) -> Option<Stance> {
        match rules {
            HostRules::Member(_) => None,
            HostRules::AllowAll => Some(Stance::AllowsAll),
            HostRules::DisallowAll => Some(Stance::FailedToFetch),
        }
    }

    /// The stance a set of agents takes together on one host (a category's
    /// roll-up): blocked entirely if every agent is, allows all if every
    /// one does, failed to fetch if the fetch failed, blocks some if it is
    /// known to be none of those (an agent blocks some paths, or one is
    /// blocked while another is allowed), undecided otherwise. `None` for
    /// no agents.
    ///
    /// ```
    /// use robofilter_audit::Stance::*;
    /// use robofilter_audit::Stance;
    ///
    /// assert_eq!(Stance::combine([BlockedEntirely, BlockedEntirely]), Some(BlockedEntirely));
    /// assert_eq!(Stance::combine([BlockedEntirely, AllowsAll]), Some(BlocksSome));
    /// assert_eq!(Stance::combine([AllowsAll, Undecided]), Some(Undecided));
    /// assert_eq!(Stance::combine([BlocksSome, Undecided]), Some(BlocksSome));
    /// ```
    pub fn combine(
        stances: impl IntoIterator<Item = Stance>,
    ) -> Option<Stance> {
        let (mut any, mut all_blocked, mut all_allowed) = (false, true, true);
        let (mut not_blocked, mut not_allowed) = (false, false);
        let mut failed = false;
        for s in stances {
            any = true;
            all_blocked &= s == Stance::BlockedEntirely;
            all_allowed &= s == Stance::AllowsAll;
            not_blocked |= matches!(s, Stance::BlocksSome | Stance::AllowsAll);
            not_allowed |=
                matches!(s, Stance::BlocksSome | Stance::BlockedEntirely);
            failed |= s == Stance::FailedToFetch;
        }
        Some(match () {
            _ if !any => return None,
            _ if failed => Stance::FailedToFetch,
            _ if all_blocked => Stance::BlockedEntirely,
            _ if all_allowed => Stance::AllowsAll,
            _ if not_blocked && not_allowed => Stance::BlocksSome,
            _ => Stance::Undecided,
        })
    }
}

impl fmt::Display for Stance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stance of a host with compiled `rules` toward each of `agents`,
/// in their order. Exact where the automata are (verdict DFAs and split
/// groups are searched exhaustively), [`Stance::Undecided`] where a
/// direct group's rules do not settle it. Agents that share a group (most
/// fall back to `*`) share one search.
///
/// # Errors
///
/// An [`AgentError`] if an agent is refused (not a product token in the
/// rfc9309 dialect, or not compiled into rules made for listed agents
/// only).
pub fn member_stances(
    rules: &Rules<'_>,
    agents: &[&str],
) -> Result<Vec<Stance>, AgentError> {
    let mut per_group: HashMap<Option<usize>, Stance> = HashMap::new();
    let mut out = Vec::with_capacity(agents.len());
    for agent in agents {
        let m = rules.matcher(agent)?;
        let stance = *per_group.entry(m.group()).or_insert_with(|| {
            match (m.blocks_entirely(), m.allows_everything()) {
                (Some(true), _) => Stance::BlockedEntirely,
                (_, Some(true)) => Stance::AllowsAll,
                (Some(false), Some(false)) => Stance::BlocksSome,
                _ => Stance::Undecided,
            }
        });
        out.push(stance);
    }
    Ok(out)
}
