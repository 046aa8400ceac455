//! `robofilter inspect ROBOTS_TXT|RULES`: one fact per line.

use std::io::Write;

use anyhow::{Context, Result, bail};
use robofilter::{
    AgentInfo, AlignedBytes, Compiler, Config, Dialect, EngineKind,
    GroupSource, Rules,
};

use crate::args::InspectArgs;
use crate::files::{self, Output};

pub fn run(args: InspectArgs) -> Result<()> {
    let path = &args.file;
    let want: Option<Dialect> = args.dialect.map(Into::into);
    let bytes = files::read(path, "robots.txt or rules file")?;
    let mut out = Output::new(None)?;
    if files::is_rules_file(&bytes) {
        let rules = files::load_rules(&bytes, path)?;
        if let Some(want) = want.filter(|&w| w != rules.dialect()) {
            bail!(
                "rules file '{}' was compiled with the {} dialect, not \
                 {want} (omit --dialect)",
                files::display(path),
                rules.dialect()
            );
        }
        writeln!(out, "file: {}", files::display(path))?;
        writeln!(
            out,
            "format: rules file, version {}, {} bytes",
            robofilter::FORMAT_VERSION,
            bytes.len()
        )?;
        print_rules(&mut out, &rules)?;
    } else {
        let config = Config::new().dialect(want.unwrap_or_default());
        let compiler = Compiler::with_config(config);
        let robots = compiler.parse(&bytes);
        let compiled =
            compiler.compile_parsed(&robots).with_context(|| {
                format!("cannot compile robots.txt '{}'", files::display(path))
            })?;
        let compiled = AlignedBytes::from(&compiled[..]);
        let rules = files::load_rules(compiled.as_bytes(), path)?;
        writeln!(out, "file: {}", files::display(path))?;
        writeln!(
            out,
            "format: robots.txt, {} bytes, {} lines, {} groups in the file \
             (compiled in memory: {} bytes)",
            bytes.len(),
            robots.line_len(),
            robots.groups().len(),
            compiled.as_bytes().len()
        )?;
        print_rules(&mut out, &rules)?;
    }
    out.finish()
}

fn print_rules(out: &mut Output, rules: &Rules<'_>) -> Result<()> {
    writeln!(out, "dialect: {}", rules.dialect())?;
    match rules.parse_limit() {
        Some(n) => writeln!(out, "parse-limit: {n} bytes")?,
        None => writeln!(out, "parse-limit: none")?,
    }
    let (states, work) = rules.dfa_budgets();
    writeln!(out, "dfa-budget: {states} states, {work} steps per group")?;
    if rules.is_all_agents() {
        writeln!(out, "compiled-for: all agents (with the * fallback)")?;
    } else {
        writeln!(out, "compiled-for: the listed agents only")?;
    }

    let groups: Vec<_> = rules.groups().collect();
    writeln!(out, "groups: {}", groups.len())?;
    for g in &groups {
        write!(
            out,
            "group {}: engine {}, {} rules, {} states, {} classes, {} bytes",
            g.index(),
            g.engine().as_str(),
            g.rule_len(),
            g.state_len(),
            g.class_len(),
            g.size()
        )?;
        if g.engine() == EngineKind::SplitDfa {
            write!(out, ", {} parts", g.part_len())?;
        }
        match (g.over_budget(), g.engine()) {
            (Some(budget), EngineKind::SplitDfa) => writeln!(
                out,
                ", over the DFA {budget} (split into score DFAs combined by \
                 precedence: same verdicts)"
            )?,
            (Some(budget), _) => writeln!(
                out,
                ", over the DFA {budget} (uses the direct matcher: same \
                 verdicts, slower)"
            )?,
            (None, _) => writeln!(out)?,
        }
    }

    let agents: Vec<_> = rules.agents().chain(rules.fallback()).collect();
    writeln!(out, "agents: {}", agents.len())?;
    for a in &agents {
        print_agent(out, a)?;
    }

    writeln!(out, "sitemaps: {}", rules.sitemaps().count())?;
    for s in rules.sitemaps() {
        writeln!(out, "sitemap: line {}: {}", s.line(), lossy(s.text()))?;
    }

    writeln!(out, "crawl-delays: {}", rules.crawl_delays().count())?;
    for d in rules.crawl_delays() {
        let agents = if d.agents().is_empty() {
            "no group".to_string()
        } else {
            format!("group of {}", lossy(d.agents()))
        };
        writeln!(
            out,
            "crawl-delay: line {}: {} ({agents})",
            d.line(),
            lossy(d.text())
        )?;
    }

    writeln!(out, "diagnostics: {}", rules.diagnostics().count())?;
    for d in rules.diagnostics() {
        match d.line() {
            0 => writeln!(out, "diagnostic: whole file: {}", lossy(d.text()))?,
            n => writeln!(out, "diagnostic: line {n}: {}", lossy(d.text()))?,
        }
    }
    Ok(())
}

fn print_agent(out: &mut Output, a: &AgentInfo<'_>) -> Result<()> {
    let fallback = if a.name() == b"*" { " (every other agent)" } else { "" };
    let group = match a.group() {
        Some(g) => format!("group {g}"),
        None => "no group (everything allowed)".to_string(),
    };
    let source = match a.source() {
        GroupSource::Specific => ", its own",
        GroupSource::Global => ", the * group",
        GroupSource::None => "",
    };
    writeln!(out, "agent {}{fallback}: {group}{source}", lossy(a.name()))?;
    Ok(())
}

fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}
