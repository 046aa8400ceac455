// Criterion benchmarks: parse, compile, load, decide and end-to-end filter.
//
// Corpora:
//
// - `sample`: `data/sample/robots.txt` and `data/sample/urls.txt` (in the
//   repository; rfc9309 dialect, the crate default).
// - `linkedin`: `latest/www.linkedin.com.txt` from
//   `../shared/data/robots-latest.tar.gz` (google dialect), a wildcard-heavy
//   real file (about 1,800 rules, 1,100 of them with `*`). It is not in the
//   repository (its licence is undeclared), so it is skipped, with the
//   reason printed, when the archive is absent. Its URLs are synthetic
//   (`synthetic_urls`): the real URL list has only 54 for that host.
//
// Every benchmark asserts its allow/disallow counts, computed once up front
// with the direct matcher (`Matcher::explain`), so that a fast wrong answer
// fails instead of being reported. See benches/README.md.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, Matcher, RobotsTxt, Rules,
    Verdict,
};

/// The agents decided in every corpus: one named in the sample and in most
/// real files, and one that falls back to `*`.
const AGENTS: [&str; 2] = ["googlebot", "somebot"];

/// The wildcard-heavy real file, and candidates if it is missing from the
/// archive.
const REAL_FILES: [&str; 3] = [
    "latest/www.linkedin.com.txt",
    "latest/ebay.com.txt",
    "latest/www.amazon.com.txt",
];

/// Synthetic URLs generated for the real file.
const SYNTHETIC_URLS: usize = 10_000;

struct Corpus {
    name: String,
    dialect: Dialect,
    robots: Vec<u8>,
    /// URLs, one per line, each line ending in `\n`.
    urls: Vec<u8>,
}

impl Corpus {
    fn lines(&self) -> impl Iterator<Item = &[u8]> {
        lines(&self.urls)
    }

    fn line_len(&self) -> u64 {
        self.lines().count() as u64
    }

    fn compiler(&self) -> Compiler {
        Compiler::with_config(Config::new().dialect(self.dialect))
    }
}

/// The lines of a newline-terminated buffer (the final `\n` does not start
/// an empty line).
fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.strip_suffix(b"\n").unwrap_or(buf).split(|&b| b == b'\n')
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sample() -> Corpus {
    let dir = repo().join("data/sample");
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("reading data/sample/{name}: {e}"))
    };
    let mut urls = read("urls.txt");
    if !urls.ends_with(b"\n") {
        urls.push(b'\n');
    }
    Corpus {
        name: "sample".into(),
        dialect: Dialect::Rfc9309,
        robots: read("robots.txt"),
        urls,
    }
}

/// The first of [`REAL_FILES`] in `../shared/data/robots-latest.tar.gz`, or
/// the reason it is unavailable.
fn real() -> Result<Corpus, String> {
    let archive = repo().join("../shared/data/robots-latest.tar.gz");
    if !archive.exists() {
        return Err(format!("{} does not exist", archive.display()));
    }
    let listing = tar(&archive, &["-tzf"], None)?;
    let listing = String::from_utf8_lossy(&listing);
    let Some(member) =
        REAL_FILES.iter().find(|m| listing.lines().any(|l| l == **m))
    else {
        return Err(format!(
            "none of {REAL_FILES:?} in {}",
            archive.display()
        ));
    };
    let robots = tar(&archive, &["-xzOf"], Some(member))?;
    let host = member
        .strip_prefix("latest/")
        .and_then(|m| m.strip_suffix(".txt"))
        .expect("member names are latest/<host>.txt");
    let dialect = Dialect::Google;
    let urls = synthetic_urls(&robots, dialect, host, SYNTHETIC_URLS);
    let name = host.trim_start_matches("www.").split('.').next();
    Ok(Corpus { name: name.unwrap_or(host).into(), dialect, robots, urls })
}

fn tar(
    archive: &Path,
    flags: &[&str],
    member: Option<&str>,
) -> Result<Vec<u8>, String> {
    let out = Command::new("tar")
        .args(flags)
        .arg(archive)
        .args(member)
        .output()
        .map_err(|e| format!("running tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar {flags:?} {} failed: {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// Deterministic URLs that exercise the rules of every group the benchmarked
/// agents see: for each rule, its literal text with every `*` replaced by a
/// short random run (so wildcard rules match), near misses (last octet
/// changed), extensions and queries. Same generator as
/// `tools/engine-compare`.
fn synthetic_urls(
    robots: &[u8],
    dialect: Dialect,
    host: &str,
    n: usize,
) -> Vec<u8> {
    let parsed = RobotsTxt::parse(robots, dialect);
    let patterns: Vec<&[u8]> = AGENTS
        .iter()
        .flat_map(|a| parsed.select(&[a]).rules().to_vec())
        .map(|r| r.pattern())
        .filter(|p| !p.is_empty())
        .collect();
    let mut rng = SplitMix64(0x5eed_b0b5);
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(b"https://");
        out.extend_from_slice(host.as_bytes());
        if patterns.is_empty() || i % 10 == 0 {
            random_path(&mut rng, &mut out);
        } else {
            let p = patterns[rng.below(patterns.len())];
            instantiate(&mut rng, p, &mut out);
        }
        out.push(b'\n');
    }
    out
}

/// Appends a path that a pattern matches (or nearly matches).
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
        // As is: an exact hit, end anchor included.
        0 => {}
        // Near miss: the last octet changed.
        1 => {
            if out.len() > start + 1 {
                let last = out.len() - 1;
                out[last] = b"xyz0_"[rng.below(5)];
            }
        }
        // Longer path.
        2 => {
            out.push(b'/');
            random_run(rng, out, 1, 12);
        }
        // Query.
        _ => {
            out.extend_from_slice(b"?id=");
            random_run(rng, out, 1, 8);
        }
    }
}

