//! The file formats' one home: the layouts, constants, checksums and
//! bounds-checked little-endian reads that the writers and readers of rules
//! files and bundles share.
//!
//! # Rules file layout (format version 3)
//!
//! A rules file is a 64-byte header, a section directory, and sections, all
//! little-endian, every section 8-byte aligned (the engines section
//! 64-byte aligned), then optionally the *side section* (below). A section
//! with no record is left out of the directory and reads as empty:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ROBOFLTR` |
//! | 8 | 4 | endianness marker `0x0000FEFF` |
//! | 12 | 4 | format version |
//! | 16 | 8 | file length |
//! | 24 | 4 | CRC-32 of the file without its side section (octets `0..length - side length`), computed with this field zeroed |
//! | 28 | 1 | dialect (0 google, 1 rfc9309) |
//! | 29 | 3 | reserved, zero |
//! | 32 | 4 | parse limit in octets (0: none) |
//! | 36 | 4 | number of sections |
//! | 40 | 4 | build option: DFA state budget per group |
//! | 44 | 4 | side section length (0: none) |
//! | 48 | 8 | build option: DFA work budget per group |
//! | 56 | 8 | build option: DFA byte budget per group (0: none recorded) |
//! | 64 | 24 x n | section directory: tag (4 ASCII), reserved u32, offset u64, length u64 |
//!
//! Sections hold fixed-size records of `u32` fields (see the `*_REC` constants
//! and the readers in `rules.rs`), so any record is reachable in O(1) without
//! decoding the file. Unknown section tags are skipped, so later versions can
//! add sections without breaking older readers of the same version.
//!
//! Crawl-delay records are line, value (offset, length), the group's
//! `user-agent` values joined by `\n` (offset, length), and the index of
//! the group in the robots.txt (`NO_GROUP`: before any group).
//!
//! ## The side section (`XTRA`, version 2)
//!
//! The robots.txt lines no verdict uses and that have no section of their
//! own (Content-Signal, Clean-param, Host, unknown keys...), for `inspect`
//! only. It is the file's last section, listed in the directory like the
//! others, but outside the header's checksum: loading a rules file (as
//! `filter` does for each bundle member) neither reads nor checksums it.
//! It carries its own checksum, checked by `Rules::other_lines`:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | CRC-32 of the section's octets `4..` |
//! | 4 | 4 | record count `n` |
//! | 8 | 32 x n | records: line, group index in the robots.txt (`NO_GROUP`: none), key (offset, length), value (offset, length), the group's `user-agent` values joined by `\n` (offset, length) |
//! | 8 + 32 n | .. | strings: the offsets above count from here |
//!
//! A file with no such line has no side section (length 0, no `XTRA` entry).
//!
//! # Bundle layout (bundle format version 3)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ROBOBNDL` |
//! | 8 | 4 | endianness marker `0x0000FEFF` |
//! | 12 | 4 | bundle format version |
//! | 16 | 8 | file length |
//! | 24 | 4 | CRC-32 of the index (octets `0..index_len`), this field zeroed |
//! | 28 | 1 | dialect (0 google, 1 rfc9309) |
//! | 29 | 3 | reserved, zero |
//! | 32 | 8 | index length |
//! | 40 | 4 | host count `h` |
//! | 44 | 4 | member count `m` |
//! | 48 | 4 | hash slot count `s` (a power of two, `s > h`) |
//! | 52 | 4 | cause count `c` (version 4; zero in version 3) |
//! | 56 | 8 | reserved, zero |
//! | 64 | 16 x h | hosts, sorted by name: name offset, name length, entry, status |
//! | .. | 4 x s | hash slots: host index + 1, or 0 (empty) |
//! | .. | 16 x m | members: offset (u64), length (u64), 64-byte aligned |
//! | .. | 16 x c | causes, by increasing host index: host index, text offset, text length, zero |
//! | .. | .. | host names and cause texts |
//! | index_len | .. | members, each a rules file with its own checksum (and side section) |
//!
//! A host's *entry* is a member index, or `ALLOW_ALL` / `DISALLOW_ALL`.
//! Its *status* is the fetch outcome: an HTTP status, `STATUS_UNREACHABLE`,
//! `STATUS_REDIRECTS` or `STATUS_UNREADABLE`. The hash is `host_hash` (in
//! `bundle.rs`) of the name; slots are probed linearly from `hash & (s - 1)`.
//! A *cause* is the recorded reason, in words, why a host whose entry is
//! `ALLOW_ALL` or `DISALLOW_ALL` got no rules (say, "connection refused"):
//! UTF-8 text of at most `CAUSE_MAX` octets, stored after the host names.

