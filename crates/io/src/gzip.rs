//! Gzip members decoded one by one, from any member start: how a
//! multi-member gzip file (Common Crawl writes its CDXJ index so) is
//! decoded on several threads without a chance of decoding it wrong.
//!
//! A member's start cannot be told from its octets alone: `1f 8b 08` may
//! occur inside compressed data. So the octets where a member *may* start
//! ([`may_start_member`]: the magic and a valid flag octet) only cut a
//! block of the file into segments, each decoded on its own thread as if
//! a member started there, and the results are then chained from the
//! block's start, which is a member's start: a segment's result is used
//! only when the chain reaches the segment's start (so a member does
//! start there) and the segment decoded into whole members, each checked
//! against its CRC-32 and length, ending exactly at the next segment's
//! start. Where the chain finds a segment that did not, it decodes from
//! there on one thread ([`Members::decode`] tells where each member ends).
//! The octets out are always those a decoder reading the file from its
//! start gives: a false cut costs time, never a wrong line.

use std::fmt;

use flate2::{Decompress, FlushDecompress, Status};

/// Whether a gzip member may start at `data[at..]`: its magic, deflate,
/// and no reserved flag bit set (RFC 1952 section 2.3.1). True at every
/// member's start; elsewhere only by chance.
pub fn may_start_member(data: &[u8], at: usize) -> bool {
    matches!(data.get(at..at + 4), Some([0x1f, 0x8b, 8, flags]) if flags & 0xe0 == 0)
}

/// The first offset at or after `from` where a member may start
/// ([`may_start_member`]), if any.
pub fn next_member_start(data: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while at < data.len() {
        let i = at + memchr::memchr(0x1f, &data[at..])?;
        if may_start_member(data, i) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// How far [`Members::decode`] got.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Decoded {
    /// Every member whole: the data ended exactly at a member's end.
    Whole,
    /// The data ended inside the member that starts at this offset: what
    /// came before it is decoded, the rest needs more data.
    Cut(usize),
}

/// A member that cannot be decoded: where it starts and why.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct MemberError {
    /// The member's offset in the data given.
    pub at: usize,
    /// What is wrong, in words.
    pub why: String,
}

impl fmt::Display for MemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the gzip member at octet {} {}", self.at, self.why)
    }
}

impl std::error::Error for MemberError {}

/// A gzip member decoder, reused from member to member (its inflate state
/// is allocated once).
pub struct Members {
    inflate: Decompress,
}

impl Default for Members {
    fn default() -> Self {
        Members::new()
    }
}

impl Members {
    /// A decoder.
    pub fn new() -> Members {
        Members { inflate: Decompress::new(false) }
    }

    /// Decodes the gzip members of `data`, which starts with one, one
    /// after another, appending their octets to `out`; stops at the end
    /// of `data`. A member cut by the end of `data` is not appended
    /// ([`Decoded::Cut`]).
    ///
    /// # Errors
    ///
    /// A member whose header, deflate data, CRC-32 or length is wrong
    /// (`out` then holds the members before it).
    pub fn decode(
        &mut self,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Decoded, MemberError> {
        let mut at = 0;
        while at < data.len() {
            let kept = out.len();
            match self.member(&data[at..], out) {
                Ok(Some(len)) => at += len,
                Ok(None) => {
                    out.truncate(kept);
                    return Ok(Decoded::Cut(at));
                }
                Err(why) => {
                    out.truncate(kept);
                    return Err(MemberError { at, why });
                }
            }
        }
        Ok(Decoded::Whole)
    }

    /// Decodes the member that starts `data` into `out`: its length, or
    /// `None` if `data` ends inside it.
    fn member(
        &mut self,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>, String> {
        let Some(header) = header_len(data)? else { return Ok(None) };
        let from = out.len();
        self.inflate.reset(false);
        let mut input = &data[header..];
        loop {
            // Room for the output: CDXJ and URL lists compress 4 to 10
            // times; the buffer grows as it fills.
            out.reserve((input.len() * 4).clamp(32 << 10, 4 << 20));
            let (before_in, before_out) =
                (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress_vec(input, out, FlushDecompress::None)
                .map_err(|e| format!("is damaged ({e})"))?;
            let read = (self.inflate.total_in() - before_in) as usize;
            input = &input[read..];
            if status == Status::StreamEnd {
                break;
            }
            let wrote = self.inflate.total_out() - before_out;
            if input.is_empty() || (read == 0 && wrote == 0) {
                // The deflate data goes on past `data`.
                return Ok(None);
            }
        }
        let Some(trailer) = input.get(..8) else { return Ok(None) };
        let decoded = &out[from..];
        let crc = u32::from_le_bytes(trailer[..4].try_into().expect("4"));
        let len = u32::from_le_bytes(trailer[4..].try_into().expect("4"));
        if crc != crc32fast::hash(decoded) {
            return Err("is damaged (its CRC-32 does not match)".into());
        }
        if len != decoded.len() as u32 {
            return Err("is damaged (its length does not match)".into());
        }
        Ok(Some(data.len() - input.len() + 8))
    }
}

/// The length of the member header that starts `data` (RFC 1952 section
/// 2.3), `None` if `data` ends inside it.
fn header_len(data: &[u8]) -> Result<Option<usize>, String> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if data.len() < 10 {
        return match data.starts_with(&[0x1f, 0x8b][..data.len().min(2)]) {
            true => Ok(None),
            false => Err("does not start with gzip's magic number".into()),
        };
    }
    if !may_start_member(data, 0) {
        return Err("does not start with a gzip member header".into());
    }
    let flags = data[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let Some(len) = data.get(at..at + 2) else { return Ok(None) };
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let Some(nul) = data.get(at..).and_then(|d| memchr::memchr(0, d))
            else {
                return Ok(None);
            };
            at += nul + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    Ok((at <= data.len()).then_some(at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn member(text: &[u8]) -> Vec<u8> {
        let mut gz = flate2::GzBuilder::new()
            .filename("name")
            .comment("a comment")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn decodes_members_and_tells_where_they_are_cut() {
        let (a, b) = (member(b"first\n"), member(b"second\n"));
        let both = [&a[..], &b[..]].concat();
        let mut out = Vec::new();
        let mut m = Members::new();
        assert_eq!(m.decode(&both, &mut out), Ok(Decoded::Whole));
        assert_eq!(out, b"first\nsecond\n");
        for cut in 1..b.len() {
            out.clear();
            let data = &both[..a.len() + cut];
            assert_eq!(m.decode(data, &mut out), Ok(Decoded::Cut(a.len())));
            assert_eq!(out, b"first\n");
        }
        assert_eq!(next_member_start(&both, 1), Some(a.len()));
        // A damaged member: an error that says where it starts.
        let mut bad = both.clone();
        let last = a.len() + b.len() - 9;
        bad[last] ^= 0x55;
        out.clear();
        let e = m.decode(&bad, &mut out).unwrap_err();
        assert_eq!(e.at, a.len());
        assert_eq!(out, b"first\n");
        let e = m.decode(b"not gzip at all", &mut out).unwrap_err();
        assert_eq!(e.at, 0);
    }
}
