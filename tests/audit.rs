//! The AI-crawler audit (issue 40, items 1 to 3): agent lists wherever
//! `--agent` is taken, `inspect --summary --json` against the per-host
//! JSON (per agent, per category, per rank tier), the HTML report in a
//! real browser (headless Chromium: its DOM holds the JSON's numbers),
//! and `diff` of two snapshots (bundles and shard directories, hosts in
//! one of them only, frontier lines).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Dir, data_dir, skip};

/// A manifest line: `host`, HTTP `status`, and a body for a 2xx.
fn fetched(host: &str, status: u16, body: &str) -> String {
    let line = match status {
        200..=299 => json!({"host": host, "status": status, "body": body}),
        _ => json!({"host": host, "status": status}),
    };
    format!("{line}\n")
}

/// The old snapshot: every stance, a `www.` host for the ranks, and the
/// AI-use signals (a.example to everyone, www.h.example to ClaudeBot).
fn old_manifest() -> String {
    [
        fetched(
            "a.example",
            200,
            "User-agent: *\nContent-Usage: /x train-ai=n\n\
             Content-Signal: ai-train=no\nDisallow: /private\n",
        ),
        fetched("b.example", 200, "User-agent: GPTBot\nDisallow: /\n"),
        fetched("c.example", 200, "User-agent: *\nDisallow: /\n"),
        fetched("d.example", 404, ""),
        fetched("e.example", 503, ""),
        fetched("g.example", 200, ""),
        fetched(
            "www.h.example",
            200,
            "User-agent: ClaudeBot\nContent-Signal: ai-train=no\n\
             Disallow: /\n",
        ),
    ]
    .concat()
}

/// The new snapshot: a.example blocks GPTBot, c.example is gone,
/// d.example blocks everyone, e.example answers, f.example is new.
fn new_manifest() -> String {
    [
        fetched(
            "a.example",
            200,
            "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: \
             /private\n",
        ),
        fetched("b.example", 200, "User-agent: GPTBot\nDisallow: /\n"),
        fetched("d.example", 200, "User-agent: *\nDisallow: /\n"),
        fetched("e.example", 200, "User-agent: ClaudeBot\nDisallow: /x\n"),
        fetched("f.example", 200, "User-agent: *\nAllow: /\n"),
        fetched("g.example", 200, ""),
        fetched("www.h.example", 200, "User-agent: ClaudeBot\nDisallow: /\n"),
    ]
    .concat()
}

const LIST: &str = "# my agents\nGPTBot\ttraining\tOpenAI\nClaudeBot\ttraining\n\
                    OAI-SearchBot\tsearch\n";

const RANKS: &str =
    "rank,domain\n1,c.example\n2,h.example\n3,zzz.example\n1500,a.example\n";

fn snapshots(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write("old.jsonl", old_manifest());
    dir.write("new.jsonl", new_manifest());
    dir.write("list.tsv", LIST);
    dir.write("ranks.csv", RANKS);
    for which in ["old", "new"] {
        let manifest = format!("{which}.jsonl");
        let bundle = format!("{which}.bundle");
        dir.run(&["compile", "--manifest", &manifest, "-o", &bundle]).ok();
        let shards = format!("{which}-shards");
        dir.run(&[
            "compile",
            "--manifest",
            &manifest,
            "--shards",
            "3",
            "-o",
            &shards,
        ])
        .ok();
    }
    dir
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn run(dir: &Dir, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    dir.run(&args).ok()
}

/// Each host's stance toward each agent, from `inspect --json`: the
/// reference the summary is checked against.
fn stances(
    dir: &Dir,
    bundle: &str,
    agents: &[&str],
) -> BTreeMap<String, Vec<String>> {
    let mut cmd = args(&["inspect", bundle, "--json"]);
    for a in agents {
        cmd.extend(args(&["--agent", a]));
    }
    json_lines(&run(dir, &cmd))
        .iter()
        .map(|h| {
            let per = agents
                .iter()
                .map(|a| {
                    let blocked = h["blocked_entirely"][a].as_bool();
                    let all = h["allows_everything"][a].as_bool();
                    match (h["outcome"].as_str().unwrap(), blocked, all) {
                        ("disallow-all", _, _) => "failed_to_fetch",
                        ("allow-all", _, _) => "allows_all",
                        (_, Some(true), _) => "blocked_entirely",
                        (_, _, Some(true)) => "allows_all",
                        (_, Some(false), Some(false)) => "blocks_some",
                        _ => "undecided",
                    }
                    .to_string()
                })
                .collect();
            (h["host"].as_str().unwrap().to_string(), per)
        })
        .collect()
}

const STANCES: [&str; 5] = [
    "blocked_entirely",
    "blocks_some",
    "allows_all",
    "failed_to_fetch",
    "undecided",
];

/// The signal counts of `--summary --json`.
const SIGNALS: [&str; 2] =
    ["content_usage_train_ai_n", "content_signal_ai_train_no"];

/// A category's stance on a host, as docs/cli.md defines it.
fn rolled_up(stances: &[&str]) -> &'static str {
    let all = |s: &str| stances.iter().all(|&x| x == s);
    let any = |set: &[&str]| stances.iter().any(|x| set.contains(x));
    if any(&["failed_to_fetch"]) {
        "failed_to_fetch"
    } else if all("blocked_entirely") {
        "blocked_entirely"
    } else if all("allows_all") {
        "allows_all"
    } else if any(&["blocks_some", "allows_all"])
        && any(&["blocks_some", "blocked_entirely"])
    {
        "blocks_some"
    } else {
        "undecided"
    }
}

