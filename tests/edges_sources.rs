//! Bundle build inputs at their edges (issue 11, Part B items 7 and 8):
//! bounded reads, special files in `--hosts`, and bad members that cost
//! only their own host (`--strict` makes them fatal). Unix only: the
//! tests make FIFOs and symlinks and bound memory with `ulimit`.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::util::Dir;

/// Generous: every run here takes well under a second.
const T: Duration = Duration::from_secs(60);

/// The `--emit all --explain` line of each URL, by URL.
fn verdicts(dir: &Dir, bundle: &str, urls: &[&str]) -> Vec<String> {
    dir.write("urls.txt", urls.join("\n") + "\n");
    let run = dir.run_within(
        &[
            "filter",
            bundle,
            "--agent",
            "Bot",
            "--emit",
            "all",
            "--explain",
            "urls.txt",
        ],
        T,
    );
    run.exits(0);
    String::from_utf8_lossy(&run.stdout).lines().map(str::to_string).collect()
}

/// Asserts that `url` is disallowed because its input was unreadable.
fn assert_unreadable(lines: &[String], url: &str) {
    let line = lines
        .iter()
        .find(|l| l.split('\t').nth(2) == Some(url))
        .unwrap_or_else(|| panic!("no verdict for {url}: {lines:#?}"));
    assert!(
        line.starts_with("disallow\t") && line.contains("unreadable"),
        "{line}"
    );
}

const RULES: &str = "User-agent: *\nDisallow: /private/\n";

// ---------------------------------------------------------------------
// Item 7: unbounded reads

/// 1 GiB of address space: a capped read needs a few MB.
const ONE_GIB: u64 = 1 << 20;

#[test]
fn compile_dev_zero_is_bounded() {
    let dir = Dir::new("zero");
    // rfc9309: the parse limit and one line more are read; the verdicts
    // are those of the whole (endless) file.
    dir.run_bounded(&["compile", "/dev/zero", "-o", "z.bin"], ONE_GIB, T)
        .exits(0)
        .stderr_has(&["'/dev/zero' is longer than 528664 octets"]);
    assert!(dir.join("z.bin").exists());
    // google: a documented cap, refused beyond it.
    dir.run_bounded(
        &["compile", "--dialect", "google", "/dev/zero", "-o", "g.bin"],
        ONE_GIB,
        T,
    )
    .exits(2)
    .stderr_has(&["larger than 4194304 octets"]);
    assert!(!dir.join("g.bin").exists());
    dir.run_bounded(
        &["compile", "--manifest", "/dev/zero", "-o", "m.bin"],
        ONE_GIB,
        T,
    )
    .exits(2)
    .stderr_has(&["/dev/zero:1: no line end in"]);
    dir.run_bounded(
        &["compile", "--warc", "/dev/zero", "-o", "w.bin"],
        ONE_GIB,
        T,
    )
    .exits(2)
    .stderr_has(&["/dev/zero at byte 0: a header line is longer"]);
    assert!(!dir.join("m.bin").exists() && !dir.join("w.bin").exists());
}

/// `inspect`, `check` and `explain` read a robots.txt as `compile` does: a
/// bounded head, in both dialects (given `/dev/zero`, they aborted with a
/// 2 GiB allocation).
#[test]
fn inspect_check_explain_dev_zero_are_bounded() {
    let dir = Dir::new("zero-read");
    let url = "http://x/";
    // Where only a compiled file will do, a head is read to say so.
    dir.write("u.txt", "http://x/\n");
    dir.run_bounded(
        &["filter", "/dev/zero", "--agent", "bot", "u.txt"],
        ONE_GIB,
        T,
    )
    .exits(2)
    .stderr_has(&["not a rules file"]);
    for cmd in [
        &["inspect", "/dev/zero"][..],
        &["check", "--agent", "bot", "/dev/zero", url],
        &["explain", "--agent", "bot", "/dev/zero", url],
    ] {
        let out = dir.run_bounded(cmd, ONE_GIB, T).ok();
        assert!(out.contains("allow") || out.contains("parse limit"), "{out}");
        let mut google = vec!["--dialect", "google"];
        google.splice(0..0, cmd[..1].iter().copied());
        google.extend_from_slice(&cmd[1..]);
        dir.run_bounded(&google, ONE_GIB, T)
            .exits(2)
            .stderr_has(&["larger than 4194304 octets"]);
    }
}

