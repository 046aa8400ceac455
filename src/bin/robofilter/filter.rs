//! `robofilter filter RULES --agent NAME [FILE...]`: URL lists in, selected
//! URLs (or every line with its verdict) out.
//!
//! Each input is cut into newline-aligned chunks of about 1 MiB. A batch of
//! chunks (a few per thread) is decided in parallel, each chunk into its own
//! buffer, and the buffers are then written in input order. Output order is
//! therefore input order for any thread count, and memory stays bounded by
//! one batch: regular files are memory-mapped, stdin and pipes are read one
//! batch-sized block at a time (a block ends at its last newline; the rest
//! is carried into the next block).

use std::io::{self, Read, Write};
use std::ops::AddAssign;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use memmap2::Mmap;
use rayon::prelude::*;
use robofilter::{Matcher, Verdict};

use crate::args::{Emit, FilterArgs};
use crate::files::{self, Output};

/// The target chunk length; a chunk extends to the end of its last line.
const CHUNK_LEN: usize = 1 << 20;

/// Chunks per thread in one batch: enough to even out uneven chunks.
const CHUNKS_PER_THREAD: usize = 4;

/// How many line numbers of empty or invalid lines are reported.
const REPORT_LEN: usize = 5;

pub fn run(args: FilterArgs) -> Result<()> {
    let start = Instant::now();
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("cannot start the worker threads")?;

    let bytes = files::read(&args.rules, "rules file")?;
    let rules = files::load_rules(&bytes, &args.rules)?;
    let matcher = rules
        .matcher(&args.agent)
        .with_context(|| format!("rules file '{}'", args.rules.display()))?;
    // Open (and map) every input before writing anything, so that a bad
    // path fails the run before any output.
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs
    };
    let inputs: Vec<Input> =
        paths.iter().map(|p| Input::open(p)).collect::<Result<_>>()?;

    let decider = Decider { matcher, emit: args.emit };
    let batch_len = threads * CHUNKS_PER_THREAD;
    let mut sink = Sink {
        out: Output::new(args.output.as_deref())?,
        batch_len,
        block_len: batch_len * CHUNK_LEN,
        counts: Counts::default(),
        bad: Vec::new(),
        spare: Vec::new(),
    };
    for (path, input) in paths.iter().zip(inputs) {
        let name = files::display(path);
        let mut file = FileState { name: &name, line_base: 0 };
        match input {
            Input::Map(map) => sink.process(&decider, &map, &mut file)?,
            Input::Empty => {}
            Input::Stdin => {
                sink.stream(&decider, io::stdin().lock(), &mut file)?
            }
            Input::Stream(f) => sink.stream(&decider, f, &mut file)?,
        }
    }
    let Sink { out, counts, bad, .. } = sink;
    out.finish()?;
    report(&counts, &bad, start);
    Ok(())
}

/// One opened input.
enum Input {
    Map(Mmap),
    Empty,
    Stdin,
    Stream(std::fs::File),
}

impl Input {
    fn open(path: &std::path::Path) -> Result<Input> {
        const WHAT: &str = "URL list";
        if files::is_stdin(path) {
            return Ok(Input::Stdin);
        }
        let (file, len) = files::open(path, WHAT)?;
        Ok(match len {
            Some(0) => Input::Empty,
            Some(_) => Input::Map(files::map(&file, path, WHAT)?),
            None => Input::Stream(file),
        })
    }
}

/// Line counts. Every line is exactly one of allowed, disallowed or
/// invalid; empty lines are a subset of the invalid ones.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    lines: u64,
    allowed: u64,
    disallowed: u64,
    invalid: u64,
    empty: u64,
}

impl AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.lines += o.lines;
        self.allowed += o.allowed;
        self.disallowed += o.disallowed;
        self.invalid += o.invalid;
        self.empty += o.empty;
    }
}

/// An input line, classified by [`classify`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Line<'a> {
    /// A URL (the line without its `\r`).
    Url(&'a [u8]),
    /// Nothing but possibly a `\r`.
    Empty,
    /// Not a URL (the line without its `\r`).
    Invalid(&'a [u8]),
}

/// Classifies one input line (without its `\n`).
///
/// After stripping one trailing `\r`, a line is *not a URL* if it is empty,
/// contains an ASCII control octet (0x00-0x1F, 0x7F) or a space, or does
/// not start with `scheme://`, where scheme is `[A-Za-z][A-Za-z0-9+.-]*`.
/// Octets above 0x7F (UTF-8) are allowed.
fn classify(line: &[u8]) -> Line<'_> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Line::Empty;
    }
    // A branch-free fold over the whole line vectorises; `any` would stop
    // early but check one octet at a time.
    let bad =
        line.iter().fold(false, |acc, &b| acc | (b <= b' ') | (b == 0x7f));
    if has_scheme(line) && !bad {
        Line::Url(line)
    } else {
        Line::Invalid(line)
    }
}

