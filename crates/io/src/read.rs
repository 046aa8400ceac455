//! Reading inputs whole (rules files, bundles, robots.txt) and URL lists a
//! mapped window at a time, failing when a file is cut underneath the run.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};

use robofilter::InputKind;

use crate::decompress::peek;
use crate::limits::Limits;
use crate::owned::{Aligned, Bytes};
use crate::path::{display, is_stdin, open, shrank};
use crate::signals::stop_on_sigbus;

/// A regular file read to its end, which fails if the end comes before
/// the length the file had when it was opened: a file cut (rewritten in
/// place) underneath the run would otherwise look complete, and the run
/// would succeed on part of it. A file that grows is read as far as it
/// goes.
pub struct Whole<R> {
    inner: R,
    /// The length when opened.
    len: u64,
    /// How many octets were read.
    read: u64,
}

impl<R: Read> Whole<R> {
    /// `inner`, a file `len` octets long when it was opened.
    pub fn new(inner: R, len: u64) -> Whole<R> {
        Whole { inner, len, read: 0 }
    }
}

impl<R: Read> Read for Whole<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if n == 0 && !buf.is_empty() && self.read < self.len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                shrank(self.len, self.read),
            ));
        }
        Ok(n)
    }
}

/// A window of a memory-mapped URL list: its octets from an offset on.
pub struct Window {
    map: memmap2::Mmap,
    /// The file offset of the window's end.
    end: u64,
}

impl Window {
    /// The window's octets.
    pub fn data(&self) -> &[u8] {
        &self.map
    }

    /// The file offset just past the window.
    pub fn end(&self) -> u64 {
        self.end
    }
}

/// Maps octets `offset..` of `file` (a URL list named `name`, `len` octets
/// long when the run opened it), at least `min_len` of them or up to
/// `len`, read-only; with `populate` its pages are read in now (one call
/// instead of a fault per 64 KiB when they are first read), and the next
/// window's are asked for from the disk. `None` if the file system cannot
/// map the file (the caller reads it instead). Fails when the file is now
/// shorter than `len`: it was cut (rewritten in place) underneath the run.
/// A cut after this check raises SIGBUS when a page past the new end is
/// read, which `stop_on_sigbus` turns into a stop that removes the run's
/// temporary output.
#[allow(unsafe_code)]
pub fn map_window(
    file: &File,
    offset: u64,
    min_len: usize,
    len: u64,
    populate: bool,
    name: &str,
) -> Result<Option<Window>> {
    let now = file
        .metadata()
        .with_context(|| format!("cannot stat URL list '{name}'"))?
        .len();
    if now < len {
        bail!("URL list '{name}': {}", shrank(len, now));
    }
    if !stop_on_sigbus() {
        return Ok(None);
    }
    let end = len.min(offset.saturating_add(min_len as u64));
    let Ok(map_len) = usize::try_from(end - offset) else {
        return Ok(None);
    };
    let mut options = memmap2::MmapOptions::new();
    options.offset(offset).len(map_len);
    if populate {
        options.populate();
    }
    // SAFETY: the map is only read, as octets, for as long as `Window`
    // lives. Another process may write to the file meanwhile: the lines
    // read then are its new octets, as with `read`. One that cuts the
    // file makes a read past the new end raise SIGBUS (see above), never
    // return wrong octets.
    let map = unsafe { options.map(file) };
    let Ok(map) = map else { return Ok(None) };
    // Start reading the next window from disk while this one is decided.
    let next = end..len.min(end.saturating_add(min_len as u64));
    let _ = rustix::fs::fadvise(
        file,
        next.start,
        std::num::NonZeroU64::new(next.end - next.start),
        rustix::fs::Advice::WillNeed,
    );
    Ok(Some(Window { map, end }))
}

/// Reads all of `path` (`-`: stdin) into memory. Rules files and bundles
/// are read so: they are checked when loaded, and a copy cannot change
/// (or vanish, raising SIGBUS) underneath the run as a mapped file can, so
/// verdicts always come from the rules as checked. The cost is one copy at
/// load time (see docs/records).
pub fn read_owned(path: &Path, what: &str) -> Result<Bytes> {
    if is_stdin(path) {
        return read_all(io::stdin().lock(), 0, path, what);
    }
    let (file, len) = open(path, what)?;
    let hint = len.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    read_all(file, hint, path, what)
}

/// Reads `path` (`-`: stdin), a compiled file or a robots.txt, bounded
/// whatever it is: a rules file or bundle (told by its magic) up to the
/// length its header declares, a robots.txt up to `limits` (cut where the
/// dialect reads no further, refused where a cut could change a verdict).
/// `/dev/zero` given as a robots.txt costs at most the cap.
pub fn read_bounded(path: &Path, what: &str, limits: Limits) -> Result<Bytes> {
    let name = display(path);
    let read_error = || format!("cannot read {what} '{name}'");
    let raw: Box<dyn Read> = if is_stdin(path) {
        Box::new(io::stdin().lock())
    } else {
        Box::new(open(path, what)?.0)
    };
    let (head, rest) = peek(raw, 24).with_context(read_error)?;
    let cap = if InputKind::of(&head).is_compiled() && head.len() == 24 {
        // The file's length, as its header declares it, and one octet
        // more, so that a longer file is seen to be one (and refused when
        // loaded).
        u64::from_le_bytes(head[16..24].try_into().expect("8 octets"))
            .saturating_add(1)
    } else {
        limits.body as u64 + 1
    };
    let bytes =
        Aligned::read_from(rest.take(cap), 0).with_context(read_error)?;
    if InputKind::of(&bytes).is_compiled() || bytes.len() <= limits.body {
        return Ok(bytes);
    }
    let cut = limits
        .apply(bytes.to_vec())
        .map_err(|e| anyhow::anyhow!("{what} '{name}': {e}"))?;
    Ok(Aligned::from(&cut[..]))
}

/// Reads `path` (`-`: stdin), which must be a rules file or a bundle:
/// up to the length its header declares, and of anything else only a head
/// (64 KiB), enough for the loader to say what it is. `/dev/zero` given as
/// a rules file costs at most that.
pub fn read_compiled(path: &Path, what: &str) -> Result<Bytes> {
    read_bounded(path, what, Limits { body: 64 << 10, cut_ok: true })
}

fn read_all(
    r: impl Read,
    hint: usize,
    path: &Path,
    what: &str,
) -> Result<Bytes> {
    let bytes = Aligned::read_from(r, hint)
        .with_context(|| format!("cannot read {what} '{}'", display(path)))?;
    Ok(bytes)
}
