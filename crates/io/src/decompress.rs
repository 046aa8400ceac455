//! Decompression, in one place: a stream that starts with a gzip or zstd
//! magic number read through its decoder, with errors that say how far it
//! got; and the first octets of a stream looked at without losing them.

use std::io::{self, BufRead, Read};

use anyhow::{Context, Result};
use robofilter::InputKind;

/// A reader whose first octets were looked at ([`peek`]): those octets,
/// then the rest.
pub type Peeked<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// The first `n` octets of `r` (fewer only where it ends), read whole even
/// from a pipe that gives them a few at a time, and `r` with them put back
/// in front: how a stream's magic bytes are looked at.
pub fn peek<R: Read>(mut r: R, n: usize) -> io::Result<(Vec<u8>, Peeked<R>)> {
    let mut head = Vec::with_capacity(n);
    (&mut r).take(n as u64).read_to_end(&mut head)?;
    Ok((head.clone(), io::Cursor::new(head).chain(r)))
}

/// How much of a stream [`decoder`] reads up front, raw and decompressed:
/// more than the longest magic it looks for.
pub const HEAD: usize = 64;

/// `r` (the file `name`, a `what` such as "URL list") read through a
/// decoder if it starts with a gzip or zstd magic number, else as it is.
/// Returns the kind of the raw stream's head and of the decompressed
/// stream's head ([`InputKind::of`]), so that the caller can refuse what
/// it cannot use (a compiled file, a stream compressed twice).
pub fn decoder(
    r: Box<dyn BufRead + Send>,
    name: &str,
    what: &str,
) -> Result<(InputKind, InputKind, Box<dyn Read + Send>)> {
    let read_error = || format!("cannot read {what} '{name}'");
    let (head, raw) = peek(r, HEAD).with_context(read_error)?;
    let kind = InputKind::of(&head);
    let inner: Box<dyn Read + Send> = match kind {
        // Multi-member: concatenated gzip files are one stream.
        InputKind::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        InputKind::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(raw).with_context(
                || format!("cannot start zstd decoding of '{name}'"),
            )?,
        ),
        _ => return Ok((kind, kind, Box::new(raw))),
    };
    let tool = kind.tool().unwrap_or("gzip");
    let decoder = Decoded { inner, tool, read: 0 };
    let (head, decoded) = peek(decoder, HEAD)
        .with_context(|| format!("cannot decompress {what} '{name}'"))?;
    Ok((kind, InputKind::of(&head), Box::new(decoded)))
}

/// `bytes` decompressed, if they start with a gzip or zstd magic number
/// (else `None`): at most one octet more than `limit`, so that the caller
/// can tell a body over its cap. For bodies held in memory (a manifest's,
/// a WARC record's, a fetched one's).
pub fn decompress_bytes(bytes: &[u8], limit: u64) -> Result<Option<Vec<u8>>> {
    let kind = InputKind::of(bytes);
    if !kind.is_compressed() {
        return Ok(None);
    }
    let r: Box<dyn BufRead + Send> = Box::new(io::Cursor::new(bytes.to_vec()));
    let (_, _, mut decoded) = decoder(r, "body", "body")?;
    let mut out = Vec::new();
    (&mut decoded)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .context("cannot decompress the body")?;
    Ok(Some(out))
}

/// A decoder whose errors say how far it got and how to check the file (a
/// damaged stream is found out when its checksum fails, at the end of a
/// gzip member: lines decoded from the damage may have been decided and
/// written by then).
struct Decoded {
    inner: Box<dyn Read + Send>,
    tool: &'static str,
    /// Decompressed octets read so far.
    read: u64,
}

impl Read for Decoded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!(
                    "{e}, after {} decompressed octets: the file is damaged \
                     or cut (`{} -t FILE` checks it)",
                    self.read, self.tool
                ),
            )),
        }
    }
}
