//! Deciding chunks of frontier lines: each line classified, its URL decided
//! for every agent, and the chunk's output built in order.

use std::io::IoSlice;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;

use robofilter::{
    HostCache, MatchPath, Outcome, Preferences, Target, UrlChecker, UsageKey,
    write_why,
};

use crate::cdxj::{self, CdxjUrl};
use crate::counts::{self, BadKind, Counts};
use crate::escape::escape_tail;
use crate::print::{
    JsonLine, Rest, Usage, Why, json_object, push_text, split_fields,
    write_column, write_usage_columns,
};
use crate::{Emit, Format, MIN_PASSED_RUN, REPORT_LEN};
use robofilter_io as files;

/// An input line, classified by [`classify`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Line<'a> {
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
pub(crate) fn classify(line: &[u8]) -> Line<'_> {
    let (end, url) = robofilter::next_url_line(line);
    assert_eq!(end, line.len(), "one line");
    match (url, line.strip_suffix(b"\r").unwrap_or(line)) {
        (Some((url, path)), _) => Line::Url(url, path),
        (None, b"") => Line::Empty,
        (None, text) => Line::Invalid(text),
    }
}

/// Decides chunks; shared by the worker threads.
pub(crate) struct Decider<'r, 'a> {
    /// Decides for every agent, in the order given.
    pub(crate) checker: &'r UrlChecker<'a>,
    /// The rules file's name, for messages.
    pub(crate) name: &'r str,
    pub(crate) emit: Emit,
    pub(crate) json: bool,
    pub(crate) explain: bool,
    /// Longer lines are not URLs.
    pub(crate) max_url_len: usize,
    /// Where a line's URL is.
    pub(crate) format: Format,
    /// `--usage`: the usage keys whose preferences are printed, per agent.
    pub(crate) usage: &'r [UsageKey],
    /// `--respect`: an allowed line whose preference for one of these keys
    /// is `n` (for any agent) is not selected.
    pub(crate) respect: &'r [UsageKey],
}

/// A not-a-URL line: its 0-based index in its chunk, and why.
pub(crate) type ChunkBad = (u64, BadKind);

/// A chunk's output as the writer takes it: octets written for it, and
/// between them runs of its lines passed through as they are in the
/// input (a window of a memory-mapped file), so that these are written
/// from the mapping without a copy in the process.
pub(crate) struct Emitted {
    /// The output, but for `runs`.
    pub(crate) out: Vec<u8>,
    /// `(at, lines)`: the chunk's octets `lines` go after `out[..at]`.
    /// In order, `at` and `lines` both ascending.
    pub(crate) runs: Vec<(usize, Range<usize>)>,
    /// The window the runs are in and the chunk's offset in it.
    pub(crate) input: Option<(Arc<files::Window>, usize)>,
}

