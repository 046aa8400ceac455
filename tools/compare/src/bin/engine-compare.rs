//! engine-compare: robofilter's compiled automata against a regex-automata
//! 0.4 dense DFA, on real robots.txt files.
//!
//! robofilter's engine is whatever `Compiler::compile` chose for the group:
//! one verdict DFA, several score DFAs combined by precedence when one DFA
//! exceeds the construction budget (split), or the direct matcher when even
//! the split fails. Every engine is checked and timed the same way.
//!
//! For each chosen file and agent, both engines are built from the same
//! merged group (google dialect), checked to give identical verdicts on every
//! URL used, and timed over the same newline-separated URL buffer in this
//! process. Times are per-thread CPU time (the machine is shared), medians
//! of several interleaved runs. See crates/robofilter/benches/README.md
//! for how to read the table.
//!
//! The regex-automata DFA follows ENGINE-NOTES.md ("Correctness of the
//! approaches", "Pitfalls"): one pattern per non-empty rule, plus the
//! `<dir>/$` alias of every `Allow: …/index.htm…` rule, ordered by
//! precedence (longer normalised pattern first, Allow first on ties), every
//! literal octet as `\xHH`, `*` as `.*` under `(?s-u)`, a final `$` as the
//! end anchor; leftmost-first, anchored start only, searched over exactly
//! the path bytes. The matched pattern's kind is the verdict; no match is
//! Allow.
//!
//! Its construction has no cancellation and size limits bound memory, not
//! time (pitfall 9), so it runs in a child process (this binary with
//! `--build-ra`) that is killed after `--timeout` seconds; the child writes
//! the serialized DFA, which the parent loads without copying.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use compare::corpus::{extract, gunzip};
use compare::cpu::{median, thread_cpu_ns};
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, MatchPath, RobotsTxt,
    RuleKind, Rules, Verdict,
};

const USAGE: &str = "\
usage: engine-compare [--data DIR] [--files HOST,...] [--extra HOST,...]
                      [--timeout SECS] [--size-limit MIB] [--runs N]
                      [--synthetic N] [--max-urls N]

  --data DIR        the shared data folder (default: <repo>/../shared/data)
  --files HOSTS     compare exactly these files (latest/<host>.txt)
  --extra HOSTS     add these files to the automatic choice
  --timeout SECS    give up on a regex-automata build after this (default 60)
  --size-limit MIB  regex-automata DFA and determinization limit (default 1024)
  --runs N          timed runs per engine; the median is reported (default 7)
  --synthetic N     synthetic URLs when a host has < 1000 real ones (20000)
  --max-urls N      at most this many real URLs per host (default 100000)
  --passes N        no timing: run N passes of each engine in the functions
                    pass_floor, pass_robofilter and pass_regex_automata, for
                    instruction counts under callgrind
                    (crates/robofilter/benches/README.md)
";

/// Files named in the brief; used when present in the archive.
const NAMED: [&str; 3] = ["www.linkedin.com", "ebay.com", "www.amazon.com"];

/// The agents compared: one that falls back to `*`, and Googlebot where the
/// file names it.
const FALLBACK_AGENT: &str = "somebot";
const GOOGLEBOT: &str = "googlebot";

/// Real URLs needed before a host's URLs are used instead of synthetic ones.
const MIN_REAL_URLS: usize = 1000;

/// An engine whose pass over all URLs takes longer than this (CPU ns) is
/// timed, together with the others, on a prefix of the URLs instead.
const SLOW_PASS_NS: f64 = 200e6;

