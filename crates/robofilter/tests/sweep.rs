//! The real-corpus sweep (a tool, not part of the default run): every file
//! of `../shared/data/robots-latest.tar.gz` compiled in both dialects, and
//! the real URLs of `../shared/data/urls-joinable.txt.gz` decided by the
//! automaton (`decide`), the direct matcher (`explain`), the naive oracle
//! (`tests/oracle.rs`, both dialects) and the `robotstxt` crate (google
//! dialect, sampled). It prints a markdown report on stdout.
//!
//! Run it with `tools/corpus/sweep` (which passes these through):
//!
//! * `ROBOFILTER_SWEEP_LIMIT`: at most this many robots.txt files, spread
//!   evenly over the corpus (default: all);
//! * `ROBOFILTER_SWEEP_THREADS`: worker threads (default: all cores);
//! * `ROBOFILTER_SWEEP_CRATE_STEP`: the crate sees every N-th URL of each
//!   host (default 20; it re-parses the file for every URL);
//! * `ROBOFILTER_SWEEP_ORACLE_STEP`: the oracle sees every N-th URL of each
//!   host (default 1);
//! * `ROBOFILTER_SWEEP_ORACLE_BUDGET`: per file, the oracle parses at most
//!   about this many octets per (agent, dialect) — body length times
//!   oracle URLs; a file over it gets a larger step (default 10^9, 0: no
//!   cap).
//!
//! `decide` and `explain` are compared on every URL. A robofilter
//! disagreement (decide against explain, or against the oracle) is a bug:
//! the report lists it and minimises the first few into reproductions.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, Rules, Verdict,
};

use crate::differential::{
    DIVERGENCES, TempDir, collect_files, crate_allowed, disagreement,
    env_count, escaped, minimise, oracle_dialect, reproduction, untar,
    url_host,
};
use crate::oracle::{OracleDialect, oracle_allowed};

/// The caller agents: one that many files name, one that only `*` covers.
const AGENTS: [&str; 2] = ["Googlebot", "ExampleBot"];
const DIALECTS: [Dialect; 2] = [Dialect::Google, Dialect::Rfc9309];
const ENGINES: [EngineKind; 4] = [
    EngineKind::VerdictDfa,
    EngineKind::SplitDfa,
    EngineKind::Direct,
    EngineKind::AllowAll,
];
/// Examples listed per comparison pair.
const MAX_EXAMPLES: usize = 20;
/// Robofilter disagreements minimised into reproductions, per pair.
const MAX_REPRODUCTIONS: usize = 3;

/// The compared pairs, in report order.
const PAIRS: [&str; 5] = [
    "decide vs explain (google)",
    "decide vs explain (rfc9309)",
    "robofilter vs oracle (google)",
    "robofilter vs oracle (rfc9309)",
    "robofilter-google vs robotstxt crate",
];
const CRATE_PAIR: usize = 4;

struct Settings {
    limit: usize,
    threads: usize,
    crate_step: usize,
    oracle_step: usize,
    oracle_budget: u64,
}

impl Settings {
    fn from_env() -> Settings {
        let cores =
            std::thread::available_parallelism().map_or(1, |n| n.get());
        let get = |name, default: usize| {
            let n = env_count(name, default as u64);
            usize::try_from(n).unwrap_or(usize::MAX)
        };
        Settings {
            limit: get("ROBOFILTER_SWEEP_LIMIT", usize::MAX),
            threads: get("ROBOFILTER_SWEEP_THREADS", cores).max(1),
            crate_step: get("ROBOFILTER_SWEEP_CRATE_STEP", 20).max(1),
            oracle_step: get("ROBOFILTER_SWEEP_ORACLE_STEP", 1).max(1),
            oracle_budget: env_count(
                "ROBOFILTER_SWEEP_ORACLE_BUDGET",
                1_000_000_000,
            ),
        }
    }

    /// The oracle's step for a file of `body_len` octets and `urls` URLs.
    fn oracle_stride(&self, body_len: usize, urls: usize) -> usize {
        let cost = (body_len.max(1) as u64).saturating_mul(urls as u64);
        let step = self.oracle_step as u64;
        if self.oracle_budget == 0 || cost / step <= self.oracle_budget {
            return self.oracle_step;
        }
        let needed = cost.div_ceil(self.oracle_budget);
        usize::try_from(needed.max(step)).unwrap_or(usize::MAX)
    }
}

