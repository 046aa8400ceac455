//! The shared vocabulary: what a rule says and what a URL gets.
//!
//! These two enums sit below the parser, the compiler and every engine, so
//! that none of them has to import another to name a verdict.

use core::fmt;

/// Whether a rule allows or disallows.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum RuleKind {
    /// An `Allow` line.
    Allow,
    /// A `Disallow` line (or one of its accepted typos).
    Disallow,
}

impl RuleKind {
    /// `allow` or `disallow`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Disallow => "disallow",
        }
    }
}

/// The verdict for one URL.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Verdict {
    /// The crawler may fetch the URL.
    Allow,
    /// The crawler must not fetch the URL.
    Disallow,
}

impl Verdict {
    /// `allow` or `disallow`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Disallow => "disallow",
        }
    }

    /// Whether this is [`Verdict::Allow`].
    pub fn is_allow(self) -> bool {
        self == Verdict::Allow
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an agent's rules come from.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum GroupSource {
    /// Groups that name the agent.
    Specific,
    /// The `*` groups (no group names the agent).
    Global,
    /// No group applies; everything is allowed.
    None,
}
