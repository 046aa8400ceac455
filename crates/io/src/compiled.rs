//! A compiled argument's bytes loaded as a rules file or a bundle, and a
//! robots.txt compiled in memory: the checks every front end makes on what
//! it is given (its kind, its dialect).

use std::path::Path;

use anyhow::{Context, Result, bail};
use robofilter::{Bundle, Compiler, Config, Dialect, InputKind, Rules};

use crate::limits::Limits;
use crate::owned::{Aligned, Bytes};
use crate::path::{display, is_stdin};
use crate::read::read_bounded;

/// Fails unless a compiled file's dialect `have` is the one the user
/// asked for, if any.
pub fn check_dialect(
    want: Option<Dialect>,
    have: Dialect,
    what: &str,
    path: &Path,
) -> Result<()> {
    match want {
        Some(want) if want != have => bail!(
            "{what} '{}' was compiled with the {have} dialect, not \
             {want} (omit --dialect, or compile again with \
             --dialect {want})",
            display(path)
        ),
        _ => Ok(()),
    }
}

/// Loads a rules file's bytes, naming the file in errors.
pub fn load_rules<'a>(bytes: &'a [u8], path: &Path) -> Result<Rules<'a>> {
    match InputKind::of(bytes) {
        InputKind::Rules => Rules::from_bytes(bytes).with_context(|| {
            format!("rules file '{}' is damaged or unusable", display(path))
        }),
        InputKind::Bundle => bail!(
            "'{}' is a bundle, not a single rules file (use it with \
             `robofilter filter`, `check`, `explain` or `inspect`)",
            display(path)
        ),
        _ => bail!(
            "'{}' is not a rules file (to use a robots.txt, compile it \
             first with `robofilter compile ROBOTS_TXT -o RULES`)",
            display(path)
        ),
    }
}

/// Loads a bundle's bytes, naming the file in errors.
pub fn load_bundle<'a>(bytes: &'a [u8], path: &Path) -> Result<Bundle<'a>> {
    Bundle::from_bytes(bytes).with_context(|| {
        format!("bundle '{}' is damaged or unusable", display(path))
    })
}

/// A loaded rules file or bundle.
pub enum Compiled<'a> {
    Rules(Rules<'a>),
    Bundle(Bundle<'a>),
}

impl<'a> Compiled<'a> {
    /// Loads `bytes`, a rules file or a bundle (by its magic).
    pub fn load(bytes: &'a [u8], path: &Path) -> Result<Compiled<'a>> {
        Ok(match InputKind::of(bytes) {
            InputKind::Bundle => Compiled::Bundle(load_bundle(bytes, path)?),
            _ => Compiled::Rules(load_rules(bytes, path)?),
        })
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Compiled::Rules(r) => r.dialect(),
            Compiled::Bundle(b) => b.dialect(),
        }
    }
}

/// Checks the agent a user names against the dialect (docs/SEMANTICS.md
/// section 4b): rfc9309 refuses an agent that is not a product token;
/// google decides it as the reference does and warns.
pub fn check_agent(agent: &str, dialect: Dialect) -> Result<()> {
    match robofilter::check_product_token(agent) {
        Ok(()) => Ok(()),
        Err(e) if dialect == Dialect::Rfc9309 => Err(anyhow::anyhow!(e)),
        Err(e) => {
            diag!(
                "robofilter: warning: {e}; the google dialect decides it as \
                 google/robotstxt does: it names no group, so the '*' group \
                 applies"
            );
            Ok(())
        }
    }
}

/// [`check_agent`] for each of `agents`, and a usage error if one is named
/// twice (agents match case-insensitively, so `GPTBot` and `gptbot` are the
/// same agent).
pub fn check_agents(agents: &[String], dialect: Dialect) -> Result<()> {
    for (i, agent) in agents.iter().enumerate() {
        if let Some(first) =
            agents[..i].iter().find(|a| a.eq_ignore_ascii_case(agent))
        {
            bail!(
                "--agent '{agent}' is given twice (agents match \
                 case-insensitively: '{first}' names the same one); name each \
                 agent once"
            );
        }
        check_agent(agent, dialect)?;
    }
    Ok(())
}

/// The error for `path`, refused by the compiler as `kind` rather than
/// robots.txt text (compressed, or compiled: read as text it would have no
/// rules, and every URL would be allowed), saying what to give instead.
fn not_robots_txt(kind: InputKind, path: &Path) -> anyhow::Error {
    let name = display(path);
    if let Some(tool) = kind.tool() {
        let file = match is_stdin(path) {
            true => "FILE".to_string(),
            false => format!("'{name}'"),
        };
        return anyhow::anyhow!(
            "'{name}' is {kind}, not a robots.txt; decompress it first \
             (`{tool} -dc {file} | robofilter compile - -o RULES`)"
        );
    }
    let file = match kind {
        InputKind::Bundle => "compiled bundle",
        _ => "compiled rules file",
    };
    anyhow::anyhow!(
        "'{name}' is {kind}, not a robots.txt; give the robots.txt it was \
         compiled from, or use the {file} with `robofilter filter`, `check`, \
         `explain` or `inspect`"
    )
}

/// Compiles a robots.txt in memory into aligned rules-file bytes.
/// The compiler refuses input that is not text; the error names the file
/// and says what to give instead.
pub fn compile(body: &[u8], config: Config, path: &Path) -> Result<Bytes> {
    let bytes = match Compiler::with_config(config).compile(body) {
        Ok(bytes) => bytes,
        Err(e) => match e.not_text() {
            Some(kind) => return Err(not_robots_txt(kind, path)),
            None => {
                return Err(anyhow::Error::new(e).context(format!(
                    "cannot compile robots.txt '{}'",
                    display(path)
                )));
            }
        },
    };
    Ok(Aligned::from(&bytes[..]))
}

/// Reads a rules file or a bundle, or a robots.txt (told apart by the
/// magic bytes) and compiles it in memory with `config` and `dialect`. A
/// rules file or bundle keeps its own dialect; `dialect`, if given, must
/// be that one. Load the result with [`Compiled::load`].
pub fn rules_or_robots(
    path: &Path,
    dialect: Option<Dialect>,
    config: Config,
) -> Result<Bytes> {
    let limits =
        Limits::new(&config.clone().dialect(dialect.unwrap_or_default()));
    let bytes =
        read_bounded(path, "robots.txt, rules file or bundle", limits)?;
    let what = match InputKind::of(&bytes) {
        InputKind::Rules => "rules file",
        InputKind::Bundle => "bundle",
        _ => {
            let config = config.dialect(dialect.unwrap_or_default());
            return compile(&bytes, config, path);
        }
    };
    if dialect.is_some() {
        let have = Compiled::load(&bytes, path)?.dialect();
        check_dialect(dialect, have, what, path)?;
    }
    Ok(bytes)
}
