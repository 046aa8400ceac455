//! Owned input bytes that start 8-byte aligned, as the engine's zero-copy
//! loaders need, read straight into place.

use std::io::{self, Read};
use std::ops::Deref;

/// The bytes of a whole input: an owned copy that starts at an 8-byte
/// aligned address (as `Rules::from_bytes` requires). Nothing is
/// memory-mapped: a mapped file truncated underneath the run raises
/// SIGBUS (see `read_owned`).
pub type Bytes = Aligned;

impl Deref for Aligned {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Owned bytes in a `u64` buffer, so that they start 8-byte aligned; read
/// straight into it (one copy from the page cache, none after).
#[derive(Default)]
pub struct Aligned {
    pub(crate) words: Vec<u64>,
    pub(crate) len: usize,
}

impl Aligned {
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }

    /// Reads `r` to its end; `hint` is the expected length (a file's size),
    /// read in one go when right.
    pub(crate) fn read_from(
        mut r: impl Read,
        hint: usize,
    ) -> io::Result<Aligned> {
        let mut buf = Aligned::default();
        // One spare byte, so that a file read in full is seen to end
        // without growing the buffer.
        let mut cap = hint.saturating_add(1).max(64 << 10);
        loop {
            if buf.len == buf.words.len() * 8 {
                cap = cap.max(buf.len.saturating_mul(2));
                buf.words.resize(cap.div_ceil(8), 0);
            }
            let free =
                &mut bytemuck::cast_slice_mut::<u64, u8>(&mut buf.words)
                    [buf.len..];
            match r.read(free) {
                Ok(0) => return Ok(buf),
                Ok(n) => buf.len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl From<&[u8]> for Aligned {
    fn from(bytes: &[u8]) -> Aligned {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()]
            .copy_from_slice(bytes);
        Aligned { words, len: bytes.len() }
    }
}
