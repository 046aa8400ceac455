//! `filter --usage` and `--respect` (AIPREF Content-Usage, issue 40 item 5): the columns, JSON and selection over a bundle whose hosts cover every kind of target.

use crate::util::Dir;

/// a.example states preferences; b.example's robots.txt is missing (404:
/// allow all, no rule), c.example's is unreachable (503: disallow all).
const MANIFEST: &str = concat!(
    r#"{"host":"a.example","status":200,"body":"User-agent: *\nContent-Usage: train-ai=n, search=y\nContent-Usage: /blog/ train-ai=y\nDisallow: /private\n\nUser-agent: GPTBot\nContent-Usage: /docs/ train-ai=n\nDisallow: /x\n"}"#,
    "\n",
    r#"{"host":"b.example","status":404}"#,
    "\n",
    r#"{"host":"c.example","status":503}"#,
    "\n",
);

const URLS: &str = "https://a.example/\n\
                    https://a.example/blog/1\tkept\n\
                    https://a.example/private/z\n\
                    https://a.example/docs/1\n\
                    https://b.example/\n\
                    https://c.example/\n\
                    https://d.example/\n\
                    not a url\n";

fn dir(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write("m.jsonl", MANIFEST);
    dir.write("urls.txt", URLS);
    dir.run(&["compile", "--manifest", "m.jsonl", "-o", "b.bin"]).ok();
    dir
}

#[test]
fn usage_columns_follow_the_verdict_columns() {
    let dir = dir("usage-columns");
    let args = [
        "filter", "b.bin", "--agent", "MyBot", "--agent", "GPTBot", "--usage",
        "train-ai", "--usage", "search", "--usage", "train-ai", "--emit",
        "all", "urls.txt",
    ];
    let out = dir.run(&args).ok();
    // The longest rule wins whole: /blog/ says nothing of search.
    let want = "\
allow\tallow\tn\ty\tunknown\tunknown\thttps://a.example/
allow\tallow\ty\tunknown\tunknown\tunknown\thttps://a.example/blog/1\tkept
disallow\tallow\t-\t-\tunknown\tunknown\thttps://a.example/private/z
allow\tallow\tn\ty\tn\tunknown\thttps://a.example/docs/1
allow\tallow\tunknown\tunknown\tunknown\tunknown\thttps://b.example/
disallow\tdisallow\t-\t-\t-\t-\thttps://c.example/
unknown\tunknown\t-\t-\t-\t-\thttps://d.example/
invalid\tinvalid\t-\t-\t-\t-\tnot a url
";
    assert_eq!(out, want);
    // Without --emit all: the usage columns, then the line.
    let out = dir
        .run(&[
            "filter", "b.bin", "--agent", "MyBot", "--usage", "search",
            "urls.txt",
        ])
        .ok();
    assert_eq!(
        out,
        "y\thttps://a.example/\nunknown\thttps://a.example/blog/1\tkept\n\
         y\thttps://a.example/docs/1\nunknown\thttps://b.example/\n"
    );
}

#[test]
fn usage_in_json_is_per_agent_and_key() {
    let dir = dir("usage-json");
    let args = [
        "filter", "b.bin", "--agent", "MyBot", "--usage", "train-ai",
        "--emit", "all", "--json", "urls.txt",
    ];
    let out = dir.run(&args).ok();
    let lines: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 8);
    let usage = |i: usize| lines[i]["usage"]["MyBot"]["train-ai"].clone();
    assert_eq!(usage(0), "n");
    assert_eq!(usage(1), "y");
    assert_eq!(usage(2), serde_json::Value::Null);
    assert_eq!(usage(4), "unknown");
    for i in 5..8 {
        assert_eq!(usage(i), serde_json::Value::Null, "line {i}");
    }
    // Without --usage, no `usage` key.
    let plain = dir
        .run(&["filter", "b.bin", "--agent", "MyBot", "--json", "urls.txt"])
        .ok();
    assert!(!plain.contains("\"usage\""), "{plain}");
}

#[test]
fn respect_drops_allowed_lines_that_say_n() {
    let dir = dir("usage-respect");
    let run = dir.run(&[
        "filter",
        "b.bin",
        "--agent",
        "MyBot",
        "--respect",
        "train-ai",
        "urls.txt",
    ]);
    assert_eq!(
        run.ok(),
        "https://a.example/blog/1\tkept\nhttps://b.example/\n"
    );
    assert!(
        run.stderr.contains("2 allowed lines dropped by --respect"),
        "{}",
        run.stderr
    );
    // GPTBot's own group says n only under /docs/.
    let out = dir
        .run(&[
            "filter",
            "b.bin",
            "--agent",
            "GPTBot",
            "--respect",
            "train-ai",
            "urls.txt",
        ])
        .ok();
    assert_eq!(
        out,
        "https://a.example/\nhttps://a.example/blog/1\tkept\n\
         https://a.example/private/z\nhttps://b.example/\n"
    );
    // Two agents: dropped if either says n.
    let out = dir
        .run(&[
            "filter",
            "b.bin",
            "--agent",
            "GPTBot",
            "--agent",
            "MyBot",
            "--respect",
            "train-ai",
            "--respect",
            "search",
            "urls.txt",
        ])
        .ok();
    assert_eq!(out, "https://a.example/blog/1\tkept\nhttps://b.example/\n");
}

