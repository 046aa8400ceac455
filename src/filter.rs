//! `robofilter filter RULES --agent NAME... [FILE...]`: frontier lines in
//! (a URL, optionally a TAB and fields), selected lines (or every line
//! after its verdict columns, one per agent) out.
//!
//! Each input is cut into newline-aligned chunks of about 256 KiB. A batch
//! of chunks (16 per thread) is decided in parallel, each chunk into its
//! own buffer, and the buffers are then written in input order. Output
//! order is therefore input order for any thread count, and memory stays
//! bounded by one batch: a stream (stdin, a pipe, gzip/zstd) is read one
//! batch-sized block at a time (a block ends at its last newline; the rest
//! is carried into the next block), and a plain file is memory-mapped one
//! window of 16 blocks at a time, its blocks decided where they lie
//! without a copy. A rules file is read into memory whole; a bundle file,
//! its index, then each member when first used.
//!
//! Selected lines that are output as they are (`--emit allowed`,
//! `disallowed` or `unknown` without `--json` or `--explain`) are not
//! copied from a mapped window: a chunk's output records runs of them
//! (at least [`MIN_PASSED_RUN`] octets each; shorter ones are copied),
//! and the writer hands the runs and the octets written between them to
//! the system in one `writev`. The window stays mapped until its last run
//! is written, so two windows may be mapped at once. A line is read from
//! the file twice, when decided and when written: a file rewritten in
//! place meanwhile (not a supported use, and a mapped file gives no
//! snapshot anyway) could have its new octets written.
//!
//! With a bundle, each URL's authority selects its host's rules. A worker
//! remembers the last host it looked up, so runs of URLs of one host cost
//! one comparison each; each member rules file is checked and its matcher
//! built the first time a URL of one of its hosts appears.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, IoSlice, IsTerminal, Read, Seek};
use std::ops::{AddAssign, ControlFlow, Range};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use robofilter::{
    HostCache, MatchPath, Outcome, Reason, Target, UrlChecker, write_why,
};

use crate::args::{Emit, FilterArgs};
use crate::explain::escape_tail;
use crate::files::{self, Output};
use crate::files::{Input, Source};

/// The target chunk length; a chunk extends to the end of its last line.
/// Small enough that the threads finish a block nearly together (a thread
/// idles for at most about one chunk at each block's end).
const CHUNK_LEN: usize = 1 << 18;

/// Chunks per thread in one block: the threads then read 4 MiB per thread
/// at a time.
const CHUNKS_PER_THREAD: usize = 16;

/// Blocks per memory-mapped window of a plain file: each window is
/// mapped, read in and unmapped once, so its mapping costs are paid per
/// 16 blocks (64 MiB at `-j 1`), and only its pages count in the run's
/// RSS.
const WINDOW_BLOCKS: usize = 16;

/// Selected lines passed through as they are in a memory-mapped input
/// are written from the mapping, not copied into an output buffer, when
/// at least this many octets of them follow one another: shorter runs
/// are copied, so that a chunk of 256 KiB has at most 64 runs, and its
/// output fits one `writev`.
const MIN_PASSED_RUN: usize = 4 << 10;

/// How many line numbers of empty or invalid lines are reported.
const REPORT_LEN: usize = 5;

/// `-j` above this many threads per core is capped: the work is CPU-bound,
/// and each thread holds a few chunk buffers.
const MAX_THREADS_PER_CORE: usize = 4;

pub fn run(args: FilterArgs) -> Result<()> {
    let start = Instant::now();
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    if files::is_stdin(&args.rules) && paths.iter().any(|p| files::is_stdin(p))
    {
        bail!(
            "the rules file and the URL list cannot both come from stdin \
             (name the URL list as a FILE, or the rules file as RULES)"
        );
    }
    let mut inputs = vec![(args.rules.as_path(), "rules file or bundle")];
    inputs.extend(paths.iter().map(|p| (p.as_path(), "URL list")));
    files::check_streams_once(&inputs)?;
    // Before any work: an output that is an input would destroy it, and a
    // missing output directory is better known now than after the run.
    let mut read: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    read.push(&args.rules);
    // A shard directory's files are inputs too (read later, lazily).
    let shard_files = files::files_of(&args.rules);
    read.extend(shard_files.iter().map(PathBuf::as_path));
    match &args.output {
        Some(out) => files::check_output_not_input(out, &read)?,
        None => files::check_stdout_not_input(&read)?,
    }
    let out = Output::new(args.output.as_deref())?;

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max_threads = cores * MAX_THREADS_PER_CORE;
    let threads = match args.threads {
        Some(n) if usize::from(n) > max_threads => {
            diag!(
                "robofilter: warning: -j {n} capped at {max_threads} threads \
                 ({MAX_THREADS_PER_CORE} per core)"
            );
            max_threads
        }
        Some(n) => usize::from(n),
        None => cores,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("cannot start the worker threads")?;

    let rules_name = files::display(&args.rules);
    let open = files::Open::compiled();
    files::with_checker(&args.rules, &args.agent, open, |checker| {
        decide(checker, &rules_name, &args, &paths, out, threads, start)
    })
}

/// Decides every line of the inputs `paths` with `checker` into `out`.
fn decide(
    checker: &UrlChecker<'_>,
    rules_name: &str,
    args: &FilterArgs,
    paths: &[PathBuf],
    out: Output,
    threads: usize,
    start: Instant,
) -> Result<()> {
    // Open every input before writing anything, so that a bad
    // path fails the run before any output.
    let inputs: Vec<Input> =
        paths.iter().map(|p| Input::open(p)).collect::<Result<_>>()?;
    let progress = progress_bar(&inputs);

    let decider = Decider {
        checker,
        name: rules_name,
        emit: args.emit,
        json: args.json,
        explain: args.explain,
        max_url_len: args.max_url_len,
    };
    // The output is written on a thread of its own, in order, while the
    // workers decide: a chunk's output goes out as soon as it and the
    // chunks before it are decided, whether or not more input has come.
    let out_name = out.describe();
    let threads_chunks = threads * CHUNKS_PER_THREAD;
    let (queue, to_write) = mpsc::sync_channel(2 * threads_chunks);
    let (give_back, emptied) = mpsc::channel();
    let (run, written) = std::thread::scope(|scope| {
        let writer =
            scope.spawn(|| write_queue(out, &out_name, to_write, give_back));
        let mut sink = Sink {
            out: ToWriter { queue, emptied },
            block_len: threads_chunks * CHUNK_LEN,
            counts: Counts::default(),
            bad: Vec::new(),
            spare: Vec::new(),
            progress,
            workers: threads,
        };
        let run = || -> Result<()> {
            for (path, input) in paths.iter().zip(inputs) {
                let name = files::display(path);
                let mut file = FileState { name: &name, line_base: 0 };
                match input.into_source(path)? {
                    Source::Mapped { file: input, len } => {
                        sink.mapped(&decider, &input, len, &mut file)?;
                    }
                    Source::Stream(r) => {
                        sink.stream(&decider, r, &mut file)?
                    }
                }
            }
            Ok(())
        };
        let run = run();
        // Dropping the queue closes it: the writer ends.
        let Sink { out, counts, bad, progress, .. } = sink;
        drop(out);
        let written = writer.join();
        (run.map(|()| (counts, bad, progress)), written)
    });
    let written =
        written.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    // A write error first: it is why a run stopped when its writer did.
    let out = written?;
    let (counts, bad, progress) = run?;
    out.finish()?;
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    report(&counts, &bad, args.max_url_len, start);
    Ok(())
}

/// A progress bar over the inputs' octets, on stderr when it is a
/// terminal; the length is known when every input is a plain file.
fn progress_bar(inputs: &[Input]) -> Option<ProgressBar> {
    if !io::stderr().is_terminal() {
        return None;
    }
    let known: Option<u64> = inputs.iter().map(Input::plain_len).sum();
    let bar = match known {
        Some(len) => ProgressBar::new(len).with_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} \
                 eta {eta}",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template(
                "{spinner} {bytes} {binary_bytes_per_sec}",
            )
            .expect("valid template"),
        ),
    };
    Some(bar)
}

