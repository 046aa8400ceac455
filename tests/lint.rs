//! `inspect --lint` (issue 40 item 4): text and JSON findings for a robots.txt, a rules file, a bundle and a shard directory.

use serde_json::{Value, json};

use crate::util::Dir;

/// Every finding kind that a robots.txt can show, one per line (the line
/// numbers are in the comments of the expected output below).
const ROBOTS: &str = "User-agent: GPT-Bot\n\
    Disallow: /\n\
    \n\
    User-agent: *\n\
    Disallow: /a/\n\
    Disallow: /b\n\
    Allow: /a/\n\
    Allow: /b*\n\
    Disallow: /b\n\
    Dissallow: /c\n\
    foo bar baz\n\
    User-agent: ccbot/2.0\n\
    User-agent: 1bot\n\
    Disallow: admin\n\
    \n\
    User-agent: 2bot\n\
    Disallow: /never\n";

/// `LINE<TAB>KIND` of each text line.
fn line_kinds(text: &str) -> Vec<(u32, String)> {
    text.lines()
        .map(|l| {
            let mut f = l.split('\t');
            let line = f.next().unwrap().parse().unwrap();
            (line, f.next().unwrap().to_string())
        })
        .collect()
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

const WANT: &[(u32, &str)] = &[
    (1, "lookalike"),
    (5, "cancelled"),
    (6, "shadowed"),
    (9, "duplicate"),
    (10, "lenient"),
    (11, "not-understood"),
    (12, "not-a-token"),
    (13, "no-token"),
    (14, "matches-nothing"),
    (16, "unreachable"),
];

fn want() -> Vec<(u32, String)> {
    WANT.iter().map(|&(l, k)| (l, k.to_string())).collect()
}

#[test]
fn a_robots_txt_in_text_and_json() {
    let dir = Dir::new("lint-robots");
    dir.write("robots.txt", ROBOTS);
    let run = dir.run(&["inspect", "--lint", "robots.txt"]);
    let text = run.ok();
    assert_eq!(line_kinds(&text), want(), "{text}");
    // Every line is LINE<TAB>KIND<TAB>MESSAGE, the message one sentence.
    for l in text.lines() {
        let fields: Vec<&str> = l.split('\t').collect();
        assert_eq!(fields.len(), 3, "{l}");
        assert!(!fields[2].is_empty() && !fields[2].ends_with('.'), "{l}");
    }
    assert!(text.contains(
        "6\tshadowed\t'Disallow: /b' never decides a path: every path it \
         matches is decided by a rule of higher precedence (line 8)\n"
    ));
    run.stderr_has(&["robofilter: 10 findings (1 cancelled, 1 duplicate"]);

    let json = json_lines(
        &dir.run(&["inspect", "--lint", "--json", "robots.txt"]).ok(),
    );
    let got: Vec<(u32, String)> = json
        .iter()
        .map(|o| {
            (
                o["line"].as_u64().unwrap() as u32,
                o["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(got, want());
    assert!(
        json.iter()
            .all(|o| o["message"].is_string() && o.get("host").is_none())
    );
    let shadowed = &json[2];
    assert_eq!(shadowed["rule"], "Disallow: /b");
    assert_eq!(shadowed["by"], json!([8]));
    let look = &json[0];
    assert_eq!(look["agent"], "GPT-Bot");
    assert_eq!(look["similar_to"], "GPTBot");

    // --agent adds a known token: `Claude-Bot` is not ClaudeBot (which
    // the ai list already has); `MyBot` is, from --agent.
    dir.write("mine.txt", "User-agent: My-Bot\nDisallow: /\n");
    let out = dir.run(&["inspect", "--lint", "mine.txt"]).ok();
    assert_eq!(out, "");
    let out =
        dir.run(&["inspect", "--lint", "mine.txt", "--agent", "MyBot"]).ok();
    assert_eq!(line_kinds(&out), [(1, "lookalike".to_string())]);
}

#[test]
fn a_rules_file_lints_what_it_keeps() {
    let dir = Dir::new("lint-rules");
    dir.write("robots.txt", ROBOTS);
    dir.run(&["compile", "robots.txt", "-o", "r.rules"]).ok();
    let text = dir.run(&["inspect", "--lint", "r.rules"]).ok();
    // No user-agent lines: the look-alike token at line 0, no note on
    // `ccbot/2.0` or `1bot`; the unreachable group's rule by its line.
    let want: Vec<(u32, String)> = [
        (0, "lookalike"),
        (5, "cancelled"),
        (6, "shadowed"),
        (9, "duplicate"),
        (10, "lenient"),
        (11, "not-understood"),
        (14, "matches-nothing"),
        (17, "unreachable"),
    ]
    .iter()
    .map(|&(l, k)| (l, k.to_string()))
    .collect();
    assert_eq!(line_kinds(&text), want, "{text}");
    assert!(text.starts_with(
        "0\tlookalike\ta group names the agent 'gpt-bot', which looks like \
         the crawler token 'GPTBot'"
    ));
    let json =
        json_lines(&dir.run(&["inspect", "--lint", "--json", "r.rules"]).ok());
    assert_eq!(json.len(), want.len());
    assert_eq!(json[0]["agent"], "gpt-bot");
    // A dialect other than the file's is refused.
    dir.run(&["inspect", "--lint", "--dialect", "google", "r.rules"])
        .fails(&["compiled with the rfc9309 dialect"]);
}

#[test]
fn a_bundle_lints_every_host_or_one() {
    let dir = Dir::new("lint-bundle");
    std::fs::create_dir(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", ROBOTS);
    dir.write("hosts/b.example.txt", "User-agent: *\nDisallow: /x\n");
    // The same body as a.example: its findings again, under its name.
    dir.write("hosts/c.example.txt", ROBOTS);
    dir.write(
        "hosts/d.example.txt",
        "User-agent: *\nDisallow: /x\nDisallow: /x\n",
    );
    dir.run(&["compile", "--hosts", "hosts", "-o", "b.bundle"]).ok();
    let run = dir.run(&["inspect", "--lint", "b.bundle"]);
    let text = run.ok();
    let hosts: Vec<&str> =
        text.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(hosts.iter().filter(|&&h| h == "a.example").count(), 8);
    assert_eq!(hosts.iter().filter(|&&h| h == "c.example").count(), 8);
    assert!(!hosts.contains(&"b.example"));
    assert!(text.ends_with(
        "d.example\t3\tduplicate\t'Disallow: /x' repeats the rule on line 2 \
         and never decides a path\n"
    ));
    for l in text.lines() {
        assert_eq!(l.split('\t').count(), 4, "{l}");
    }
    run.stderr_has(&["17 findings", "in 3 of 4 hosts"]);

    let json = json_lines(
        &dir.run(&["inspect", "--lint", "--json", "b.bundle"]).ok(),
    );
    assert_eq!(json.len(), 17);
    assert!(json.iter().all(|o| o["host"].is_string()));
    let d: Vec<&Value> =
        json.iter().filter(|o| o["host"] == "d.example").collect();
    assert_eq!(d.len(), 1);
    assert_eq!(
        (&d[0]["line"], &d[0]["kind"], &d[0]["rule"], &d[0]["by"]),
        (&json!(3), &json!("duplicate"), &json!("Disallow: /x"), &json!([2]))
    );

    // One host, in text and JSON.
    let one = dir
        .run(&["inspect", "--lint", "b.bundle", "--host", "D.example"])
        .ok();
    assert_eq!(one.lines().count(), 1);
    assert!(one.starts_with("d.example\t3\tduplicate\t"));
    let one = dir
        .run(&[
            "inspect",
            "--lint",
            "--json",
            "b.bundle",
            "--host",
            "d.example",
        ])
        .ok();
    assert_eq!(json_lines(&one), [d[0].clone()]);
    dir.run(&["inspect", "--lint", "b.bundle", "--host", "z.example"])
        .fails(&["no entry for host 'z.example'"]);
    // --json --host stays refused without --lint.
    dir.run(&["inspect", "--json", "b.bundle", "--host", "d.example"])
        .exits(2);

    // A shard directory: the same findings, shard by shard.
    dir.run(&["compile", "--hosts", "hosts", "--shards", "2", "-o", "shards"])
        .ok();
    let sharded =
        json_lines(&dir.run(&["inspect", "--lint", "--json", "shards"]).ok());
    let key = |o: &Value| {
        (o["host"].to_string(), o["line"].as_u64(), o["kind"].to_string())
    };
    let mut a: Vec<_> = sharded.iter().map(key).collect();
    let mut b: Vec<_> = json.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}