use core::ops::RangeInclusive;

use crate::error::LoadError;

pub(crate) use crate::kind::MAGIC;
pub(crate) const ENDIAN_MARK: u32 = 0x0000_FEFF;
pub(crate) const HEADER_LEN: usize = 64;
pub(crate) const DIR_REC: usize = 24;
pub(crate) const CHECKSUM_AT: usize = 24;
/// Rules file sections start at multiples of 8 (their records are read
/// field by field; the automata need 4), except the engines section.
pub(crate) const SECTION_ALIGN: usize = 8;
/// The engines section, and each engine in it, start at multiples of 64:
/// an automaton's table starts on a cache line.
pub(crate) const ENGINES_ALIGN: usize = 64;
/// Bundle members start at multiples of 64 (so their engines stay
/// cache-line aligned).
pub(crate) const MEMBER_ALIGN: usize = 64;

pub(crate) const TAG_STRINGS: [u8; 4] = *b"STRS";
pub(crate) const TAG_ROBOTS: [u8; 4] = *b"ROBO";
pub(crate) const TAG_AGENTS: [u8; 4] = *b"AGNT";
pub(crate) const TAG_GROUPS: [u8; 4] = *b"GRUP";
pub(crate) const TAG_RULES: [u8; 4] = *b"RULE";
pub(crate) const TAG_ENGINES: [u8; 4] = *b"ENGN";
pub(crate) const TAG_SITEMAPS: [u8; 4] = *b"SMAP";
pub(crate) const TAG_DELAYS: [u8; 4] = *b"DLAY";
pub(crate) const TAG_DIAGNOSTICS: [u8; 4] = *b"DIAG";
pub(crate) const TAG_SIDE: [u8; 4] = *b"XTRA";
/// Where the header stores the side section's length.
pub(crate) const SIDE_LEN_AT: usize = 44;
/// The side section's own header: CRC-32, record count.
pub(crate) const SIDE_HEADER_LEN: usize = 8;

/// Record sizes in octets (all fields are `u32`).
pub(crate) const ROBOTS_REC: usize = 48;
pub(crate) const AGENT_REC: usize = 16;
pub(crate) const GROUP_REC: usize = 32;
pub(crate) const RULE_REC: usize = 16;
/// A rule record is line, value offset, pattern offset, and one field
/// packing the value's length (bits 0-14), the kind (bit 15: 0 Allow, 1
/// Disallow) and the pattern's length (bits 16-31). A pattern's precedence
/// is its length.
pub(crate) const RULE_VALUE_MAX: u32 = (1 << 15) - 1;
#[cfg(feature = "compile")]
pub(crate) const RULE_PATTERN_MAX: u32 = (1 << 16) - 1;
pub(crate) const SITEMAP_REC: usize = 16;
pub(crate) const DELAY_REC: usize = 24;
pub(crate) const DIAG_REC: usize = 16;
pub(crate) const OTHER_REC: usize = 32;

/// The rules file format version this crate reads and writes.
///
/// Version 2 added the side section and the crawl-delay records' group;
/// version 3, each distinct string stored once, sections 8-byte aligned
/// (engines 64), empty sections left out, and 16-octet rule records.
pub const FORMAT_VERSION: u32 = 3;

/// Engine codes stored per group.
pub(crate) const ENGINE_DFA: u32 = 1;
pub(crate) const ENGINE_DIRECT: u32 = 2;
pub(crate) const ENGINE_ALLOW_ALL: u32 = 3;
pub(crate) const ENGINE_SPLIT: u32 = 4;

/// Why a group uses the direct engine.
#[cfg(feature = "compile")]
pub(crate) const NOTE_NONE: u32 = 0;
pub(crate) const NOTE_STATES: u32 = 1;
pub(crate) const NOTE_WORK: u32 = 2;
pub(crate) const NOTE_BYTES: u32 = 3;
/// The file's work budget was spent by earlier groups.
pub(crate) const NOTE_FILE_WORK: u32 = 4;
/// A rule has more `*` than a DFA is attempted for.
pub(crate) const NOTE_RULE_STARS: u32 = 5;

/// The bundle format version this crate writes.
/// Version 2: its members are rules files of format version 2 (so an
/// older reader refuses the bundle when opening it, not at its first
/// member); version 3, of format version 3; version 4 adds the causes
/// table (why a host got no rules).
pub const BUNDLE_FORMAT_VERSION: u32 = 4;
/// The oldest bundle format version this crate reads: a version 3 bundle
/// is a version 4 bundle without causes.
pub const BUNDLE_FORMAT_OLDEST: u32 = 3;