#[test]
fn bad_usage_arguments_are_refused() {
    let dir = dir("usage-bad");
    let run = dir.run(&[
        "filter", "b.bin", "--agent", "a", "--usage", "Train-AI", "urls.txt",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("train-ai and search"), "{}", run.stderr);
    let run = dir.run(&[
        "filter",
        "b.bin",
        "--agent",
        "a",
        "--respect",
        "search",
        "--emit",
        "all",
        "urls.txt",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("needs --emit allowed"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn inspect_json_lists_each_hosts_content_usage_rules() {
    let dir = dir("usage-inspect");
    let out = dir.run(&["inspect", "b.bin", "--json"]).ok();
    let hosts: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let a = hosts.iter().find(|h| h["host"] == "a.example").unwrap();
    let rules = a["content_usage"].as_array().unwrap();
    let got: Vec<(u64, &str, &str, &str)> = rules
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["path"].as_str().unwrap(),
                r["train-ai"].as_str().unwrap(),
                r["search"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (2, "/", "n", "y"),
            (3, "/blog/", "y", "unknown"),
            (7, "/docs/", "n", "unknown")
        ]
    );
    assert_eq!(rules[2]["agents"], serde_json::json!(["GPTBot"]));
    assert_eq!(rules[0]["expression"], "train-ai=n, search=y");
    assert_eq!(rules[0]["parsed"], true);
    for host in ["b.example", "c.example"] {
        let h = hosts.iter().find(|h| h["host"] == host).unwrap();
        assert_eq!(h["content_usage"], serde_json::json!([]), "{host}");
    }
}

#[test]
fn parquet_outputs_carry_the_preference_columns_of_the_lines() {
    use std::sync::Arc;
    let dir = dir("usage-parquet");
    let urls: Vec<Option<&str>> =
        URLS.lines().map(|l| l.split('\t').next()).chain([None]).collect();
    let column: arrow_array::ArrayRef =
        Arc::new(arrow_array::StringArray::from(urls.clone()));
    crate::formats::write_parquet(&dir, "in.parquet", vec![("url", column)]);
    let lines: String =
        urls.iter().map(|u| format!("{}\n", u.unwrap_or(""))).collect();
    dir.write("lines.txt", lines);
    let base = [
        "filter", "b.bin", "--agent", "MyBot", "--agent", "GPTBot", "--usage",
        "train-ai", "--usage", "search",
    ];
    // With --emit all: the columns equal the lines' usage columns.
    let printed =
        dir.run(&[&base[..], &["--emit", "all", "lines.txt"]].concat()).ok();
    let args = ["--emit", "all", "--input-format", "parquet", "in.parquet"];
    dir.run(&[&base[..], &args, &["-o", "out.parquet"]].concat()).ok();
    let out = crate::formats::read_parquet(&dir, "out.parquet");
    let schema = out.schema();
    let names: Vec<&str> =
        schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "url",
            "verdict_MyBot",
            "verdict_GPTBot",
            "usage_train-ai_MyBot",
            "usage_search_MyBot",
            "usage_train-ai_GPTBot",
            "usage_search_GPTBot",
        ]
    );
    let columns: Vec<Vec<Option<String>>> = (3..7)
        .map(|c| crate::formats::verdicts(out.column(c).as_ref()))
        .collect();
    for (i, line) in printed.lines().enumerate() {
        let want: Vec<&str> = line.split('\t').skip(2).take(4).collect();
        let got: Vec<&str> =
            columns.iter().map(|c| c[i].as_deref().unwrap_or("-")).collect();
        assert_eq!(got, want, "row {i}: {line}");
    }
    // --respect drops the rows the lines' run drops.
    let respect = ["--respect", "train-ai"];
    let kept = dir
        .run(&[&base[..2], &base[2..6], &respect, &["lines.txt"]].concat())
        .ok();
    let args = ["--input-format", "parquet", "in.parquet", "-o", "r.parquet"];
    dir.run(&[&base[..2], &base[2..6], &respect, &args].concat()).ok();
    let out = crate::formats::read_parquet(&dir, "r.parquet");
    let url = out.column(0).as_any();
    let url = url.downcast_ref::<arrow_array::StringArray>().unwrap();
    let rows: Vec<&str> = (0..out.num_rows()).map(|i| url.value(i)).collect();
    let kept: Vec<&str> = kept.lines().collect();
    assert_eq!(rows, kept);
    assert_eq!(rows, ["https://a.example/blog/1", "https://b.example/"]);
}

#[test]
fn a_damaged_side_section_stops_a_run_that_needs_it_and_writes_nothing() {
    let dir = Dir::new("usage-damaged");
    dir.write(
        "robots.txt",
        "User-agent: *\nContent-Usage: train-ai=n\nDisallow: /private\n",
    );
    dir.write("urls.txt", "https://a.example/\nhttps://a.example/private\n");
    dir.run(&["compile", "robots.txt", "-o", "ok.bin"]).ok();
    let mut bytes = dir.read("ok.bin");
    let at = bytes.windows(10).rposition(|w| w == b"train-ai=n").unwrap();
    bytes[at] ^= 1;
    dir.write("flip.bin", &bytes);
    // Verdicts never read the side section: they are as before.
    let plain = ["filter", "flip.bin", "--agent", "a", "urls.txt"];
    assert_eq!(dir.run(&plain).ok(), "https://a.example/\n");
    let run = dir.run(&[
        "filter", "flip.bin", "--agent", "a", "--usage", "train-ai",
        "urls.txt", "-o", "out.txt",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    for part in
        ["'flip.bin'", "host a.example", "side section", "compile it again"]
    {
        assert!(run.stderr.contains(part), "{part}: {}", run.stderr);
    }
    assert!(!dir.join("out.txt").exists());
}
