//! Frontier lines as crawlers keep them (issue 12): `URL<TAB>fields`,
//! spaces inside URLs, and several agents decided in one pass, checked
//! against single-agent runs of the same binary.

use crate::util::Dir;

/// Three hosts whose groups treat the three agents differently, and the
/// rules that make spaces and `%20` tell the dialects apart.
const HOSTS: &[(&str, &str)] = &[
    (
        "a.example",
        "User-agent: *\nDisallow: /private\nDisallow: /a b\n\n\
         User-agent: GPTBot\nDisallow: /\n\n\
         User-agent: CCBot\nAllow: /private/ok\nDisallow: /private\n",
    ),
    (
        "b.example",
        "User-agent: CCBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
    ),
    ("s.example", "User-agent: *\nDisallow: /x%20y\n"),
];

const AGENTS: [&str; 3] = ["MyBot", "GPTBot", "CCBot"];

/// A directory with `bundle-<dialect>.bin` built from [`HOSTS`].
fn bundles(name: &str) -> Dir {
    let dir = Dir::new(name);
    std::fs::create_dir(dir.join("hosts")).unwrap();
    for (host, robots) in HOSTS {
        dir.write(&format!("hosts/{host}.txt"), robots);
    }
    for dialect in ["rfc9309", "google"] {
        let out = format!("bundle-{dialect}.bin");
        let args =
            ["compile", "--dialect", dialect, "--hosts", "hosts", "-o", &out];
        dir.run(&args).ok();
    }
    dir
}

/// `filter` over `input` with `agents`, `--emit emit` and `extra`
/// arguments; stdout as octets.
fn filter(
    dir: &Dir,
    dialect: &str,
    agents: &[&str],
    emit: &str,
    extra: &[&str],
    input: &[u8],
) -> Vec<u8> {
    let bundle = format!("bundle-{dialect}.bin");
    let mut args = vec!["filter", &bundle, "--emit", emit];
    for a in agents {
        args.extend(["--agent", a]);
    }
    args.extend(extra);
    let run = dir.run_with(&args, input);
    run.exits(0);
    run.stdout
}

/// Splits output lines into their first `n` TAB-separated columns and the
/// rest (the input line).
fn columns(out: &[u8], n: usize) -> Vec<(Vec<String>, Vec<u8>)> {
    let mut lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    assert_eq!(lines.pop(), Some(&b""[..]), "output ends with a newline");
    lines
        .into_iter()
        .map(|line| {
            let mut parts = line.splitn(n + 1, |&b| b == b'\t');
            let cols = (0..n)
                .map(|_| {
                    String::from_utf8(parts.next().unwrap().to_vec()).unwrap()
                })
                .collect();
            (cols, parts.next().expect("the line").to_vec())
        })
        .collect()
}