// ---------------------------------------------------------------------------
// Tallies

/// One disagreement, as listed in the report.
#[derive(Clone)]
struct Example {
    file: usize,
    agent: &'static str,
    url: Vec<u8>,
    verdicts: String,
}

#[derive(Default)]
struct Pair {
    compared: u64,
    disagreements: u64,
    /// Disagreements explained by a named robotstxt-crate divergence.
    classified: BTreeMap<&'static str, u64>,
    /// Unexplained disagreements (the first `MAX_EXAMPLES`).
    examples: Vec<Example>,
}

impl Pair {
    fn unexplained(&self) -> u64 {
        self.disagreements - self.classified.values().sum::<u64>()
    }

    fn merge(&mut self, other: Pair) {
        self.compared += other.compared;
        self.disagreements += other.disagreements;
        for (k, v) in other.classified {
            *self.classified.entry(k).or_default() += v;
        }
        self.examples.extend(other.examples);
    }

    fn example(&mut self, example: impl FnOnce() -> Example) {
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(example());
        }
    }
}

#[derive(Default)]
struct DialectTally {
    compiled: u64,
    errors: Vec<(usize, String)>,
    groups: u64,
    engines: [u64; 4],
    /// (engine, budget) of every group over a budget.
    over_budget: BTreeMap<(&'static str, &'static str), u64>,
    compile_time: Duration,
    rules_bytes: u64,
    /// Files with a group on the direct matcher.
    direct_files: Vec<usize>,
    slowest: Vec<(Duration, usize)>,
}

impl DialectTally {
    fn merge(&mut self, other: DialectTally) {
        self.compiled += other.compiled;
        self.errors.extend(other.errors);
        self.groups += other.groups;
        for (a, b) in self.engines.iter_mut().zip(other.engines) {
            *a += b;
        }
        for (k, v) in other.over_budget {
            *self.over_budget.entry(k).or_default() += v;
        }
        self.compile_time += other.compile_time;
        self.rules_bytes += other.rules_bytes;
        self.direct_files.extend(other.direct_files);
        self.slowest.extend(other.slowest);
        self.keep_slowest();
    }

    fn keep_slowest(&mut self) {
        self.slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
        self.slowest.truncate(5);
    }
}

#[derive(Default)]
struct Tally {
    files: u64,
    body_bytes: u64,
    non_utf8: u64,
    dialects: [DialectTally; 2],
    pairs: [Pair; 5],
    /// URLs run (each for both agents).
    urls: u64,
    /// URLs the oracle saw, and files where the budget raised its step.
    oracle_urls: u64,
    oracle_strided_files: Vec<(usize, usize)>,
    crate_urls: u64,
    crate_panics: u64,
    crate_non_utf8_urls: u64,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.files += other.files;
        self.body_bytes += other.body_bytes;
        self.non_utf8 += other.non_utf8;
        for (a, b) in self.dialects.iter_mut().zip(other.dialects) {
            a.merge(b);
        }
        for (a, b) in self.pairs.iter_mut().zip(other.pairs) {
            a.merge(b);
        }
        self.urls += other.urls;
        self.oracle_urls += other.oracle_urls;
        self.oracle_strided_files.extend(other.oracle_strided_files);
        self.crate_urls += other.crate_urls;
        self.crate_panics += other.crate_panics;
        self.crate_non_utf8_urls += other.crate_non_utf8_urls;
    }
}

// ---------------------------------------------------------------------------
// The corpus

struct Corpus {
    /// Keeps the extracted files until the report is written.
    _dir: TempDir,
    /// `(host, path)` of every file, sorted by host.
    files: Vec<(String, PathBuf)>,
    /// Indices into `files` of this run's files.
    selected: Vec<usize>,
    /// The URLs of each file (indexed like `files`).
    urls: Vec<Vec<Vec<u8>>>,
    url_lines: u64,
    /// URLs with no robots.txt file in the corpus.
    no_file: u64,
    /// URLs whose file is not in this run (`ROBOFILTER_SWEEP_LIMIT`).
    not_selected: u64,
    /// How URLs found their file: host, `www.` + host, host without `www.`.
    by_rule: [u64; 3],
}

