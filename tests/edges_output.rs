//! Process-level tests of the CLI's output edges (issue 11, Part B items
//! 1, 2, 4, 6, 14 and 15): `-o` through links and onto special files,
//! `-o` naming an input, signals, an unwritable stderr, resource limits,
//! usage messages, and the man page and completions.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Dir, Run, list};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

const URLS: &str = "http://x/public\nhttp://x/private/1\nhttp://x/last\n";

/// What `filter --agent Bot` prints for [`URLS`].
const ALLOWED: &str = "http://x/public\nhttp://x/last\n";

/// A directory with `robots.txt`, its `rules.bin` and `urls.txt`.
fn setup(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write("robots.txt", ROBOTS);
    dir.write("urls.txt", URLS);
    dir.run(&["compile", "robots.txt", "-o", "rules.bin"]).ok();
    dir
}

/// The `filter` arguments that read `urls.txt`, plus `extra`.
fn filter<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["filter", "rules.bin", "--agent", "Bot"];
    args.extend_from_slice(extra);
    args
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap();
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).unwrap().file_type().is_symlink()
}

/// Part B.1: `-o` through a symbolic link writes the link's target
/// (atomically, in the target's directory) and leaves the link a link;
/// the replaced file keeps its permissions.
#[cfg(unix)]
#[test]
fn output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
    use std::os::unix::fs::symlink;

    let dir = setup("symlink");
    std::fs::create_dir(dir.join("real")).unwrap();
    std::fs::create_dir(dir.join("links")).unwrap();
    dir.write("real/out.txt", "old\n");
    set_mode(&dir.join("real/out.txt"), 0o640);
    // A relative link, resolved from its own directory, through a second
    // link.
    symlink("../real/out.txt", dir.join("links/hop")).unwrap();
    symlink("hop", dir.join("links/out.txt")).unwrap();
    dir.run(&filter(&["-o", "links/out.txt", "urls.txt"])).ok();
    assert!(is_symlink(&dir.join("links/out.txt")), "the link was replaced");
    assert!(is_symlink(&dir.join("links/hop")), "the link was replaced");
    assert_eq!(dir.read("real/out.txt"), ALLOWED.as_bytes());
    assert_eq!(mode(&dir.join("real/out.txt")), 0o640);
    assert_eq!(list(&dir.join("real")), ["out.txt"]);
    assert_eq!(list(&dir.join("links")), ["hop", "out.txt"]);

    // compile too; a dangling link creates its target.
    symlink("real/rules2.bin", dir.join("rules-link")).unwrap();
    dir.run(&["compile", "robots.txt", "-o", "rules-link"]).ok();
    assert!(is_symlink(&dir.join("rules-link")));
    assert_eq!(dir.read("real/rules2.bin"), dir.read("rules.bin"));
    assert_eq!(list(&dir.join("real")), ["out.txt", "rules2.bin"]);
}

/// Part B.1: an existing regular output keeps its permissions.
#[cfg(unix)]
#[test]
fn replaced_output_keeps_its_permissions() {
    let dir = setup("perms");
    for (name, mode_before) in [("out.txt", 0o640), ("wide.txt", 0o664)] {
        dir.write(name, "old\n");
        set_mode(&dir.join(name), mode_before);
        dir.run(&filter(&["-o", name, "urls.txt"])).ok();
        assert_eq!(dir.read(name), ALLOWED.as_bytes());
        assert_eq!(mode(&dir.join(name)), mode_before, "{name}");
    }
    dir.write("rules.copy", "old");
    set_mode(&dir.join("rules.copy"), 0o600);
    dir.run(&["compile", "robots.txt", "-o", "rules.copy"]).ok();
    assert_eq!(mode(&dir.join("rules.copy")), 0o600);
    // Run as root, the owner and group are kept too.
    let nobody = 65534;
    let path = dir.join("out.txt");
    if std::os::unix::fs::chown(&path, Some(nobody), Some(nobody)).is_ok() {
        use std::os::unix::fs::MetadataExt;
        dir.run(&filter(&["-o", "out.txt", "urls.txt"])).ok();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (nobody, nobody));
        assert_eq!(mode(&path), 0o640);
    } else {
        println!("skipping the owner check: not root");
    }
    assert_eq!(
        dir.list(),
        [
            "out.txt",
            "robots.txt",
            "rules.bin",
            "rules.copy",
            "urls.txt",
            "wide.txt"
        ]
    );
}

