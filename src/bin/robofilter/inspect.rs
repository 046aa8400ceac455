//! `robofilter inspect ROBOTS_TXT|RULES`: one fact per line.

use std::io::Write;

use anyhow::{Context, Result, bail};
use robofilter::{
    AgentInfo, AlignedBytes, Compiler, Config, Dialect, EngineKind,
    GroupSource, HostRules, Rules,
};

use crate::args::InspectArgs;
use crate::files::{self, Kind, Output};

pub fn run(args: InspectArgs) -> Result<()> {
    let path = &args.file;
    let want: Option<Dialect> = args.dialect.map(Into::into);
    let bytes = files::read_owned(path, "robots.txt, rules file or bundle")?;
    let mut out = Output::new(None)?;
    let kind = Kind::of(&bytes);
    if kind == Kind::Bundle {
        inspect_bundle(&mut out, &bytes, path, args.host.as_deref())?;
    } else if args.host.is_some() {
        bail!(
            "--host applies to bundles; '{}' is not one",
            files::display(path)
        );
    } else if kind == Kind::Rules {
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
    write!(out, "dfa-budget: {states} states, {work} steps")?;
    if let Some(bytes) = rules.dfa_byte_limit() {
        write!(out, ", {bytes} bytes")?;
    }
    writeln!(out, " per group")?;
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
        writeln!(out, "sitemap: line {}: {}", s.line(), escaped(s.text()))?;
    }

    writeln!(out, "crawl-delays: {}", rules.crawl_delays().count())?;
    for d in rules.crawl_delays() {
        let agents = if d.agents().is_empty() {
            "no group".to_string()
        } else {
            format!("group of {}", escaped(d.agents()))
        };
        writeln!(
            out,
            "crawl-delay: line {}: {} ({agents})",
            d.line(),
            escaped(d.text())
        )?;
    }

    writeln!(out, "diagnostics: {}", rules.diagnostics().count())?;
    for d in rules.diagnostics() {
        match d.line() {
            0 => {
                writeln!(out, "diagnostic: whole file: {}", escaped(d.text()))?
            }
            n => writeln!(out, "diagnostic: line {n}: {}", escaped(d.text()))?,
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
    writeln!(out, "agent {}{fallback}: {group}{source}", escaped(a.name()))?;
    Ok(())
}

/// Text from a robots.txt or a bundle, escaped for the terminal.
fn escaped(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    crate::explain::escape(bytes)
}

/// A bundle: its hosts, one per line (`host: NAME<TAB>STATUS<TAB>HOW`), or
/// with `--host`, that host's compiled robots.txt in full.
fn inspect_bundle(
    out: &mut Output,
    bytes: &[u8],
    path: &std::path::Path,
    host: Option<&str>,
) -> Result<()> {
    let name = files::display(path);
    let bundle = files::load_bundle(bytes, path)?;
    writeln!(out, "file: {name}")?;
    writeln!(
        out,
        "format: bundle, version {}, {} bytes, {} hosts, {} distinct \
         robots.txt",
        robofilter::BUNDLE_FORMAT_VERSION,
        bytes.len(),
        bundle.host_len(),
        bundle.member_len()
    )?;
    writeln!(out, "dialect: {}", bundle.dialect())?;
    let member = |m: usize| -> Result<Rules<'_>> {
        bundle
            .member(m)
            .with_context(|| format!("bundle '{name}', member {m}"))
    };
    if let Some(host) = host {
        let key = robofilter::normalize_host(host)
            .map_err(|e| anyhow::anyhow!(e))?;
        let Some(i) = bundle.find(key.as_bytes()) else {
            bail!("bundle '{name}' has no entry for host '{key}'");
        };
        let info = bundle.host(i);
        writeln!(out, "host: {key}\tfetch {}", info.status())?;
        return match info.rules() {
            HostRules::Member(m) => {
                writeln!(out, "member: {m}, {} bytes", bundle.member_size(m))?;
                print_rules(out, &member(m)?)
            }
            HostRules::AllowAll => Ok(writeln!(out, "rules: allow all")?),
            HostRules::DisallowAll => {
                Ok(writeln!(out, "rules: disallow all")?)
            }
        };
    }
    // Every member is checked (its checksum and structure), so that a
    // damaged one is reported here rather than when `filter` reaches it.
    let damaged: Vec<(usize, String)> = (0..bundle.member_len())
        .filter_map(|m| bundle.member(m).err().map(|e| (m, e.to_string())))
        .collect();
    for h in bundle.hosts() {
        write!(out, "host: {}\tfetch {}\t", escaped(h.name()), h.status())?;
        match h.rules() {
            HostRules::Member(m) => {
                write!(out, "member {m} ({} bytes)", bundle.member_size(m))?;
                if damaged.iter().any(|d| d.0 == m) {
                    write!(out, " DAMAGED")?;
                }
                writeln!(out)?
            }
            HostRules::AllowAll => writeln!(out, "allow all")?,
            HostRules::DisallowAll => writeln!(out, "disallow all")?,
        }
    }
    out.flush()?;
    if let Some((m, e)) = damaged.first() {
        bail!(
            "bundle '{name}': {} damaged (member {m}: {e}); compile the \
             bundle again",
            if damaged.len() == 1 {
                "1 member is".to_string()
            } else {
                format!("{} members are", damaged.len())
            }
        );
    }
    Ok(())
}
