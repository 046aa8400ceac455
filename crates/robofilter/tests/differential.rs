//! Differential tests: random robots.txt files and URLs, decided by the
//! compiled automata, by the direct matcher (`explain`), by the naive
//! oracle (`tests/oracle.rs`) and, for the google dialect, by the
//! `robotstxt` crate (a Rust port of the 2020 google/robotstxt code); and
//! the line `explain` names against the one that port reports
//! (`matching_line`, public in its `robotstxt-with-cache` fork).
//!
//! The default run takes a few seconds. The long runs are `#[ignore]`d:
//!
//! ```text
//! cargo test --release --test integration -- --ignored
//! ROBOFILTER_PROP_CASES=5000000 \
//!     cargo test --release --test integration -- --ignored prop
//! ```
//!
//! `ROBOFILTER_PROP_CASES` is the number of random robots.txt files of the
//! long runs (each is asked several URLs for several agents in both
//! dialects); `ROBOFILTER_REAL_FILES` caps the real-data run.
//!
//! A mismatch panics with a minimised reproduction: the robots.txt body
//! (escaped), the agent, the URL and the dialect.

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, Rules, Verdict,
};
use robotstxt::DefaultMatcher;
use robotstxt::matcher::{
    LongestMatchRobotsMatchStrategy, RobotsMatchStrategy,
};
use robotstxt::parser::{
    ParseKeyType, ParsedRobotsKey, RobotsTxtParser, escape_pattern,
};

use crate::oracle::{OracleDialect, oracle_allowed};

/// The caller agents of the random tests: two that groups name, one that
/// only `*` covers.
const AGENTS: &[&str] = &["FooBot", "BarBot", "OtherBot"];

/// Random robots.txt files in the default run.
const DEFAULT_CASES: u64 = 6000;
/// Random robots.txt files in the `#[ignore]`d run, unless
/// `ROBOFILTER_PROP_CASES` says otherwise.
const LONG_CASES: u64 = 200_000;
/// URLs asked of each random file.
const URLS_PER_FILE: usize = 8;

// The random inputs live in `random.rs`, which the CLI's tests share.
pub(crate) use crate::random::{Rng, random_robots, random_url};

// ---------------------------------------------------------------------------
// The four deciders

pub(crate) fn oracle_dialect(dialect: Dialect) -> OracleDialect {
    match dialect {
        Dialect::Google => OracleDialect::Google,
        Dialect::Rfc9309 => OracleDialect::Rfc9309,
    }
}

/// Compiles `robots` for all agents and returns the loaded file's bytes.
fn compile(robots: &[u8], dialect: Dialect) -> AlignedBytes {
    compile_with(robots, dialect, None)
}

/// As [`compile`], with a DFA state budget if given (a tiny one sends
/// groups to the direct matcher, as an over-budget group in production).
fn compile_with(
    robots: &[u8],
    dialect: Dialect,
    state_limit: Option<usize>,
) -> AlignedBytes {
    let mut config = Config::new().dialect(dialect);
    if let Some(limit) = state_limit {
        config = config.dfa_state_limit(limit);
    }
    // A state budget of 1 comes with a zero byte budget: every group that
    // needs an automaton uses the direct matcher.
    if state_limit == Some(1) {
        config = config.dfa_byte_limit(0);
    }
    let bytes = Compiler::with_config(config)
        .compile(robots)
        .unwrap_or_else(|e| panic!("compile {:?}: {e}", escaped(robots)));
    AlignedBytes::from(&bytes[..])
}

/// robofilter's two verdicts: the automaton (`decide`) and the direct
/// matcher (`explain`).
pub(crate) fn robofilter_verdicts(
    rules: &Rules<'_>,
    agent: &str,
    url: &[u8],
) -> (bool, bool) {
    let m = rules.matcher(agent).expect("compiled for all agents");
    (m.decide(url) == Verdict::Allow, m.explain(url).verdict().is_allow())
}

/// The robotstxt crate's verdict (`None`: it panicked).
pub(crate) fn crate_allowed(
    robots: &str,
    agent: &str,
    url: &str,
) -> Option<bool> {
    catch_unwind(AssertUnwindSafe(|| {
        DefaultMatcher::default()
            .one_agent_allowed_by_robots(robots, agent, url)
    }))
    .ok()
}