struct Args {
    data: PathBuf,
    files: Option<Vec<String>>,
    extra: Vec<String>,
    timeout: Duration,
    size_limit: usize,
    runs: usize,
    synthetic: usize,
    max_urls: usize,
    passes: Option<usize>,
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--build-ra") {
        return child(&argv[1..]);
    }
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("engine-compare: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("engine-compare: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut a = Args {
        data: repo.join("../shared/data"),
        files: None,
        extra: Vec::new(),
        timeout: Duration::from_secs(60),
        size_limit: 1024,
        runs: 7,
        synthetic: 20_000,
        max_urls: 100_000,
        passes: None,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            print!("{USAGE}");
            std::process::exit(0);
        }
        let value =
            it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || {
            value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"))
        };
        let list = || value.split(',').map(str::to_string).collect();
        match flag.as_str() {
            "--data" => a.data = PathBuf::from(value),
            "--files" => a.files = Some(list()),
            "--extra" => a.extra = list(),
            "--timeout" => a.timeout = Duration::from_secs(num()? as u64),
            "--size-limit" => a.size_limit = num()?,
            "--runs" => a.runs = num()?.max(1),
            "--synthetic" => a.synthetic = num()?.max(1),
            "--max-urls" => a.max_urls = num()?.max(1),
            "--passes" => a.passes = Some(num()?),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

/// One robots.txt of the corpus.
struct File {
    host: String,
    path: PathBuf,
    /// Non-empty rules of the `*` fallback group and of Googlebot's group
    /// (`None` when no group names Googlebot).
    fallback_rules: usize,
    google_rules: Option<usize>,
}

impl File {
    fn rule_len(&self) -> usize {
        self.fallback_rules.max(self.google_rules.unwrap_or(0))
    }
}

fn run(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    let archive = args.data.join("robots-latest.tar.gz");
    let url_list = args.data.join("urls-joinable.txt.gz");
    for f in [&archive, &url_list] {
        if !f.exists() {
            return Err(format!(
                "{} does not exist (see --data)",
                f.display()
            ));
        }
    }
    let dir = extract(&archive)?;
    eprintln!("counting rules in {} ...", dir.display());
    let files = survey(&dir, args.files.as_deref())?;
    eprintln!("reading {} ...", url_list.display());
    let urls = gunzip(&url_list)?;
    let by_host = match args.files {
        Some(_) => HashMap::new(),
        None => count_hosts(&urls),
    };
    let chosen = choose(args, &files, &by_host)?;

    let mut rows = Vec::new();
    for (file, why) in &chosen {
        let mut agents = vec![FALLBACK_AGENT];
        if file.google_rules.is_some() {
            agents.push(GOOGLEBOT);
        }
        let body = std::fs::read(&file.path)
            .map_err(|e| format!("{}: {e}", file.path.display()))?;
        for agent in agents {
            eprintln!("{} / {agent} ({why}) ...", file.host);
            let row = compare(args, file, &body, agent, &urls)?;
            eprintln!("  {}", row.summary());
            rows.push(row);
        }
    }
    match args.passes {
        Some(p) => {
            for r in &rows {
                println!(
                    "{} / {}: {p} passes over {} URLs each",
                    r.host, r.agent, r.timed_urls
                );
            }
        }
        None => print_table(args, &rows),
    }
    eprintln!("done in {:.0} s", started.elapsed().as_secs_f64());
    if rows.iter().any(|r| r.mismatches > 0) {
        return Err("the engines disagree (see MISMATCH rows)".into());
    }
    Ok(())
}

/// Counts the rules of every file, or only of `only`.
fn survey(dir: &Path, only: Option<&[String]>) -> Result<Vec<File>, String> {
    let paths: Vec<PathBuf> = match only {
        Some(hosts) => {
            hosts.iter().map(|h| dir.join(format!("{h}.txt"))).collect()
        }
        None => std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .map(|e| e.map(|e| e.path()).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?,
    };
    let mut files = Vec::new();
    for path in paths {
        let Some(host) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".txt"))
        else {
            continue;
        };
        let host = host.to_string();
        let body = std::fs::read(&path).map_err(|e| e.to_string())?;
        let parsed = RobotsTxt::parse(&body, Dialect::Google);
        let count = |agent: &str| {
            let sel = parsed.select(&[agent]);
            let n = sel.rules().iter().filter(|r| !r.pattern().is_empty());
            (n.count(), sel.source())
        };
        let (fallback_rules, _) = count(FALLBACK_AGENT);
        let (google, source) = count(GOOGLEBOT);
        let google_rules =
            (source == robofilter::GroupSource::Specific).then_some(google);
        files.push(File { host, path, fallback_rules, google_rules });
    }
    files.sort_by(|a, b| a.host.cmp(&b.host));
    Ok(files)
}

/// The host of a URL, lower-cased, without a leading `www.`.
fn url_host(url: &[u8]) -> Option<String> {
    let rest = &url[url.windows(3).position(|w| w == b"://")? + 3..];
    let end =
        rest.iter().position(|b| b"/?#;:".contains(b)).unwrap_or(rest.len());
    let host = String::from_utf8_lossy(&rest[..end]).to_ascii_lowercase();
    Some(bare(&host).to_string())
}

/// Whether `url_host(url)` is `host`, without allocating.
fn has_host(url: &[u8], host: &str) -> bool {
    let Some(at) = url.windows(3).position(|w| w == b"://") else {
        return false;
    };
    let rest = &url[at + 3..];
    let rest = match rest.get(..4) {
        Some(w) if w.eq_ignore_ascii_case(b"www.") => &rest[4..],
        _ => rest,
    };
    let h = host.as_bytes();
    rest.len() >= h.len()
        && rest[..h.len()].eq_ignore_ascii_case(h)
        && rest.get(h.len()).is_none_or(|b| b"/?#;:".contains(b))
}

fn bare(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

fn count_hosts(urls: &[u8]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in urls.split(|&b| b == b'\n') {
        if let Some(h) = url_host(line) {
            *counts.entry(h).or_insert(0) += 1;
        }
    }
    counts
}

/// The files to compare, each with why it was chosen: the named ones, the
/// two largest by rule count, the median, p90 and p99 rule counts
/// (preferring hosts with many real URLs), and the one closest to 1000
/// rules.
fn choose<'f>(
    args: &Args,
    files: &'f [File],
    by_host: &HashMap<String, usize>,
) -> Result<Vec<(&'f File, String)>, String> {
    let find = |h: &str| {
        files
            .iter()
            .find(|f| f.host == h)
            .ok_or_else(|| format!("no latest/{h}.txt in the archive"))
    };
    let mut out: Vec<(&File, String)> = Vec::new();
    if let Some(hosts) = &args.files {
        for h in hosts {
            out.push((find(h)?, "asked".into()));
        }
        return Ok(out);
    }
    let real = |f: &File| by_host.get(bare(&f.host)).copied().unwrap_or(0);
    for h in NAMED {
        if let Ok(f) = find(h) {
            out.push((f, "named".into()));
        }
    }
    let mut by_rules: Vec<&File> = files.iter().collect();
    by_rules.sort_by_key(|f| (Reverse(f.rule_len()), f.host.clone()));
    for f in by_rules.iter().take(2) {
        out.push((f, "largest".into()));
    }
    // Percentiles over files that have at least one rule for somebody, as
    // PROVENANCE.md counts them (median 5, p90 45, p99 284).
    let mut counts: Vec<usize> =
        files.iter().map(File::rule_len).filter(|&n| n > 0).collect();
    counts.sort_unstable();
    let pct = |p: usize| counts[(counts.len() - 1) * p / 100];
    for (label, target) in [
        ("median", pct(50)),
        ("p90", pct(90)),
        ("p99", pct(99)),
        ("~1000", 1000),
    ] {
        let best = files
            .iter()
            .filter(|f| f.fallback_rules > 0)
            .min_by_key(|f| {
                (f.fallback_rules.abs_diff(target), Reverse(real(f)))
            })
            .expect("the corpus is not empty");
        let why = format!("{label} ({target} rules)");
        out.push((best, why));
    }
    for h in &args.extra {
        out.push((find(h)?, "extra".into()));
    }
    let mut seen = HashSet::new();
    out.retain(|(f, _)| seen.insert(f.host.clone()));
    Ok(out)
}

/// One table row: one file and agent.
struct Row {
    host: String,
    agent: String,
    rules: usize,
    rf_engine: EngineKind,
    /// Which construction budget the whole group's verdict DFA exceeded.
    rf_note: Option<&'static str>,
    /// Automata of the engine: 1 for a verdict DFA, the parts of a split.
    rf_parts: usize,
    /// States, summed over parts.
    rf_states: usize,
    rf_bytes: usize,
    rf_build_ms: f64,
    ra: Result<RaFacts, String>,
    urls: usize,
    timed_urls: usize,
    url_source: &'static str,
    floor_ns: f64,
    rf_ns: f64,
    ra_ns: Option<f64>,
    mismatches: usize,
}

struct RaFacts {
    states: usize,
    bytes: usize,
    build_ms: f64,
}

impl Row {
    fn summary(&self) -> String {
        let ra = match &self.ra {
            Ok(f) => format!(
                "ra {} states {} B {:.1} ms, {:.1} ns/URL",
                f.states,
                f.bytes,
                f.build_ms,
                self.ra_ns.unwrap_or(f64::NAN)
            ),
            Err(e) => format!("ra {e}"),
        };
        format!(
            "{} rules; rf {}{} {} states {} B {:.1} ms, {:.1} ns/URL; {ra}; \
             {} {} URLs, floor {:.2} ns/URL, {} mismatches",
            self.rules,
            self.rf_engine_label(),
            self.rf_note.map(|n| format!(" [over {n}]")).unwrap_or_default(),
            self.rf_states,
            self.rf_bytes,
            self.rf_build_ms,
            self.rf_ns,
            self.urls,
            self.url_source,
            self.floor_ns,
            self.mismatches
        )
    }

    /// The engine column: `dfa`, `split (3 parts)`, `direct (state
    /// budget)`, `allow-all`.
    fn rf_engine_label(&self) -> String {
        match (self.rf_engine, self.rf_note) {
            (EngineKind::SplitDfa, _) => {
                let s = if self.rf_parts == 1 { "" } else { "s" };
                format!("split ({} part{s})", self.rf_parts)
            }
            (EngineKind::Direct, Some(note)) => format!("direct ({note})"),
            (other, _) => other.as_str().to_string(),
        }
    }

    /// Whether the engine has automata (states and bytes to report).
    fn rf_has_automata(&self) -> bool {
        matches!(self.rf_engine, EngineKind::VerdictDfa | EngineKind::SplitDfa)
    }
}

fn compare(
    args: &Args,
    file: &File,
    body: &[u8],
    agent: &str,
    all_urls: &[u8],
) -> Result<Row, String> {
    // robofilter: build time is the whole `compile` (parse included).
    let compiler = Compiler::with_config(
        Config::new().dialect(Dialect::Google).agent(agent),
    );
    let mut compiled = Vec::new();
    let rf_build_ms = median_ms(5, Duration::from_secs(10), || {
        compiled = compiler.compile(body).expect("compiles");
    });
    let aligned = AlignedBytes::from(&compiled[..]);
    let rules = Rules::from_bytes(aligned.as_bytes())
        .map_err(|e| format!("{}: loading: {e}", file.host))?;
    let matcher = rules.matcher(agent).map_err(|e| e.to_string())?;
    let info = matcher.group().and_then(|g| rules.groups().nth(g));
    let (rf_engine, rf_parts, rf_states, rf_bytes) = match info {
        Some(i) => (i.engine(), i.part_len(), i.state_len(), i.size()),
        None => (EngineKind::AllowAll, 0, 0, 0),
    };

    let patterns = ra_patterns(body, agent);
    let rules_len = RobotsTxt::parse(body, Dialect::Google)
        .select(&[agent])
        .rules()
        .iter()
        .filter(|r| !r.pattern().is_empty())
        .count();
    let ra_bytes = build_in_child(args, &file.path, agent);

    // URLs: the host's real ones if there are enough, else synthetic.
    let host = bare(&file.host);
    let mut buf = Vec::new();
    let mut n = 0;
    for line in all_urls.split(|&b| b == b'\n') {
        if n < args.max_urls && has_host(line, host) {
            buf.extend_from_slice(line);
            buf.push(b'\n');
            n += 1;
        }
    }
    let url_source = if n >= MIN_REAL_URLS {
        "real"
    } else {
        let pats = patterns.iter().map(|(p, _)| p.as_slice());
        buf = synthetic_urls(pats, &file.host, args.synthetic);
        n = args.synthetic;
        "synthetic"
    };

    let mut row = Row {
        host: file.host.clone(),
        agent: agent.to_string(),
        rules: rules_len,
        rf_engine,
        rf_note: info.and_then(|i| i.over_budget()),
        rf_parts,
        rf_states,
        rf_bytes,
        rf_build_ms,
        ra: Err(String::new()),
        urls: n,
        timed_urls: n,
        url_source,
        floor_ns: 0.0,
        rf_ns: 0.0,
        ra_ns: None,
        mismatches: 0,
    };
    let words: Vec<u32>;
    let ra_dfa = match ra_bytes {
        Ok((bytes, build_ms)) => {
            words = bytes
                .chunks(4)
                .map(|c| {
                    let mut w = [0; 4];
                    w[..c.len()].copy_from_slice(c);
                    u32::from_ne_bytes(w)
                })
                .collect();
            let slice =
                &bytemuck::cast_slice::<u32, u8>(&words)[..bytes.len()];
            let (dfa, _) = dense::DFA::from_bytes(slice)
                .map_err(|e| format!("loading the child's DFA: {e}"))?;
            row.ra = Ok(RaFacts {
                states: reachable_states(&dfa),
                bytes: bytes.len(),
                build_ms,
            });
            Some(dfa)
        }
        Err(e) => {
            row.ra = Err(e);
            None
        }
    };
    let kinds: Vec<RuleKind> = patterns.iter().map(|(_, k)| *k).collect();
    let ra_decide = |url: &[u8], scratch: &mut Vec<u8>| -> Option<Verdict> {
        let dfa = ra_dfa.as_ref()?;
        let path = MatchPath::from_url(url);
        // The path must be exactly the haystack (pitfall 5); a `/` that is
        // not in the URL (`http://x?q`) needs a copy.
        let hay = if path.has_lead_slash() {
            scratch.clear();
            scratch.push(b'/');
            scratch.extend_from_slice(path.tail());
            &scratch[..]
        } else {
            path.tail()
        };
        let input = Input::new(hay).anchored(Anchored::Yes);
        let m = dfa.try_search_fwd(&input).expect("anchored search");
        Some(match m.map(|m| kinds[m.pattern().as_usize()]) {
            Some(RuleKind::Disallow) => Verdict::Disallow,
            Some(RuleKind::Allow) | None => Verdict::Allow,
        })
    };

    // One full pass of each engine: the verdicts to compare, and how long
    // a pass takes (slow engines are then timed on a prefix of the URLs).
    let t = thread_cpu_ns();
    let rf_verdicts: Vec<Verdict> =
        lines(&buf).map(|u| matcher.decide(u)).collect();
    let rf_pass = thread_cpu_ns() - t;
    let mut scratch = Vec::new();
    let t = thread_cpu_ns();
    let ra_verdicts: Vec<Option<Verdict>> =
        lines(&buf).map(|u| ra_decide(u, &mut scratch)).collect();
    let ra_pass = thread_cpu_ns() - t;
    for ((url, a), b) in lines(&buf).zip(&rf_verdicts).zip(&ra_verdicts) {
        let Some(b) = *b else { break };
        if *a != b {
            row.mismatches += 1;
            if row.mismatches <= 5 {
                eprintln!(
                    "  MISMATCH {}: robofilter {a}, regex-automata {b}, \
                     direct {}",
                    String::from_utf8_lossy(url),
                    matcher.explain(url).verdict()
                );
            }
        }
    }

    // Time on the first `timed` URLs: all of them unless the slowest pass
    // over all of them exceeds SLOW_PASS_NS.
    let slowest =
        if ra_dfa.is_some() { rf_pass.max(ra_pass) } else { rf_pass };
    let timed = if slowest > SLOW_PASS_NS {
        ((n as f64 * SLOW_PASS_NS / slowest).ceil() as usize).clamp(200, n)
    } else {
        n
    };
    let cut = lines(&buf).take(timed).map(|l| l.len() + 1).sum::<usize>();
    let buf = &buf[..cut];
    let allowed = rf_verdicts[..timed].iter().filter(|v| v.is_allow()).count();
    row.timed_urls = timed;

    let floor = || buf.iter().filter(|&&b| b == b'\n').count();
    let rf = || {
        let n = lines(buf).filter(|u| matcher.is_allowed(u)).count();
        assert_eq!(n, allowed, "robofilter's count changed");
        n
    };
    let scratch = std::cell::RefCell::new(scratch);
    let ra = || {
        let mut scratch = scratch.borrow_mut();
        let n = lines(buf)
            .filter(|u| ra_decide(u, &mut scratch) == Some(Verdict::Allow))
            .count();
        if row.mismatches == 0 {
            assert_eq!(n, allowed, "regex-automata's count differs");
        }
        n
    };
    if let Some(passes) = args.passes {
        for _ in 0..passes {
            std::hint::black_box(pass_floor(&floor));
            std::hint::black_box(pass_robofilter(&rf));
            if ra_dfa.is_some() {
                std::hint::black_box(pass_regex_automata(&ra));
            }
        }
        return Ok(row);
    }
    let per_url = |ns: f64| ns / timed as f64;
    if ra_dfa.is_some() {
        let [f, r, a] = time_interleaved(args.runs, [&floor, &rf, &ra]);
        (row.floor_ns, row.rf_ns) = (per_url(f), per_url(r));
        row.ra_ns = Some(per_url(a));
    } else {
        let [f, r] = time_interleaved(args.runs, [&floor, &rf]);
        (row.floor_ns, row.rf_ns) = (per_url(f), per_url(r));
    }
    Ok(row)
}

// One pass each, kept out of line so that callgrind reports their inclusive
// instruction counts by name.
#[inline(never)]
fn pass_floor(f: &dyn Fn() -> usize) -> usize {
    f()
}

#[inline(never)]
fn pass_robofilter(f: &dyn Fn() -> usize) -> usize {
    f()
}

#[inline(never)]
fn pass_regex_automata(f: &dyn Fn() -> usize) -> usize {
    f()
}

/// The lines of a newline-terminated buffer.
fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.strip_suffix(b"\n").unwrap_or(buf).split(|&b| b == b'\n')
}

