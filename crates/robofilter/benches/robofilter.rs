// Criterion benchmarks: parse, compile, load, decide, end-to-end filter, and
// multi-host bundles (build, open, decide).
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
// Bundles (`bundle-*`), built with `BundleBuilder` (google dialect):
//
// - `bench2019`: the 1,559 robots.txt files of
//   `../shared/data/robots-bench-2019.tar.gz` (`<dir>/<host>.txt`: the file
//   name is the host, as a user would pass them), and the 111,823 URLs of
//   `../shared/data/urls-bench-links.txt.gz`, a crawl of 1,265 hosts; URLs
//   whose host has no file are `unknown`. Skipped, with the reason printed,
//   when either file is absent. Built on first use (about 20 s).
// - `synthetic70k` (`bundle-open` only): 70,000 hosts, each with its own
//   one-rule robots.txt, for the open time at the scale of the full corpus
//   (74,637 hosts).
//
// `split-walk` needs no data: a synthetic wildcard group (`SPLIT_GROUP`)
// compiled whole and split into parts, over synthetic paths.
//
// Every benchmark asserts its answer, so that a fast wrong answer fails
// instead of being reported: the decide and filter benchmarks their
// allow/disallow (and unknown) counts, computed once up front with the direct
// matcher (`Matcher::explain`); the others what they parsed, compiled or
// loaded (groups, octets, hosts and members). See benches/README.md.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};
use robofilter::{
    AlignedBytes, Bundle, BundleBuilder, Compiler, Config, Dialect,
    EngineKind, Fetch, HostCache, HostRules, MatchPath, Matcher, Outcome,
    RobotsTxt, Rules, UrlChecker, Verdict,
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

/// Hosts (and members) of the synthetic bundle that `bundle-open` opens, at
/// the scale of the full robots corpus (74,637 hosts).
const SYNTHETIC_HOSTS: usize = 70_000;

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
    // The workspace root, two levels above this crate.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `$ROBOFILTER_SHARED`, else `../shared` next to the repository (as in
/// tests/util.rs: a worktree elsewhere names it with the variable).
fn shared() -> PathBuf {
    std::env::var_os("ROBOFILTER_SHARED")
        .map_or_else(|| repo().join("../shared"), PathBuf::from)
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
    let archive = shared().join("data/robots-latest.tar.gz");
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
    run(Command::new("tar").args(flags).arg(archive).args(member))
}

/// The decompressed contents of a gzip file.
fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    run(Command::new("gzip").arg("-dc").arg(path))
}

/// A command's stdout, or why it failed.
fn run(cmd: &mut Command) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("running {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// Deterministic URLs that exercise the rules of every group the benchmarked
/// agents see: for each rule, its literal text with every `*` replaced by a
/// short random run (so wildcard rules match), near misses (last octet
/// changed), extensions and queries. Same generator as
/// `tools/compare (engine-compare)`.
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
fn expected(m: &Matcher<'_>, corpus: &Corpus) -> u64 {
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
    match host_corpus() {
        Ok(corpus) => bench_bundle(c, &corpus),
        Err(why) => eprintln!("skipping the bundle benchmarks: {why}"),
    }
    bench_open_synthetic(c);
    bench_split_walk(c);
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

    bench_lines(c, corpus);

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

        bench_walk(c, &m, &list, allowed, &id);
        bench_direct(c, corpus, agent, &list, allowed, &id);

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

/// `lines/<name>/{newline,scan_next,two_pass}`: reading a frontier's
/// lines without deciding them. `newline` is the floor (memchr's newline
/// search alone); `scan_next` is how `filter` reads a chunk (one pass per
/// line finds its end and classifies it, [`robofilter::next_url_line`]);
/// `two_pass` is the way before issue 13 (the newlines first, then
/// [`robofilter::url_line`] on each line).
fn bench_lines(c: &mut Criterion, corpus: &Corpus) {
    let buf = &corpus.urls[..];
    let urls = lines(buf)
        .filter(|l| robofilter::url_line(l, l.len()).is_some())
        .count();
    let mut g = c.benchmark_group("lines");
    g.throughput(Throughput::Bytes(buf.len() as u64));
    g.bench_function(format!("{}/newline", corpus.name), |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(buf)).count())
    });
    g.bench_function(format!("{}/scan_next", corpus.name), |b| {
        b.iter(|| {
            let (mut start, mut n) = (0, 0);
            let buf = black_box(buf);
            while start < buf.len() {
                let (len, url) = robofilter::next_url_line(&buf[start..]);
                n += usize::from(url.is_some());
                start += len + 1;
            }
            assert_eq!(n, urls);
            n
        })
    });
    g.bench_function(format!("{}/two_pass", corpus.name), |b| {
        b.iter(|| {
            let (mut start, mut n) = (0, 0);
            let buf = black_box(buf);
            for nl in memchr::memchr_iter(b'\n', buf) {
                let rest = &buf[start..];
                n += usize::from(
                    robofilter::url_line(rest, nl - start).is_some(),
                );
                start = nl + 1;
            }
            if start < buf.len() {
                let rest = &buf[start..];
                n += usize::from(
                    robofilter::url_line(rest, rest.len()).is_some(),
                );
            }
            assert_eq!(n, urls);
            n
        })
    });
    g.finish();
}