/// What went wrong for one (robots, agent, url, dialect).
pub(crate) fn disagreement(
    robots: &[u8],
    agent: &str,
    url: &[u8],
    dialect: Dialect,
    state_limit: Option<usize>,
) -> Option<String> {
    let aligned = compile_with(robots, dialect, state_limit);
    let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
    let (fast, slow) = robofilter_verdicts(&rules, agent, url);
    let oracle =
        oracle_allowed(robots, &[agent], url, oracle_dialect(dialect));
    if fast != slow || fast != oracle {
        Some(format!("allowed? decide={fast} explain={slow} oracle={oracle}"))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Minimisation and reports

/// `bytes` as a Rust string literal body, so that CR, NUL and non-UTF-8
/// bytes are visible in a report.
pub(crate) fn escaped(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

/// Splits a body into lines, keeping each terminator with its line.
fn split_keep_eol(robots: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in robots.iter().enumerate() {
        if b == b'\n' || b == b'\r' {
            lines.push(&robots[start..=i]);
            start = i + 1;
        }
    }
    if start < robots.len() {
        lines.push(&robots[start..]);
    }
    lines
}

/// Greedily drops robots.txt lines, then URL path bytes, while `fails`
/// still holds.
pub(crate) fn minimise(
    robots: &[u8],
    url: &[u8],
    fails: impl Fn(&[u8], &[u8]) -> bool,
) -> (Vec<u8>, Vec<u8>) {
    let mut robots = robots.to_vec();
    let mut url = url.to_vec();
    let mut i = 0;
    loop {
        let lines = split_keep_eol(&robots);
        if i >= lines.len() {
            break;
        }
        let candidate: Vec<u8> = lines
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .flat_map(|(_, l)| l.iter().copied())
            .collect();
        if fails(&candidate, &url) {
            robots = candidate;
        } else {
            i += 1;
        }
    }
    // Keep `http://x` so that the path stays recognisable.
    let mut i = "http://x".len().min(url.len());
    while i < url.len() {
        let mut candidate = url.clone();
        candidate.remove(i);
        if fails(&robots, &candidate) {
            url = candidate;
        } else {
            i += 1;
        }
    }
    (robots, url)
}

pub(crate) fn reproduction(
    what: &str,
    robots: &[u8],
    agent: &str,
    url: &[u8],
    dialect: &str,
    detail: &str,
) -> String {
    format!(
        "{what}\n  dialect: {dialect}\n  agent:   {agent:?}\n  url:     \
         \"{}\"\n  robots:  b\"{}\"\n  got:     {detail}",
        escaped(url),
        escaped(robots),
    )
}

// ---------------------------------------------------------------------------
// robofilter (automaton and direct) versus the oracle, both dialects

/// Runs `files` random robots.txt files from `seed`; returns the number of
/// comparisons, or panics with a minimised reproduction.
fn run_against_oracle(seed: u64, files: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let (mut compared, mut split_groups, mut direct_groups) = (0, 0, 0);
    for case in 0..files {
        let robots = random_robots(&mut rng);
        let urls: Vec<Vec<u8>> =
            (0..URLS_PER_FILE).map(|_| random_url(&mut rng)).collect();
        // Small state budgets exercise the split engine (score DFAs
        // combined by precedence), and a budget of 1 the direct matcher
        // with its prefix index. The unindexed direct matcher is compared
        // on every URL anyway: it is what `explain` runs.
        let state_limit = match case % 8 {
            1 => Some(1),
            3 => Some(3),
            5 => Some(12),
            7 => Some(40),
            _ => None,
        };
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let aligned = compile_with(&robots, dialect, state_limit);
            let rules = Rules::from_bytes(aligned.as_bytes())
                .unwrap_or_else(|e| panic!("case {case}: load: {e}"));
            assert_eq!(rules.dialect(), dialect);
            split_groups += rules
                .groups()
                .filter(|g| g.engine() == EngineKind::SplitDfa)
                .count();
            direct_groups += rules
                .groups()
                .filter(|g| g.engine() == EngineKind::Direct)
                .count();
            for agent in AGENTS {
                for url in &urls {
                    let (fast, slow) = robofilter_verdicts(&rules, agent, url);
                    let oracle = oracle_allowed(
                        &robots,
                        &[agent],
                        url,
                        oracle_dialect(dialect),
                    );
                    compared += 1;
                    if fast == slow && fast == oracle {
                        continue;
                    }
                    let fails = |r: &[u8], u: &[u8]| {
                        disagreement(r, agent, u, dialect, state_limit)
                            .is_some()
                    };
                    let (r, u) = minimise(&robots, url, fails);
                    let detail =
                        disagreement(&r, agent, &u, dialect, state_limit)
                            .expect("still fails");
                    panic!(
                        "{}",
                        reproduction(
                            &format!(
                                "case {case} (seed {seed:#x}, DFA state \
                                 limit {state_limit:?}): robofilter \
                                 disagrees with the oracle"
                            ),
                            &r,
                            agent,
                            &u,
                            dialect.as_str(),
                            &detail,
                        )
                    );
                }
            }
        }
    }
    assert!(
        files < 100 || split_groups > 0,
        "the split engine was never used"
    );
    assert!(
        files < 100 || direct_groups > 0,
        "the direct engine was never used"
    );
    compared
}

#[test]
fn prop_random_files_match_oracle_both_dialects() {
    let compared = run_against_oracle(0x5EED_0001, DEFAULT_CASES);
    eprintln!("oracle differential: {compared} comparisons, 0 mismatches");
    assert!(compared >= DEFAULT_CASES * 2 * 3 * URLS_PER_FILE as u64);
}

pub(crate) fn env_count(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            panic!("{name}={v:?} is not a non-negative integer")
        }),
        Err(_) => default,
    }
}

