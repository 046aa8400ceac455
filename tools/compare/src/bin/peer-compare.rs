//! peer-compare: robofilter against other Rust robots.txt libraries
//! (`texting_robots`, `robotstxt`, `fast-robots`) on real robots.txt files
//! and real URLs.
//!
//! Two workloads, both single-threaded:
//!
//! - **single-host**: one big real robots.txt (www.linkedin.com, ebay.com,
//!   www.amazon.com) and N URLs (default 5 M): the host's own real URLs,
//!   then the path and query of every real URL of the URL list moved onto
//!   that host, repeated to reach N.
//! - **mixed-host**: the real URL list in its order, each URL decided against
//!   its own host's robots.txt (a `HashMap<String, usize>` lookup per URL,
//!   the same code for every library).
//!
//! Every library builds its matcher for each file once (set-up, timed
//! apart), then decides every URL. Times are per-thread CPU time, medians of
//! `--runs` interleaved rounds. The `robotstxt` crate has no parse-once API:
//! it parses the robots.txt again for every URL, so it is run on an evenly
//! spaced sample of the URLs only (`--sample`). Agreement is counted against
//! robofilter's `google` dialect (for `robotstxt`, which ports Google's
//! library) and against both dialects for the others, whose semantics are
//! their own.
//!
//! In the same rounds the robofilter binary is timed as a user runs it
//! (`filter RULES URLS --agent A -j 1|2 --emit all -o /dev/null` on the
//! workload's URLs written to a file; process CPU time from
//! `getrusage(RUSAGE_CHILDREN)`), its verdicts checked against the
//! library's once. The peers run through `compare::peers` (src/peers.rs).
//! See README.md beside Cargo.toml.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use compare::corpus::{extract, gunzip};
use compare::cpu::{median, thread_cpu_ns};
use compare::peers::{
    self, FastRobots, FastRobotsMatcher, Peer, TextingRobots, guarded,
    path_query, quiet_panics, robotstxt_allowed,
};
use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, GroupSource,
    HostCache, MatchPath, Matcher, Outcome, RobotsTxt, Rules, UrlChecker,
    Verdict, for_each_url_line,
};

const USAGE: &str = "\
usage: peer-compare [--data DIR] [--urls N] [--runs N] [--sample N]
                    [--hosts HOST,...] [--agents A,...] [--mixed-agent A]
                    [--mixed-limit N] [--max-pass-secs S] [--examples N]
                    [--cli BIN] [--no-cli] [--no-single] [--no-mixed] [--smoke]

  --data DIR         the shared data folder (default: <repo>/../shared/data)
  --urls N           URLs per single-host workload (default 5000000)
  --runs N           timed rounds; medians are reported (default 5)
  --sample N         URLs given to the robotstxt crate, which parses the
                     robots.txt again on every call (default 20000)
  --hosts HOSTS      single-host files, latest/<host>.txt
                     (default www.linkedin.com,ebay.com,www.amazon.com)
  --agents AGENTS    single-host agents (default Googlebot,ExampleBot; an
                     agent no group names is run only once, as ExampleBot)
  --mixed-agent A    the mixed-host agent (default ExampleBot)
  --mixed-limit N    only the first N URLs of the mixed-host list
  --max-pass-secs S  a library whose pass over all URLs would take more CPU
                     time than this is timed on a prefix (default 20)
  --examples N       disagreements shown per library and workload (default 5)
  --cli BIN          the robofilter binary timed as a user runs it (`filter
                     RULES URLS -j 1|2 --emit all -o /dev/null`, process CPU
                     time) in the same rounds (default:
                     <repo>/target/release/robofilter; a missing binary is
                     an error, or with --smoke a note)
  --no-cli           leave out the CLI rows
  --no-single, --no-mixed   skip a workload
  --smoke            quick run (under a minute): data/sample/robots.txt
                     and data/sample/urls.txt, plus a small run on the shared
                     data if it is there (skipped with a reason if not)
";

/// The single-host files named in the brief (ebay.com's file is the big
/// one; www.ebay.com's has 114 rules).
const HOSTS: [&str; 3] = ["www.linkedin.com", "ebay.com", "www.amazon.com"];

/// An agent that no group names, so that the `*` group is used.
const GENERIC: &str = "ExampleBot";