/// Part B.1: a name for our own stdout (`/dev/stdout` is a link to
/// `/proc/self/fd/1`) is written as stdout, never replaced, even when
/// stdout is a regular file; `/dev/null` stays a device.
#[cfg(target_os = "linux")]
#[test]
fn output_naming_our_stdout_or_a_device_is_written_in_place() {
    use std::os::unix::fs::{FileTypeExt, symlink};

    let dir = setup("stdout-link");
    // Our own link to /proc/self/fd/1, so that a bug replaces it and not
    // the machine's /dev/stdout.
    symlink("/proc/self/fd/1", dir.join("so")).unwrap();
    for args in [
        filter(&["-o", "so", "urls.txt"]),
        vec!["compile", "robots.txt", "-o", "so"],
    ] {
        let captured = std::fs::File::create(dir.join("captured")).unwrap();
        let out = dir
            .command(&args)
            .stdout(captured)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let run = Run::from_output(args.join(" "), out);
        run.ok();
        assert!(is_symlink(&dir.join("so")), "{}: link replaced", run.args);
        let want = match args[0] {
            "filter" => ALLOWED.as_bytes().to_vec(),
            _ => dir.read("rules.bin"),
        };
        assert_eq!(dir.read("captured"), want, "{}", run.args);
    }
    // Through a pipe, as a user types it.
    let run = dir.run(&filter(&["-o", "/dev/stdout", "urls.txt"]));
    assert_eq!(run.ok(), ALLOWED);
    for args in [
        filter(&["-o", "/dev/null", "urls.txt"]),
        vec!["compile", "robots.txt", "-o", "/dev/null"],
    ] {
        assert_eq!(dir.run(&args).ok(), "");
        let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null is now {kind:?}");
    }
    assert_eq!(
        dir.list(),
        ["captured", "robots.txt", "rules.bin", "so", "urls.txt"]
    );
}

