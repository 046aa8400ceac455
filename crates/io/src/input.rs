//! The URL lists of `filter` and `shard`: each opened and checked before
//! any output (a missing file, a directory, a compiled rules file or
//! bundle in the wrong place, one stream named twice), then read when its
//! turn comes: a plain regular file memory-mapped, anything else read as
//! a stream, decompressed if it starts with a gzip or zstd magic number.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};

use robofilter::InputKind;

use crate::decompress::decoder;
use crate::path as files;

/// One input, checked before any output. Regular files are closed after
/// the check and opened again when their turn comes, so that many inputs
/// do not each hold a descriptor (EMFILE); a plain one is then
/// memory-mapped, which spares the copy a read makes (see docs/records,
/// and [`crate::map_window`] for a file cut underneath the run).
pub enum Input {
    /// Stdin, a pipe or a FIFO (decompressed if need be), kept open.
    Stream(Box<dyn Read + Send>),
    /// A regular file, `len` octets long when checked; `plain` if it is
    /// not compressed.
    File { len: u64, plain: bool },
}

impl Input {
    /// Opens `path` (`-`: stdin), telling its compression.
    pub fn open(path: &Path) -> Result<Input> {
        const WHAT: &str = "URL list";
        let name = files::display(path);
        if files::is_stdin(path) {
            let stdin = Box::new(io::BufReader::new(io::stdin()));
            return Ok(Input::Stream(decompress(stdin, &name)?));
        }
        let (file, len) = files::open(path, WHAT)?;
        let Some(len) = len else {
            let stream = Box::new(io::BufReader::new(file));
            return Ok(Input::Stream(decompress(stream, &name)?));
        };
        if len == 0 {
            return Ok(Input::File { len, plain: true });
        }
        let mut reader = io::BufReader::new(file);
        let head = reader
            .fill_buf()
            .with_context(|| format!("cannot read URL list '{name}'"))?;
        refuse_compiled(InputKind::of(head), &name)?;
        let plain = !InputKind::of(head).is_compressed();
        if !plain {
            // A compressed rules file or bundle is refused before any
            // output too: its decompressed head is read now (and again when
            // its turn comes, from the file opened again).
            decompress(Box::new(reader), &name)?;
        }
        Ok(Input::File { len, plain })
    }

    /// The length of a plain regular file.
    pub fn plain_len(&self) -> Option<u64> {
        match *self {
            Input::File { len, plain: true } => Some(len),
            _ => None,
        }
    }

    /// The input's octets: a plain regular file is opened again, to be
    /// memory-mapped; anything else is read (and decompressed).
    pub fn into_feed(self, path: &Path) -> Result<Feed> {
        let len = match self {
            Input::File { len, plain: true } => len,
            Input::File { len, plain: false } => {
                return gzip_or_stream(path, len);
            }
            Input::Stream(_) => {
                return Ok(Feed::Stream(self.into_reader(path)?));
            }
        };
        let (file, now) = reopen(path, len)?;
        let mut head = [0; 4];
        let head_len = now.unwrap_or(0).min(4) as usize;
        std::os::unix::fs::FileExt::read_exact_at(
            &file,
            &mut head[..head_len],
            0,
        )
        .with_context(|| {
            format!("cannot read URL list '{}'", files::display(path))
        })?;
        // Still plain (it may have been rewritten since it was checked).
        // An empty one is read: a file whose size says 0 may still have
        // octets to read (procfs).
        match now {
            Some(now)
                if now > 0
                    && !InputKind::of(&head[..head_len]).is_compressed() =>
            {
                return Ok(Feed::Mapped { file, len: now });
            }
            _ => {}
        }
        Ok(Feed::Stream(file_reader(file, now, path)?))
    }

    /// The input's octets, decompressed: a regular file is opened again.
    pub fn into_reader(self, path: &Path) -> Result<Box<dyn Read + Send>> {
        match self {
            Input::Stream(r) => Ok(r),
            Input::File { len, .. } => {
                let (file, now) = reopen(path, len)?;
                file_reader(file, now, path)
            }
        }
    }
}