/// The long run: `ROBOFILTER_PROP_CASES` files (default 200,000: about
/// ten million comparisons). Run it with
/// `cargo test --release --test integration -- --ignored prop_long`.
#[test]
#[ignore = "long: set ROBOFILTER_PROP_CASES and run with --ignored"]
fn prop_long_random_files_match_oracle_both_dialects() {
    let files = env_count("ROBOFILTER_PROP_CASES", LONG_CASES);
    let compared = run_against_oracle(0x5EED_1000, files);
    eprintln!("oracle differential: {files} files, {compared} comparisons");
}

// ---------------------------------------------------------------------------
// robofilter (google dialect) versus the robotstxt crate

/// A known way in which the robotstxt crate differs from google/robotstxt
/// (the C++ reference, which the google dialect follows), each read from
/// the crate's source (`robotstxt-0.3.0/src/{parser,matcher}.rs`).
///
/// `applies(robots, url)` must hold for a disagreement to be accepted,
/// and the oracle must side with robofilter as well.
pub(crate) struct Divergence {
    pub(crate) name: &'static str,
    pub(crate) why: &'static str,
    pub(crate) applies: fn(&str, &str) -> bool,
}

pub(crate) const DIVERGENCES: &[Divergence] = &[
    Divergence {
        name: "bom",
        why: "parser.rs compares each decoded *char* with the BOM *bytes* \
              EF BB BF, so a real BOM (U+FEFF) is never skipped (and a \
              leading U+00EF/U+00BB/U+00BF would be)",
        applies: div_bom,
    },
    Divergence {
        name: "star-matcher",
        why: "matcher.rs `matches` inserts into the position list instead \
              of overwriting it, so after a `*` only the leftmost \
              occurrence of the next byte survives (no other candidate is \
              tried), and a final `$` looks only at that position: \
              `/blog/*/comments` misses `/blog/2024/hello-world/comments`, \
              `/*bc` misses `/xbbc`, `/*.php$` misses `/a.php/b.php` \
              (`/*c` on `/bbc` happens to work)",
        applies: div_star_matcher,
    },
    Divergence {
        name: "escape-pattern",
        why: "parser.rs `escape_pattern` skips the two bytes after every \
              `%` even when they are not hex digits (so `%%6a` keeps its \
              lower-case `a`), and when it does rewrite it drops a `%` \
              that is not followed by two hex digits",
        applies: div_escape_pattern,
    },
    Divergence {
        name: "non-ascii-path",
        why: "matcher.rs indexes the path by chars (`chars().nth`) but \
              bounds positions by its byte length, so `*` and a final `$` \
              misbehave when the path holds raw non-ASCII",
        applies: div_non_ascii_path,
    },
    Divergence {
        name: "untrimmed-no-colon",
        why: "parser.rs `parse_key_value` trims the line only when it has \
              a `#`; a colon-less line with leading whitespace then has \
              its separator at offset 0, an empty key, and is dropped (the \
              reference trims first and accepts `  disallow /a`)",
        applies: div_untrimmed_no_colon,
    },
    Divergence {
        name: "nul-in-line",
        why: "the reference parses each line as a C string (cut at NUL); \
              the crate keeps the bytes after a NUL",
        applies: div_nul,
    },
    Divergence {
        name: "unicode-whitespace",
        why: "the crate trims keys and values with `str::trim` and tests \
              `* x` with `char::is_whitespace` (Unicode whitespace such as \
              U+00A0); the reference trims ASCII whitespace only",
        applies: div_unicode_whitespace,
    },
    Divergence {
        name: "separator-lines",
        why: "matcher.rs `handle_sitemap` and `handle_unknown_action` set \
              `seen_separator`, so a sitemap or unknown line (Crawl-delay, \
              Host, ...) between two user-agent lines splits them into two \
              groups; the reference ignores such lines (docs/SEMANTICS.md \
              section 2: they never end a group)",
        applies: div_separator_lines,
    },
    Divergence {
        name: "long-line",
        why: "parser.rs cuts lines at 16663 by mixing char counts and byte \
              offsets, so a line longer than that keeps different bytes \
              (or panics on a char boundary)",
        applies: div_long_line,
    },
];

