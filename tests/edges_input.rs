//! Process-level tests of input edges (issue 11, items 3, 5 and 13):
//! compiled files told by their magic (compressed too), rules changed underneath a run, and
//! robots.txt text escaped in human and TSV output.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use flate2::{Compression, write::GzEncoder};

use crate::util::Dir;

const ROBOTS_A: &str = "User-agent: *\nDisallow: /private\n";
const ROBOTS_B: &str = "User-agent: *\nDisallow: /\nAllow: /open\n";

/// A directory with `robots.txt` (a.example's), its rules file
/// `rules.bin`, and `bundle.bin` of hosts a.example and b.example.
fn compiled_dir(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write("robots.txt", ROBOTS_A);
    dir.run(&["compile", "robots.txt", "-o", "rules.bin"]).ok();
    std::fs::create_dir(dir.path.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", ROBOTS_A);
    dir.write("hosts/b.example.txt", ROBOTS_B);
    dir.run(&["compile", "--hosts", "hosts", "-o", "bundle.bin"]).ok();
    assert!(dir.read("rules.bin").starts_with(b"ROBOFLTR"));
    assert!(dir.read("bundle.bin").starts_with(b"ROBOBNDL"));
    dir
}

#[test]
fn compile_refuses_rules_files_and_bundles_as_robots_txt() {
    let dir = compiled_dir("compile-refuses");
    for (file, what) in [
        ("rules.bin", "compiled rules file"),
        ("bundle.bin", "compiled bundle"),
    ] {
        dir.run(&["compile", file, "-o", "out.bin"]).fails_without_output(&[
            &format!("'{file}' is a {what}, not a robots.txt"),
        ]);
        assert!(!dir.path.join("out.bin").exists(), "{file}: output written");
        // From stdin too.
        dir.run_with(&["compile", "-", "-o", "out.bin"], &dir.read(file))
            .fails_without_output(&[&format!(
                "'<stdin>' is a {what}, not a robots.txt"
            )]);
    }
}

/// A gzip or zstd robots.txt is refused where one is compiled (`compile`,
/// `check`; a file and stdin), and is a bad member of a hosts directory:
/// read as text it has no rules, and every URL was allowed (exit 0).
#[test]
fn compressed_robots_txt_is_refused_not_read_as_allow_all() {
    let dir = compiled_dir("compressed-robots");
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(ROBOTS_A.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(ROBOTS_A.as_bytes(), 1).unwrap();
    for (file, bytes, tool) in [("r.gz", &gz, "gzip"), ("r.zst", &zst, "zstd")]
    {
        dir.write(file, bytes);
        let message =
            format!("'{file}' is {tool}-compressed, not a robots.txt");
        dir.run(&["compile", file, "-o", "out.bin"]).fails_without_output(&[
            &message,
            &format!("{tool} -dc '{file}'"),
        ]);
        assert!(!dir.path.join("out.bin").exists(), "{file}: output written");
        dir.run_with(&["compile", "-", "-o", "out.bin"], bytes)
            .fails_without_output(&[&format!(
                "'<stdin>' is {tool}-compressed"
            )]);
        dir.run(&[
            "check",
            "--agent",
            "a",
            file,
            "http://a.example/private/x",
        ])
        .fails_without_output(&[&message]);
    }
    std::fs::create_dir(dir.path.join("gz-hosts")).unwrap();
    dir.write("gz-hosts/a.example.txt", ROBOTS_A);
    dir.write("gz-hosts/b.example.txt", &gz);
    let run = dir.run(&["compile", "--hosts", "gz-hosts", "-o", "gz.bundle"]);
    run.ok();
    assert!(
        run.stderr
            .contains("b.example.txt: gzip-compressed, not a robots.txt")
            && run.stderr.contains("host 'b.example' recorded as unreadable"),
        "{}",
        run.stderr
    );
    let out = dir.run(&[
        "check",
        "--agent",
        "a",
        "gz.bundle",
        "http://b.example/open",
    ]);
    assert_eq!(out.ok(), "disallow\thttp://b.example/open\n");
}

/// `compile` warns when a robots.txt has no group and lines it did not
/// understand (UTF-16, binary data, an HTML page): every URL is allowed,
/// and the file is most likely not a robots.txt. A file of comments and
/// sitemaps, or an empty one, is a robots.txt that allows everything:
/// no warning.
#[test]
fn compile_warns_of_a_file_with_no_group_and_nothing_understood() {
    let dir = Dir::new("no-group-warning");
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(ROBOTS_A.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    dir.write("utf16.txt", &utf16);
    dir.write("page.txt", "<html><body>Not found</body></html>\n");
    dir.write("sitemap.txt", "# nothing\nSitemap: https://a.example/s.xml\n");
    dir.write("empty.txt", "");
    for (file, warned) in [
        ("utf16.txt", Some("UTF-16 byte-order mark")),
        ("page.txt", Some("1 line not understood")),
        ("sitemap.txt", None),
        ("empty.txt", None),
    ] {
        let run = dir.run(&["compile", file, "-o", "out.bin"]);
        run.ok();
        let warning = format!("warning: '{file}' has no group");
        match warned {
            Some(why) => assert!(
                run.stderr.contains(&warning)
                    && run.stderr.contains(why)
                    && run.stderr.contains("every URL is allowed"),
                "{file}: {}",
                run.stderr
            ),
            None => assert!(
                !run.stderr.contains("warning"),
                "{file}: {}",
                run.stderr
            ),
        }
    }
}

/// A rules file or bundle given where `filter` reads URLs (the arguments
/// in the wrong order, a glob that caught one) is refused before any
/// output, from a file, a second file after a good one, and stdin: read
/// as text, every line would count invalid and the run would succeed.
#[test]
fn filter_refuses_rules_files_and_bundles_as_url_lists() {
    let dir = compiled_dir("filter-refuses-compiled-urls");
    dir.write("urls.txt", "https://a.example/open\n");
    for (file, what) in [
        ("rules.bin", "compiled rules file"),
        ("bundle.bin", "compiled bundle"),
    ] {
        let message = format!("URL list '{file}' is a {what}");
        for inputs in [&[file][..], &["urls.txt", file]] {
            let mut args = vec!["filter", "rules.bin", "--agent", "a"];
            args.extend(inputs);
            dir.run(&args).fails_without_output(&[&message, "go first"]);
        }
        dir.run_with(
            &["filter", "bundle.bin", "--agent", "a"],
            &dir.read(file),
        )
        .fails_without_output(&[&format!("URL list '<stdin>' is a {what}")]);
    }
    // Compressed, told by the decompressed head: gzip and zstd, as a
    // file (refused before the good file before it is output) and on
    // stdin.
    let rules = dir.read("rules.bin");
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(&rules).unwrap();
    let zst = zstd::encode_all(&rules[..], 1).unwrap();
    for (file, bytes) in
        [("rules.bin.gz", gz.finish().unwrap()), ("rules.bin.zst", zst)]
    {
        dir.write(file, &bytes);
        let message = format!("URL list '{file}' is a compiled rules file");
        let args = ["filter", "rules.bin", "--agent", "a", "urls.txt", file];
        dir.run(&args).fails_without_output(&[&message, "go first"]);
        dir.run_with(&["filter", "rules.bin", "--agent", "a"], &bytes)
            .fails_without_output(&[
                "URL list '<stdin>' is a compiled rules file",
            ]);
    }
    // A URL list is still read, compressed or not.
    let out = dir.run(&["filter", "rules.bin", "--agent", "a", "urls.txt"]);
    assert_eq!(out.ok(), "https://a.example/open\n");
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(b"https://a.example/open\n").unwrap();
    dir.write("urls.txt.gz", gz.finish().unwrap());
    let out = dir.run(&["filter", "rules.bin", "--agent", "a", "urls.txt.gz"]);
    assert_eq!(out.ok(), "https://a.example/open\n");
}

/// A URL list on a pipe whose first read gives one octet is still told
/// by its magic: a gzip list is decompressed, a rules file refused (a
/// single short read of the head took both for text: every line invalid,
/// exit 0).
#[test]
fn a_trickled_head_is_still_told_by_its_magic() {
    let dir = compiled_dir("trickled-head");
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(b"https://a.example/private/x\nhttps://a.example/open\n")
        .unwrap();
    let rules = dir.read("rules.bin");
    for (bytes, want) in [(gz.finish().unwrap(), Ok(())), (rules, Err(()))] {
        let args =
            ["filter", "rules.bin", "--agent", "a", "--emit", "all", "-"];
        let mut child = dir.spawn(&args, Stdio::piped());
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&bytes[..1]).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        // The rules' refusal may close the pipe before the rest is written.
        let _ = stdin.write_all(&bytes[1..]);
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        match want {
            Ok(()) => assert_eq!(
                (out.status.code(), &*stdout),
                (
                    Some(0),
                    "disallow\thttps://a.example/private/x\nallow\thttps://a.example/open\n"
                ),
                "{stderr}"
            ),
            Err(()) => assert!(
                out.status.code() == Some(2)
                    && stdout.is_empty()
                    && stderr.contains(
                        "URL list '<stdin>' is a compiled rules file"
                    ),
                "{:?} {stdout} {stderr}",
                out.status
            ),
        }
    }
}

/// One stream named twice among the inputs (`- -`, `-` and `/dev/stdin`
/// on a pipe, one FIFO twice, stdin as the rules and `/dev/stdin` as the
/// URL list) is refused before any output, by `filter` and `shard`: each
/// reading took part of the lines, spliced where the other stopped, and
/// verdicts came out for URLs that were never in the input. A regular
/// file or a device named twice is read twice.
#[test]
fn one_stream_named_twice_is_refused() {
    let dir = compiled_dir("stream-twice");
    let urls = "https://a.example/private/aaaa\n".repeat(2000);
    let filter = ["filter", "rules.bin", "--agent", "a", "--emit", "all"];
    let cases: [(&[&str], &[&str]); 2] = [
        (&["-", "-"], &["URL list '<stdin>' is given twice"]),
        (
            &["-", "/dev/stdin"],
            &[
                "URL list '/dev/stdin' is the same stream as the URL list '<stdin>'",
            ],
        ),
    ];
    for (inputs, message) in cases {
        let mut args = filter.to_vec();
        args.extend(inputs);
        dir.run_with(&args, urls.as_bytes())
            .fails_without_output(&[message[0], "can be read only once"]);
    }
    let args = ["filter", "-", "--agent", "a", "/dev/stdin"];
    dir.run_with(&args, &dir.read("rules.bin")).fails_without_output(&[
        "URL list '/dev/stdin' is the same stream as the rules file or bundle '<stdin>'",
    ]);
    dir.run_with(&["shard", "--shards", "2", "-", "-"], urls.as_bytes())
        .fails_without_output(&["URL list '<stdin>' is given twice"]);
    #[cfg(unix)]
    if std::process::Command::new("mkfifo")
        .arg(dir.path.join("fifo"))
        .status()
        .is_ok_and(|s| s.success())
    {
        // Refused from its name alone: the FIFO is never opened (which
        // would wait for a writer).
        let mut args = filter.to_vec();
        args.extend(["fifo", "fifo"]);
        dir.run(&args)
            .fails_without_output(&["URL list 'fifo' is given twice"]);
    } else {
        println!("skipping the FIFO case: mkfifo is not available");
    }
    dir.write("urls.txt", &urls);
    let mut args = filter.to_vec();
    args.extend(["urls.txt", "urls.txt", "/dev/null", "/dev/null"]);
    let out = dir.run(&args).ok();
    assert_eq!(out, "disallow\thttps://a.example/private/aaaa\n".repeat(4000));
}

#[test]
fn check_and_explain_use_rules_files_and_bundles() {
    let dir = compiled_dir("check-compiled");
    let urls = [
        "http://a.example/private/x",
        "http://a.example/public",
        "http://b.example/x",
        "http://b.example/open",
        "http://c.example/",
    ];
    // The robots.txt itself, its rules file and the bundle agree on
    // a.example; the bundle also decides b.example and knows no c.example.
    let mut args = vec!["check", "--agent", "bot", "robots.txt"];
    args.extend(urls);
    let from_text = dir.run(&args).ok();
    args[3] = "rules.bin";
    assert_eq!(dir.run(&args).ok(), from_text);
    assert!(from_text.starts_with("disallow\thttp://a.example/private/x\n"));
    args[3] = "bundle.bin";
    assert_eq!(
        dir.run(&args).ok(),
        "disallow\thttp://a.example/private/x\n\
         allow\thttp://a.example/public\n\
         disallow\thttp://b.example/x\n\
         allow\thttp://b.example/open\n\
         unknown\thttp://c.example/\n"
    );

    let mut args = vec!["explain", "--agent", "bot", "bundle.bin"];
    args.extend(urls);
    let out = dir.run(&args).ok();
    let lines: Vec<Vec<&str>> =
        out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), urls.len(), "{out}");
    for (cols, url) in lines.iter().zip(urls) {
        assert_eq!(cols.len(), 4, "{out}");
        assert_eq!(cols[1], url);
    }
    assert_eq!(
        lines[0],
        ["disallow", urls[0], "line 2: Disallow: /private", "* group"]
    );
    assert_eq!(lines[2][..3], ["disallow", urls[2], "line 2: Disallow: /"]);
    assert_eq!(lines[3][..3], ["allow", urls[3], "line 3: Allow: /open"]);
    assert_eq!(
        lines[4],
        ["unknown", urls[4], "no entry for host c.example", "no group"]
    );

    // A dialect other than the bundle's is refused, as for a rules file.
    for file in ["rules.bin", "bundle.bin"] {
        dir.run(&[
            "check",
            "--agent",
            "bot",
            "--dialect",
            "google",
            file,
            urls[0],
        ])
        .fails_without_output(&[&format!(
            "'{file}' was compiled with the rfc9309 dialect"
        )]);
    }
}

