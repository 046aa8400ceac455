//! Reading inputs block by block (streams read, plain files mapped a window
//! at a time), deciding blocks on all threads, and writing the chunks'
//! outputs in input order on a writer thread.

use std::fs::File;
use std::io::{self, Read, Seek};
use std::sync::{Arc, mpsc};

use anyhow::{Context, Result, anyhow};
use indicatif::ProgressBar;
use rayon::prelude::*;
use robofilter::Outcome;
use robofilter_io::{self as files, Output};

use crate::counts::{BadKind, Counts};
use crate::decide::{ChunkOut, Decider, Emitted};
use crate::{CHUNK_LEN, Emit, REPORT_LEN, WINDOW_BLOCKS};

/// The input being read: its name and the lines already read.
pub(crate) struct FileState<'n> {
    pub(crate) name: &'n str,
    pub(crate) line_base: u64,
}

/// Where [`Sink`] puts its outputs, in order.
pub(crate) trait Put: Send {
    /// Takes `out` to be written after every output put before it; gives
    /// back an emptied buffer to reuse (one without capacity if none is
    /// free yet).
    fn put(&mut self, out: Emitted) -> Result<Vec<u8>>;
}

/// [`Sink`]'s end of the writer thread ([`write_queue`]): a bounded queue
/// to it, and the buffers it has emptied.
pub(crate) struct ToWriter {
    pub(crate) queue: mpsc::SyncSender<Emitted>,
    pub(crate) emptied: mpsc::Receiver<Vec<u8>>,
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
pub(crate) fn write_queue(
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
/// How many distinct hosts [`Sink`] keeps as examples.
pub(crate) const HOSTS_SAMPLED: usize = 3;

pub(crate) struct Sink<P> {
    pub(crate) out: P,
    /// The size of the blocks read from a stream.
    pub(crate) block_len: usize,
    pub(crate) counts: Counts,
    /// Per agent (with several): allowed, disallowed, unknown, invalid.
    pub(crate) agents: Vec<[u64; 4]>,
    /// With one rules file for every URL: distinct host keys seen (two a
    /// chunk at most), at most [`HOSTS_SAMPLED`].
    pub(crate) hosts: Vec<Vec<u8>>,
    /// The first [`REPORT_LEN`] not-a-URL lines: input, 1-based line,
    /// empty.
    pub(crate) bad: Vec<(String, u64, BadKind)>,
    /// Emptied output buffers, for reuse.
    pub(crate) spare: Vec<Vec<u8>>,
    pub(crate) progress: Option<ProgressBar>,
    /// The threads that decide blocks. With one, a URL list's window is
    /// read in when mapped and unmapped after it is decided: the same CPU
    /// time as the alternatives, and one window's pages at a time. With
    /// more, reading a whole window in (or unmapping it) on the thread
    /// that maps would keep them all waiting: instead each faults in its
    /// own chunks' pages, side by side, and the last window is unmapped
    /// on another thread while the next is decided (the lab notes in docs/records).
    pub(crate) workers: usize,
}

impl<P: Put> Sink<P> {
    /// Puts one block's outputs in order and adds up their counts.
    pub(crate) fn write(
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
            for host in c.hosts {
                if self.hosts.len() < HOSTS_SAMPLED
                    && !self.hosts.contains(&host)
                {
                    self.hosts.push(host);
                }
            }
            if self.agents.len() < c.agents.len() {
                self.agents.resize(c.agents.len(), [0; 4]);
            }
            for (total, chunk) in self.agents.iter_mut().zip(&c.agents) {
                for (t, n) in total.iter_mut().zip(chunk) {
                    *t += n;
                }
            }
        }
        Ok(())
    }

    /// Reads `r` in blocks cut at newlines and decides them, reading the
    /// next block while the threads decide the current one (so that
    /// `-j 2` does not wait for the reads).
    pub(crate) fn stream(
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
    pub(crate) fn mapped(
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
    pub(crate) fn windows(
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
    pub(crate) fn mapped_window(
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
    pub(crate) fn pass_long_line(
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
        // Invalid for every agent too.
        if decider.agent_len() > 1 {
            self.agents.resize(decider.agent_len(), [0; 4]);
            for counts in &mut self.agents {
                counts[Outcome::Invalid as usize] += 1;
            }
        }
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
pub(crate) fn decide_block(
    decider: &Decider<'_, '_>,
    data: &[u8],
    shared: Option<(&Arc<files::Window>, usize)>,
    spare: &mut Vec<Vec<u8>>,
) -> Vec<ChunkOut> {
    decide_chunks(decider, split_parallel(data), shared, spare)
}

/// [`decide_block`] for data in pieces, each of whole lines (but the last
/// piece, whose last line may lack its `\n`).
pub(crate) fn decide_pieces(
    decider: &Decider<'_, '_>,
    pieces: &[&[u8]],
    spare: &mut Vec<Vec<u8>>,
) -> Vec<ChunkOut> {
    let chunks = pieces.iter().flat_map(|p| split(p)).collect();
    decide_chunks(decider, chunks, None, spare)
}

/// [`decide_block`] for data cut into `chunks`.
fn decide_chunks(
    decider: &Decider<'_, '_>,
    chunks: Vec<&[u8]>,
    shared: Option<(&Arc<files::Window>, usize)>,
    spare: &mut Vec<Vec<u8>>,
) -> Vec<ChunkOut> {
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
pub(crate) fn read_up_to(
    r: &mut impl Read,
    buf: &mut Vec<u8>,
    want: usize,
) -> io::Result<()> {
    let missing = want.saturating_sub(buf.len()) as u64;
    r.by_ref().take(missing).read_to_end(buf)?;
    Ok(())
}

/// Cuts `data` into chunks of about [`CHUNK_LEN`] octets, each ending just
/// after a `\n` (except possibly the last): chunk `i` starts at the first
/// line that starts at or after `i * CHUNK_LEN` (a line longer than a
/// chunk makes the next chunks empty, and they are left out).
pub(crate) fn split(data: &[u8]) -> Vec<&[u8]> {
    let cuts: Vec<usize> =
        (0..=chunk_count(data)).map(|i| chunk_start(data, i)).collect();
    chunks_between(data, &cuts)
}

/// [`split`] with the cuts found on the worker threads. Finding a cut
/// reads the page it falls in, which in a mapped window not yet read in
/// is a page fault: the threads take them together, rather than one
/// thread while the others wait for the block.
pub(crate) fn split_parallel(data: &[u8]) -> Vec<&[u8]> {
    let cuts: Vec<usize> = (0..=chunk_count(data))
        .into_par_iter()
        .map(|i| chunk_start(data, i))
        .collect();
    chunks_between(data, &cuts)
}

/// How many chunks of [`CHUNK_LEN`] octets `data` spans.
fn chunk_count(data: &[u8]) -> usize {
    data.len().div_ceil(CHUNK_LEN)
}

/// Where [`split`]'s chunk `i` starts (`data.len()` past the last).
fn chunk_start(data: &[u8], i: usize) -> usize {
    match i * CHUNK_LEN {
        0 => 0,
        from if from >= data.len() => data.len(),
        from => memchr::memchr(b'\n', &data[from - 1..])
            .map_or(data.len(), |k| from + k),
    }
}

/// The non-empty chunks of `data` between successive `cuts`.
fn chunks_between<'d>(data: &'d [u8], cuts: &[usize]) -> Vec<&'d [u8]> {
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| &data[w[0]..w[1]])
        .collect()
}
