//! Process-level tests of the `robofilter` binary, each in its own
//! temporary directory (ripgrep's `rgtest!`, xsv's `workdir.rs`).

use std::io::Read;
use std::process::Stdio;

use robofilter::{AlignedBytes, Compiler, Rules};

use crate::util::{Dir, Run, google_vectors};

// A check only this module makes.
impl Run {
    /// The counts of the `filter` summary line.
    fn summary(&self) -> Summary {
        let line = self
            .stderr
            .lines()
            .find(|l| l.contains(" lines: ") || l.contains(" 1 line: "))
            .unwrap_or_else(|| panic!("no summary in:\n{}", self.stderr));
        // robofilter: N lines (or 1 line): A allowed, D disallowed, U unknown, I invalid
        // (E empty) in T s (X M lines/s)
        let line = line.replacen(" 1 line: ", " 1 lines: ", 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> u64 {
            words[i].trim_matches(|c| c == '(').parse().unwrap_or_else(|_| {
                panic!("word {i} of {line:?} is not a number")
            })
        };
        assert_eq!(
            (
                words[0], words[2], words[4], words[6], words[8], words[10],
                words[12]
            ),
            (
                "robofilter:",
                "lines:",
                "allowed,",
                "disallowed,",
                "unknown,",
                "invalid",
                "empty)"
            ),
            "{line}"
        );
        Summary {
            lines: num(1),
            allowed: num(3),
            disallowed: num(5),
            unknown: num(7),
            invalid: num(9),
            empty: num(11),
        }
    }
}

#[derive(Debug, Eq, PartialEq)]
struct Summary {
    lines: u64,
    allowed: u64,
    disallowed: u64,
    unknown: u64,
    invalid: u64,
    empty: u64,
}

impl Summary {
    fn assert_adds_up(&self) {
        assert_eq!(
            self.lines,
            self.allowed + self.disallowed + self.unknown + self.invalid
        );
        assert!(self.empty <= self.invalid, "{self:?}");
    }
}

const ROBOTS: &str = "\
User-agent: FooBot
Disallow: /a
Allow: /a/index.html
Crawl-delay: 5

User-agent: *
Disallow: /private
Disallow: /~joe
Disallow: /robots.txt
Sitemap: https://x.example/sitemap.xml
Frobnicate: yes
";

/// A directory with `robots.txt` (ROBOTS) and its `rules.bin`.
fn compiled(name: &str, extra: &[&str]) -> Dir {
    let dir = Dir::new(name);
    dir.write("robots.txt", ROBOTS);
    let mut args = vec!["compile", "robots.txt", "-o", "rules.bin"];
    args.extend_from_slice(extra);
    dir.run(&args).ok();
    dir
}

#[test]
fn check_prints_verdicts_in_order_in_both_dialects() {
    let dir = Dir::new("check");
    dir.write("robots.txt", ROBOTS);
    let urls = [
        "http://x/private/1",
        "http://x/%7Ejoe/",
        "http://x/robots.txt",
        "http://x/public",
    ];
    let run = |dialect: &str| {
        let mut args = vec!["check", "--dialect", dialect, "--agent"];
        args.extend_from_slice(&["OtherBot", "robots.txt"]);
        args.extend_from_slice(&urls);
        dir.run(&args).ok()
    };
    // google: escapes are matched as written, /robots.txt obeys the rules.
    assert_eq!(
        run("google"),
        "disallow\thttp://x/private/1\n\
         allow\thttp://x/%7Ejoe/\n\
         disallow\thttp://x/robots.txt\n\
         allow\thttp://x/public\n"
    );
    // rfc9309: %7E is `~`, /robots.txt is always allowed.
    assert_eq!(
        run("rfc9309"),
        "disallow\thttp://x/private/1\n\
         disallow\thttp://x/%7Ejoe/\n\
         allow\thttp://x/robots.txt\n\
         allow\thttp://x/public\n"
    );
    // rfc9309 is the default; the agent's own group hides `*`.
    let out = dir
        .run(&["check", "--agent", "foobot", "robots.txt", "http://x/a/b"])
        .ok();
    assert_eq!(out, "disallow\thttp://x/a/b\n");
}

/// Input for `filter`: URLs, CRLF, empty and invalid lines (one ends with
/// a space), and a last line without `\n`.
const URLS: &str = "http://x/private/1\n\
                    https://x/public\r\n\
                    \n\
                    x.example/no-scheme\n\
                    http://x/a \n\
                    ftp://x/~joe\n\
                    \r\n\
                    http://x/robots.txt?q\n\
                    http://x/last";

#[test]
fn filter_default_emits_allowed_urls_unchanged() {
    let dir = compiled("filter-allowed", &[]);
    dir.write("urls.txt", URLS);
    let run = dir.run(&["filter", "rules.bin", "--agent", "Bot", "urls.txt"]);
    assert_eq!(
        run.ok(),
        "https://x/public\nhttp://x/robots.txt?q\nhttp://x/last\n"
    );
    let summary = run.summary();
    summary.assert_adds_up();
    assert_eq!(
        summary,
        Summary {
            lines: 9,
            allowed: 3,
            disallowed: 2,
            unknown: 0,
            invalid: 4,
            empty: 2
        }
    );
    // The first not-a-URL lines are reported by number.
    assert!(
        run.stderr.contains(
            "urls.txt:3 (empty), urls.txt:4, urls.txt:5, urls.txt:7 (empty)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn filter_emit_disallowed() {
    let dir = compiled("filter-disallowed", &[]);
    dir.write("urls.txt", URLS);
    let run = dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "--emit",
        "disallowed",
        "urls.txt",
    ]);
    assert_eq!(run.ok(), "http://x/private/1\nftp://x/~joe\n");
    run.summary().assert_adds_up();
}

#[test]
fn filter_emit_all_accounts_for_every_line_in_order() {
    let dir = compiled("filter-all", &[]);
    dir.write("urls.txt", URLS);
    let run = dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "--emit",
        "all",
        "urls.txt",
    ]);
    let out = run.ok();
    assert_eq!(
        out,
        "disallow\thttp://x/private/1\n\
         allow\thttps://x/public\n\
         invalid\t\n\
         invalid\tx.example/no-scheme\n\
         invalid\thttp://x/a \n\
         disallow\tftp://x/~joe\n\
         invalid\t\n\
         allow\thttp://x/robots.txt?q\n\
         allow\thttp://x/last\n"
    );
    let summary = run.summary();
    summary.assert_adds_up();
    assert_eq!(out.lines().count() as u64, summary.lines);
}

