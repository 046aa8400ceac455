//! `robofilter filter RULES --agent NAME [FILE...]`: URL lists in, selected
//! URLs (or every line with its verdict) out.
//!
//! Each input is cut into newline-aligned chunks of about 1 MiB. A batch of
//! chunks (a few per thread) is decided in parallel, each chunk into its own
//! buffer, and the buffers are then written in input order. Output order is
//! therefore input order for any thread count, and memory stays bounded by
//! one batch: plain regular files are memory-mapped; stdin, pipes and
//! gzip/zstd inputs are read one batch-sized block at a time (a block ends at
//! its last newline; the rest is carried into the next block).
//!
//! With a bundle, each URL's authority selects its host's rules. A worker
//! remembers the last host it looked up, so runs of URLs of one host cost
//! one comparison each; each member rules file is checked and its matcher
//! built the first time a URL of one of its hosts appears.

use std::fmt::Write as _;
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::ops::AddAssign;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use memmap2::Mmap;
use rayon::prelude::*;
use robofilter::{
    Bundle, HostCache, MatchPath, Members, Outcome, Reason, Target,
    UrlChecker, write_why,
};

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
    let rules_name = files::display(&args.rules);
    // A single rules file applies to every URL; a bundle has per-host
    // rules. Both are loaded here, so that the scope can borrow them.
    let (single, bundle) = if Bundle::is_bundle(&bytes) {
        let bundle = Bundle::from_bytes(&bytes)
            .with_context(|| format!("bundle '{rules_name}'"))?;
        (None, Some(bundle))
    } else {
        (Some(files::load_rules(&bytes, &args.rules)?), None)
    };
    let members = bundle.as_ref().map(Members::new);
    let checker = match (&single, &bundle, &members) {
        (Some(rules), _, _) => UrlChecker::rules(rules, &args.agent)
            .with_context(|| format!("rules file '{rules_name}'"))?,
        (None, Some(bundle), Some(members)) => {
            UrlChecker::bundle(bundle, members, &args.agent)
                .map_err(|e| anyhow!("bundle '{rules_name}', {e}"))?
        }
        _ => unreachable!("one of them is loaded"),
    };

    // Open (and map) every input before writing anything, so that a bad
    // path fails the run before any output.
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs
    };
    let inputs: Vec<Input> =
        paths.iter().map(|p| Input::open(p)).collect::<Result<_>>()?;
    let progress = progress_bar(&inputs);

    let decider = Decider {
        checker,
        name: &rules_name,
        emit: args.emit,
        json: args.json,
        explain: args.explain,
        max_url_len: args.max_url_len,
    };
    let batch_len = threads * CHUNKS_PER_THREAD;
    let out = Output::new(args.output.as_deref())?;
    let mut sink = Sink {
        out_name: out.describe(),
        out,
        batch_len,
        block_len: batch_len * CHUNK_LEN,
        counts: Counts::default(),
        bad: Vec::new(),
        spare: Vec::new(),
        progress,
    };
    for (path, input) in paths.iter().zip(inputs) {
        let name = files::display(path);
        let mut file = FileState { name: &name, line_base: 0 };
        match input {
            Input::Map(map) => sink.process(&decider, &map, &mut file)?,
            Input::Empty => {}
            Input::Stream(r) => sink.stream(&decider, r, &mut file)?,
        }
    }
    let Sink { out, counts, bad, progress, .. } = sink;
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
    let known: Option<u64> = inputs
        .iter()
        .map(|i| match i {
            Input::Map(m) => Some(m.len() as u64),
            Input::Empty => Some(0),
            Input::Stream(_) => None,
        })
        .sum();
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

/// One opened input.
enum Input {
    /// A plain regular file, mapped.
    Map(Mmap),
    /// An empty regular file.
    Empty,
    /// Stdin, a pipe, or a decompressed file.
    Stream(Box<dyn Read>),
}