fn div_bom(robots: &str, _url: &str) -> bool {
    robots.starts_with(['\u{feff}', '\u{ef}', '\u{bb}', '\u{bf}'])
}

/// The lines of a body as the crate splits them (CR, LF, CRLF).
fn crate_lines(robots: &str) -> impl Iterator<Item = &str> {
    robots.split(['\n', '\r'])
}

/// How the crate reads a line: `Some((key type, value))` if it has a key.
fn crate_key_value(line: &str) -> Option<(ParseKeyType, &str)> {
    let (key, value, ok) =
        RobotsTxtParser::<DefaultMatcher<'_>>::parse_key_value(line);
    if !ok {
        return None;
    }
    let mut parsed = ParsedRobotsKey::default();
    parsed.parse(key);
    let kind = match parsed.get_type() {
        ParseKeyType::UserAgent => ParseKeyType::UserAgent,
        ParseKeyType::Allow => ParseKeyType::Allow,
        ParseKeyType::Disallow => ParseKeyType::Disallow,
        ParseKeyType::Sitemap => ParseKeyType::Sitemap,
        ParseKeyType::Unknown => ParseKeyType::Unknown,
    };
    Some((kind, value))
}

/// Every Allow/Disallow value of the body, as the crate reads it.
fn crate_rule_values(robots: &str) -> Vec<&str> {
    crate_lines(robots)
        .filter_map(crate_key_value)
        .filter(|(k, _)| {
            matches!(k, ParseKeyType::Allow | ParseKeyType::Disallow)
        })
        .map(|(_, v)| v)
        .collect()
}

/// The reference's pattern match (docs/SEMANTICS.md section 2), on bytes: a set
/// of reachable path positions, `*` reaching every later position.
fn reference_matches(path: &[u8], pattern: &[u8]) -> bool {
    let mut reach = vec![false; path.len() + 1];
    reach[0] = true;
    for (i, &c) in pattern.iter().enumerate() {
        if c == b'$' && i + 1 == pattern.len() {
            return reach[path.len()];
        }
        let mut next = vec![false; path.len() + 1];
        if c == b'*' {
            if let Some(first) = reach.iter().position(|&r| r) {
                next[first..].iter_mut().for_each(|n| *n = true);
            }
        } else {
            for p in 0..path.len() {
                next[p + 1] = reach[p] && path[p] == c;
            }
        }
        if !next.contains(&true) {
            return false;
        }
        reach = next;
    }
    true
}

fn div_star_matcher(robots: &str, url: &str) -> bool {
    let path = robotstxt::get_path_params_query(url);
    crate_rule_values(robots).into_iter().any(|value| {
        let pattern = escape_pattern(value);
        let mut patterns = vec![pattern.clone()];
        // The index.htm retry of Allow lines.
        if let Some(slash) = pattern.rfind('/') {
            if pattern[slash..].starts_with("/index.htm") {
                patterns.push(format!("{}$", &pattern[..=slash]));
            }
        }
        patterns.iter().any(|p| {
            let got = catch_unwind(|| {
                LongestMatchRobotsMatchStrategy::matches(&path, p)
            });
            got.ok() != Some(reference_matches(path.as_bytes(), p.as_bytes()))
        })
    })
}