/// Times [`Matcher::decide_path`] over `paths` as `id` in `g`, asserting
/// that `allowed` of them are allowed.
fn bench_paths(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    m: &Matcher<'_>,
    paths: &[MatchPath<'_>],
    allowed: u64,
) {
    g.bench_function(id, |b| {
        b.iter(|| {
            let n = black_box(paths)
                .iter()
                .filter(|&&p| m.decide_path(p).is_allow())
                .count() as u64;
            assert_eq!(n, allowed, "{id}");
            n
        })
    });
}

/// Paths per call of the batch API in the `walk` benchmarks.
const BATCH: usize = 64;

/// `walk/<id>/{path,batch}`: the walks alone (paths extracted up front),
/// one `Matcher::decide_path` per URL against `Matcher::decide_paths` on
/// batches of [`BATCH`] paths (issue 13: interleaved lanes).
fn bench_walk(
    c: &mut Criterion,
    m: &Matcher<'_>,
    list: &[&[u8]],
    allowed: u64,
    id: &str,
) {
    let paths: Vec<MatchPath<'_>> =
        list.iter().map(|u| MatchPath::parse(u, m.dialect())).collect();
    let mut g = c.benchmark_group("walk");
    g.throughput(Throughput::Elements(paths.len() as u64));
    bench_paths(&mut g, &format!("{id}/path"), m, &paths, allowed);
    let mut out = [Verdict::Allow; BATCH];
    g.bench_function(format!("{id}/batch"), |b| {
        b.iter(|| {
            let mut n = 0;
            for chunk in black_box(&paths).chunks(BATCH) {
                let out = &mut out[..chunk.len()];
                m.decide_paths(chunk, out);
                n += out.iter().filter(|v| v.is_allow()).count() as u64;
            }
            assert_eq!(n, allowed, "walk {id}/batch");
            n
        })
    });
    g.finish();
}

/// `direct/<id>/{matcher,path}`: the direct matcher, the engine of groups
/// over the automaton budget, on the same rules compiled with no work
/// budget for automata: building a matcher (its candidate filter: prefixes sorted,
/// octet pairs hashed) and deciding each path with it.
fn bench_direct(
    c: &mut Criterion,
    corpus: &Corpus,
    agent: &str,
    list: &[&[u8]],
    allowed: u64,
    id: &str,
) {
    let config = Config::new().dialect(corpus.dialect).file_work_limit(1);
    let bytes = Compiler::with_config(config)
        .compile(&corpus.robots)
        .expect("compiles");
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).expect("loads");
    let m = rules.matcher(agent).expect("all agents compiled");
    let engine =
        m.group().and_then(|g| rules.groups().nth(g)).map(|g| g.engine());
    if engine != Some(EngineKind::Direct) {
        eprintln!("skipping direct/{id}: its group's engine is {engine:?}");
        return;
    }
    let paths: Vec<MatchPath<'_>> =
        list.iter().map(|u| MatchPath::parse(u, m.dialect())).collect();
    let mut g = c.benchmark_group("direct");
    g.bench_function(format!("{id}/matcher"), |b| {
        b.iter(|| rules.matcher(black_box(agent)).expect("agent"))
    });
    g.throughput(Throughput::Elements(paths.len() as u64));
    bench_paths(&mut g, &format!("{id}/path"), &m, &paths, allowed);
    g.finish();
}