/// The counts of `stances` over the hosts `keep` selects.
fn count<'a>(
    stances: impl Iterator<Item = &'a str>,
) -> BTreeMap<&'static str, u64> {
    let mut counts: BTreeMap<&str, u64> =
        STANCES.iter().map(|s| (*s, 0)).collect();
    for s in stances {
        let key = STANCES.iter().find(|k| **k == s).unwrap();
        *counts.get_mut(key).unwrap() += 1;
    }
    counts
}

fn counts_of(line: &Value) -> BTreeMap<&'static str, u64> {
    STANCES.iter().map(|s| (*s, line[s].as_u64().unwrap())).collect()
}

#[test]
fn summary_json_counts_agents_categories_and_rank_tiers() {
    let dir = snapshots("audit-summary");
    let agents = ["MyBot", "GPTBot", "ClaudeBot", "OAI-SearchBot"];
    let per_host = stances(&dir, "old.bundle", &agents);
    // The ranked hosts: c.example (1), www.h.example (2, for h.example),
    // a.example (1500); zzz.example has no entry.
    let rank: BTreeMap<&str, u32> =
        [("c.example", 1), ("www.h.example", 2), ("a.example", 1500)].into();
    let tiers = [1000u32, 10000];
    let base = args(&[
        "inspect",
        "old.bundle",
        "--summary",
        "--json",
        "--agent",
        "MyBot",
        "--agent",
        "gptbot",
        "--agent-list",
        "list.tsv",
        "--ranks",
        "ranks.csv",
    ]);
    let lines = json_lines(&run(&dir, &base));
    // `--agent gptbot` and the list's `GPTBot` are one agent, with the
    // list's category, in the --agent spelling.
    let names: Vec<&str> =
        lines.iter().map(|l| l["agent"].as_str().unwrap()).collect();
    assert_eq!(names, ["MyBot", "gptbot", "ClaudeBot", "OAI-SearchBot"]);
    let categories: Vec<&Value> =
        lines.iter().map(|l| &l["category"]).collect();
    assert_eq!(
        categories,
        [
            &Value::Null,
            &json!("training"),
            &json!("training"),
            &json!("search")
        ]
    );
    for (a, line) in lines.iter().enumerate() {
        let keys: Vec<&str> =
            line.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "agent",
                "category",
                "blocked_entirely",
                "blocks_some",
                "allows_all",
                "failed_to_fetch",
                "undecided",
                "content_usage_train_ai_n",
                "content_signal_ai_train_no",
                "ranks"
            ]
        );
        // a.example says both to every agent (its `*` group), www.h.example
        // Content-Signal to ClaudeBot; only www.h.example is in the top
        // 1000.
        let signals = |v: &Value| {
            [&v["content_usage_train_ai_n"], &v["content_signal_ai_train_no"]]
                .map(|n| n.as_u64().unwrap())
        };
        let claude = a == 2;
        assert_eq!(signals(line), [1, 1 + u64::from(claude)], "{line}");
        assert_eq!(signals(&line["ranks"][0]), [0, u64::from(claude)]);
        assert_eq!(signals(&line["ranks"][1]), [1, 1 + u64::from(claude)]);
        let want = count(per_host.values().map(|s| s[a].as_str()));
        assert_eq!(counts_of(line), want, "{line}");
        for (k, top) in tiers.iter().enumerate() {
            let tier = &line["ranks"][k];
            assert_eq!(tier["top"], *top);
            let want = count(
                per_host
                    .iter()
                    .filter(|(h, _)| {
                        rank.get(h.as_str()).is_some_and(|r| r <= top)
                    })
                    .map(|(_, s)| s[a].as_str()),
            );
            assert_eq!(counts_of(tier), want, "{top}: {line}");
        }
    }
    // Every stance occurs, so that the sums mean something.
    let gptbot = counts_of(&lines[1]);
    assert!(STANCES[..4].iter().all(|s| gptbot[s] > 0), "{gptbot:?}");

    // Per category: training is GPTBot and ClaudeBot together.
    let mut by = base.clone();
    by.push("--by-category".into());
    let cats = json_lines(&run(&dir, &by));
    let names: Vec<&str> =
        cats.iter().map(|l| l["category"].as_str().unwrap()).collect();
    assert_eq!(names, ["training", "search"]);
    assert_eq!(cats[0]["agents"], json!(["gptbot", "ClaudeBot"]));
    let want = count(per_host.values().map(|s| rolled_up(&[&s[1], &s[2]])));
    assert_eq!(counts_of(&cats[0]), want);
    // b.example blocks GPTBot only: training blocks some there.
    assert_eq!(rolled_up(&["blocked_entirely", "allows_all"]), "blocks_some");
    assert_eq!(counts_of(&cats[1]), counts_of(&lines[3]));

    // The table holds the same numbers; a shard directory gives the same.
    let table = run(
        &dir,
        &base[..base.len() - 2]
            .iter()
            .filter(|a| *a != "--json")
            .cloned()
            .collect::<Vec<_>>(),
    );
    let row: Vec<&str> =
        table.lines().nth(2).unwrap().split_whitespace().collect();
    let c = counts_of(&lines[1]);
    assert_eq!(
        row,
        [
            "gptbot",
            "training",
            &c["blocked_entirely"].to_string(),
            &c["blocks_some"].to_string(),
            &c["allows_all"].to_string(),
            &c["failed_to_fetch"].to_string(),
            &lines[1]["content_usage_train_ai_n"].to_string(),
            &lines[1]["content_signal_ai_train_no"].to_string(),
        ],
        "{table}"
    );
    assert!(table.contains("Content-Usage train-ai=n"), "{table}");
    let mut shards = base.clone();
    shards[1] = "old-shards".into();
    assert_eq!(json_lines(&run(&dir, &shards)), lines);
}