/// docs/SEMANTICS.md section 2, line parsing step 6.
fn reference_escape(value: &[u8]) -> Vec<u8> {
    let hex = |b: u8| b.is_ascii_hexdigit();
    let mut out = Vec::new();
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b == b'%'
            && i + 2 < value.len()
            && hex(value[i + 1])
            && hex(value[i + 2])
        {
            out.push(b'%');
            out.push(value[i + 1].to_ascii_uppercase());
            out.push(value[i + 2].to_ascii_uppercase());
            i += 3;
        } else if b >= 0x80 {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
            i += 1;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

fn div_escape_pattern(robots: &str, _url: &str) -> bool {
    crate_rule_values(robots).into_iter().any(|v| {
        escape_pattern(v).as_bytes() != reference_escape(v.as_bytes())
    })
}

fn div_non_ascii_path(_robots: &str, url: &str) -> bool {
    !robotstxt::get_path_params_query(url).is_ascii()
}

fn div_untrimmed_no_colon(robots: &str, _url: &str) -> bool {
    crate_lines(robots).any(|line| {
        !line.contains(['#', ':'])
            && line.starts_with([' ', '\t'])
            && line.trim().contains([' ', '\t'])
    })
}

fn div_nul(robots: &str, _url: &str) -> bool {
    robots.contains('\0')
}

fn div_unicode_whitespace(robots: &str, _url: &str) -> bool {
    robots.chars().any(|c| !c.is_ascii() && c.is_whitespace())
}

fn div_separator_lines(robots: &str, _url: &str) -> bool {
    // In a run of user-agent lines (no rule yet), has a sitemap or unknown
    // line been seen?
    let mut in_agents = false;
    let mut other_seen = false;
    for (kind, _) in crate_lines(robots).filter_map(crate_key_value) {
        match kind {
            ParseKeyType::UserAgent => {
                if other_seen {
                    return true;
                }
                in_agents = true;
            }
            ParseKeyType::Allow | ParseKeyType::Disallow => {
                in_agents = false;
                other_seen = false;
            }
            ParseKeyType::Sitemap | ParseKeyType::Unknown => {
                other_seen |= in_agents;
            }
        }
    }
    false
}

fn div_long_line(robots: &str, _url: &str) -> bool {
    crate_lines(robots).any(|l| l.len() >= robofilter::MAX_LINE_LEN)
}

/// Compares the google dialect with the robotstxt crate and tallies the
/// accepted divergences.
#[derive(Default)]
struct CrateComparison {
    compared: u64,
    accepted: BTreeMap<&'static str, u64>,
    crate_panics: u64,
}

impl CrateComparison {
    /// Checks one verdict; panics with a reproduction on an unexplained
    /// mismatch. `ours` is robofilter's google-dialect verdict.
    fn check(&mut self, robots: &str, agent: &str, url: &str, ours: bool) {
        self.compared += 1;
        let theirs = crate_allowed(robots, agent, url);
        if theirs == Some(ours) {
            return;
        }
        if theirs.is_none() {
            self.crate_panics += 1;
        }
        let oracle = oracle_allowed(
            robots.as_bytes(),
            &[agent],
            url.as_bytes(),
            OracleDialect::Google,
        );
        let explained = DIVERGENCES.iter().find(|d| (d.applies)(robots, url));
        if let (Some(d), true) = (explained, oracle == ours) {
            *self.accepted.entry(d.name).or_default() += 1;
            return;
        }
        // Unexplained: minimise on "still an unexplained mismatch".
        let fails = |r: &[u8], u: &[u8]| {
            let (Ok(r), Ok(u)) =
                (std::str::from_utf8(r), std::str::from_utf8(u))
            else {
                return false;
            };
            let ours = google_allowed(r.as_bytes(), agent, u.as_bytes());
            let oracle = oracle_allowed(
                r.as_bytes(),
                &[agent],
                u.as_bytes(),
                OracleDialect::Google,
            );
            crate_allowed(r, agent, u) != Some(ours)
                && (oracle != ours
                    || !DIVERGENCES.iter().any(|d| (d.applies)(r, u)))
        };
        let (r, u) = minimise(robots.as_bytes(), url.as_bytes(), fails);
        let (rs, us) =
            (String::from_utf8_lossy(&r), String::from_utf8_lossy(&u));
        let detail = format!(
            "robofilter allowed={} robotstxt-crate={:?} oracle={}",
            google_allowed(&r, agent, &u),
            crate_allowed(&rs, agent, &us),
            oracle_allowed(&r, &[agent], &u, OracleDialect::Google),
        );
        let what = match explained {
            Some(d) => format!(
                "robofilter and the robotstxt crate disagree; divergence \
                 {:?} applies but the oracle sides with the crate",
                d.name
            ),
            None => "robofilter and the robotstxt crate disagree, and no \
                     listed divergence explains it (if the crate is wrong, \
                     add a named divergence with its cause)"
                .to_string(),
        };
        panic!("{}", reproduction(&what, &r, agent, &u, "google", &detail));
    }

    fn report(&self, what: &str) {
        let total: u64 = self.accepted.values().sum();
        eprintln!(
            "{what}: {} comparisons with the robotstxt crate, {total} \
             accepted divergences ({} crate panics)",
            self.compared, self.crate_panics
        );
        for (name, n) in &self.accepted {
            let d = DIVERGENCES.iter().find(|d| d.name == *name);
            let why = d.map_or("", |d| d.why);
            eprintln!("  {name}: {n} ({why})");
        }
    }
}

/// robofilter's google-dialect verdict, compiled for all agents.
fn google_allowed(robots: &[u8], agent: &str, url: &[u8]) -> bool {
    let aligned = compile(robots, Dialect::Google);
    let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
    rules.matcher(agent).expect("all agents").is_allowed(url)
}

fn run_against_crate(seed: u64, files: u64) -> CrateComparison {
    let mut rng = Rng::new(seed);
    let mut cmp = CrateComparison::default();
    for _ in 0..files {
        let robots = random_robots(&mut rng);
        let text = String::from_utf8(robots).expect("UTF-8");
        let aligned = compile(text.as_bytes(), Dialect::Google);
        let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
        for _ in 0..URLS_PER_FILE {
            let url = String::from_utf8(random_url(&mut rng)).expect("UTF-8");
            for agent in AGENTS {
                let m = rules.matcher(agent).expect("all agents");
                cmp.check(&text, agent, &url, m.is_allowed(url.as_bytes()));
            }
        }
    }
    cmp
}

#[test]
fn prop_random_files_match_robotstxt_crate() {
    let cmp = run_against_crate(0x5EED_0002, DEFAULT_CASES);
    cmp.report("random files");
    assert!(cmp.compared > 0);
}

#[test]
#[ignore = "long: set ROBOFILTER_PROP_CASES and run with --ignored"]
fn prop_long_random_files_match_robotstxt_crate() {
    let files = env_count("ROBOFILTER_PROP_CASES", LONG_CASES);
    run_against_crate(0x5EED_2000, files).report("random files (long)");
}

/// The line `explain` names, against the line the robotstxt crate reports
/// (`matching_line`: google's rule of the earliest line among matches of
/// equal precedence; 0 when no rule matched), with automata and with
/// every group on the direct matcher, where the verdicts agree and no
/// listed divergence applies.
#[test]
fn explain_names_the_line_the_robotstxt_crate_reports() {
    use robofilter::Reason;
    let mut rng = Rng::new(0x5EED_0003);
    let (mut compared, mut ruled) = (0, 0);
    for _ in 0..DEFAULT_CASES / 2 {
        let robots = random_robots(&mut rng);
        let text = String::from_utf8(robots).expect("UTF-8");
        let urls: Vec<String> = (0..URLS_PER_FILE)
            .map(|_| String::from_utf8(random_url(&mut rng)).expect("UTF-8"))
            .collect();
        for limit in [None, Some(1)] {
            let aligned =
                compile_with(text.as_bytes(), Dialect::Google, limit);
            let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
            for url in &urls {
                if DIVERGENCES.iter().any(|d| (d.applies)(&text, url)) {
                    continue;
                }
                for agent in AGENTS {
                    let m = rules.matcher(agent).expect("all agents");
                    let ours = m.explain(url.as_bytes());
                    let theirs = catch_unwind(AssertUnwindSafe(|| {
                        let mut c =
                            robotstxt_with_cache::DefaultMatcher::default();
                        let allowed =
                            c.one_agent_allowed_by_robots(&text, agent, url);
                        (allowed, c.matching_line())
                    }));
                    let Ok((allowed, line)) = theirs else { continue };
                    if allowed != ours.verdict().is_allow() {
                        continue;
                    }
                    let our_line = match ours.reason() {
                        Reason::Rule(r) | Reason::IndexHtml(r) => r.line(),
                        _ => 0,
                    };
                    // An empty pattern matches with precedence 0, which the
                    // reference records but which decides nothing
                    // (docs/SEMANTICS.md: no rule).
                    let line =
                        if empty_rule_at(&text, line) { 0 } else { line };
                    compared += 1;
                    ruled += u64::from(line != 0);
                    assert_eq!(
                        our_line,
                        line,
                        "{}",
                        reproduction(
                            "explain names another line than the crate",
                            text.as_bytes(),
                            agent,
                            url.as_bytes(),
                            "google",
                            &format!("{:?}", ours.reason()),
                        )
                    );
                }
            }
        }
    }
    eprintln!("{compared} reasons compared, {ruled} of them a rule's line");
    assert!(ruled > compared / 10, "{ruled} of {compared}");
}

/// Whether line `n` (1-based; a line ends at LF, CR or CRLF, as the
/// reference counts) is an Allow or Disallow with an empty value.
fn empty_rule_at(robots: &str, n: u32) -> bool {
    let Some(i) = (n as usize).checked_sub(1) else { return false };
    let line = robots.replace("\r\n", "\n").replace('\r', "\n");
    let Some(text) = line.split('\n').nth(i) else { return false };
    crate_key_value(text).is_some_and(|(k, v)| {
        matches!(k, ParseKeyType::Allow | ParseKeyType::Disallow)
            && v.is_empty()
    })
}

/// Each listed divergence, shown on a minimal example: the crate gives the
/// other verdict, robofilter and the oracle agree with docs/SEMANTICS.md.
#[test]
fn robotstxt_crate_divergences_are_real() {
    // (divergence, robots, agent, url, allowed per docs/SEMANTICS.md)
    let table: &[(&str, &str, &str, &str, bool)] = &[
        (
            "bom",
            "\u{feff}user-agent: FooBot\ndisallow: /a\n",
            "FooBot",
            "http://x/a",
            false,
        ),
        (
            "star-matcher",
            "user-agent: *\ndisallow: /blog/*/comments\n",
            "FooBot",
            "http://x/blog/2024/hello-world/comments",
            false,
        ),
        (
            "star-matcher",
            "user-agent: *\ndisallow: /*bc\n",
            "FooBot",
            "http://x/xbbc",
            false,
        ),
        (
            "star-matcher",
            "user-agent: *\ndisallow: /*.php$\n",
            "FooBot",
            "http://x/a.php/b.php",
            false,
        ),
        (
            "escape-pattern",
            "user-agent: *\nallow: /%%6a\ndisallow: /%\n",
            "FooBot",
            "http://x/%%6A",
            true,
        ),
        (
            "non-ascii-path",
            "user-agent: *\ndisallow: /*a$\n",
            "FooBot",
            "http://x/\u{30c4}a",
            false,
        ),
        (
            "untrimmed-no-colon",
            "user-agent: *\n  disallow /a\n",
            "FooBot",
            "http://x/a",
            false,
        ),
        (
            "nul-in-line",
            "user-agent: *\ndisallow: /a\0b\n",
            "FooBot",
            "http://x/ac",
            false,
        ),
        (
            "unicode-whitespace",
            "user-agent: *\ndisallow: /a\u{a0}\n",
            "FooBot",
            "http://x/a",
            true,
        ),
        (
            "separator-lines",
            "user-agent: FooBot\ncrawl-delay: 5\nuser-agent: BarBot\ndisallow: /\n",
            "FooBot",
            "http://x/a",
            false,
        ),
    ];
    for &(name, robots, agent, url, expected) in table {
        let d = DIVERGENCES.iter().find(|d| d.name == name).expect(name);
        assert!((d.applies)(robots, url), "{name}: predicate does not hold");
        let ours = google_allowed(robots.as_bytes(), agent, url.as_bytes());
        let oracle = oracle_allowed(
            robots.as_bytes(),
            &[agent],
            url.as_bytes(),
            OracleDialect::Google,
        );
        let theirs = crate_allowed(robots, agent, url);
        assert_eq!(ours, expected, "{name}: robofilter on {robots:?} {url:?}");
        assert_eq!(oracle, expected, "{name}: oracle on {robots:?} {url:?}");
        assert_ne!(
            theirs,
            Some(expected),
            "{name}: the crate now agrees on {robots:?} {url:?}; \
             remove the divergence if it no longer applies"
        );
    }
}

// ---------------------------------------------------------------------------
// Real robots.txt files and URLs from ../shared/data

/// A temporary directory removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Extracts `tarball` into a fresh temporary directory (removed on drop),
/// named after `what` and unique per process and call (tests run in
/// parallel).
pub(crate) fn untar(tarball: &Path, what: &str) -> Result<TempDir, String> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let tmp = TempDir(
        std::env::temp_dir()
            .join(format!("robofilter-{what}-{}-{call}", std::process::id())),
    );
    std::fs::create_dir_all(&tmp.0).map_err(|e| e.to_string())?;
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar failed on {}: {status}", tarball.display()));
    }
    Ok(tmp)
}

