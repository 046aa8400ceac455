//! The audit's inputs, shared by `inspect --summary` and `diff`: agent
//! lists (`--agent-list ai|FILE`) merged with `--agent`, and a bundle or
//! shard directory read into a stance table, its members on all cores.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;
use robofilter::{Bundle, Dialect, InputKind};
use robofilter_audit::{
    AgentList, Category, StanceTable, member_signals, member_stances,
};
use robofilter_io::{self as files, ShardIndex};

/// The agents of a run: `--agent` values first, then each list's in
/// order, each agent once.
#[derive(Debug, Default)]
pub struct Agents {
    /// The product tokens.
    pub names: Vec<String>,
    /// Each agent's category, where a list gives one.
    pub categories: Vec<Option<Category>>,
}

/// `--agent` and `--agent-list` together: an agent that a list names
/// again (tokens match case-insensitively) is taken once, with the list's
/// category if it had none.
pub fn agents(agent: &[String], lists: &[String]) -> Result<Agents> {
    let mut agents =
        Agents { names: agent.to_vec(), categories: vec![None; agent.len()] };
    for list in lists {
        for entry in read_list(list)?.entries() {
            let token = entry.token();
            match agents
                .names
                .iter()
                .position(|a| a.eq_ignore_ascii_case(token))
            {
                Some(at) => {
                    let c = &mut agents.categories[at];
                    *c = c.or(entry.category());
                }
                None => {
                    agents.names.push(token.to_string());
                    agents.categories.push(entry.category());
                }
            }
        }
    }
    Ok(agents)
}

/// [`agents`]' tokens alone, for the commands that take `--agent`
/// without categories (`check`, `compile`, `explain`, `filter`).
pub fn agent_names(
    agent: Vec<String>,
    lists: &[String],
) -> Result<Vec<String>> {
    if lists.is_empty() {
        return Ok(agent);
    }
    Ok(agents(&agent, lists)?.names)
}

/// A built-in list by name, else the list in the file `name`.
fn read_list(name: &str) -> Result<AgentList> {
    if let Some(list) = AgentList::builtin(name) {
        return Ok(list);
    }
    let path = Path::new(name);
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read agent list '{}' (the built-in lists are: {})",
            files::display(path),
            robofilter_audit::BUILTIN_LISTS.join(", ")
        )
    })?;
    AgentList::parse(&text)
        .with_context(|| format!("agent list '{}'", files::display(path)))
}

/// Every host's stance toward `agents` in the bundle or shard directory
/// `path`, and its dialect (`want`: the one the user asked for, if any).
/// A shard's or bundle's members are checked as they are read, and a
/// damaged one is an error.
pub fn stance_table(
    path: &Path,
    agents: &[String],
    want: Option<Dialect>,
) -> Result<(StanceTable, Dialect)> {
    let names: Vec<&str> = agents.iter().map(String::as_str).collect();
    let mut table = StanceTable::new(&names);
    let name = files::display(path);
    let dialect = if ShardIndex::is_dir(path) {
        let index = ShardIndex::read(path)?;
        files::check_dialect(want, index.dialect(), "shard directory", path)?;
        files::check_agents(agents, index.dialect())?;
        for i in 0..index.files.len() {
            let (shard, bytes) = index.read_shard(path, i)?;
            let bundle = index.load_shard(&bytes, &shard)?;
            push_bundle(&mut table, &bundle, &names, &shard)?;
        }
        index.dialect()
    } else {
        let bytes = files::read_compiled(path, "bundle or shard directory")?;
        if InputKind::of(&bytes) != InputKind::Bundle {
            bail!(
                "'{name}' is not a bundle or shard directory (compile one \
                 with `robofilter compile --hosts|--manifest|--warc`)"
            );
        }
        let bundle = files::load_bundle(&bytes, path)?;
        files::check_dialect(want, bundle.dialect(), "bundle", path)?;
        files::check_agents(agents, bundle.dialect())?;
        push_bundle(&mut table, &bundle, &names, path)?;
        bundle.dialect()
    };
    table.finish();
    Ok((table, dialect))
}

/// Adds the hosts of `bundle` (the file `path`) to `table`, each member's
/// stances found on all cores.
fn push_bundle(
    table: &mut StanceTable,
    bundle: &Bundle<'_>,
    agents: &[&str],
    path: &Path,
) -> Result<()> {
    let members = (0..bundle.member_len())
        .into_par_iter()
        .map(|m| {
            let at =
                || format!("bundle '{}', member {m}", files::display(path));
            let rules = bundle.member(m).map_err(|e| {
                anyhow!("{}: {e}; compile the bundle again", at())
            })?;
            let stances = member_stances(&rules, agents)
                .map_err(|e| anyhow!("{}: {e}", at()))?;
            let signals = member_signals(&rules, agents)
                .map_err(|e| anyhow!("{}: {e}", at()))?;
            Ok((stances, signals))
        })
        .collect::<Result<Vec<_>>>()?;
    let (stances, signals): (Vec<_>, Vec<_>) = members.into_iter().unzip();
    table.push_bundle(bundle, &stances, Some(&signals));
    Ok(())
}