/// Line counts. Every line is exactly one of allowed, disallowed, unknown
/// or invalid (by its outcome for all agents together,
/// [`Outcome::combine`]); empty lines are a subset of the invalid ones.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    lines: u64,
    allowed: u64,
    disallowed: u64,
    unknown: u64,
    invalid: u64,
    empty: u64,
    /// Lines over `--max-url-len` (a subset of the invalid ones).
    too_long: u64,
    /// Octets read, for the progress bar.
    octets: u64,
}

impl AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.lines += o.lines;
        self.allowed += o.allowed;
        self.disallowed += o.disallowed;
        self.unknown += o.unknown;
        self.invalid += o.invalid;
        self.empty += o.empty;
        self.too_long += o.too_long;
        self.octets += o.octets;
    }
}

/// An input line, classified by [`classify`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Line<'a> {
    /// A URL (the line up to its first TAB, or without its `\r`) and its
    /// path.
    Url(&'a [u8], MatchPath<'a>),
    /// Nothing but possibly a `\r`.
    Empty,
    /// Not a URL (the line without its `\r`).
    Invalid(&'a [u8]),
}

/// Classifies one input line (without its `\n`) as [`Decider::line`]
/// does, from [`robofilter::next_url_line`]'s one pass.
#[cfg(test)]
fn classify(line: &[u8]) -> Line<'_> {
    let (end, url) = robofilter::next_url_line(line);
    assert_eq!(end, line.len(), "one line");
    match (url, line.strip_suffix(b"\r").unwrap_or(line)) {
        (Some((url, path)), _) => Line::Url(url, path),
        (None, b"") => Line::Empty,
        (None, text) => Line::Invalid(text),
    }
}

/// Decides chunks; shared by the worker threads.
struct Decider<'r, 'a> {
    /// Decides for every agent, in the order given.
    checker: &'r UrlChecker<'a>,
    /// The rules file's name, for messages.
    name: &'r str,
    emit: Emit,
    json: bool,
    explain: bool,
    /// Longer lines are not URLs.
    max_url_len: usize,
}

/// Why a line is not a URL.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum BadKind {
    /// Nothing (or only `\r`).
    Empty,
    /// Not `scheme://...`, a control octet in it, or a trailing space.
    NotUrl,
    /// Longer than `--max-url-len`.
    TooLong,
    /// A bundle cannot tell its host: the authority holds an octet RFC
    /// 3986 forbids there.
    AmbiguousHost,
}

/// A not-a-URL line: its 0-based index in its chunk, and why.
type BadLine = (u64, BadKind);

/// A chunk's output as the writer takes it: octets written for it, and
/// between them runs of its lines passed through as they are in the
/// input (a window of a memory-mapped file), so that these are written
/// from the mapping without a copy in the process.
struct Emitted {
    /// The output, but for `runs`.
    out: Vec<u8>,
    /// `(at, lines)`: the chunk's octets `lines` go after `out[..at]`.
    /// In order, `at` and `lines` both ascending.
    runs: Vec<(usize, Range<usize>)>,
    /// The window the runs are in and the chunk's offset in it.
    input: Option<(Arc<files::Window>, usize)>,
}

/// The parts of a chunk's output (none empty), in order: `out`, with
/// `chunk`'s runs of passed lines inserted (see [`Emitted`]).
fn parts<'o>(
    out: &'o [u8],
    runs: &[(usize, Range<usize>)],
    chunk: &'o [u8],
) -> Vec<IoSlice<'o>> {
    let mut parts = Vec::with_capacity(2 * runs.len() + 1);
    let mut from = 0;
    for (at, lines) in runs {
        parts.push(IoSlice::new(&out[from..*at]));
        parts.push(IoSlice::new(&chunk[lines.clone()]));
        from = *at;
    }
    parts.push(IoSlice::new(&out[from..]));
    parts.retain(|p| !p.is_empty());
    parts
}

impl Emitted {
    /// Output that is all in `out`.
    fn written(out: Vec<u8>) -> Emitted {
        Emitted { out, runs: Vec::new(), input: None }
    }

    /// The output's parts, in order (none empty).
    fn parts(&self) -> Vec<IoSlice<'_>> {
        let chunk = match &self.input {
            Some((window, base)) => &window.data()[*base..],
            None => &[],
        };
        parts(&self.out, &self.runs, chunk)
    }

    /// Passes `chunk[lines]` (whole lines, each with its `\n`) through
    /// after the output so far: the last run grows if they follow it in
    /// the chunk (nothing was output between them, as only a line between
    /// them could be), else they start a run.
    #[inline(always)]
    fn pass(&mut self, chunk: &[u8], lines: Range<usize>) {
        match self.runs.last_mut() {
            Some((_, run)) if run.end == lines.start => run.end = lines.end,
            _ => {
                self.settle(chunk);
                self.runs.push((self.out.len(), lines));
            }
        }
    }

    /// Copies the last run of passed lines into `out` if it is shorter
    /// than [`MIN_PASSED_RUN`]: called before anything else is output
    /// (so that nothing follows a short run yet), and at the chunk's end.
    #[inline(never)]
    fn settle(&mut self, chunk: &[u8]) {
        if let Some((at, run)) = self.runs.last() {
            if run.len() < MIN_PASSED_RUN {
                debug_assert_eq!(*at, self.out.len(), "settled in time");
                self.out.extend_from_slice(&chunk[run.clone()]);
                self.runs.pop();
            }
        }
    }
}

/// What one chunk produced.
struct ChunkOut {
    /// Its output (the window of its runs set by [`decide_block`]).
    emitted: Emitted,
    counts: Counts,
    bad: Vec<BadLine>,
    /// A member of the bundle that could not be loaded: ends the run.
    error: Option<String>,
}

impl<'r, 'a> Decider<'r, 'a> {
    /// Whether selected lines are output as they are (but for a `\r`
    /// before the `\n`, which is dropped, and a missing last `\n`, which
    /// is added): no verdict column, reason or JSON.
    fn verbatim(&self) -> bool {
        self.emit != Emit::All && !self.json && !self.explain
    }

    /// Decides every line of a chunk (the last line may lack its `\n`),
    /// appending the output to `out` (an empty buffer, reused across
    /// batches so that its pages are not faulted in again for every chunk).
    /// With `pass`, selected lines that are output as they are in the
    /// chunk are passed through ([`Emitted::pass`]) instead of copied.
    fn chunk(&self, chunk: &[u8], out: Vec<u8>, pass: bool) -> ChunkOut {
        // An instance each: no test for `pass` per line where it is false.
        match pass {
            true => self.chunk_with::<true>(chunk, out),
            false => self.chunk_with::<false>(chunk, out),
        }
    }