/// Whether `line` starts with `[A-Za-z][A-Za-z0-9+.-]*://`.
fn has_scheme(line: &[u8]) -> bool {
    let Some((first, rest)) = line.split_first() else { return false };
    let scheme =
        |b: &&u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-');
    let n = rest.iter().take_while(scheme).count();
    first.is_ascii_alphabetic() && rest[n..].starts_with(b"://")
}

/// Decides chunks; shared by the worker threads.
struct Decider<'r, 'a> {
    matcher: Matcher<'r, 'a>,
    emit: Emit,
}

/// A not-a-URL line: its 0-based index in its chunk, and whether it was
/// empty.
type BadLine = (u64, bool);

/// What one chunk produced.
struct ChunkOut {
    out: Vec<u8>,
    counts: Counts,
    bad: Vec<BadLine>,
}

impl Decider<'_, '_> {
    /// Decides every line of a chunk (the last line may lack its `\n`),
    /// appending the output to `out` (an empty buffer, reused across
    /// batches so that its pages are not faulted in again for every chunk).
    fn chunk(&self, chunk: &[u8], mut out: Vec<u8>) -> ChunkOut {
        let cap = match self.emit {
            Emit::All => chunk.len() + chunk.len() / 4,
            Emit::Allowed | Emit::Disallowed => chunk.len(),
        };
        out.reserve(cap);
        let mut c =
            ChunkOut { out, counts: Counts::default(), bad: Vec::new() };
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            self.line(&chunk[start..nl], &mut c);
            start = nl + 1;
        }
        if start < chunk.len() {
            self.line(&chunk[start..], &mut c);
        }
        c
    }

    #[inline]
    fn line(&self, line: &[u8], c: &mut ChunkOut) {
        let index = c.counts.lines;
        c.counts.lines += 1;
        let (tag, text): (&[u8], &[u8]) = match classify(line) {
            Line::Url(url) => {
                let verdict = self.matcher.decide(url);
                let selected = match verdict {
                    Verdict::Allow => {
                        c.counts.allowed += 1;
                        self.emit == Emit::Allowed
                    }
                    Verdict::Disallow => {
                        c.counts.disallowed += 1;
                        self.emit == Emit::Disallowed
                    }
                };
                if selected {
                    c.out.extend_from_slice(url);
                    c.out.push(b'\n');
                }
                (verdict.as_str().as_bytes(), url)
            }
            bad @ (Line::Empty | Line::Invalid(_)) => {
                let empty = bad == Line::Empty;
                c.counts.invalid += 1;
                c.counts.empty += u64::from(empty);
                if c.bad.len() < REPORT_LEN {
                    c.bad.push((index, empty));
                }
                let text = match bad {
                    Line::Invalid(text) => text,
                    _ => b"",
                };
                (b"invalid", text)
            }
        };
        if self.emit == Emit::All {
            c.out.extend_from_slice(tag);
            c.out.push(b'\t');
            c.out.extend_from_slice(text);
            c.out.push(b'\n');
        }
    }
}

/// The input being read: its name and the lines already read.
struct FileState<'n> {
    name: &'n str,
    line_base: u64,
}

/// Writes chunk outputs in order and collects counts.
struct Sink<W> {
    out: W,
    /// Chunks decided in parallel at a time.
    batch_len: usize,
    /// The size of the blocks read from a stream.
    block_len: usize,
    counts: Counts,
    /// The first [`REPORT_LEN`] not-a-URL lines: input, 1-based line,
    /// empty.
    bad: Vec<(String, u64, bool)>,
    /// Emptied output buffers of earlier batches, for reuse.
    spare: Vec<Vec<u8>>,
}

impl<W: Write> Sink<W> {
    /// Decides all lines of `data` (newline-separated; the last line may
    /// lack its `\n`), writing the results in order.
    fn process(
        &mut self,
        decider: &Decider<'_, '_>,
        data: &[u8],
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let chunks = split(data);
        for batch in chunks.chunks(self.batch_len) {
            let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(batch.len());
            bufs.extend(
                (0..batch.len()).map(|_| self.spare.pop().unwrap_or_default()),
            );
            let outs: Vec<ChunkOut> = batch
                .par_iter()
                .zip(bufs)
                .map(|(c, buf)| decider.chunk(c, buf))
                .collect();
            for mut c in outs {
                self.out.write_all(&c.out).context("cannot write output")?;
                c.out.clear();
                self.spare.push(c.out);
                for (index, empty) in c.bad {
                    if self.bad.len() < REPORT_LEN {
                        let line = file.line_base + index + 1;
                        self.bad.push((file.name.to_string(), line, empty));
                    }
                }
                file.line_base += c.counts.lines;
                self.counts += c.counts;
            }
        }
        Ok(())
    }