impl Input {
    fn open(path: &Path) -> Result<Input> {
        const WHAT: &str = "URL list";
        let name = files::display(path);
        let stream = |r: Box<dyn BufRead>| -> Result<Input> {
            Ok(Input::Stream(decompress(r, &name)?))
        };
        if files::is_stdin(path) {
            return stream(Box::new(io::BufReader::new(io::stdin())));
        }
        let (file, len) = files::open(path, WHAT)?;
        match len {
            Some(0) => Ok(Input::Empty),
            Some(_) => {
                let map = files::map(&file, path, WHAT)?;
                if Compression::detect(&map).is_none() {
                    return Ok(Input::Map(map));
                }
                stream(Box::new(io::BufReader::new(file)))
            }
            None => stream(Box::new(io::BufReader::new(file))),
        }
    }
}

/// A compressed input format, told by its magic bytes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    fn detect(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }
}

/// Wraps `r` in a decoder if it starts with a gzip or zstd magic number.
fn decompress(mut r: Box<dyn BufRead>, name: &str) -> Result<Box<dyn Read>> {
    let head = r
        .fill_buf()
        .with_context(|| format!("cannot read URL list '{name}'"))?;
    Ok(match Compression::detect(head) {
        // Multi-member: concatenated gzip files are one stream.
        Some(Compression::Gzip) => {
            Box::new(flate2::bufread::MultiGzDecoder::new(r))
        }
        Some(Compression::Zstd) => Box::new(
            zstd::stream::read::Decoder::with_buffer(r).with_context(
                || format!("cannot start zstd decoding of '{name}'"),
            )?,
        ),
        None => Box::new(r),
    })
}

/// Line counts. Every line is exactly one of allowed, disallowed, unknown
/// or invalid; empty lines are a subset of the invalid ones.
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
    /// A URL (the line without its `\r`) and its path.
    Url(&'a [u8], MatchPath<'a>),
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
/// Octets above 0x7F (UTF-8) are allowed. One pass
/// ([`robofilter::url_line`]) checks the octets and finds the path.
#[cfg(test)]
fn classify(line: &[u8]) -> Line<'_> {
    classify_in(line, line.len())
}

/// [`classify`] for the line `buf[..len]`, where `buf` may go on past the
/// line (the rest of the chunk, which [`robofilter::url_line`] may read
/// ahead in).
#[inline]
fn classify_in(buf: &[u8], len: usize) -> Line<'_> {
    if let Some((url, path)) = robofilter::url_line(buf, len) {
        return Line::Url(url, path);
    }
    let line = &buf[..len];
    match line.strip_suffix(b"\r").unwrap_or(line) {
        b"" => Line::Empty,
        line => Line::Invalid(line),
    }
}

/// Decides chunks; shared by the worker threads.
struct Decider<'r, 'a> {
    checker: UrlChecker<'r, 'a>,
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
    /// Not `scheme://...`, or a control octet or space in it.
    NotUrl,
    /// Longer than `--max-url-len`.
    TooLong,
}

/// A not-a-URL line: its 0-based index in its chunk, and why.
type BadLine = (u64, BadKind);

/// What one chunk produced.
struct ChunkOut {
    out: Vec<u8>,
    counts: Counts,
    bad: Vec<BadLine>,
    /// A member of the bundle that could not be loaded: ends the run.
    error: Option<String>,
}