    /// [`Decider::chunk`].
    fn chunk_with<const PASS: bool>(
        &self,
        chunk: &[u8],
        mut out: Vec<u8>,
    ) -> ChunkOut {
        let cap = match self.emit {
            Emit::All => chunk.len() + chunk.len() / 4,
            _ if PASS => 0,
            _ => chunk.len(),
        };
        out.reserve(cap);
        let mut c = ChunkOut {
            emitted: Emitted::written(out),
            counts: Counts::default(),
            bad: Vec::new(),
            error: None,
        };
        c.counts.octets = chunk.len() as u64;
        // Written for every line: buffers on cache lines of their own (a
        // one-octet `Vec` shared one with the other thread's and cost
        // `-j 2` its speed-up).
        let mut cache = HostCache::unshared();
        let mut each = self.checker.unshared_outcomes();
        // One pass per line finds its end and classifies it; the last
        // line may lack its `\n`.
        let lines = robofilter::for_each_url_line(
            chunk,
            #[inline(always)]
            |start, len, url| {
                let line = (chunk, start, len);
                let what = (&mut c, &mut cache, &mut each[..]);
                match self.line::<PASS>(line, url, what) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => ControlFlow::Break(e),
                }
            },
        );
        if let ControlFlow::Break(e) = lines {
            c.error = Some(e);
            return c;
        }
        if PASS {
            c.emitted.settle(chunk);
        }
        c
    }

    /// How many agents each line is decided for.
    fn agent_len(&self) -> usize {
        self.checker.agents().len()
    }

    /// Decides the line `chunk[start..start + len]`, whose URL and path
    /// are `url` ([`robofilter::for_each_url_line`]), for every agent, into
    /// `each`, and outputs it into `c` (passed through with `PASS` where
    /// it is output as it is).
    #[inline(always)]
    fn line<'m, const PASS: bool>(
        &'m self,
        (chunk, start, len): (&[u8], usize, usize),
        url: Option<(&[u8], MatchPath<'_>)>,
        (c, cache, each): (
            &mut ChunkOut,
            &mut HostCache<'m, 'a>,
            &mut [Outcome],
        ),
    ) -> Result<(), String> {
        let buf = &chunk[start..];
        let index = c.counts.lines;
        c.counts.lines += 1;
        // A trailing `\r` is not part of the line's text (nor of its
        // output), so it does not count toward --max-url-len.
        let text_len = match buf[..len].last() {
            Some(b'\r') => len - 1,
            _ => len,
        };
        let text = &buf[..text_len];
        let class = match url {
            _ if text_len > self.max_url_len => Line::Invalid(text),
            Some((url, path)) => Line::Url(url, path),
            None if text_len == 0 => Line::Empty,
            None => Line::Invalid(text),
        };
        let (url, target) = match class {
            Line::Url(url, path) => {
                let target = self
                    .checker
                    .target(url, cache)
                    .map_err(|e| format!("bundle '{}', {e}", self.name))?;
                target.outcomes(url, path, each);
                if matches!(target, Target::Ambiguous)
                    && c.bad.len() < REPORT_LEN
                {
                    c.bad.push((index, BadKind::AmbiguousHost));
                }
                (url, Some(target))
            }
            bad @ (Line::Empty | Line::Invalid(_)) => {
                let kind = match bad {
                    Line::Empty => BadKind::Empty,
                    _ if text_len > self.max_url_len => BadKind::TooLong,
                    _ => BadKind::NotUrl,
                };
                c.counts.empty += u64::from(kind == BadKind::Empty);
                c.counts.too_long += u64::from(kind == BadKind::TooLong);
                if c.bad.len() < REPORT_LEN {
                    c.bad.push((index, kind));
                }
                each.fill(Outcome::Invalid);
                (split_fields(text).0, None)
            }
        };
        let outcome = match &*each {
            [one] => *one,
            each => Outcome::combine(each),
        };
        let selected = match outcome {
            Outcome::Allow => {
                c.counts.allowed += 1;
                self.emit == Emit::Allowed
            }
            Outcome::Disallow => {
                c.counts.disallowed += 1;
                self.emit == Emit::Disallowed
            }
            Outcome::Unknown => {
                c.counts.unknown += 1;
                self.emit == Emit::Unknown
            }
            Outcome::Invalid => {
                c.counts.invalid += 1;
                false
            }
        } || self.emit == Emit::All;
        if !selected {
            return Ok(());
        }
        if PASS {
            // Output as it is, `\n` included (not a last line without
            // one): passed through.
            if text_len == len && start + len < chunk.len() {
                c.emitted.pass(chunk, start..start + len + 1);
                return Ok(());
            }
            c.emitted.settle(chunk);
        }
        let out = &mut c.emitted.out;
        if self.json && text_len > self.max_url_len {
            self.write_too_long_json(out);
        } else if self.json {
            self.write_json(out, text, url, outcome, each, target);
        } else {
            if self.emit == Emit::All {
                for &o in &*each {
                    write_column(out, o);
                }
            }
            if self.explain {
                for agent in 0..each.len() {
                    let from = out.len();
                    write_why(out, url, target, agent);
                    escape_tail(out, from);
                    out.push(b'\t');
                }
            }
            push_text(out, buf, text_len);
            out.push(b'\n');
        }
        Ok(())
    }

    /// What [`Decider::line`] writes before an invalid line's text with
    /// `--emit all`: one `invalid` column per agent, and with `--explain`
    /// one reason column per agent.
    fn invalid_head(&self) -> Vec<u8> {
        let mut head = b"invalid\t".repeat(self.agent_len());
        if self.explain {
            for agent in 0..self.agent_len() {
                write_why(&mut head, b"", None, agent);
                head.push(b'\t');
            }
        }
        head
    }

    /// A line over --max-url-len in JSON: `url` is null, whether the line
    /// was read whole or passed through in pieces (a stream never holds
    /// it whole).
    fn write_too_long_json(&self, out: &mut Vec<u8>) {
        let n = self.agent_len();
        let each = vec![Outcome::Invalid; n];
        let mut line = JsonLine::new(None, Outcome::Invalid);
        line.verdicts(self.checker.agents(), &each);
        if self.explain {
            let whys = vec![Why::new(b"not a URL", None); n];
            line.explain(self.checker.agents(), whys);
        }
        line.write(out);
    }

    /// `{"url":...,"verdict":...,"host":...}` with `"verdicts"` for several
    /// agents, `"fields"` for a line with a TAB, and for `--explain`
    /// `"reason"`, `"line"` and `"pattern"` (null when no rule decided),
    /// or with several agents `"reasons"`.
    fn write_json(
        &self,
        out: &mut Vec<u8>,
        text: &[u8],
        url: &[u8],
        outcome: Outcome,
        each: &[Outcome],
        target: Option<Target<'_, '_>>,
    ) {
        let mut host = Vec::new();
        let has_host =
            target.is_some() && robofilter::url_authority(url, &mut host);
        let mut line = JsonLine::new(Some(url), outcome);
        line.verdicts(self.checker.agents(), each);
        line.host = has_host.then(|| String::from_utf8_lossy(&host));
        // The URL is the line up to its first TAB, if it has one.
        if let Some(fields) = text.get(url.len() + 1..) {
            line.fields(fields);
        }
        // The reasons' text, borrowed by `line` (no allocation without
        // --explain).
        let mut why: Vec<Vec<u8>> = Vec::new();
        if self.explain {
            why.resize(each.len(), Vec::new());
            let mut whys = Vec::with_capacity(each.len());
            for (agent, why) in why.iter_mut().enumerate() {
                let reason = write_why(why, url, target, agent);
                let rule = match reason {
                    Some(Reason::Rule(r) | Reason::IndexHtml(r)) => Some(r),
                    _ => None,
                };
                whys.push((rule.map(|r| (r.line(), r.pattern())), agent));
            }
            let whys = whys
                .into_iter()
                .map(|(rule, agent)| Why::new(&why[agent], rule))
                .collect();
            line.explain(self.checker.agents(), whys);
        }
        line.write(out);
    }
}

