//! The batch API (issue 13): `Matcher::decide_paths` and
//! `Matcher::decide_batch` give, item by item, the verdict of
//! `Matcher::decide_path`, and that verdict is the naive oracle's.
//!
//! Random robots.txt files in both dialects, under DFA budgets that also
//! send groups to the split and direct engines, random URLs (short ones
//! with escapes, and long plain ones that keep lanes busy for many rounds),
//! and every batch length from 0 to 17: batches shorter than, equal to and
//! longer than the number of lanes, so that lanes start idle, refill, and
//! drain.

use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, MatchPath, Matcher,
    Rules, Verdict,
};

use crate::differential::{
    Rng, escaped, oracle_dialect, random_robots, random_url,
};
use crate::oracle::oracle_allowed;

const AGENTS: &[&str] = &["FooBot", "BarBot", "OtherBot"];

/// Random robots.txt files per dialect.
const FILES: u64 = 120;

/// Every batch length from 0 to this.
const MAX_BATCH: usize = 17;

/// A URL: a short random one (escapes, `*`, `$`, non-ASCII) or a long one
/// of plain octets (the rfc9309 lanes take it; paths of 0 to 60 octets end
/// at every offset modulo the four octets a lane walks per round).
fn url(rng: &mut Rng) -> Vec<u8> {
    if rng.one_in(2) {
        return random_url(rng);
    }
    const PLAIN: &[u8] = b"aab/b/index.html?=x";
    let mut u = b"http://x/".to_vec();
    for _ in 0..rng.below(60) {
        u.push(PLAIN[rng.below(PLAIN.len())]);
    }
    u
}

fn compile(robots: &[u8], dialect: Dialect, case: u64) -> AlignedBytes {
    let mut config = Config::new().dialect(dialect);
    // As in tests/differential.rs: small budgets make split groups, and a
    // budget of 1 with no bytes the direct matcher.
    config = match case % 6 {
        1 => config.dfa_state_limit(1).dfa_byte_limit(0),
        3 => config.dfa_state_limit(12),
        _ => config,
    };
    let bytes = Compiler::with_config(config)
        .compile(robots)
        .unwrap_or_else(|e| panic!("compile {:?}: {e}", escaped(robots)));
    AlignedBytes::from(&bytes[..])
}

/// One matcher of the pool, with what the oracle needs to decide alone.
struct Entry<'a> {
    matcher: Matcher<'a>,
    robots: usize,
    agent: &'static str,
}

