//! The compile budget (issue 11, Part B item 9): robots.txt files of long
//! `*` chains compile within a counted number of construction steps, the
//! file's budget is shared by all its groups, and every fallback gives the
//! oracle's verdicts. Nothing here is timed: the assertions read the steps
//! the compiler counted (`Compiler::compile_counted`) and the engines it
//! chose.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, EngineKind, Rules};

use crate::differential::Rng;
use crate::oracle::{OracleDialect, oracle_allowed};

/// The shapes of one rule's pattern: `stars` `*` between single letters.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `/*a*a*a...`
    Same,
    /// `/a*b*c*...`, each rule starting at another letter.
    Varied,
    /// As `Varied`, with a final `$`.
    Anchored,
    /// Random letters of `ab/`, every other rule anchored.
    Random,
}

const SHAPES: [Shape; 4] =
    [Shape::Same, Shape::Varied, Shape::Anchored, Shape::Random];

/// The pattern of rule `i`.
fn pattern(shape: Shape, i: usize, stars: usize, rng: &mut Rng) -> String {
    let letter = |j: usize| (b'a' + ((i + j) % 26) as u8) as char;
    let mut p = String::from("/");
    match shape {
        Shape::Same => (0..stars).for_each(|_| p.push_str("*a")),
        Shape::Varied | Shape::Anchored => {
            for j in 0..=stars {
                if j > 0 {
                    p.push('*');
                }
                p.push(letter(j));
            }
        }
        Shape::Random => {
            for j in 0..=stars {
                if j > 0 {
                    p.push('*');
                }
                p.push(b"ab/"[rng.below(3)] as char);
            }
        }
    }
    let anchored = match shape {
        Shape::Anchored => true,
        Shape::Random => i % 2 == 1,
        _ => false,
    };
    if anchored {
        p.push('$');
    }
    p
}

/// A robots.txt of `rules` rules of `stars` stars each, in one `*` group
/// or spread over one group per rule (agents `botaa`, `botba`, ...).
/// Returns the body and the patterns.
fn robots(
    shape: Shape,
    rules: usize,
    stars: usize,
    spread: bool,
    seed: u64,
) -> (Vec<u8>, Vec<String>) {
    let mut rng = Rng::new(seed);
    let mut body = String::new();
    if !spread {
        body.push_str("User-agent: *\n");
    }
    let mut patterns = Vec::new();
    for i in 0..rules {
        if spread {
            let a = (b'a' + (i % 26) as u8) as char;
            let b = (b'a' + (i / 26) as u8) as char;
            body.push_str(&format!("User-agent: bot{a}{b}\n"));
        }
        let p = pattern(shape, i, stars, &mut rng);
        // Rule 0 disallows, so that a file of one rule has something to
        // build.
        let kind = if i % 3 == 1 { "Allow" } else { "Disallow" };
        body.push_str(&format!("{kind}: {p}\n"));
        patterns.push(p);
    }
    (body.into_bytes(), patterns)
}

/// URLs from the patterns' letters: short random paths, and paths that
/// instantiate a pattern (each `*` replaced by 0-2 random letters), half of
/// them then altered at one point so that they just miss.
fn urls(patterns: &[String], rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    let letters = b"abcz/";
    (0..n)
        .map(|k| {
            let mut url = b"http://x".to_vec();
            if k % 3 == 0 {
                url.push(b'/');
                for _ in 0..rng.below(30) {
                    url.push(letters[rng.below(letters.len())]);
                }
                return url;
            }
            let p = patterns[rng.below(patterns.len())].as_bytes();
            let start = url.len();
            for &b in p.strip_suffix(b"$").unwrap_or(p) {
                if b == b'*' {
                    for _ in 0..rng.below(3) {
                        url.push(letters[rng.below(letters.len())]);
                    }
                } else {
                    url.push(b);
                }
            }
            if rng.one_in(2) && url.len() > start + 1 {
                let at = start + 1 + rng.below(url.len() - start - 1);
                match rng.below(3) {
                    0 => {
                        url.remove(at);
                    }
                    1 => url[at] = b'z',
                    _ => url.push(b'q'),
                }
            }
            url
        })
        .collect()
}