/// Median CPU time in ms of up to `runs` calls, stopping early once `budget`
/// is spent (slow builds run once).
fn median_ms(runs: usize, budget: Duration, mut f: impl FnMut()) -> f64 {
    let mut times = Vec::new();
    let mut spent = 0.0;
    while times.len() < runs && spent < budget.as_secs_f64() * 1e9 {
        let t = thread_cpu_ns();
        f();
        let dt = thread_cpu_ns() - t;
        spent += dt;
        times.push(dt);
    }
    median(&mut times) / 1e6
}

/// Per-pass CPU ns of each closure: `runs` rounds, each timing every closure
/// once in turn (so drifts in machine load hit all of them alike), each
/// timing repeating the closure enough times to last about 20 ms; medians.
fn time_interleaved<const N: usize>(
    runs: usize,
    fs: [&dyn Fn() -> usize; N],
) -> [f64; N] {
    let slowest = fs
        .iter()
        .map(|f| {
            let t = thread_cpu_ns();
            std::hint::black_box(f());
            thread_cpu_ns() - t
        })
        .fold(1.0, f64::max);
    let reps = ((20e6 / slowest).ceil() as usize).clamp(1, 10_000);
    let mut samples = [(); N].map(|_| Vec::with_capacity(runs));
    for _ in 0..runs {
        for (f, s) in fs.iter().zip(samples.iter_mut()) {
            let t = thread_cpu_ns();
            for _ in 0..reps {
                std::hint::black_box(f());
            }
            s.push((thread_cpu_ns() - t) / reps as f64);
        }
    }
    samples.map(|mut s| median(&mut s))
}