#[test]
fn inspect_tells_rules_files_and_bundles_by_magic() {
    let dir = compiled_dir("inspect-compiled");
    let out = dir.run(&["inspect", "rules.bin"]).ok();
    assert!(out.contains("format: rules file"), "{out}");
    let out = dir.run(&["inspect", "bundle.bin"]).ok();
    assert!(out.contains("format: bundle"), "{out}");
    assert!(out.contains("host: a.example\t"), "{out}");
}

/// Damaged copies of a compiled file: cut short at several places, and
/// with one byte flipped.
fn damaged(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for cut in [8, 40, 64, bytes.len() / 2, bytes.len() - 1] {
        out.push((format!("cut at {cut}"), bytes[..cut].to_vec()));
    }
    let mut flipped = bytes.to_vec();
    let i = bytes.len() * 3 / 4;
    flipped[i] ^= 0x5a;
    out.push((format!("byte {i} flipped"), flipped));
    out
}

#[test]
fn damaged_compiled_files_are_reported_never_read_as_robots_txt() {
    let dir = compiled_dir("damaged");
    for (file, what) in [("rules.bin", "rules file"), ("bundle.bin", "bundle")]
    {
        for (how, bytes) in damaged(&dir.read(file)) {
            let name = format!("damaged-{file}");
            dir.write(&name, &bytes);
            let damaged = format!("{what} '{name}' is damaged");
            // A URL of each host of the bundle, so that every member is
            // used; b.example's first, so that no verdict precedes the
            // error.
            let (b, a) = ("http://b.example/x", "http://a.example/private/x");
            let runs = [
                vec!["check", "--agent", "bot", &name, b, a],
                vec!["explain", "--agent", "bot", &name, b, a],
                vec!["inspect", &name],
                vec!["filter", &name, "--agent", "bot", "--emit", "all"],
            ];
            let input = format!("{b}\n{a}\n");
            for args in &runs {
                let run = dir.run_with(args, input.as_bytes());
                // A flipped byte in a bundle member is found when the
                // member is loaded: by its first use.
                let member = file == "bundle.bin" && how.contains("flipped");
                if member && args[0] == "inspect" {
                    continue;
                }
                let needle = if member { "member" } else { &damaged };
                assert_eq!(run.code, Some(2), "{how}: {}", run.args);
                run.fails_without_output(&[needle, &name]);
            }
            let compiled = format!("'{name}' is a compiled {what}");
            dir.run(&["compile", &name, "-o", "out.bin"])
                .fails_without_output(&[&compiled]);
        }
    }
}