/// `(host, body)` of every real robots.txt file.
type RealFiles = Vec<(String, Vec<u8>)>;
/// Real URLs by lower-cased host.
type RealUrls = HashMap<String, Vec<String>>;

/// The real corpus: every file of robots-bench-2019.tar.gz, and the URLs
/// of urls-bench-links.txt.gz by host. `Err` says why it is not available.
fn real_corpus() -> Result<(RealFiles, RealUrls), String> {
    let shared = crate::util::shared_dir()
        .ok_or("../shared does not exist (no real data)")?;
    let data = shared.join("data");
    let tarball = data.join("robots-bench-2019.tar.gz");
    let urls_gz = data.join("urls-bench-links.txt.gz");
    for f in [&tarball, &urls_gz] {
        if !f.is_file() {
            return Err(format!("{} is missing", f.display()));
        }
    }
    let tmp = untar(&tarball, "differential")?;
    let mut files = Vec::new();
    collect_files(&tmp.0, &mut files).map_err(|e| e.to_string())?;
    files.sort();
    let mut bodies = Vec::new();
    for f in files {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(host) = name.strip_suffix(".txt") else { continue };
        let body = std::fs::read(&f).map_err(|e| e.to_string())?;
        bodies.push((host.to_ascii_lowercase(), body));
    }
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(&urls_gz)
        .output()
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip failed on {}", urls_gz.display()));
    }
    let mut urls: HashMap<String, Vec<String>> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim();
        if let Some(host) = url_host(line) {
            urls.entry(host).or_default().push(line.to_string());
        }
    }
    Ok((bodies, urls))
}