pub(crate) use crate::kind::BUNDLE_MAGIC;
pub(crate) const HOST_REC: usize = 16;
pub(crate) const MEMBER_REC: usize = 16;
pub(crate) const CAUSE_REC: usize = 16;
/// The longest cause a bundle stores, in octets (a longer one is cut at a
/// character boundary).
pub(crate) const CAUSE_MAX: usize = 200;

/// Bundle entry code: every URL of the host is allowed.
pub(crate) const ALLOW_ALL: u32 = u32::MAX;
/// Bundle entry code: every URL of the host is disallowed.
pub(crate) const DISALLOW_ALL: u32 = u32::MAX - 1;
/// Bundle status code: the host could not be reached (no HTTP status).
pub(crate) const STATUS_UNREACHABLE: u32 = 0;
/// Bundle status code: more than five redirects.
pub(crate) const STATUS_REDIRECTS: u32 = 1;
/// Bundle status code: what was given for the host could not be read when
/// the bundle was built (a bad manifest line, an unreadable file, a status
/// outside 100-599).
pub(crate) const STATUS_UNREADABLE: u32 = 2;

/// "No group": the agent gets no rules at all.
pub(crate) const NO_GROUP: u32 = u32::MAX;

/// The CRC-32 of a whole file with its checksum field taken as zero.
pub(crate) fn checksum(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..CHECKSUM_AT]);
    h.update(&[0; 4]);
    h.update(&bytes[CHECKSUM_AT + 4..]);
    h.finalize()
}

/// The checks every container starts with: length, magic, endianness
/// marker, version (`version_error` names the container), file length.
pub(crate) fn check_header(
    bytes: &[u8],
    magic: &[u8; 8],
    versions: RangeInclusive<u32>,
    version_error: fn(u32, (u32, u32)) -> LoadError,
) -> Result<(), LoadError> {
    check_header_of(bytes, magic, versions, version_error, bytes.len() as u64)
}

/// [`check_header`] of a container `file_len` octets long, of which
/// `bytes` are the start (at least the header).
pub(crate) fn check_header_of(
    bytes: &[u8],
    magic: &[u8; 8],
    versions: RangeInclusive<u32>,
    version_error: fn(u32, (u32, u32)) -> LoadError,
    file_len: u64,
) -> Result<(), LoadError> {
    if bytes.len() < HEADER_LEN {
        return Err(LoadError::too_short(bytes.len()));
    }
    if &bytes[..8] != magic {
        return Err(LoadError::magic());
    }
    if u32_at(bytes, 8) != ENDIAN_MARK {
        return Err(LoadError::endianness());
    }
    let found = u32_at(bytes, 12);
    if !versions.contains(&found) {
        let read = (*versions.start(), *versions.end());
        return Err(version_error(found, read));
    }
    let header_len = u64_at(bytes, 16);
    if header_len != file_len {
        let actual = usize::try_from(file_len).unwrap_or(usize::MAX);
        return Err(LoadError::length(header_len, actual));
    }
    Ok(())
}

/// The checksum over `covered` (a prefix of the container, its checksum
/// field at [`CHECKSUM_AT`]), then the alignment zero-copy views need and
/// this machine's byte order.
pub(crate) fn check_integrity(covered: &[u8]) -> Result<(), LoadError> {
    let stored = u32_at(covered, CHECKSUM_AT);
    let computed = checksum(covered);
    if stored != computed {
        return Err(LoadError::checksum(stored, computed));
    }
    if covered.as_ptr() as usize % 8 != 0 {
        return Err(LoadError::alignment(covered.as_ptr() as usize));
    }
    if cfg!(target_endian = "big") {
        return Err(LoadError::big_endian());
    }
    Ok(())
}

#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A table of fixed-size records of `u32` fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Table<'a> {
    bytes: &'a [u8],
    rec: usize,
}

impl<'a> Table<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        rec: usize,
        name: &str,
    ) -> Result<Table<'a>, LoadError> {
        if bytes.len() % rec != 0 {
            return Err(LoadError::structure(format!(
                "{name} table length {} is not a multiple of {rec}",
                bytes.len()
            )));
        }
        Ok(Table { bytes, rec })
    }

    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / self.rec
    }

    /// Field `field` (a `u32` index) of record `i`. Callers check `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize, field: usize) -> u32 {
        u32_at(self.bytes, i * self.rec + field * 4)
    }
}

/// Appends `u32` fields as one record.
#[cfg(feature = "compile")]
pub(crate) fn push_rec(out: &mut Vec<u8>, fields: &[u32]) {
    for f in fields {
        out.extend_from_slice(&f.to_le_bytes());
    }
}