fn load_corpus(limit: usize) -> Result<Corpus, String> {
    let shared = crate::util::shared_dir()
        .ok_or("../shared does not exist (no real data)")?;
    let data = shared.join("data");
    let tarball = data.join("robots-latest.tar.gz");
    let urls_gz = data.join("urls-joinable.txt.gz");
    for f in [&tarball, &urls_gz] {
        if !f.is_file() {
            return Err(format!("{} is missing", f.display()));
        }
    }
    let dir = untar(&tarball, "sweep")?;
    let mut paths = Vec::new();
    collect_files(&dir.0, &mut paths).map_err(|e| e.to_string())?;
    let mut files: Vec<(String, PathBuf)> = paths
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let host = name.strip_suffix(".txt")?.to_ascii_lowercase();
            Some((host, p))
        })
        .collect();
    files.sort();
    let index: HashMap<&str, usize> =
        files.iter().enumerate().map(|(i, (h, _))| (h.as_str(), i)).collect();

    // An even spread of `limit` files.
    let step = files.len().div_ceil(limit.max(1)).max(1);
    let selected: Vec<usize> =
        (0..files.len()).step_by(step).take(limit).collect();
    let mut is_selected = vec![false; files.len()];
    for &i in &selected {
        is_selected[i] = true;
    }

    let out = Command::new("gzip")
        .arg("-dc")
        .arg(&urls_gz)
        .output()
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip failed on {}", urls_gz.display()));
    }
    let mut urls = vec![Vec::new(); files.len()];
    let (mut url_lines, mut no_file, mut not_selected) = (0, 0, 0);
    let mut by_rule = [0; 3];
    for line in out.stdout.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        url_lines += 1;
        let host = url_host(&String::from_utf8_lossy(line));
        let found = host.as_deref().and_then(|h| {
            let www = format!("www.{h}");
            let candidates =
                [Some(h), Some(www.as_str()), h.strip_prefix("www.")];
            candidates
                .into_iter()
                .enumerate()
                .find_map(|(rule, c)| index.get(c?).map(|&i| (rule, i)))
        });
        match found {
            None => no_file += 1,
            Some((_, i)) if !is_selected[i] => not_selected += 1,
            Some((rule, i)) => {
                by_rule[rule] += 1;
                urls[i].push(line.to_vec());
            }
        }
    }
    Ok(Corpus {
        _dir: dir,
        files,
        selected,
        urls,
        url_lines,
        no_file,
        not_selected,
        by_rule,
    })
}

// ---------------------------------------------------------------------------
// One file

thread_local! {
    /// Set while the robotstxt crate runs: its panics are counted, not
    /// printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn quiet_crate_allowed(robots: &str, agent: &str, url: &str) -> Option<bool> {
    QUIET.with(|q| q.set(true));
    let got = crate_allowed(robots, agent, url);
    QUIET.with(|q| q.set(false));
    got
}

fn verdict(allowed: bool) -> &'static str {
    if allowed { "allow" } else { "disallow" }
}

fn engine_slot(engine: EngineKind) -> usize {
    ENGINES.iter().position(|&e| e == engine).expect("known engine")
}

/// Compiles `body` in `dialect`, tallies it, and returns the loaded bytes.
fn compile_one(
    file: usize,
    body: &[u8],
    dialect: Dialect,
    t: &mut DialectTally,
) -> Option<AlignedBytes> {
    let compiler = Compiler::with_config(Config::new().dialect(dialect));
    let start = Instant::now();
    let compiled = compiler.compile(body);
    let took = start.elapsed();
    t.compile_time += took;
    t.slowest.push((took, file));
    if t.slowest.len() > 50 {
        t.keep_slowest();
    }
    let bytes = match compiled {
        Ok(b) => b,
        Err(e) => {
            t.errors.push((file, format!("compile: {e}")));
            return None;
        }
    };
    t.compiled += 1;
    t.rules_bytes += bytes.len() as u64;
    let aligned = AlignedBytes::from(&bytes[..]);
    let rules = match Rules::from_bytes(aligned.as_bytes()) {
        Ok(r) => r,
        Err(e) => {
            t.errors.push((file, format!("load: {e}")));
            return None;
        }
    };
    let mut direct = false;
    for g in rules.groups() {
        t.groups += 1;
        t.engines[engine_slot(g.engine())] += 1;
        direct |= g.engine() == EngineKind::Direct;
        if let Some(budget) = g.over_budget() {
            *t.over_budget
                .entry((g.engine().as_str(), budget))
                .or_default() += 1;
        }
    }
    if direct {
        t.direct_files.push(file);
    }
    Some(aligned)
}