impl<'r, 'a> Decider<'r, 'a> {
    /// Decides every line of a chunk (the last line may lack its `\n`),
    /// appending the output to `out` (an empty buffer, reused across
    /// batches so that its pages are not faulted in again for every chunk).
    fn chunk(&self, chunk: &[u8], mut out: Vec<u8>) -> ChunkOut {
        let cap = match self.emit {
            Emit::All => chunk.len() + chunk.len() / 4,
            _ => chunk.len(),
        };
        out.reserve(cap);
        let mut c = ChunkOut {
            out,
            counts: Counts::default(),
            bad: Vec::new(),
            error: None,
        };
        c.counts.octets = chunk.len() as u64;
        let mut cache = HostCache::new();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            let (buf, len) = (&chunk[start..], nl - start);
            if let Err(e) = self.line(buf, len, &mut c, &mut cache) {
                c.error = Some(e);
                return c;
            }
            start = nl + 1;
        }
        if start < chunk.len() {
            let buf = &chunk[start..];
            if let Err(e) = self.line(buf, buf.len(), &mut c, &mut cache) {
                c.error = Some(e);
            }
        }
        c
    }

    #[inline]
    /// Decides the line `buf[..len]` (`buf` goes on to the chunk's end).
    fn line<'m>(
        &'m self,
        buf: &[u8],
        len: usize,
        c: &mut ChunkOut,
        cache: &mut HostCache<'m, 'r, 'a>,
    ) -> Result<(), String> {
        let index = c.counts.lines;
        c.counts.lines += 1;
        let class = if len > self.max_url_len {
            Line::Invalid(&buf[..len])
        } else {
            classify_in(buf, len)
        };
        let (outcome, text, target) = match class {
            Line::Url(url, path) => {
                let target = self
                    .checker
                    .target(url, cache)
                    .map_err(|e| format!("bundle '{}', {e}", self.name))?;
                let outcome = match target {
                    Target::Rules(m) => Outcome::from(m.decide_path(path)),
                    Target::Fixed(v, _) => Outcome::from(v),
                    Target::Unknown => Outcome::Unknown,
                };
                (outcome, url, Some(target))
            }
            bad @ (Line::Empty | Line::Invalid(_)) => {
                let kind = match bad {
                    Line::Empty => BadKind::Empty,
                    _ if len > self.max_url_len => BadKind::TooLong,
                    _ => BadKind::NotUrl,
                };
                c.counts.empty += u64::from(kind == BadKind::Empty);
                c.counts.too_long += u64::from(kind == BadKind::TooLong);
                if c.bad.len() < REPORT_LEN {
                    c.bad.push((index, kind));
                }
                let text = match bad {
                    Line::Invalid(text) => text,
                    _ => b"",
                };
                (Outcome::Invalid, text, None)
            }
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
        if self.json {
            self.write_json(&mut c.out, outcome, text, target);
        } else {
            if self.emit == Emit::All {
                c.out.extend_from_slice(outcome.as_str().as_bytes());
                c.out.push(b'\t');
            }
            c.out.extend_from_slice(text);
            if self.explain {
                c.out.push(b'\t');
                write_why(&mut c.out, text, target);
            }
            c.out.push(b'\n');
        }
        Ok(())
    }

    /// `{"url":...,"verdict":...,"host":...}` with, for `--explain`,
    /// `"reason"`, `"line"` and `"pattern"` (null when no rule decided).
    fn write_json(
        &self,
        out: &mut Vec<u8>,
        outcome: Outcome,
        text: &[u8],
        target: Option<Target<'_, '_, '_>>,
    ) {
        out.push(b'{');
        json_bytes_field(out, "url", text);
        write!(Json(out), ",\"verdict\":\"{}\"", outcome.as_str())
            .expect("vec");
        out.extend_from_slice(b",\"host\":");
        let mut host = Vec::new();
        if target.is_some() && robofilter::url_authority(text, &mut host) {
            json_string(out, &host);
        } else {
            out.extend_from_slice(b"null");
        }
        if self.explain {
            out.extend_from_slice(b",\"reason\":");
            let mut why = Vec::new();
            let reason = write_why(&mut why, text, target);
            json_string(out, &why);
            let rule = match reason {
                Some(Reason::Rule(r) | Reason::IndexHtml(r)) => Some(r),
                _ => None,
            };
            match rule {
                Some(r) => {
                    write!(Json(out), ",\"line\":{},\"pattern\":", r.line())
                        .expect("vec");
                    json_string(out, r.pattern());
                }
                None => {
                    out.extend_from_slice(b",\"line\":null,\"pattern\":null")
                }
            }
        }
        out.extend_from_slice(b"}\n");
    }
}