#[test]
fn agent_lists_work_wherever_agent_is_taken() {
    let dir = snapshots("audit-lists");
    dir.write("urls.txt", "http://b.example/x\nhttp://a.example/private\n");
    // filter: one column per agent of the list, after --agent's.
    let out = dir
        .run(&[
            "filter",
            "old.bundle",
            "--agent",
            "MyBot",
            "--agent-list",
            "list.tsv",
            "--emit",
            "all",
            "urls.txt",
        ])
        .ok();
    assert_eq!(
        out,
        "allow\tdisallow\tallow\tallow\thttp://b.example/x\n\
         disallow\tdisallow\tdisallow\tdisallow\thttp://a.example/private\n"
    );
    // The built-in list: every token is accepted by the rfc9309 dialect.
    let out = dir
        .run(&[
            "check",
            "old.bundle",
            "--agent-list",
            "ai",
            "http://b.example/",
        ])
        .ok();
    let columns = out.trim_end().split('\t').count() - 1;
    let ai =
        std::fs::read_to_string(data_dir().join("agents/ai.tsv")).unwrap();
    let tokens = ai.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(columns, tokens);
    assert!(tokens > 100);
    dir.run(&[
        "explain",
        "old.bundle",
        "--agent-list",
        "list.tsv",
        "http://b.example/",
    ])
    .ok();
    dir.run(&[
        "compile",
        "--manifest",
        "old.jsonl",
        "--agent-list",
        "list.tsv",
        "-o",
        "only.bundle",
    ])
    .ok();
    dir.run(&[
        "check",
        "only.bundle",
        "--agent",
        "OAI-SearchBot",
        "http://a.example/",
    ])
    .ok();
    // A bad list names its line; no agent at all is a usage error.
    dir.write("bad.tsv", "GPTBot\ttraining\nFooBot\tscraping\n");
    dir.run(&["check", "old.bundle", "--agent-list", "bad.tsv", "http://x/"])
        .fails(&["bad.tsv", "line 2", "unknown category 'scraping'"]);
    dir.run(&["check", "old.bundle", "--agent-list", "nope.tsv", "http://x/"])
        .fails(&["nope.tsv", "built-in lists are: ai"]);
    dir.run(&["inspect", "old.bundle", "--summary"]).fails(&["--agent"]);
    dir.run(&[
        "inspect",
        "old.bundle",
        "--summary",
        "--agent",
        "A",
        "--by-category",
    ])
    .fails(&["no agent has one"]);
    dir.run(&["filter", "old.bundle", "urls.txt"]).fails(&["--agent"]);
}

