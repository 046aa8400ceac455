//! `robofilter inspect ROBOTS_TXT|RULES|BUNDLE`: one fact per line, or
//! with `--json` one object per host, or with `--summary` the hosts'
//! stances counted per agent (a table, JSON lines, an HTML report).

use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, Result, bail};
use robofilter::{
    AgentInfo, AlignedBytes, Compiler, Config, Dialect, EngineKind,
    FetchStatus, GroupSource, HostRules, InputKind, OtherRecord, Rules,
    UsageKey, UsageRule,
};

use serde_json::{Map, Value, json};

use crate::args::InspectArgs;
use crate::audit::{self, Agents};
use crate::json::put_text;
use robofilter_audit::{Ranks, Summary, report_html};
use robofilter_io::{self as files, Output, ShardIndex};

pub fn run(mut args: InspectArgs) -> Result<()> {
    let path = &args.file;
    let want: Option<Dialect> = args.dialect.map(Into::into);
    let any_agent = !args.agent.is_empty() || !args.agent_list.is_empty();
    if any_agent && !args.json && !args.summary && !args.lint {
        bail!(
            "--agent and --agent-list apply to --json, --summary and --lint"
        );
    }
    if args.json && args.host.is_some() && !args.lint {
        bail!("--json describes every host; --host applies without it");
    }
    let agents = audit::agents(&args.agent, &args.agent_list)?;
    if args.summary && agents.names.is_empty() {
        bail!(
            "--summary counts hosts per agent: name them with --agent or --agent-list"
        );
    }
    // Before any work: an output that is the input would destroy it.
    let mut read = vec![path.clone()];
    read.extend(files::files_of(path));
    read.extend(args.ranks.clone());
    let read: Vec<&std::path::Path> =
        read.iter().map(|p| p.as_path()).collect();
    for out in args.output.iter().chain(&args.report) {
        files::check_output_not_input(out, &read)?;
    }
    if args.summary {
        return summary(&args, &agents, want);
    }
    if args.lint {
        return crate::lint::run(&args, &agents.names, want);
    }
    args.agent = agents.names;
    let path = &args.file;
    if ShardIndex::is_dir(path) {
        return inspect_shards(&args, want);
    }
    // A robots.txt is read as far as its dialect could use it, a compiled
    // file as far as its header says: bounded, whatever `path` is.
    let limits =
        files::Limits::new(&Config::new().dialect(want.unwrap_or_default()));
    let bytes =
        files::read_bounded(path, "robots.txt, rules file or bundle", limits)?;
    let kind = InputKind::of(&bytes);
    if kind.is_compressed() {
        // Read as text it would have no rules: refused, as compile does.
        let tool = kind.tool().unwrap_or("gzip");
        bail!(
            "'{}' is {kind}, not a robots.txt; decompress it first (`{tool} \
             -dc FILE | robofilter inspect -`)",
            files::display(path)
        );
    }
    let mut out = Output::new(args.output.as_deref())?;
    if args.json {
        return run_json(&args, &bytes, kind, want, out);
    }
    if kind == InputKind::Bundle {
        inspect_bundle(&mut out, &bytes, path, args.host.as_deref())?;
    } else if args.host.is_some() {
        bail!(
            "--host applies to bundles; '{}' is not one",
            files::display(path)
        );
    } else if kind == InputKind::Rules {
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
            "group {}: engine {}, {}, {} states, {} classes, {} bytes",
            g.index(),
            g.engine().as_str(),
            counted(g.rule_len() as u64, "rule"),
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
            let agents = d.agents().split(|&b| b == b'\n');
            let agents: Vec<_> = agents.map(escaped).collect();
            format!("group of {}", agents.join(", "))
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
    robofilter_frontier::escape(bytes)
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
        "format: bundle, version {}, {} bytes, {}, {} distinct \
         robots.txt",
        robofilter::BUNDLE_FORMAT_VERSION,
        bytes.len(),
        counted(bundle.host_len() as u64, "host"),
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
        if let Some(cause) = info.cause() {
            writeln!(out, "cause: {cause}")?;
        }
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
            HostRules::AllowAll => write!(out, "allow all")?,
            HostRules::DisallowAll => write!(out, "disallow all")?,
        }
        match (h.rules(), h.cause()) {
            (HostRules::Member(_), _) => {}
            (_, Some(cause)) => writeln!(out, " ({cause})")?,
            (_, None) => writeln!(out)?,
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

/// A shard directory: every shard is checked against `index.json` (its
/// length and CRC-32), then described as a bundle (`--host`: only the
/// host's shard) or with `--json`, its hosts'.
fn inspect_shards(args: &InspectArgs, want: Option<Dialect>) -> Result<()> {
    let dir = &args.file;
    let name = files::display(dir);
    let index = ShardIndex::read(dir)?;
    if let Some(want) = want.filter(|&w| w != index.dialect()) {
        bail!(
            "shard directory '{name}' was compiled with the {} dialect, not \
             {want} (omit --dialect)",
            index.dialect()
        );
    }
    files::check_agents(&args.agent, index.dialect())?;
    let n = index.shards;
    let only = args.host.as_deref().map(|h| index.shard_of_host(h));
    let only = only.transpose()?;
    let mut out = Output::new(args.output.as_deref())?;
    let human = !args.json;
    if human && only.is_none() {
        writeln!(out, "file: {name}")?;
        writeln!(
            out,
            "format: shard directory, version {}, {} by {} of the host \
             key, {}, build {}",
            index.version,
            counted(u64::from(n), "shard"),
            index.hash,
            counted(index.hosts, "host"),
            index.build_id
        )?;
        writeln!(out, "dialect: {}", index.dialect())?;
        for f in &index.files {
            writeln!(
                out,
                "shard: {}\t{}\t{} bytes\tcrc32 {:08x}",
                f.name,
                counted(f.hosts, "host"),
                f.length,
                f.crc32
            )?;
        }
    }
    let mut damaged: Vec<String> = Vec::new();
    for i in 0..index.files.len() {
        if only.is_some_and(|s| s != i) {
            continue;
        }
        let (path, bytes) = index.read_shard(dir, i)?;
        if human {
            inspect_bundle(&mut out, &bytes, &path, args.host.as_deref())?;
            continue;
        }
        let bundle = index.load_shard(&bytes, &path)?;
        json_hosts(args, &bundle, &mut out, &mut damaged)?;
    }
    out.finish()?;
    any_damaged(&format!("shard directory '{name}'"), &damaged)
}

/// Fails, naming `what` and the first of them, if hosts' rules are
/// `damaged`.
fn any_damaged(what: &str, damaged: &[String]) -> Result<()> {
    let Some(first) = damaged.first() else { return Ok(()) };
    let hosts = match damaged.len() {
        1 => "1 host's rules are".to_string(),
        n => format!("{n} hosts' rules are"),
    };
    bail!("{what}: {hosts} damaged ({first}); compile it again")
}

/// `--json`: the agents are checked first (as `filter` checks them), then
/// every host is read.
fn run_json(
    args: &InspectArgs,
    bytes: &[u8],
    kind: InputKind,
    want: Option<Dialect>,
    mut out: Output,
) -> Result<()> {
    let path = &args.file;
    let name = files::display(path);
    if kind != InputKind::Bundle {
        let compiled;
        let rules = if kind == InputKind::Rules {
            files::load_rules(bytes, path)?
        } else {
            let config = Config::new().dialect(want.unwrap_or_default());
            let body =
                Compiler::with_config(config).compile(bytes).with_context(
                    || format!("cannot compile robots.txt '{name}'"),
                )?;
            compiled = AlignedBytes::from(&body[..]);
            files::load_rules(compiled.as_bytes(), path)?
        };
        files::check_agents(&args.agent, rules.dialect())?;
        let mut obj = Map::new();
        obj.insert("host".into(), Value::Null);
        obj.insert("status".into(), Value::Null);
        obj.insert("outcome".into(), json!("rules"));
        let err = describe_rules(&mut obj, &rules, &args.agent)?;
        serde_json::to_writer(&mut out, &obj)?;
        writeln!(out)?;
        out.finish()?;
        if let Some(e) = err {
            bail!("'{name}': {e}");
        }
        return Ok(());
    }
    let bundle = files::load_bundle(bytes, path)?;
    files::check_agents(&args.agent, bundle.dialect())?;
    let mut damaged: Vec<String> = Vec::new();
    json_hosts(args, &bundle, &mut out, &mut damaged)?;
    out.finish()?;
    any_damaged(&format!("bundle '{name}'"), &damaged)
}

/// `--json` over the hosts of `bundle`: one object per host; damaged
/// members are added to `damaged`.
fn json_hosts(
    args: &InspectArgs,
    bundle: &robofilter::Bundle<'_>,
    out: &mut Output,
    damaged: &mut Vec<String>,
) -> Result<()> {
    // Members are shared by hosts with identical robots.txt bodies (and by
    // `www.`/bare aliases): each is described once.
    let mut described: HashMap<usize, Map<String, Value>> = HashMap::new();
    for h in bundle.hosts() {
        let mut obj = Map::new();
        put_text(&mut obj, "host", h.name());
        obj.insert(
            "status".into(),
            match h.status() {
                FetchStatus::Http(s) => json!(s),
                other => json!(other.to_string()),
            },
        );
        let outcome = match h.rules() {
            HostRules::Member(_) => "rules",
            HostRules::AllowAll => "allow-all",
            HostRules::DisallowAll => "disallow-all",
        };
        obj.insert("outcome".into(), json!(outcome));
        if let Some(cause) = h.cause() {
            obj.insert("cause".into(), json!(cause));
        }
        match h.rules() {
            HostRules::Member(m) if described.contains_key(&m) => {
                obj.extend(described[&m].clone());
                if let Some(Value::String(e)) = obj.get("error") {
                    damaged.push(format!("host {}: {e}", escaped(h.name())));
                }
            }
            HostRules::Member(m) => match bundle.member(m) {
                Ok(rules) => {
                    let mut facts = Map::new();
                    if let Some(e) =
                        describe_rules(&mut facts, &rules, &args.agent)?
                    {
                        damaged
                            .push(format!("host {}: {e}", escaped(h.name())));
                    }
                    obj.extend(facts.clone());
                    described.insert(m, facts);
                }
                Err(e) => {
                    obj.insert("error".into(), json!(e.to_string()));
                    damaged.push(format!(
                        "host {} (member {m}): {e}",
                        escaped(h.name())
                    ));
                }
            },
            HostRules::AllowAll | HostRules::DisallowAll => {
                let blocked = h.rules() == HostRules::DisallowAll;
                obj.insert("sitemaps".into(), json!([]));
                obj.insert("crawl_delays".into(), json!([]));
                obj.insert("other_lines".into(), json!([]));
                obj.insert("content_usage".into(), json!([]));
                let per: Map<String, Value> = args
                    .agent
                    .iter()
                    .map(|a| (a.clone(), json!(blocked)))
                    .collect();
                obj.insert("blocked_entirely".into(), Value::Object(per));
                let per: Map<String, Value> = args
                    .agent
                    .iter()
                    .map(|a| (a.clone(), json!(!blocked)))
                    .collect();
                obj.insert("allows_everything".into(), Value::Object(per));
            }
        }
        serde_json::to_writer(&mut *out, &obj)?;
        writeln!(out)?;
    }
    Ok(())
}

/// A group's `user-agent` values, stored one per line.
fn agent_list(agents: &[u8]) -> Value {
    if agents.is_empty() {
        return json!([]);
    }
    Value::Array(
        agents
            .split(|&b| b == b'\n')
            .map(|a| json!(String::from_utf8_lossy(a)))
            .collect(),
    )
}

/// The rules' facts into `obj`; `Some(error)` if the side section is
/// damaged (the rest is still written).
fn describe_rules(
    obj: &mut Map<String, Value>,
    rules: &Rules<'_>,
    agents: &[String],
) -> Result<Option<String>> {
    let sitemaps: Vec<Value> = rules
        .sitemaps()
        .map(|s| {
            let mut o = Map::new();
            o.insert("line".into(), json!(s.line()));
            put_text(&mut o, "url", s.text());
            Value::Object(o)
        })
        .collect();
    obj.insert("sitemaps".into(), Value::Array(sitemaps));
    let delays: Vec<Value> = rules
        .crawl_delays()
        .map(|d| {
            let mut o = Map::new();
            o.insert("line".into(), json!(d.line()));
            o.insert("group".into(), json!(d.group()));
            o.insert("agents".into(), agent_list(d.agents()));
            put_text(&mut o, "value", d.text());
            Value::Object(o)
        })
        .collect();
    obj.insert("crawl_delays".into(), Value::Array(delays));
    let mut error = None;
    match rules.other_lines() {
        Ok(lines) => {
            let usage = content_usage(&lines, rules.dialect());
            obj.insert("content_usage".into(), usage);
            let lines: Vec<Value> = lines
                .iter()
                .map(|l| {
                    let mut o = Map::new();
                    o.insert("line".into(), json!(l.line()));
                    o.insert("group".into(), json!(l.group()));
                    o.insert("agents".into(), agent_list(l.agents()));
                    put_text(&mut o, "key", l.key());
                    put_text(&mut o, "value", l.value());
                    Value::Object(o)
                })
                .collect();
            obj.insert("other_lines".into(), Value::Array(lines));
        }
        Err(e) => {
            obj.insert("other_lines".into(), Value::Null);
            obj.insert("content_usage".into(), Value::Null);
            obj.insert("error".into(), json!(e.to_string()));
            error = Some(e.to_string());
        }
    }
    let mut blocked = Map::new();
    let mut everything = Map::new();
    // Agents that share a group (most fall back to `*`) share its answers.
    let mut per_group = HashMap::new();
    for a in agents {
        let m = rules.matcher(a).map_err(|e| anyhow::anyhow!(e))?;
        let (b, e) = *per_group
            .entry(m.group())
            .or_insert_with(|| (m.blocks_entirely(), m.allows_everything()));
        blocked.insert(a.clone(), json!(b));
        everything.insert(a.clone(), json!(e));
    }
    obj.insert("blocked_entirely".into(), Value::Object(blocked));
    obj.insert("allows_everything".into(), Value::Object(everything));
    Ok(error)
}

/// The Content-Usage rules (AIPREF) among `lines`, in file order: for
/// each, its line, group and agents, its path and expression as written,
/// whether the expression parses, and the preference it states per key.
fn content_usage(lines: &[OtherRecord<'_>], dialect: Dialect) -> Value {
    let rules = lines
        .iter()
        .filter(|l| {
            l.group().is_some()
                && l.key().eq_ignore_ascii_case(b"content-usage")
        })
        .map(|l| {
            let rule = UsageRule::new(l.line(), l.value(), dialect);
            let mut o = Map::new();
            o.insert("line".into(), json!(l.line()));
            o.insert("group".into(), json!(l.group()));
            o.insert("agents".into(), agent_list(l.agents()));
            put_text(&mut o, "path", rule.path());
            put_text(&mut o, "expression", rule.expression());
            o.insert("parsed".into(), json!(rule.is_parsed()));
            for key in UsageKey::ALL {
                let p = rule.preferences().get(key);
                o.insert(key.as_str().into(), json!(p.as_str()));
            }
            Value::Object(o)
        })
        .collect();
    Value::Array(rules)
}

/// `1 host`, `2 hosts`.
fn counted(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `--summary`: every host's stance toward each agent, counted per agent
/// (or category), over all hosts and with `--ranks` per rank tier; a
/// table or JSON lines, and with `--report` the HTML page of the same
/// numbers.
fn summary(
    args: &InspectArgs,
    agents: &Agents,
    want: Option<Dialect>,
) -> Result<()> {
    let path = &args.file;
    let name = files::display(path);
    if args.by_category && agents.categories.iter().all(Option::is_none) {
        bail!(
            "--by-category rolls up the categories of agent lists, and no \
             agent has one (add --agent-list ai, or a list with categories)"
        );
    }
    let ranks = match &args.ranks {
        Some(file) => {
            let text = std::fs::read(file).with_context(|| {
                format!("cannot read ranks '{}'", files::display(file))
            })?;
            let ranks = Ranks::parse(&text).map_err(|e| {
                anyhow::anyhow!("ranks '{}': {e}", files::display(file))
            })?;
            Some(ranks)
        }
        None => None,
    };
    let (table, dialect) = audit::stance_table(path, &agents.names, want)?;
    let host_ranks = ranks.as_ref().map(|r| r.host_ranks(&table));
    let tiers = ranks.as_ref().map(Ranks::tiers).unwrap_or_default();
    let summary = Summary::new(
        &table,
        &agents.categories,
        host_ranks.as_deref().map(|h| (&tiers[..], h)),
    );
    if let Some(report) = &args.report {
        let kind = match ShardIndex::is_dir(path) {
            true => "shard directory",
            false => "bundle",
        };
        let mut facts =
            vec![(kind, name.to_string()), ("dialect", dialect.to_string())];
        if !args.agent_list.is_empty() {
            facts.push(("agent lists", args.agent_list.join(", ")));
        }
        if let (Some(file), Some(r)) = (&args.ranks, &ranks) {
            let ranked =
                format!("{} ({} domains)", files::display(file), r.len());
            facts.push(("ranks", ranked));
        }
        facts.push((
            "made by",
            format!("robofilter {}", env!("CARGO_PKG_VERSION")),
        ));
        let html =
            report_html(&summary, &table, host_ranks.as_deref(), &facts);
        let mut page = Output::new(Some(report))?;
        page.write_all(html.as_bytes())?;
        page.finish()?;
    }
    let mut out = Output::new(args.output.as_deref())?;
    if args.json {
        summary.write_json(&mut out, args.by_category)?;
    } else {
        summary.write_table(&mut out, args.by_category)?;
    }
    out.finish()
}
