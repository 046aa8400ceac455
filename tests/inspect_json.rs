//! `inspect --json` and `--summary` (issue 12, section 3): per-host
//! directives, the side section of other lines, and the exact "blocked
//! entirely" query against a brute-force reference.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules, Verdict};
use serde_json::Value;

use crate::util::Dir;

const ROBOTS: &str = "Host: a.example\n\
    User-agent: *\n\
    Content-Signal: search=yes, ai-train=no\n\
    Crawl-delay: 5\n\
    Disallow: /private\n\
    Sitemap: https://a.example/s.xml\n\
    \n\
    User-agent: GPTBot\n\
    User-agent: CCBot\n\
    Disallow: /\n\
    Clean-param: ref /x\n\
    X-Unknown-Key: 1 # comment\n";

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn bundle_dir(name: &str) -> Dir {
    let dir = Dir::new(name);
    std::fs::create_dir(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", ROBOTS);
    dir.write("hosts/b.example.txt", "User-agent: *\nDisallow: /*\n");
    dir.write("hosts/c.example.txt", "User-agent: *\nAllow: /\n");
    dir.write(
        "hosts/d.example.txt",
        "User-agent: *\nDisallow: /\nAllow: /public\n",
    );
    dir.run(&["compile", "--hosts", "hosts", "-o", "b.bundle"]).ok();
    dir
}

#[test]
fn json_has_one_object_per_host_with_other_lines_groups_and_lines() {
    let dir = bundle_dir("json-shape");
    let out =
        dir.run(&["inspect", "b.bundle", "--json", "--agent", "GPTBot"]).ok();
    let hosts = json_lines(&out);
    let names: Vec<&str> =
        hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["a.example", "b.example", "c.example", "d.example"]);
    let a = &hosts[0];
    assert_eq!(a["status"], 200);
    assert_eq!(a["outcome"], "rules");
    assert_eq!(a["sitemaps"][0]["url"], "https://a.example/s.xml");
    assert_eq!(a["sitemaps"][0]["line"], 6);
    let delay = &a["crawl_delays"][0];
    assert_eq!((&delay["line"], &delay["group"]), (&4.into(), &0.into()));
    assert_eq!(delay["agents"], serde_json::json!(["*"]));
    assert_eq!(delay["value"], "5");
    let other: Vec<(u64, Value, &str, &str)> = a["other_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["line"].as_u64().unwrap(),
                o["group"].clone(),
                o["key"].as_str().unwrap(),
                o["value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        other,
        [
            (1, Value::Null, "Host", "a.example"),
            (3, 0.into(), "Content-Signal", "search=yes, ai-train=no"),
            (11, 1.into(), "Clean-param", "ref /x"),
            (12, 1.into(), "X-Unknown-Key", "1"),
        ]
    );
    assert_eq!(
        a["other_lines"][2]["agents"],
        serde_json::json!(["GPTBot", "CCBot"])
    );
    let blocked: Vec<Option<bool>> = hosts
        .iter()
        .map(|h| h["blocked_entirely"]["GPTBot"].as_bool())
        .collect();
    assert_eq!(blocked, [Some(true), Some(true), Some(false), Some(false)]);
    // One object for a robots.txt too.
    dir.write("robots.txt", ROBOTS);
    let one = json_lines(
        &dir.run(&["inspect", "robots.txt", "--json", "--agent", "Other"])
            .ok(),
    );
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["other_lines"], hosts[0]["other_lines"]);
    assert_eq!(one[0]["blocked_entirely"]["Other"], false);
}

