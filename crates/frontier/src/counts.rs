//! Line counts: every line is exactly one of allowed, disallowed, unknown
//! or invalid, and the invalid ones are reported with their line numbers.

use std::ops::AddAssign;

use robofilter::{Outcome, Preference, Preferences, UsageKey};

use crate::Emit;

/// Line counts. Every line is exactly one of allowed, disallowed, unknown
/// or invalid (by its outcome for all agents together,
/// [`robofilter::Outcome::combine`]); empty lines are a subset of the invalid ones.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Every line read.
    pub lines: u64,
    /// Allowed for every agent.
    pub allowed: u64,
    /// Disallowed for at least one agent.
    pub disallowed: u64,
    /// A host without an entry in the bundle.
    pub unknown: u64,
    /// Not URLs.
    pub invalid: u64,
    /// Empty lines (a subset of the invalid ones).
    pub empty: u64,
    /// Lines over `--max-url-len` (a subset of the invalid ones).
    pub too_long: u64,
    /// Allowed lines not selected because of `--respect` (a subset of
    /// the allowed ones).
    pub refused: u64,
    /// Octets read, for the progress bar.
    pub octets: u64,
}

impl AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.lines += o.lines;
        self.allowed += o.allowed;
        self.disallowed += o.disallowed;
        self.unknown += o.unknown;
        self.invalid += o.invalid;
        self.empty += o.empty;
        self.too_long += o.too_long;
        self.refused += o.refused;
        self.octets += o.octets;
    }
}

impl Counts {
    /// Counts a line whose outcome for all agents together is `outcome`,
    /// and says whether `emit` selects it; `refused`: an allowed line that
    /// `--respect` drops ([`refused`]), counted in `refused` too.
    #[inline(always)]
    pub fn count(
        &mut self,
        outcome: Outcome,
        emit: Emit,
        refused: bool,
    ) -> bool {
        let selected = match outcome {
            Outcome::Allow => {
                self.allowed += 1;
                self.refused += u64::from(refused);
                emit == Emit::Allowed && !refused
            }
            Outcome::Disallow => {
                self.disallowed += 1;
                emit == Emit::Disallowed
            }
            Outcome::Unknown => {
                self.unknown += 1;
                emit == Emit::Unknown
            }
            Outcome::Invalid => {
                self.invalid += 1;
                false
            }
        };
        selected || emit == Emit::All
    }
}

/// Whether `--respect` (`respect`) drops a line whose agents' preferences
/// are `prefs`: one agent's preference for one of the keys is `n`.
pub fn refused(respect: &[UsageKey], prefs: &[Option<Preferences>]) -> bool {
    prefs
        .iter()
        .flatten()
        .any(|p| respect.iter().any(|&key| p.get(key) == Preference::No))
}

/// Why a line is not a URL.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum BadKind {
    /// Nothing (or only `\r`).
    Empty,
    /// Not `scheme://...`, a control octet in it, or a trailing space.
    NotUrl,
    /// Longer than `--max-url-len`.
    TooLong,
    /// A bundle cannot tell its host: the authority holds an octet RFC
    /// 3986 forbids there.
    AmbiguousHost,
}

/// A not-a-URL line as a run reports it: its file, its 1-based line
/// number, and why.
pub type BadLine = (String, u64, BadKind);