/// Writes `o`'s name ([`Outcome::as_str`]) and a TAB, a copy of known
/// length per outcome (so a few stores rather than a call to `memcpy`).
#[inline(always)]
fn write_column(out: &mut Vec<u8>, o: Outcome) {
    match o {
        Outcome::Allow => out.extend_from_slice(b"allow\t"),
        Outcome::Disallow => out.extend_from_slice(b"disallow\t"),
        Outcome::Unknown => out.extend_from_slice(b"unknown\t"),
        Outcome::Invalid => out.extend_from_slice(b"invalid\t"),
    }
}

/// Appends `buf[..len]`, a line's text (`buf` runs on to its chunk's
/// end), to `out`. A line shorter than 128 octets that has 128 octets of
/// the chunk from its start is copied as those 128 octets and cut back: a
/// copy of known length is a few vector moves inline, where `memcpy` of
/// the line's length was a call that branched on the length. 2.4 % less
/// CPU time on one host with `--emit all`, although it executes more
/// instructions (BENCHMARKS.md, "Issue 13: CPU time by part").
#[inline(always)]
fn push_text(out: &mut Vec<u8>, buf: &[u8], len: usize) {
    match buf.first_chunk::<128>() {
        Some(line) if len < 128 => {
            let at = out.len();
            out.extend_from_slice(line);
            out.truncate(at + len);
        }
        _ => out.extend_from_slice(&buf[..len]),
    }
}

/// The URL part of a line (up to its first TAB) and its fields (after
/// that TAB), if it has one.
fn split_fields(text: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(b'\t', text) {
        Some(k) => (&text[..k], Some(&text[k + 1..])),
        None => (text, None),
    }
}

/// Text for JSON: a string if it is UTF-8, else `None` (then base64).
fn utf8_or_base64(bytes: &[u8]) -> (Option<&str>, Option<String>) {
    use base64::Engine as _;
    match std::str::from_utf8(bytes) {
        Ok(s) => (Some(s), None),
        Err(_) => {
            let b64 = base64::engine::general_purpose::STANDARD;
            (None, Some(b64.encode(bytes)))
        }
    }
}

/// Why one agent got its outcome, in JSON: `reason` in words, and the
/// deciding rule's `line` and `pattern` (null when no rule decided).
#[derive(Clone, serde::Serialize)]
struct Why<'t> {
    reason: Cow<'t, str>,
    line: Option<u32>,
    pattern: Option<Cow<'t, str>>,
}

impl<'t> Why<'t> {
    fn new(why: &'t [u8], rule: Option<(u32, &'t [u8])>) -> Why<'t> {
        Why {
            reason: String::from_utf8_lossy(why),
            line: rule.map(|r| r.0),
            pattern: rule.map(|r| String::from_utf8_lossy(r.1)),
        }
    }
}

/// A JSON object with one key per agent, in the order given.
struct PerAgent<'t, T> {
    agents: &'t [String],
    values: Vec<T>,
}

impl<T: serde::Serialize> serde::Serialize for PerAgent<'_, T> {
    fn serialize<S: serde::Serializer>(
        &self,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(self.values.len()))?;
        for (agent, value) in self.agents.iter().zip(&self.values) {
            map.serialize_entry(agent, value)?;
        }
        map.end()
    }
}

/// One line of `--json` output. Fields are written in this order; the
/// `Option<Option<_>>` ones are left out when `None` and `null` when
/// `Some(None)`.
#[derive(serde::Serialize)]
struct JsonLine<'t> {
    /// The URL (the line up to its first TAB), if it is UTF-8 (`null`: a
    /// line not kept whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<Option<&'t str>>,
    /// The URL in base64, if it is not UTF-8 (JSON strings cannot carry
    /// arbitrary octets; the bytes stay exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    url_base64: Option<String>,
    /// The outcome for all agents together.
    verdict: &'static str,
    /// Per agent, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdicts: Option<PerAgent<'t, &'static str>>,
    host: Option<Cow<'t, str>>,
    /// The octets after the line's first TAB, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<&'t str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fields_base64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Cow<'t, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<Option<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<Option<Cow<'t, str>>>,
    /// `--explain` per agent, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasons: Option<PerAgent<'t, Why<'t>>>,
}

impl<'t> JsonLine<'t> {
    /// The URL `url` (`None`: not kept) with its outcome.
    fn new(url: Option<&'t [u8]>, outcome: Outcome) -> JsonLine<'t> {
        let (url, url_base64) = match url.map(utf8_or_base64) {
            None => (Some(None), None),
            Some((Some(url), _)) => (Some(Some(url)), None),
            Some((None, b64)) => (None, b64),
        };
        JsonLine {
            url,
            url_base64,
            verdict: outcome.as_str(),
            verdicts: None,
            host: None,
            fields: None,
            fields_base64: None,
            reason: None,
            line: None,
            pattern: None,
            reasons: None,
        }
    }

    /// Adds `verdicts` when there are several agents.
    fn verdicts(&mut self, agents: &'t [String], each: &[Outcome]) {
        if agents.len() > 1 {
            let values = each.iter().map(|o| o.as_str()).collect();
            self.verdicts = Some(PerAgent { agents, values });
        }
    }

    /// Adds the line's fields.
    fn fields(&mut self, fields: &'t [u8]) {
        (self.fields, self.fields_base64) = utf8_or_base64(fields);
    }

    /// Adds the `--explain` fields: for one agent, the reason in words and
    /// the deciding rule's line and pattern, if a rule decided; for
    /// several, `reasons`.
    fn explain(&mut self, agents: &'t [String], mut whys: Vec<Why<'t>>) {
        if whys.len() == 1 {
            let why = whys.pop().expect("one");
            self.reason = Some(why.reason);
            self.line = Some(why.line);
            self.pattern = Some(why.pattern);
        } else {
            self.reasons = Some(PerAgent { agents, values: whys });
        }
    }

    /// Appends the object and a newline to `out`.
    fn write(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(&mut *out, self).expect("a Vec takes any JSON");
        out.push(b'\n');
    }
}

/// The input being read: its name and the lines already read.
struct FileState<'n> {
    name: &'n str,
    line_base: u64,
}

/// Where [`Sink`] puts its outputs, in order.
trait Put: Send {
    /// Takes `out` to be written after every output put before it; gives
    /// back an emptied buffer to reuse (one without capacity if none is
    /// free yet).
    fn put(&mut self, out: Emitted) -> Result<Vec<u8>>;
}

/// [`Sink`]'s end of the writer thread ([`write_queue`]): a bounded queue
/// to it, and the buffers it has emptied.
struct ToWriter {
    queue: mpsc::SyncSender<Emitted>,
    emptied: mpsc::Receiver<Vec<u8>>,
}

impl Put for ToWriter {
    fn put(&mut self, out: Emitted) -> Result<Vec<u8>> {
        if out.out.is_empty() && out.runs.is_empty() {
            return Ok(out.out);
        }
        // Closed: the writer stopped at an error, which the run reports.
        self.queue
            .send(out)
            .map_err(|_| anyhow!("the output could not be written"))?;
        Ok(self.emptied.try_recv().unwrap_or_default())
    }
}