/// The merged group's patterns in precedence order, with their kinds,
/// including the `index.htm` aliases (ENGINE-NOTES.md).
fn ra_patterns(body: &[u8], agent: &str) -> Vec<(Vec<u8>, RuleKind)> {
    let parsed = RobotsTxt::parse(body, Dialect::Google);
    let mut out = Vec::new();
    for rule in parsed.select(&[agent]).rules() {
        let p = rule.pattern();
        if p.is_empty() {
            continue;
        }
        out.push((p.to_vec(), rule.kind()));
        if rule.kind() == RuleKind::Allow
            && let Some(alias) = index_html_alias(p)
        {
            out.push((alias, RuleKind::Allow));
        }
    }
    // Stable: equal patterns keep file order, which cannot change a verdict.
    out.sort_by_key(|(p, k)| (Reverse(p.len()), *k));
    out
}

/// google/robotstxt's rule: `Allow: <dir>/index.htm…` also allows exactly
/// `<dir>/`.
fn index_html_alias(p: &[u8]) -> Option<Vec<u8>> {
    let slash = p.iter().rposition(|&b| b == b'/')?;
    if !p[slash..].starts_with(b"/index.htm") {
        return None;
    }
    let mut alias = p[..=slash].to_vec();
    alias.push(b'$');
    Some(alias)
}