/// A compiled file given where a manifest, WARC file or host list goes,
/// or a compressed robots.txt given to `inspect`, is refused (its lines
/// would all be bad, or it would read as a file without rules).
#[test]
fn compiled_or_compressed_files_in_the_wrong_place_are_refused() {
    let dir = Dir::new("wrong-place");
    dir.write("robots.txt", RULES);
    dir.run(&["compile", "robots.txt", "-o", "r.rules"]).ok();
    for args in [
        &["compile", "--manifest", "r.rules", "-o", "b.bin"][..],
        &["compile", "--warc", "r.rules", "-o", "b.bin"],
        &["fetch", "r.rules", "-o", "out.jsonl"],
    ] {
        dir.run(args)
            .exits(2)
            .stderr_has(&["is a compiled rules file, not a"]);
    }
    assert!(!dir.join("b.bin").exists() && !dir.join("out.jsonl").exists());
    assert!(!dir.join("out.jsonl.journal").exists());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    std::io::Write::write_all(&mut gz, RULES.as_bytes()).unwrap();
    dir.write("robots.txt.gz", gz.finish().unwrap());
    dir.run(&["inspect", "robots.txt.gz"])
        .exits(2)
        .stderr_has(&["gzip-compressed, not a robots.txt"]);
}

/// A hosts directory that gives no host is an error, not an empty bundle
/// in which every URL is `unknown`.
#[test]
fn hosts_dir_without_hosts_is_refused() {
    let dir = Dir::new("hosts-none");
    std::fs::create_dir(dir.join("empty")).unwrap();
    std::fs::create_dir(dir.join("other")).unwrap();
    dir.write("other/README.md", "not a robots.txt");
    dir.run(&["compile", "--hosts", "empty", "-o", "e.bin"])
        .exits(2)
        .stderr_has(&["'empty' is empty", "example.com.txt"]);
    dir.run(&["compile", "--hosts", "other", "-o", "o.bin"])
        .exits(2)
        .stderr_has(&["holds no HOST.txt file (1 other entry)"]);
    assert!(!dir.join("e.bin").exists() && !dir.join("o.bin").exists());
    // An output inside the hosts directory would be read back as a host.
    dir.write("other/a.example.txt", RULES);
    dir.run(&["compile", "--hosts", "other", "-o", "other/z.example.txt"])
        .exits(2)
        .stderr_has(&["inside the hosts directory"]);
    assert!(!dir.join("other/z.example.txt").exists());
}

/// A 2 GiB (sparse) member of --hosts is read only up to the cap.
#[test]
fn huge_hosts_member_is_bounded() {
    let dir = Dir::new("huge");
    std::fs::create_dir(dir.join("h")).unwrap();
    dir.write("h/a.example.txt", RULES);
    let big = std::fs::File::create(dir.join("h/big.example.txt")).unwrap();
    big.set_len(2 << 30).unwrap();
    drop(big);
    dir.run_bounded(&["compile", "--hosts", "h", "-o", "b.bin"], ONE_GIB, T)
        .exits(0)
        .stderr_has(&["2 hosts (2 by robots.txt"]);
    // The google dialect does not cut: the member is unreadable.
    dir.run_bounded(
        &["compile", "--dialect", "google", "--hosts", "h", "-o", "g.bin"],
        ONE_GIB,
        T,
    )
    .exits(0)
    .stderr_has(&[
        "big.example.txt: the robots.txt is larger than 4194304 octets",
        "1 bad input skipped or recorded as unreadable",
    ]);
    let lines = verdicts(
        &dir,
        "g.bin",
        &["http://big.example/", "http://a.example/private/"],
    );
    assert_unreadable(&lines, "http://big.example/");
    assert!(lines[1].starts_with("disallow\t"), "{lines:?}");
}