pub(crate) fn collect_files(
    dir: &Path,
    out: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The lower-cased host of `scheme://host[:port]/...`.
pub(crate) fn url_host(url: &str) -> Option<String> {
    let rest = &url[url.find("://")? + 3..];
    let end = rest.find(['/', '?', '#', ':']).unwrap_or(rest.len());
    Some(rest[..end].to_ascii_lowercase())
}

/// Compares every `step`-th real file (at most `max_files`) with up to
/// `max_urls` of its host's URLs, for Googlebot, Bingbot and an agent only
/// `*` covers. Also checks the automaton against the direct matcher, and
/// both dialects against the oracle on a robofilter/crate mismatch.
fn run_real(test: &str, step: usize, max_files: usize, max_urls: usize) {
    let (bodies, urls) = match real_corpus() {
        Ok(c) => c,
        Err(why) => {
            crate::util::skip(test, &why);
            return;
        }
    };
    assert!(bodies.len() > 1000, "only {} real files", bodies.len());
    let mut cmp = CrateComparison::default();
    let (mut files, mut oracle_compared) = (0, 0u64);
    for (host, body) in bodies.iter().step_by(step).take(max_files) {
        let Some(host_urls) = urls.get(host) else { continue };
        files += 1;
        // The crate takes &str: every decider gets the same (lossy) text.
        let text = String::from_utf8_lossy(body).into_owned();
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let aligned = compile(text.as_bytes(), dialect);
            let rules = Rules::from_bytes(aligned.as_bytes())
                .unwrap_or_else(|e| panic!("{host}: load: {e}"));
            for url in host_urls.iter().take(max_urls) {
                for agent in ["Googlebot", "Bingbot", "SomeOtherBot"] {
                    let url = url.as_bytes();
                    let (fast, slow) = robofilter_verdicts(&rules, agent, url);
                    let oracle = oracle_allowed(
                        text.as_bytes(),
                        &[agent],
                        url,
                        oracle_dialect(dialect),
                    );
                    oracle_compared += 1;
                    if fast != slow || fast != oracle {
                        let fails = |r: &[u8], u: &[u8]| {
                            disagreement(r, agent, u, dialect, None).is_some()
                        };
                        let (r, u) = minimise(text.as_bytes(), url, fails);
                        let detail =
                            disagreement(&r, agent, &u, dialect, None)
                                .expect("still fails");
                        panic!(
                            "{}",
                            reproduction(
                                &format!(
                                    "real file {host}: robofilter disagrees \
                                     with the oracle"
                                ),
                                &r,
                                agent,
                                &u,
                                dialect.as_str(),
                                &detail,
                            )
                        );
                    }
                    if dialect == Dialect::Google {
                        let url = std::str::from_utf8(url).expect("UTF-8");
                        cmp.check(&text, agent, url, fast);
                    }
                }
            }
        }
    }
    eprintln!(
        "real data: {files} files, {oracle_compared} comparisons with the \
         oracle (both dialects), 0 mismatches"
    );
    cmp.report("real data");
    assert!(cmp.compared > 0, "no real comparisons were made");
}