/// A rules file truncated and rewritten while `filter` reads URLs from a
/// pipe: the verdicts still come from the rules as loaded (no SIGBUS, no
/// panic, no `allow` for what they disallow).
#[test]
fn rules_rewritten_underneath_a_run_keep_their_verdicts() {
    let dir = Dir::new("underneath");
    // Big enough that a mapping of it covers many pages.
    let mut robots = String::from("User-agent: *\nDisallow: /private\n");
    for i in 0..2000 {
        robots.push_str(&format!("Allow: /open/{i}/*.html$\n"));
    }
    dir.write("robots.txt", &robots);
    dir.run(&["compile", "robots.txt", "-o", "rules.bin"]).ok();
    dir.write("allow.txt", "User-agent: *\nAllow: /\n");
    dir.run(&["compile", "allow.txt", "-o", "allow.bin"]).ok();
    let allow_all = dir.read("allow.bin");

    let mut child = dir.spawn(
        &["filter", "rules.bin", "--agent", "bot", "--emit", "all", "-j", "1"],
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (first_rx, reader) = read_lines(stdout);
    // More than one read block (4 MiB at -j 1), so that output starts
    // before the input ends: the rules are loaded by then.
    let url = |i: usize| format!("http://a.example/private/{i:040}\n");
    let first = (5 << 20) / url(0).len();
    let mut n = 0;
    let mut block = String::new();
    while n < first {
        block.push_str(&url(n));
        n += 1;
    }
    // A write error means the run died: its status says how, below.
    let _ = stdin.write_all(block.as_bytes());
    let started = first_rx.recv_timeout(Duration::from_secs(120));
    // Truncate and rewrite in place (same inode), as `cp` or a careless
    // writer would, with rules that allow everything.
    std::fs::write(dir.path.join("rules.bin"), &allow_all).unwrap();
    block.clear();
    for _ in 0..first {
        block.push_str(&url(n));
        n += 1;
    }
    let (status, lines, stderr) = finish(child, stdin, &block, reader);
    started.unwrap_or_else(|_| panic!("no output: {status}: {stderr}"));
    assert_eq!(status.code(), Some(0), "status {status}: {stderr}");
    assert_eq!(lines.len(), n, "{stderr}");
    let allowed =
        lines.iter().filter(|l| !l.starts_with("disallow\t")).count();
    assert_eq!(allowed, 0, "{allowed} of {n} lines not disallowed");
}

/// A robots.txt whose rule value, sitemap and an unknown line hold ESC,
/// TAB and a backslash.
const ROBOTS_ESC: &[u8] = b"User-agent: *\nDisallow: /p\x1b[2J\tq\\z\n\
    Sitemap: http://a.example/s\x1b[2Jx\n\x1b[31mjunk\tline\n";

#[test]
fn robots_txt_text_is_escaped_in_human_and_tsv_output() {
    let dir = Dir::new("escape");
    dir.write("robots.txt", ROBOTS_ESC);
    dir.run(&["compile", "robots.txt", "-o", "rules.bin"]).ok();
    let no_raw = |what: &str, out: &str| {
        assert!(!out.contains('\x1b'), "{what}: raw ESC in {out:?}");
    };
    for file in ["robots.txt", "rules.bin"] {
        let out = dir.run(&["inspect", file]).ok();
        no_raw("inspect", &out);
        assert!(!out.contains("\x1b") && !out.contains('\t'), "{out:?}");
        assert!(
            out.contains("sitemap: line 3: http://a.example/s\\x1b[2Jx\n"),
            "{out}"
        );
        assert!(out.contains("'\\x1b[31mjunk'"), "{out}");
    }
    let url = "http://a.example/p%1B[2J%09q\\z";
    let reason = "line 2: Disallow: /p\\x1b[2J\\tq\\\\z";
    for file in ["robots.txt", "rules.bin"] {
        let out = dir.run(&["explain", "--agent", "bot", file, url]).ok();
        no_raw("explain", &out);
        assert_eq!(out, format!("disallow\t{url}\t{reason}\t* group\n"));
    }
    // The input URL is echoed unchanged; the reason column is escaped, so
    // each line has exactly three columns.
    let input = format!("{url}\nhttp://a.example/x\nnot a url\n");
    let out = dir
        .run_with(
            &[
                "filter",
                "rules.bin",
                "--agent",
                "bot",
                "--emit",
                "all",
                "--explain",
            ],
            input.as_bytes(),
        )
        .ok();
    no_raw("filter --explain", &out);
    for line in out.lines() {
        assert_eq!(line.split('\t').count(), 3, "{line:?}");
    }
    assert!(out.starts_with(&format!("disallow\t{reason}\t{url}\n")), "{out}");
}

/// Part B item 11: an agent that is not a product token is a usage error
/// in rfc9309 (naming it and the token it starts with) and a warning in
/// google, which keeps the reference's `*` fallback.
#[test]
fn agents_that_are_not_product_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let robots = dir.path().join("robots.txt");
    std::fs::write(
        &robots,
        "User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_robofilter");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let r = robots.to_str().unwrap();
    for agent in
        ["Googlebot/2.1", "", "Mozilla/5.0 (compatible; Googlebot/2.1)"]
    {
        let (code, out, err) =
            run(&["check", r, "--agent", agent, "http://a.example/g"]);
        assert_eq!(code, Some(2), "{agent:?}: {out} {err}");
        assert!(err.contains("is not a product token"), "{err}");
        let (code, out, err) = run(&[
            "check",
            "--dialect",
            "google",
            r,
            "--agent",
            agent,
            "http://a.example/s",
            "http://a.example/g",
        ]);
        assert_eq!(code, Some(0), "{agent:?}: {err}");
        assert!(
            err.contains("warning") && err.contains("is not a product token"),
            "{err}"
        );
        // The reference's verdicts: the `*` group.
        assert_eq!(
            out,
            "disallow\thttp://a.example/s\nallow\thttp://a.example/g\n"
        );
    }
    let (_, _, err) =
        run(&["check", r, "--agent", "Googlebot/2.1", "http://a.example/g"]);
    assert!(err.contains("did you mean 'Googlebot'"), "{err}");
    let (code, _, err) = run(&[
        "compile",
        r,
        "--agent",
        "Bot/1",
        "-o",
        dir.path().join("x.rules").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(!dir.path().join("x.rules").exists());
    let (code, _, err) = run(&["filter", r, "--agent", "Bot/1"]);
    assert_eq!(code, Some(2), "{err}");
}

/// Part B item 15: `inspect` on a bundle checks every member and reports a
/// damaged one (status 2), instead of listing it as if it were whole.
#[test]
fn inspect_reports_a_damaged_bundle_member() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_robofilter");
    let hosts = concat!(env!("CARGO_MANIFEST_DIR"), "/data/bundle/hosts");
    let good = dir.path().join("good.bundle");
    let status = std::process::Command::new(bin)
        .args(["compile", "--hosts", hosts, "-o"])
        .arg(&good)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let mut bytes = std::fs::read(&good).unwrap();
    // The last member ends the file: flip an octet inside it.
    let at = bytes.len() - 100;
    bytes[at] ^= 0xff;
    let bad = dir.path().join("bad.bundle");
    std::fs::write(&bad, &bytes).unwrap();
    let inspect = |path: &std::path::Path| {
        std::process::Command::new(bin)
            .arg("inspect")
            .arg(path)
            .output()
            .unwrap()
    };
    let ok = inspect(&good);
    assert_eq!(ok.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&ok.stdout).contains("DAMAGED"));
    let out = inspect(&bad);
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout.matches("DAMAGED").count(), 1, "{stdout}");
    assert!(
        stderr.contains("1 member is damaged") && stderr.contains("checksum"),
        "{stderr}"
    );
}