/// The writer thread: writes the outputs of `queue` to `out` (named
/// `name`) in order, giving each buffer back emptied (and dropping its
/// hold on the input window); `out` once the queue is closed, or the
/// first write error.
fn write_queue(
    mut out: Output,
    name: &str,
    queue: mpsc::Receiver<Emitted>,
    give_back: mpsc::Sender<Vec<u8>>,
) -> Result<Output> {
    for emitted in queue {
        out.write_parts(&mut emitted.parts())
            .with_context(|| format!("cannot write output to {name}"))?;
        let mut buf = emitted.out;
        buf.clear();
        // The sink may be gone already: the buffer is then dropped.
        let _ = give_back.send(buf);
    }
    Ok(out)
}

/// Decides blocks of input and puts the outputs in order; collects counts.
struct Sink<P> {
    out: P,
    /// The size of the blocks read from a stream.
    block_len: usize,
    counts: Counts,
    /// The first [`REPORT_LEN`] not-a-URL lines: input, 1-based line,
    /// empty.
    bad: Vec<(String, u64, BadKind)>,
    /// Emptied output buffers, for reuse.
    spare: Vec<Vec<u8>>,
    progress: Option<ProgressBar>,
    /// The threads that decide blocks. With one, a URL list's window is
    /// read in when mapped and unmapped after it is decided: the same CPU
    /// time as the alternatives, and one window's pages at a time. With
    /// more, reading a whole window in (or unmapping it) on the thread
    /// that maps would keep them all waiting: instead each faults in its
    /// own chunks' pages, side by side, and the last window is unmapped
    /// on another thread while the next is decided (BENCHMARKS.md, "Issue
    /// 13: one agent's verdict in registers, and the verdict column").
    workers: usize,
}

impl<P: Put> Sink<P> {
    /// Puts one block's outputs in order and adds up their counts.
    fn write(
        &mut self,
        outs: Vec<ChunkOut>,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        for c in outs {
            if let Some(e) = c.error {
                return Err(anyhow!(e));
            }
            let emptied = self.out.put(c.emitted)?;
            if emptied.capacity() > 0 {
                self.spare.push(emptied);
            }
            for (index, kind) in c.bad {
                if self.bad.len() < REPORT_LEN {
                    let line = file.line_base + index + 1;
                    self.bad.push((file.name.to_string(), line, kind));
                }
            }
            file.line_base += c.counts.lines;
            if let Some(p) = &self.progress {
                p.inc(c.counts.octets);
            }
            self.counts += c.counts;
        }
        Ok(())
    }

    /// Reads `r` in blocks cut at newlines and decides them, reading the
    /// next block while the threads decide the current one (so that
    /// `-j 2` does not wait for the reads).
    fn stream(
        &mut self,
        decider: &Decider<'_, '_>,
        mut r: impl Read + Send,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let mut want = self.block_len;
        let mut buf: Vec<u8> = Vec::with_capacity(want);
        let mut next: Vec<u8> = Vec::with_capacity(want);
        let name = file.name;
        let read_error = || format!("cannot read URL list '{name}'");
        read_up_to(&mut r, &mut buf, want).with_context(read_error)?;
        loop {
            if buf.len() < want {
                // End of input: the rest, with a last line lacking `\n`.
                let outs = decide_block(decider, &buf, None, &mut self.spare);
                return self.write(outs, file);
            }
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => {
                    // The partial last line starts the next block.
                    next.clear();
                    next.extend_from_slice(&buf[i + 1..]);
                    // The outputs go to the writer as soon as they are
                    // decided, even if the next block is slow to come.
                    let (written, read) = rayon::join(
                        || {
                            let data = &buf[..=i];
                            let spare = &mut self.spare;
                            let outs =
                                decide_block(decider, data, None, spare);
                            self.write(outs, file)
                        },
                        || read_up_to(&mut r, &mut next, want),
                    );
                    written?;
                    read.with_context(read_error)?;
                    std::mem::swap(&mut buf, &mut next);
                }
                // A line longer than --max-url-len: it is invalid whatever
                // follows, so pass it through without holding it whole.
                // (More than one octet over: the last may be a `\r`.)
                None if buf.len().saturating_sub(1) > decider.max_url_len => {
                    self.pass_long_line(decider, &mut r, &mut buf, file)?;
                    want = self.block_len;
                    read_up_to(&mut r, &mut buf, want)
                        .with_context(read_error)?;
                }
                // One line longer than the block: read more of it.
                None => {
                    want *= 2;
                    read_up_to(&mut r, &mut buf, want)
                        .with_context(read_error)?;
                }
            }
        }
    }

    /// Decides the plain regular `file` (named `file.name`), `len` octets
    /// long when its turn came, through memory-mapped windows of
    /// [`WINDOW_BLOCKS`] blocks: no copy into the process, and only a
    /// window's pages mapped at a time. A file the file system cannot map
    /// is read instead, from the window it could not map. Blocks are cut
    /// at newlines as [`Sink::stream`] cuts them. A file that shrinks
    /// underneath the run stops it with an error (between windows; within
    /// one, SIGBUS does, see [`files::map_window`]).
    fn mapped(
        &mut self,
        decider: &Decider<'_, '_>,
        input: &File,
        len: u64,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        if self.workers == 1 {
            return self.windows(decider, input, len, file, drop);
        }
        // Several workers: each window is unmapped on a thread of its own
        // while the next is decided; unmapping a window's pages takes
        // milliseconds in which no line would be decided.
        std::thread::scope(|unmapper| {
            self.windows(decider, input, len, file, |window| {
                // The writer may hold it still, and unmaps it then.
                unmapper.spawn(move || drop(window));
            })
        })
    }

    /// [`Sink::mapped`], handing each window to `unmap` when its lines
    /// are decided.
    fn windows(
        &mut self,
        decider: &Decider<'_, '_>,
        mut input: &File,
        len: u64,
        file: &mut FileState<'_>,
        mut unmap: impl FnMut(Arc<files::Window>),
    ) -> Result<()> {
        // A line that does not end within a window is over-long, as
        // `stream` would find it.
        let window = (WINDOW_BLOCKS * self.block_len)
            .max(decider.max_url_len.saturating_add(2));
        let name = file.name;
        let read_error = || format!("cannot read URL list '{name}'");
        let mut offset = 0;
        while offset < len {
            let map = files::map_window(
                input,
                offset,
                window,
                len,
                self.workers == 1,
                file.name,
            )?;
            let Some(map) = map else {
                // The file system cannot map it: read the rest, from a
                // line's start, as far as it goes (such a file's size may
                // not be its length: sysfs says 4096).
                input
                    .seek(io::SeekFrom::Start(offset))
                    .with_context(read_error)?;
                return self.stream(decider, io::BufReader::new(input), file);
            };
            let last = map.end() == len;
            let map = Arc::new(map);
            let done = self.mapped_window(decider, &map, last, file)?;
            unmap(map);
            offset += done as u64;
            if done == 0 && !last {
                // No newline in a whole window: pass the line through
                // as `stream` does, reading it.
                input
                    .seek(io::SeekFrom::Start(offset))
                    .with_context(read_error)?;
                let mut rest = Vec::new();
                self.pass_long_line(decider, &mut input, &mut rest, file)?;
                let end = input.stream_position().with_context(read_error)?;
                offset = end - rest.len() as u64;
            }
        }
        Ok(())
    }

    /// Decides the complete lines of `window` (and its last line even
    /// without its `\n` if `last`) in blocks; returns how many octets
    /// were decided.
    fn mapped_window(
        &mut self,
        decider: &Decider<'_, '_>,
        window: &Arc<files::Window>,
        last: bool,
        file: &mut FileState<'_>,
    ) -> Result<usize> {
        let data = window.data();
        let mut done = 0;
        while done < data.len() {
            let rest = &data[done..];
            let block = &rest[..rest.len().min(self.block_len)];
            let end = if last && block.len() == rest.len() {
                rest.len()
            } else if let Some(i) = memchr::memrchr(b'\n', block) {
                i + 1
            } else if let Some(i) = memchr::memchr(b'\n', rest) {
                // A line longer than a block, held in the window.
                i + 1
            } else if last {
                rest.len()
            } else {
                // A partial line: the next window starts with it.
                break;
            };
            let block = &rest[..end];
            let shared = Some((window, done));
            let outs = decide_block(decider, block, shared, &mut self.spare);
            self.write(outs, file)?;
            done += end;
        }
        Ok(done)
    }

    /// Accounts for the over-long line that starts `buf` (which holds no
    /// `\n`), reading and writing it in blocks; leaves in `buf` what
    /// follows its `\n`.
    fn pass_long_line(
        &mut self,
        decider: &Decider<'_, '_>,
        r: &mut impl Read,
        buf: &mut Vec<u8>,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let all = decider.emit == Emit::All;
        let write = |sink: &mut Self, bytes: &[u8]| -> Result<()> {
            sink.out.put(Emitted::written(bytes.to_vec())).map(drop)
        };
        // The line's end as [`Decider::line`] writes it for a line held
        // whole.
        let end = b"\n";
        if all && decider.json {
            let mut json = Vec::new();
            decider.write_too_long_json(&mut json);
            write(self, &json)?;
        } else if all {
            write(self, &decider.invalid_head())?;
        }
        // The line's octets, its `\r` and `\n` included.
        let mut octets = 0;
        loop {
            if let Some(i) = memchr::memchr(b'\n', buf) {
                if all && !decider.json {
                    let text = &buf[..i];
                    let text = text.strip_suffix(b"\r").unwrap_or(text);
                    write(self, text)?;
                    write(self, end)?;
                }
                octets += i + 1;
                buf.drain(..=i);
                break;
            }
            // A `\r` that ends the block may end the line: held back.
            let piece = buf.strip_suffix(b"\r").unwrap_or(buf);
            let carry = piece.len() < buf.len();
            if all && !decider.json {
                write(self, piece)?;
            }
            octets += piece.len();
            buf.clear();
            if carry {
                buf.push(b'\r');
            }
            let n = r
                .by_ref()
                .take(self.block_len as u64)
                .read_to_end(buf)
                .with_context(|| {
                    format!("cannot read URL list '{}'", file.name)
                })?;
            if n == 0 {
                if all && !decider.json {
                    write(self, end)?;
                }
                // A `\r` held back ends the last line: dropped, as from
                // a line held whole.
                octets += buf.len();
                buf.clear();
                break;
            }
        }
        if let Some(p) = &self.progress {
            p.inc(octets as u64);
        }
        let c = &mut self.counts;
        c.octets += octets as u64;
        c.lines += 1;
        c.invalid += 1;
        c.too_long += 1;
        if self.bad.len() < REPORT_LEN {
            let line = file.line_base + 1;
            self.bad.push((file.name.to_string(), line, BadKind::TooLong));
        }
        file.line_base += 1;
        Ok(())
    }
}

