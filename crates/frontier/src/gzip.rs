//! A gzip regular file decided on the worker threads: its members decoded
//! in parallel (each batch of compressed octets cut into segments where a
//! member may start, as [`files::Members`] explains), into output buffers
//! and decoders reused from batch to batch, and its lines decided from
//! those buffers where they lie.

use std::io::{self, Read};
use std::ops::Range;

use anyhow::{Context, Result, anyhow};
use rayon::prelude::*;
use robofilter_io::{self as files, Decoded};

use crate::decide::Decider;
use crate::sink::{FileState, Put, Sink, decide_pieces, read_up_to};

/// Compressed octets per segment of a gzip file, each decoded on a thread
/// of its own: long enough that one costs one inflate state and a few
/// megabytes of output.
pub(crate) const GZIP_SEGMENT_LEN: usize = 1 << 18;

/// Segments per thread in one batch of a gzip file.
pub(crate) const GZIP_SEGMENTS_PER_THREAD: usize = 4;

/// Room kept in front of each segment's decoded octets, where the end of
/// the line that the segments before it left unended is copied, so that
/// the line is decided whole without moving the segment's octets. A
/// longer end (a line of more than 64 KiB across segments) is put in
/// front by moving them.
const ROOM: usize = 64 << 10;

/// One segment's decoder and output buffer, kept from batch to batch: no
/// inflate state allocated, and no page of output faulted in, again for
/// every segment.
struct Slot {
    members: files::Members,
    /// [`ROOM`] octets, then the segment's decoded octets.
    out: Vec<u8>,
}

impl Slot {
    fn new() -> Slot {
        Slot { members: files::Members::new(), out: vec![0; ROOM] }
    }

    /// Decodes the members of `data` after the room.
    fn decode(&mut self, data: &[u8]) -> Result<Decoded, files::MemberError> {
        self.out.truncate(ROOM);
        self.members.decode(data, &mut self.out)
    }

    /// The decoded octets.
    fn decoded(&self) -> &[u8] {
        &self.out[ROOM..]
    }
}