// ---------------------------------------------------------------------
// The report in a real browser.

/// Chromium: `$ROBOFILTER_CHROMIUM`, else `chromium` (Debian's package),
/// `chromium-browser` or `google-chrome` on the PATH; installed with
/// apt-get (Debian's `chromium`) when none is there and this runs as root.
fn chromium() -> Result<&'static Path, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let find = || -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("ROBOFILTER_CHROMIUM") {
            return Some(PathBuf::from(p));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find_map(|d| {
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .map(|n| d.join(n))
                .find(|p| p.is_file())
        })
    };
    FOUND
        .get_or_init(|| {
            if let Some(p) = find() {
                return Ok(p);
            }
            let root = Command::new("id").arg("-u").output().ok().is_some_and(|o| o.stdout.starts_with(b"0\n"));
            if !root {
                return Err("no chromium, and not root to install it (apt-get install chromium)".into());
            }
            let apt = |args: &[&str]| {
                Command::new("apt-get")
                    .args(args)
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            let install = ["install", "-y", "-q", "chromium"];
            let installed = apt(&install)
                || (apt(&["update", "-q"]) && apt(&install));
            if !installed {
                return Err("chromium is not installed and `apt-get install chromium` failed".into());
            }
            find().ok_or_else(|| "apt-get installed chromium, but it is not on the PATH".into())
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// The DOM of `page` (with `#fragment`) after its script ran, from
/// headless Chromium started as the machine's notes say (no network
/// chatter, a fresh profile).
fn dump_dom(browser: &Path, dir: &Dir, page: &str, fragment: &str) -> String {
    let url = format!("file://{}{fragment}", dir.join(page).display());
    let profile = dir.join("chromium-profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish with {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// The value of attribute `name` in the tag text `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("{name} in {tag}"));
    let rest = &tag[at + name.len() + 3..];
    &rest[..rest.find('"').unwrap()]
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The counts the page drew: (tier, kind, name, stance) -> count.
fn drawn(dom: &str) -> BTreeMap<(String, String, String, String), u64> {
    let mut out = BTreeMap::new();
    for part in dom.split("<span class=\"n\"").skip(1) {
        let (tag, rest) = part.split_once('>').unwrap();
        let text = &rest[..rest.find('<').unwrap()];
        let key = (
            attr(tag, "data-tier").to_string(),
            attr(tag, "data-kind").to_string(),
            unescape(attr(tag, "data-name")),
            attr(tag, "data-stance").to_string(),
        );
        assert!(out.insert(key, text.parse::<u64>().unwrap()).is_none());
    }
    out
}

/// The counts `--summary --json` printed, keyed as [`drawn`] keys them.
fn printed(
    agents: &[Value],
    categories: &[Value],
) -> BTreeMap<(String, String, String, String), u64> {
    let mut out = BTreeMap::new();
    for (kind, lines) in [("agent", agents), ("category", categories)] {
        for line in lines {
            let name = line[kind].as_str().unwrap().to_string();
            let mut tiers = vec![("all".to_string(), line)];
            for t in line["ranks"].as_array().into_iter().flatten() {
                tiers.push((t["top"].to_string(), t));
            }
            for (tier, counts) in tiers {
                for s in STANCES.iter().chain(&SIGNALS) {
                    let key = (
                        tier.clone(),
                        kind.to_string(),
                        name.clone(),
                        s.to_string(),
                    );
                    out.insert(key, counts[s].as_u64().unwrap());
                }
            }
        }
    }
    out
}

/// Renders `report` in Chromium and checks that it drew every number of
/// `--summary --json` (with and without `--by-category`), and only
/// those; an undecided column is left out only when all its counts are 0.
fn check_report(
    dir: &Dir,
    summary: &[String],
    report: &str,
) -> Option<String> {
    let browser = match chromium() {
        Ok(b) => b,
        Err(why) => return Some(why),
    };
    let html = std::fs::read_to_string(dir.join(report)).unwrap();
    // Self-contained: nothing is fetched from anywhere.
    for outside in ["http://", "https://", " src=", "<link", "@import", "url("]
    {
        assert!(!html.contains(outside), "{outside} in {report}");
    }
    let mut json = summary.to_vec();
    json.push("--json".into());
    let agents = json_lines(&run(dir, &json));
    json.push("--by-category".into());
    let categories = json_lines(&run(dir, &json));
    let dom = dump_dom(browser, dir, report, "");
    let body = &dom[dom.find("<body").unwrap()..];
    let body = &body[..body.find('>').unwrap()];
    assert_eq!(
        body, "<body data-rendered=\"yes\"",
        "the script failed:\n{dom}"
    );
    let got = drawn(&dom);
    let want = printed(&agents, &categories);
    assert!(!got.is_empty());
    for (key, n) in &want {
        match got.get(key) {
            Some(g) => assert_eq!(g, n, "{key:?}"),
            None => assert!(
                (key.3 == "undecided" || SIGNALS.contains(&key.3.as_str()))
                    && *n == 0,
                "{key:?} not drawn"
            ),
        }
    }
    assert!(got.keys().all(|k| want.contains_key(k)));
    None
}

#[test]
fn report_renders_in_chromium_with_the_numbers_of_the_json() {
    let dir = snapshots("audit-report");
    let summary = args(&[
        "inspect",
        "old.bundle",
        "--summary",
        "--agent",
        "MyBot",
        "--agent-list",
        "list.tsv",
        "--ranks",
        "ranks.csv",
    ]);
    let mut with_report = summary.clone();
    with_report.extend(args(&["--report", "report.html"]));
    // The table still goes to stdout.
    assert!(run(&dir, &with_report).starts_with("agent"));
    if let Some(why) = check_report(&dir, &summary, "report.html") {
        skip("report_renders_in_chromium_with_the_numbers_of_the_json", &why);
        return;
    }
    // The per-host CSV the page makes, shown in the page for `#csv`.
    let browser = chromium().unwrap();
    let dom = dump_dom(browser, &dir, "report.html", "#csv");
    let (_, pre) =
        dom.split_once("<pre id=\"csv-preview\">").expect("csv preview");
    let csv = unescape(&pre[..pre.find("</pre>").unwrap()]);
    let agents = ["MyBot", "GPTBot", "ClaudeBot", "OAI-SearchBot"];
    let per_host = stances(&dir, "old.bundle", &agents);
    let rank: BTreeMap<&str, &str> =
        [("c.example", "1"), ("www.h.example", "2"), ("a.example", "1500")]
            .into();
    let mut want = format!("host,rank,{}\n", agents.join(","));
    for (host, s) in &per_host {
        let r = rank.get(host.as_str()).unwrap_or(&"");
        want.push_str(&format!("{host},{r},{}\n", s.join(",")));
    }
    assert_eq!(csv, want);
}

/// The sample bundle (`data/bundle/manifest.jsonl`: every fetch outcome)
/// audited for the built-in AI list: the page whose screenshot is
/// `docs/report-sample.png`.
#[test]
fn report_of_the_sample_bundle_renders_in_chromium() {
    let dir = Dir::new("audit-sample");
    let manifest = data_dir().join("bundle/manifest.jsonl");
    dir.run(&[
        "compile",
        "--manifest",
        manifest.to_str().unwrap(),
        "-o",
        "sample.bundle",
    ])
    .ok();
    let summary =
        args(&["inspect", "sample.bundle", "--summary", "--agent-list", "ai"]);
    let mut with_report = summary.clone();
    with_report.extend(args(&["--report", "sample.html"]));
    run(&dir, &with_report);
    if let Some(why) = check_report(&dir, &summary, "sample.html") {
        skip("report_of_the_sample_bundle_renders_in_chromium", &why);
    }
}

// ---------------------------------------------------------------------
// diff

/// The changes between the snapshots, as `diff --json` must print them.
fn want_changes() -> Vec<Value> {
    let change = |host: &str, agent: &str, old: &str, new: &str| json!({"host": host, "agent": agent, "old": old, "new": new});
    vec![
        change("a.example", "GPTBot", "blocks_some", "blocked_entirely"),
        change("c.example", "GPTBot", "blocked_entirely", "absent"),
        change("c.example", "ClaudeBot", "blocked_entirely", "absent"),
        change("d.example", "GPTBot", "allows_all", "blocked_entirely"),
        change("d.example", "ClaudeBot", "allows_all", "blocked_entirely"),
        change("e.example", "GPTBot", "failed_to_fetch", "allows_all"),
        change("e.example", "ClaudeBot", "failed_to_fetch", "blocks_some"),
        change("f.example", "GPTBot", "absent", "allows_all"),
        change("f.example", "ClaudeBot", "absent", "allows_all"),
    ]
}

#[test]
fn diff_lists_changed_stances_of_bundles_and_shard_directories() {
    let dir = snapshots("audit-diff");
    let agents = ["--agent", "GPTBot", "--agent", "ClaudeBot"];
    for (old, new) in [
        ("old.bundle", "new.bundle"),
        ("old-shards", "new-shards"),
        ("old.bundle", "new-shards"),
    ] {
        let mut cmd = vec!["diff", old, new, "--json"];
        cmd.extend(agents);
        assert_eq!(
            json_lines(&dir.run(&cmd).ok()),
            want_changes(),
            "{old} {new}"
        );
    }
    let mut cmd = vec!["diff", "old.bundle", "new-shards"];
    cmd.extend(agents);
    let table = dir.run(&cmd).ok();
    let want = "\
agent      old                   new                hosts
GPTBot     blocked entirely   →  absent                 1
GPTBot     blocks some paths  →  blocked entirely       1
GPTBot     allows all         →  blocked entirely       1
GPTBot     failed to fetch    →  allows all             1
GPTBot     absent             →  allows all             1
ClaudeBot  blocked entirely   →  absent                 1
ClaudeBot  allows all         →  blocked entirely       1
ClaudeBot  failed to fetch    →  blocks some paths      1
ClaudeBot  absent             →  allows all             1
(6 hosts in both, 1 only in 'old.bundle', 1 only in 'new-shards'; 5 changed for at least one agent)
";
    assert_eq!(table, want);
    // A snapshot against itself: nothing changed.
    let same = dir
        .run(&[
            "diff",
            "old.bundle",
            "old-shards",
            "--json",
            "--agent",
            "GPTBot",
        ])
        .ok();
    assert_eq!(same, "");
    dir.run(&["diff", "old.jsonl", "new.bundle", "--agent", "GPTBot"])
        .fails(&["old.jsonl", "not a bundle"]);
}

#[test]
fn diff_frontier_prints_the_lines_whose_verdict_changed() {
    let dir = snapshots("audit-frontier");
    dir.write(
        "frontier.txt",
        "http://a.example/x\n\
         http://a.example/private\n\
         http://b.example/\r\n\
         http://c.example/\n\
         http://e.example/x\n\
         http://f.example/\tdepth=1\n\
         not a url\n",
    );
    let want = "\
allow\tdisallow\tallow\tallow\thttp://a.example/x
disallow\tunknown\tdisallow\tunknown\thttp://c.example/
disallow\tallow\tdisallow\tdisallow\thttp://e.example/x
unknown\tallow\tunknown\tallow\thttp://f.example/\tdepth=1
";
    for (old, new) in
        [("old.bundle", "new.bundle"), ("old-shards", "new.bundle")]
    {
        let run = dir.run(&[
            "diff",
            old,
            new,
            "--frontier",
            "frontier.txt",
            "--agent",
            "GPTBot",
            "--agent",
            "ClaudeBot",
        ]);
        assert_eq!(run.ok(), want);
        assert!(
            run.stderr.contains("7 lines, 4 with a verdict that changed"),
            "{}",
            run.stderr
        );
    }
    // From stdin, one agent.
    let out = dir
        .run_with(
            &[
                "diff",
                "old.bundle",
                "new.bundle",
                "--frontier",
                "-",
                "--agent",
                "GPTBot",
            ],
            b"http://d.example/\nhttp://g.example/\n",
        )
        .ok();
    assert_eq!(out, "allow\tdisallow\thttp://d.example/\n");
}