/// A mixed-host corpus: one robots.txt per host, and URLs of many hosts.
struct HostCorpus {
    name: String,
    /// Host (the file name without `.txt`) and robots.txt body.
    files: Vec<(String, Vec<u8>)>,
    /// URLs, one per line, each line ending in `\n`.
    urls: Vec<u8>,
}

/// The `bench2019` corpus from `../shared/data`, or the reason it is
/// unavailable.
fn host_corpus() -> Result<HostCorpus, String> {
    let data = shared().join("data");
    let archive = data.join("robots-bench-2019.tar.gz");
    let url_list = data.join("urls-bench-links.txt.gz");
    if let Some(p) = [&archive, &url_list].into_iter().find(|p| !p.exists()) {
        return Err(format!("{} does not exist", p.display()));
    }
    let mut files = Vec::new();
    for (path, body) in tar_files(&gunzip(&archive)?)? {
        let name = path.rsplit('/').next().unwrap_or(&path);
        let Some(host) = name.strip_suffix(".txt") else {
            return Err(format!("{path}: not a <dir>/<host>.txt member"));
        };
        files.push((host.to_string(), body.to_vec()));
    }
    let mut urls = gunzip(&url_list)?;
    if !urls.is_empty() && !urls.ends_with(b"\n") {
        urls.push(b'\n');
    }
    Ok(HostCorpus { name: "bench2019".into(), files, urls })
}

/// The regular files of an uncompressed tar archive (ustar or GNU), as
/// (path, contents), in archive order.
fn tar_files(tar: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    const BLOCK: usize = 512;
    let mut files = Vec::new();
    let mut long_name = None;
    let mut rest = tar;
    while rest.len() >= BLOCK {
        let (header, body) = rest.split_at(BLOCK);
        if header.iter().all(|&b| b == 0) {
            break; // the end-of-archive blocks
        }
        let size = std::str::from_utf8(until_nul(&header[124..136]))
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 8).ok())
            .ok_or("tar: bad size field")?;
        let data = body.get(..size).ok_or("tar: truncated entry")?;
        let path = long_name.take().unwrap_or_else(|| {
            let name = String::from_utf8_lossy(until_nul(&header[..100]));
            // POSIX ustar may split the path; GNU's `ustar  ` does not.
            let prefix = until_nul(&header[345..500]);
            if &header[257..263] == b"ustar\0" && !prefix.is_empty() {
                format!("{}/{name}", String::from_utf8_lossy(prefix))
            } else {
                name.into_owned()
            }
        });
        match header[156] {
            b'0' | 0 => files.push((path, data)),
            b'5' => {} // a directory
            // GNU: the next entry's name, too long for its header.
            b'L' => {
                long_name =
                    Some(String::from_utf8_lossy(until_nul(data)).into())
            }
            t => {
                return Err(format!(
                    "tar: {path}: entry type {:?} is not supported",
                    char::from(t)
                ));
            }
        }
        rest = &body[size.next_multiple_of(BLOCK).min(body.len())..];
    }
    Ok(files)
}

/// A NUL-padded field without its padding.
fn until_nul(field: &[u8]) -> &[u8] {
    &field[..field.iter().position(|&b| b == 0).unwrap_or(field.len())]
}

/// Verdict counts over a URL list through a bundle.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
struct Counts {
    allow: u64,
    disallow: u64,
    /// No authority, or the bundle has no entry for it.
    unknown: u64,
}

/// How the bundle decides `url`'s host, or `None` (unknown). `key` is
/// scratch space for the authority.
#[inline]
fn host_rules(
    bundle: &Bundle<'_>,
    url: &[u8],
    key: &mut Vec<u8>,
) -> Option<HostRules> {
    if !robofilter::url_authority(url, key) {
        return None;
    }
    bundle.find(key).map(|i| bundle.host(i).rules())
}