fn to_regex(p: &[u8]) -> String {
    let mut re = String::from("(?s-u)");
    for (i, &b) in p.iter().enumerate() {
        match b {
            b'*' => re.push_str(".*"),
            b'$' if i + 1 == p.len() => re.push('$'),
            _ => write!(re, "\\x{b:02X}").expect("writing to a String"),
        }
    }
    re
}

/// Runs `--build-ra` in a child process with the time guard. Returns the
/// serialized DFA and the child's build CPU time in ms, or why it gave up.
fn build_in_child(
    args: &Args,
    robots: &Path,
    agent: &str,
) -> Result<(Vec<u8>, f64), String> {
    let out = std::env::temp_dir()
        .join(format!("engine-compare-{}.dfa", std::process::id()));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("--build-ra")
        .arg(robots)
        .arg(agent)
        .arg(&out)
        .arg(args.size_limit.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawning the builder: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if start.elapsed() > args.timeout => {
                // Our own child, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_file(&out);
                return Err(format!(
                    "gave up (time > {} s)",
                    args.timeout.as_secs()
                ));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let report = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let result = match report.strip_prefix("ok ") {
        Some(ms) => {
            let ms: f64 = ms.parse().map_err(|_| report.clone())?;
            let bytes = std::fs::read(&out).map_err(|e| e.to_string())?;
            Ok((bytes, ms))
        }
        None => Err(report
            .strip_prefix("err ")
            .map(|e| format!("gave up ({e})"))
            .unwrap_or_else(|| format!("builder failed: {}", output.status))),
    };
    let _ = std::fs::remove_file(&out);
    result
}

/// `--build-ra ROBOTS AGENT OUT SIZE_LIMIT_MIB`: builds the regex-automata
/// DFA, writes it to OUT and prints `ok <build ms>` or `err <reason>`.
fn child(argv: &[String]) -> ExitCode {
    let [robots, agent, out, limit] = argv else {
        eprintln!("engine-compare --build-ra: 4 arguments expected");
        return ExitCode::from(2);
    };
    let body = std::fs::read(robots).expect("reading the robots.txt");
    let limit: usize = limit.parse().expect("a size limit in MiB");
    let patterns = ra_patterns(&body, agent);
    let t = thread_cpu_ns();
    let built = build_ra(&patterns, limit << 20);
    let ms = (thread_cpu_ns() - t) / 1e6;
    let mut stdout = std::io::stdout();
    match built {
        Ok(dfa) => {
            let (bytes, pad) = dfa.to_bytes_little_endian();
            std::fs::write(out, &bytes[pad..]).expect("writing the DFA");
            writeln!(stdout, "ok {ms}").expect("stdout");
        }
        Err(e) => {
            let msg = e.replace('\n', " ");
            writeln!(stdout, "err {msg}").expect("stdout");
        }
    }
    ExitCode::SUCCESS
}

fn build_ra(
    patterns: &[(Vec<u8>, RuleKind)],
    limit: usize,
) -> Result<dense::DFA<Vec<u32>>, String> {
    let regexes: Vec<String> =
        patterns.iter().map(|(p, _)| to_regex(p)).collect();
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit)),
        )
        .syntax(syntax::Config::new().utf8(false))
        .thompson(thompson::Config::new().utf8(false))
        .build_many(&regexes)
        .map_err(|e| e.to_string())
}