#[test]
fn filter_reads_stdin() {
    let dir = compiled("filter-stdin", &[]);
    let file = dir.write("urls.txt", URLS);
    let base = ["filter", "rules.bin", "--agent", "Bot", "--emit", "all"];
    let dash = [&base[..], &["-"]].concat();
    let from_file = dir.run(&[&base[..], &["urls.txt"]].concat()).ok();
    assert_eq!(dir.run_with(&dash, URLS.as_bytes()).ok(), from_file);
    assert_eq!(dir.run_with(&base, URLS.as_bytes()).ok(), from_file);
    // Nothing on stdin: no lines.
    let run = dir.run(&base);
    assert_eq!(run.ok(), "");
    assert_eq!(run.summary().lines, 0);
    // stdin and a file, in the order given; line numbers per input.
    let both = [&base[..], &["-", file.to_str().unwrap()]].concat();
    let run = dir.run_with(&both, URLS.as_bytes());
    assert_eq!(run.ok(), from_file.repeat(2));
    assert_eq!(run.summary().lines, 18);
    assert!(run.stderr.contains("<stdin>:3 (empty)"), "{}", run.stderr);
}

/// A few tens of thousands of lines (several 1 MiB chunks), with
/// invalid lines mixed in.
fn generated_urls() -> String {
    let mut s = String::new();
    let mut x: u32 = 12345;
    for i in 0..40_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let dir = ["a", "private", "b", "~joe", "c/d", "robots.txt"]
            [(x >> 16) as usize % 6];
        match i % 997 {
            0 => s.push('\n'),
            1 => s.push_str("not a url\n"),
            2 => s.push_str("\r\n"),
            _ => {
                s.push_str(&format!(
                    "https://host{}.example/{dir}/{i}?padding={:060}\n",
                    i % 7,
                    x
                ));
            }
        }
    }
    s
}

