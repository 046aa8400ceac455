//! Content-Usage preferences (AIPREF; docs/SEMANTICS.md section 4c) against an oracle over the parsed file, on random robots.txt files in both dialects.
//!
//! The oracle picks the agent's groups by group index from the parser's
//! selection (not by reading the stored `user-agent` values back, as the
//! engine does), matches paths with a backtracking matcher of its own, and
//! takes each expression's preferences from a table written by hand.

use crate::random::Rng;
use Preference::{No, Unknown, Yes};
use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, GroupSource, Preference,
    RobotsTxt, Rules, UsageKey,
};

/// Expressions and the preferences (train-ai, search) they state.
const EXPRESSIONS: &[(&str, (Preference, Preference))] = &[
    ("train-ai=n", (No, Unknown)),
    ("train-ai=y", (Yes, Unknown)),
    ("search=n", (Unknown, No)),
    ("train-ai=y, search=y", (Yes, Yes)),
    ("train-ai=n,search=y", (No, Yes)),
    ("train-ai=n, train-ai=y", (Yes, Unknown)),
    ("other=n, search=n;x=1", (Unknown, No)),
    ("train-ai", (Unknown, Unknown)),
    ("train-ai=no", (Unknown, Unknown)),
    ("Train-AI=n", (Unknown, Unknown)),
    ("train-ai=n,", (Unknown, Unknown)),
    ("", (Unknown, Unknown)),
];

const PATHS: &[&str] =
    &["", "/", "/a", "/a/", "/ab", "/*b", "/a$", "/b*a$", "/*"];

/// Whether `pattern` (`*` any run, a final `$` the end) matches a prefix
/// of `path`, by backtracking.
fn matches(pattern: &[u8], path: &[u8]) -> bool {
    match pattern {
        [] => true,
        [b'$'] => path.is_empty(),
        [b'*', rest @ ..] => {
            (0..=path.len()).any(|i| matches(rest, &path[i..]))
        }
        [c, rest @ ..] => path.first() == Some(c) && matches(rest, &path[1..]),
    }
}

#[test]
fn preferences_come_from_the_longest_rule_of_the_agents_groups() {
    let heads: &[&str] = &[
        "User-agent: a",
        "User-agent: *",
        "User-agent: b/1.0",
        "User-agent: ab",
        "Disallow: /b",
        "Allow: /a",
    ];
    let agents = ["a", "b", "ab", "c"];
    let urls: Vec<String> = ["", "a", "b", "/", "a/", "ab", "ba", "a$", "b*a"]
        .iter()
        .flat_map(|p| {
            ["https://x.example/", "https://x.example/a"]
                .map(|u| format!("{u}{p}"))
        })
        .collect();
    let mut rng = Rng::new(4309);
    let (mut decided, mut said) = (0, 0);
    for round in 0..1500 {
        let mut robots = String::new();
        for _ in 0..rng.below(10) {
            if rng.one_in(2) {
                robots += heads[rng.below(heads.len())];
            } else {
                let path = PATHS[rng.below(PATHS.len())];
                let (expr, _) = EXPRESSIONS[rng.below(EXPRESSIONS.len())];
                let sep = if path.is_empty() { "" } else { " " };
                robots += &format!("Content-Usage: {path}{sep}{expr}");
            }
            robots.push('\n');
        }
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let parsed = RobotsTxt::parse(robots.as_bytes(), dialect);
            let config = Config::new().dialect(dialect);
            let bytes = Compiler::with_config(config)
                .compile(robots.as_bytes())
                .unwrap();
            let bytes = AlignedBytes::from(&bytes[..]);
            let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
            for agent in agents {
                let source = parsed.select(&[agent]).source();
                let chosen: Vec<usize> = (0..parsed.groups().len())
                    .filter(|&i| {
                        let g = &parsed.groups()[i];
                        match source {
                            GroupSource::Specific => {
                                g.agents().iter().any(|ua| {
                                    !ua.is_global()
                                        && ua.token().eq_ignore_ascii_case(
                                            agent.as_bytes(),
                                        )
                                })
                            }
                            GroupSource::Global => g.is_global(),
                            GroupSource::None => false,
                        }
                    })
                    .collect();
                // (pattern, train-ai, search) of the rules that apply.
                let mine: Vec<(&[u8], Preference, Preference)> = parsed
                    .other_lines()
                    .iter()
                    .filter(|o| o.group().is_some_and(|g| chosen.contains(&g)))
                    .map(|o| {
                        let v = std::str::from_utf8(o.value()).unwrap();
                        let (path, expr) = match v.strip_prefix('/') {
                            Some(_) => v.split_once(' ').unwrap_or((v, "")),
                            None => ("/", v),
                        };
                        let (_, (t, s)) = EXPRESSIONS
                            .iter()
                            .find(|(e, _)| *e == expr)
                            .expect("a known expression");
                        (path.as_bytes(), *t, *s)
                    })
                    .collect();
                let usage = rules.content_usage(agent).unwrap();
                assert_eq!(usage.rules().len(), mine.len(), "round {round}");
                for url in &urls {
                    let path = &url.as_bytes()["https://x.example".len()..];
                    let best = mine
                        .iter()
                        .filter(|r| matches(r.0, path))
                        .map(|r| r.0.len())
                        .max();
                    let want = match best {
                        None => (Unknown, Unknown),
                        Some(len) => mine
                            .iter()
                            .filter(|r| r.0.len() == len && matches(r.0, path))
                            .fold((Unknown, Unknown), |(t, s), r| {
                                (t.max(r.1), s.max(r.2))
                            }),
                    };
                    let got = usage.preferences(url.as_bytes());
                    let got = (
                        got.get(UsageKey::TrainAi),
                        got.get(UsageKey::Search),
                    );
                    assert_eq!(
                        got, want,
                        "round {round}, {dialect}, agent {agent}, {url}:\n{robots}"
                    );
                    decided += 1;
                    said += usize::from(got != (Unknown, Unknown));
                }
            }
        }
    }
    // Many answers were not all unknown: the test saw preferences.
    assert!(said * 10 > decided, "{said} of {decided} said something");
}