/// The input line as `filter` prints it: without its `\n` and one
/// trailing `\r`.
fn text(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Random frontier lines: URLs of known and unknown hosts with spaces,
/// `%20`, queries and fragments; fields with TABs, `\r`, NUL and octets
/// that are not UTF-8; CRLF endings; and lines that are not URLs.
fn random_lines(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    const HOST: &[&str] = &[
        "http://a.example",
        "https://A.Example:443",
        "http://b.example",
        "http://s.example",
        "http://unknown.example",
        "http://a b.example",
    ];
    const PATH: &[&str] = &[
        "/",
        "private",
        "/ok",
        "a b",
        " ",
        "%20",
        "x y",
        "x%20y",
        "?q=1",
        "#frag",
        "/robots.txt",
        "\u{e9}",
    ];
    const FIELD: &[&[u8]] = &[
        b"depth=1",
        b"\t",
        b"score=0.5",
        b" ",
        b"\r",
        b"\x00",
        b"\xff\xfe",
        b"\xe3\x83\x84",
        b"#/x",
        b"http://b.example/",
    ];
    (0..count)
        .map(|_| {
            let mut line = Vec::new();
            match next(12) {
                0 => line.extend_from_slice(b"b.example/no-scheme"),
                1 => line.extend_from_slice(b"http://a.example/x "),
                2 => line.extend_from_slice(b"http://a.example/\x01"),
                3 => {}
                _ => {
                    line.extend_from_slice(HOST[next(HOST.len())].as_bytes());
                    line.push(b'/');
                    for _ in 0..next(4) {
                        let piece = PATH[next(PATH.len())];
                        line.extend_from_slice(piece.as_bytes());
                    }
                }
            }
            if next(2) == 0 {
                line.push(b'\t');
                for _ in 0..next(4) {
                    line.extend_from_slice(FIELD[next(FIELD.len())]);
                }
            }
            if next(5) == 0 {
                line.push(b'\r');
            }
            line
        })
        .collect()
}

/// With several agents, each verdict column is exactly that agent's
/// single-agent verdict, the line is passed through whole, and the
/// selections follow the combined verdict: allowed for every agent,
/// disallowed for at least one, unknown host.
#[test]
fn several_agents_match_single_agent_runs_on_random_frontier_lines() {
    let dir = bundles("frontier-agents");
    let lines = random_lines(0x5eed_f00d_1234_5678, 3_000);
    let input = lines.join(&b'\n');
    for dialect in ["rfc9309", "google"] {
        let single: Vec<Vec<(Vec<String>, Vec<u8>)>> = AGENTS
            .iter()
            .map(|a| {
                columns(&filter(&dir, dialect, &[a], "all", &[], &input), 1)
            })
            .collect();
        let multi =
            columns(&filter(&dir, dialect, &AGENTS, "all", &[], &input), 3);
        assert_eq!(multi.len(), lines.len());
        let mut combined = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, (cols, line)) in multi.iter().enumerate() {
            assert_eq!(line.as_slice(), text(&lines[i]), "{dialect} line {i}");
            for (a, run) in single.iter().enumerate() {
                assert_eq!(run[i].1, *line, "{dialect} line {i}");
                assert_eq!(
                    cols[a], run[i].0[0],
                    "{dialect} line {i} agent {a}"
                );
            }
            // The combined verdict, written out from its definition.
            let c = if cols.iter().any(|c| c == "invalid") {
                assert!(cols.iter().all(|c| c == "invalid"));
                "invalid"
            } else if cols.iter().any(|c| c == "disallow") {
                "disallow"
            } else if cols.iter().any(|c| c == "unknown") {
                "unknown"
            } else {
                "allow"
            };
            combined.push(c);
            seen.insert(cols.clone());
        }
        // The generator reaches agents that disagree, and every outcome.
        assert!(seen.len() >= 6, "{dialect}: {seen:?}");
        for want in ["allow", "disallow", "unknown", "invalid"] {
            assert!(combined.contains(&want), "{dialect}: no {want}");
        }
        for (emit, verdict) in [
            ("allowed", "allow"),
            ("disallowed", "disallow"),
            ("unknown", "unknown"),
        ] {
            let out = filter(&dir, dialect, &AGENTS, emit, &[], &input);
            let mut want = Vec::new();
            for (line, c) in lines.iter().zip(&combined) {
                if *c == verdict {
                    want.extend_from_slice(text(line));
                    want.push(b'\n');
                }
            }
            assert_eq!(out, want, "{dialect} --emit {emit}");
        }
    }
}

/// Section 1 rules, each on its own: TAB fields kept byte for byte, CRLF,
/// spaces per dialect, and the lines that stay invalid.
#[test]
fn frontier_line_rules() {
    let dir = bundles("frontier-rules");
    let run = |dialect: &str, line: &[u8]| -> (String, Vec<u8>) {
        let mut input = line.to_vec();
        input.push(b'\n');
        let out = filter(&dir, dialect, &["MyBot"], "all", &[], &input);
        let mut cols = columns(&out, 1);
        assert_eq!(cols.len(), 1, "{:?}", line.escape_ascii().to_string());
        let (v, rest) = cols.pop().unwrap();
        (v[0].clone(), rest)
    };
    // Fields after the first TAB: any octets but `\n`, kept; the verdict
    // is the URL's alone, and one trailing `\r` is dropped.
    let fields: &[u8] =
        b"http://a.example/private/x\tdepth=1\t\xff\x00\r \t\r\n";
    let (v, rest) = run("rfc9309", &fields[..fields.len() - 1]);
    assert_eq!(v, "disallow");
    assert_eq!(rest, &fields[..fields.len() - 2]);
    assert_eq!(
        run("rfc9309", b"http://a.example/public\tx=/private").0,
        "allow"
    );
    // A TAB right after the authority: the path is `/`.
    assert_eq!(run("rfc9309", b"http://a.example\t/private").0, "allow");
    // Spaces: google matches them raw, rfc9309 as %20 (both sides).
    for (dialect, url, want) in [
        ("google", "http://a.example/a b", "disallow"),
        ("google", "http://a.example/a%20b", "allow"),
        ("rfc9309", "http://a.example/a b", "disallow"),
        ("rfc9309", "http://a.example/a%20b", "disallow"),
        ("google", "http://s.example/x y", "allow"),
        ("google", "http://s.example/x%20y", "disallow"),
        ("rfc9309", "http://s.example/x y", "disallow"),
        ("rfc9309", "http://s.example/x%20y", "disallow"),
    ] {
        assert_eq!(run(dialect, url.as_bytes()).0, want, "{dialect} {url}");
    }
    // Still invalid: a space at either end of the URL, a control octet in
    // it, no scheme, an empty URL, and a space in a bundle's authority.
    for line in [
        &b" http://a.example/"[..],
        b"http://a.example/x \tf",
        b"http://a.example/x ",
        b"http://a.example/\x7f",
        b"http://a.example/\rx",
        b"a.example/x\tf",
        b"\thttp://a.example/",
        b"http://a b.example/",
    ] {
        let (v, rest) = run("rfc9309", line);
        assert_eq!(v, "invalid", "{:?}", line.escape_ascii().to_string());
        assert_eq!(rest, line);
    }
}