fn random_path(rng: &mut SplitMix64, out: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(3) {
        out.push(b'/');
        random_run(rng, out, 1, 10);
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

/// Allowed URLs per agent, by the direct matcher.
fn expected(m: &Matcher<'_, '_>, corpus: &Corpus) -> u64 {
    corpus.lines().filter(|u| m.explain(u).verdict().is_allow()).count() as u64
}

/// The verdict counts data/README.md documents for the sample's 300 URL
/// lines (rfc9309): a check of the oracle itself.
fn check_sample_readme(rules: &Rules<'_>, corpus: &Corpus) {
    for (agent, allow, disallow) in
        [("googlebot", 270, 30), ("somebot", 243, 57)]
    {
        let m = rules.matcher(agent).expect("all agents compiled");
        let urls = corpus.lines().filter(|l| l.starts_with(b"https://"));
        let (mut a, mut d) = (0, 0);
        for u in urls {
            match m.explain(u).verdict() {
                Verdict::Allow => a += 1,
                Verdict::Disallow => d += 1,
            }
        }
        assert_eq!(
            (a, d),
            (allow, disallow),
            "sample {agent}: counts differ from data/README.md"
        );
    }
}

fn benchmarks(c: &mut Criterion) {
    let mut corpora = vec![sample()];
    match real() {
        Ok(corpus) => corpora.push(corpus),
        Err(why) => eprintln!("skipping the real-file benchmarks: {why}"),
    }
    for corpus in &corpora {
        bench_corpus(c, corpus);
    }
}

fn bench_corpus(c: &mut Criterion, corpus: &Corpus) {
    let name = &corpus.name;
    let compiler = corpus.compiler();
    let compiled = compiler.compile(&corpus.robots).expect("compiles");
    let aligned = AlignedBytes::from(&compiled[..]);
    let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
    if name == "sample" {
        check_sample_readme(&rules, corpus);
    }
    let urls = corpus.line_len();

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(corpus.robots.len() as u64));
    let groups = compiler.parse(&corpus.robots).groups().len();
    g.bench_function(name.as_str(), |b| {
        b.iter(|| {
            let parsed = compiler.parse(black_box(&corpus.robots));
            assert_eq!(parsed.groups().len(), groups);
            parsed
        })
    });
    g.finish();

    let mut g = c.benchmark_group("compile");
    g.throughput(Throughput::Bytes(corpus.robots.len() as u64));
    g.bench_function(name.as_str(), |b| {
        b.iter(|| {
            let bytes = compiler.compile(black_box(&corpus.robots)).unwrap();
            assert_eq!(bytes.len(), compiled.len());
            bytes
        })
    });
    g.finish();

    let mut g = c.benchmark_group("load");
    g.throughput(Throughput::Bytes(compiled.len() as u64));
    let group_len = rules.groups().count();
    g.bench_function(name.as_str(), |b| {
        b.iter(|| {
            let r = Rules::from_bytes(black_box(aligned.as_bytes())).unwrap();
            assert_eq!(r.groups().count(), group_len);
            r
        })
    });
    g.finish();

    let list: Vec<&[u8]> = corpus.lines().collect();
    for agent in AGENTS {
        let m = rules.matcher(agent).expect("all agents compiled");
        let allowed = expected(&m, corpus);
        let id = format!("{name}/{agent}");

        let mut g = c.benchmark_group("decide");
        g.throughput(Throughput::Elements(urls));
        g.bench_function(&id, |b| {
            b.iter(|| {
                let n = black_box(&list)
                    .iter()
                    .filter(|u| m.decide(u).is_allow())
                    .count() as u64;
                assert_eq!(n, allowed, "decide {id}");
                n
            })
        });
        g.finish();

        let mut g = c.benchmark_group("filter");
        g.throughput(Throughput::Elements(urls));
        g.bench_function(&id, |b| {
            b.iter(|| {
                let n = lines(black_box(&corpus.urls))
                    .filter(|u| m.is_allowed(u))
                    .count() as u64;
                assert_eq!(n, allowed, "filter {id}");
                n
            })
        });
        g.finish();
    }
}

fn config() -> Criterion {
    // Shorter than the defaults so that a full run takes about two minutes;
    // pass `--measurement-time` for more.
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
}

criterion_group! {
    name = benches;
    config = config();
    targets = benchmarks
}
criterion_main!(benches);