    /// Reads `r` in batch-sized blocks cut at newlines and processes them.
    fn stream(
        &mut self,
        decider: &Decider<'_, '_>,
        mut r: impl Read,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let mut want = self.block_len;
        let mut buf: Vec<u8> = Vec::with_capacity(want);
        loop {
            let missing = (want - buf.len()) as u64;
            r.by_ref().take(missing).read_to_end(&mut buf).with_context(
                || format!("cannot read URL list '{}'", file.name),
            )?;
            if buf.len() < want {
                // End of input: the rest, with a last line lacking `\n`.
                return self.process(decider, &buf, file);
            }
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => {
                    self.process(decider, &buf[..=i], file)?;
                    buf.drain(..=i);
                }
                // One line longer than the block: read more of it.
                None => want *= 2,
            }
        }
    }
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
fn report(c: &Counts, bad: &[(String, u64, bool)], start: Instant) {
    debug_assert_eq!(c.lines, c.allowed + c.disallowed + c.invalid);
    debug_assert!(c.empty <= c.invalid);
    if c.invalid > 0 {
        let mut at: Vec<String> = bad
            .iter()
            .map(|(name, line, empty)| {
                let note = if *empty { " (empty)" } else { "" };
                format!("{name}:{line}{note}")
            })
            .collect();
        if c.invalid > bad.len() as u64 {
            at.push("...".to_string());
        }
        eprintln!(
            "robofilter: warning: {} lines are not URLs ({} empty): {}",
            c.invalid,
            c.empty,
            at.join(", ")
        );
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = c.lines as f64 / secs.max(1e-9) / 1e6;
    eprintln!(
        "robofilter: {} lines: {} allowed, {} disallowed, {} invalid ({} \
         empty) in {secs:.3} s ({rate:.1} M lines/s)",
        c.lines, c.allowed, c.disallowed, c.invalid, c.empty
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_lines() {
        let url = |s: &'static [u8]| Line::Url(s);
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
            (b"http://x/a b", bad(b"http://x/a b")),
            (b"http://x/a\tb", bad(b"http://x/a\tb")),
            (b"http://x/\x7f", bad(b"http://x/\x7f")),
            (b" http://x/", bad(b" http://x/")),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line), *want, "{:?}", line.escape_ascii());
        }
    }

    /// Streams `input` in blocks of `block_len` octets; returns the
    /// `--emit all` output, the counts and the reported lines.
    fn stream(
        input: &[u8],
        block_len: usize,
    ) -> (String, Counts, Vec<(String, u64, bool)>) {
        let robots = b"User-agent: *\nDisallow: /d\n";
        let bytes = robofilter::Compiler::new().compile(robots).unwrap();
        let bytes = robofilter::AlignedBytes::from(&bytes[..]);
        let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
        let decider = Decider {
            matcher: rules.matcher("bot").unwrap(),
            emit: Emit::All,
        };
        let mut sink = Sink {
            out: Vec::new(),
            batch_len: 2,
            block_len,
            counts: Counts::default(),
            bad: Vec::new(),
            spare: Vec::new(),
        };
        let mut file = FileState { name: "in", line_base: 0 };
        sink.stream(&decider, input, &mut file).unwrap();
        (String::from_utf8(sink.out).unwrap(), sink.counts, sink.bad)
    }

    #[test]
    fn stream_carries_lines_across_blocks() {
        let input =
            b"http://x/a\nhttp://x/d/long/long/long\n\nbad\nhttp://x/d";
        let want = "allow\thttp://x/a\n\
                    disallow\thttp://x/d/long/long/long\n\
                    invalid\t\n\
                    invalid\tbad\n\
                    disallow\thttp://x/d\n";
        for block_len in [1, 2, 3, 7, 11, 16, 100] {
            let (out, counts, bad) = stream(input, block_len);
            assert_eq!(out, want, "block {block_len}");
            assert_eq!(counts.lines, 5);
            assert_eq!((counts.invalid, counts.empty), (2, 1));
            let bad: Vec<_> = bad.iter().map(|b| (b.1, b.2)).collect();
            assert_eq!(bad, [(3, true), (4, false)], "block {block_len}");
        }
        assert_eq!(stream(b"", 4).1.lines, 0);
        assert_eq!(stream(b"\n", 4).1.empty, 1);
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
}
