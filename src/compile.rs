//! `robofilter compile ROBOTS_TXT -o RULES`, and bundles:
//! `robofilter compile --hosts DIR | --manifest FILE | --warc FILE -o RULES`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use robofilter::{
    AlignedBytes, Bundle, Config, Dialect, EngineKind, HostRules,
};

use crate::args::CompileArgs;
use robofilter_io::{
    self as files, AtomicDir, INDEX_NAME, Output, ShardFile, ShardIndex,
};
use robofilter_sources::{self as sources, HostSource, Limits, SourceStats};

pub fn run(args: CompileArgs) -> Result<()> {
    let start = Instant::now();
    let out = match args.shards {
        Some(_) => Dest::Shards(AtomicDir::create(&args.output)?),
        None => Dest::File(open_output(&args)?),
    };
    let dialect: Dialect = args.dialect.map(Into::into).unwrap_or_default();
    let mut config = Config::new().dialect(dialect);
    for agent in &args.agent {
        files::check_agent(agent, dialect)?;
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
    let bundle_input = args.robots.is_none();
    match args.dfa_byte_limit {
        Some(bytes) => config = config.dfa_byte_limit(bytes),
        // Bundles favour size (see the constant).
        None if bundle_input => {
            config = config.dfa_byte_limit(sources::BUNDLE_DFA_BYTE_LIMIT)
        }
        None => {}
    }
    let limits = Limits::new(&config);
    let (sources, stats) = if let Some(dir) = &args.hosts {
        sources::read_hosts_dir(dir, limits)?
    } else if let Some(path) = &args.manifest {
        sources::read_manifest(path, limits)?
    } else if let Some(path) = &args.warc {
        sources::read_warc(path, limits)?
    } else {
        let robots = args.robots.as_deref().expect("clap requires one input");
        let Dest::File(out) = out else {
            unreachable!("clap refuses --shards with one robots.txt")
        };
        return single(robots, config, limits, out, &args.output, start);
    };
    for bad in &stats.bad {
        diag!("robofilter: warning: {bad}");
    }
    if args.strict && !stats.bad.is_empty() {
        bail!(
            "{} (see above), fatal with --strict: nothing written (fix \
             them, or drop --strict to build the bundle without them)",
            count(stats.bad.len(), "bad input")
        );
    }
    match out {
        Dest::File(out) => {
            bundle(sources, &stats, config, out, &args.output, start)
        }
        Dest::Shards(dir) => {
            let n = args.shards.expect("--shards given");
            sharded(sources, &stats, config, n, dir, &args.output, start)
        }
    }
}

/// Where `compile` writes: a file (or stdout), or a new shard directory.
enum Dest {
    File(Output),
    Shards(AtomicDir),
}

/// Opens the output before any work: refuses one that is an input (the
/// robots.txt, a `--hosts` file, the manifest or the WARC) and fails early
/// when its directory is missing.
fn open_output(args: &CompileArgs) -> Result<Output> {
    let mut inputs: Vec<PathBuf> = [&args.robots, &args.manifest, &args.warc]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(dir) = &args.hosts {
        if let Ok(entries) = std::fs::read_dir(dir) {
            inputs.extend(entries.flatten().map(|e| e.path()));
        }
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    files::check_output_not_input(&args.output, &inputs)?;
    if let Some(dir) = &args.hosts {
        // An output inside the hosts directory would be read as a host
        // (`x.txt`) or skipped with a note by the next build.
        let parent = match args.output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let same = |a: &Path, b: &Path| {
            a.canonicalize()
                .ok()
                .zip(b.canonicalize().ok())
                .is_some_and(|(a, b)| a == b)
        };
        if !files::is_stdin(&args.output) && same(parent, dir) {
            bail!(
                "output '{}' is inside the hosts directory '{}': the next \
                 build would read it as a member; write it elsewhere",
                args.output.display(),
                dir.display()
            );
        }
    }
    Output::new(Some(&args.output))
}

/// How the summary names the output.
fn out_name(output: &Path) -> String {
    if files::is_stdin(output) {
        "<stdout>".to_string()
    } else {
        output.display().to_string()
    }
}

/// Compiles one robots.txt into a rules file.
fn single(
    robots: &Path,
    config: Config,
    limits: Limits,
    out: Output,
    output: &Path,
    start: Instant,
) -> Result<()> {
    let dialect = config.get_dialect();
    let (body, more) = sources::read_robots(robots, limits)?;
    if more {
        if !limits.cut_ok {
            bail!("'{}': {}", files::display(robots), limits.too_large());
        }
        // Nothing past the parse limit is parsed: the verdicts are those
        // of the whole file.
        diag!(
            "robofilter: note: '{}' is longer than {} octets; read that \
             much (rfc9309 parses only the first {})",
            files::display(robots),
            limits.body,
            config.get_parse_limit()
        );
    }
    let bytes = files::compile(&body, config, robots)?;
    // Load what was compiled: a self-check, and the facts for the summary.
    let rules = files::load_rules(&bytes, output)
        .context("internal error: the compiled rules do not load")?;
    write(out, &bytes)?;
    if let Some(warning) = no_group_warning(&body, dialect, robots, output) {
        diag!("robofilter: warning: {warning}");
    }

    let engines = EngineCounts::of(&rules);
    let agents = rules.agents().count();
    let fallback = if rules.is_all_agents() { " + * fallback" } else { "" };
    diag!(
        "robofilter: {}: {dialect}, {}, {}{fallback}, {} bytes, compiled \
         in {:.3} s",
        out_name(output),
        engines.describe(),
        count(agents, "agent"),
        bytes.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A warning for a robots.txt with no group and lines the parser did not
/// understand: every URL is allowed, which is what the file says if it is
/// one, but more likely it is not a robots.txt at all (an HTML page, a
/// UTF-16 file, binary data). `None` for an empty file, one of comments or
/// of records that are not rules (`Sitemap:`), or one with a group.
fn no_group_warning(
    body: &[u8],
    dialect: Dialect,
    robots: &Path,
    output: &Path,
) -> Option<String> {
    use robofilter::DiagnosticKind as K;
    let parsed = robofilter::RobotsTxt::parse(body, dialect);
    if !parsed.groups().is_empty() {
        return None;
    }
    // A line may have more than one of them (a NUL, then an unknown key).
    let mut lines: Vec<u32> = parsed
        .diagnostics()
        .iter()
        .filter(|d| {
            matches!(
                d.kind(),
                K::UnknownKey(_)
                    | K::InvalidLine
                    | K::RuleOutsideGroup
                    | K::NulInLine
            )
        })
        .map(|d| d.line())
        .collect();
    lines.dedup();
    let not_understood = lines.len();
    if not_understood == 0 {
        return None;
    }
    let utf16 = match body {
        [0xff, 0xfe, ..] | [0xfe, 0xff, ..] => {
            " It starts with a UTF-16 byte-order mark: a robots.txt is \
             UTF-8 (RFC 9309); convert it with `iconv -f UTF-16 -t UTF-8`."
        }
        _ => "",
    };
    // `inspect` lists the lines, of the rules file or the robots.txt.
    let listed = [output, robots]
        .into_iter()
        .find(|p| !files::is_stdin(p))
        .map(|p| {
            format!(" (`robofilter inspect {}` lists them)", files::display(p))
        })
        .unwrap_or_default();
    Some(format!(
        "'{}' has no group and {} not understood, so every URL is allowed: \
         is it a robots.txt?{utf16}{listed}",
        files::display(robots),
        count(not_understood, "line"),
    ))
}

/// Compiles many hosts into a bundle.
fn bundle(
    sources: Vec<HostSource>,
    stats: &SourceStats,
    config: Config,
    out: Output,
    output: &Path,
    start: Instant,
) -> Result<()> {
    let dialect = config.get_dialect();
    let mut engines = EngineCounts::default();
    let bytes = build_bundle(sources, config, &mut engines)?;
    let bundle = Bundle::from_bytes(bytes.as_bytes())
        .context("internal error: the bundle does not load")?;
    write(out, bytes.as_bytes())?;

    let (mut rules, mut allow, mut disallow) = (0, 0, 0);
    for h in bundle.hosts() {
        match h.rules() {
            HostRules::Member(_) => rules += 1,
            HostRules::AllowAll => allow += 1,
            HostRules::DisallowAll => disallow += 1,
        }
    }
    for note in &stats.notes {
        diag!("robofilter: note: {note}");
    }
    let hosts = bundle.host_len();
    let bad = if stats.bad.is_empty() {
        String::new()
    } else {
        format!(", {} (see above)", bad_inputs(stats.bad.len()))
    };
    diag!(
        "robofilter: {}: {dialect} bundle, {} ({rules} by robots.txt, \
         {allow} allow all, {disallow} disallow all){bad}, {} distinct \
         robots.txt, {}, {} bytes ({:.0} per host), compiled in {:.3} s",
        out_name(output),
        count(hosts, "host"),
        bundle.member_len(),
        engines.describe(),
        bytes.as_bytes().len(),
        bytes.as_bytes().len() as f64 / hosts.max(1) as f64,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Compiles `sources` into a bundle ([`sources::build_bundle`]),
/// counting the groups by engine into `engines` for the summary.
fn build_bundle(
    sources: Vec<HostSource>,
    config: Config,
    engines: &mut EngineCounts,
) -> Result<AlignedBytes> {
    sources::build_bundle(sources, config, |rules| engines.add(rules))
}

/// Compiles many hosts into `n` bundles, each holding the hosts of one
/// shard, and the `index.json` that names them, in a new directory.
fn sharded(
    sources: Vec<HostSource>,
    stats: &SourceStats,
    config: Config,
    n: u32,
    dir: AtomicDir,
    output: &Path,
    start: Instant,
) -> Result<()> {
    let dialect = config.get_dialect();
    // The shard of a host is that of its bundle host key; a name without
    // one fails in `BundleBuilder::add` below, whatever its shard.
    let mut parts: Vec<Vec<HostSource>> = (0..n).map(|_| Vec::new()).collect();
    for s in sources {
        let key = robofilter::normalize_host(&s.host)
            .unwrap_or_else(|_| s.host.clone());
        parts[robofilter::shard_of_key(key.as_bytes(), n) as usize].push(s);
    }
    let mut files = Vec::with_capacity(n as usize);
    let (mut engines, mut hosts, mut members) =
        (EngineCounts::default(), 0, 0);
    for (i, part) in parts.into_iter().enumerate() {
        let bytes = build_bundle(part, config.clone(), &mut engines)?;
        let bundle = Bundle::from_bytes(bytes.as_bytes())
            .context("internal error: a shard does not load")?;
        hosts += bundle.host_len() as u64;
        members += bundle.member_len();
        let file = ShardFile::of(i as u32, n, &bundle, bytes.as_bytes());
        dir.write(&file.name, bytes.as_bytes())?;
        files.push(file);
    }
    let total: u64 = files.iter().map(|f| f.length).sum();
    let largest = files.iter().map(|f| f.length).max().unwrap_or(0);
    let agents = config.get_agents().map(|a| a.to_vec());
    let index =
        ShardIndex::new(dialect, agents, build_id(total, start), files);
    dir.write(INDEX_NAME, &index.to_json())?;
    dir.commit()?;
    for note in &stats.notes {
        diag!("robofilter: note: {note}");
    }
    let bad = if stats.bad.is_empty() {
        String::new()
    } else {
        format!(", {} (see above)", bad_inputs(stats.bad.len()))
    };
    let mean = total as f64 / f64::from(n);
    diag!(
        "robofilter: {}: {dialect}, {} ({} distinct robots.txt, {}){bad}, \
         {} of {} bytes in all ({:.0} per host; the largest {:.2}x the \
         mean), compiled in {:.3} s",
        output.display(),
        count(hosts as usize, "host"),
        members,
        engines.describe(),
        count(n as usize, "shard"),
        total,
        total as f64 / hosts.max(1) as f64,
        largest as f64 / mean.max(1.0),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A build id for a shard index: the time, the process and the total
/// size, hashed.
fn build_id(total: u64, start: Instant) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{now}:{}:{total}:{:?}", std::process::id(), start);
    format!("{:016x}", robofilter::host_hash64(seed.as_bytes()))
}

fn write(mut out: Output, bytes: &[u8]) -> Result<()> {
    out.write_all(bytes).with_context(|| {
        format!("cannot write output to {}", out.describe())
    })?;
    out.finish()
}

/// Groups by engine.
#[derive(Default)]
struct EngineCounts {
    groups: usize,
    dfa: usize,
    split: usize,
    direct: usize,
    allow_all: usize,
}

impl EngineCounts {
    fn of(rules: &robofilter::Rules<'_>) -> EngineCounts {
        let mut c = EngineCounts::default();
        c.add(rules);
        c
    }

    fn add(&mut self, rules: &robofilter::Rules<'_>) {
        for g in rules.groups() {
            self.groups += 1;
            match g.engine() {
                EngineKind::VerdictDfa => self.dfa += 1,
                EngineKind::SplitDfa => self.split += 1,
                EngineKind::Direct => self.direct += 1,
                EngineKind::AllowAll => self.allow_all += 1,
            }
        }
    }

    /// `3 groups (dfa 2, split-dfa 0, direct 0, allow-all 1)`.
    fn describe(&self) -> String {
        format!(
            "{} (dfa {}, split-dfa {}, direct {}, allow-all {})",
            count(self.groups, "group"),
            self.dfa,
            self.split,
            self.direct,
            self.allow_all
        )
    }
}

/// `1 bad input skipped or recorded as unreadable`.
fn bad_inputs(n: usize) -> String {
    format!("{} skipped or recorded as unreadable", count(n, "bad input"))
}

/// `1 group`, `2 groups`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