/// States reachable from the anchored start state (the count is not public).
fn reachable_states<A: AsRef<[u32]>>(dfa: &dense::DFA<A>) -> usize {
    let input = Input::new(&b""[..]).anchored(Anchored::Yes);
    let start = dfa.start_state_forward(&input).expect("anchored start");
    let reps: Vec<_> = dfa.byte_classes().representatives(..).collect();
    let mut seen = HashSet::from([start]);
    let mut stack = vec![start];
    while let Some(s) = stack.pop() {
        for unit in &reps {
            let next = match unit.as_u8() {
                Some(b) => dfa.next_state(s, b),
                None => dfa.next_eoi_state(s),
            };
            if seen.insert(next) {
                stack.push(next);
            }
        }
    }
    seen.len()
}

/// Deterministic URLs for a host from its patterns: each pattern's text with
/// every `*` replaced by a short random run (so wildcard rules match), then
/// as is, with the last octet changed (near miss), extended, or with a
/// query; one URL in ten is a random path. Same generator as the criterion
/// benchmark.
fn synthetic_urls<'p>(
    patterns: impl Iterator<Item = &'p [u8]>,
    host: &str,
    n: usize,
) -> Vec<u8> {
    let patterns: Vec<&[u8]> = patterns.collect();
    let mut rng = SplitMix64(0x5eed_b0b5);
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(b"https://");
        out.extend_from_slice(host.as_bytes());
        if patterns.is_empty() || i % 10 == 0 {
            for _ in 0..1 + rng.below(3) {
                out.push(b'/');
                random_run(&mut rng, &mut out, 1, 10);
            }
        } else {
            let p = patterns[rng.below(patterns.len())];
            instantiate(&mut rng, p, &mut out);
        }
        out.push(b'\n');
    }
    out
}