/// Cuts `data` (compressed octets that start with a gzip member) into
/// segments of about `len` octets, each but the first starting where a
/// member may start ([`files::may_start_member`]).
pub(crate) fn segments(data: &[u8], len: usize) -> Vec<Range<usize>> {
    let mut starts = vec![0];
    let mut from = len;
    while from < data.len() {
        match files::next_member_start(data, from) {
            Some(at) => {
                starts.push(at);
                from = at + len;
            }
            None => break,
        }
    }
    let ends = starts.iter().skip(1).copied().chain([data.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&s, e)| s..e)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The last offset of `data` but 0 where a member may start
/// ([`files::may_start_member`]), if any: where a batch is cut, so that
/// the member the batch's end cuts is decoded once, with the next batch,
/// rather than in part with this one and again with the next.
pub(crate) fn last_member_start(data: &[u8]) -> Option<usize> {
    let mut end = data.len();
    while let Some(i) = memchr::memrchr(0x1f, &data[..end]) {
        if i == 0 {
            return None;
        }
        if files::may_start_member(data, i) {
            return Some(i);
        }
        end = i;
    }
    None
}

/// Puts `carry` (the end of a line, without its `\n`) in front of the
/// decoded octets of `out` (a [`Slot`]'s), emptying it: where the line
/// starts in `out`.
fn put_in_front(carry: &mut Vec<u8>, out: &mut Vec<u8>) -> usize {
    let n = carry.len();
    let start = match ROOM.checked_sub(n) {
        Some(start) => {
            out[start..ROOM].copy_from_slice(carry);
            start
        }
        None => {
            out.splice(..ROOM, carry.iter().copied());
            0
        }
    };
    carry.clear();
    start
}

impl<P: Put> Sink<P> {
    /// Decodes the gzip file `r` (its compressed octets) and decides its
    /// lines: each batch of compressed octets, cut at its last octet where
    /// a member may start, is cut into segments at such octets, the
    /// segments are decoded on the worker threads, and their results
    /// chained from the batch's start, a member's start, as
    /// [`files::Members`] explains (a segment whose start the chain does
    /// not reach is decoded again, on one thread, from where the chain
    /// stopped): the lines are those of the file decoded from its start,
    /// and a damaged member stops the run with its offset. The lines are
    /// decided from the segments' buffers, a line across two segments
    /// whole in the second. A line longer than `--max-url-len` that no
    /// batch holds whole is read on by [`Sink::stream`].
    pub(crate) fn gzip(
        &mut self,
        decider: &Decider<'_, '_>,
        r: impl Read + Send + 'static,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        self.gzip_in(decider, r, file, GZIP_SEGMENT_LEN)
    }

    /// [`Sink::gzip`] with segments of about `segment_len` octets.
    pub(crate) fn gzip_in(
        &mut self,
        decider: &Decider<'_, '_>,
        mut r: impl Read + Send + 'static,
        file: &mut FileState<'_>,
        segment_len: usize,
    ) -> Result<()> {
        let name = file.name;
        let read_error = || format!("cannot read URL list '{name}'");
        let batch_len = self.workers * GZIP_SEGMENTS_PER_THREAD * segment_len;
        // Compressed octets from `base` on, starting with a member.
        let mut data: Vec<u8> = Vec::new();
        let mut base: u64 = 0;
        // Decoded octets of a line not yet ended (the next line's start).
        let mut carry: Vec<u8> = Vec::new();
        let mut decoded: u64 = 0;
        let mut slots: Vec<Slot> = Vec::new();
        // What the chain decodes on this thread.
        let mut rest = Slot::new();
        let damaged = |at: u64, why: &str, decoded: u64| {
            anyhow!(
                "URL list '{name}': the gzip member at octet {at} {why}, \
                 after {decoded} decompressed octets: the file is damaged \
                 or cut (`gzip -t FILE` checks it)"
            )
        };
        loop {
            let want = data.len() + batch_len;
            read_up_to(&mut r, &mut data, want).with_context(read_error)?;
            let end = data.len() < want;
            let cut = match end {
                true => data.len(),
                false => last_member_start(&data).unwrap_or(data.len()),
            };
            let segments = segments(&data[..cut], segment_len);
            if slots.len() < segments.len() {
                slots.resize_with(segments.len(), Slot::new);
            }
            let results: Vec<Result<Decoded, _>> = segments
                .par_iter()
                .zip(slots.par_iter_mut())
                .map(|(range, slot)| slot.decode(&data[range.clone()]))
                .collect();
            // The chain: `at` is where the next member starts.
            let mut at = 0;
            let mut chained = 0;
            for (range, result) in segments.iter().zip(&results) {
                if range.start != at {
                    break;
                }
                chained += 1;
                at += match result {
                    Ok(Decoded::Whole) => range.len(),
                    Ok(Decoded::Cut(k)) => *k,
                    Err(e) => e.at,
                };
            }
            let batch = |slots: &[Slot], rest: &Slot| -> u64 {
                let chain = slots[..chained].iter();
                let lens = chain.chain([rest]).map(|s| s.decoded().len());
                lens.sum::<usize>() as u64
            };
            rest.out.truncate(ROOM);
            if at < cut {
                // Decoded on from where the chain stopped, to the cut.
                match rest.members.decode(&data[at..cut], &mut rest.out) {
                    Ok(Decoded::Whole) => at = cut,
                    Ok(Decoded::Cut(k)) => at += k,
                    Err(e) => {
                        let offset = base + (at + e.at) as u64;
                        let so_far = decoded + batch(&slots, &rest);
                        return Err(damaged(offset, &e.why, so_far));
                    }
                }
            }
            decoded += batch(&slots, &rest);
            if end && at < data.len() {
                let offset = base + at as u64;
                let why = format!(
                    "is cut short by the file's end (octet {})",
                    base + data.len() as u64
                );
                return Err(damaged(offset, &why, decoded));
            }
            if at == 0 && !end {
                // A member longer than a batch (a file of one member, as
                // `gzip` writes it): decoded as a stream from its start,
                // on one thread, rather than again with every batch.
                return self.gzip_stream(decider, carry, data, r, file);
            }
            data.drain(..at);
            base += at as u64;
            // The lines: the buffers' octets up to their last `\n`, each
            // after the end of the line the buffers before left unended.
            let mut pieces: Vec<(usize, Range<usize>)> = Vec::new();
            let mut bufs: Vec<&mut Vec<u8>> = slots[..chained]
                .iter_mut()
                .chain([&mut rest])
                .map(|s| &mut s.out)
                .collect();
            for (i, out) in bufs.iter_mut().enumerate() {
                let Some(last) = memchr::memrchr(b'\n', &out[ROOM..]) else {
                    carry.extend_from_slice(&out[ROOM..]);
                    continue;
                };
                // The octets after the last `\n`, which start a line.
                let tail = out.len() - ROOM - last - 1;
                let start = put_in_front(&mut carry, out);
                let end = out.len() - tail;
                pieces.push((i, start..end));
                carry.extend_from_slice(&out[end..]);
            }
            let none = pieces.is_empty();
            let mut pieces: Vec<&[u8]> =
                pieces.into_iter().map(|(i, r)| &bufs[i][r]).collect();
            if end {
                // The last line, without its `\n`.
                pieces.push(&carry);
            }
            let outs = decide_pieces(decider, &pieces, &mut self.spare);
            self.write(outs, file)?;
            if end {
                return Ok(());
            }
            if none && carry.len().saturating_sub(1) > decider.max_url_len {
                // A line longer than any batch: read on as a stream,
                // which passes it through without holding it whole.
                return self.gzip_stream(decider, carry, data, r, file);
            }
        }
    }

    /// [`Sink::gzip`] read on as a stream: the decoded `text` (starting
    /// with a line), then `data` (starting with a member) and the rest of
    /// `r` decoded.
    fn gzip_stream(
        &mut self,
        decider: &Decider<'_, '_>,
        text: Vec<u8>,
        data: Vec<u8>,
        r: impl Read + Send + 'static,
        file: &mut FileState<'_>,
    ) -> Result<()> {
        let rest = io::Cursor::new(data).chain(r);
        let rest: Box<dyn io::BufRead + Send> =
            Box::new(io::BufReader::new(rest));
        let (_, _, decoder) = files::decoder(rest, file.name, "URL list")?;
        let stream = io::Cursor::new(text).chain(decoder);
        self.stream(decider, stream, file)
    }
}