/// A manifest line over the cap is skipped, the next one is read.
#[test]
fn long_manifest_line_is_skipped() {
    let dir = Dir::new("longline");
    // 6 x (512000 + 16663 + 1) + 64 KiB: the line cap at the default limit.
    let cap = 6 * 528_664 + (64 << 10);
    let long = format!(
        "{{\"host\":\"a.example\",\"status\":200,\"x\":\"{}\"}}\n",
        "y".repeat(cap)
    );
    dir.write(
        "m.jsonl",
        long + "{\"host\":\"b.example\",\"status\":200,\"body\":\"Disallow: /\"}\n",
    );
    dir.run_within(&["compile", "--manifest", "m.jsonl", "-o", "b.bin"], T)
        .exits(0)
        .stderr_has(&["m.jsonl:1: the line is longer than", "1 host ("]);
}

#[test]
fn fifo_in_hosts_is_not_opened() {
    let dir = Dir::new("fifo");
    std::fs::create_dir(dir.join("h")).unwrap();
    dir.write("h/a.example.txt", RULES);
    let fifo = dir.join("h/f.example.txt");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        println!("skipped: mkfifo is not available");
        return;
    }
    // Before: the build blocked for ever opening the FIFO.
    dir.run_within(
        &["compile", "--hosts", "h", "-o", "b.bin"],
        Duration::from_secs(20),
    )
    .exits(0)
    .stderr_has(&[
        "f.example.txt: a FIFO (named pipe), not a robots.txt file (not \
             opened)",
        "1 bad input skipped or recorded as unreadable (see above)",
    ]);
    let lines = verdicts(
        &dir,
        "b.bin",
        &["http://f.example/x", "http://a.example/private/x"],
    );
    assert_unreadable(&lines, "http://f.example/x");
    assert!(lines[1].starts_with("disallow\t"), "{lines:?}");
}

// ---------------------------------------------------------------------
// Item 8: one bad member does not fail the build

#[test]
fn bad_hosts_members_cost_only_their_host() {
    let dir = Dir::new("badhosts");
    std::fs::create_dir(dir.join("h")).unwrap();
    dir.write("h/a.example.txt", RULES);
    std::os::unix::fs::symlink("nowhere", dir.join("h/d.example.txt"))
        .unwrap();
    std::fs::create_dir(dir.join("h/x.example.txt")).unwrap();
    let locked = dir.write("h/u.example.txt", RULES);
    Command::new("chmod").arg("000").arg(&locked).status().unwrap();
    // root reads any file: then the permission case proves nothing.
    let can_lock = std::fs::read(&locked).is_err();
    let n = if can_lock { 3 } else { 2 };
    let run = dir.run_within(&["compile", "--hosts", "h", "-o", "b.bin"], T);
    run.exits(0).stderr_has(&[
        "h/d.example.txt: a symbolic link to 'nowhere'",
        "h/x.example.txt: a directory",
        &format!(
            "{n} bad inputs skipped or recorded as unreadable (see above)"
        ),
    ]);
    if can_lock {
        run.stderr_has(&["h/u.example.txt: cannot open"]);
    } else {
        println!("skipped the unreadable-file case: running as root");
    }
    let lines = verdicts(
        &dir,
        "b.bin",
        &[
            "http://a.example/private/x",
            "http://a.example/public",
            "http://d.example/",
            "http://x.example/",
        ],
    );
    assert!(lines[0].starts_with("disallow\t"), "{lines:?}");
    assert!(lines[1].starts_with("allow\t"), "{lines:?}");
    assert_unreadable(&lines, "http://d.example/");
    assert_unreadable(&lines, "http://x.example/");

    // --strict: fatal, nothing written.
    dir.run_within(&["compile", "--strict", "--hosts", "h", "-o", "s.bin"], T)
        .exits(2)
        .stderr_has(&["fatal with --strict: nothing written"]);
    assert!(!dir.join("s.bin").exists());
}