#[test]
fn filter_threads_give_identical_output() {
    let dir = compiled("filter-threads", &[]);
    let urls = generated_urls();
    assert!(urls.len() > 3 << 20, "not enough chunks: {}", urls.len());
    dir.write("urls.txt", &urls);
    // The expected `--emit all` output, from the library.
    let bytes = Compiler::new().compile(ROBOTS.as_bytes()).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let m = rules.matcher("Bot").unwrap();
    let mut expected = String::new();
    for line in urls.lines() {
        let url = line.strip_suffix('\r').unwrap_or(line);
        if url.is_empty() || url.contains(' ') {
            expected.push_str(&format!("invalid\t{url}\n"));
        } else {
            let v = m.decide(url.as_bytes());
            expected.push_str(&format!("{}\t{url}\n", v.as_str()));
        }
    }
    let all = |threads: &str, stdin: bool| {
        let mut args =
            vec!["filter", "rules.bin", "--agent", "Bot", "--emit", "all"];
        args.extend_from_slice(&["-j", threads]);
        let input = if stdin { urls.as_bytes() } else { b"" };
        if !stdin {
            args.push("urls.txt");
        }
        let run = dir.run_with(&args, input);
        let s = run.summary();
        s.assert_adds_up();
        assert_eq!(s.invalid, 3 * 41);
        (run.ok(), s)
    };
    let (one, s1) = all("1", false);
    assert!(one == expected, "-j1 differs from the library's verdicts");
    for (threads, stdin) in [("4", false), ("3", true), ("1", true)] {
        let (out, s) = all(threads, stdin);
        assert!(out == one, "-j{threads} (stdin: {stdin}) differs from -j1");
        assert_eq!(s, s1);
    }
    let allowed = |threads: &str| {
        let args = ["filter", "rules.bin", "--agent", "Bot", "-j", threads];
        dir.run(&[&args[..], &["urls.txt"]].concat()).ok()
    };
    let want: String = one
        .lines()
        .filter_map(|l| l.strip_prefix("allow\t"))
        .map(|u| format!("{u}\n"))
        .collect();
    assert!(want.len() > 1 << 20);
    assert!(allowed("1") == want, "-j1 allowed URLs differ");
    assert!(allowed("4") == want, "-j4 allowed URLs differ");
}

#[test]
fn filter_output_file_is_written_without_leftovers() {
    let dir = compiled("filter-output", &[]);
    dir.write("urls.txt", URLS);
    let run = dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "-o",
        "out.txt",
        "urls.txt",
    ]);
    assert_eq!(run.ok(), "", "data went to stdout");
    assert_eq!(
        dir.read("out.txt"),
        b"https://x/public\nhttp://x/robots.txt?q\nhttp://x/last\n"
    );
    run.summary().assert_adds_up();
    // Overwrites an existing file.
    dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "--emit",
        "disallowed",
        "--output",
        "out.txt",
        "urls.txt",
    ])
    .ok();
    assert_eq!(dir.read("out.txt"), b"http://x/private/1\nftp://x/~joe\n");
    // A failed run (missing input) leaves neither output nor temp file.
    dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "-o",
        "new.txt",
        "nope.txt",
    ])
    .fails(&["nope.txt"]);
    assert_eq!(dir.list(), ["out.txt", "robots.txt", "rules.bin", "urls.txt"]);
}

/// `-o` onto something that is not a regular file (here a FIFO; the
/// classic case is `-o /dev/null`) writes into it: renaming a temporary
/// file over it would replace the device or FIFO with a plain file.
#[cfg(unix)]
#[test]
fn output_to_a_fifo_writes_in_place() {
    use std::os::unix::fs::FileTypeExt;

    let dir = compiled("filter-fifo", &[]);
    dir.write("urls.txt", URLS);
    let fifo = dir.path.join("out.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipping: mkfifo is not available");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let run = dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "-o",
        "out.fifo",
        "urls.txt",
    ]);
    assert_eq!(run.ok(), "");
    // Checked before joining: a replaced FIFO would leave the reader
    // blocked for ever (the thread is then abandoned, the test fails).
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
    assert_eq!(
        reader.join().unwrap(),
        b"https://x/public\nhttp://x/robots.txt?q\nhttp://x/last\n"
    );
}

