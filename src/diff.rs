//! `robofilter diff OLD NEW --agent NAME...`: the hosts whose stance
//! toward an agent changed between two bundles or shard directories (a
//! table of transitions, or JSON), or with `--frontier`, the frontier
//! lines whose verdict changed.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use robofilter::{HostCache, Outcome};
use robofilter_audit::Comparison;
use serde_json::json;

use crate::args::DiffArgs;
use crate::audit;
use robofilter_io::{self as files, Input, Open, Output};

pub fn run(args: DiffArgs) -> Result<()> {
    let agents = audit::agents(&args.agent, &args.agent_list)?.names;
    if agents.is_empty() {
        bail!("the agent lists are empty; name an agent with --agent");
    }
    let mut inputs = vec![
        (args.old.as_path(), "old bundle"),
        (args.new.as_path(), "new bundle"),
    ];
    if let Some(f) = &args.frontier {
        inputs.push((f.as_path(), "frontier"));
    }
    files::check_streams_once(&inputs)?;
    if let Some(out) = &args.output {
        let mut read: Vec<std::path::PathBuf> =
            inputs.iter().map(|i| i.0.to_path_buf()).collect();
        read.extend(files::files_of(&args.old));
        read.extend(files::files_of(&args.new));
        let read: Vec<&Path> = read.iter().map(|p| p.as_path()).collect();
        files::check_output_not_input(out, &read)?;
    }
    if let Some(frontier) = &args.frontier {
        return frontier_diff(&args, &agents, frontier);
    }
    let (old, _) = audit::stance_table(&args.old, &agents, None)?;
    let (new, _) = audit::stance_table(&args.new, &agents, None)?;
    let diff = Comparison::new(&old, &new);
    let mut out = Output::new(args.output.as_deref())?;
    if args.json {
        for c in diff.changes() {
            let obj = json!({
                "host": String::from_utf8_lossy(c.host()),
                "agent": agents[c.agent()],
                "old": c.old_stance().as_str(),
                "new": c.new_stance().as_str(),
            });
            serde_json::to_writer(&mut out, &obj)?;
            writeln!(out)?;
        }
    } else {
        write_transitions(&mut out, &agents, &diff)?;
        writeln!(
            out,
            "({} hosts in both, {} only in '{}', {} only in '{}'; {} changed \
             for at least one agent)",
            diff.both_len(),
            diff.only_old_len(),
            files::display(&args.old),
            diff.only_new_len(),
            files::display(&args.new),
            diff.changed_host_len()
        )?;
    }
    out.finish()
}

/// The table: per agent, each transition and its hosts, most first.
fn write_transitions(
    out: &mut Output,
    agents: &[String],
    diff: &Comparison<'_>,
) -> Result<()> {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for (a, agent) in agents.iter().enumerate() {
        for (old, new, hosts) in diff.transitions(a) {
            rows.push([
                agent.clone(),
                old.label().to_string(),
                new.label().to_string(),
                hosts.to_string(),
            ]);
        }
    }
    let head = ["agent", "old", "new", "hosts"].map(String::from);
    let width = |i: usize| {
        let cells = rows.iter().map(|r| r[i].chars().count());
        cells.chain([head[i].len()]).max().unwrap_or(0)
    };
    let w = [width(0), width(1), width(2), width(3)];
    for r in std::iter::once(&head).chain(&rows) {
        let arrow = if std::ptr::eq(r, &head) { " " } else { "→" };
        writeln!(
            out,
            "{:<w0$}  {:<w1$}  {arrow}  {:<w2$}  {:>w3$}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        )?;
    }
    Ok(())
}

/// `--frontier`: every line decided by both, in one pass; the lines whose
/// verdict changed for an agent are printed with a pair of verdicts per
/// agent.
fn frontier_diff(
    args: &DiffArgs,
    agents: &[String],
    frontier: &Path,
) -> Result<()> {
    let open = Open::compiled();
    let name = files::display(frontier);
    files::with_checker(&args.old, agents, open, |old| {
        files::with_checker(&args.new, agents, open, |new| {
            let reader = Input::open(frontier)?.into_reader(frontier)?;
            let mut reader = BufReader::with_capacity(1 << 20, reader);
            let mut out = Output::new(args.output.as_deref())?;
            let (mut old_cache, mut new_cache) =
                (HostCache::new(), HostCache::new());
            let mut was = vec![Outcome::Invalid; agents.len()];
            let mut now = vec![Outcome::Invalid; agents.len()];
            let mut line = Vec::new();
            let (mut lines, mut changed) = (0u64, 0u64);
            loop {
                line.clear();
                let n = reader.read_until(b'\n', &mut line).map_err(|e| {
                    anyhow!("cannot read frontier '{name}': {e}")
                })?;
                if n == 0 {
                    break;
                }
                lines += 1;
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                let at = |path: &Path, e: robofilter::MemberError| {
                    anyhow!("'{}': {e}", files::display(path))
                };
                old.check_each(&line, &mut old_cache, &mut was)
                    .map_err(|e| at(&args.old, e))?;
                new.check_each(&line, &mut new_cache, &mut now)
                    .map_err(|e| at(&args.new, e))?;
                if was == now {
                    continue;
                }
                changed += 1;
                for (o, n) in was.iter().zip(&now) {
                    write!(out, "{}\t{}\t", o.as_str(), n.as_str())?;
                }
                out.write_all(&line)?;
                out.write_all(b"\n")?;
            }
            out.finish()?;
            diag!(
                "robofilter: {lines} lines, {changed} with a verdict that \
                 changed"
            );
            Ok(())
        })
    })
}
