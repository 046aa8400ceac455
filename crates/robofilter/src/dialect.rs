//! The two dialects robofilter speaks.

use core::fmt;
use core::str::FromStr;

/// Which reading of robots.txt a rules file follows.
///
/// Both dialects share one parser and one compiler; they differ only in the
/// places listed in the crate documentation's
/// [semantics](crate#semantics) section.
///
/// # Example
///
/// ```
/// use robofilter::Dialect;
///
/// assert_eq!(Dialect::default(), Dialect::Rfc9309);
/// assert_eq!("google".parse::<Dialect>()?, Dialect::Google);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub enum Dialect {
    /// Exactly the verdicts of google/robotstxt, the C++ reference
    /// (`RobotsMatcher::OneAgentAllowedByRobots`).
    Google,
    /// RFC 9309 as written, and the google dialect wherever the RFC leaves
    /// room. The default.
    #[default]
    Rfc9309,
}

impl Dialect {
    /// The dialect's name as the CLI spells it: `google` or `rfc9309`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Google => "google",
            Dialect::Rfc9309 => "rfc9309",
        }
    }

    #[cfg(feature = "compile")]
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            Dialect::Google => 0,
            Dialect::Rfc9309 => 1,
        }
    }

    pub(crate) fn from_byte(b: u8) -> Option<Dialect> {
        match b {
            0 => Some(Dialect::Google),
            1 => Some(Dialect::Rfc9309),
            _ => None,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when parsing a [`Dialect`] name fails.
#[derive(Clone, Debug)]
pub struct ParseDialectError {
    given: String,
}

impl fmt::Display for ParseDialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown dialect '{}' (expected 'google' or 'rfc9309')",
            self.given
        )
    }
}

impl std::error::Error for ParseDialectError {}

impl FromStr for Dialect {
    type Err = ParseDialectError;

    fn from_str(s: &str) -> Result<Dialect, ParseDialectError> {
        match s.to_ascii_lowercase().as_str() {
            "google" => Ok(Dialect::Google),
            "rfc9309" | "rfc" => Ok(Dialect::Rfc9309),
            _ => Err(ParseDialectError { given: s.to_string() }),
        }
    }
}