fn sweep_file(
    file: usize,
    path: &PathBuf,
    urls: &[Vec<u8>],
    s: &Settings,
    t: &mut Tally,
) {
    let body = std::fs::read(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    t.files += 1;
    t.body_bytes += body.len() as u64;
    let utf8 = std::str::from_utf8(&body).ok();
    t.non_utf8 += u64::from(utf8.is_none());
    let compiled: Vec<Option<AlignedBytes>> = DIALECTS
        .iter()
        .zip(&mut t.dialects)
        .map(|(&d, dt)| compile_one(file, &body, d, dt))
        .collect();
    if urls.is_empty() {
        return;
    }
    let rules: Vec<Option<Rules<'_>>> = compiled
        .iter()
        .map(|a| a.as_ref().map(|a| Rules::from_bytes(a.as_bytes()).unwrap()))
        .collect();
    // The crate takes &str: a non-UTF-8 body is compared as lossy text,
    // compiled once more for that comparison.
    let lossy = utf8.is_none().then(|| String::from_utf8_lossy(&body));
    let lossy_rules = lossy.as_ref().and_then(|text| {
        Compiler::with_config(Config::new().dialect(Dialect::Google))
            .compile(text.as_bytes())
            .ok()
            .map(|b| AlignedBytes::from(&b[..]))
    });
    let lossy_rules = lossy_rules
        .as_ref()
        .map(|a| Rules::from_bytes(a.as_bytes()).expect("loads"));
    let crate_text: Option<&str> = utf8.or(lossy.as_deref());

    let stride = s.oracle_stride(body.len(), urls.len());
    if stride > s.oracle_step {
        t.oracle_strided_files.push((file, stride));
    }
    for (i, url) in urls.iter().enumerate() {
        t.urls += 1;
        let oracle_on = i % stride == 0;
        let crate_on = i % s.crate_step == 0;
        t.oracle_urls += u64::from(oracle_on);
        t.crate_urls += u64::from(crate_on);
        for agent in AGENTS {
            let mut google = None;
            for (d, dialect) in DIALECTS.into_iter().enumerate() {
                let Some(rules) = &rules[d] else { continue };
                let m = rules.matcher(agent).expect("all agents");
                let fast = m.decide(url) == Verdict::Allow;
                let slow = m.explain(url).verdict().is_allow();
                if dialect == Dialect::Google {
                    google = Some(fast);
                }
                let pair = &mut t.pairs[d];
                pair.compared += 1;
                if fast != slow {
                    pair.disagreements += 1;
                    pair.example(|| Example {
                        file,
                        agent,
                        url: url.clone(),
                        verdicts: format!(
                            "decide={} explain={}",
                            verdict(fast),
                            verdict(slow)
                        ),
                    });
                }
                if !oracle_on {
                    continue;
                }
                let oracle = oracle_allowed(
                    &body,
                    &[agent],
                    url,
                    oracle_dialect(dialect),
                );
                let pair = &mut t.pairs[2 + d];
                pair.compared += 1;
                if fast != oracle {
                    pair.disagreements += 1;
                    pair.example(|| Example {
                        file,
                        agent,
                        url: url.clone(),
                        verdicts: format!(
                            "decide={} explain={} oracle={}",
                            verdict(fast),
                            verdict(slow),
                            verdict(oracle)
                        ),
                    });
                }
            }
            if !crate_on {
                continue;
            }
            let Some(text) = crate_text else { continue };
            let ours = match (&lossy_rules, google) {
                (Some(r), _) => {
                    r.matcher(agent).expect("all agents").is_allowed(url)
                }
                (None, Some(g)) if utf8.is_some() => g,
                _ => continue,
            };
            let Ok(url_str) = std::str::from_utf8(url) else {
                t.crate_non_utf8_urls += 1;
                continue;
            };
            let theirs = quiet_crate_allowed(text, agent, url_str);
            let pair = &mut t.pairs[CRATE_PAIR];
            pair.compared += 1;
            if theirs == Some(ours) {
                continue;
            }
            pair.disagreements += 1;
            t.crate_panics += u64::from(theirs.is_none());
            let oracle = oracle_allowed(
                text.as_bytes(),
                &[agent],
                url,
                OracleDialect::Google,
            );
            let explained = DIVERGENCES
                .iter()
                .find(|d| (d.applies)(text, url_str))
                .filter(|_| oracle == ours);
            match explained {
                Some(d) => *pair.classified.entry(d.name).or_default() += 1,
                None => pair.example(|| Example {
                    file,
                    agent,
                    url: url.clone(),
                    verdicts: format!(
                        "robofilter={} crate={} oracle={}",
                        verdict(ours),
                        theirs.map_or("panic", verdict),
                        verdict(oracle)
                    ),
                }),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The run and the report

#[test]
#[ignore = "real-corpus sweep: run tools/corpus/sweep"]
fn sweep_real_corpus() {
    let wall = Instant::now();
    let s = Settings::from_env();
    let corpus = match load_corpus(s.limit) {
        Ok(c) => c,
        Err(why) => {
            crate::util::skip("sweep::sweep_real_corpus", &why);
            return;
        }
    };
    let load_time = wall.elapsed();
    eprintln!(
        "sweep: {} files ({} selected), {} URL lines, loaded in {:.0} s",
        corpus.files.len(),
        corpus.selected.len(),
        corpus.url_lines,
        load_time.as_secs_f64()
    );

    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !QUIET.with(Cell::get) {
            previous(info);
        }
    }));

    // Files with the most URLs first, so that the long ones start early.
    let mut order = corpus.selected.clone();
    order.sort_by_key(|&i| std::cmp::Reverse(corpus.urls[i].len()));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let last_note = Mutex::new(Instant::now());
    let total = Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..s.threads {
            scope.spawn(|| {
                let mut t = Tally::default();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&file) = order.get(k) else { break };
                    let path = &corpus.files[file].1;
                    sweep_file(file, path, &corpus.urls[file], &s, &mut t);
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let mut last = last_note.lock().unwrap();
                    if last.elapsed() >= Duration::from_secs(30) {
                        *last = Instant::now();
                        eprintln!(
                            "sweep: {n}/{} files, {:.0} s",
                            order.len(),
                            wall.elapsed().as_secs_f64()
                        );
                    }
                }
                total.lock().unwrap().merge(t);
            });
        }
    });
    let t = total.into_inner().unwrap();
    let sweep_time = wall.elapsed();

    let mut repro = String::new();
    for (p, pair) in t.pairs.iter().enumerate().take(4) {
        reproduce(&corpus, p, pair, &mut repro);
    }
    print!("{}", report(&corpus, &s, &t, load_time, sweep_time, &repro));
    println!(
        "\nWall time: {:.0} s in all ({:.0} s extracting and reading the \
         data, {:.0} s minimising).",
        wall.elapsed().as_secs_f64(),
        load_time.as_secs_f64(),
        (wall.elapsed() - sweep_time).as_secs_f64()
    );
}