/// Part B item 10 through the CLI: in a bundle, a URL whose authority holds
/// an octet RFC 3986 forbids is `invalid`, located on stderr, and explained.
#[test]
fn filter_reports_an_ambiguous_host_as_invalid() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_robofilter");
    let hosts = concat!(env!("CARGO_MANIFEST_DIR"), "/data/bundle/hosts");
    let bundle = dir.path().join("b.bundle");
    let out = std::process::Command::new(bin)
        .args(["compile", "--hosts", hosts, "-o"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut child = std::process::Command::new(bin)
        .args(["filter", "--agent", "MyBot", "--emit", "all", "--explain"])
        .arg(&bundle)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"http://a.example/x\nhttp://b.example\\@a.example/private\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let second = stdout.lines().nth(1).unwrap();
    assert!(second.starts_with("invalid\t"), "{stdout}");
    assert!(
        second.ends_with("\thttp://b.example\\@a.example/private"),
        "{stdout}"
    );
    assert!(second.contains("RFC 3986"), "{second}");
    assert!(stderr.contains("<stdin>:2 (ambiguous host)"), "{stderr}");
    assert!(stderr.contains("1 invalid"), "{stderr}");
}

/// A bundle replaced while `filter` reads URLs from a pipe, after some of
/// its members are in use and before others are: renamed over (a new
/// file, as `compile -o` writes one) or rewritten in place (same inode).
/// Where the system grants `filter` a read lease on the bundle (Linux, a
/// local file system, nobody writing the file when the run starts), the
/// writer's open is held back and the run stops at once, naming the file,
/// before the writer can write. Where it does not (here: a writer holds
/// the file open from before the run), `filter` reads each member when
/// first used and checks the file after each read, so the rewrite is
/// found at the next member read, and the run fails naming the file.
/// Either way no verdict comes from the new version (which allows the
/// URLs): every line written is `disallow`, and a run that succeeds wrote
/// every line.
#[test]
fn bundle_replaced_underneath_a_run_never_mixes_versions() {
    for (in_place, held_open) in [(false, false), (true, false), (true, true)]
    {
        let dir = Dir::new(match (in_place, held_open) {
            (false, _) => "bundle-renamed",
            (true, false) => "bundle-inplace",
            (true, true) => "bundle-inplace-held",
        });
        std::fs::create_dir(dir.path.join("old")).unwrap();
        std::fs::create_dir(dir.path.join("new")).unwrap();
        // Two members, each disallowing /private; the new bundle's
        // members allow it and have the same hosts and sizes, so that a
        // member read from it where the old index says would load.
        dir.write("old/a.example.txt", "User-agent: *\nDisallow: /private\n");
        dir.write("old/b.example.txt", "User-agent: *\nDisallow: /privat\n");
        dir.write("new/a.example.txt", "User-agent: *\nDisallow: /xrivate\n");
        dir.write("new/b.example.txt", "User-agent: *\nDisallow: /xrivat\n");
        dir.run(&["compile", "--hosts", "old", "-o", "bundle.bin"]).ok();
        dir.run(&["compile", "--hosts", "new", "-o", "new.bin"]).ok();
        let new = dir.read("new.bin");
        assert_eq!(new.len(), dir.read("bundle.bin").len());
        // Open for writing before the run: no lease can be taken.
        let writer = held_open.then(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(dir.path.join("bundle.bin"))
                .unwrap()
        });

        let mut child = dir.spawn(
            &[
                "filter",
                "bundle.bin",
                "--agent",
                "bot",
                "--emit",
                "all",
                "-j",
                "1",
            ],
            Stdio::piped(),
        );
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (first_rx, reader) = read_lines(stdout);
        // More than one read block (4 MiB at -j 1) of a.example's URLs,
        // so that output starts (a.example's member in use) before the
        // input ends; then the same again with b.example's after the
        // replacement.
        let url =
            |host: &str, i: usize| format!("http://{host}/private/{i:040}\n");
        let first = (5 << 20) / url("a.example", 0).len();
        let mut n = 0;
        let mut block = String::new();
        for _ in 0..first {
            block.push_str(&url("a.example", n));
            n += 1;
        }
        let _ = stdin.write_all(block.as_bytes());
        let started = first_rx.recv_timeout(Duration::from_secs(120));
        if in_place {
            std::fs::write(dir.path.join("bundle.bin"), &new).unwrap();
        } else {
            std::fs::rename(
                dir.path.join("new.bin"),
                dir.path.join("bundle.bin"),
            )
            .unwrap();
        }
        block.clear();
        for i in 0..first {
            let host = if i % 2 == 0 { "a.example" } else { "b.example" };
            block.push_str(&url(host, n));
            n += 1;
        }
        let (status, lines, stderr) = finish(child, stdin, &block, reader);
        started.unwrap_or_else(|_| panic!("no output: {status}: {stderr}"));
        let allowed =
            lines.iter().filter(|l| !l.starts_with("disallow\t")).count();
        assert_eq!(
            allowed,
            0,
            "in place {in_place}: {allowed} of {} lines not disallowed: {stderr}",
            lines.len()
        );
        drop(writer);
        if in_place {
            assert_eq!(status.code(), Some(2), "status {status}: {stderr}");
            for needle in ["bundle.bin", "changed in place", "renaming"] {
                assert!(stderr.contains(needle), "no {needle:?} in: {stderr}");
            }
            assert!(lines.len() < n, "{stderr}");
            // Which guard stopped the run: the lease (writer held back)
            // or the check after a member read.
            let leased = stderr.contains("opened for writing");
            if held_open {
                assert!(!leased, "a lease beside a writer: {stderr}");
                assert!(stderr.contains("modification time"), "{stderr}");
            } else if !leased {
                println!("no read lease on this file system: {stderr}");
            }
        } else {
            assert_eq!(status.code(), Some(0), "status {status}: {stderr}");
            assert_eq!(lines.len(), n, "{stderr}");
        }
    }
}