/// Compiles `body`; returns the loaded rules' bytes and the steps counted.
fn compile(body: &[u8], config: Config) -> (AlignedBytes, u64) {
    let compiler = Compiler::with_config(config);
    let (bytes, steps) =
        compiler.compile_counted(&compiler.parse(body)).expect("compiles");
    (AlignedBytes::from(&bytes[..]), steps)
}

/// Every URL's verdict equals the oracle's, for the `*` fallback and the
/// first named agent.
fn same_verdicts(
    name: &str,
    body: &[u8],
    bytes: &AlignedBytes,
    dialect: Dialect,
    urls: &[Vec<u8>],
) {
    let oracle = match dialect {
        Dialect::Google => OracleDialect::Google,
        Dialect::Rfc9309 => OracleDialect::Rfc9309,
    };
    let rules = Rules::from_bytes(bytes.as_bytes()).expect("loads");
    for agent in ["otherbot", "botaa"] {
        let m = rules.matcher(agent).expect("agent");
        for url in urls {
            assert_eq!(
                m.decide(url).is_allow(),
                oracle_allowed(body, &[agent], url, oracle),
                "{name} ({dialect}), agent {agent}, url {}",
                String::from_utf8_lossy(url)
            );
        }
    }
}

/// The file: 30 lines of 8,000 `*` each (480 KB, under the line
/// cap), in every shape, in one group and spread over 30 groups. Rules with
/// that many stars go to the direct matcher before any construction, so
/// the compile counts no steps at all; it took over 120 s and 700 MB
/// before. Verdicts are checked on short URLs here (the oracle is
/// quadratic in the rule length); long matching URLs are checked on the
/// smaller files below.
#[test]
fn thirty_rules_of_eight_thousand_stars() {
    for shape in SHAPES {
        for spread in [false, true] {
            let (body, patterns) = robots(shape, 30, 8000, spread, 1);
            assert!(body.len() > 450_000 && body.len() < 500 * 1024);
            let name = format!("{shape:?} spread={spread}");
            let (bytes, steps) = compile(&body, Config::new());
            assert_eq!(steps, 0, "{name}");
            let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
            for g in rules.groups() {
                if g.engine() == EngineKind::AllowAll {
                    assert!(spread, "{name}");
                    continue;
                }
                assert_eq!(g.engine(), EngineKind::Direct, "{name}");
                assert_eq!(
                    g.over_budget(),
                    Some("wildcard budget of a rule"),
                    "{name}"
                );
            }
            let mut rng = Rng::new(2);
            let short: Vec<Vec<u8>> = urls(&patterns, &mut rng, 30)
                .into_iter()
                .filter(|u| u.len() < 64)
                .collect();
            same_verdicts(&name, &body, &bytes, Dialect::Rfc9309, &short);
        }
    }
}

/// The same files with 300 stars per rule (still past the per-rule cap):
/// the direct matcher's verdicts on URLs that match or just miss.
#[test]
fn long_chains_use_the_direct_matcher_with_the_oracles_verdicts() {
    for shape in SHAPES {
        for spread in [false, true] {
            let (body, patterns) = robots(shape, 30, 300, spread, 3);
            let name = format!("{shape:?} spread={spread} 300 stars");
            for dialect in [Dialect::Rfc9309, Dialect::Google] {
                let (bytes, steps) =
                    compile(&body, Config::new().dialect(dialect));
                assert_eq!(steps, 0, "{name}");
                let mut rng = Rng::new(4);
                let urls = urls(&patterns, &mut rng, 24);
                same_verdicts(&name, &body, &bytes, dialect, &urls);
            }
        }
    }
}