/// Minimises the first few disagreements of a robofilter pair (`p` < 4).
fn reproduce(corpus: &Corpus, p: usize, pair: &Pair, out: &mut String) {
    let dialect = DIALECTS[p % 2];
    let mut seen = Vec::new();
    for ex in &pair.examples {
        if seen.len() == MAX_REPRODUCTIONS {
            break;
        }
        if seen.contains(&ex.file) {
            continue;
        }
        seen.push(ex.file);
        let (host, path) = &corpus.files[ex.file];
        let body = std::fs::read(path).expect("still extracted");
        let fails = |r: &[u8], u: &[u8]| {
            disagreement(r, ex.agent, u, dialect, None).is_some()
        };
        if !fails(&body, &ex.url) {
            let _ = writeln!(out, "- {host}: did not reproduce");
            continue;
        }
        let (r, u) = minimise(&body, &ex.url, fails);
        let detail = disagreement(&r, ex.agent, &u, dialect, None)
            .expect("still fails");
        let text = reproduction(
            &format!("{}: {host}.txt", PAIRS[p]),
            &r,
            ex.agent,
            &u,
            dialect.as_str(),
            &detail,
        );
        let _ = writeln!(out, "```text\n{text}\n```");
    }
}

fn report(
    corpus: &Corpus,
    s: &Settings,
    t: &Tally,
    load_time: Duration,
    sweep_time: Duration,
    repro: &str,
) -> String {
    let name = |i: usize| format!("{}.txt", corpus.files[i].0);
    let mut o = String::new();
    let _ = writeln!(o, "# robofilter real-corpus sweep\n");
    let _ = writeln!(
        o,
        "Files: {} of {} in robots-latest.tar.gz ({:.1} MB of robots.txt, \
         {} not UTF-8); {} worker threads; agents {}; all agents compiled \
         (`Compiler::with_config(Config::new().dialect(d))`). Sweep time \
         {:.0} s wall (after {:.0} s extracting and reading the data).\n",
        t.files,
        corpus.files.len(),
        t.body_bytes as f64 / 1e6,
        t.non_utf8,
        s.threads,
        AGENTS.join(", "),
        (sweep_time - load_time).as_secs_f64(),
        load_time.as_secs_f64(),
    );

    let _ = writeln!(o, "## Compile\n");
    let _ = writeln!(
        o,
        "Compile time is wall time around each `Compiler::compile` call, \
         summed over files ({} threads sharing the machine, so it includes \
         waiting for a core).\n",
        s.threads
    );
    let _ = writeln!(
        o,
        "| dialect | compiled | errors | groups | dfa | split-dfa | direct \
         | allow-all | over budget | rules MB | compile s | slowest files |"
    );
    let _ = writeln!(o, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    for (d, dt) in DIALECTS.iter().zip(&t.dialects) {
        let over: u64 = dt.over_budget.values().sum();
        let slowest: Vec<String> = dt
            .slowest
            .iter()
            .take(3)
            .map(|(took, f)| {
                format!("{} {:.2} s", name(*f), took.as_secs_f64())
            })
            .collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {over} | {:.1} | {:.1} \
             | {} |",
            d.as_str(),
            dt.compiled,
            dt.errors.len(),
            dt.groups,
            dt.engines[0],
            dt.engines[1],
            dt.engines[2],
            dt.engines[3],
            dt.rules_bytes as f64 / 1e6,
            dt.compile_time.as_secs_f64(),
            slowest.join(", "),
        );
    }
    let _ = writeln!(o, "\nGroups over a budget, by engine and budget:\n");
    let _ = writeln!(o, "| dialect | engine | budget | groups |");
    let _ = writeln!(o, "|---|---|---|--:|");
    for (d, dt) in DIALECTS.iter().zip(&t.dialects) {
        for ((engine, budget), n) in &dt.over_budget {
            let _ =
                writeln!(o, "| {} | {engine} | {budget} | {n} |", d.as_str());
        }
    }
    for (d, dt) in DIALECTS.iter().zip(&t.dialects) {
        let mut files: Vec<String> =
            dt.direct_files.iter().map(|&f| name(f)).collect();
        files.sort();
        let _ = writeln!(
            o,
            "\nFiles with a direct-matcher group ({}): {}",
            d.as_str(),
            if files.is_empty() { "none".into() } else { files.join(", ") }
        );
        for (f, e) in &dt.errors {
            let _ = writeln!(o, "- error, {}: {e}", name(*f));
        }
    }

    let _ = writeln!(o, "\n## URLs\n");
    let mapped: u64 = corpus.by_rule.iter().sum();
    let with_urls =
        corpus.selected.iter().filter(|&&i| !corpus.urls[i].is_empty());
    let _ = writeln!(
        o,
        "urls-joinable.txt.gz: {} URLs; {mapped} run ({} by host, {} by \
         `www.` + host, {} by host without `www.`), {} skipped (no file), \
         {} skipped (file not in this run); {} files have URLs. Every URL is \
         asked for both agents.\n",
        corpus.url_lines,
        corpus.by_rule[0],
        corpus.by_rule[1],
        corpus.by_rule[2],
        corpus.no_file,
        corpus.not_selected,
        with_urls.count(),
    );
    let _ = writeln!(
        o,
        "- decide and explain: every URL ({} URLs).\n- Oracle: {} URLs \
         ({:.2} %): every {}-th URL of each host (first included; 1: all), \
         and fewer on {} files where body octets x URLs exceeded {} (step \
         raised per file{}).\n- \
         robotstxt crate: {} URLs, every {}th of each host (first \
         included); google dialect, the robofilter google verdict of the \
         same text ({} non-UTF-8 files compared as lossy UTF-8 text, \
         compiled again), {} non-UTF-8 URLs skipped; {} crate panics.\n",
        t.urls,
        t.oracle_urls,
        100.0 * t.oracle_urls as f64 / t.urls.max(1) as f64,
        s.oracle_step,
        t.oracle_strided_files.len(),
        s.oracle_budget,
        strided_list(&t.oracle_strided_files, &name),
        t.crate_urls,
        s.crate_step,
        t.non_utf8,
        t.crate_non_utf8_urls,
        t.crate_panics,
    );

    let _ = writeln!(o, "## Comparisons\n");
    let _ = writeln!(
        o,
        "| pair | comparisons | disagreements | classified | unexplained |"
    );
    let _ = writeln!(o, "|---|--:|--:|--:|--:|");
    for (p, pair) in PAIRS.iter().zip(&t.pairs) {
        let _ = writeln!(
            o,
            "| {p} | {} | {} | {} | {} |",
            pair.compared,
            pair.disagreements,
            pair.disagreements - pair.unexplained(),
            pair.unexplained(),
        );
    }
    let crate_pair = &t.pairs[CRATE_PAIR];
    if !crate_pair.classified.is_empty() {
        let _ = writeln!(
            o,
            "\nrobotstxt crate divergences (the oracle sides \
             with robofilter):\n"
        );
        let _ = writeln!(o, "| divergence | disagreements |");
        let _ = writeln!(o, "|---|--:|");
        for (k, v) in &crate_pair.classified {
            let _ = writeln!(o, "| {k} | {v} |");
        }
    }
    for (p, pair) in PAIRS.iter().zip(&t.pairs) {
        if pair.examples.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "\n### Unexplained: {p} ({} of {})\n",
            pair.examples.len(),
            pair.unexplained()
        );
        let _ = writeln!(o, "| file | agent | URL | verdicts |");
        let _ = writeln!(o, "|---|---|---|---|");
        let mut examples = pair.examples.clone();
        examples.sort_by(|a, b| (a.file, &a.url).cmp(&(b.file, &b.url)));
        for ex in examples.iter().take(MAX_EXAMPLES) {
            let _ = writeln!(
                o,
                "| {} | {} | `{}` | {} |",
                name(ex.file),
                ex.agent,
                escaped(&ex.url).replace('|', "\\|"),
                ex.verdicts
            );
        }
    }
    if !repro.is_empty() {
        let _ = writeln!(o, "\n### Minimised reproductions\n\n{repro}");
    }
    let bugs: u64 = t.pairs[..4].iter().map(|p| p.disagreements).sum();
    let _ = writeln!(
        o,
        "\n**Robofilter disagreements (decide/explain/oracle): {bugs}; \
         unexplained robotstxt-crate disagreements: {}.**",
        crate_pair.unexplained()
    );
    o
}

fn strided_list(
    files: &[(usize, usize)],
    name: &dyn Fn(usize) -> String,
) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut v = files.to_vec();
    v.sort();
    let list: Vec<String> = v
        .iter()
        .map(|&(f, step)| format!("{} every {step}", name(f)))
        .collect();
    format!(": {}", list.join(", "))
}
