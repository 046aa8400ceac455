//! `robofilter inspect --lint`: the lint findings of a robots.txt, a rules file, or every host of a bundle or shard directory, as text or JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use rayon::prelude::*;
use robofilter::{
    Bundle, Config, Dialect, Finding, HostRules, InputKind, Linter,
};
use robofilter_audit::AgentList;
use robofilter_io::{self as files, Output, ShardIndex};
use serde_json::{Map, Value, json};

use crate::args::InspectArgs;
use crate::json::put_text;

/// Lints `args.file`; `agents` (from `--agent` and `--agent-list`) are
/// known tokens besides the built-in `ai` list.
pub fn run(
    args: &InspectArgs,
    agents: &[String],
    want: Option<Dialect>,
) -> Result<()> {
    let ai = AgentList::builtin("ai").expect("the ai list is built in");
    let mut known: Vec<String> =
        ai.entries().iter().map(|e| e.token().to_string()).collect();
    for a in agents {
        if !known.iter().any(|k| k.eq_ignore_ascii_case(a)) {
            known.push(a.clone());
        }
    }
    let linter = Linter::new().known_agents(known);
    let mut run = Run {
        json: args.json,
        out: Output::new(args.output.as_deref())?,
        kinds: BTreeMap::new(),
        hosts: (0, 0),
    };
    let path = &args.file;
    let host = args.host.as_deref();
    let is_bundle = if ShardIndex::is_dir(path) {
        lint_shards(&mut run, &linter, path, host, want)?;
        true
    } else {
        let limits = files::Limits::new(
            &Config::new().dialect(want.unwrap_or_default()),
        );
        let what = "robots.txt, rules file or bundle";
        let bytes = files::read_bounded(path, what, limits)?;
        let kind = InputKind::of(&bytes);
        if kind.is_compressed() {
            let tool = kind.tool().unwrap_or("gzip");
            bail!(
                "'{}' is {kind}, not a robots.txt; decompress it first \
                 (`{tool} -dc FILE | robofilter inspect --lint -`)",
                files::display(path)
            );
        }
        if kind == InputKind::Bundle {
            let bundle = files::load_bundle(&bytes, path)?;
            files::check_dialect(want, bundle.dialect(), "bundle", path)?;
            lint_bundle(&mut run, &linter, &bundle, path, host)?;
            true
        } else {
            if host.is_some() {
                bail!(
                    "--host applies to bundles; '{}' is not one",
                    files::display(path)
                );
            }
            let findings = if kind == InputKind::Rules {
                let rules = files::load_rules(&bytes, path)?;
                files::check_dialect(
                    want,
                    rules.dialect(),
                    "rules file",
                    path,
                )?;
                linter.lint(&rules)
            } else {
                let config = Config::new().dialect(want.unwrap_or_default());
                linter.lint_robots_txt(&bytes, &config).map_err(|e| {
                    anyhow!(
                        "cannot lint robots.txt '{}': {e}",
                        files::display(path)
                    )
                })?
            };
            run.print(None, &findings)?;
            false
        }
    };
    run.out.finish()?;
    let total: usize = run.kinds.values().sum();
    let kinds: Vec<String> =
        run.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let kinds = match kinds.is_empty() {
        true => String::new(),
        false => format!(" ({})", kinds.join(", ")),
    };
    let hosts = match is_bundle {
        true => format!(" in {} of {} hosts", run.hosts.0, run.hosts.1),
        false => String::new(),
    };
    diag!("robofilter: {}{kinds}{hosts}", counted(total, "finding"));
    Ok(())
}

/// The output and what was printed.
struct Run {
    json: bool,
    out: Output,
    /// Findings per kind.
    kinds: BTreeMap<&'static str, usize>,
    /// Hosts with findings, hosts linted.
    hosts: (usize, usize),
}

impl Run {
    /// `[HOST<TAB>]LINE<TAB>KIND<TAB>MESSAGE` per finding, or a JSON
    /// object (with `host` for a bundle's).
    fn print(
        &mut self,
        host: Option<&[u8]>,
        findings: &[Finding],
    ) -> Result<()> {
        self.hosts.1 += 1;
        if !findings.is_empty() {
            self.hosts.0 += 1;
        }
        for f in findings {
            *self.kinds.entry(f.kind().as_str()).or_default() += 1;
            if self.json {
                serde_json::to_writer(&mut self.out, &to_json(host, f))?;
                writeln!(self.out)?;
                continue;
            }
            if let Some(host) = host {
                write!(self.out, "{}\t", escaped(host))?;
            }
            writeln!(
                self.out,
                "{}\t{}\t{}",
                f.line(),
                f.kind().as_str(),
                escaped(f.message().as_bytes())
            )?;
        }
        Ok(())
    }
}