/// `--json`: the URL without its fields, `fields` (or `fields_base64`),
/// the combined `verdict`, `verdicts` per agent, and `reasons` with
/// `--explain`; one agent keeps today's keys.
#[test]
fn json_shape_with_fields_and_several_agents() {
    let dir = bundles("frontier-json");
    let input = b"http://a.example/private/ok\tdepth=1\tsrc=seed\n\
                  http://b.example/x\t\xff\n\
                  http://c.example/\n\
                  not a url\tf\n";
    let json = |agents: &[&str], extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["--json"];
        args.extend(extra);
        let out = filter(&dir, "rfc9309", agents, "all", &args, input);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let v = json(&["MyBot", "CCBot"], &[]);
    assert_eq!(
        v[0],
        serde_json::json!({
            "url": "http://a.example/private/ok",
            "verdict": "disallow",
            "verdicts": {"MyBot": "disallow", "CCBot": "allow"},
            "host": "a.example",
            "fields": "depth=1\tsrc=seed",
        })
    );
    assert_eq!(v[1]["fields_base64"], "/w==");
    assert!(v[1].get("fields").is_none());
    assert_eq!(v[1]["verdict"], "disallow");
    assert_eq!(v[1]["verdicts"]["MyBot"], "allow");
    assert_eq!(v[2]["verdict"], "unknown");
    assert!(v[2].get("fields").is_none());
    assert_eq!(v[3]["verdict"], "invalid");
    assert_eq!(v[3]["url"], "not a url");
    assert_eq!(v[3]["fields"], "f");
    // One agent: no `verdicts`, and --explain's keys as before, in order.
    let out = filter(
        &dir,
        "rfc9309",
        &["MyBot"],
        "all",
        &["--json", "--explain"],
        input,
    );
    let first =
        String::from_utf8(out).unwrap().lines().next().unwrap().to_string();
    let at = |key: &str| {
        first
            .find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("no {key} in {first}"))
    };
    let keys =
        ["url", "verdict", "host", "fields", "reason", "line", "pattern"];
    assert!(keys.windows(2).all(|k| at(k[0]) < at(k[1])), "{first}");
    assert!(!first.contains("\"verdicts\""), "{first}");
    let one = json(&["MyBot"], &["--explain"]);
    assert_eq!(one[0]["line"], 2);
    assert_eq!(one[0]["pattern"], "/private");
    // Several agents with --explain: `reasons` per agent.
    let two = json(&["MyBot", "CCBot"], &["--explain"]);
    assert_eq!(two[0]["reasons"]["CCBot"]["pattern"], "/private/ok");
    assert_eq!(two[0]["reasons"]["MyBot"]["line"], 2);
    assert!(two[0].get("reason").is_none());
    assert_eq!(two[3]["reasons"]["MyBot"]["reason"], "not a URL");
}

/// With several agents the summary is followed by each agent's own counts,
/// which are the counts of its verdict column.
#[test]
fn summary_counts_per_agent() {
    let dir = bundles("frontier-agent-counts");
    let mut input = Vec::new();
    for host in ["a.example", "b.example", "c.example", "nobody.example"] {
        for path in ["/", "/private/x", "/x", "/search"] {
            input.extend(format!("https://{host}{path}\n").as_bytes());
        }
    }
    input.extend(b"not a url\n\n");
    let mut args = vec!["filter", "bundle-rfc9309.bin", "--emit", "all"];
    for a in AGENTS {
        args.extend(["--agent", a]);
    }
    let run = dir.run_with(&args, &input);
    run.exits(0);
    let out = String::from_utf8(run.stdout.clone()).unwrap();
    for (i, agent) in AGENTS.iter().enumerate() {
        let count = |v: &str| {
            out.lines().filter(|l| l.split('\t').nth(i) == Some(v)).count()
        };
        let want = format!(
            "robofilter: {agent}: {} allowed, {} disallowed, {} unknown, {} invalid",
            count("allow"),
            count("disallow"),
            count("unknown"),
            count("invalid")
        );
        run.stderr_has(&[&want]);
    }
    // One agent: the summary alone.
    let run = dir.run_with(
        &["filter", "bundle-rfc9309.bin", "--agent", "MyBot"],
        &input,
    );
    assert!(!run.stderr.contains("robofilter: MyBot:"), "{}", run.stderr);
}

