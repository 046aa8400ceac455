//! Test helpers of the CLI's tests: a temporary directory that runs the
//! `robofilter` binary, on top of the engine's test helpers (conformance
//! data, skip records), which this file re-exports.

#[path = "../crates/robofilter/tests/util.rs"]
mod common;
#[allow(unused_imports)]
pub use common::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------
// Running the `robofilter` binary (the CLI test modules: cli, edges_*).
// Modules add checks of their own in their own `impl Run` blocks (cli.rs:
// the `filter` summary line).

/// The `robofilter` binary that cargo built for this test run.
#[allow(dead_code)]
pub const BIN: &str = env!("CARGO_BIN_EXE_robofilter");

/// A fresh directory under the system temp dir, the working directory of
/// the runs it starts, removed on drop (ripgrep's `rgtest!`, xsv's
/// `workdir.rs`).
pub struct Dir {
    pub path: PathBuf,
}

#[allow(dead_code)]
impl Dir {
    pub fn new(name: &str) -> Dir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir()
            .join(format!("robofilter-cli-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir { path }
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.join(name))
            .unwrap_or_else(|e| panic!("reading {name}: {e}"))
    }

    /// The names in the directory (not recursive), sorted.
    pub fn list(&self) -> Vec<String> {
        list(&self.path)
    }

    /// The binary with `args`, run here.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(&self.path).args(args);
        cmd
    }

    /// Starts the binary here with stdin and stderr piped and `stdout`
    /// as its stdout.
    pub fn spawn(&self, args: &[&str], stdout: Stdio) -> Child {
        self.command(args)
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Runs the binary with `stdin` as input.
    pub fn run_with(&self, args: &[&str], stdin: &[u8]) -> Run {
        use std::io::Write;
        let mut child = self.spawn(args, Stdio::piped());
        let mut input = child.stdin.take().unwrap();
        let stdin = stdin.to_vec();
        // Feed stdin from a thread so that a full stdout pipe cannot
        // deadlock the test.
        let feeder = std::thread::spawn(move || {
            let _ = input.write_all(&stdin);
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        Run::from_output(args.join(" "), out)
    }

    /// Runs the binary with an empty stdin.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, b"")
    }

    /// Runs the binary with stdin on `/dev/null`; kills it and fails the
    /// test after `limit`, so that a run that would block (on a FIFO, say)
    /// fails instead of hanging the test binary.
    pub fn run_within(&self, args: &[&str], limit: Duration) -> Run {
        self.spawn_within(self.command(args), args.join(" "), limit)
    }

    /// [`Dir::run_within`] under `ulimit -v` (KiB of address space), so
    /// that an unbounded read dies instead of filling the machine.
    pub fn run_bounded(
        &self,
        args: &[&str],
        kib: u64,
        limit: Duration,
    ) -> Run {
        let mut cmd = Command::new("sh");
        cmd.current_dir(&self.path)
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
            .arg(BIN)
            .args(args);
        let what = format!("(ulimit -v {kib}) {}", args.join(" "));
        self.spawn_within(cmd, what, limit)
    }

    fn spawn_within(
        &self,
        mut cmd: Command,
        what: String,
        limit: Duration,
    ) -> Run {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`{what}` did not finish within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Run::from_output(what, child.wait_with_output().unwrap())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        if std::fs::remove_dir_all(&self.path).is_err() {
            // A test left something unreadable or unwritable in it.
            let _ = Command::new("chmod")
                .arg("-R")
                .arg("u+rwx")
                .arg(&self.path)
                .status();
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The names in `dir` (not recursive), sorted.
#[allow(dead_code)]
pub fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A finished run.
pub struct Run {
    /// The command line, for messages.
    pub args: String,
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

#[allow(dead_code)]
impl Run {
    pub fn from_output(args: String, out: std::process::Output) -> Run {
        Run {
            args,
            code: out.status.code(),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit status 0; returns stdout as text.
    pub fn ok(&self) -> String {
        assert_eq!(
            self.code,
            Some(0),
            "robofilter {} failed:\n{}",
            self.args,
            self.stderr
        );
        String::from_utf8(self.stdout.clone()).unwrap()
    }

    /// Asserts exit status `want`.
    pub fn exits(&self, want: i32) -> &Run {
        assert_eq!(
            self.code,
            Some(want),
            "`{}`\nstdout: {}\nstderr: {}",
            self.args,
            String::from_utf8_lossy(&self.stdout),
            self.stderr
        );
        self
    }

    /// Asserts that stderr contains every one of `needles`.
    pub fn stderr_has(&self, needles: &[&str]) -> &Run {
        for needle in needles {
            assert!(
                self.stderr.contains(needle),
                "robofilter {}: {needle:?} not in stderr:\n{}",
                self.args,
                self.stderr
            );
        }
        self
    }

    /// Asserts exit status 2 with a prefixed error message containing
    /// every one of `needles`. Says nothing about stdout: see
    /// [`Run::fails_without_output`].
    pub fn fails(&self, needles: &[&str]) {
        assert_eq!(
            self.code,
            Some(2),
            "robofilter {}: expected status 2, stdout:\n{}\nstderr:\n{}",
            self.args,
            String::from_utf8_lossy(&self.stdout),
            self.stderr
        );
        assert!(
            self.stderr.starts_with("robofilter: "),
            "robofilter {}: {}",
            self.args,
            self.stderr
        );
        self.stderr_has(needles);
    }

    /// [`Run::fails`], and nothing was written to stdout.
    pub fn fails_without_output(&self, needles: &[&str]) {
        self.fails(needles);
        assert!(
            self.stdout.is_empty(),
            "robofilter {}: output despite the error",
            self.args
        );
    }
}