/// `fmt::Write` into a byte vector.
struct Json<'v>(&'v mut Vec<u8>);

impl std::fmt::Write for Json<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// `"name":"text"` if `text` is UTF-8, else `"name_base64":"..."` (JSON
/// strings cannot carry arbitrary octets; the bytes stay exact).
fn json_bytes_field(out: &mut Vec<u8>, name: &str, text: &[u8]) {
    use base64::Engine as _;
    if std::str::from_utf8(text).is_ok() {
        write!(Json(out), "\"{name}\":").expect("vec");
        json_string(out, text);
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text);
        write!(Json(out), "\"{name}_base64\":\"{b64}\"").expect("vec");
    }
}

/// A JSON string of UTF-8 `s` (invalid octets become U+FFFD).
fn json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for ch in String::from_utf8_lossy(s).chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                write!(Json(out), "\\u{:04x}", c as u32).expect("vec")
            }
            c => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// The input being read: its name and the lines already read.
struct FileState<'n> {
    name: &'n str,
    line_base: u64,
}

/// Writes chunk outputs in order and collects counts.
struct Sink<W> {
    out: W,
    /// The output's name, for messages.
    out_name: String,
    /// Chunks decided in parallel at a time.
    batch_len: usize,
    /// The size of the blocks read from a stream.
    block_len: usize,
    counts: Counts,
    /// The first [`REPORT_LEN`] not-a-URL lines: input, 1-based line,
    /// empty.
    bad: Vec<(String, u64, BadKind)>,
    /// Emptied output buffers of earlier batches, for reuse.
    spare: Vec<Vec<u8>>,
    progress: Option<ProgressBar>,
}

impl<W: Write + Send> Sink<W> {
    /// Decides all lines of `data` (newline-separated; the last line may
    /// lack its `\n`), writing the results in order. Writing a batch
    /// overlaps with deciding the next one.
    fn process(
        &mut self,
        decider: &Decider<'_, '_>,
        data: &[u8],
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let chunks = split(data);
        let mut pending: Option<Vec<ChunkOut>> = None;
        for batch in chunks.chunks(self.batch_len) {
            let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(batch.len());
            bufs.extend(
                (0..batch.len()).map(|_| self.spare.pop().unwrap_or_default()),
            );
            let previous = pending.take();
            let (written, outs) = rayon::join(
                || match previous {
                    Some(outs) => self.write(outs, file),
                    None => Ok(()),
                },
                || {
                    batch
                        .par_iter()
                        .zip(bufs)
                        .map(|(c, buf)| decider.chunk(c, buf))
                        .collect::<Vec<ChunkOut>>()
                },
            );
            written?;
            pending = Some(outs);
        }
        match pending {
            Some(outs) => self.write(outs, file),
            None => Ok(()),
        }
    }