#[test]
fn bad_manifest_lines_cost_only_their_host() {
    let dir = Dir::new("badmanifest");
    dir.write(
        "m.jsonl",
        [
            r#"{"host":"a.example","status":200,"body":"User-agent: *\nDisallow: /private/\n"}"#,
            r#"{"host":"b.example","status":"200","body":"User-agent: *\n"}"#,
            r#"{"host":"c.example","status":200,"body":"#,
            r#"{"host":"d.example","body":"x"}"#,
            r#"{"host":"e.example","status":404}"#,
        ]
        .join("\n"),
    );
    dir.run_within(&["compile", "--manifest", "m.jsonl", "-o", "b.bin"], T)
        .exits(0)
        .stderr_has(&[
            "m.jsonl:2: invalid value: string \"200\", expected an HTTP status",
            "host 'b.example' recorded as unreadable",
            "m.jsonl:3: invalid JSON at column",
            "m.jsonl:4: missing field `status`",
            "host 'd.example' recorded as unreadable",
            "4 hosts (",
            "3 bad inputs skipped or recorded as unreadable (see above)",
        ]);
    let lines = verdicts(
        &dir,
        "b.bin",
        &[
            "http://a.example/private/x",
            "http://b.example/x",
            "http://c.example/x",
            "http://d.example/x",
            "http://e.example/x",
        ],
    );
    assert!(lines[0].starts_with("disallow\t"), "{lines:?}");
    assert_unreadable(&lines, "http://b.example/x");
    // Broken JSON names no host: reported above, and unknown here.
    assert!(lines[2].starts_with("unknown\t"), "{lines:?}");
    assert_unreadable(&lines, "http://d.example/x");
    assert!(lines[4].starts_with("allow\t"), "{lines:?}");

    dir.run_within(
        &["compile", "--strict", "--manifest", "m.jsonl", "-o", "s.bin"],
        T,
    )
    .exits(2)
    .stderr_has(&["3 bad inputs (see above), fatal with --strict"]);
    assert!(!dir.join("s.bin").exists());
}

/// One WARC response record.
fn response(uri: &str, http: &str) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\n\
         Content-Type: application/http; msgtype=response\r\n\
         Content-Length: {}\r\n\r\n",
        http.len()
    )
    .into_bytes();
    r.extend_from_slice(http.as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    r
}

#[test]
fn warc_status_999_and_bad_records() {
    let dir = Dir::new("warc");
    let mut w = response(
        "http://a.example/robots.txt",
        &format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{RULES}",
            RULES.len()
        ),
    );
    // LinkedIn's answer to crawlers: not an HTTP status.
    w.extend(response(
        "https://www.linkedin.com/robots.txt",
        "HTTP/1.1 999 Request denied\r\nContent-Length: 0\r\n\r\n",
    ));
    let at = w.len();
    w.extend(response("http://b.example/robots.txt", "garbage"));
    dir.write("r.warc", &w);
    dir.run_within(&["compile", "--warc", "r.warc", "-o", "b.bin"], T)
        .exits(0)
        .stderr_has(&[
            &format!("r.warc at byte {at}: the HTTP response"),
            "host 'b.example' recorded as unreadable",
            "outside 100-599",
            "3 hosts (1 by robots.txt, 0 allow all, 2 disallow all)",
            "1 bad input skipped",
        ]);
    let lines = verdicts(
        &dir,
        "b.bin",
        &[
            "https://www.linkedin.com/in/x",
            "http://b.example/",
            "http://a.example/private/",
        ],
    );
    assert!(
        lines[0].starts_with("disallow\t") && lines[0].contains("unreachable"),
        "{lines:?}"
    );
    assert_unreadable(&lines, "http://b.example/");
    assert!(lines[2].starts_with("disallow\t"), "{lines:?}");

    dir.run_within(
        &["compile", "--strict", "--warc", "r.warc", "-o", "s.bin"],
        T,
    )
    .exits(2);
    assert!(!Path::new(&dir.join("s.bin")).exists());
}