struct Args {
    data: PathBuf,
    repo: PathBuf,
    urls: usize,
    runs: usize,
    sample: usize,
    hosts: Vec<String>,
    agents: Vec<String>,
    mixed_agent: String,
    mixed_limit: Option<usize>,
    max_pass_secs: f64,
    examples: usize,
    /// The robofilter binary for the CLI rows; `None`: --no-cli.
    cli: Option<PathBuf>,
    /// Whether --cli was given (a missing default binary in a smoke run is
    /// a note, a missing given one an error).
    cli_given: bool,
    single: bool,
    mixed: bool,
    smoke: bool,
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("peer-compare: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    quiet_panics();
    let command = std::env::var("PEER_COMPARE_COMMAND").unwrap_or_else(|_| {
        std::iter::once("peer-compare".to_string())
            .chain(argv.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    });
    match run(&mut args, &command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer-compare: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap_or(repo);
    let smoke = argv.iter().any(|a| a == "--smoke");
    let mut a = Args {
        data: repo.join("../shared/data"),
        repo: repo.clone(),
        urls: if smoke { 20_000 } else { 5_000_000 },
        runs: if smoke { 3 } else { 5 },
        sample: if smoke { 1_000 } else { 20_000 },
        hosts: HOSTS.iter().map(|h| h.to_string()).collect(),
        agents: vec!["Googlebot".into(), GENERIC.into()],
        mixed_agent: GENERIC.into(),
        mixed_limit: smoke.then_some(3_000),
        max_pass_secs: if smoke { 1.0 } else { 20.0 },
        examples: 5,
        cli: Some(repo.join("target/release/robofilter")),
        cli_given: false,
        single: true,
        mixed: true,
        smoke,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--smoke" => continue,
            "--no-single" => {
                a.single = false;
                continue;
            }
            "--no-mixed" => {
                a.mixed = false;
                continue;
            }
            "--no-cli" => {
                a.cli = None;
                continue;
            }
            _ => {}
        }
        let value =
            it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || {
            value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"))
        };
        let list = || value.split(',').map(str::to_string).collect();
        match flag.as_str() {
            "--data" => a.data = PathBuf::from(value),
            "--urls" => a.urls = num()?.max(1),
            "--runs" => a.runs = num()?.max(1),
            "--sample" => a.sample = num()?.max(1),
            "--hosts" => a.hosts = list(),
            "--agents" => a.agents = list(),
            "--mixed-agent" => a.mixed_agent = value.clone(),
            "--mixed-limit" => a.mixed_limit = Some(num()?.max(1)),
            "--max-pass-secs" => {
                a.max_pass_secs = value
                    .parse::<f64>()
                    .map_err(|e| format!("{flag} {value}: {e}"))?
            }
            "--examples" => a.examples = num()?,
            "--cli" => {
                a.cli = Some(PathBuf::from(value));
                a.cli_given = true;
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

fn run(args: &mut Args, command: &str) -> Result<(), String> {
    let mut report = Report::default();
    if let Some(bin) = &args.cli {
        if !bin.is_file() {
            let missing = format!(
                "{} does not exist (build it with `cargo build --release \
                 --bin robofilter` at the repository root, or give --cli \
                 BIN)",
                bin.display()
            );
            if !args.smoke || args.cli_given {
                return Err(format!("the robofilter binary {missing}"));
            }
            let why = format!("robofilter CLI rows skipped: {missing}");
            eprintln!("{why}");
            report.notes.push(why);
            args.cli = None;
        } else {
            report.notes.push(format!(
                "robofilter CLI rows: {} (modified {})",
                bin.display(),
                modified(bin)
            ));
        }
    }
    let args = &*args;
    let load_before = load_average();
    if args.smoke {
        smoke_sample(args, &mut report)?;
    }
    let archive = args.data.join("robots-latest.tar.gz");
    let url_list = args.data.join("urls-joinable.txt.gz");
    let missing =
        [&archive, &url_list].into_iter().find(|f| !f.is_file()).cloned();
    match missing {
        Some(f) if args.smoke => report.notes.push(format!(
            "shared data skipped: {} does not exist (the shared data set \
             is not here; see --data)",
            f.display()
        )),
        Some(f) => {
            return Err(format!(
                "{} does not exist (see --data)",
                f.display()
            ));
        }
        None => shared(args, &archive, &url_list, &mut report)?,
    }
    report.notes.push(format!(
        "load average (1/5/15 min, /proc/loadavg): {load_before} before, {} \
         after",
        load_average()
    ));
    report.print(args, command);
    Ok(())
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The smoke run's part on the repository's own sample files.
fn smoke_sample(args: &Args, report: &mut Report) -> Result<(), String> {
    let dir = args.repo.join("data/sample");
    let robots = dir.join("robots.txt");
    let text = read(&dir.join("urls.txt"))?;
    let text = String::from_utf8_lossy(&text).into_owned();
    let urls: Vec<&str> = text.lines().filter(|l| is_url(l)).collect();
    let host = "www.example.com";
    let file = RobotsFile::read("sample/robots.txt", &robots)?;
    if args.single {
        for agent in single_agents(&file, &args.agents) {
            let w = single_host(file.clone(), host, &agent, &urls, args.urls);
            compare(args, &w, report)?;
        }
    }
    if args.mixed {
        let resolve =
            |h: &str| (bare(h) == bare(host)).then(|| robots.clone());
        let w = mixed_host(args, &urls, resolve, "sample")?;
        compare(args, &w, report)?;
    }
    Ok(())
}

/// The workloads on ../shared/data.
fn shared(
    args: &Args,
    archive: &Path,
    url_list: &Path,
    report: &mut Report,
) -> Result<(), String> {
    let dir = extract(archive)?;
    eprintln!("reading {} ...", url_list.display());
    let text = gunzip(url_list)?;
    let text = String::from_utf8(text)
        .map_err(|_| format!("{}: not UTF-8", url_list.display()))?;
    let urls: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    eprintln!("{} URLs", urls.len());
    if args.single {
        for host in &args.hosts {
            let path = dir.join(format!("{host}.txt"));
            if !path.is_file() {
                report.notes.push(format!(
                    "single-host {host}: no file latest/{host}.txt, skipped"
                ));
                continue;
            }
            let file = RobotsFile::read(&format!("latest/{host}.txt"), &path)?;
            for agent in single_agents(&file, &args.agents) {
                let w =
                    single_host(file.clone(), host, &agent, &urls, args.urls);
                compare(args, &w, report)?;
            }
        }
    }
    if args.mixed {
        let resolve = |h: &str| {
            let mut names = vec![h.to_string(), format!("www.{h}")];
            names.extend(h.strip_prefix("www.").map(str::to_string));
            names
                .into_iter()
                .map(|n| dir.join(format!("{n}.txt")))
                .find(|p| p.is_file())
        };
        let w = mixed_host(args, &urls, resolve, "latest")?;
        compare(args, &w, report)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Input data

/// One robots.txt: its bytes, and the same as text for the peers that take
/// `&str` ([`peers::text`]: invalid UTF-8 replaced by U+FFFD).
#[derive(Clone)]
struct RobotsFile {
    name: String,
    /// Where it was read from (the CLI rows compile it from there).
    path: PathBuf,
    bytes: Vec<u8>,
    text: String,
}

impl RobotsFile {
    fn read(name: &str, path: &Path) -> Result<RobotsFile, String> {
        let bytes = read(path)?;
        let text = peers::text(&bytes).into_owned();
        Ok(RobotsFile {
            name: name.to_string(),
            path: path.to_path_buf(),
            bytes,
            text,
        })
    }
}

/// URLs to decide and the robots.txt files they are decided against.
struct Workload {
    name: String,
    agent: String,
    files: Vec<RobotsFile>,
    /// The URLs, each followed by `\n`.
    buf: String,
    /// Host to file index; `None`: every URL uses `files[0]`.
    hosts: Option<HashMap<String, usize>>,
    /// The first `distinct` URLs are the ones verdicts are compared on (the
    /// rest repeat them).
    distinct: usize,
    notes: Vec<String>,
}

impl Workload {
    fn urls(&self) -> Vec<&str> {
        self.buf.lines().collect()
    }
}

/// The agents to run on one file: a named agent that no group names gets
/// the `*` group, like the generic agent, so it is run once (as GENERIC).
fn single_agents(file: &RobotsFile, agents: &[String]) -> Vec<String> {
    let parsed = RobotsTxt::parse(&file.bytes, Dialect::Google);
    let mut out: Vec<String> = Vec::new();
    for agent in agents {
        let named =
            parsed.select(&[agent.as_str()]).source() == GroupSource::Specific;
        let agent = if named { agent.clone() } else { GENERIC.to_string() };
        if !out.contains(&agent) {
            out.push(agent);
        }
    }
    out
}

/// The single-host workload: the host's own real URLs, then every URL's
/// path and query on `https://<host>`, repeated to reach `n`.
fn single_host(
    file: RobotsFile,
    host: &str,
    agent: &str,
    urls: &[&str],
    n: usize,
) -> Workload {
    let parsed = RobotsTxt::parse(&file.bytes, Dialect::Google);
    let selection = parsed.select(&[agent]);
    let group = match selection.source() {
        GroupSource::Specific => "own group",
        GroupSource::Global => "* group",
        GroupSource::None => "no group",
    };
    let own: Vec<&str> = urls
        .iter()
        .copied()
        .filter(|u| host_key(u).is_some_and(|h| bare(&h) == bare(host)))
        .collect();
    let mut cycle: Vec<String> = own.iter().map(|u| u.to_string()).collect();
    cycle.extend(urls.iter().map(|u| {
        let path = MatchPath::from_url(u.as_bytes()).to_vec();
        format!("https://{host}{}", String::from_utf8_lossy(&path))
    }));
    let mut buf = String::new();
    for u in cycle.iter().cycle().take(n) {
        buf.push_str(u);
        buf.push('\n');
    }
    Workload {
        name: format!(
            "single-host {host}, {agent} ({group}, {} rules)",
            selection.rules().len()
        ),
        agent: agent.to_string(),
        notes: vec![format!(
            "{} URLs: the host's {} own real URLs, then the path+query of \
             all {} real URLs on https://{host}, cycled; verdicts compared \
             on the first {} (one cycle)",
            thousands(n),
            thousands(own.len()),
            thousands(urls.len()),
            thousands(cycle.len().min(n))
        )],
        files: vec![file],
        buf,
        hosts: None,
        distinct: cycle.len().min(n),
    }
}

/// The mixed-host workload: the URLs in their order, each with its own
/// host's file; URLs whose host has no file are dropped (and counted).
fn mixed_host(
    args: &Args,
    urls: &[&str],
    resolve: impl Fn(&str) -> Option<PathBuf>,
    label: &str,
) -> Result<Workload, String> {
    let urls = &urls[..args.mixed_limit.unwrap_or(usize::MAX).min(urls.len())];
    let mut hosts: HashMap<String, Option<usize>> = HashMap::new();
    let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
    let mut files = Vec::new();
    let mut buf = String::new();
    let (mut kept, mut no_host, mut no_file) = (0, 0, 0);
    for &u in urls {
        let Some(key) = host_key(u) else {
            no_host += 1;
            continue;
        };
        let idx = match hosts.get(key.as_ref()) {
            Some(&idx) => idx,
            None => {
                let idx = match resolve(&key) {
                    Some(path) => match by_path.get(&path) {
                        Some(&i) => Some(i),
                        None => {
                            let name = format!(
                                "{label}/{}",
                                path.file_name()
                                    .unwrap_or_default()
                                    .to_string_lossy()
                            );
                            files.push(RobotsFile::read(&name, &path)?);
                            by_path.insert(path, files.len() - 1);
                            Some(files.len() - 1)
                        }
                    },
                    None => None,
                };
                hosts.insert(key.into_owned(), idx);
                idx
            }
        };
        if idx.is_some() {
            buf.push_str(u);
            buf.push('\n');
            kept += 1;
        } else {
            no_file += 1;
        }
    }
    let map: HashMap<String, usize> =
        hosts.into_iter().filter_map(|(h, i)| Some((h, i?))).collect();
    Ok(Workload {
        name: format!("mixed-host ({label}), {}", args.mixed_agent),
        agent: args.mixed_agent.clone(),
        notes: vec![format!(
            "{} URLs of {} in list order, {} hosts, {} robots.txt files; \
             skipped: {no_file} URLs whose host has no file, {no_host} \
             without a host",
            thousands(kept),
            thousands(urls.len()),
            thousands(map.len()),
            thousands(files.len())
        )],
        files,
        distinct: kept,
        buf,
        hosts: Some(map),
    })
}

/// Whether a line of the sample is a URL (as the robofilter CLI judges it).
fn is_url(line: &str) -> bool {
    !line.is_empty()
        && !line.bytes().any(|b| b <= b' ' || b == 0x7f)
        && line.find("://").is_some_and(|i| i > 0)
}

/// The host of a URL as the mixed-host lookup key: lower-case, without
/// userinfo or port. The same function serves every library.
fn host_key(url: &str) -> Option<Cow<'_, str>> {
    let rest = &url[url.find("://")? + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut host = &rest[..end];
    if let Some(at) = host.rfind('@') {
        host = &host[at + 1..];
    }
    if let Some(colon) = host.rfind(':')
        && !host.ends_with(']')
    {
        host = &host[..colon];
    }
    Some(if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    })
}

fn bare(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// The libraries

/// The libraries, in table order.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
enum Lib {
    RfGoogle,
    RfRfc,
    Texting,
    Fast,
    Robotstxt,
}

const LIBS: [Lib; 5] =
    [Lib::RfGoogle, Lib::RfRfc, Lib::Texting, Lib::Fast, Lib::Robotstxt];

impl Lib {
    fn label(self) -> &'static str {
        match self {
            Lib::RfGoogle => "robofilter (google)",
            Lib::RfRfc => "robofilter (rfc9309)",
            Lib::Texting => Peer::TextingRobots.label(),
            Lib::Fast => Peer::FastRobots.label(),
            Lib::Robotstxt => Peer::Robotstxt.label(),
        }
    }

    fn is_robofilter(self) -> bool {
        matches!(self, Lib::RfGoogle | Lib::RfRfc)
    }
}

/// Every library's matcher for every file of a workload. `None`: the
/// library failed on the file (error or panic) and allows every URL.
struct Prepared<'a> {
    google: Vec<Option<Matcher<'a>>>,
    rfc: Vec<Option<Matcher<'a>>>,
    texting: Vec<Option<TextingRobots>>,
    fast: Vec<Option<FastRobotsMatcher<'a>>>,
    bodies: Vec<&'a str>,
    agent: &'a str,
}

/// One library's per-URL decision: `decide(file index, url)` is whether the
/// URL is allowed; `None` if the library panicked.
trait Decide {
    fn decide(&mut self, file: usize, url: &str) -> Option<bool>;
}

struct RfDecide<'p, 'a>(&'p [Option<Matcher<'a>>]);

impl Decide for RfDecide<'_, '_> {
    #[inline]
    fn decide(&mut self, file: usize, url: &str) -> Option<bool> {
        Some(
            self.0[file]
                .as_ref()
                .is_none_or(|m| m.decide(url.as_bytes()) == Verdict::Allow),
        )
    }
}

struct TextingDecide<'p>(&'p [Option<TextingRobots>]);

impl Decide for TextingDecide<'_> {
    #[inline]
    fn decide(&mut self, file: usize, url: &str) -> Option<bool> {
        Some(self.0[file].as_ref().is_none_or(|r| r.allowed(url)))
    }
}

struct FastDecide<'p, 'a>(&'p [Option<FastRobotsMatcher<'a>>], &'a str);

impl Decide for FastDecide<'_, '_> {
    #[inline]
    fn decide(&mut self, file: usize, url: &str) -> Option<bool> {
        Some(self.0[file].as_ref().is_none_or(|m| m.allowed(self.1, url)))
    }
}

/// Parses the file again on every call (the crate has no other API).
struct RobotstxtDecide<'p, 'a>(&'p [&'a str], &'a str);

impl Decide for RobotstxtDecide<'_, '_> {
    #[inline]
    fn decide(&mut self, file: usize, url: &str) -> Option<bool> {
        robotstxt_allowed(self.0[file], self.1, url)
    }
}

/// Runs `$body` with `$d` bound to the concrete `Decide` of `$lib`, so that
/// each library's loop is compiled for it alone.
macro_rules! with_decide {
    ($lib:expr, $p:expr, |$d:ident| $body:expr) => {
        match $lib {
            Lib::RfGoogle => {
                let mut $d = RfDecide(&$p.google);
                $body
            }
            Lib::RfRfc => {
                let mut $d = RfDecide(&$p.rfc);
                $body
            }
            Lib::Texting => {
                let mut $d = TextingDecide(&$p.texting);
                $body
            }
            Lib::Fast => {
                let mut $d = FastDecide(&$p.fast, $p.agent);
                $body
            }
            Lib::Robotstxt => {
                let mut $d = RobotstxtDecide(&$p.bodies, $p.agent);
                $body
            }
        }
    };
}

/// The file index of a URL: the same host lookup for every library.
#[derive(Clone, Copy)]
struct Lookup<'w>(Option<&'w HashMap<String, usize>>);

impl Lookup<'_> {
    #[inline]
    fn file(&self, url: &str) -> Option<usize> {
        match self.0 {
            None => Some(0),
            Some(map) => map.get(host_key(url)?.as_ref()).copied(),
        }
    }
}

/// The timed loop: every URL looked up and decided; returns the number
/// allowed (so that nothing is optimised away).
#[inline(never)]
fn pass(urls: &[&str], lookup: Lookup, d: &mut impl Decide) -> usize {
    let mut allowed = 0;
    for &url in urls {
        if let Some(file) = lookup.file(url) {
            allowed += usize::from(d.decide(file, url) == Some(true));
        }
    }
    allowed
}

/// Verdicts of every URL: 1 allow, 0 disallow, 2 panic; the file index of a
/// panic is recorded so that the file can be taken out of the timed runs.
fn verdicts(
    urls: &[&str],
    lookup: Lookup,
    d: &mut impl Decide,
    panicked: &mut Vec<usize>,
) -> Vec<u8> {
    urls.iter()
        .map(|&url| {
            let file = lookup.file(url).expect("workload URLs have a file");
            match guarded(|| d.decide(file, url)).flatten() {
                Some(allowed) => u8::from(allowed),
                None => {
                    panicked.push(file);
                    2
                }
            }
        })
        .collect()
}

/// Set-up of one library on all files of a workload.
#[derive(Default, Clone)]
struct Setup {
    /// Thread CPU time per file, all stages added up.
    per_file: Vec<f64>,
    failed: Vec<(String, String)>,
    /// robofilter only: how many files compiled the agent's group to each
    /// engine.
    engines: BTreeMap<String, usize>,
}

impl Setup {
    /// Runs one set-up stage on every file, timing each; a failure (error
    /// or panic) is recorded and gives `None`.
    fn each<'f, T>(
        &mut self,
        files: &'f [RobotsFile],
        mut f: impl FnMut(usize, &'f RobotsFile) -> Result<T, String>,
    ) -> Vec<Option<T>> {
        self.per_file.resize(files.len(), 0.0);
        let mut out = Vec::with_capacity(files.len());
        for (i, file) in files.iter().enumerate() {
            let t = thread_cpu_ns();
            let r = guarded(|| f(i, file))
                .unwrap_or_else(|| Err("panicked".into()));
            self.per_file[i] += thread_cpu_ns() - t;
            out.push(
                r.map_err(|e| self.failed.push((file.name.clone(), e))).ok(),
            );
        }
        out
    }

    fn total_ns(&self) -> f64 {
        self.per_file.iter().sum()
    }

    /// The file that took longest, and its time in ns.
    fn slowest(&self) -> Option<(usize, f64)> {
        self.per_file
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Compiles a file into an aligned rules file.
fn compile(
    file: &RobotsFile,
    dialect: Dialect,
    agent: &str,
) -> Result<AlignedBytes, String> {
    let config = Config::new().dialect(dialect).agent(agent);
    let bytes = Compiler::with_config(config)
        .compile(&file.bytes)
        .map_err(|e| e.to_string())?;
    Ok(AlignedBytes::from(&bytes[..]))
}

/// robofilter's set-up in one dialect: compile, load, look up the agent.
/// Also counts the engines the agent's group was compiled to (in
/// `s.engines`).
fn robofilter_setup<'a>(
    files: &[RobotsFile],
    dialect: Dialect,
    agent: &str,
    s: &mut Setup,
    store: &'a mut (Vec<Option<AlignedBytes>>, Vec<Option<Rules<'a>>>),
) -> Vec<Option<Matcher<'a>>> {
    store.0 = s.each(files, |_, f| compile(f, dialect, agent));
    let bytes = &store.0;
    store.1 = s
        .each(files, |i, _| match &bytes[i] {
            Some(b) => Rules::from_bytes(b.as_bytes())
                .map(Some)
                .map_err(|e| e.to_string()),
            None => Ok(None),
        })
        .into_iter()
        .map(Option::flatten)
        .collect();
    let rules = &store.1;
    for r in rules.iter().flatten() {
        *s.engines.entry(engine_of(r, agent)).or_default() += 1;
    }
    s.each(files, |i, _| match &rules[i] {
        Some(r) => r.matcher(agent).map(Some).map_err(|e| e.to_string()),
        None => Ok(None),
    })
    .into_iter()
    .map(Option::flatten)
    .collect()
}

/// The engine of the group that decides for `agent`, as `inspect` names it.
fn engine_of(rules: &Rules, agent: &str) -> String {
    let group = rules
        .agents()
        .find(|a| a.name().eq_ignore_ascii_case(agent.as_bytes()))
        .or_else(|| rules.fallback())
        .and_then(|a| a.group());
    let Some(info) = group.and_then(|g| rules.groups().nth(g)) else {
        return "no group".into();
    };
    match info.engine() {
        EngineKind::SplitDfa => format!("split-dfa {} parts", info.part_len()),
        e => e.as_str().to_string(),
    }
}

// ---------------------------------------------------------------------------
// Comparison

/// Runs one workload: set-up, verdicts, agreement, timed rounds.
fn compare(
    args: &Args,
    w: &Workload,
    report: &mut Report,
) -> Result<(), String> {
    let urls = w.urls();
    eprintln!("== {}: {} files, {} URLs", w.name, w.files.len(), urls.len());
    let lookup = Lookup(w.hosts.as_ref());
    let agent = w.agent.as_str();
    let mut setup: HashMap<Lib, Setup> = HashMap::new();

    // Set-up: robofilter compiles and loads, in both dialects.
    let (mut google_store, mut rfc_store) = Default::default();
    let s = setup.entry(Lib::RfGoogle).or_default();
    let google = robofilter_setup(
        &w.files,
        Dialect::Google,
        agent,
        s,
        &mut google_store,
    );
    let s = setup.entry(Lib::RfRfc).or_default();
    let rfc =
        robofilter_setup(&w.files, Dialect::Rfc9309, agent, s, &mut rfc_store);

    // Set-up: the peers (robotstxt has none).
    let s = setup.entry(Lib::Texting).or_default();
    let texting = s.each(&w.files, |_, f| TextingRobots::new(agent, &f.bytes));
    let s = setup.entry(Lib::Fast).or_default();
    let fast_parsed = s.each(&w.files, |_, f| Ok(FastRobots::parse(&f.text)));
    let fast = s
        .each(&w.files, |i, _| {
            Ok(fast_parsed[i].as_ref().map(|r| r.matcher()))
        })
        .into_iter()
        .map(Option::flatten)
        .collect();
    setup.entry(Lib::Robotstxt).or_default();
    let mut prepared = Prepared {
        google,
        rfc,
        texting,
        fast,
        bodies: w.files.iter().map(|f| f.text.as_str()).collect(),
        agent,
    };

    // Verdicts on the distinct URLs (robotstxt: on an even sample).
    let distinct = &urls[..w.distinct];
    let sample_idx: Vec<usize> = if distinct.len() <= args.sample {
        (0..distinct.len()).collect()
    } else {
        (0..args.sample).map(|k| k * distinct.len() / args.sample).collect()
    };
    let sample: Vec<&str> = sample_idx.iter().map(|&i| distinct[i]).collect();
    let mut notes = w.notes.clone();
    let mut v: HashMap<Lib, Vec<u8>> = HashMap::new();
    let mut per_url_ns: HashMap<Lib, f64> = HashMap::new();
    for lib in LIBS {
        let input = if lib == Lib::Robotstxt { &sample[..] } else { distinct };
        eprintln!("  verdicts: {} on {} URLs ...", lib.label(), input.len());
        let mut panicked = Vec::new();
        let t = thread_cpu_ns();
        let got = with_decide!(lib, prepared, |d| verdicts(
            input,
            lookup,
            &mut d,
            &mut panicked
        ));
        per_url_ns
            .insert(lib, (thread_cpu_ns() - t) / input.len().max(1) as f64);
        if !panicked.is_empty() {
            notes.push(format!(
                "{}: {} URLs panicked (counted as disagreements)",
                lib.label(),
                panicked.len()
            ));
        }
        // A file that made a library panic is allowed-all in the timed runs.
        panicked.sort_unstable();
        panicked.dedup();
        for file in panicked {
            match lib {
                Lib::Texting => prepared.texting[file] = None,
                Lib::Fast => prepared.fast[file] = None,
                _ => {}
            }
            let name = w.files[file].name.clone();
            let s = setup.get_mut(&lib).expect("set");
            s.failed.push((name, "panicked while deciding".into()));
        }
        v.insert(lib, got);
    }
    let (mut rows, examples) =
        agreement(args, w, &v, distinct, &sample_idx, lookup);

    // Timed rounds. A slow library gets a prefix of the URLs.
    let mut inputs: HashMap<Lib, &[&str]> = HashMap::new();
    for lib in LIBS {
        let all = if lib == Lib::Robotstxt { &sample[..] } else { &urls[..] };
        let est = per_url_ns[&lib] * all.len() as f64 / 1e9;
        let n = if est > args.max_pass_secs {
            ((args.max_pass_secs / est * all.len() as f64) as usize)
                .max(all.len().min(10_000))
        } else {
            all.len()
        };
        inputs.insert(lib, &all[..n]);
    }
    // The CLI: inputs on disk, its verdicts against the library's, then
    // timed in the same rounds.
    let cli = match &args.cli {
        Some(bin) => {
            let cli = cli_inputs(bin, w)?;
            notes.extend(cli.notes.iter().cloned());
            eprintln!("  verdicts: robofilter CLI on {} URLs ...", w.distinct);
            let (agreement, examples) =
                cli_agreement(&cli, agent, &v[&Lib::RfGoogle], distinct)?;
            for e in examples {
                notes.push(format!("CLI differs from the library: {e}"));
            }
            Some((cli, agreement))
        }
        None => None,
    };
    let mut cli_rounds = CliRounds::default();
    // One file: the library's batch path too (google, in the same rounds).
    let batch_bytes = match (&w.hosts, &w.files[..]) {
        (None, [file]) => compile(file, Dialect::Google, agent).ok(),
        _ => None,
    };
    let batch_rules = batch_bytes
        .as_ref()
        .map(|b| Rules::from_bytes(b.as_bytes()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let batch = batch_rules
        .as_ref()
        .map(|r| UrlChecker::rules(r, &[agent]))
        .transpose()
        .map_err(|e| e.to_string())?;
    let Timed { medians: times, floor, batch: batch_rate } = timed_rounds(
        args,
        w,
        &prepared,
        &inputs,
        lookup,
        cli.as_ref().map(|(c, _)| (c, &mut cli_rounds)),
        batch.as_ref(),
    )?;
    let cli = cli.map(|(c, agreement)| {
        let (r, note) = cli_rounds.report(&c, agreement);
        notes.push(note);
        r
    });
    for row in &mut rows {
        let n = inputs[&row.lib].len();
        row.rate = n as f64 / (times[&row.lib] / 1e9);
        let all = if row.lib == Lib::Robotstxt { &sample } else { &urls };
        row.timed_on =
            (n < all.len() || row.lib == Lib::Robotstxt).then_some(n);
    }
    let reference: HashMap<Lib, f64> = rows
        .iter()
        .filter(|r| r.lib.is_robofilter())
        .map(|r| (r.lib, r.rate))
        .collect();
    for row in &mut rows {
        if !row.lib.is_robofilter() {
            let rf = row.reference.expect("set");
            row.ratio = Some((reference[&rf] / row.rate, rf));
        }
    }
    if let Some(rate) = batch_rate {
        let fast = rows.iter().find(|r| r.lib == Lib::Fast).map(|r| r.rate);
        notes.push(format!(
            "robofilter (google) batch path (`for_each_url_line` over the \
             workload's lines, `UrlChecker::decide_url`, same rounds; it \
             allows what the per-URL path allows, but for the lines that \
             are not URLs, which it does not decide): {} URLs/CPU-s, {} \
             fast-robots, {} the per-URL path",
            per_second(rate),
            fast.map_or("-".into(), |f| report::times(rate / f)),
            report::times(rate / reference[&Lib::RfGoogle]),
        ));
    }

    for lib in [Lib::RfGoogle, Lib::RfRfc] {
        let engines: Vec<String> = setup[&lib]
            .engines
            .iter()
            .map(|(e, n)| format!("{e} {n}"))
            .collect();
        notes.push(format!(
            "{} engine of {agent}'s group, files per engine: {}",
            lib.label(),
            engines.join(", ")
        ));
    }
    let not_utf8 = w
        .files
        .iter()
        .filter(|f| std::str::from_utf8(&f.bytes).is_err())
        .count();
    if not_utf8 > 0 {
        notes.push(format!(
            "{not_utf8} files are not UTF-8: fast-robots and robotstxt get \
             them with U+FFFD replacements (they take &str)"
        ));
    }
    report.workloads.push(WorkloadReport {
        name: w.name.clone(),
        rows,
        floor,
        setup: LIBS.iter().map(|l| (*l, setup[l].clone())).collect(),
        files: w.files.len(),
        urls: urls.len(),
        file_names: w.files.iter().map(|f| f.name.clone()).collect(),
        notes,
        examples,
        cli,
    });
    Ok(())
}

/// Interleaved timed rounds: every library's pass over its input, the
/// newline-scan floor over the workload's bytes and, with `cli`, the
/// robofilter CLI's runs (recorded there). Returns the median CPU ns per
/// library and the floor's lines/s.
fn timed_rounds(
    args: &Args,
    w: &Workload,
    prepared: &Prepared,
    inputs: &HashMap<Lib, &[&str]>,
    lookup: Lookup,
    mut cli: Option<(&CliInputs, &mut CliRounds)>,
    batch: Option<&UrlChecker>,
) -> Result<Timed, String> {
    let mut times: HashMap<Lib, Vec<f64>> = HashMap::new();
    let mut floor = Vec::new();
    let mut batches = Vec::new();
    let mut sink = 0usize;
    for round in 0..args.runs {
        eprintln!("  round {}/{} ...", round + 1, args.runs);
        let t = thread_cpu_ns();
        sink += memchr::memchr_iter(b'\n', w.buf.as_bytes()).count();
        floor.push(thread_cpu_ns() - t);
        let mut google = None;
        for lib in LIBS {
            let input = inputs[&lib];
            let t = thread_cpu_ns();
            let allowed =
                with_decide!(lib, prepared, |d| pass(input, lookup, &mut d));
            times.entry(lib).or_default().push(thread_cpu_ns() - t);
            sink += allowed;
            if lib == Lib::RfGoogle && input.len() == w.urls().len() {
                google = Some(allowed);
            }
        }
        if let Some(checker) = batch {
            let t = thread_cpu_ns();
            let (allowed, invalid) = batch_pass(checker, w.buf.as_bytes());
            batches.push(thread_cpu_ns() - t);
            // A fast wrong answer fails: the batch path allows what the
            // per-URL path allows, but for the lines it finds are not
            // URLs (a control octet, a trailing space), which the
            // per-URL path decides by their path all the same.
            if google.is_some_and(|g| g < allowed || g > allowed + invalid) {
                return Err(format!(
                    "{}: the batch path allowed {allowed} URLs ({invalid} \
                     lines not URLs), the per-URL path {google:?}",
                    w.name
                ));
            }
        }
        if let Some((inputs, rounds)) = &mut cli {
            rounds.round(inputs, &w.agent, round)?;
        }
    }
    std::hint::black_box(sink);
    let lines = memchr::memchr_iter(b'\n', w.buf.as_bytes()).count();
    let medians =
        times.into_iter().map(|(lib, mut t)| (lib, median(&mut t))).collect();
    let rate = |ns: f64| lines as f64 / (ns / 1e9);
    let batch = (!batches.is_empty()).then(|| rate(median(&mut batches)));
    Ok(Timed { medians, floor: rate(median(&mut floor)), batch })
}

/// What [`timed_rounds`] measured: each library's median CPU ns, the
/// newline scan's lines/s and, for one file, the batch path's URLs/s.
struct Timed {
    medians: HashMap<Lib, f64>,
    floor: f64,
    batch: Option<f64>,
}

/// The library's batch path over the workload's lines, as `filter` and
/// the wheel decide them: [`for_each_url_line`] over the whole buffer
/// (one vector pass per line, the walk inlined into it), each URL by
/// `checker`. Returns the number allowed and the number of lines that
/// are not URLs.
#[inline(never)]
fn batch_pass(checker: &UrlChecker, buf: &[u8]) -> (usize, usize) {
    let mut cache = HostCache::new();
    let mut each = [Outcome::Invalid];
    let (mut allowed, mut invalid) = (0, 0);
    let _ = for_each_url_line(buf, |_, _, url| {
        match url {
            Some((url, path)) => {
                if checker.decide_url(url, path, &mut cache, &mut each).is_ok()
                {
                    allowed += usize::from(each[0] == Outcome::Allow);
                }
            }
            None => invalid += 1,
        }
        ControlFlow::<()>::Continue(())
    });
    (allowed, invalid)
}

/// The table rows (without rates) and the disagreements of every library
/// with robofilter. `v` holds each library's verdicts: on `distinct`, or
/// for robotstxt on `distinct[sample_idx]`.
fn agreement(
    args: &Args,
    w: &Workload,
    v: &HashMap<Lib, Vec<u8>>,
    distinct: &[&str],
    sample_idx: &[usize],
    lookup: Lookup,
) -> (Vec<Row>, Vec<Examples>) {
    let (g, r) = (&v[&Lib::RfGoogle], &v[&Lib::RfRfc]);
    let agree = |peer: &[u8], rf: &[u8], idx: Option<&[usize]>| -> usize {
        match idx {
            None => peer.iter().zip(rf).filter(|(a, b)| a == b).count(),
            Some(idx) => {
                peer.iter().zip(idx).filter(|&(a, &i)| *a == rf[i]).count()
            }
        }
    };
    let dialect =
        |lib| if lib == Lib::RfGoogle { "google" } else { "rfc9309" };
    let mut rows = Vec::new();
    let mut examples = Vec::new();
    for lib in LIBS {
        let mut row = Row {
            workload: w.name.clone(),
            lib,
            rate: 0.0,
            ratio: None,
            reference: Some(lib),
            agreement: String::new(),
            timed_on: None,
        };
        if lib.is_robofilter() {
            row.agreement = if lib == Lib::RfGoogle {
                "reference".into()
            } else {
                format!("{} with google", percent(agree(g, r, None), g.len()))
            };
            rows.push(row);
            continue;
        }
        let mine = &v[&lib];
        let idx = (lib == Lib::Robotstxt).then_some(sample_idx);
        let (ag, ar) = (agree(mine, g, idx), agree(mine, r, idx));
        let closer = if lib == Lib::Robotstxt || ag >= ar {
            Lib::RfGoogle
        } else {
            Lib::RfRfc
        };
        let rf = if closer == Lib::RfGoogle { g } else { r };
        row.reference = Some(closer);
        let mut ex = Examples {
            workload: w.name.clone(),
            lib,
            reference: closer,
            compared: mine.len(),
            differ: 0,
            kinds: BTreeMap::new(),
            shown: Vec::new(),
        };
        let mut kinds = Kinds::new(&w.files);
        for (k, &peer) in mine.iter().enumerate() {
            let i = idx.map_or(k, |idx| idx[k]);
            if peer == rf[i] {
                continue;
            }
            ex.differ += 1;
            let url = distinct[i];
            let file = lookup.file(url).expect("workload URLs have a file");
            let kind = if peer == 2 {
                "panic".into()
            } else if lib == Lib::Robotstxt {
                kinds.classify(file, url)
            } else {
                peer_hint(url).into()
            };
            *ex.kinds.entry(kind.clone()).or_default() += 1;
            let name = &w.files[file].name;
            let seen = ex.shown.iter().any(|e| {
                e.url == url || (w.files.len() > 1 && e.file == *name)
            });
            if ex.shown.len() < args.examples && !seen {
                ex.shown.push(Example {
                    file: name.clone(),
                    url: url.to_string(),
                    robofilter: rf[i],
                    peer,
                    kind,
                });
            }
        }
        row.agreement = if lib == Lib::Robotstxt {
            let unexplained =
                ex.kinds.get("unexplained").copied().unwrap_or(0);
            format!(
                "google {} ({} differ, {unexplained} unexplained)",
                percent(ag, mine.len()),
                ex.differ
            )
        } else {
            format!(
                "google {}, rfc9309 {} ({} differ from {})",
                percent(ag, mine.len()),
                percent(ar, mine.len()),
                ex.differ,
                dialect(closer)
            )
        };
        rows.push(row);
        examples.push(ex);
    }
    (rows, examples)
}

/// A rough reason for a disagreement with texting_robots or fast-robots,
/// from the URL alone: the RFC's implicit allow of `/robots.txt` (google's
/// library has none; robofilter's rfc9309 dialect allows it with any query,
/// the peers only without one), or percent-encoding (the libraries
/// normalise differently); else `other`.
fn peer_hint(url: &str) -> &'static str {
    let path = path_query(url);
    let rest = path.strip_prefix("/robots.txt");
    if rest.is_some_and(|r| r.is_empty() || r.starts_with('?')) {
        "/robots.txt"
    } else if path.contains('%') || !path.is_ascii() {
        "percent-encoding"
    } else {
        "other"
    }
}

/// Classifies disagreements between robofilter (google) and the robotstxt
/// crate by the known divergences of
/// crates/robofilter/tests/differential.rs (a port of its `applies` checks;
/// "unexplained" if none applies).
struct Kinds<'f> {
    files: &'f [RobotsFile],
    per_file: HashMap<usize, Vec<&'static str>>,
}

impl<'f> Kinds<'f> {
    fn new(files: &'f [RobotsFile]) -> Self {
        Kinds { files, per_file: HashMap::new() }
    }

    fn classify(&mut self, file: usize, url: &str) -> String {
        let robots = &self.files[file].text;
        let mut kinds = self
            .per_file
            .entry(file)
            .or_insert_with(|| divergence::file_kinds(robots))
            .clone();
        kinds.extend(divergence::url_kinds(robots, url));
        if kinds.is_empty() { "unexplained".into() } else { kinds.join("+") }
    }
}

#[path = "peer-compare/cli.rs"]
mod cli;
#[path = "peer-compare/divergence.rs"]
mod divergence;
#[path = "peer-compare/report.rs"]
mod report;
use cli::*;
use report::*;