#[test]
fn batches_match_decide_path_and_the_oracle() {
    let mut rng = Rng::new(0x5EED_0013);
    let (mut checked, mut kinds) = (0u64, [0u64; 3]);
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        let robots: Vec<Vec<u8>> =
            (0..FILES).map(|_| random_robots(&mut rng)).collect();
        let bytes: Vec<AlignedBytes> = robots
            .iter()
            .enumerate()
            .map(|(i, r)| compile(r, dialect, i as u64))
            .collect();
        let rules: Vec<Rules<'_>> = bytes
            .iter()
            .map(|b| Rules::from_bytes(b.as_bytes()).expect("loads"))
            .collect();
        let mut pool = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            for &agent in AGENTS {
                let matcher = r.matcher(agent).expect("all agents");
                pool.push(Entry { matcher, robots: i, agent });
            }
        }
        for g in rules.iter().flat_map(Rules::groups) {
            match g.engine() {
                EngineKind::VerdictDfa => kinds[0] += 1,
                EngineKind::SplitDfa => kinds[1] += 1,
                _ => kinds[2] += 1,
            }
        }
        for round in 0..pool.len() {
            let len = round % (MAX_BATCH + 1);
            // One matcher for `decide_paths`; for `decide_batch`, a matcher
            // per item, mostly the same few (as URLs of a frontier
            // cluster by host), sometimes any of the pool.
            let one = &pool[round];
            let urls: Vec<Vec<u8>> = (0..len).map(|_| url(&mut rng)).collect();
            let mixed: Vec<&Entry<'_>> = (0..len)
                .map(|_| match rng.below(3) {
                    0 => &pool[rng.below(pool.len())],
                    _ => &pool[(round + rng.below(4)) % pool.len()],
                })
                .collect();

            let paths: Vec<MatchPath<'_>> =
                urls.iter().map(|u| MatchPath::parse(u, dialect)).collect();
            let mut got = vec![Verdict::Allow; len];
            one.matcher.decide_paths(&paths, &mut got);
            let items: Vec<(&Matcher<'_>, MatchPath<'_>)> = mixed
                .iter()
                .zip(&paths)
                .map(|(e, &p)| (&e.matcher, p))
                .collect();
            let mut got_mixed = vec![Verdict::Disallow; len];
            Matcher::decide_batch(&items, &mut got_mixed);

            for (i, url) in urls.iter().enumerate() {
                for (entry, verdict, api) in [
                    (one, got[i], "decide_paths"),
                    (mixed[i], got_mixed[i], "decide_batch"),
                ] {
                    let want = entry.matcher.decide_path(paths[i]);
                    let oracle = oracle_allowed(
                        &robots[entry.robots],
                        &[entry.agent],
                        url,
                        oracle_dialect(dialect),
                    );
                    assert!(
                        verdict == want && want.is_allow() == oracle,
                        "{api}, {dialect:?}, batch of {len}, item {i}: \
                         got {verdict:?}, decide_path {want:?}, oracle \
                         allows: {oracle}\n  agent: {}\n  url: \"{}\"\n  \
                         robots: b\"{}\"",
                        entry.agent,
                        escaped(url),
                        escaped(&robots[entry.robots]),
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!("batch: {checked} verdicts checked, engines {kinds:?}");
    // Every engine took part, and every batch length came up.
    assert!(kinds.iter().all(|&k| k > 0), "engines used: {kinds:?}");
    assert!(checked > 2 * FILES * 3 * 8);
}

/// Long plain paths through a wildcard-heavy group: walks of very
/// different lengths and sink times share the lanes.
#[test]
fn long_paths_through_one_automaton() {
    let robots = b"User-agent: *\n\
        Disallow: /*a*b*c\n\
        Allow: /*a*b*c*d$\n\
        Disallow: /x/\n\
        Allow: /x/y\n\
        Disallow: /*.pdf$\n";
    let mut rng = Rng::new(0x5EED_1013);
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        let compiler = Compiler::with_config(Config::new().dialect(dialect));
        let bytes = AlignedBytes::from(&compiler.compile(robots).unwrap()[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let m = rules.matcher("bot").unwrap();
        const OCTETS: &[u8] = b"abcd/xy.pdf%~";
        let urls: Vec<Vec<u8>> = (0..500)
            .map(|_| {
                let mut u = b"http://h/".to_vec();
                for _ in 0..rng.below(300) {
                    u.push(OCTETS[rng.below(OCTETS.len())]);
                }
                u
            })
            .collect();
        let paths: Vec<MatchPath<'_>> =
            urls.iter().map(|u| MatchPath::parse(u, dialect)).collect();
        let mut got = vec![Verdict::Allow; paths.len()];
        m.decide_paths(&paths, &mut got);
        let (mut allow, mut disallow) = (0, 0);
        for (i, url) in urls.iter().enumerate() {
            let oracle =
                oracle_allowed(robots, &["bot"], url, oracle_dialect(dialect));
            assert_eq!(
                got[i].is_allow(),
                oracle,
                "{dialect:?}: \"{}\"",
                escaped(url)
            );
            assert_eq!(got[i], m.decide_path(paths[i]));
            if oracle {
                allow += 1;
            } else {
                disallow += 1;
            }
        }
        assert!(allow > 50 && disallow > 50, "{allow} / {disallow}");
    }
}

#[test]
#[should_panic(expected = "2 paths but 1 verdict slots")]
fn decide_paths_wants_one_slot_per_path() {
    let bytes = Compiler::new().compile(b"User-agent: *\nDisallow: /a\n");
    let bytes = AlignedBytes::from(&bytes.unwrap()[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let paths = [MatchPath::from_path(b"/a"), MatchPath::from_path(b"/b")];
    let mut out = [Verdict::Allow; 1];
    rules.matcher("bot").unwrap().decide_paths(&paths, &mut out);
}