/// Part B.2: `-o -` is stdout, for `filter` and `compile`.
#[test]
fn dash_output_is_stdout() {
    let dir = setup("dash");
    assert_eq!(dir.run(&filter(&["-o", "-", "urls.txt"])).ok(), ALLOWED);
    let run = dir.run(&["compile", "robots.txt", "-o", "-"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, dir.read("rules.bin"));
    assert_eq!(dir.list(), ["robots.txt", "rules.bin", "urls.txt"]);
}

/// Part B.2: an output that is an input (the same device and inode: the
/// file itself, a hard link, a symbolic link, stdin redirected from it) is
/// refused before any work, with both names, and the input is unchanged.
#[cfg(unix)]
#[test]
fn output_naming_an_input_is_refused() {
    let dir = setup("out-is-in");
    std::fs::hard_link(dir.join("urls.txt"), dir.join("hard.txt")).unwrap();
    std::os::unix::fs::symlink("urls.txt", dir.join("soft.txt")).unwrap();
    std::fs::create_dir(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", ROBOTS);
    dir.write("manifest.jsonl", "{\"host\":\"a.example\",\"status\":404}\n");
    dir.write("crawl.warc", "WARC/1.0\r\n");
    let snapshot = |dir: &Dir| -> Vec<(String, Vec<u8>)> {
        let names = [
            "urls.txt",
            "rules.bin",
            "robots.txt",
            "hosts/a.example.txt",
            "manifest.jsonl",
            "crawl.warc",
        ];
        names.iter().map(|n| (n.to_string(), dir.read(n))).collect()
    };
    let before = snapshot(&dir);
    let cases: &[(&[&str], &str, &str)] = &[
        (&["-o", "urls.txt", "urls.txt"], "urls.txt", "urls.txt"),
        (&["-o", "hard.txt", "urls.txt"], "hard.txt", "urls.txt"),
        (&["-o", "soft.txt", "urls.txt"], "soft.txt", "urls.txt"),
        (&["-o", "rules.bin", "urls.txt"], "rules.bin", "rules.bin"),
        (&["urls.txt", "-o", "./urls.txt"], "./urls.txt", "urls.txt"),
    ];
    for (extra, out, input) in cases {
        dir.run(&filter(extra))
            .fails(&[&format!("output '{out}'"), &format!("input '{input}'")]);
    }
    // Stdin redirected from the output.
    let args = filter(&["-o", "urls.txt"]);
    let out = dir
        .command(&args)
        .stdin(std::fs::File::open(dir.join("urls.txt")).unwrap())
        .output()
        .unwrap();
    Run::from_output(args.join(" "), out)
        .fails(&["output 'urls.txt'", "input '<stdin>'"]);
    // Stdout opened on an input without truncating it (`1<>urls.txt`,
    // `>>urls.txt`), for `filter` and `shard`.
    let shard = ["shard", "--shards", "2", "urls.txt"];
    for args in [&filter(&["urls.txt"])[..], &shard[..]] {
        for open in [
            OpenOptions::new().read(true).write(true).clone(),
            OpenOptions::new().append(true).clone(),
        ] {
            let stdout = open.open(dir.join("urls.txt")).unwrap();
            let out = dir.command(args).stdout(stdout).output().unwrap();
            Run::from_output(args.join(" "), out)
                .fails(&["stdout is the input 'urls.txt'", "-o OUT"]);
        }
    }
    // Stdin redirected from the list stdout is opened on.
    let args = filter(&["-"]);
    let stdout = OpenOptions::new().append(true).open(dir.join("urls.txt"));
    let out = dir
        .command(&args)
        .stdin(std::fs::File::open(dir.join("urls.txt")).unwrap())
        .stdout(stdout.unwrap())
        .output()
        .unwrap();
    Run::from_output(args.join(" "), out)
        .fails(&["stdout is the input '<stdin>'"]);
    let compile_cases: &[&[&str]] = &[
        &["compile", "robots.txt", "-o", "robots.txt"],
        &["compile", "--hosts", "hosts", "-o", "hosts/a.example.txt"],
        &["compile", "--manifest", "manifest.jsonl", "-o", "manifest.jsonl"],
        &["compile", "--warc", "crawl.warc", "-o", "crawl.warc"],
    ];
    for args in compile_cases {
        dir.run(args).fails(&["is the input", args[args.len() - 1]]);
    }
    assert_eq!(snapshot(&dir), before);
    assert_eq!(
        dir.list(),
        [
            "crawl.warc",
            "hard.txt",
            "hosts",
            "manifest.jsonl",
            "robots.txt",
            "rules.bin",
            "soft.txt",
            "urls.txt"
        ]
    );
    assert_eq!(list(&dir.join("hosts")), ["a.example.txt"]);
}

/// Part B.2: a missing output directory fails the run before the work:
/// the output's error comes before that of a missing input.
#[test]
fn missing_output_directory_fails_before_the_work() {
    let dir = setup("no-out-dir");
    let run = dir.run(&["compile", "missing.txt", "-o", "nodir/rules.bin"]);
    run.fails(&["nodir", "does the directory exist"]);
    assert!(!run.stderr.contains("missing.txt"), "{}", run.stderr);
    let run = dir.run(&[
        "filter",
        "missing.bin",
        "--agent",
        "Bot",
        "-o",
        "nodir/out.txt",
        "urls.txt",
    ]);
    run.fails(&["nodir", "does the directory exist"]);
    assert!(!run.stderr.contains("missing.bin"), "{}", run.stderr);
    assert_eq!(dir.list(), ["robots.txt", "rules.bin", "urls.txt"]);
}

/// Waits (at most 30 s) until `child` has a temporary output file in
/// `dir`; returns its name.
fn wait_for_temp(dir: &Dir, child: &mut Child, prefix: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some(name) =
            dir.list().into_iter().find(|n| n.starts_with(prefix))
        {
            return name;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("robofilter ended ({status}) before its temp file:\n{err}");
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("no temporary file {prefix}* after 30 s: {:?}", dir.list());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` (a `kill` name) to `child`, keeping its stdin open until
/// it has exited; returns the exit status.
fn signal_and_wait(child: &mut Child, signal: &str) -> Option<i32> {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} failed");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("robofilter did not end 30 s after SIG{signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Part B.4: SIGINT or SIGTERM during `filter -o` or `compile -o` removes
/// the temporary file, keeps the previous output, and exits 130 / 143.
#[cfg(unix)]
#[test]
fn signals_remove_the_temp_file_and_keep_the_previous_output() {
    let dir = setup("signals");
    let cases: [(&[&str], &str, &str, i32); 4] = [
        (&["-o", "out.txt"], "INT", "out.txt", 130),
        (&["-o", "out.txt"], "TERM", "out.txt", 143),
        // A robots.txt is read only up to its cap, so the compile that
        // cannot finish reads a manifest (streamed, as long as it lasts).
        (
            &["compile", "--manifest", "-", "-o", "rules.bin"],
            "INT",
            "rules.bin",
            130,
        ),
        (
            &["compile", "--manifest", "-", "-o", "rules.bin"],
            "TERM",
            "rules.bin",
            143,
        ),
    ];
    dir.write("out.txt", "previous output\n");
    for (extra, signal, out, want) in cases {
        let args =
            if extra[0] == "compile" { extra.to_vec() } else { filter(extra) };
        let before = dir.read(out);
        let mut child = dir.spawn(&args, Stdio::null());
        // Some input, but no end of input: the run cannot finish.
        let mut stdin = child.stdin.take().unwrap();
        let input: Vec<u8> = if extra[0] == "compile" {
            (0..20_000)
                .flat_map(|i| {
                    format!("{{\"host\":\"h{i}.example\",\"status\":404}}\n")
                        .into_bytes()
                })
                .collect()
        } else {
            b"http://x/public/page\n".repeat(100_000)
        };
        let _ = stdin.write_all(&input);
        let temp = wait_for_temp(&dir, &mut child, &format!(".{out}."));
        let code = signal_and_wait(&mut child, signal);
        drop(stdin);
        assert_eq!(code, Some(want), "{} SIG{signal}", args.join(" "));
        // Says so, instead of ending without a word.
        let mut err = String::new();
        std::io::Read::read_to_string(
            &mut child.stderr.take().unwrap(),
            &mut err,
        )
        .unwrap();
        assert!(
            err.contains(&format!(
                "stopped by SIG{signal}, its unfinished output removed"
            )),
            "{err}"
        );
        assert!(!dir.list().contains(&temp), "{temp} left behind");
        assert_eq!(dir.read(out), before, "{out} changed");
    }
    assert_eq!(dir.list(), ["out.txt", "robots.txt", "rules.bin", "urls.txt"]);
}

/// Waits up to `limit` for `child` to have a file named `name` mapped
/// (`/proc/PID/maps`); whether it has. Panics if the child ends first.
#[cfg(target_os = "linux")]
fn wait_for_map(child: &mut Child, name: &str, limit: Duration) -> bool {
    let maps = format!("/proc/{}/maps", child.id());
    let start = Instant::now();
    while !std::fs::read_to_string(&maps).unwrap_or_default().contains(name) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("robofilter ended ({status}) before it mapped {name}");
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A URL list cut in place underneath `filter -o` (truncated while it is
/// memory-mapped) stops the run, never lets it succeed on part of the
/// list: exit 135 with a message when a mapped page past the new end is
/// read (SIGBUS), or 2 when the cut is seen before a window is mapped;
/// either way the temporary file is removed and the previous output kept.
/// The cut comes once the list is mapped (`/proc/PID/maps`), so SIGBUS
/// is the expected path; the test says which one it met.
#[cfg(target_os = "linux")]
#[test]
fn a_url_list_cut_underneath_stops_the_run() {
    let dir = setup("cut");
    dir.write("out.txt", "previous output\n");
    // 96 MiB: more than one 64 MiB window at -j 1, and long enough to
    // decide that the cut comes while the first window is in use.
    let line = b"http://x/public/a/somewhat/longer/path/0123456789abcdef\n";
    let list = dir.write("big.txt", line.repeat((96 << 20) / line.len()));
    let args = filter(&["-j", "1", "--emit", "all", "-o", "out.txt"]);
    let args = [&args[..], &["big.txt"]].concat();
    let mut child = dir.spawn(&args, Stdio::null());
    drop(child.stdin.take());
    let temp = wait_for_temp(&dir, &mut child, ".out.txt.");
    let mapped = wait_for_map(&mut child, "big.txt", Duration::from_secs(30));
    assert!(mapped, "big.txt unmapped");
    std::fs::File::options()
        .write(true)
        .open(&list)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(135) => {
            assert!(err.contains("was cut"), "{err}");
            println!("the cut was met inside a window (SIGBUS)");
        }
        Some(2) => {
            assert!(err.contains("shrank from"), "{err}");
            println!("the cut was met between windows");
        }
        other => panic!("exit {other:?} after the cut:\n{err}"),
    }
    assert!(!dir.list().contains(&temp), "{temp} left behind");
    assert_eq!(dir.read("out.txt"), b"previous output\n");
}

/// A bundle that `filter -o` holds a read lease on and maps (Linux, a
/// file nobody writes) cannot be changed under the run: a process that
/// opens it for writing waits, the run stops at once (exit 2, naming the
/// bundle), the temporary output is removed and the previous output
/// kept, and only then does the writer's open return. Where no lease is
/// granted (the bundle is never mapped), the test says so and stops.
#[cfg(target_os = "linux")]
#[test]
fn a_leased_bundle_opened_for_writing_stops_the_run() {
    let dir = setup("lease");
    std::fs::create_dir(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", ROBOTS);
    dir.run(&["compile", "--hosts", "hosts", "-o", "bundle.bin"]).ok();
    dir.write("out.txt", "previous output\n");
    let args = ["filter", "bundle.bin", "--agent", "Bot", "-o", "out.txt"];
    let mut child = dir.spawn(&args, Stdio::null());
    // URLs keep coming through the pipe: the run stays in progress.
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"http://a.example/public\n");
    let temp = wait_for_temp(&dir, &mut child, ".out.txt.");
    if !wait_for_map(&mut child, "bundle.bin", Duration::from_secs(10)) {
        let _ = child.kill();
        println!("no read lease on this file system: the bundle is read");
        return;
    }
    let writer = std::fs::File::options()
        .write(true)
        .open(dir.join("bundle.bin"))
        .unwrap();
    // The open returned: the run has ended (its lease went with it).
    let status = child.try_wait().unwrap().or_else(|| {
        std::thread::sleep(Duration::from_secs(1));
        child.try_wait().unwrap()
    });
    drop((writer, stdin));
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(status.is_some(), "the writer got in while the run went on");
    assert_eq!(out.status.code(), Some(2), "{err}");
    for needle in ["bundle.bin", "opened for writing", "renaming"] {
        assert!(err.contains(needle), "no {needle:?} in: {err}");
    }
    assert!(!dir.list().contains(&temp), "{temp} left behind");
    assert_eq!(dir.read("out.txt"), b"previous output\n");
}

/// Part B.6: a stderr that cannot be written (`2>/dev/full`) never panics:
/// warnings and summaries are dropped, the exit status stays right.
#[test]
fn unwritable_stderr_never_panics() {
    if !Path::new("/dev/full").exists() {
        println!("skipping: /dev/full does not exist on this system");
        return;
    }
    let dir = setup("dev-full");
    dir.write("mixed.txt", "http://x/a\nnot a url\n\n");
    let cases: &[(&[&str], i32)] = &[
        // A warning (lines that are not URLs) and the summary.
        (&["filter", "rules.bin", "--agent", "Bot", "mixed.txt"], 0),
        // The compile summary.
        (&["compile", "robots.txt", "-o", "again.bin"], 0),
        // An error.
        (&["filter", "rules.bin", "--agent", "Bot", "missing.txt"], 2),
        // A usage error.
        (&["filter", "--frobnicate"], 2),
        (&["filter", "rules.bin", "--agent", "Bot", "-j", "60000"], 0),
    ];
    for (args, want) in cases {
        let full =
            std::fs::File::options().write(true).open("/dev/full").unwrap();
        let out = dir
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(*want), "{}", args.join(" "));
    }
}

/// Part B.15: usage errors carry the `robofilter:` prefix and exit 2;
/// `--help` and `--version` exit 0 on stdout.
#[test]
fn usage_errors_carry_the_prefix() {
    let dir = Dir::new("usage");
    for args in [
        &["--frobnicate"][..],
        &["filter"],
        &["filter", "rules.bin"],
        &["compile", "robots.txt"],
        &["filter", "r", "--agent", "B", "--emit", "sometimes"],
        &[],
    ] {
        let run = dir.run(args);
        run.fails(&[]);
        // clap's own `error: ` prefix is replaced, not added to.
        assert!(
            !run.stderr.lines().any(|l| l.starts_with("error:")),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, b"");
    }
    dir.run(&["--frobnicate"]).fails(&["'--frobnicate'"]);
    dir.run(&[]).fails(&["a subcommand is required", "Usage:"]);
    for args in [&["--help"][..], &["filter", "--help"], &["--version"]] {
        let run = dir.run(args);
        assert!(run.ok().contains("robofilter"), "{}", run.args);
        assert_eq!(run.stderr, "");
    }
}

/// Part B.15: one line is "1 line", in the summary and the warning.
#[test]
fn one_line_is_not_lines() {
    let dir = setup("one-line");
    let run = dir.run_with(&filter(&[]), b"http://x/a\n");
    run.ok();
    run.stderr_has(&["robofilter: 1 line: 1 allowed,"]);
    assert!(!run.stderr.contains(" 1 lines"), "{}", run.stderr);
    let run = dir.run_with(&filter(&[]), b"nope\nhttp://x/a\n");
    run.stderr_has(&[
        "warning: 1 line is not a URL (0 empty): <stdin>:1",
        "robofilter: 2 lines: 1 allowed,",
    ]);
    assert!(!run.stderr.contains(" 1 lines"), "{}", run.stderr);
}

/// Part B.14: `-j` is capped, with a warning, and gives the same output.
#[test]
fn threads_are_capped_with_a_warning() {
    let dir = setup("threads");
    let run = dir.run(&filter(&["-j", "20000", "urls.txt"]));
    assert_eq!(run.ok(), ALLOWED);
    run.stderr_has(&["warning: -j 20000 capped at", "threads"]);
    let run = dir.run(&filter(&["-j", "1", "urls.txt"]));
    assert_eq!(run.ok(), ALLOWED);
    assert!(!run.stderr.contains("capped"), "{}", run.stderr);
}

/// Part B.14: the rules file and the URL list cannot both be stdin.
#[test]
fn rules_and_urls_both_from_stdin_is_a_usage_error() {
    let dir = setup("both-stdin");
    let rules = dir.read("rules.bin");
    for extra in [&[][..], &["-"], &["urls.txt", "-"]] {
        let mut args = vec!["filter", "-", "--agent", "Bot"];
        args.extend_from_slice(extra);
        let run = dir.run_with(&args, &rules);
        run.fails(&["both come from stdin"]);
        assert_eq!(run.stdout, b"");
    }
    // Either one alone is fine.
    assert_eq!(dir.run_with(&filter(&[]), URLS.as_bytes()).ok(), ALLOWED);
    let run =
        dir.run_with(&["filter", "-", "--agent", "Bot", "urls.txt"], &rules);
    assert_eq!(run.ok(), ALLOWED);
}

/// Part B.14: many compressed inputs are opened one at a time, so that a
/// descriptor limit below their number is no error (EMFILE).
#[cfg(unix)]
#[test]
fn many_gzip_inputs_are_opened_one_at_a_time() {
    use flate2::{Compression, write::GzEncoder};

    let dir = setup("many-gz");
    const FILES: usize = 300;
    let mut names = Vec::new();
    for i in 0..FILES {
        let name = format!("u{i:03}.gz");
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(
            format!("http://x/{i}\nhttp://x/private/{i}\n").as_bytes(),
        )
        .unwrap();
        dir.write(&name, gz.finish().unwrap());
        names.push(name);
    }
    // Also plain files: they are mapped, and a map needs no descriptor.
    dir.write("plain.txt", URLS);
    names.push("plain.txt".to_string());
    let script = "ulimit -n 64 && exec \"$0\" \"$@\"";
    let mut args = vec!["-c", script, env!("CARGO_BIN_EXE_robofilter")];
    args.extend(filter(&["-j", "2"]));
    args.extend(names.iter().map(String::as_str));
    let out = Command::new("sh")
        .current_dir(&dir.path)
        .args(&args)
        .output()
        .unwrap();
    let run =
        Run::from_output(format!("(ulimit -n 64) filter {FILES} .gz"), out);
    let mut want: String =
        (0..FILES).map(|i| format!("http://x/{i}\n")).collect();
    want.push_str(ALLOWED);
    assert_eq!(run.ok(), want);
    run.stderr_has(&[&format!("robofilter: {} lines:", 2 * FILES + 3)]);
}

/// Drops what differs between two runs' stderr on the same data: the
/// input's name and the timing.
fn normalise(stderr: &str, name: &str) -> String {
    stderr
        .lines()
        .map(|l| {
            let l = l.replace(name, "INPUT");
            match l.find(" in ") {
                Some(i) if l.contains(" lines: ") => l[..i].to_string(),
                _ => l,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Part B.14: a line over --max-url-len is reported the same from a
/// mapped file and from stdin (which passes a line longer than its read
/// block through in pieces), in every output form, and a trailing `\r`
/// is neither output nor counted.
#[test]
fn too_long_line_is_reported_the_same_from_a_file_and_stdin() {
    let dir = setup("long-line");
    let mut data = b"http://x/a\n".to_vec();
    // Longer than stdin's read block at -j 1 (4 MiB). The first line's
    // `\r` is the last octet of the second block read for it (the line
    // starts at block offset 0 after the line before it is processed), so
    // its `\n` comes only with the next block.
    for len in [(8 << 20) - 10, 4 << 20] {
        data.extend_from_slice(b"http://x/");
        data.resize(data.len() + len, b'y');
        data.extend_from_slice(b"\r\n");
    }
    data.extend_from_slice(b"http://x/private\nhttp://x/0123456\r\n");
    dir.write("long.txt", &data);
    for mode in
        [&[][..], &["--json"], &["--explain"], &["--json", "--explain"]]
    {
        let mut args = filter(&["-j", "1", "--emit", "all"]);
        args.extend_from_slice(&["--max-url-len", "16"]);
        args.extend_from_slice(mode);
        let from_stdin = dir.run_with(&args, &data);
        args.push("long.txt");
        let from_file = dir.run(&args);
        let (a, b) = (from_file.ok(), from_stdin.ok());
        assert!(a == b, "{mode:?}: stdout differs");
        assert!(!a.contains('\r'), "{mode:?}: a \\r was output");
        let lines: Vec<&str> = a.lines().collect();
        assert_eq!(lines.len(), 5, "{mode:?}");
        assert!(lines[1].contains("invalid") && lines[2].contains("invalid"));
        // `http://x/0123456` is 16 octets: its `\r` does not count.
        assert!(
            lines[4].starts_with("allow\t")
                || lines[4].contains("\"verdict\":\"allow\""),
            "{mode:?}: {}",
            lines[4]
        );
        assert_eq!(
            normalise(&from_file.stderr, "long.txt"),
            normalise(&from_stdin.stderr, "<stdin>"),
            "{mode:?}"
        );
        from_file.stderr_has(&[
            "2 longer than 16 octets",
            "long.txt:2 (too long), long.txt:3 (too long)",
        ]);
    }
}

/// Part B.14: a trailing `\r` does not count toward --max-url-len.
#[test]
fn trailing_cr_does_not_count_toward_max_url_len() {
    let dir = setup("cr-len");
    // 13 octets before the `\r`.
    let input = b"http://x/0123\r\nhttp://x/01234\r\n";
    let args = filter(&["--emit", "all", "--max-url-len", "13"]);
    let run = dir.run_with(&args, input);
    assert_eq!(run.ok(), "allow\thttp://x/0123\ninvalid\thttp://x/01234\n");
    dir.write("cr.txt", input);
    let mut args = args.clone();
    args.push("cr.txt");
    let run = dir.run(&args);
    assert_eq!(run.ok(), "allow\thttp://x/0123\ninvalid\thttp://x/01234\n");
    run.stderr_has(&["cr.txt:2 (too long)"]);
}

/// Part A.4: `robofilter generate` prints the man page (with every
/// subcommand and its options) and each shell's completions.
#[test]
fn generate_prints_the_man_page_and_completions() {
    let dir = Dir::new("generate");
    let man = dir.run(&["generate", "man"]).ok();
    assert!(man.starts_with(".ie") || man.contains(".TH"), "{man}");
    for sub in ["check", "compile", "filter", "explain", "inspect"] {
        let section = format!(".SH \"ROBOFILTER {}\"", sub.to_uppercase());
        assert!(man.contains(&section), "{section} not in the man page");
    }
    // filter's own notes (input lines) and the exit statuses.
    assert!(man.contains("scheme://"), "filter's notes not in the man page");
    // The page's and filter's (whose notes end with them), not one copy
    // per subcommand.
    assert_eq!(man.matches("Exit status:").count(), 2);
    for option in ["max\\-url\\-len", "dfa\\-state\\-limit", "\\-\\-emit"] {
        assert!(man.contains(option), "{option} not in the man page");
    }
    let bash = dir.run(&["generate", "complete-bash"]).ok();
    assert!(bash.contains("filter") && bash.contains("--max-url-len"));
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = dir.run(&["generate", &format!("complete-{shell}")]).ok();
        assert!(out.contains("filter"), "{shell}");
        assert!(out.contains("inspect"), "{shell}");
    }
    // Hidden from --help: a maintainer's command.
    let help = dir.run(&["--help"]).ok();
    assert!(!help.contains("generate"), "{help}");
    dir.run(&["generate", "troff"]).fails(&["troff"]);
}