#[test]
fn summary_counts_match_the_per_host_json() {
    let dir = bundle_dir("summary");
    let agents = ["GPTBot", "Other"];
    let hosts = json_lines(
        &dir.run(&[
            "inspect", "b.bundle", "--json", "--agent", agents[0], "--agent",
            agents[1],
        ])
        .ok(),
    );
    let table = dir
        .run(&[
            "inspect",
            "b.bundle",
            "--summary",
            "--agent",
            agents[0],
            "--agent",
            agents[1],
        ])
        .ok();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("agent"), "{table}");
    for (i, agent) in agents.iter().enumerate() {
        let (mut blocked, mut some, mut all) = (0, 0, 0);
        for h in &hosts {
            match (
                h["blocked_entirely"][agent].as_bool(),
                h["allows_everything"][agent].as_bool(),
            ) {
                (Some(true), _) => blocked += 1,
                (_, Some(true)) => all += 1,
                _ => some += 1,
            }
        }
        let cells: Vec<&str> = lines[1 + i].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                *agent,
                &blocked.to_string(),
                &some.to_string(),
                &all.to_string(),
                "0",
                // a.example's `*` group says Content-Signal ai-train=no:
                // to Other, not to GPTBot (which has a group of its own).
                if *agent == "Other" { "1" } else { "0" },
            ],
            "{table}"
        );
    }
    assert!(lines[0].ends_with("Content-Signal ai-train=no"), "{table}");
}

#[test]
fn bad_input_is_refused() {
    let dir = bundle_dir("bad");
    let mut bytes = dir.read("b.bundle");
    bytes[40] ^= 1;
    dir.write("bad.bundle", &bytes);
    dir.run(&["inspect", "bad.bundle", "--json"])
        .exits(2)
        .stderr_has(&["bad.bundle"]);
    dir.run(&["inspect", "b.bundle", "--summary"])
        .exits(2)
        .stderr_has(&["--agent"]);
    dir.run(&[
        "inspect", "b.bundle", "--json", "--agent", "A", "--agent", "a",
    ])
    .exits(2)
    .stderr_has(&["twice"]);
}

fn compile(robots: &str, config: Config) -> AlignedBytes {
    AlignedBytes::from(
        &Compiler::with_config(config).compile(robots.as_bytes()).unwrap()[..],
    )
}

/// A damaged side section is reported by `other_lines` (and `inspect`),
/// while loading and deciding (what `filter` does) are unaffected.
#[test]
fn damaged_side_section_is_reported_but_verdicts_are_unaffected() {
    let good = compile(ROBOTS, Config::new());
    let rules = Rules::from_bytes(good.as_bytes()).unwrap();
    assert_eq!(rules.other_lines().unwrap().len(), 4);
    let side = rules.side_len();
    assert!(side > 0);
    let mut bytes = good.as_bytes().to_vec();
    let at = bytes.len() - side / 2;
    bytes[at] ^= 0x20;
    let bad = AlignedBytes::from(&bytes[..]);
    let damaged = Rules::from_bytes(bad.as_bytes()).expect("still loads");
    let err = damaged.other_lines().unwrap_err().to_string();
    assert!(err.contains("side section"), "{err}");
    for agent in ["GPTBot", "other"] {
        let (m, d) =
            (rules.matcher(agent).unwrap(), damaged.matcher(agent).unwrap());
        for url in ["http://x/", "http://x/private", "http://x/robots.txt"] {
            assert_eq!(m.decide(url.as_bytes()), d.decide(url.as_bytes()));
        }
    }
    // The CLI: inspect names the damage and exits 2; filter works.
    let dir = Dir::new("side");
    dir.write("bad.rules", &bytes);
    dir.run(&["inspect", "bad.rules", "--json"])
        .exits(2)
        .stderr_has(&["bad.rules", "side section"]);
    dir.write("urls.txt", "http://x/private\nhttp://x/a\n");
    let out =
        dir.run(&["filter", "bad.rules", "--agent", "other", "urls.txt"]).ok();
    assert_eq!(out, "http://x/a\n");
    // A flip in the checksummed part is still refused at load.
    let mut core = good.as_bytes().to_vec();
    core[70] ^= 1;
    assert!(
        Rules::from_bytes(AlignedBytes::from(&core[..]).as_bytes()).is_err()
    );
}

