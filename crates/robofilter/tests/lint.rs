//! The lint's "never decides" against brute force (issue 40 item 4): on random small files, a rule is reported iff no path is decided by it.
//!
//! Each file has one to three groups (agents `*`, `a`, `b`, and `1x`,
//! which has no product token) of one to six rules whose patterns are at
//! most 4 octets over `/ a b * $`. Brute force asks the engine's own
//! [`Matcher::explain`](robofilter::Matcher::explain) which rule decides
//! every path of at most [`MAX_PATH`] octets that starts with `/`, over
//! `/ a b $ x`, in each merged group a crawler reaches; a rule that no
//! path names never decides.
//!
//! Why that enumeration is enough. Suppose candidate `c` (a rule's
//! pattern) decides some path `p`: `c` matches it, no candidate that beats
//! `c` does. Fix how `c` matches `p`, keep `p`'s first octet and the
//! octets `c`'s literal tokens matched, and replace every other octet by
//! `x`, which no pattern names: `c` still matches (its `*` tokens and its
//! unanchored end take any octets), and a beater that matched the new
//! path would match `p` the same way (its literal tokens can only sit on
//! kept octets, which are `p`'s). Then shrink every run of `x` to one
//! `x`: a run sits inside one `*` or after the end, for `c` and for any
//! beater alike (a literal never matches `x`), so the same holds. The
//! result has at most 1 + (c's literal tokens) kept octets and at most
//! (c's `*` tokens) + 1 runs: at most 4 + 2 = 6 octets. A `*` octet in a
//! path matches only wildcards, as `x` does, so `x` stands for it, and no
//! pattern here can hold `index.htm` or `/robots.txt`. So a rule decides
//! some path iff it decides one of those enumerated (7 octets, one more
//! than needed).

use std::collections::{BTreeMap, BTreeSet};

use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, LintKind, Linter, Reason, Rules,
};

use crate::random::Rng;

/// The longest path enumerated: the longest pattern (4) + 2 + 1.
const MAX_PATH: usize = 7;

fn random_robots(rng: &mut Rng) -> String {
    let mut robots = String::new();
    for _ in 0..1 + rng.below(3) {
        for _ in 0..1 + rng.below(2) {
            let agent = ["*", "a", "b", "1x"][rng.below(4)];
            robots.push_str(&format!("user-agent: {agent}\n"));
        }
        for _ in 0..1 + rng.below(6) {
            let kind = ["allow", "disallow"][rng.below(2)];
            let len = 1 + rng.below(4);
            let mut p: String = (0..len)
                .map(|_| ['/', 'a', 'b', '*', '$'][rng.below(5)])
                .collect();
            // Most real patterns start with `/`.
            if rng.below(4) != 0 {
                p.replace_range(0..1, "/");
            }
            robots.push_str(&format!("{kind}: {p}\n"));
        }
    }
    robots
}

/// Every path of at most `MAX_PATH` octets over `/ a b $ x` starting
/// with `/`.
fn paths() -> Vec<Vec<u8>> {
    let mut out = vec![b"/".to_vec()];
    let mut last = out.clone();
    for _ in 1..MAX_PATH {
        let next: Vec<Vec<u8>> = last
            .iter()
            .flat_map(|p| {
                b"/ab$x".iter().map(move |&b| [&p[..], &[b]].concat())
            })
            .collect();
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

/// The lines of the rules that decide at least one path for some
/// crawler, and the lines of every rule in a group a crawler reaches.
fn brute_force(
    rules: &Rules<'_>,
    paths: &[Vec<u8>],
) -> (BTreeSet<u32>, BTreeSet<u32>) {
    let mut decides = BTreeSet::new();
    let mut held = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for a in rules.agents().chain(rules.fallback()) {
        let Some(g) = a.group() else { continue };
        if a.name().is_empty() || !seen.insert(g) {
            continue;
        }
        held.extend(rules.group_rules(g).map(|r| r.line()));
        let name = String::from_utf8(a.name().to_vec()).unwrap();
        let m = rules.matcher(&name).unwrap();
        let mut url = b"http://x".to_vec();
        for p in paths {
            url.truncate(8);
            url.extend_from_slice(p);
            let why = m.explain(&url);
            assert_eq!(why.path(), &p[..], "the path is matched as written");
            if let Reason::Rule(r) | Reason::IndexHtml(r) = why.reason() {
                decides.insert(r.line());
            }
        }
    }
    (decides, held)
}

#[test]
fn never_decides_is_exact_against_brute_force() {
    let paths = paths();
    assert_eq!(
        paths.len(),
        (0..MAX_PATH).map(|k| 5usize.pow(k as u32)).sum::<usize>()
    );
    let mut rng = Rng::new(40);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for round in 0..1000 {
        let dialect = [Dialect::Rfc9309, Dialect::Google][round % 2];
        let robots = random_robots(&mut rng);
        let config = Config::new().dialect(dialect);
        let linter = Linter::new();
        let found =
            linter.lint_robots_txt(robots.as_bytes(), &config).unwrap();
        let bytes = Compiler::with_config(config).compile(robots.as_bytes());
        let bytes = AlignedBytes::from(&bytes.unwrap()[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let (decides, held) = brute_force(&rules, &paths);
        let ctx = || format!("{dialect:?}, round {round}:\n{robots}");
        assert!(
            found.iter().all(|f| f.kind() != LintKind::Undecided),
            "{found:?} {}",
            ctx()
        );
        let never: BTreeSet<u32> = found
            .iter()
            .filter(|f| f.kind().is_never_decides())
            .map(|f| f.line())
            .collect();
        // Every "never decides" is true, and every rule that never
        // decides is reported.
        for &line in &held {
            assert_eq!(
                never.contains(&line),
                !decides.contains(&line),
                "line {line}: {found:?} {}",
                ctx()
            );
        }
        // Only rules that a crawler's group holds are proved (the others
        // are in an unreachable group, reported as such).
        assert!(never.is_subset(&held), "{found:?} {}", ctx());
        // The rules file alone gives the same rule findings.
        let from_rules: Vec<_> = linter
            .lint(&rules)
            .into_iter()
            .filter(|f| f.kind().is_never_decides())
            .collect();
        let from_text: Vec<_> = found
            .iter()
            .filter(|f| f.kind().is_never_decides())
            .cloned()
            .collect();
        assert_eq!(from_rules, from_text, "{}", ctx());
        for f in &found {
            *counts.entry(f.kind().as_str()).or_default() += 1;
        }
        *counts.entry("rules held").or_default() += held.len();
        *counts.entry("rules deciding").or_default() += decides.len();
    }
    // The files exercise every kind of rule finding, and rules that do
    // decide.
    for kind in ["shadowed", "duplicate", "cancelled", "matches-nothing"] {
        assert!(counts.get(kind).is_some_and(|&n| n >= 10), "{counts:?}");
    }
    assert!(counts["rules deciding"] * 3 > counts["rules held"], "{counts:?}");
}