/// Reads a child's stdout line by line on a thread: the receiver gets a
/// message when the first line is in, the thread returns all lines.
fn read_lines(
    stdout: std::process::ChildStdout,
) -> (mpsc::Receiver<()>, std::thread::JoinHandle<Vec<String>>) {
    let (first_tx, first_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut stdout = BufReader::new(stdout);
        let mut line = Vec::new();
        // A last line without its `\n` is left out: a run stopped by a
        // signal (the SIGIO of a broken lease) may end its output in the
        // middle of a line. A run that succeeds is checked for every line.
        while stdout.read_until(b'\n', &mut line).unwrap() > 0 {
            if line.pop() != Some(b'\n') {
                break;
            }
            lines.push(String::from_utf8(std::mem::take(&mut line)).unwrap());
            if lines.len() == 1 {
                let _ = first_tx.send(());
            }
        }
        lines
    });
    (first_rx, reader)
}

/// Writes the last `block` to the child's stdin and closes it, then waits:
/// the exit status, the stdout lines [`read_lines`] collected, and stderr.
fn finish(
    mut child: std::process::Child,
    mut stdin: std::process::ChildStdin,
    block: &str,
    reader: std::thread::JoinHandle<Vec<String>>,
) -> (std::process::ExitStatus, Vec<String>, String) {
    let _ = stdin.write_all(block.as_bytes());
    drop(stdin);
    let status = child.wait().unwrap();
    let lines = reader.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(
        &mut child.stderr.take().unwrap(),
        &mut stderr,
    )
    .unwrap();
    (status, lines, stderr)
}

/// Files whose size is not their length are read whole: procfs says 0
/// (such a file is not mapped: it is read), sysfs says 4096 and cannot be
/// mapped (the run falls back to reading). Each gives its one line, as
/// `read` sees it.
#[cfg(target_os = "linux")]
#[test]
fn files_whose_size_is_not_their_length_are_read_whole() {
    let dir = compiled_dir("pseudo-files");
    let sysfs = "/sys/kernel/mm/transparent_hugepage/enabled";
    for path in ["/proc/version", sysfs] {
        let Ok(text) = std::fs::read_to_string(path) else {
            println!("skipping {path}: cannot be read here");
            continue;
        };
        let args = ["filter", "rules.bin", "--agent", "Bot", "--emit", "all"];
        let out = dir.run(&[&args[..], &[path]].concat()).ok();
        assert_eq!(out, format!("invalid\t{}", text), "{path}");
    }
}