/// Decides all lines of `data` (newline-separated; the last line may lack
/// its `\n`) in chunks on the worker threads, into output buffers from
/// `spare`: the chunks' outputs, in order. When `data` is
/// `window.data()[at..]` (`shared` is `(window, at)`), selected lines
/// output as they are may be passed through from the window.
fn decide_block(
    decider: &Decider<'_, '_>,
    data: &[u8],
    shared: Option<(&Arc<files::Window>, usize)>,
    spare: &mut Vec<Vec<u8>>,
) -> Vec<ChunkOut> {
    let chunks = split(data);
    let bufs: Vec<Vec<u8>> =
        chunks.iter().map(|_| spare.pop().unwrap_or_default()).collect();
    let pass = shared.is_some() && decider.verbatim();
    let decide = |(c, buf): (&&[u8], _)| decider.chunk(c, buf, pass);
    let mut outs: Vec<ChunkOut> =
        chunks.par_iter().zip(bufs).map(decide).collect();
    if let Some((window, mut at)) = shared {
        for (out, chunk) in outs.iter_mut().zip(&chunks) {
            if !out.emitted.runs.is_empty() {
                out.emitted.input = Some((Arc::clone(window), at));
            }
            at += chunk.len();
        }
    }
    outs
}

/// Reads from `r` into `buf` until it holds `want` octets or the input
/// ends.
fn read_up_to(
    r: &mut impl Read,
    buf: &mut Vec<u8>,
    want: usize,
) -> io::Result<()> {
    let missing = want.saturating_sub(buf.len()) as u64;
    r.by_ref().take(missing).read_to_end(buf)?;
    Ok(())
}