fn instantiate(rng: &mut SplitMix64, pattern: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    if !pattern.starts_with(b"/") {
        out.push(b'/');
    }
    let body = pattern.strip_suffix(b"$").unwrap_or(pattern);
    for &b in body {
        if b == b'*' {
            random_run(rng, out, 0, 6);
        } else {
            out.push(b);
        }
    }
    match rng.below(4) {
        0 => {}
        1 => {
            if out.len() > start + 1 {
                let last = out.len() - 1;
                out[last] = b"xyz0_"[rng.below(5)];
            }
        }
        2 => {
            out.push(b'/');
            random_run(rng, out, 1, 12);
        }
        _ => {
            out.extend_from_slice(b"?id=");
            random_run(rng, out, 1, 8);
        }
    }
}

fn random_run(
    rng: &mut SplitMix64,
    out: &mut Vec<u8>,
    min: usize,
    max: usize,
) {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-_./";
    for _ in 0..min + rng.below(max - min + 1) {
        out.push(ALPHABET[rng.below(ALPHABET.len())]);
    }
}

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn print_table(args: &Args, rows: &[Row]) {
    println!(
        "\nrobofilter (rf) compiled engine (verdict DFA, split score DFAs \
         or direct matcher) vs regex-automata (ra) 0.4 dense DFA; \
         google dialect; thread CPU time, median of {} runs; \
         ratios = ra / rf (> 1: robofilter smaller or faster)\n",
        args.runs
    );
    println!(
        "| file | agent | rules | rf engine | rf states | rf bytes \
         | rf build ms \
         | ra states | ra bytes | ra build ms | size ratio | URLs \
         | newline floor ns/URL | rf ns/URL | ra ns/URL | speed ratio |"
    );
    println!(
        "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|"
    );
    for r in rows {
        let (rf_states, rf_bytes) = if r.rf_has_automata() {
            (r.rf_states.to_string(), r.rf_bytes.to_string())
        } else {
            ("–".into(), "–".into())
        };
        let urls = if r.timed_urls < r.urls {
            format!(
                "{} {} (timed: first {})",
                r.urls, r.url_source, r.timed_urls
            )
        } else {
            format!("{} {}", r.urls, r.url_source)
        };
        let (ra_states, ra_bytes, ra_ms, size_ratio) = match &r.ra {
            Ok(f) => (
                f.states.to_string(),
                f.bytes.to_string(),
                format!("{:.1}", f.build_ms),
                if r.rf_has_automata() && r.rf_bytes > 0 {
                    ratio(f.bytes as f64 / r.rf_bytes as f64)
                } else {
                    "–".into()
                },
            ),
            Err(e) => (e.clone(), "–".into(), "–".into(), "–".into()),
        };
        let (ra_ns, speed) = match r.ra_ns {
            Some(ns) => (format!("{ns:.1}"), ratio(ns / r.rf_ns)),
            None => ("–".into(), "–".into()),
        };
        let speed = if r.mismatches > 0 {
            format!("MISMATCH {}", r.mismatches)
        } else {
            speed
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} \
             | {} | {:.1} | {:.1} | {} | {} |",
            r.host,
            r.agent,
            r.rules,
            r.rf_engine_label(),
            rf_states,
            rf_bytes,
            r.rf_build_ms,
            ra_states,
            ra_bytes,
            ra_ms,
            size_ratio,
            urls,
            r.floor_ns,
            r.rf_ns,
            ra_ns,
            speed
        );
    }
}

/// Two significant digits at least, so that 0.004 does not print as 0.00.
fn ratio(x: f64) -> String {
    if x >= 0.095 { format!("{x:.2}") } else { format!("{x:.1e}") }
}