#[test]
fn content_signal_is_the_first_line_of_the_agents_groups() {
    let robots = b"User-agent: *\nContent-Signal: search=yes, ai-train=no\n\
                   Content-Signal: ai-train=yes\nDisallow: /y\n\n\
                   User-agent: GPTBot\nDisallow: /x\n\n\
                   User-agent: ccbot\nContent-Signal: ai-train=yes, ai-input=no\n";
    let bytes =
        AlignedBytes::from(&Compiler::new().compile(robots).unwrap()[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    use robofilter::SignalKey::{AiInput, AiTrain, Search};
    let other = rules.content_signal("Other").unwrap().unwrap();
    assert_eq!(
        (other.get(AiTrain), other.get(Search)),
        (Some(false), Some(true))
    );
    // GPTBot's own group has no line: no signal (fast-robotstxt would fall
    // back to `*`'s).
    assert_eq!(rules.content_signal("GPTBot").unwrap(), None);
    let cc = rules.content_signal("CCBot").unwrap().unwrap();
    assert_eq!(
        (cc.get(AiTrain), cc.get(AiInput), cc.get(Search)),
        (Some(true), Some(false), None)
    );
    assert!(rules.content_signal("not a token").is_err());
}

/// docs/SEMANTICS.md section 4c: in rfc9309 a Content-Usage line is a
/// rule, so it ends the group's user-agent lines (the attach draft adds it
/// to RFC 9309's `rule`); the google dialect groups as google/robotstxt,
/// which does not know the key.
#[test]
fn a_content_usage_line_ends_the_user_agent_lines_in_rfc9309() {
    let robots = b"User-agent: GPTBot\nContent-Usage: train-ai=n\n\n\
                   User-agent: *\nDisallow: /private\n";
    let train = |rules: &Rules<'_>, agent: &str, url: &str| {
        rules
            .content_usage(agent)
            .unwrap()
            .preferences(url.as_bytes())
            .get(UsageKey::TrainAi)
    };
    let bytes = Compiler::with_config(Config::new().dialect(Dialect::Rfc9309))
        .compile(robots)
        .unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let gpt = rules.matcher("GPTBot").unwrap();
    assert!(gpt.is_allowed(b"https://a.example/private"));
    assert!(
        !rules
            .matcher("FooBot")
            .unwrap()
            .is_allowed(b"https://a.example/private")
    );
    assert_eq!(train(&rules, "GPTBot", "https://a.example/"), No);
    assert_eq!(train(&rules, "FooBot", "https://a.example/"), Unknown);
    // google: one group of GPTBot and `*`, as Google's parser reads it.
    let bytes = Compiler::with_config(Config::new().dialect(Dialect::Google))
        .compile(robots)
        .unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    assert!(
        !rules
            .matcher("GPTBot")
            .unwrap()
            .is_allowed(b"https://a.example/private")
    );
    assert_eq!(train(&rules, "FooBot", "https://a.example/"), No);
    // Outside any group: the parser says so, and nobody gets it.
    let parsed = RobotsTxt::parse(
        b"Content-Usage: train-ai=n\nUser-agent: *\n",
        Dialect::Rfc9309,
    );
    assert!(
        parsed.diagnostics().iter().any(|d| d
            .to_string()
            .contains("rule before any user-agent line"))
    );
}
