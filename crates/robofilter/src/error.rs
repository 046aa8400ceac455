//! Error types, one per phase.

#[cfg(feature = "compile")]
use crate::kind::InputKind;
use core::fmt;

/// The error returned when a rules file cannot be loaded.
///
/// A rules file that fails any check (magic, version, endianness,
/// alignment, checksum, structure) is rejected as a whole: no verdict is ever
/// given from a damaged file.
#[derive(Clone, Debug)]
pub struct LoadError {
    kind: LoadErrorKind,
}

#[derive(Clone, Debug)]
enum LoadErrorKind {
    TooShort { len: usize },
    Magic,
    Endianness,
    Version { found: u32, expected: u32 },
    BundleVersion { found: u32, oldest: u32, newest: u32 },
    Length { header: u64, actual: usize },
    Checksum { stored: u32, computed: u32 },
    Alignment { address: usize },
    Structure { what: String },
    Read { what: String },
    Engine { what: &'static str },
    BigEndian,
}

impl LoadError {
    pub(crate) fn too_short(len: usize) -> LoadError {
        LoadError { kind: LoadErrorKind::TooShort { len } }
    }
    pub(crate) fn magic() -> LoadError {
        LoadError { kind: LoadErrorKind::Magic }
    }
    pub(crate) fn endianness() -> LoadError {
        LoadError { kind: LoadErrorKind::Endianness }
    }
    pub(crate) fn version(found: u32, read: (u32, u32)) -> LoadError {
        let expected = read.1;
        LoadError { kind: LoadErrorKind::Version { found, expected } }
    }
    pub(crate) fn bundle_version(found: u32, read: (u32, u32)) -> LoadError {
        let (oldest, newest) = read;
        LoadError {
            kind: LoadErrorKind::BundleVersion { found, oldest, newest },
        }
    }
    pub(crate) fn length(header: u64, actual: usize) -> LoadError {
        LoadError { kind: LoadErrorKind::Length { header, actual } }
    }
    pub(crate) fn checksum(stored: u32, computed: u32) -> LoadError {
        LoadError { kind: LoadErrorKind::Checksum { stored, computed } }
    }
    pub(crate) fn alignment(address: usize) -> LoadError {
        LoadError { kind: LoadErrorKind::Alignment { address } }
    }
    pub(crate) fn structure(what: impl Into<String>) -> LoadError {
        LoadError { kind: LoadErrorKind::Structure { what: what.into() } }
    }
    /// The caller could not read a bundle member's octets (`what` says
    /// why, naming the file).
    pub(crate) fn read(what: impl Into<String>) -> LoadError {
        LoadError { kind: LoadErrorKind::Read { what: what.into() } }
    }
    pub(crate) fn engine(what: &'static str) -> LoadError {
        LoadError { kind: LoadErrorKind::Engine { what } }
    }
    pub(crate) fn big_endian() -> LoadError {
        LoadError { kind: LoadErrorKind::BigEndian }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LoadErrorKind::*;
        match &self.kind {
            TooShort { len } => write!(
                f,
                "not a robofilter rules file: only {len} bytes \
                 (a rules file has a 64-byte header)"
            ),
            Magic => write!(
                f,
                "not a robofilter rules file: bad magic \
                 (expected a file written by `robofilter compile`)"
            ),
            Endianness => write!(
                f,
                "rules file has the wrong endianness marker \
                 (was it written on a big-endian machine or corrupted?)"
            ),
            Version { found, expected } => write!(
                f,
                "rules file format version {found} is not supported \
                 (this robofilter reads version {}; recompile the \
                 robots.txt with this version of robofilter)",
                expected
            ),
            BundleVersion { found, oldest, newest } => write!(
                f,
                "bundle format version {found} is not supported \
                 (this robofilter reads versions {oldest} to {newest}; \
                 compile the bundle again with this version of robofilter)",
            ),
            Length { header, actual } => write!(
                f,
                "rules file is truncated or padded: header says {header} \
                 bytes, found {actual} (copy the file again)"
            ),
            Checksum { stored, computed } => write!(
                f,
                "rules file is corrupted: checksum {computed:08x} does not \
                 match the stored {stored:08x} (copy or compile it again)"
            ),
            Alignment { address } => write!(
                f,
                "rules bytes at address {address:#x} are not 8-byte aligned \
                 (load from mmap, a Vec<u64>-backed buffer, or \
                 robofilter::include_rules!)"
            ),
            Structure { what } => {
                write!(f, "rules file is malformed: {what}")
            }
            Engine { what } => write!(f, "rules file is malformed: {what}"),
            Read { what } => write!(f, "{what}"),
            BigEndian => write!(
                f,
                "rules files are little-endian and this machine is \
                 big-endian (not supported)"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The error returned when a rules file has no decision for an agent.
///
/// A file compiled with explicit `--agent` names only knows those agents;
/// asking it about another one is an error rather than a guess.
#[derive(Clone, Debug)]
pub struct AgentError {
    kind: AgentErrorKind,
}

#[derive(Clone, Debug)]
enum AgentErrorKind {
    /// The rules were compiled for other agents only.
    NotCompiled { agent: String, known: Vec<String> },
    /// The agent is not a product token (`[A-Za-z_-]+`); `suggestion` is
    /// the token it starts with, if any.
    NotProductToken { agent: String, suggestion: String },
}

impl AgentError {
    pub(crate) fn new(agent: &[u8], known: Vec<String>) -> AgentError {
        let agent = String::from_utf8_lossy(agent).into_owned();
        AgentError { kind: AgentErrorKind::NotCompiled { agent, known } }
    }

    pub(crate) fn not_product_token(
        agent: &str,
        suggestion: &str,
    ) -> AgentError {
        AgentError {
            kind: AgentErrorKind::NotProductToken {
                agent: agent.to_string(),
                suggestion: suggestion.to_string(),
            },
        }
    }

    /// Whether the agent was refused because it is not a product token
    /// (rather than missing from rules compiled for other agents).
    pub fn is_not_product_token(&self) -> bool {
        matches!(self.kind, AgentErrorKind::NotProductToken { .. })
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            AgentErrorKind::NotCompiled { agent, known } => write!(
                f,
                "agent '{agent}' is not in this rules file, which was \
                 compiled for only: {} (compile again with --agent \
                 '{agent}', or without --agent)",
                known.join(", "),
            ),
            AgentErrorKind::NotProductToken { agent, suggestion } => {
                write!(
                    f,
                    "agent '{}' is not a product token (letters, '_' and \
                     '-' only, RFC 9309 section 2.2.1)",
                    agent.escape_debug()
                )?;
                if suggestion.is_empty() {
                    f.write_str(" (name your crawler's token, e.g. 'MyBot')")
                } else {
                    write!(f, " (did you mean '{suggestion}'?)")
                }
            }
        }
    }
}

impl std::error::Error for AgentError {}

/// The error returned when an agent's usage preferences
/// ([`Rules::content_usage`](crate::Rules::content_usage),
/// [`Rules::content_signal`](crate::Rules::content_signal)) cannot be
/// read: the agent is not one the file decides for, or the side section
/// that keeps the lines is damaged.
#[derive(Clone, Debug)]
pub enum UsageError {
    /// As [`Rules::matcher`](crate::Rules::matcher) fails.
    Agent(AgentError),
    /// The side section is damaged.
    Load(LoadError),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Agent(e) => e.fmt(f),
            UsageError::Load(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for UsageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UsageError::Agent(e) => Some(e),
            UsageError::Load(e) => Some(e),
        }
    }
}

impl From<AgentError> for UsageError {
    fn from(e: AgentError) -> UsageError {
        UsageError::Agent(e)
    }
}

impl From<LoadError> for UsageError {
    fn from(e: LoadError) -> UsageError {
        UsageError::Load(e)
    }
}

/// The error returned when a robots.txt cannot be compiled.
///
/// Any robots.txt text compiles (construction budgets fall back to a
/// slower engine, never to an error). The failures are input that is not
/// text ([`BuildError::not_text`]: compressed, or already compiled; read
/// as text it would allow every URL) and a file too large for the 32-bit
/// offsets of the rules format.
#[cfg(feature = "compile")]
#[derive(Clone, Debug)]
pub struct BuildError {
    what: String,
    not_text: Option<InputKind>,
}

#[cfg(feature = "compile")]
impl BuildError {
    pub(crate) fn too_large(what: impl Into<String>) -> BuildError {
        BuildError {
            what: format!("rules file would be too large: {}", what.into()),
            not_text: None,
        }
    }
    pub(crate) fn input(what: impl Into<String>) -> BuildError {
        BuildError { what: what.into(), not_text: None }
    }
    pub(crate) fn refused(kind: InputKind) -> BuildError {
        let what = match kind.tool() {
            Some(tool) => format!(
                "the input is {kind}, not a robots.txt; decompress it first \
                 (`{tool} -dc FILE`)"
            ),
            None => format!(
                "the input is {kind}, not a robots.txt; give the robots.txt \
                 it was compiled from"
            ),
        };
        BuildError { what, not_text: Some(kind) }
    }

    /// What the input was, if it was refused for not being text: a
    /// compressed stream or a compiled file ([`InputKind`]).
    pub fn not_text(&self) -> Option<InputKind> {
        self.not_text
    }
}

#[cfg(feature = "compile")]
impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

#[cfg(feature = "compile")]
impl std::error::Error for BuildError {}