/// Counts the verdicts of `urls` as `robofilter filter` decides them with a
/// bundle, without its last-host cache: per URL the authority, the host
/// lookup, and the member's matcher (`matchers[m]`, built up front for
/// every member in use) or the host's fixed verdict. `decide` is
/// `Matcher::decide`, or the direct matcher for the expected counts.
#[inline]
fn tally<'r, 'a>(
    bundle: &Bundle<'_>,
    matchers: &[Option<Matcher<'a>>],
    urls: &[&[u8]],
    decide: impl Fn(&Matcher<'a>, &[u8]) -> Verdict,
) -> Counts {
    let mut key = Vec::new();
    let mut n = Counts::default();
    for url in urls {
        let verdict = host_rules(bundle, url, &mut key).map(|r| match r {
            HostRules::Member(m) => {
                decide(matchers[m].as_ref().expect("member in use"), url)
            }
            HostRules::AllowAll => Verdict::Allow,
            HostRules::DisallowAll => Verdict::Disallow,
        });
        match verdict {
            Some(Verdict::Allow) => n.allow += 1,
            Some(Verdict::Disallow) => n.disallow += 1,
            None => n.unknown += 1,
        }
    }
    n
}

/// A host corpus's bundle, loaded, with what the `bundle-decide`
/// benchmarks of every agent need.
struct Loaded<'b> {
    bundle: Bundle<'b>,
    /// Every member, loaded (and so checked) once.
    members: Vec<Rules<'b>>,
    /// The members some URL needs: a filter run builds their matchers.
    used: Vec<bool>,
    /// URLs without an authority or whose host has no file.
    unknown: u64,
}

impl<'b> Loaded<'b> {
    fn new(
        corpus: &HostCorpus,
        bytes: &'b AlignedBytes,
        urls: &[&[u8]],
    ) -> Loaded<'b> {
        let name = &corpus.name;
        let bundle = Bundle::from_bytes(bytes.as_bytes()).expect("loads");
        let members: Vec<Rules<'b>> = (0..bundle.member_len())
            .map(|m| {
                bundle.member(m).unwrap_or_else(|e| panic!("member {m}: {e}"))
            })
            .collect();
        let mut used = vec![false; members.len()];
        let mut key = Vec::new();
        for url in urls {
            if let Some(HostRules::Member(m)) =
                host_rules(&bundle, url, &mut key)
            {
                used[m] = true;
            }
        }
        // The unknown count without the bundle: authorities that are no
        // file name.
        let names: HashSet<Vec<u8>> = corpus
            .files
            .iter()
            .map(|(h, _)| robofilter::normalize_host(h).unwrap().into())
            .collect();
        let unknown = urls
            .iter()
            .filter(|u| {
                !robofilter::url_authority(u, &mut key)
                    || !names.contains(&key)
            })
            .count() as u64;
        eprintln!(
            "bundle {name}: {} hosts, {} members ({} in use), {} octets; \
             {} URLs, {unknown} unknown",
            bundle.host_len(),
            members.len(),
            used.iter().filter(|&&u| u).count(),
            bytes.as_bytes().len(),
            urls.len(),
        );
        Loaded { bundle, members, used, unknown }
    }
}