/// The reference: every path over the patterns' octets and two others, up
/// to `len` octets after `/`, decided by the matcher; blocked entirely if
/// none outside `/robots.txt` is allowed.
fn brute_blocked(robots: &str, config: Config, agent: &str) -> (bool, bool) {
    let bytes = compile(robots, config);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let m = rules.matcher(agent).unwrap();
    let mut alphabet: Vec<u8> = robots
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| {
            k.eq_ignore_ascii_case("allow")
                || k.eq_ignore_ascii_case("disallow")
        })
        .flat_map(|(_, v)| v.trim().bytes())
        .filter(|&b| b != b'*' && b != b'$')
        .chain(*b"Zq")
        .collect();
    alphabet.sort();
    alphabet.dedup();
    let (mut any_allowed, mut any_disallowed) = (false, false);
    let mut frontier = vec![b"/".to_vec()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for p in &frontier {
            let url = [b"http://h", &p[..]].concat();
            let v = m.decide(&url);
            if v == Verdict::Allow && !p.starts_with(b"/robots.txt") {
                any_allowed = true;
            }
            any_disallowed |= v == Verdict::Disallow;
            for &b in &alphabet {
                next.push([&p[..], &[b]].concat());
            }
        }
        frontier = next;
    }
    // Longer paths: each rule's value written out (without `*`, `$`), and
    // it extended by every octet of the alphabet.
    let mut long: Vec<Vec<u8>> = Vec::new();
    for (_, v) in robots.lines().filter_map(|l| l.split_once(':')) {
        let lit: Vec<u8> =
            v.trim().bytes().filter(|&b| b != b'*' && b != b'$').collect();
        long.push(lit.clone());
        for &b in &alphabet {
            long.push([&lit[..], &[b]].concat());
        }
    }
    for p in &long {
        let v = m.decide(&[b"http://h", &p[..]].concat());
        any_disallowed |= v == Verdict::Disallow;
        if v == Verdict::Allow && !p.starts_with(b"/robots.txt") {
            any_allowed = true;
        }
    }
    (!any_allowed, !any_disallowed)
}

#[test]
fn blocked_entirely_matches_a_brute_force_reference_in_every_engine() {
    let cases = [
        ("Disallow: /", true),
        ("Disallow: /\nAllow: /public", false),
        ("Disallow: /*", true),
        ("Disallow: /a", false),
        ("Disallow: /$", false),
        ("Disallow: /*$", true),
        ("Disallow: /\nAllow: /robots.txt", true),
        ("Disallow: /\nAllow: /index.html", false),
        ("Disallow: /\nAllow: /a$\nDisallow: /a*", false),
        ("Disallow: /\nAllow: /ab\nDisallow: /ab*", true),
        ("Disallow: /$\nDisallow: /?\nDisallow: /a\nDisallow: /b", false),
        ("Allow: /x\nDisallow: /*x*y\nDisallow: /", false),
        (
            "Disallow: /*a*b\nDisallow: /\nAllow: /*b*a$\nDisallow: /*b*a",
            false,
        ),
        ("Disallow: /*a*b\nDisallow: /\nAllow: /*b*a\nDisallow: /*b*a*", true),
    ];
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        for (rules, want) in cases {
            let robots = format!("User-agent: *\n{rules}\n");
            for (engine, config) in [
                ("dfa", Config::new()),
                ("split", Config::new().dfa_state_limit(4)),
                ("direct", Config::new().dfa_byte_limit(64)),
            ] {
                let config = config.dialect(dialect);
                let bytes = compile(&robots, config.clone());
                let loaded = Rules::from_bytes(bytes.as_bytes()).unwrap();
                let m = loaded.matcher("bot").unwrap();
                let (brute, brute_all) = brute_blocked(&robots, config, "bot");
                let what = format!("{dialect} {engine}: {rules:?}");
                assert_eq!(brute, want, "reference, {what}");
                match m.blocks_entirely() {
                    Some(got) => assert_eq!(got, want, "{what}"),
                    None => assert_eq!(engine, "direct", "undecided: {what}"),
                }
                if let Some(all) = m.allows_everything() {
                    assert_eq!(all, brute_all, "allows everything, {what}");
                }
            }
        }
    }
}