/// Fails if one stream is among `inputs` (each a path and the role it
/// plays, `URL list` or the rules') twice: stdin (`-`, or a name for it
/// such as `/dev/stdin`), or a FIFO or socket, named twice. A stream can
/// be read once: each reading would take part of its octets, spliced
/// where the other stopped (or one would find it read to its end already).
/// A regular file or a device named twice is read twice, whole.
pub fn check_streams_once(inputs: &[(&Path, &str)]) -> Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // The identity of a stream: its device and inode (a pipe has them
    // too); `None` for anything else, or a path that cannot be looked at
    // (its open reports that).
    let stream = |path: &Path| -> Option<(u64, u64)> {
        if files::is_stdin(path) {
            // One stream even when it is a regular file: every reading of
            // `-` shares its offset.
            let st = rustix::fs::fstat(io::stdin()).ok()?;
            return Some((st.st_dev, st.st_ino));
        }
        let meta = std::fs::metadata(path).ok()?;
        let t = meta.file_type();
        (t.is_fifo() || t.is_socket()).then(|| (meta.dev(), meta.ino()))
    };
    let mut seen: Vec<((u64, u64), &Path, &str)> = Vec::new();
    for &(path, role) in inputs {
        let Some(id) = stream(path) else { continue };
        if let Some(&(_, first, first_role)) =
            seen.iter().find(|(s, ..)| *s == id)
        {
            let (first, again) = (files::display(first), files::display(path));
            let what = match (first == again, first_role == role) {
                (true, true) => "is given twice".to_string(),
                _ => {
                    format!("is the same stream as the {first_role} '{first}'")
                }
            };
            bail!(
                "{role} '{again}' {what}: a stream (stdin, a pipe, a FIFO) \
                 can be read only once; name it once"
            );
        }
        seen.push((id, path, role));
    }
    Ok(())
}

/// The reader of a URL list file opened again (`now` octets long, if it is
/// still a regular file), decompressed, which fails if the file ends
/// before that length ([`crate::Whole`]).
fn file_reader(
    file: File,
    now: Option<u64>,
    path: &Path,
) -> Result<Box<dyn Read + Send>> {
    let file = crate::read::Whole::new(file, now.unwrap_or(0));
    decompress(Box::new(io::BufReader::new(file)), &files::display(path))
}

/// Opens the URL list `path`, `len` octets long when it was checked, again
/// when its turn comes: the file and its length now (`None` if it is no
/// longer a regular file). A file grown since is read as far as it goes;
/// one that is shorter was cut underneath the run, an error.
fn reopen(path: &Path, len: u64) -> Result<(File, Option<u64>)> {
    let (file, now) = files::open(path, "URL list")?;
    match now {
        Some(now) if now < len => {
            let name = files::display(path);
            bail!("URL list '{name}': {}", files::shrank(len, now))
        }
        _ => Ok((file, now)),
    }
}

/// A compressed regular file opened again: its gzip octets as they are
/// ([`Feed::Gzip`]) if it is gzip, else decompressed.
fn gzip_or_stream(path: &Path, len: u64) -> Result<Feed> {
    let (file, now) = reopen(path, len)?;
    let name = files::display(path);
    let file = crate::read::Whole::new(file, now.unwrap_or(0));
    let (head, raw) = crate::decompress::peek(file, 4)
        .with_context(|| format!("cannot read URL list '{name}'"))?;
    let raw = io::BufReader::new(raw);
    if InputKind::of(&head) == InputKind::Gzip && now.is_some() {
        return Ok(Feed::Gzip(Box::new(raw)));
    }
    Ok(Feed::Stream(decompress(Box::new(raw), &name)?))
}

/// A URL list's octets as the run reads them.
pub enum Feed {
    /// A plain regular file of `len` octets, memory-mapped window by
    /// window.
    Mapped { file: File, len: u64 },
    /// A gzip regular file, not decompressed: its members are decoded
    /// in parallel ([`crate::Members`]).
    Gzip(Box<dyn Read + Send>),
    /// Anything else, read in blocks.
    Stream(Box<dyn Read + Send>),
}

/// Fails if a URL list starts with the magic of a rules file or a bundle:
/// read as text, its lines would all be counted invalid and the run would
/// succeed; most likely the files were given in the wrong order.
fn refuse_compiled(kind: InputKind, name: &str) -> Result<()> {
    if kind.is_compiled() {
        bail!(
            "URL list '{name}' is {kind}, not a list of URLs; the rules or \
             bundle go first: `robofilter filter RULES --agent NAME FILE...`"
        );
    }
    Ok(())
}

/// Wraps `r` in a decoder if it starts with a gzip or zstd magic number,
/// refusing a rules file or bundle ([`refuse_compiled`]) whether it is
/// compressed or not.
fn decompress(
    r: Box<dyn BufRead + Send>,
    name: &str,
) -> Result<Box<dyn Read + Send>> {
    let (raw, decoded, reader) = decoder(r, name, "URL list")?;
    refuse_compiled(raw, name)?;
    refuse_compiled(decoded, name)?;
    Ok(reader)
}