fn bench_bundle(c: &mut Criterion, corpus: &HostCorpus) {
    let name = &corpus.name;
    // Every file as a 200 response: each host is decided by its body.
    let fetches = || -> Vec<(&str, Fetch)> {
        let http = |body: &Vec<u8>| Fetch::http(200, 0, body.clone());
        corpus.files.iter().map(|(h, body)| (h.as_str(), http(body))).collect()
    };
    let config = Config::new().dialect(Dialect::Google);
    let build = |fetches: Vec<(&str, Fetch)>| {
        let mut builder = BundleBuilder::new(config.clone());
        for (host, fetch) in fetches {
            builder.add(host, fetch).expect("file names are host names");
        }
        builder.finish().expect("bundle builds")
    };
    // Hosts serving the same bytes share one member.
    let bodies: HashSet<&[u8]> =
        corpus.files.iter().map(|(_, b)| &b[..]).collect();
    let (host_len, member_len) = (corpus.files.len(), bodies.len());
    let check = |bytes: &AlignedBytes| {
        let bundle = Bundle::from_bytes(bytes.as_bytes()).expect("loads");
        assert_eq!(
            (bundle.host_len(), bundle.member_len()),
            (host_len, member_len),
            "bundle {name}: (hosts, members)"
        );
    };
    // The bundle, built once on first use (it takes seconds: other filters
    // should not pay for it), or kept from `bundle-build`.
    let built = OnceCell::new();
    let bytes = || {
        built.get_or_init(|| {
            let bytes = AlignedBytes::from(&build(fetches())[..]);
            check(&bytes);
            bytes
        })
    };

    let mut g = c.benchmark_group("bundle-build");
    // Seconds per build: ten samples of one build each, no warm-up.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(10));
    let body_len: usize = corpus.files.iter().map(|(_, b)| b.len()).sum();
    g.throughput(Throughput::Bytes(body_len as u64));
    g.bench_function(name.as_str(), |b| {
        // Only `add` and `finish` are timed, not the copies of the bodies
        // nor the check.
        b.iter_custom(|iters| {
            let mut time = Duration::ZERO;
            for _ in 0..iters {
                let input = fetches();
                let start = Instant::now();
                let out = build(black_box(input));
                time += start.elapsed();
                let out = AlignedBytes::from(&out[..]);
                check(&out);
                let _ = built.set(out);
            }
            time
        })
    });
    g.finish();

    bench_open(c, name, bytes, host_len, member_len);

    let urls: Vec<&[u8]> = lines(&corpus.urls).collect();
    // The same URLs grouped by host (sorted by authority), and shuffled.
    let mut sorted = urls.clone();
    sorted.sort_by_cached_key(|u| {
        let mut k = Vec::new();
        robofilter::url_authority(u, &mut k);
        k
    });
    let mut shuffled = urls.clone();
    let mut rng = SplitMix64(0x5eed_5417);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i + 1));
    }
    let loaded = OnceCell::new();
    let loaded = || loaded.get_or_init(|| Loaded::new(corpus, bytes(), &urls));
    for agent in AGENTS {
        // The agent's matcher of every member in use, and the expected
        // counts, on first use.
        let state = OnceCell::new();
        let state = || {
            state.get_or_init(|| {
                let l = loaded();
                let matchers: Vec<Option<Matcher<'_>>> = l
                    .members
                    .iter()
                    .zip(&l.used)
                    .map(|(rules, &used)| {
                        used.then(|| rules.matcher(agent).expect("all agents"))
                    })
                    .collect();
                let want = tally(&l.bundle, &matchers, &urls, |m, u| {
                    m.explain(u).verdict()
                });
                assert_eq!(want.unknown, l.unknown, "{name}: unknown URLs");
                (&l.bundle, matchers, want)
            })
        };
        let id = format!("{name}/{agent}");
        bench_members(c, loaded, agent, &id);
        bench_bundle_walk(c, state, &shuffled, &id);
        for (group, list) in [
            ("bundle-decide", &urls),
            ("bundle-decide-sorted", &sorted),
            ("bundle-decide-shuffled", &shuffled),
        ] {
            let mut g = c.benchmark_group(group);
            g.throughput(Throughput::Elements(list.len() as u64));
            g.bench_function(&id, |b| {
                let (bundle, matchers, want) = state();
                b.iter(|| {
                    let list = black_box(list);
                    let n = tally(bundle, matchers, list, Matcher::decide);
                    assert_eq!(n, *want, "{group}/{id}");
                    n
                })
            });
            g.finish();
        }
    }
}

/// `bundle-members/<id>`: what a filter run pays the first time a URL
/// needs a member, for every member the URLs use: the member checked and
/// read (`Bundle::member`: its checksum, its tables, every automaton's
/// bounds), then the agent's matcher (a direct group's candidate index
/// built). The answer asserted: how many of them give the agent a group.
fn bench_members<'b>(
    c: &mut Criterion,
    loaded: impl Fn() -> &'b Loaded<'b>,
    agent: &str,
    id: &str,
) {
    let mut g = c.benchmark_group("bundle-members");
    g.bench_function(id, |b| {
        let l = loaded();
        let used: Vec<usize> =
            (0..l.used.len()).filter(|&m| l.used[m]).collect();
        let grouped = |rules: &Rules<'_>| {
            rules.matcher(agent).expect("all agents").group().is_some()
        };
        let want = used.iter().filter(|&&m| grouped(&l.members[m])).count();
        b.iter(|| {
            let n = used
                .iter()
                .filter(|&&m| {
                    let rules = l.bundle.member(black_box(m)).expect("loads");
                    grouped(&rules)
                })
                .count();
            assert_eq!(n, want, "bundle-members/{id}");
            n
        })
    });
    g.finish();
}