/// Under the per-rule cap, a chain of `n` stars is built as a DFA in work
/// linear in `n`: a state keeps only the positions after each rule's last
/// `*` (about 40 steps per star). Keeping every passed `*`, as before,
/// made the work quadratic: 65 k steps for 50 varied stars, against 2.4 k.
#[test]
fn a_chain_of_stars_builds_in_linear_work() {
    for stars in [50, 100, 250] {
        for shape in SHAPES {
            let (body, patterns) = robots(shape, 1, stars, false, 5);
            let name = format!("{shape:?} {stars} stars");
            let (bytes, steps) = compile(&body, Config::new());
            let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
            let g = rules.groups().next().unwrap();
            assert_eq!(g.engine(), EngineKind::VerdictDfa, "{name}");
            assert!(steps <= 100 * stars as u64, "{name}: {steps} steps");
            println!("{name}: {steps} steps");
            let mut rng = Rng::new(6);
            let urls = urls(&patterns, &mut rng, 30);
            same_verdicts(&name, &body, &bytes, Dialect::Rfc9309, &urls);
        }
    }
}

/// Groups of rules that blow up the subset construction, each under the
/// per-rule cap (`/*a*b*c*d$`-like over 26 letters, 30 rules per group).
fn costly_groups(groups: usize) -> (Vec<u8>, Vec<String>) {
    let mut rng = Rng::new(7);
    let mut body = String::new();
    let mut patterns = Vec::new();
    for g in 0..groups {
        let a = (b'a' + (g % 26) as u8) as char;
        body.push_str(&format!("User-agent: bot{a}a\n"));
        for i in 0..30 {
            let mut p = String::from("/");
            for _ in 0..4 {
                p.push('*');
                p.push((b'a' + rng.below(26) as u8) as char);
            }
            p.push('$');
            let kind = if (i + g) % 3 == 0 { "Allow" } else { "Disallow" };
            body.push_str(&format!("{kind}: {p}\n"));
            patterns.push(p);
        }
    }
    (body.into_bytes(), patterns)
}

/// The file budget is shared: once spent, the remaining groups use the
/// direct matcher without construction, the steps stay within the limit
/// plus one construction's last check (at most the group's table cells),
/// and the verdicts stay the oracle's.
#[test]
fn the_file_budget_is_shared_by_all_groups() {
    let (body, patterns) = costly_groups(8);
    let limit = 3_000_000;
    let config = Config::new().file_work_limit(limit);
    let (bytes, steps) = compile(&body, config.clone());
    // One construction stops at most one table (max_cells, 4 Mi) or one
    // state's classes after the limit.
    assert!(steps <= limit + (4 << 20), "{steps} steps");
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let notes: Vec<_> = rules.groups().map(|g| g.over_budget()).collect();
    let spent = notes
        .iter()
        .filter(|&&n| n == Some("work budget of the file"))
        .count();
    assert!(spent >= 2, "{notes:?}");
    // A file that stopped early is one with every later group direct.
    let first = notes
        .iter()
        .position(|&n| n == Some("work budget of the file"))
        .unwrap();
    for g in rules.groups().skip(first) {
        assert_eq!(g.engine(), EngineKind::Direct);
    }
    let mut rng = Rng::new(8);
    let urls = urls(&patterns, &mut rng, 60);
    same_verdicts("8 costly groups", &body, &bytes, Dialect::Rfc9309, &urls);

    // With the default budget the same file spends more and falls back
    // less, with the same verdicts.
    let (full, full_steps) = compile(&body, Config::new());
    assert!(full_steps > steps);
    let full_rules = Rules::from_bytes(full.as_bytes()).unwrap();
    let direct = |r: &Rules| {
        r.groups().filter(|g| g.engine() == EngineKind::Direct).count()
    };
    assert!(direct(&full_rules) < direct(&rules));
    same_verdicts("8 costly groups", &body, &full, Dialect::Rfc9309, &urls);
}

/// A budget of zero steps builds nothing: every group is direct.
#[test]
fn a_zero_budget_builds_no_automaton() {
    let (body, patterns) = costly_groups(3);
    let (bytes, steps) = compile(&body, Config::new().file_work_limit(0));
    assert_eq!(steps, 0);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    for g in rules.groups() {
        assert_eq!(g.engine(), EngineKind::Direct);
        assert_eq!(g.over_budget(), Some("work budget of the file"));
    }
    let mut rng = Rng::new(9);
    let urls = urls(&patterns, &mut rng, 30);
    same_verdicts("zero budget", &body, &bytes, Dialect::Rfc9309, &urls);
}