    /// Writes one batch's outputs in order and adds up their counts.
    fn write(
        &mut self,
        outs: Vec<ChunkOut>,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        for mut c in outs {
            if let Some(e) = c.error {
                return Err(anyhow!(e));
            }
            self.out.write_all(&c.out).with_context(|| {
                format!("cannot write output to {}", self.out_name)
            })?;
            c.out.clear();
            self.spare.push(c.out);
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
                // A line longer than --max-url-len: it is invalid whatever
                // follows, so pass it through without holding it whole.
                None if buf.len() > decider.max_url_len => {
                    self.pass_long_line(decider, &mut r, &mut buf, file)?;
                    want = self.block_len;
                }
                // One line longer than the block: read more of it.
                None => want *= 2,
            }
        }
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
            sink.out.write_all(bytes).with_context(|| {
                format!("cannot write output to {}", sink.out_name)
            })
        };
        if all && decider.json {
            write(
                self,
                b"{\"url\":null,\"verdict\":\"invalid\",\"host\":null}\n",
            )?;
        } else if all {
            write(self, b"invalid\t")?;
        }
        loop {
            if let Some(i) = memchr::memchr(b'\n', buf) {
                if all && !decider.json {
                    let text = &buf[..i];
                    let text = text.strip_suffix(b"\r").unwrap_or(text);
                    write(self, text)?;
                    write(self, b"\n")?;
                }
                buf.drain(..=i);
                break;
            }
            if all && !decider.json {
                write(self, buf)?;
            }
            buf.clear();
            let n = r
                .by_ref()
                .take(self.block_len as u64)
                .read_to_end(buf)
                .with_context(|| {
                    format!("cannot read URL list '{}'", file.name)
                })?;
            if n == 0 {
                if all && !decider.json {
                    write(self, b"\n")?;
                }
                break;
            }
        }
        let c = &mut self.counts;
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
        eprintln!(
            "robofilter: warning: {} lines are not URLs ({} empty{long}): {}",
            c.invalid,
            c.empty,
            at.join(", ")
        );
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = c.lines as f64 / secs.max(1e-9) / 1e6;
    let mut line = String::new();
    write!(
        line,
        "robofilter: {} lines: {} allowed, {} disallowed, {} unknown, {} \
         invalid ({} empty) in {secs:.3} s ({rate:.1} M lines/s)",
        c.lines, c.allowed, c.disallowed, c.unknown, c.invalid, c.empty
    )
    .expect("string");
    eprintln!("{line}");
}

#[cfg(test)]
mod tests {
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
    ) -> (String, Counts, Vec<(String, u64, BadKind)>) {
        let robots = b"User-agent: *\nDisallow: /d\n";
        let bytes = robofilter::Compiler::new().compile(robots).unwrap();
        let bytes = robofilter::AlignedBytes::from(&bytes[..]);
        let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
        let decider = Decider {
            checker: UrlChecker::rules(&rules, "bot").unwrap(),
            name: "rules",
            emit: Emit::All,
            json: false,
            explain: false,
            max_url_len: 20,
        };
        let mut sink = Sink {
            out: Vec::new(),
            out_name: "test".to_string(),
            batch_len: 2,
            block_len,
            counts: Counts::default(),
            bad: Vec::new(),
            spare: Vec::new(),
            progress: None,
        };
        let mut file = FileState { name: "in", line_base: 0 };
        sink.stream(&decider, input, &mut file).unwrap();
        (String::from_utf8(sink.out).unwrap(), sink.counts, sink.bad)
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
        for last in ["\n", "\r\n", ""] {
            let input = format!("http://x/a\n{long}{last}http://x/d\n");
            let input = if last.is_empty() {
                format!("http://x/a\n{long}")
            } else {
                input
            };
            for block_len in [4, 7, 16, 33] {
                let (out, counts, bad) = stream(input.as_bytes(), block_len);
                let mut want = format!("allow\thttp://x/a\ninvalid\t{long}\n");
                if !last.is_empty() {
                    want.push_str("disallow\thttp://x/d\n");
                }
                assert_eq!(out, want, "block {block_len} {last:?}");
                assert_eq!(counts.too_long, 1);
                assert_eq!(
                    counts.lines,
                    counts.allowed + counts.disallowed + counts.invalid
                );
                assert_eq!(bad[0].1, 2);
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
        let mut out = Vec::new();
        json_string(&mut out, b"a\"b\\c\td\x7f\xe3\x83\x84");
        assert_eq!(out, b"\"a\\\"b\\\\c\\u0009d\\u007f\xe3\x83\x84\"");
        out.clear();
        json_bytes_field(&mut out, "url", b"http://x/\xff");
        assert_eq!(out, b"\"url_base64\":\"aHR0cDovL3gv/w==\"");
    }

    #[test]
    fn compression_is_told_by_magic() {
        assert_eq!(
            Compression::detect(b"\x1f\x8b\x08"),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::detect(b"\x28\xb5\x2f\xfd\x00"),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::detect(b"http://"), None);
        assert_eq!(Compression::detect(b""), None);
    }
}