/// The parts of a chunk's output (none empty), in order: `out`, with
/// `chunk`'s runs of passed lines inserted (see [`Emitted`]).
pub(crate) fn parts<'o>(
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
    pub(crate) fn written(out: Vec<u8>) -> Emitted {
        Emitted { out, runs: Vec::new(), input: None }
    }

    /// The output's parts, in order (none empty).
    pub(crate) fn parts(&self) -> Vec<IoSlice<'_>> {
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
    pub(crate) fn pass(&mut self, chunk: &[u8], lines: Range<usize>) {
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
    pub(crate) fn settle(&mut self, chunk: &[u8]) {
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
pub(crate) struct ChunkOut {
    /// Its output (the window of its runs set by [`decide_block`]).
    pub(crate) emitted: Emitted,
    pub(crate) counts: Counts,
    /// With several agents, per agent: its lines allowed, disallowed,
    /// unknown and invalid (empty with one agent: the counts say it).
    pub(crate) agents: Vec<[u64; 4]>,
    /// With one rules file for every URL: the host keys of the chunk's
    /// first URL and of the first URL of another host (for the warning
    /// that the file decided hosts it does not speak for).
    pub(crate) hosts: Vec<Vec<u8>>,
    /// The chunk's first URL up to the end of its authority: a later URL
    /// that does not start with it (and end it there) names another host
    /// as far as one comparison can tell.
    pub(crate) origin: Option<Vec<u8>>,
    pub(crate) bad: Vec<ChunkBad>,
    /// A member of the bundle that could not be loaded: ends the run.
    pub(crate) error: Option<String>,
    /// The current line's preferences per agent, with `--usage` or
    /// `--respect` (reused from line to line).
    pub(crate) prefs: Vec<Option<Preferences>>,
}

impl<'r, 'a> Decider<'r, 'a> {
    /// Whether selected lines are output as they are (but for a `\r`
    /// before the `\n`, which is dropped, and a missing last `\n`, which
    /// is added): no verdict column, reason or JSON.
    pub(crate) fn verbatim(&self) -> bool {
        self.emit != Emit::All
            && !self.json
            && !self.explain
            && self.usage.is_empty()
    }

    /// Whether a line's preferences are needed: printed or respected.
    fn wants_usage(&self) -> bool {
        !self.usage.is_empty() || !self.respect.is_empty()
    }

    /// Each agent's preferences for `url` (a URL line's, by `target`;
    /// `None`: not a URL), whose outcomes are `each`, into `prefs`
    /// (cleared first; left empty when no preference is needed).
    fn preferences(
        &self,
        url: &[u8],
        target: Option<Target<'_, 'a>>,
        each: &[Outcome],
        prefs: &mut Vec<Option<Preferences>>,
    ) -> Result<(), String> {
        prefs.clear();
        if !self.wants_usage() {
            return Ok(());
        }
        self.checker
            .preferences_each(url, target, each, prefs)
            .map_err(|e| usage_error(self.name, url, &e))
    }

    /// Decides every line of a chunk (the last line may lack its `\n`),
    /// appending the output to `out` (an empty buffer, reused across
    /// batches so that its pages are not faulted in again for every chunk).
    /// With `pass`, selected lines that are output as they are in the
    /// chunk are passed through ([`Emitted::pass`]) instead of copied.
    pub(crate) fn chunk(
        &self,
        chunk: &[u8],
        out: Vec<u8>,
        pass: bool,
    ) -> ChunkOut {
        // An instance each: no test for `pass` per line where it is false.
        match pass {
            true => self.chunk_with::<true>(chunk, out),
            false => self.chunk_with::<false>(chunk, out),
        }
    }

    /// [`Decider::chunk`].
    pub(crate) fn chunk_with<const PASS: bool>(
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
            agents: match self.agent_len() {
                1 => Vec::new(),
                n => vec![[0; 4]; n],
            },
            hosts: Vec::new(),
            origin: None,
            bad: Vec::new(),
            error: None,
            prefs: Vec::new(),
        };
        c.counts.octets = chunk.len() as u64;
        // Written for every line: buffers on cache lines of their own (a
        // one-octet `Vec` shared one with the other thread's and cost
        // `-j 2` its speed-up).
        let mut cache = HostCache::unshared();
        let mut each = self.checker.unshared_outcomes();
        if self.format == Format::Cdxj {
            let what = (&mut c, &mut cache, &mut each[..]);
            if let Err(e) = self.cdxj_lines::<PASS>(chunk, what) {
                c.error = Some(e);
                return c;
            }
            if PASS {
                c.emitted.settle(chunk);
            }
            return c;
        }
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

    /// [`Decider::chunk_with`] for CDXJ lines: each line's end found,
    /// then its URL in its JSON ([`cdxj::url_of`]), classified as a
    /// frontier line's URL is.
    fn cdxj_lines<'m, const PASS: bool>(
        &'m self,
        chunk: &[u8],
        (c, cache, each): (
            &mut ChunkOut,
            &mut HostCache<'m, 'a>,
            &mut [Outcome],
        ),
    ) -> Result<(), String> {
        let mut scratch = Vec::new();
        let mut start = 0;
        while start < chunk.len() {
            let len = memchr::memchr(b'\n', &chunk[start..])
                .unwrap_or(chunk.len() - start);
            let line = &chunk[start..start + len];
            let text = line.strip_suffix(b"\r").unwrap_or(line);
            let url = match cdxj::url_of(text, &mut scratch) {
                CdxjUrl::InLine(r) => {
                    robofilter::url_line(&chunk[start + r.start..], r.len())
                }
                CdxjUrl::Scratch if cdxj::is_plain(&scratch) => {
                    robofilter::url_line(&scratch, scratch.len())
                }
                _ => None,
            };
            let what = (&mut *c, &mut *cache, &mut *each);
            self.line::<PASS>((chunk, start, len), url, what)?;
            start += len + 1;
        }
        Ok(())
    }

    /// How many agents each line is decided for.
    pub(crate) fn agent_len(&self) -> usize {
        self.checker.agents().len()
    }

    /// Decides the line `chunk[start..start + len]`, whose URL and path
    /// are `url` ([`robofilter::for_each_url_line`]), for every agent, into
    /// `each`, and outputs it into `c` (passed through with `PASS` where
    /// it is output as it is).
    #[inline(always)]
    pub(crate) fn line<'m, const PASS: bool>(
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
        // One rules file decides every host: a frontier of several hosts
        // is pointed out. The first lines of each chunk are looked at (one
        // comparison each against the chunk's first origin; another
        // host's key is read once), which the run merges over its chunks:
        // the one-host hot path pays nothing past them.
        if let Line::Url(url, _) = &class {
            if index < HOSTS_LOOKED_AT
                && c.hosts.len() < 2
                && self.checker.is_single()
            {
                note_host(c, url);
            }
        }
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
                let url = match self.format {
                    Format::Lines => split_fields(text).0,
                    // The JSON's URL, if it has one, is not a URL.
                    Format::Cdxj => &[][..],
                };
                (url, None)
            }
        };
        let outcome = match &*each {
            [one] => *one,
            each => {
                for (counts, &o) in c.agents.iter_mut().zip(each) {
                    counts[o as usize] += 1;
                }
                Outcome::combine(each)
            }
        };
        self.preferences(url, target, each, &mut c.prefs)?;
        let prefs = &c.prefs;
        let refused = counts::refused(self.respect, prefs);
        if !c.counts.count(outcome, self.emit, refused) {
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
            let usage = Usage { keys: self.usage, each: prefs };
            self.write_json(out, text, url, (each, target), usage);
        } else {
            if self.emit == Emit::All {
                for &o in &*each {
                    write_column(out, o);
                }
            }
            if !prefs.is_empty() {
                write_usage_columns(out, self.usage, prefs);
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
    pub(crate) fn invalid_head(&self) -> Vec<u8> {
        let mut head = b"invalid\t".repeat(self.agent_len());
        let none = vec![None; self.agent_len()];
        write_usage_columns(&mut head, self.usage, &none);
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
    pub(crate) fn write_too_long_json(&self, out: &mut Vec<u8>) {
        let n = self.agent_len();
        let each = vec![Outcome::Invalid; n];
        let mut line = JsonLine::new(None, Outcome::Invalid);
        line.verdicts(self.checker.agents(), &each);
        if self.explain {
            let whys = vec![Why::new(b"not a URL", None); n];
            line.explain(self.checker.agents(), whys);
        }
        let none = vec![None; n];
        line.usage(
            self.checker.agents(),
            Usage { keys: self.usage, each: &none },
        );
        line.write(out);
    }

    /// The line's `--json` object ([`crate::json_line`]; for a CDXJ line,
    /// the line is `record` and `url` null when it has none).
    pub(crate) fn write_json(
        &self,
        out: &mut Vec<u8>,
        text: &[u8],
        url: &[u8],
        (each, target): (&[Outcome], Option<Target<'_, '_>>),
        usage: Usage<'_>,
    ) {
        let agents = self.checker.agents();
        let (url, rest) = match self.format {
            // The URL is the line up to its first TAB, if it has one.
            Format::Lines => {
                (Some(url), Rest::Fields(text.get(url.len() + 1..)))
            }
            Format::Cdxj => {
                (target.is_some().then_some(url), Rest::Record(text))
            }
        };
        let line = (url, rest, each, target);
        json_object(out, agents, line, self.explain, usage);
    }
}

/// The message for a host's rules whose Content-Usage lines cannot be
/// read (a damaged side section): the rules file and the host, and what
/// to do.
pub fn usage_error(
    name: &str,
    url: &[u8],
    e: &robofilter::UsageError,
) -> String {
    let mut host = Vec::new();
    let host = match robofilter::url_authority(url, &mut host) {
        true => {
            format!(", the rules of host {}", String::from_utf8_lossy(&host))
        }
        false => String::new(),
    };
    format!("rules '{name}'{host}: {e} (--usage and --respect read them)")
}

/// How many lines at the start of each chunk are looked at for hosts
/// other than the first (see [`ChunkOut::hosts`]).
const HOSTS_LOOKED_AT: u64 = 64;

/// Records `url`'s host key in `c.hosts` if it is the chunk's first URL or
/// the first of another origin (see [`ChunkOut::origin`]).
fn note_host(c: &mut ChunkOut, url: &[u8]) {
    if let Some(origin) = &c.origin {
        let same = url.starts_with(origin)
            && matches!(
                url.get(origin.len()),
                None | Some(b'/' | b'?' | b'#')
            );
        if same {
            return;
        }
    }
    let mut host = Vec::new();
    if !robofilter::url_authority(url, &mut host) || c.hosts.contains(&host) {
        return;
    }
    if c.origin.is_none() {
        let start = memchr::memmem::find(url, b"://").map_or(0, |i| i + 3);
        let end = url[start..]
            .iter()
            .position(|b| matches!(b, b'/' | b'?' | b'#'))
            .map_or(url.len(), |i| start + i);
        c.origin = Some(url[..end].to_vec());
    }
    c.hosts.push(host);
}