/// `--explain` says why a URL is not one where the line does not show it:
/// a space at its end, a control octet.
#[test]
fn explain_gives_the_cause_of_an_invalid_url() {
    let dir = bundles("frontier-invalid-cause");
    let input = b"http://a.example/x \nhttp://a.example/\x01y\nnope\n";
    let out =
        filter(&dir, "rfc9309", &["MyBot"], "all", &["--explain"], input);
    let reasons: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap().to_string())
        .collect();
    assert_eq!(
        reasons,
        [
            "not a URL: it ends with a space (percent-encode it as %20)",
            "not a URL: it holds a control octet (percent-encode it)",
            "not a URL",
        ]
    );
}

/// A host key that is not UTF-8 is given in base64, as `url` and `fields`
/// are: two hosts that differ in one octet never print alike.
#[test]
fn json_host_that_is_not_utf8_is_base64() {
    let dir = bundles("frontier-json-host");
    let input = b"http://h\xe9st.example/x\nhttp://h\xe8st.example/x\nhttp://a.example/\n";
    let out = filter(&dir, "google", &["MyBot"], "all", &["--json"], input);
    let v: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 3);
    assert!(v[0].get("host").is_none(), "{}", v[0]);
    assert_eq!(v[0]["host_base64"], "aOlzdC5leGFtcGxl");
    assert_eq!(v[1]["host_base64"], "aOhzdC5leGFtcGxl");
    assert_eq!(v[2]["host"], "a.example");
    assert!(v[2].get("host_base64").is_none());
}

/// `--explain` puts one reason column per agent after the verdict
/// columns and before the line; an invalid line gets one `invalid` and
/// one reason per agent.
#[test]
fn explain_columns_come_before_the_line() {
    let dir = bundles("frontier-explain");
    let input = b"http://a.example/private/ok\tdepth=1\nnot a url\n";
    let out = filter(
        &dir,
        "rfc9309",
        &["MyBot", "CCBot"],
        "all",
        &["--explain"],
        input,
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "disallow\tallow\tline 2: Disallow: /private\t\
         line 9: Allow: /private/ok\thttp://a.example/private/ok\tdepth=1\n\
         invalid\tinvalid\tnot a URL\tnot a URL\tnot a url\n"
    );
    // Without verdict columns: the reasons, then the line.
    let out =
        filter(&dir, "rfc9309", &["CCBot"], "allowed", &["--explain"], input);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "line 9: Allow: /private/ok\thttp://a.example/private/ok\tdepth=1\n"
    );
}

/// `check` and `explain` take several agents too; naming an agent twice
/// (in any case) is a usage error.
#[test]
fn check_and_explain_with_several_agents() {
    let dir = bundles("frontier-check");
    let url = "http://a.example/private/ok";
    let args = |cmd: &'static str, agents: &[&'static str]| {
        let mut a = vec![cmd, "bundle-rfc9309.bin"];
        for agent in agents {
            a.extend(["--agent", agent]);
        }
        a.push(url);
        a
    };
    let out = dir.run(&args("check", &["MyBot", "GPTBot", "CCBot"])).ok();
    assert_eq!(out, format!("disallow\tdisallow\tallow\t{url}\n"));
    let out = dir.run(&args("explain", &["MyBot", "CCBot"])).ok();
    assert_eq!(
        out,
        format!(
            "disallow\t{url}\tline 2: Disallow: /private\t* group\tMyBot\n\
             allow\t{url}\tline 9: Allow: /private/ok\town group\tCCBot\n"
        )
    );
    // One agent: today's four columns.
    let out = dir.run(&args("explain", &["CCBot"])).ok();
    assert_eq!(out.split('\t').count(), 4, "{out}");
    for cmd in ["check", "explain", "filter"] {
        let mut a = args(cmd, &["GPTBot", "gptbot"]);
        if cmd == "filter" {
            a.pop();
        }
        dir.run(&a).fails_without_output(&["given twice", "gptbot"]);
    }
}

/// A line over --max-url-len counts URL and fields, and gets one
/// `invalid` column per agent, from a file as from a pipe.
#[test]
fn over_long_lines_get_a_column_per_agent() {
    let dir = bundles("frontier-long");
    let long = format!("http://a.example/x\t{}", "f".repeat(100));
    let input = format!("{long}\nhttp://b.example/\n");
    let extra = ["--max-url-len", "64", "-j", "1"];
    let out = filter(
        &dir,
        "rfc9309",
        &["MyBot", "CCBot"],
        "all",
        &extra,
        input.as_bytes(),
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!(
            "invalid\tinvalid\t{long}\nallow\tdisallow\thttp://b.example/\n"
        )
    );
}