/// A finding as JSON: `host` (bundles), `line`, `kind`, `message`, and
/// where they apply `rule`, `by`, `agent`, `similar_to`.
fn to_json(host: Option<&[u8]>, f: &Finding) -> Value {
    let mut o = Map::new();
    if let Some(host) = host {
        put_text(&mut o, "host", host);
    }
    o.insert("line".into(), json!(f.line()));
    o.insert("kind".into(), json!(f.kind().as_str()));
    o.insert("message".into(), json!(f.message()));
    if let Some((kind, value)) = f.rule() {
        let name = match kind {
            robofilter::RuleKind::Allow => "Allow: ",
            robofilter::RuleKind::Disallow => "Disallow: ",
        };
        put_text(&mut o, "rule", &[name.as_bytes(), value].concat());
    }
    if f.kind().is_never_decides() {
        o.insert("by".into(), json!(f.by()));
    }
    if let Some(agent) = f.agent() {
        put_text(&mut o, "agent", agent);
    }
    if let Some(similar) = f.similar_to() {
        o.insert("similar_to".into(), json!(similar));
    }
    Value::Object(o)
}

/// Every host of `bundle` (or the one `host`), in the bundle's order;
/// each distinct member is linted once, on all cores.
fn lint_bundle(
    run: &mut Run,
    linter: &Linter,
    bundle: &Bundle<'_>,
    path: &Path,
    host: Option<&str>,
) -> Result<()> {
    let hosts: Vec<usize> = match host {
        Some(h) => {
            let key = robofilter::normalize_host(h).map_err(|e| anyhow!(e))?;
            let Some(i) = bundle.find(key.as_bytes()) else {
                bail!(
                    "bundle '{}' has no entry for host '{key}'",
                    files::display(path)
                );
            };
            vec![i]
        }
        None => (0..bundle.host_len()).collect(),
    };
    let mut members: Vec<usize> = hosts
        .iter()
        .filter_map(|&i| match bundle.host(i).rules() {
            HostRules::Member(m) => Some(m),
            _ => None,
        })
        .collect();
    members.sort_unstable();
    members.dedup();
    let linted: Vec<(usize, Vec<Finding>)> = members
        .par_iter()
        .map(|&m| {
            let rules = bundle.member(m).map_err(|e| {
                anyhow!(
                    "bundle '{}', member {m}: {e}; compile the bundle again",
                    files::display(path)
                )
            })?;
            Ok((m, linter.lint(&rules)))
        })
        .collect::<Result<_>>()?;
    let linted: BTreeMap<usize, Vec<Finding>> = linted.into_iter().collect();
    for i in hosts {
        let info = bundle.host(i);
        let findings = match info.rules() {
            HostRules::Member(m) => &linted[&m][..],
            HostRules::AllowAll | HostRules::DisallowAll => &[],
        };
        run.print(Some(info.name()), findings)?;
    }
    Ok(())
}

/// Every shard of a shard directory (checked against its index), or
/// with `host` the host's shard alone.
fn lint_shards(
    run: &mut Run,
    linter: &Linter,
    dir: &Path,
    host: Option<&str>,
    want: Option<Dialect>,
) -> Result<()> {
    let index = ShardIndex::read(dir)?;
    files::check_dialect(want, index.dialect(), "shard directory", dir)?;
    let only = host.map(|h| index.shard_of_host(h)).transpose()?;
    for i in 0..index.files.len() {
        if only.is_some_and(|s| s != i) {
            continue;
        }
        let (path, bytes) = index.read_shard(dir, i)?;
        let bundle = index.load_shard(&bytes, &path)?;
        lint_bundle(run, linter, &bundle, &path, host)?;
    }
    Ok(())
}

/// Text from a robots.txt or a bundle, escaped for the terminal and TSV.
fn escaped(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    robofilter_frontier::escape(bytes)
}

/// `1 finding`, `2 findings`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