/// `bundle-walk/<id>/{path,batch}`: the walks alone of the URLs (in
/// `list`'s order) that a member decides, each with its host's matcher:
/// one `Matcher::decide_path` per URL against `Matcher::decide_batch` on
/// batches of [`BATCH`] (matcher, path) pairs. Hosts and paths are looked
/// up front.
fn bench_bundle_walk<'r, 'a: 'r, 'b>(
    c: &mut Criterion,
    state: impl Fn() -> &'b (&'b Bundle<'b>, Vec<Option<Matcher<'a>>>, Counts),
    list: &[&[u8]],
    id: &str,
) where
    'r: 'b,
{
    let mut g = c.benchmark_group("bundle-walk");
    let items = OnceCell::new();
    let items = || {
        items.get_or_init(|| {
            let (bundle, matchers, _) = state();
            let mut key = Vec::new();
            let items: Vec<(&Matcher<'_>, MatchPath<'_>)> = list
                .iter()
                .filter_map(|u| match host_rules(bundle, u, &mut key)? {
                    HostRules::Member(i) => {
                        let m = matchers[i].as_ref().expect("in use");
                        Some((m, MatchPath::parse(u, m.dialect())))
                    }
                    _ => None,
                })
                .collect();
            let allowed = items
                .iter()
                .filter(|(m, p)| m.decide_path(*p).is_allow())
                .count() as u64;
            // No criterion throughput: it would build the bundle even when
            // a filter skips this group. ns/URL = time / this count.
            eprintln!("bundle-walk {id}: {} URLs per iteration", items.len());
            (items, allowed)
        })
    };
    g.bench_function(format!("{id}/path"), |b| {
        let (items, allowed) = items();
        b.iter(|| {
            let n = black_box(items)
                .iter()
                .filter(|(m, p)| m.decide_path(*p).is_allow())
                .count() as u64;
            assert_eq!(n, *allowed, "bundle-walk {id}/path");
            n
        })
    });
    g.bench_function(format!("{id}/batch"), |b| {
        let (items, allowed) = items();
        let mut out = [Verdict::Allow; BATCH];
        b.iter(|| {
            let mut n = 0;
            for chunk in black_box(items).chunks(BATCH) {
                let out = &mut out[..chunk.len()];
                Matcher::decide_batch(chunk, out);
                n += out.iter().filter(|v| v.is_allow()).count() as u64;
            }
            assert_eq!(n, *allowed, "bundle-walk {id}/batch");
            n
        })
    });
    g.finish();
}

/// `bundle-open/<name>`: `Bundle::from_bytes`, which checks the index (its
/// checksum, every host, slot and member extent) but no member. `aligned`
/// gives the bundle on first use.
fn bench_open<'b>(
    c: &mut Criterion,
    name: &str,
    aligned: impl Fn() -> &'b AlignedBytes,
    host_len: usize,
    member_len: usize,
) {
    let mut g = c.benchmark_group("bundle-open");
    g.bench_function(name, |b| {
        let bytes = aligned().as_bytes();
        b.iter(|| {
            let bundle = Bundle::from_bytes(black_box(bytes)).expect("loads");
            assert_eq!(
                (bundle.host_len(), bundle.member_len()),
                (host_len, member_len),
                "bundle-open {name}: (hosts, members)"
            );
            bundle.host_len()
        })
    });
    g.finish();
}

/// `bundle-open/synthetic70k`: a bundle of [`SYNTHETIC_HOSTS`] hosts, each
/// with its own one-rule robots.txt: as many members as hosts, the worst
/// case for the open time, which does not depend on the members' sizes.
/// Built on first use, so that other filters do not pay for it.
fn bench_open_synthetic(c: &mut Criterion) {
    let built = OnceCell::new();
    let build = || {
        let mut b = BundleBuilder::new(Config::new());
        for i in 0..SYNTHETIC_HOSTS {
            let body = format!("User-agent: *\nDisallow: /{i}/\n");
            let fetch = Fetch::http(200, 0, body.into());
            b.add(&format!("host{i}.example"), fetch).expect("valid host");
        }
        AlignedBytes::from(&b.finish().expect("bundle builds")[..])
    };
    let (n, name) = (SYNTHETIC_HOSTS, "synthetic70k");
    bench_open(c, name, || built.get_or_init(build), n, n);
}

/// Wildcard rules of the kind large sites write (extensions anywhere, `*`
/// between segments, queries): one DFA of about 30 KiB, or a few score
/// DFAs under a state budget.
const SPLIT_GROUP: &[u8] = b"user-agent: *\n\
    disallow: /*.json\ndisallow: /*.xml\ndisallow: /*.rss\n\
    disallow: /*.embed\ndisallow: /*/thread/*?*order=\n\
    disallow: /f/*/thread/*/*/c*\ndisallow: /thread/*/*/c*\n\
    disallow: /f/*/new$\ndisallow: /*after=\ndisallow: /*before=\n\
    disallow: /site/*t=\ndisallow: /f/*/member/\nallow: /\n\
    allow: /maps/*.xml\n";