#[test]
fn filter_closed_pipe_exits_quietly() {
    let dir = compiled("filter-pipe", &[]);
    dir.write("urls.txt", generated_urls());
    let out = read_16_then_close(
        &dir,
        &["filter", "rules.bin", "--agent", "Bot", "urls.txt"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// One rules file given a frontier of several hosts: the verdicts come,
/// and a warning says that a robots.txt speaks for its own host only. One
/// host (in either scheme, any case) gets no warning.
#[test]
fn one_rules_file_over_several_hosts_is_pointed_out() {
    let dir = compiled("filter-hosts", &[]);
    let several = dir.run_with(
        &["filter", "rules.bin", "--agent", "Bot"],
        b"https://a.example/x\nhttp://A.example/y\nhttps://b.example/z\n",
    );
    several.ok();
    several.stderr_has(&[
        "several hosts (a.example, b.example",
        "compile a bundle",
    ]);
    let one = dir.run_with(
        &["filter", "rules.bin", "--agent", "Bot"],
        b"https://a.example/x\nhttp://A.EXAMPLE/y\nhttps://a.example:443/z\n",
    );
    one.ok();
    assert!(!one.stderr.contains("several hosts"), "{}", one.stderr);
}

/// Runs `args` in `dir`, reads 16 octets of its stdout and closes the
/// pipe, then waits for it.
fn read_16_then_close(dir: &Dir, args: &[&str]) -> std::process::Output {
    let mut child = dir
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    child.wait_with_output().unwrap()
}

/// `inspect --json` of a bundle larger than the output buffer, into a
/// pipe closed after a few octets: quiet, status 0, as every command (its
/// JSON is written by serde_json, whose write errors are its own type).
#[test]
fn inspect_json_closed_pipe_exits_quietly() {
    let dir = Dir::new("inspect-pipe");
    std::fs::create_dir(dir.join("hosts")).unwrap();
    for i in 0..6000 {
        dir.write(
            &format!("hosts/h{i}.example.txt"),
            format!("User-agent: *\nDisallow: /p{i}/\nSitemap: https://h{i}.example/s.xml\n"),
        );
    }
    dir.run(&["compile", "--hosts", "hosts", "-o", "b.bundle"]).ok();
    for args in [
        &["inspect", "--json", "b.bundle"][..],
        &["inspect", "b.bundle"],
        &["inspect", "--json", "--agent", "GPTBot", "b.bundle"],
    ] {
        let out = read_16_then_close(&dir, args);
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn compile_writes_rules_and_a_summary() {
    let dir = compiled("compile", &[]);
    assert_eq!(dir.list(), ["robots.txt", "rules.bin"]);
    assert!(dir.read("rules.bin").starts_with(b"ROBOFLTR"));
    let run = dir.run(&[
        "compile",
        "--dialect",
        "google",
        "--agent",
        "FooBot",
        "--agent",
        "BarBot",
        "--dfa-state-limit",
        "1000",
        "robots.txt",
        "-o",
        "two.bin",
    ]);
    run.ok();
    let summary = run.stderr.trim_end();
    assert!(!summary.contains('\n'), "{summary}");
    for needle in ["two.bin", "google", "2 groups", "2 agents", "bytes", " s"]
    {
        assert!(summary.contains(needle), "{needle:?} not in {summary}");
    }
    assert_eq!(dir.list(), ["robots.txt", "rules.bin", "two.bin"]);
    let run = dir.run(&[
        "compile",
        "--parse-limit",
        "1000000",
        "robots.txt",
        "-o",
        "big-limit.bin",
    ]);
    run.ok();
    let inspect = dir.run(&["inspect", "big-limit.bin"]).ok();
    assert!(inspect.contains("parse-limit: 1000000 bytes"), "{inspect}");
}

#[test]
fn explain_names_the_deciding_rule() {
    let dir = compiled("explain", &[]);
    let expected_foo = "\
        disallow\thttp://x/a/b\tline 2: Disallow: /a\town group\n\
        allow\thttp://x/a/\tline 3: Allow: /a/index.html (allows /a/ by \
        the index.html rule)\town group\n\
        allow\thttp://x/c\tno matching rule\town group\n\
        allow\thttp://x/robots.txt\t/robots.txt is always allowed \
        (RFC 9309)\town group\n";
    let urls = ["http://x/a/b", "http://x/a/", "http://x/c"];
    let urls = [&urls[..], &["http://x/robots.txt"]].concat();
    for file in ["rules.bin", "robots.txt"] {
        let args =
            [&["explain", file, "--agent", "FooBot"][..], &urls].concat();
        assert_eq!(dir.run(&args).ok(), expected_foo, "{file}");
        let other = dir
            .run(&["explain", file, "--agent", "Bot", "http://x/private"])
            .ok();
        assert_eq!(
            other,
            "disallow\thttp://x/private\tline 7: Disallow: /private\t\
             * group\n"
        );
    }
    // No group at all.
    dir.write("nogroup.txt", "User-agent: FooBot\nDisallow: /\n");
    let out =
        dir.run(&["explain", "nogroup.txt", "--agent", "Bot", "http://x/a"]);
    assert_eq!(
        out.ok(),
        "allow\thttp://x/a\tno group for this agent\tno group\n"
    );
    // The dialect of a robots.txt is chosen; a rules file keeps its own.
    let google = dir
        .run(&[
            "explain",
            "robots.txt",
            "--dialect",
            "google",
            "--agent",
            "Bot",
            "http://x/robots.txt",
        ])
        .ok();
    assert_eq!(
        google,
        "disallow\thttp://x/robots.txt\tline 9: Disallow: /robots.txt\t\
         * group\n"
    );
    dir.run(&[
        "explain",
        "rules.bin",
        "--dialect",
        "google",
        "--agent",
        "Bot",
        "http://x/",
    ])
    .fails(&["rules.bin", "rfc9309"]);
}

#[test]
fn inspect_reports_groups_sitemaps_and_diagnostics() {
    let dir = compiled("inspect", &[]);
    let from_robots = dir.run(&["inspect", "robots.txt"]).ok();
    let from_rules = dir.run(&["inspect", "rules.bin"]).ok();
    for (out, format) in [
        (&from_robots, "format: robots.txt"),
        (&from_rules, "format: rules file"),
    ] {
        for needle in [
            format,
            "dialect: rfc9309",
            "groups: 2\n",
            "group 0: engine dfa, 2 rules,",
            "group 1: engine dfa, 3 rules,",
            "agent foobot: group 0, its own\n",
            "agent * (every other agent): group 1, the * group\n",
            "sitemap: line 10: https://x.example/sitemap.xml\n",
            "crawl-delay: line 4: 5 (group of FooBot)\n",
            "diagnostics: 2\n",
            "diagnostic: line 11: unknown key 'Frobnicate' ignored\n",
        ] {
            assert!(out.contains(needle), "{needle:?} not in:\n{out}");
        }
    }
    // Everything after the first two lines is the same for both.
    let tail = |s: &str| s.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert_eq!(tail(&from_robots), tail(&from_rules));
    let google = dir.run(&["inspect", "--dialect", "google", "robots.txt"]);
    assert!(google.ok().contains("dialect: google\n"));
}

#[test]
fn missing_files_fail_with_their_path() {
    let dir = compiled("missing", &[]);
    dir.run(&["check", "--agent", "Bot", "absent.txt", "http://x/"])
        .fails(&["absent.txt"]);
    dir.run(&["compile", "absent.txt", "-o", "out.bin"])
        .fails(&["absent.txt"]);
    dir.run(&["filter", "absent.bin", "--agent", "Bot"])
        .fails(&["absent.bin"]);
    dir.run(&["filter", "rules.bin", "--agent", "Bot", "absent-urls.txt"])
        .fails(&["absent-urls.txt"]);
    dir.run(&["explain", "absent.bin", "--agent", "Bot", "http://x/"])
        .fails(&["absent.bin"]);
    dir.run(&["inspect", "absent.bin"]).fails(&["absent.bin"]);
    dir.run(&["compile", "robots.txt", "-o", "no/such/dir/out.bin"])
        .fails(&["no/such/dir/out.bin"]);
    // A robots.txt where a rules file is expected.
    dir.run(&["filter", "robots.txt", "--agent", "Bot"]).fails(&[
        "robots.txt",
        "not a rules file",
        "robofilter compile",
    ]);
    assert_eq!(dir.list(), ["robots.txt", "rules.bin"]);
}

#[test]
fn corrupted_rules_file_is_rejected() {
    let dir = compiled("corrupted", &[]);
    let mut bytes = dir.read("rules.bin");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    dir.write("bad.bin", &bytes);
    dir.run(&["filter", "bad.bin", "--agent", "Bot"])
        .fails(&["bad.bin", "corrupted"]);
    dir.run(&["explain", "bad.bin", "--agent", "Bot", "http://x/"])
        .fails(&["bad.bin", "corrupted"]);
    dir.run(&["inspect", "bad.bin"]).fails(&["bad.bin", "corrupted"]);
}

#[test]
fn agent_not_compiled_is_an_error() {
    let dir = compiled("agent", &["--agent", "A"]);
    dir.write("urls.txt", "http://x/\n");
    let run = dir.run(&["filter", "rules.bin", "--agent", "A", "urls.txt"]);
    assert_eq!(run.ok(), "http://x/\n");
    dir.run(&["filter", "rules.bin", "--agent", "B", "urls.txt"]).fails(&[
        "rules.bin",
        "'B'",
        "--agent",
    ]);
    dir.run(&["explain", "rules.bin", "--agent", "B", "http://x/"])
        .fails(&["rules.bin", "'B'"]);
}

#[test]
fn usage_errors_exit_2_and_help_documents_exit_codes() {
    let dir = Dir::new("usage");
    let run = dir.run(&["filter", "rules.bin"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let run = dir.run(&["filter", "rules.bin", "--agent", "x", "-j", "0"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    // No line is a URL of at most 0 octets.
    let args = ["filter", "rules.bin", "--agent", "x", "--max-url-len", "0"];
    dir.run(&args).fails(&["--max-url-len", "0 is not in 1.."]);
    // A directory where a bundle may go: not a shard directory either.
    std::fs::create_dir(dir.path.join("not-shards")).unwrap();
    dir.run(&["filter", "not-shards", "--agent", "x"]).fails(&[
        "'not-shards' is a directory",
        "or a shard directory, which has an index.json",
    ]);
    let help = dir.run(&["--help"]).ok();
    assert!(help.contains("Exit status:"), "{help}");
    let help = dir.run(&["filter", "--help"]).ok();
    assert!(help.contains("scheme://"), "{help}");
    assert!(help.contains("Exit status:"), "{help}");
    let version = dir.run(&["--version"]).ok();
    assert!(version.starts_with("robofilter "), "{version}");
}

/// The google-dialect conformance vectors, through `robofilter check`.
#[test]
fn check_agrees_with_google_vectors() {
    let dir = Dir::new("google-vectors");
    let vectors = google_vectors();
    // The multi-agent API has no CLI form: `--agent` takes one token.
    let skipped: Vec<&str> = vectors
        .iter()
        .filter(|v| v.multi_agent)
        .map(|v| v.id.as_str())
        .collect();
    assert_eq!(skipped, ["A08", "A09"]);
    let mut failed = Vec::new();
    let mut checked = 0;
    for v in vectors.iter().filter(|v| !v.multi_agent) {
        let robots = dir.write("robots.txt", &v.robots);
        let robots = robots.to_str().unwrap();
        let args = [
            "check",
            "--dialect",
            "google",
            "--agent",
            &v.agent,
            "--",
            robots,
            &v.url,
        ];
        let out = dir.run(&args).ok();
        let want = if v.allowed { "allow" } else { "disallow" };
        if out != format!("{want}\t{}\n", v.url) {
            failed.push(format!("{}: {out:?}", v.id));
        }
        checked += 1;
    }
    assert_eq!(checked, vectors.len() - 2);
    assert!(failed.is_empty(), "disagreements: {failed:#?}");
}

/// The bundle fixtures (see data/bundle/README.md).
fn bundle_fixture(name: &str) -> String {
    crate::util::data_dir().join("bundle").join(name).display().to_string()
}

/// URLs over the manifest fixture's hosts, one unknown host, and a line
/// that is not a URL.
const BUNDLE_URLS: &str = "http://a.example/private/x\n\
                           https://A.EXAMPLE:443/public\n\
                           http://b.example/caf%E9/\n\
                           http://c.example/anything\n\
                           http://d.example/\n\
                           http://e.example/\n\
                           http://f.example/\n\
                           http://g.example/g/1\n\
                           http://h.example/\n\
                           http://i.example:8080/x\n\
                           http://i.example/x\n\
                           http://j.example/\n\
                           http://k.example/x\n\
                           http://nobody.example/\n\
                           not a url\n";

#[test]
fn bundle_from_manifest_decides_by_host_and_fetch_outcome() {
    let dir = Dir::new("bundle-manifest");
    let manifest = bundle_fixture("manifest.jsonl");
    let run = dir.run(&["compile", "--manifest", &manifest, "-o", "b.bin"]);
    run.ok();
    run.stderr_has(&["11 hosts", "3 allow all", "3 disallow all"]);
    dir.write("urls.txt", BUNDLE_URLS);
    let args = ["filter", "b.bin", "--agent", "Bot", "--emit", "all"];
    let run = dir.run(&[&args[..], &["urls.txt"]].concat());
    assert_eq!(
        run.ok(),
        "disallow\thttp://a.example/private/x\n\
         allow\thttps://A.EXAMPLE:443/public\n\
         disallow\thttp://b.example/caf%E9/\n\
         allow\thttp://c.example/anything\n\
         disallow\thttp://d.example/\n\
         disallow\thttp://e.example/\n\
         disallow\thttp://f.example/\n\
         disallow\thttp://g.example/g/1\n\
         allow\thttp://h.example/\n\
         allow\thttp://i.example:8080/x\n\
         unknown\thttp://i.example/x\n\
         allow\thttp://j.example/\n\
         allow\thttp://k.example/x\n\
         unknown\thttp://nobody.example/\n\
         invalid\tnot a url\n"
    );
    let summary = run.summary();
    summary.assert_adds_up();
    assert_eq!((summary.unknown, summary.invalid), (2, 1));
    // --emit unknown selects exactly the hosts without an entry.
    let run = dir.run(&[
        "filter", "b.bin", "--agent", "Bot", "--emit", "unknown", "urls.txt",
    ]);
    assert_eq!(run.ok(), "http://i.example/x\nhttp://nobody.example/\n");
}

#[test]
fn bundle_from_hosts_dir_and_warc_agree_with_single_files() {
    let dir = Dir::new("bundle-dir");
    let hosts = bundle_fixture("hosts");
    dir.run(&["compile", "--hosts", &hosts, "-o", "h.bin"]).ok();
    // Each host decides exactly as its own robots.txt compiled alone.
    let paths = ["/", "/private/", "/private/x", "/a?b", "/robots.txt"];
    for name in ["a.example", "b.example", "c.example:8080", "d.example"] {
        let robots = format!("{hosts}/{name}.txt");
        let urls: Vec<String> =
            paths.iter().map(|p| format!("http://{name}{p}")).collect();
        let mut check = vec!["check", "--agent", "Bot", &robots];
        check.extend(urls.iter().map(String::as_str));
        let want = dir.run(&check).ok();
        dir.write("u.txt", urls.join("\n"));
        let got = dir
            .run(&[
                "filter", "h.bin", "--agent", "Bot", "--emit", "all", "u.txt",
            ])
            .ok();
        assert_eq!(got, want, "{name}");
    }
    // The gzip and plain WARC fixtures give byte-identical bundles.
    let warc = bundle_fixture("robots.warc");
    let warc_gz = bundle_fixture("robots.warc.gz");
    dir.run(&["compile", "--warc", &warc, "-o", "w.bin"]).ok();
    dir.run(&["compile", "--warc", &warc_gz, "-o", "wgz.bin"]).ok();
    assert_eq!(dir.read("w.bin"), dir.read("wgz.bin"));
    let run = dir.run(&["inspect", "w.bin"]);
    let out = run.ok();
    assert!(
        out.contains("host: c.example\tfetch HTTP 500\tdisallow all"),
        "{out}"
    );
    assert!(
        out.contains("host: e.example\tfetch HTTP 302\tallow all"),
        "{out}"
    );
    assert!(
        out.contains(
            "host: n.example\tfetch more than five redirects\tallow all"
        ),
        "{out}"
    );
}

#[test]
fn filter_reads_gzip_and_zstd_and_prints_json() {
    use std::io::Write as _;
    let dir = compiled("filter-compressed", &[]);
    let plain = "http://x/private/1\nhttp://x/ok\n\nhttp://x/caf\u{e9}\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    gz.write_all(plain.as_bytes()).unwrap();
    dir.write("u.gz", gz.finish().unwrap());
    dir.write("u.zst", zstd::encode_all(plain.as_bytes(), 3).unwrap());
    dir.write("u.txt", plain);
    let all = ["filter", "rules.bin", "--agent", "Bot", "--emit", "all"];
    let want = dir.run(&[&all[..], &["u.txt"]].concat()).ok();
    assert_eq!(want.lines().count(), 4);
    for input in ["u.gz", "u.zst"] {
        assert_eq!(dir.run(&[&all[..], &[input]].concat()).ok(), want);
        let stdin = dir.read(input);
        let run = dir.run_with(&[&all[..], &["-"]].concat(), &stdin);
        assert_eq!(run.ok(), want, "{input} on stdin");
        // Cut short: an error that says how far it read and what to do,
        // and with -o no output.
        let bytes = dir.read(input);
        dir.write("cut", &bytes[..bytes.len() - 6]);
        let tool = if input == "u.gz" { "gzip" } else { "zstd" };
        dir.run(&[&all[..], &["cut", "-o", "out.txt"]].concat())
            .fails_without_output(&[
                "URL list 'cut'",
                "decompressed octets: the file is damaged or cut",
                &format!("`{tool} -t FILE` checks it"),
            ]);
        assert!(!dir.path.join("out.txt").exists(), "{input}: output written");
    }
    let json =
        dir.run(&[&all[..], &["--json", "--explain", "u.txt"]].concat()).ok();
    let rows: Vec<serde_json::Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["verdict"], "disallow");
    assert_eq!(rows[0]["host"], "x");
    assert_eq!(rows[0]["line"], 7);
    assert_eq!(rows[0]["pattern"], "/private");
    assert_eq!(rows[1]["verdict"], "allow");
    assert_eq!(rows[1]["line"], serde_json::Value::Null);
    assert_eq!(rows[2]["verdict"], "invalid");
    assert_eq!(rows[3]["url"], "http://x/caf\u{e9}");
}

#[test]
fn filter_counts_over_long_lines_as_invalid() {
    let dir = compiled("filter-long", &[]);
    dir.write("urls.txt", "http://x/a\nhttp://x/0123456789\nhttp://x/b\n");
    let run = dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "Bot",
        "--emit",
        "all",
        "--max-url-len",
        "12",
        "urls.txt",
    ]);
    assert_eq!(
        run.ok(),
        "allow\thttp://x/a\ninvalid\thttp://x/0123456789\nallow\thttp://x/b\n"
    );
    run.stderr_has(&["1 longer than 12 octets", "urls.txt:2 (too long)"]);
    let summary = run.summary();
    summary.assert_adds_up();
    assert_eq!((summary.invalid, summary.allowed), (1, 2));
}

/// A full disk: exit 2 with a message naming the output.
#[test]
fn full_disk_fails_naming_the_output() {
    if !std::path::Path::new("/dev/full").exists() {
        println!("skipping: /dev/full does not exist on this system");
        return;
    }
    let dir = compiled("full-disk", &[]);
    dir.write("urls.txt", URLS);
    let args = ["filter", "rules.bin", "--agent", "Bot", "urls.txt"];
    dir.run(&[&args[..], &["-o", "/dev/full"]].concat())
        .fails(&["cannot write output '/dev/full'", "No space left"]);
    let out = std::fs::File::create("/dev/full").unwrap();
    let run = dir
        .command(&args)
        .stdout(out)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("cannot write output to stdout"), "{stderr}");
}