/// Cuts `data` into chunks of about [`CHUNK_LEN`] octets, each ending just
/// after a `\n` (except possibly the last).
fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::with_capacity(data.len() / CHUNK_LEN + 1);
    let mut rest = data;
    while !rest.is_empty() {
        let end = if rest.len() <= CHUNK_LEN {
            rest.len()
        } else {
            memchr::memchr(b'\n', &rest[CHUNK_LEN..])
                .map_or(rest.len(), |i| CHUNK_LEN + i + 1)
        };
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// Prints the not-a-URL warning (if any) and the summary on stderr.
fn report(
    c: &Counts,
    bad: &[(String, u64, BadKind)],
    max_url_len: usize,
    start: Instant,
) {
    debug_assert_eq!(
        c.lines,
        c.allowed + c.disallowed + c.unknown + c.invalid
    );
    debug_assert!(c.empty <= c.invalid);
    if c.invalid > 0 {
        let mut at: Vec<String> = bad
            .iter()
            .map(|(name, line, kind)| {
                let note = match kind {
                    BadKind::Empty => " (empty)",
                    BadKind::TooLong => " (too long)",
                    BadKind::NotUrl => "",
                    BadKind::AmbiguousHost => " (ambiguous host)",
                };
                format!("{name}:{line}{note}")
            })
            .collect();
        if c.invalid > bad.len() as u64 {
            at.push("...".to_string());
        }
        let long = match c.too_long {
            0 => String::new(),
            n => format!(", {n} longer than {max_url_len} octets"),
        };
        let are = if c.invalid == 1 {
            "1 line is not a URL".to_string()
        } else {
            format!("{} lines are not URLs", c.invalid)
        };
        diag!(
            "robofilter: warning: {are} ({} empty{long}): {}",
            c.empty,
            at.join(", ")
        );
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = c.lines as f64 / secs.max(1e-9) / 1e6;
    let mut line = String::new();
    write!(
        line,
        "robofilter: {} {}: {} allowed, {} disallowed, {} unknown, {} \
         invalid ({} empty) in {secs:.3} s ({rate:.1} M lines/s)",
        c.lines,
        if c.lines == 1 { "line" } else { "lines" },
        c.allowed,
        c.disallowed,
        c.unknown,
        c.invalid,
        c.empty
    )
    .expect("string");
    diag!("{line}");
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn classify_lines() {
        let url = |s: &'static [u8]| Line::Url(s, MatchPath::from_url(s));
        let bad = |s: &'static [u8]| Line::Invalid(s);
        let cases: &[(&[u8], Line<'_>)] = &[
            (b"http://x/a", url(b"http://x/a")),
            (b"http://x/a\r", url(b"http://x/a")),
            (b"s3+a.b-c://k", url(b"s3+a.b-c://k")),
            (b"http://x/\xe3\x83\x84", url(b"http://x/\xe3\x83\x84")),
            (b"", Line::Empty),
            (b"\r", Line::Empty),
            (b"\r\r", bad(b"\r")),
            (b"x.example/a", bad(b"x.example/a")),
            (b"1http://x/", bad(b"1http://x/")),
            (b"://x/", bad(b"://x/")),
            (b"http:/x", bad(b"http:/x")),
            (b"http://x/a b", url(b"http://x/a b")),
            (b"http://x/a\tb", url(b"http://x/a")),
            (b"http://x/a\t\x00\r", url(b"http://x/a")),
            (b"http://x/a \tb", bad(b"http://x/a \tb")),
            (b"http://x/a ", bad(b"http://x/a ")),
            (b"http://x/\x7f", bad(b"http://x/\x7f")),
            (b" http://x/", bad(b" http://x/")),
            (b"\thttp://x/", bad(b"\thttp://x/")),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line), *want, "{:?}", line.escape_ascii());
        }
    }

    /// Output gathered in memory, in order.
    impl Put for Vec<u8> {
        fn put(&mut self, out: Emitted) -> Result<Vec<u8>> {
            for part in out.parts() {
                self.extend_from_slice(&part);
            }
            let mut buf = out.out;
            buf.clear();
            Ok(buf)
        }
    }

    /// Streams `input` in blocks of `block_len` octets; returns the
    /// `--emit all` output, the counts and the reported lines.
    fn stream(
        input: &[u8],
        block_len: usize,
    ) -> (String, Counts, Vec<(String, u64, BadKind)>) {
        stream_for(&["bot"], input, block_len)
    }

    /// [`stream_for`] with `--emit all`.
    fn stream_for(
        agents: &[&str],
        input: &[u8],
        block_len: usize,
    ) -> (String, Counts, Vec<(String, u64, BadKind)>) {
        stream_emit(agents, input, block_len, Emit::All)
    }

    /// [`stream`] for `agents` and `emit`; checks that a memory-mapped
    /// file of the same octets gives the same, for one worker and for two
    /// (windows read in when mapped, or faulted in and unmapped on another
    /// thread; lines output as they are passed through from the window).
    fn stream_emit(
        agents: &[&str],
        input: &[u8],
        block_len: usize,
        emit: Emit,
    ) -> (String, Counts, Vec<(String, u64, BadKind)>) {
        let decide =
            |mapped| decide_for(agents, input, block_len, emit, mapped);
        let streamed = decide(None);
        for workers in [1, 2] {
            let mapped = decide(Some(workers));
            let what = format!("mapped, {workers} workers, block {block_len}");
            assert_eq!(mapped.0, streamed.0, "{what}");
            assert_eq!(
                format!("{:?}", (mapped.1, &mapped.2)),
                format!("{:?}", (streamed.1, &streamed.2)),
                "{what}"
            );
        }
        streamed
    }

    /// A rules file whose one group disallows `/d` for every agent.
    fn slash_d_rules() -> robofilter::AlignedBytes {
        let robots = b"User-agent: *\nDisallow: /d\n";
        let bytes = robofilter::Compiler::new().compile(robots).unwrap();
        robofilter::AlignedBytes::from(&bytes[..])
    }

    /// A decider printing `emit` lines (no JSON, no reasons) with
    /// `checker`, lines longer than `max_url_len` being invalid.
    fn decider<'r, 'a>(
        checker: &'r UrlChecker<'a>,
        emit: Emit,
        max_url_len: usize,
    ) -> Decider<'r, 'a> {
        Decider {
            checker,
            name: "rules",
            emit,
            json: false,
            explain: false,
            max_url_len,
        }
    }

    /// Decides `input` for `agents` with blocks of `block_len` octets,
    /// streamed, or from a file (memory-mapped in windows of at least 22
    /// octets, most of them not starting on a page) for `mapped` workers.
    fn decide_for(
        agents: &[&str],
        input: &[u8],
        block_len: usize,
        emit: Emit,
        mapped: Option<usize>,
    ) -> (String, Counts, Vec<(String, u64, BadKind)>) {
        let bytes = slash_d_rules();
        let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
        let checker = UrlChecker::rules(&rules, agents).unwrap();
        let decider = decider(&checker, emit, 20);
        let mut sink = Sink {
            out: Vec::new(),
            block_len,
            counts: Counts::default(),
            bad: Vec::new(),
            spare: Vec::new(),
            progress: None,
            workers: mapped.unwrap_or(1),
        };
        let mut file = FileState { name: "in", line_base: 0 };
        if mapped.is_some() {
            let mut tmp = tempfile::NamedTempFile::new().unwrap();
            tmp.write_all(input).unwrap();
            let len = input.len() as u64;
            sink.mapped(&decider, tmp.as_file(), len, &mut file).unwrap();
        } else {
            sink.stream(&decider, input, &mut file).unwrap();
        }
        (String::from_utf8(sink.out).unwrap(), sink.counts, sink.bad)
    }

    #[test]
    fn columns_are_the_outcomes_names() {
        use Outcome::*;
        for o in [Allow, Disallow, Unknown, Invalid] {
            let mut out = Vec::new();
            write_column(&mut out, o);
            assert_eq!(out, format!("{}\t", o.as_str()).as_bytes());
        }
    }

    #[test]
    fn stream_carries_lines_across_blocks() {
        let input =
            b"http://x/a\nhttp://x/d/l\n\nbad\nhttp://x/d/long/long/long\n\
                      http://x/d";
        let want = "allow\thttp://x/a\n\
                    disallow\thttp://x/d/l\n\
                    invalid\t\n\
                    invalid\tbad\n\
                    invalid\thttp://x/d/long/long/long\n\
                    disallow\thttp://x/d\n";
        for block_len in [1, 2, 3, 7, 11, 16, 100] {
            let (out, counts, bad) = stream(input, block_len);
            assert_eq!(out, want, "block {block_len}");
            assert_eq!(counts.lines, 6);
            assert_eq!(
                (counts.invalid, counts.empty, counts.too_long),
                (3, 1, 1)
            );
            let bad: Vec<_> = bad.iter().map(|b| (b.1, b.2)).collect();
            assert_eq!(
                bad,
                [
                    (3, BadKind::Empty),
                    (4, BadKind::NotUrl),
                    (5, BadKind::TooLong)
                ],
                "block {block_len}"
            );
        }
        assert_eq!(stream(b"", 4).1.lines, 0);
        assert_eq!(stream(b"\n", 4).1.empty, 1);
    }

    /// A line longer than both the block and --max-url-len passes through
    /// in pieces, accounted for as one invalid line.
    #[test]
    fn stream_passes_over_long_lines_through() {
        let long = format!("http://x/{}", "y".repeat(100));
        // The long line's end, and whether a line follows it.
        let ends = [("\n", true), ("\r\n", true), ("", false), ("\r", false)];
        for (last, more) in ends {
            let mut input = format!("http://x/a\n{long}{last}");
            if more {
                input.push_str("http://x/d\n");
            }
            for block_len in [4, 7, 16, 33] {
                let (out, counts, bad) = stream(input.as_bytes(), block_len);
                let mut want = format!("allow\thttp://x/a\ninvalid\t{long}\n");
                if more {
                    want.push_str("disallow\thttp://x/d\n");
                }
                assert_eq!(out, want, "block {block_len} {last:?}");
                assert_eq!(counts.lines, 2 + u64::from(more));
                assert_eq!(counts.octets, input.len() as u64);
                assert_eq!(counts.too_long, 1);
                assert_eq!(
                    counts.lines,
                    counts.allowed + counts.disallowed + counts.invalid
                );
                assert_eq!(bad[0].1, 2);
            }
        }
    }

    /// With several agents, a long line passed through in pieces gets one
    /// `invalid` column per agent, like a line held whole.
    #[test]
    fn stream_passes_over_long_lines_through_for_several_agents() {
        let long = format!("http://x/{}\tf", "y".repeat(100));
        let input = format!("http://x/d\t1\n{long}\r\nhttp://x/a\n");
        for block_len in [4, 7, 33, 1000] {
            let (out, counts, _) =
                stream_for(&["bot", "other"], input.as_bytes(), block_len);
            assert_eq!(
                out,
                format!(
                    "disallow\tdisallow\thttp://x/d\t1\n\
                     invalid\tinvalid\t{long}\n\
                     allow\tallow\thttp://x/a\n"
                ),
                "block {block_len}"
            );
            assert_eq!((counts.lines, counts.too_long), (3, 1));
        }
    }

    /// The lengths of the runs of [`runs_frontier`].
    fn run_lens() -> impl Iterator<Item = usize> {
        (1..500).step_by(3).chain((1..500).step_by(5).rev())
    }

    /// A frontier of allowed (`/a`) and disallowed (`/d`) lines in runs
    /// of 1 to 500 lines, the sixth line of every seventh run ending in
    /// `\r\n`, and a last line without `\n`.
    fn runs_frontier() -> Vec<u8> {
        let mut input = Vec::new();
        for (k, run) in run_lens().enumerate() {
            let path = if k % 2 == 0 { "a" } else { "d" };
            for i in 0..run {
                let cr = k % 7 == 3 && i == 5;
                let end = if cr { "\r\n" } else { "\n" };
                write!(input, "http://x/{path}{i}{end}").unwrap();
            }
        }
        input.extend_from_slice(b"http://x/last");
        input
    }

    /// The lines of `input` whose path starts with `/a` (`allowed`) or
    /// `/d`, without their `\r`, each ending in `\n`.
    fn selected(input: &[u8], allowed: bool) -> String {
        let want = if allowed { "http://x/a" } else { "http://x/d" };
        let mut out = String::new();
        for line in std::str::from_utf8(input).unwrap().split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.starts_with(want) || allowed && line == "http://x/last" {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn lines_passed_through_are_the_lines_copied() {
        let input = runs_frontier();
        assert!(input.len() > 16 * MIN_PASSED_RUN);
        for (emit, allowed) in
            [(Emit::Allowed, true), (Emit::Disallowed, false)]
        {
            let want = selected(&input, allowed);
            // Blocks of several chunks and of many; the mapped runs are
            // checked against the streamed ones.
            for block_len in [CHUNK_LEN, 3 * CHUNK_LEN + 17, 1 << 12] {
                let (out, counts, _) =
                    stream_emit(&["bot"], &input, block_len, emit);
                assert_eq!(out, want, "{emit:?}, block {block_len}");
                let lines = run_lens().sum::<usize>() as u64 + 1;
                assert_eq!(counts.lines, lines);
            }
        }
    }

    /// A chunk decided with `pass` holds runs of at least
    /// [`MIN_PASSED_RUN`] octets that rebuild what it outputs without.
    #[test]
    fn passed_runs_rebuild_the_output() {
        let input = runs_frontier();
        let bytes = slash_d_rules();
        let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
        let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
        for emit in [Emit::Allowed, Emit::Disallowed] {
            let decider = decider(&checker, emit, 100);
            let copied = decider.chunk(&input, Vec::new(), false).emitted;
            assert!(copied.runs.is_empty());
            let passed = decider.chunk(&input, Vec::new(), true).emitted;
            assert!(passed.runs.len() > 10, "{emit:?}");
            assert!(
                !passed.out.is_empty() && passed.out.len() < input.len() / 4
            );
            for (_, run) in &passed.runs {
                assert!(run.len() >= MIN_PASSED_RUN);
                assert_eq!(input[run.end - 1], b'\n');
            }
            let parts = parts(&passed.out, &passed.runs, &input);
            let rebuilt: Vec<u8> =
                parts.iter().flat_map(|p| p.iter().copied()).collect();
            assert_eq!(rebuilt, copied.out, "{emit:?}");
        }
    }

    /// `push_text` appends exactly the line, by either copy: lengths about
    /// the 128-octet cut, with the chunk ending at, before and after the
    /// 128 octets, onto output that already holds octets.
    #[test]
    fn push_text_appends_exactly_the_line() {
        let chunk: Vec<u8> = (0..400u32).map(|i| (i % 251) as u8).collect();
        for start in [0, 1, 100, 271, 272, 273, 399] {
            for chunk_end in [start + 127, start + 128, start + 129, 400] {
                let buf = &chunk[start..chunk_end.min(400)];
                for len in (0..=buf.len()).filter(|l| l % 7 == 0 || *l > 120) {
                    let mut out = b"before".to_vec();
                    push_text(&mut out, buf, len);
                    assert_eq!(out[..6], *b"before");
                    assert_eq!(out[6..], buf[..len], "{start} {len}");
                }
            }
        }
    }

    #[test]
    fn split_is_newline_aligned_and_complete() {
        let mut data = Vec::new();
        for i in 0..200_000 {
            data.extend_from_slice(format!("http://x/{i}\n").as_bytes());
        }
        data.extend_from_slice(b"http://x/last");
        let chunks = split(&data);
        assert!(chunks.len() > 1);
        assert_eq!(chunks.concat(), data);
        for c in &chunks[..chunks.len() - 1] {
            assert!(c.ends_with(b"\n"));
        }
        assert!(split(b"").is_empty());
    }

    #[test]
    fn json_strings_are_escaped_and_bytes_kept() {
        let json = |line: JsonLine<'_>| {
            let mut out = Vec::new();
            line.write(&mut out);
            String::from_utf8(out).unwrap()
        };
        let text = b"a\"b\\c\td\x7f\xe3\x83\x84";
        assert_eq!(
            json(JsonLine::new(Some(text), Outcome::Invalid)),
            "{\"url\":\"a\\\"b\\\\c\\td\x7f\u{30c4}\",\"verdict\":\"invalid\",\
             \"host\":null}\n"
        );
        let mut line = JsonLine::new(Some(b"http://x/\xff"), Outcome::Allow);
        line.host = Some(Cow::Borrowed("x"));
        let agents = ["bot".to_string()];
        let why = Why::new(b"line 2: Allow: /", Some((2, b"/")));
        line.explain(&agents, vec![why]);
        assert_eq!(
            json(line),
            "{\"url_base64\":\"aHR0cDovL3gv/w==\",\"verdict\":\"allow\",\
             \"host\":\"x\",\"reason\":\"line 2: Allow: /\",\"line\":2,\
             \"pattern\":\"/\"}\n"
        );
        let mut line = JsonLine::new(None, Outcome::Invalid);
        line.explain(&agents, vec![Why::new(b"not a URL", None)]);
        assert_eq!(
            json(line),
            "{\"url\":null,\"verdict\":\"invalid\",\"host\":null,\
             \"reason\":\"not a URL\",\"line\":null,\"pattern\":null}\n"
        );
    }
}