/// `split-walk/<n>parts`: one `Matcher::decide_path` per path through a
/// group split into `n` score DFAs (walked up to four at a time in
/// lockstep), beside `split-walk/dfa`, the same group as one automaton:
/// what splitting costs per path. 10,000 synthetic URLs, paths of 20-70 octets
/// (segments of `/f/`, `/thread/`, words, queries), google dialect.
fn bench_split_walk(c: &mut Criterion) {
    let mut rng = SplitMix64(13);
    let mut paths: Vec<Vec<u8>> = Vec::new();
    const PIECES: [&[u8]; 8] = [
        b"/f/",
        b"/thread/",
        b"/c",
        b".json",
        b"?order=",
        b"?after=",
        b"/",
        b"-",
    ];
    while paths.len() < 10_000 {
        let mut p = b"http://h".to_vec();
        while p.len() < 28 + rng.below(50) {
            if rng.below(4) == 0 {
                p.extend_from_slice(PIECES[rng.below(PIECES.len())]);
            } else {
                random_run(&mut rng, &mut p, 1, 10);
            }
        }
        paths.push(p);
    }
    let dialect = Dialect::Google;
    let compile = |config: Config| {
        let bytes = Compiler::with_config(config.dialect(dialect))
            .compile(SPLIT_GROUP)
            .expect("compiles");
        AlignedBytes::from(&bytes[..])
    };
    let whole = compile(Config::new());
    let whole = Rules::from_bytes(whole.as_bytes()).expect("loads");
    let reference = whole.matcher("bot").expect("agent");
    let allowed = paths
        .iter()
        .filter(|u| reference.explain(u).verdict().is_allow())
        .count() as u64;
    let mut variants = vec![("dfa".to_string(), compile(Config::new()))];
    for states in [160, 80, 40, 20] {
        let bytes = compile(Config::new().dfa_state_limit(states));
        let rules = Rules::from_bytes(bytes.as_bytes()).expect("loads");
        let parts = rules.groups().next().expect("a group").part_len();
        if parts > 1
            && !variants.iter().any(|v| v.0 == format!("{parts}parts"))
        {
            variants.push((format!("{parts}parts"), bytes));
        }
    }
    let mut g = c.benchmark_group("split-walk");
    g.throughput(Throughput::Elements(paths.len() as u64));
    for (id, bytes) in &variants {
        let rules = Rules::from_bytes(bytes.as_bytes()).expect("loads");
        let m = rules.matcher("bot").expect("agent");
        let parsed: Vec<MatchPath<'_>> =
            paths.iter().map(|p| MatchPath::parse(p, dialect)).collect();
        bench_paths(&mut g, id, &m, &parsed, allowed);
    }
    // Whole lines through a checker (what `filter` and the wheel do): the
    // smallest split, before its group is hot and once it is (its whole
    // DFA built in memory, `src/tier.rs`), against the stored DFA.
    let split = &variants.last().expect("a split variant").1;
    for (id, bytes, hot) in [
        ("checker/dfa", &variants[0].1, false),
        ("checker/cold", split, false),
        ("checker/hot", split, true),
    ] {
        let rules = Rules::from_bytes(bytes.as_bytes()).expect("loads");
        let decide = |checker: &UrlChecker<'_>, urls: &[Vec<u8>]| {
            let mut cache = HostCache::new();
            let mut each = [Outcome::Invalid];
            let mut n = 0;
            for u in urls {
                checker.check_each(u, &mut cache, &mut each).expect("rules");
                n += u64::from(each[0] == Outcome::Allow);
            }
            n
        };
        let warm = UrlChecker::rules(&rules, &["bot"]).expect("agent");
        if hot {
            // Past the 32,768 URLs after which the group is built.
            for _ in 0..4 {
                decide(&warm, &paths);
            }
        }
        g.bench_function(id, |b| {
            b.iter(|| {
                // A cold checker is made anew: 10,000 URLs leave it cold.
                let fresh;
                let checker = if hot {
                    &warm
                } else {
                    fresh =
                        UrlChecker::rules(&rules, &["bot"]).expect("agent");
                    &fresh
                };
                let n = decide(checker, black_box(&paths));
                assert_eq!(n, allowed, "{id}");
                n
            })
        });
    }
    g.finish();
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
