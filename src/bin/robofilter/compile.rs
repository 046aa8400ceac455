//! `robofilter compile ROBOTS_TXT -o RULES`.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use robofilter::{Config, Dialect, EngineKind};

use crate::args::CompileArgs;
use crate::files::{self, AtomicFile};

pub fn run(args: CompileArgs) -> Result<()> {
    let start = Instant::now();
    let dialect: Dialect = args.dialect.map(Into::into).unwrap_or_default();
    let mut config = Config::new().dialect(dialect);
    for agent in &args.agent {
        config = config.agent(agent);
    }
    if let Some(limit) = args.parse_limit {
        if dialect != Dialect::Rfc9309 {
            bail!(
                "--parse-limit applies to the rfc9309 dialect only (the \
                 google dialect parses the whole file; drop --parse-limit)"
            );
        }
        config = config.parse_limit(limit);
    }
    if let Some(states) = args.dfa_state_limit {
        config = config.dfa_state_limit(states);
    }
    let body = files::read(&args.robots, "robots.txt")?;
    let bytes = files::compile(&body, config, &args.robots)?;
    // Load what was compiled: a self-check, and the facts for the summary.
    let rules = files::load_rules(&bytes, &args.output)
        .context("internal error: the compiled rules do not load")?;

    let mut out = AtomicFile::create(&args.output)?;
    out.write_all(&bytes).with_context(|| {
        format!("cannot write output '{}'", args.output.display())
    })?;
    out.commit()?;

    let (mut dfa, mut split, mut direct, mut allow_all, mut groups) =
        (0, 0, 0, 0, 0);
    for g in rules.groups() {
        groups += 1;
        match g.engine() {
            EngineKind::VerdictDfa => dfa += 1,
            EngineKind::SplitDfa => split += 1,
            EngineKind::Direct => direct += 1,
            EngineKind::AllowAll => allow_all += 1,
        }
    }
    let agents = rules.agents().count();
    let fallback = if rules.is_all_agents() { " + * fallback" } else { "" };
    eprintln!(
        "robofilter: {}: {dialect}, {} (dfa {dfa}, split-dfa {split}, \
         direct {direct}, allow-all {allow_all}), {}{fallback}, {} bytes, compiled in \
         {:.3} s",
        args.output.display(),
        count(groups, "group"),
        count(agents, "agent"),
        bytes.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `1 group`, `2 groups`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
