//! robofilter's frontier filter: crawl-frontier lines in (a URL, optionally
//! a TAB and fields), each decided for one or more agents by a
//! [`UrlChecker`], selected lines (or every line after its verdict columns)
//! out, in input order. The CLI's `robofilter filter` is [`filter`] with
//! its arguments as [`Options`]; the printers (TSV columns, `--explain`
//! reasons, `--json` objects, and [`escape`]) are public, as grep-printer's
//! are, so that every front end prints a verdict the same way.
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
//! (at least 4 KiB each; shorter ones are copied),
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

mod cdxj;
mod counts;
mod decide;
mod escape;
mod gzip;
mod print;
mod sink;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::Result;
use indicatif::ProgressBar;
use robofilter::{UrlChecker, UsageKey};
use robofilter_io::{self as files, Feed, Input, Output};

pub use crate::counts::{BadKind, BadLine, Counts, refused};
pub use crate::decide::usage_error;
pub use crate::escape::{escape, escape_tail};
pub use crate::print::{Usage, json_line, write_column, write_usage_columns};

use crate::decide::Decider;
use crate::sink::{FileState, Sink, ToWriter, write_queue};

/// The target chunk length; a chunk extends to the end of its last line.
/// Small enough that the threads finish a block nearly together (a thread
/// idles for at most about one chunk at each block's end).
pub(crate) const CHUNK_LEN: usize = 1 << 18;

/// Chunks per thread in one block: the threads then read 4 MiB per thread
/// at a time.
pub(crate) const CHUNKS_PER_THREAD: usize = 16;

/// Blocks per memory-mapped window of a plain file: each window is
/// mapped, read in and unmapped once, so its mapping costs are paid per
/// 16 blocks (64 MiB at `-j 1`), and only its pages count in the run's
/// RSS.
pub(crate) const WINDOW_BLOCKS: usize = 16;

/// Selected lines passed through as they are in a memory-mapped input
/// are written from the mapping, not copied into an output buffer, when
/// at least this many octets of them follow one another: shorter runs
/// are copied, so that a chunk of 256 KiB has at most 64 runs, and its
/// output fits one `writev`.
pub(crate) const MIN_PASSED_RUN: usize = 4 << 10;

/// How many line numbers of empty or invalid lines are reported.
pub(crate) const REPORT_LEN: usize = 5;

/// `-j` above this many threads per core is capped: the work is CPU-bound,
/// and each thread holds a few chunk buffers.
pub const MAX_THREADS_PER_CORE: usize = 4;

/// Which lines `filter` prints.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum Emit {
    /// The lines allowed for every agent.
    #[default]
    Allowed,
    /// The lines disallowed for at least one agent.
    Disallowed,
    /// The lines whose host has no entry in the bundle.
    Unknown,
    /// Every input line after its verdict columns (one per agent, or
    /// `invalid`).
    All,
}

/// Where an input line's URL is.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum Format {
    /// The line up to its first TAB (the rest are fields, kept).
    #[default]
    Lines,
    /// A CDXJ line, `SURT TIMESTAMP {json}` as Common Crawl's URL index
    /// writes it: the JSON object's `url` string. A line whose JSON does
    /// not parse, or has no `url` string, is invalid.
    Cdxj,
}

/// How lines are decided and printed.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which lines are printed.
    pub emit: Emit,
    /// One JSON object per line.
    pub json: bool,
    /// The deciding rule of each agent, as a column or JSON fields.
    pub explain: bool,
    /// Longer lines (URL and fields) are invalid.
    pub max_url_len: usize,
    /// Worker threads (rayon's global pool decides; this sizes the blocks).
    pub threads: usize,
    /// Where a line's URL is.
    pub format: Format,
    /// The usage keys (AIPREF Content-Usage) whose preferences are printed
    /// for each agent: a column per agent and key after the verdict
    /// columns, or `usage` in JSON.
    pub usage: Vec<UsageKey>,
    /// With [`Emit::Allowed`]: allowed lines whose preference for one of
    /// these keys is `n` (for any agent) are dropped too.
    pub respect: Vec<UsageKey>,
}

/// What a run read: its counts, and the first not-a-URL lines (file,
/// line number, why).
pub struct Report {
    /// Every line, by outcome.
    pub counts: Counts,
    /// With several agents, per agent in their order: its lines allowed,
    /// disallowed, unknown and invalid (empty with one agent).
    pub per_agent: Vec<[u64; 4]>,
    /// With one rules file for every URL: a few distinct host keys seen.
    /// More than one means the file decided hosts it does not speak for.
    pub hosts: Vec<Vec<u8>>,
    /// The first not-a-URL lines (a few of them, with their files).
    pub bad: Vec<BadLine>,
}

/// Opens every input in `paths` (`-`: stdin) before any output, so that a
/// bad path fails before anything is written.
pub fn open_inputs(paths: &[PathBuf]) -> Result<Vec<Input>> {
    paths.iter().map(|p| Input::open(p)).collect()
}

/// Decides every line of `inputs` (opened by [`open_inputs`] from `paths`)
/// with `checker` (the rules named `rules_name` in messages) into `out`,
/// in input order, and commits `out` once every input was read whole.
/// `progress` advances by the octets read.
///
/// # Errors
///
/// An input that cannot be read (or is cut underneath the run), or an
/// output that cannot be written: nothing is committed then.
pub fn filter(
    checker: &UrlChecker<'_>,
    rules_name: &str,
    options: &Options,
    paths: &[PathBuf],
    inputs: Vec<Input>,
    out: Output,
    progress: Option<ProgressBar>,
) -> Result<Report> {
    let threads = options.threads.max(1);
    let decider = Decider {
        checker,
        name: rules_name,
        emit: options.emit,
        json: options.json,
        explain: options.explain,
        max_url_len: options.max_url_len,
        format: options.format,
        usage: &options.usage,
        respect: &options.respect,
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
            agents: Vec::new(),
            hosts: Vec::new(),
            bad: Vec::new(),
            spare: Vec::new(),
            progress,
            workers: threads,
        };
        let run = || -> Result<()> {
            for (path, input) in paths.iter().zip(inputs) {
                let name = files::display(path);
                let mut file = FileState { name: &name, line_base: 0 };
                match input.into_feed(path)? {
                    Feed::Mapped { file: input, len } => {
                        sink.mapped(&decider, &input, len, &mut file)?;
                    }
                    Feed::Stream(r) => sink.stream(&decider, r, &mut file)?,
                    Feed::Gzip(r) => sink.gzip(&decider, r, &mut file)?,
                }
            }
            Ok(())
        };
        let run = run();
        // Dropping the queue closes it: the writer ends.
        let Sink { out, counts, agents, hosts, bad, progress, .. } = sink;
        drop(out);
        let written = writer.join();
        (run.map(|()| (counts, agents, hosts, bad, progress)), written)
    });
    let written =
        written.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    // A write error first: it is why a run stopped when its writer did.
    let out = written?;
    let (counts, per_agent, hosts, bad, progress) = run?;
    out.finish()?;
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    Ok(Report { counts, per_agent, hosts, bad })
}