/// A small sample of the real corpus, in the default run (skipped, with a
/// message, when ../shared/data or tar/gzip are absent).
#[test]
fn real_files_sample_match_robotstxt_crate() {
    run_real(
        "differential::real_files_sample_match_robotstxt_crate",
        15,
        100,
        20,
    );
}

/// Every real file with up to 200 URLs each (`ROBOFILTER_REAL_FILES` caps
/// the number of files).
#[test]
#[ignore = "long: run with --ignored"]
fn real_files_all_match_robotstxt_crate() {
    let max = env_count("ROBOFILTER_REAL_FILES", u64::MAX);
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    run_real(
        "differential::real_files_all_match_robotstxt_crate",
        1,
        max,
        200,
    );
}

/// URL to path extraction against the oracle's independent version, on
/// random strings over the octets that matter (scheme, `//`, `:`, the path
/// starts `/ ? ;`, the fragment `#`).
#[test]
fn prop_path_extraction_matches_oracle() {
    const PIECES: &[&[u8]] = &[
        b"http",
        b"h",
        b"s3+x",
        b"1",
        b":",
        b"/",
        b"//",
        b"://",
        b"?",
        b";",
        b"#",
        b"a",
        b"@",
        b".",
        b"\xc3\xa9",
    ];
    let mut rng = Rng::new(0x9a7);
    for _ in 0..200_000 {
        let mut url = Vec::new();
        for _ in 0..rng.below(9) {
            url.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        }
        assert_eq!(
            robofilter::MatchPath::from_url(&url).to_vec(),
            crate::oracle::extract_path(&url),
            "{}",
            url.escape_ascii()
        );
    }
}
