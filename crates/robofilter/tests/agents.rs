//! The caller's agent (issue 11, part B item 11; docs/SEMANTICS.md section 4b):
//! rfc9309 refuses an agent that is not a product token, with a
//! suggestion; google keeps the reference's fallback to `*`.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules, Verdict};

const ROBOTS: &[u8] =
    b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /star\n";

fn rules(dialect: Dialect) -> AlignedBytes {
    let compiler = Compiler::with_config(Config::new().dialect(dialect));
    AlignedBytes::from(&compiler.compile(ROBOTS).unwrap()[..])
}

#[test]
fn rfc9309_refuses_an_agent_that_is_not_a_product_token() {
    let bytes = rules(Dialect::Rfc9309);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    for (agent, hint) in [
        ("Googlebot/2.1", Some("Googlebot")),
        ("Mozilla/5.0 (compatible; Googlebot/2.1)", Some("Mozilla")),
        ("", None),
        ("Bot2", Some("Bot")),
    ] {
        let err = rules.matcher(agent).unwrap_err();
        assert!(err.is_not_product_token(), "{agent:?}");
        let text = err.to_string();
        assert!(text.contains("is not a product token"), "{text}");
        if let Some(hint) = hint {
            assert!(
                text.contains(&format!("did you mean '{hint}'")),
                "{text}"
            );
        }
    }
    // A product token is fine, and decides by its own group.
    let m = rules.matcher("googlebot").unwrap();
    assert_eq!(m.decide(b"http://a.example/g"), Verdict::Disallow);
    // `*` asks for the `*` group.
    let star = rules.matcher("*").unwrap();
    assert_eq!(star.decide(b"http://a.example/star"), Verdict::Disallow);
    assert_eq!(star.decide(b"http://a.example/g"), Verdict::Allow);
}

#[test]
fn google_keeps_the_reference_fallback_for_such_agents() {
    let bytes = rules(Dialect::Google);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    // Not a token: the reference matches no group and falls back to `*`
    // (vectors A02, A04, A05, C04, C12).
    for agent in
        ["Googlebot/2.1", "", "Mozilla/5.0 (compatible; Googlebot/2.1)"]
    {
        let m = rules.matcher(agent).unwrap();
        assert_eq!(
            m.decide(b"http://a.example/g"),
            Verdict::Allow,
            "{agent:?}"
        );
        assert_eq!(m.decide(b"http://a.example/star"), Verdict::Disallow);
        assert!(robofilter::check_product_token(agent).is_err());
    }
}

/// `Rules::crawl_delay` against an oracle over the parsed file: the groups
/// the parser selects for the agent (by group index, not by reading the
/// stored `user-agent` values back), their first numeric crawl-delay.
#[test]
fn crawl_delay_comes_from_the_groups_whose_rules_apply() {
    use crate::random::Rng;
    use robofilter::{GroupSource, RobotsTxt};
    let lines: &[&[u8]] = &[
        b"User-agent: a",
        b"User-agent: B",
        b"User-agent: *",
        b"User-agent: * x",
        b"User-agent: a/1.0",
        b"User-agent: ab",
        b"Crawl-delay: 1",
        b"Crawl-delay: 2.5",
        b"crawl-delay:  7 ",
        b"Crawl-delay: fast",
        b"Crawl-delay: -3",
        b"Disallow: /p",
        b"Allow: /q",
        b"",
    ];
    let agents = ["a", "A", "b", "ab", "c", "*"];
    let mut rng = Rng::new(41);
    let (mut some, mut star) = (0, 0);
    for round in 0..3000 {
        let mut robots = Vec::new();
        for _ in 0..rng.below(12) {
            robots.extend_from_slice(lines[rng.below(lines.len())]);
            robots.push(b'\n');
        }
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let parsed = RobotsTxt::parse(&robots, dialect);
            let config = Config::new().dialect(dialect);
            let bytes =
                Compiler::with_config(config).compile(&robots).unwrap();
            let bytes = AlignedBytes::from(&bytes[..]);
            let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
            for agent in agents {
                // The oracle: the groups `select` merges for the agent.
                let names = |g: &robofilter::Group| {
                    g.agents().iter().any(|ua| {
                        !ua.is_global()
                            && ua
                                .token()
                                .eq_ignore_ascii_case(agent.as_bytes())
                    })
                };
                let source = parsed.select(&[agent]).source();
                let chosen: Vec<usize> = (0..parsed.groups().len())
                    .filter(|&i| match source {
                        GroupSource::Specific => names(&parsed.groups()[i]),
                        GroupSource::Global => parsed.groups()[i].is_global(),
                        _ => false,
                    })
                    .collect();
                let want = parsed
                    .crawl_delays()
                    .iter()
                    .filter(|d| d.group().is_some_and(|g| chosen.contains(&g)))
                    .find_map(|d| {
                        let v = std::str::from_utf8(d.value()).ok()?.trim();
                        let numeric = !v.is_empty()
                            && v.bytes()
                                .all(|b| b.is_ascii_digit() || b == b'.')
                            && v.bytes().filter(|&b| b == b'.').count() <= 1
                            && !v.starts_with('.');
                        numeric.then(|| v.parse::<f64>().unwrap())
                    });
                let got = rules.crawl_delay(agent).unwrap();
                some += usize::from(got.is_some());
                star += usize::from(
                    got.is_some() && source == GroupSource::Global,
                );
                assert_eq!(
                    got,
                    want,
                    "round {round}, {dialect}, agent {agent}:\n{}",
                    String::from_utf8_lossy(&robots)
                );
            }
        }
    }
    // Both kinds of group gave delays, often.
    assert!(some > 3000 && star > 500, "{some} delays, {star} from `*`");
}
