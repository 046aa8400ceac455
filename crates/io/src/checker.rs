//! Any compiled argument opened into a checker: the one place that turns a
//! path given to `filter`, `check` or `explain` (a rules file, a bundle, a
//! shard directory, or where allowed a robots.txt compiled in memory) into
//! a [`UrlChecker`] for a list of agents.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use robofilter::{Config, Dialect, Members, UrlChecker};

use crate::bundle_file::{BundleIndex, with_bundle_checker};
use crate::compiled::{
    Compiled, check_agents, check_dialect, rules_or_robots,
};
use crate::path::display;
use crate::read::read_compiled;
use crate::shard_dir::{ShardIndex, open_shards};

/// What [`with_checker`] accepts, and how it names the argument.
#[derive(Clone, Copy, Debug)]
pub struct Open {
    /// How messages name the argument's role.
    what: &'static str,
    /// Whether a robots.txt is accepted (compiled in memory, for the
    /// agents asked about); else only compiled files are.
    robots_txt: bool,
    /// The dialect the user asked for, if any: a compiled file must have
    /// it; a robots.txt is compiled with it.
    dialect: Option<Dialect>,
}

impl Open {
    /// Compiled files only (`filter`): a rules file, a bundle or a shard
    /// directory.
    pub fn compiled() -> Open {
        Open { what: "rules file or bundle", robots_txt: false, dialect: None }
    }

    /// Compiled files, or a robots.txt compiled in memory (`check`,
    /// `explain`).
    pub fn any() -> Open {
        Open {
            what: "robots.txt, rules file or bundle",
            robots_txt: true,
            dialect: None,
        }
    }

    /// The dialect the user asked for.
    pub fn dialect(self, dialect: Option<Dialect>) -> Open {
        Open { dialect, ..self }
    }
}

/// Runs `f` with a checker of `path` for `agents` (in their order):
///
/// - a shard directory: each shard opened when a URL first needs it;
/// - a bundle file: its index now, each member when first used (mapped
///   under a read lease where the process installed the signal handlers,
///   else read and checked against the file's identity);
/// - anything else (a rules file, stdin, a pipe): read whole, and a
///   robots.txt compiled in memory where `open` accepts one.
///
/// Agents are checked against the dialect first (rfc9309 refuses one that
/// is not a product token).
pub fn with_checker<T>(
    path: &Path,
    agents: &[String],
    open: Open,
    f: impl for<'a> FnOnce(&UrlChecker<'a>) -> Result<T>,
) -> Result<T> {
    let names: Vec<&str> = agents.iter().map(String::as_str).collect();
    if ShardIndex::is_dir(path) {
        let shards = open_shards(path, agents, open.dialect)?;
        return f(&shards.checker(&names));
    }
    if let Some(index) = BundleIndex::open(path, open.what)? {
        let bundle = index.load()?;
        check_dialect(open.dialect, bundle.dialect(), "bundle", path)?;
        check_agents(agents, bundle.dialect())?;
        return with_bundle_checker(&index, &bundle, &names, f);
    }
    let bytes = if open.robots_txt {
        let config = agents.iter().fold(Config::new(), |c, a| c.agent(a));
        rules_or_robots(path, open.dialect, config)?
    } else {
        read_compiled(path, open.what)?
    };
    let compiled = Compiled::load(&bytes, path)?;
    check_dialect(open.dialect, compiled.dialect(), "rules file", path)?;
    check_agents(agents, compiled.dialect())?;
    let name = display(path);
    match &compiled {
        Compiled::Rules(rules) => {
            let checker = UrlChecker::rules(rules, &names)
                .with_context(|| format!("rules file '{name}'"))?;
            f(&checker)
        }
        Compiled::Bundle(bundle) => {
            // A bundle from stdin or a pipe, read whole.
            let members = Arc::new(Members::new(bundle));
            let checker = UrlChecker::bundle(bundle, members, &names)
                .map_err(|e| anyhow!("bundle '{name}', {e}"))?;
            f(&checker)
        }
    }
}
