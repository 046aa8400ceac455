//! Multi-host bundles: the rules of many hosts in one file.
//!
//! A crawl frontier mixes URLs of many hosts, each with its own robots.txt
//! (or a failed fetch of it). A *bundle* maps each host's authority to how its
//! URLs are decided:
//!
//! - a compiled robots.txt (a *member*: a complete rules file, as written by
//!   [`Compiler::compile`](crate::Compiler::compile)). Identical robots.txt
//!   bodies are compiled and stored once, however many hosts serve them;
//! - *allow all*, when the fetch said the file is unavailable (4xx except
//!   429, an unresolved redirect, more than five redirects);
//! - *disallow all*, when the host was unreachable (5xx, 429, a network
//!   failure).
//!
//! A host without an entry has no verdict: callers report it as `unknown`,
//! never as a silent allow.
//!
//! # Loading costs O(1) in the number of members
//!
//! [`Bundle::from_bytes`] checks the header, the checksum of the *index*
//! (header, host table, hash slots, member table and host names) and the
//! range of every index entry, reading nothing outside the index. Members
//! are checked (their own checksum and structure) only when
//! [`Bundle::member`] loads one, so opening costs a pass over the index
//! (about 1.5 MB for 70,000 hosts), not over the file, and a lookup never
//! decodes anything.
//!
//! # Layout (bundle format version 1)
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
//! | 52 | 12 | reserved, zero |
//! | 64 | 16 x h | hosts, sorted by name: name offset, name length, entry, status |
//! | .. | 4 x s | hash slots: host index + 1, or 0 (empty) |
//! | .. | 16 x m | members: offset (u64), length (u64), 64-byte aligned |
//! | .. | .. | host names |
//! | index_len | .. | members, each a rules file with its own checksum |
//!
//! A host's *entry* is a member index, or [`ALLOW_ALL`] / [`DISALLOW_ALL`].
//! Its *status* is the fetch outcome: an HTTP status, [`STATUS_UNREACHABLE`]
//! or [`STATUS_REDIRECTS`]. The hash is [`host_hash`] of the name; slots are
//! probed linearly from `hash & (s - 1)`.

use core::fmt;

use crate::Dialect;
use crate::error::LoadError;
use crate::rules::Rules;
use crate::wire::{self, Table};

/// The bundle format version this crate reads and writes.
pub const BUNDLE_FORMAT_VERSION: u32 = 1;

pub(crate) const BUNDLE_MAGIC: &[u8; 8] = b"ROBOBNDL";
pub(crate) const HOST_REC: usize = 16;
pub(crate) const MEMBER_REC: usize = 16;

/// Entry code: every URL of the host is allowed.
const ALLOW_ALL: u32 = u32::MAX;
/// Entry code: every URL of the host is disallowed.
const DISALLOW_ALL: u32 = u32::MAX - 1;
/// Status code: the host could not be reached (no HTTP status).
const STATUS_UNREACHABLE: u32 = 0;
/// Status code: more than five redirects.
const STATUS_REDIRECTS: u32 = 1;

/// What a crawler got when it fetched a host's robots.txt.
///
/// [`Fetch::policy`] applies RFC 9309 §2.3.1 (see SEMANTICS.md §4a).
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Fetch {
    /// A response with this HTTP status, and its body (only used for 2xx).
    /// The crawler followed at most five redirects to get it.
    Http {
        /// The final HTTP status.
        status: u16,
        /// The body, exact bytes.
        body: Vec<u8>,
    },
    /// No response: DNS failure, connection refused or reset, timeout.
    Unreachable,
    /// More than five consecutive redirects.
    TooManyRedirects,
}

/// How a host's URLs are decided, by [`Fetch::policy`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Policy {
    /// By the robots.txt body.
    Rules,
    /// Every URL is allowed: the robots.txt is unavailable.
    AllowAll,
    /// Every URL is disallowed: the host is unreachable.
    DisallowAll,
}

impl Fetch {
    /// The outcome of an HTTP fetch that followed `redirects` redirects:
    /// more than five makes it [`Fetch::TooManyRedirects`] whatever the
    /// status.
    pub fn http(status: u16, redirects: u32, body: Vec<u8>) -> Fetch {
        if redirects > 5 {
            Fetch::TooManyRedirects
        } else {
            Fetch::Http { status, body }
        }
    }

    /// RFC 9309 §2.3.1:
    ///
    /// - 2xx: the body's rules;
    /// - 3xx (a redirect the crawler did not follow to its end) and more
    ///   than five redirects: unavailable, allow all;
    /// - 4xx except 429: unavailable, allow all;
    /// - 429, 5xx and no response: unreachable, disallow all;
    /// - 1xx (not a final response): treated as unreachable, disallow
    ///   all. ([`BundleBuilder::add`] rejects codes outside 100-599.)
    pub fn policy(&self) -> Policy {
        match *self {
            Fetch::Http { status, .. } => match status {
                200..=299 => Policy::Rules,
                429 => Policy::DisallowAll,
                300..=499 => Policy::AllowAll,
                _ => Policy::DisallowAll,
            },
            Fetch::TooManyRedirects => Policy::AllowAll,
            Fetch::Unreachable => Policy::DisallowAll,
        }
    }

    #[cfg(feature = "compile")]
    fn status_code(&self) -> u32 {
        match *self {
            Fetch::Http { status, .. } => u32::from(status),
            Fetch::Unreachable => STATUS_UNREACHABLE,
            Fetch::TooManyRedirects => STATUS_REDIRECTS,
        }
    }
}

/// The fetch outcome stored for a host.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum FetchStatus {
    /// The final HTTP status.
    Http(u16),
    /// The host could not be reached.
    Unreachable,
    /// More than five redirects.
    TooManyRedirects,
}

impl fmt::Display for FetchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchStatus::Http(s) => write!(f, "HTTP {s}"),
            FetchStatus::Unreachable => f.write_str("unreachable"),
            FetchStatus::TooManyRedirects => {
                f.write_str("more than five redirects")
            }
        }
    }
}

/// How one host's URLs are decided.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum HostRules {
    /// By the member rules file with this index ([`Bundle::member`]).
    Member(usize),
    /// Every URL is allowed (the robots.txt is unavailable).
    AllowAll,
    /// Every URL is disallowed (the host is unreachable).
    DisallowAll,
}

/// One host of a bundle.
#[derive(Clone, Copy, Debug)]
pub struct HostInfo<'a> {
    name: &'a [u8],
    rules: HostRules,
    status: FetchStatus,
}

impl<'a> HostInfo<'a> {
    /// The authority: lower-case host, `:port` if not 80 or 443.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }
    /// How the host's URLs are decided.
    pub fn rules(&self) -> HostRules {
        self.rules
    }
    /// The fetch outcome.
    pub fn status(&self) -> FetchStatus {
        self.status
    }
}

/// A loaded bundle, borrowing its bytes.
///
/// # Example
///
/// ```
/// use robofilter::{
///     AlignedBytes, BundleBuilder, Bundle, Config, Fetch, HostRules, Verdict,
/// };
///
/// let mut b = BundleBuilder::new(Config::new());
/// b.add("shop.example", Fetch::http(200, 0, b"User-agent: *\nDisallow: /cart\n".to_vec()))?;
/// b.add("down.example", Fetch::Unreachable)?;
/// let bytes = AlignedBytes::from(&b.finish()?[..]);
/// let bundle = Bundle::from_bytes(bytes.as_bytes())?;
///
/// let mut key = Vec::new();
/// assert!(robofilter::url_authority(b"https://Shop.Example:443/cart", &mut key));
/// let host = bundle.host(bundle.find(&key).unwrap());
/// let HostRules::Member(m) = host.rules() else { unreachable!() };
/// let rules = bundle.member(m)?;
/// assert_eq!(rules.matcher("bot")?.decide(b"https://shop.example/cart"), Verdict::Disallow);
///
/// let down = bundle.host(bundle.find(b"down.example").unwrap());
/// assert_eq!(down.rules(), HostRules::DisallowAll);
/// assert!(bundle.find(b"other.example").is_none()); // unknown
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Bundle<'a> {
    bytes: &'a [u8],
    dialect: Dialect,
    hosts: Table<'a>,
    slots: Table<'a>,
    members: Table<'a>,
    names: &'a [u8],
}

impl<'a> Bundle<'a> {
    /// Whether `bytes` start like a bundle (its magic), as opposed to a
    /// single rules file.
    pub fn is_bundle(bytes: &[u8]) -> bool {
        bytes.starts_with(BUNDLE_MAGIC)
    }

    /// Loads a bundle, checking the header, the index checksum and every
    /// index entry. Members are checked when loaded by [`Bundle::member`].
    ///
    /// `bytes` must start at an 8-byte aligned address (a memory map or an
    /// [`AlignedBytes`](crate::AlignedBytes)).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] saying what is wrong. Never panics, for any input.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Bundle<'a>, LoadError> {
        wire::check_header(
            bytes,
            BUNDLE_MAGIC,
            BUNDLE_FORMAT_VERSION,
            LoadError::bundle_version,
        )?;
        let index_len = wire::u64_at(bytes, 32);
        if index_len < wire::HEADER_LEN as u64
            || index_len > bytes.len() as u64
        {
            return Err(LoadError::structure("bundle index length"));
        }
        let index = &bytes[..index_len as usize];
        wire::check_integrity(index)?;
        let dialect = Dialect::from_byte(bytes[28])
            .ok_or_else(|| LoadError::structure("unknown dialect code"))?;
        let host_len = wire::u32_at(bytes, 40) as usize;
        let member_len = wire::u32_at(bytes, 44) as usize;
        let slot_len = wire::u32_at(bytes, 48) as usize;
        if !slot_len.is_power_of_two() || slot_len <= host_len {
            return Err(LoadError::structure("bundle hash slot count"));
        }
        // Table extents follow from the counts; all must fit in the index,
        // and the host names take the rest of it.
        let lens =
            [host_len * HOST_REC, slot_len * 4, member_len * MEMBER_REC];
        let mut tables = [&index[..0]; 3];
        let mut rest = &index[wire::HEADER_LEN..];
        for (table, len) in tables.iter_mut().zip(lens) {
            if len > rest.len() {
                return Err(LoadError::structure("bundle index tables"));
            }
            (*table, rest) = rest.split_at(len);
        }
        let hosts = Table::new(tables[0], HOST_REC, "host")?;
        let slots = Table::new(tables[1], 4, "slot")?;
        let members = Table::new(tables[2], MEMBER_REC, "member")?;
        let names = rest;
        let bundle = Bundle { bytes, dialect, hosts, slots, members, names };
        bundle.validate()?;
        Ok(bundle)
    }

    fn validate(&self) -> Result<(), LoadError> {
        // Only the index is read here (a few octets per host), so that
        // opening does not touch the members' pages. What the checksum
        // covers is not re-derived: the sort order of the names and the
        // hash slots' placement only decide which host is found.
        let bad = |what: &str| Err(LoadError::structure(what.to_string()));
        for i in 0..self.hosts.len() {
            let (off, len) = (self.hosts.get(i, 0), self.hosts.get(i, 1));
            let end = (off as usize).checked_add(len as usize);
            if end.is_none_or(|e| e > self.names.len()) || len == 0 {
                return bad("host name out of range");
            }
            let entry = self.hosts.get(i, 2);
            if entry != ALLOW_ALL
                && entry != DISALLOW_ALL
                && entry as usize >= self.members.len()
            {
                return bad("host entry out of range");
            }
            if status_from(self.hosts.get(i, 3)).is_none() {
                return bad("host status");
            }
        }
        let mut used = 0;
        for s in 0..self.slots.len() {
            let v = self.slots.get(s, 0) as usize;
            if v > self.hosts.len() {
                return bad("hash slot out of range");
            }
            used += usize::from(v != 0);
        }
        if used != self.hosts.len() {
            return bad("hash slots do not cover the hosts");
        }
        // Members follow the index in order, 64-byte aligned, with less
        // than 64 octets of padding before each; the padding is checked to
        // be zero when the member is loaded. So every octet of the file is
        // covered by the index checksum, a member's checksum, or that check.
        let mut end = wire::u64_at(self.bytes, 32);
        for m in 0..self.members.len() {
            let (off, len) = self.member_extent(m);
            let next = off.checked_add(len);
            if off < end
                || off - end >= wire::SECTION_ALIGN as u64
                || off % wire::SECTION_ALIGN as u64 != 0
                || next.is_none_or(|e| e > self.bytes.len() as u64)
            {
                return bad("member out of bounds");
            }
            end = off + len;
        }
        if end != self.bytes.len() as u64 {
            return bad("bytes after the last member");
        }
        Ok(())
    }

    fn member_extent(&self, m: usize) -> (u64, u64) {
        let t = &self.members;
        (
            u64::from(t.get(m, 0)) | u64::from(t.get(m, 1)) << 32,
            u64::from(t.get(m, 2)) | u64::from(t.get(m, 3)) << 32,
        )
    }

    fn host_name(&self, i: usize) -> &'a [u8] {
        let (off, len) = (self.hosts.get(i, 0), self.hosts.get(i, 1));
        &self.names[off as usize..(off + len) as usize]
    }

    /// The dialect every member was compiled with.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The number of hosts.
    pub fn host_len(&self) -> usize {
        self.hosts.len()
    }

    /// The number of distinct compiled robots.txt files.
    pub fn member_len(&self) -> usize {
        self.members.len()
    }

    /// Host `i` (`i < host_len()`; hosts are sorted by name).
    ///
    /// # Panics
    ///
    /// If `i` is out of range.
    pub fn host(&self, i: usize) -> HostInfo<'a> {
        assert!(i < self.hosts.len(), "host index {i} out of range");
        let rules = match self.hosts.get(i, 2) {
            ALLOW_ALL => HostRules::AllowAll,
            DISALLOW_ALL => HostRules::DisallowAll,
            m => HostRules::Member(m as usize),
        };
        HostInfo {
            name: self.host_name(i),
            rules,
            status: status_from(self.hosts.get(i, 3)).expect("validated"),
        }
    }

    /// All hosts, sorted by name.
    pub fn hosts(&self) -> impl Iterator<Item = HostInfo<'a>> + '_ {
        (0..self.hosts.len()).map(move |i| self.host(i))
    }

    /// The index of the host with this authority, which must already be
    /// normalised (see [`url_authority`]). `None`: the bundle has no entry
    /// for it (the verdict is unknown).
    #[inline]
    pub fn find(&self, authority: &[u8]) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut s = host_hash(authority) as usize & mask;
        // At most every slot once: a slot table always has an empty slot,
        // but a damaged one must not loop.
        for _ in 0..self.slots.len() {
            let v = self.slots.get(s, 0) as usize;
            if v == 0 {
                return None;
            }
            if self.host_name(v - 1) == authority {
                return Some(v - 1);
            }
            s = (s + 1) & mask;
        }
        None
    }

    /// Loads member `m`, checking its checksum and structure.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if the member is damaged or was compiled with
    /// another dialect than the bundle says.
    ///
    /// # Panics
    ///
    /// If `m` is out of range.
    pub fn member(&self, m: usize) -> Result<Rules<'a>, LoadError> {
        assert!(m < self.members.len(), "member index {m} out of range");
        let (off, len) = self.member_extent(m);
        let gap_from = match m {
            0 => wire::u64_at(self.bytes, 32),
            _ => {
                let (prev_off, prev_len) = self.member_extent(m - 1);
                prev_off + prev_len
            }
        };
        if self.bytes[gap_from as usize..off as usize].iter().any(|&b| b != 0)
        {
            return Err(LoadError::structure(
                "non-zero padding before member",
            ));
        }
        let rules = Rules::from_bytes(
            &self.bytes[off as usize..(off + len) as usize],
        )?;
        if rules.dialect() != self.dialect {
            return Err(LoadError::structure("member dialect differs"));
        }
        Ok(rules)
    }

    /// The member's size in octets.
    pub fn member_size(&self, m: usize) -> usize {
        self.member_extent(m).1 as usize
    }
}

fn status_from(code: u32) -> Option<FetchStatus> {
    match code {
        STATUS_UNREACHABLE => Some(FetchStatus::Unreachable),
        STATUS_REDIRECTS => Some(FetchStatus::TooManyRedirects),
        c => u16::try_from(c)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .map(FetchStatus::Http),
    }
}

/// The bundle's host hash: 8 octets at a time, multiply and rotate
/// (FxHash's step), folded to 32 bits. Part of the file format.
#[inline]
pub fn host_hash(name: &[u8]) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = name.len() as u64;
    let mut chunks = name.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 octets"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    (h ^ h >> 32) as u32
}

/// Extracts a URL's authority as bundles name hosts, into `out`.
///
/// The URL must start with `scheme://`. The authority is what follows, up to
/// the first `/`, `?` or `#`, without user information (up to the last
/// `@`), lower-cased, without an empty port, `:80` on `http` or `:443` on
/// `https`. Returns `false` (and leaves `out` empty) if there is no
/// `scheme://` or the host is empty.
///
/// ```
/// let mut out = Vec::new();
/// assert!(robofilter::url_authority(b"HTTPS://User@WWW.Example.com:443/a", &mut out));
/// assert_eq!(out, b"www.example.com");
/// assert!(robofilter::url_authority(b"http://example.com:8080?q", &mut out));
/// assert_eq!(out, b"example.com:8080");
/// assert!(!robofilter::url_authority(b"/relative/path", &mut out));
/// ```
pub fn url_authority(url: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let is_scheme =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    let n = url.iter().take_while(|&&b| is_scheme(b)).count();
    if !url.first().is_some_and(u8::is_ascii_alphabetic)
        || !url[n..].starts_with(b"://")
    {
        return false;
    }
    let rest = &url[n + 3..];
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    // User information ends at the last `@`.
    let auth = match rest[..end].iter().rposition(|&b| b == b'@') {
        Some(at) => &rest[at + 1..end],
        None => &rest[..end],
    };
    out.extend_from_slice(auth);
    out.make_ascii_lowercase();
    let scheme = &url[..n];
    let default_port: &[u8] = if scheme.eq_ignore_ascii_case(b"http") {
        b"80"
    } else if scheme.eq_ignore_ascii_case(b"https") {
        b"443"
    } else {
        b""
    };
    let keep = strip_port(out, default_port).len();
    out.truncate(keep);
    !out.is_empty()
}

/// Drops an empty port or `:default` (if `default` is not empty). An IPv6
/// literal's colons are inside `[...]`.
fn strip_port<'u>(auth: &'u [u8], default: &[u8]) -> &'u [u8] {
    let host_end = match auth.first() {
        Some(b'[') => memchr::memchr(b']', auth).map_or(auth.len(), |i| i + 1),
        _ => memchr::memchr(b':', auth).unwrap_or(auth.len()),
    };
    let port = &auth[host_end..];
    match port.strip_prefix(b":") {
        Some(p) if p.is_empty() || (!default.is_empty() && p == default) => {
            &auth[..host_end]
        }
        _ => auth,
    }
}

/// Normalises a host name given by the user (a file name, a manifest
/// entry): lower-cased, without an empty port, `:80` or `:443` (the default
/// ports of http and https: bundles do not tell schemes apart).
///
/// # Errors
///
/// A message if the name is empty or contains `/`, `?`, `#`, `@`, a space
/// or a control octet.
pub fn normalize_host(name: &str) -> Result<String, String> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Err("empty host name".to_string());
    }
    if let Some(b) =
        bytes.iter().find(|&&b| b <= b' ' || b == 0x7f || b"/?#@".contains(&b))
    {
        return Err(format!(
            "host name '{}' contains {:?}, which cannot appear in an \
             authority",
            name.escape_debug(),
            char::from(*b)
        ));
    }
    let mut auth = strip_port(bytes, b"80");
    auth = strip_port(auth, b"443");
    if auth.is_empty() {
        return Err(format!("host name '{name}' has no host"));
    }
    Ok(String::from_utf8_lossy(auth).to_ascii_lowercase())
}

#[cfg(feature = "compile")]
pub use self::build::BundleBuilder;

#[cfg(feature = "compile")]
mod build {
    use std::collections::HashMap;

    use super::*;
    use crate::compile::{Compiler, Config};
    use crate::error::BuildError;
    use crate::wire::push_rec;

    /// Builds a bundle from hosts and their fetch outcomes.
    ///
    /// Every distinct robots.txt body is compiled once (in parallel with
    /// the `parallel` feature); hosts serving the same bytes share it.
    #[derive(Debug)]
    pub struct BundleBuilder {
        config: Config,
        hosts: HashMap<String, Fetch>,
    }

    impl BundleBuilder {
        /// A builder compiling robots.txt bodies with `config`.
        pub fn new(config: Config) -> BundleBuilder {
            BundleBuilder { config, hosts: HashMap::new() }
        }

        /// Adds a host (normalised by [`normalize_host`]) and its fetch
        /// outcome.
        ///
        /// # Errors
        ///
        /// If the name is not a valid authority or the host was already
        /// added.
        pub fn add(
            &mut self,
            host: &str,
            fetch: Fetch,
        ) -> Result<(), BuildError> {
            let name = normalize_host(host).map_err(BuildError::input)?;
            if let Fetch::Http { status, .. } = fetch {
                if !(100..=599).contains(&status) {
                    return Err(BuildError::input(format!(
                        "host '{name}': {status} is not an HTTP status \
                         (100-599)"
                    )));
                }
            }
            if self.hosts.contains_key(&name) {
                return Err(BuildError::input(format!(
                    "host '{name}' is given twice"
                )));
            }
            self.hosts.insert(name, fetch);
            Ok(())
        }

        /// The number of hosts added.
        pub fn len(&self) -> usize {
            self.hosts.len()
        }

        /// Whether no host was added.
        pub fn is_empty(&self) -> bool {
            self.hosts.is_empty()
        }

        /// Compiles every distinct body and writes the bundle.
        ///
        /// # Errors
        ///
        /// Only if a table would exceed the format's 32-bit counts.
        pub fn finish(self) -> Result<Vec<u8>, BuildError> {
            let mut hosts: Vec<(String, Fetch)> =
                self.hosts.into_iter().collect();
            hosts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            // Distinct bodies, in order of first use.
            let mut member_of: HashMap<&[u8], u32> = HashMap::new();
            let mut bodies: Vec<&[u8]> = Vec::new();
            let mut entries = Vec::with_capacity(hosts.len());
            for (_, fetch) in &hosts {
                let entry = match (fetch.policy(), fetch) {
                    (Policy::Rules, Fetch::Http { body, .. }) => {
                        *member_of.entry(body).or_insert_with(|| {
                            bodies.push(body);
                            bodies.len() as u32 - 1
                        })
                    }
                    (Policy::DisallowAll, _) => DISALLOW_ALL,
                    _ => ALLOW_ALL,
                };
                entries.push(entry);
            }
            let members = compile_all(&self.config, &bodies)?;

            let host_len = to_u32(hosts.len(), "hosts")?;
            let slot_len = (hosts.len() * 2).max(2).next_power_of_two();
            let mut names = Vec::new();
            let mut host_tab = Vec::with_capacity(hosts.len() * HOST_REC);
            let mut slots = vec![0u32; slot_len];
            for (i, ((name, fetch), entry)) in
                hosts.iter().zip(&entries).enumerate()
            {
                let off = to_u32(names.len(), "host names")?;
                names.extend_from_slice(name.as_bytes());
                push_rec(
                    &mut host_tab,
                    &[off, name.len() as u32, *entry, fetch.status_code()],
                );
                let mut s =
                    host_hash(name.as_bytes()) as usize & (slot_len - 1);
                while slots[s] != 0 {
                    s = (s + 1) & (slot_len - 1);
                }
                slots[s] = i as u32 + 1;
            }
            let mut out = vec![0u8; wire::HEADER_LEN];
            out.extend_from_slice(&host_tab);
            for s in &slots {
                out.extend_from_slice(&s.to_le_bytes());
            }
            let member_tab_at = out.len();
            out.resize(out.len() + members.len() * MEMBER_REC, 0);
            out.extend_from_slice(&names);
            out.resize(out.len().next_multiple_of(wire::SECTION_ALIGN), 0);
            let index_len = out.len();
            let mut member_tab =
                Vec::with_capacity(members.len() * MEMBER_REC);
            for m in &members {
                out.resize(out.len().next_multiple_of(wire::SECTION_ALIGN), 0);
                let (off, len) = (out.len() as u64, m.len() as u64);
                push_rec(
                    &mut member_tab,
                    &[
                        off as u32,
                        (off >> 32) as u32,
                        len as u32,
                        (len >> 32) as u32,
                    ],
                );
                out.extend_from_slice(m);
            }
            out[member_tab_at..member_tab_at + member_tab.len()]
                .copy_from_slice(&member_tab);
            out[..8].copy_from_slice(BUNDLE_MAGIC);
            out[8..12].copy_from_slice(&wire::ENDIAN_MARK.to_le_bytes());
            out[12..16].copy_from_slice(&BUNDLE_FORMAT_VERSION.to_le_bytes());
            let len = out.len() as u64;
            out[16..24].copy_from_slice(&len.to_le_bytes());
            out[28] = self.config.get_dialect().to_byte();
            out[32..40].copy_from_slice(&(index_len as u64).to_le_bytes());
            out[40..44].copy_from_slice(&host_len.to_le_bytes());
            let member_len = to_u32(members.len(), "members")?;
            out[44..48].copy_from_slice(&member_len.to_le_bytes());
            let slot_len = to_u32(slot_len, "hash slots")?;
            out[48..52].copy_from_slice(&slot_len.to_le_bytes());
            let crc = wire::checksum(&out[..index_len]);
            out[wire::CHECKSUM_AT..wire::CHECKSUM_AT + 4]
                .copy_from_slice(&crc.to_le_bytes());
            Ok(out)
        }
    }

    fn to_u32(n: usize, what: &str) -> Result<u32, BuildError> {
        u32::try_from(n)
            .map_err(|_| BuildError::too_large(format!("{what}: {n}")))
    }

    #[cfg(feature = "parallel")]
    fn compile_all(
        config: &Config,
        bodies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, BuildError> {
        use rayon::prelude::*;
        let compiler = Compiler::with_config(config.clone());
        // Large bodies first, so that the slowest compile starts early.
        let mut order: Vec<usize> = (0..bodies.len()).collect();
        order.sort_by_key(|&i| core::cmp::Reverse(bodies[i].len()));
        let mut out: Vec<(usize, Vec<u8>)> = order
            .par_iter()
            .with_max_len(1)
            .map(|&i| compiler.compile(bodies[i]).map(|b| (i, b)))
            .collect::<Result<_, _>>()?;
        out.sort_unstable_by_key(|p| p.0);
        Ok(out.into_iter().map(|p| p.1).collect())
    }

    #[cfg(not(feature = "parallel"))]
    fn compile_all(
        config: &Config,
        bodies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, BuildError> {
        let compiler = Compiler::with_config(config.clone());
        bodies.iter().map(|b| compiler.compile(b)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities() {
        let cases: &[(&[u8], Option<&[u8]>)] = &[
            (b"http://a.example/x", Some(b"a.example")),
            (b"http://A.Example:80/x", Some(b"a.example")),
            (b"https://a.example:80/x", Some(b"a.example:80")),
            (b"https://a.example:443", Some(b"a.example")),
            (b"http://a.example:/x", Some(b"a.example")),
            (b"ftp://u:p@a.example:21/x", Some(b"a.example:21")),
            (b"http://u@v@a.example?x", Some(b"a.example")),
            (b"http://[::1]:8080/", Some(b"[::1]:8080")),
            (b"http://[::1]:80/", Some(b"[::1]")),
            (b"http://a.example#f", Some(b"a.example")),
            (b"http:///x", None),
            (b"http://u@/x", None),
            (b"a.example/x", None),
            (b"1http://a/", None),
            (b"ht tp://a/", None),
        ];
        let mut out = Vec::new();
        for &(url, want) in cases {
            let ok = url_authority(url, &mut out);
            assert_eq!(
                ok.then_some(&out[..]),
                want,
                "{:?}",
                url.escape_ascii()
            );
        }
    }

    /// The definition, written plainly: `scheme://`, then up to the first
    /// `/ ? #`, after the last `@`, lower-cased, default port dropped.
    fn reference_authority(url: &[u8]) -> Option<Vec<u8>> {
        let colon = url.iter().position(|&b| b == b':')?;
        let scheme = &url[..colon];
        let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !scheme_ok || !url[colon..].starts_with(b"://") {
            return None;
        }
        let rest = &url[colon + 3..];
        let end =
            rest.iter().position(|b| b"/?#".contains(b)).unwrap_or(rest.len());
        let auth = &rest[..end];
        let auth = match auth.iter().rposition(|&b| b == b'@') {
            Some(at) => &auth[at + 1..],
            None => auth,
        };
        let lower = scheme.to_ascii_lowercase();
        let default: &[u8] = match &lower[..] {
            b"http" => b"80",
            b"https" => b"443",
            _ => b"",
        };
        let lowered = auth.to_ascii_lowercase();
        let kept = strip_port(&lowered, default).to_vec();
        (!kept.is_empty()).then_some(kept)
    }

    #[test]
    fn authorities_match_the_reference_on_random_strings() {
        const PIECES: &[&[u8]] = &[
            b"http", b"HTTPS", b"s3+x", b"1", b":", b"//", b"://", b"/", b"@",
            b"?", b"#", b"[", b"]", b"80", b"443", b"A", b".",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = Vec::new();
        for _ in 0..100_000 {
            let mut url = Vec::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut r = state;
            for _ in 0..(r % 9) {
                r /= 9;
                url.extend_from_slice(
                    PIECES[(r % PIECES.len() as u64) as usize],
                );
                r /= PIECES.len() as u64;
                if r == 0 {
                    r = state.rotate_left(17);
                }
            }
            let ok = url_authority(&url, &mut out);
            let want = reference_authority(&url);
            assert_eq!(
                ok.then(|| out.clone()),
                want,
                "{:?}",
                url.escape_ascii().to_string()
            );
        }
    }

    #[test]
    fn host_names() {
        assert_eq!(
            normalize_host("WWW.Example.com").unwrap(),
            "www.example.com"
        );
        assert_eq!(normalize_host("example.com:443").unwrap(), "example.com");
        assert_eq!(normalize_host("example.com:80").unwrap(), "example.com");
        assert_eq!(
            normalize_host("example.com:8080").unwrap(),
            "example.com:8080"
        );
        for bad in ["", "a/b", "a b", "u@a", ":80"] {
            assert!(normalize_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fetch_policies() {
        let p = |s| Fetch::http(s, 0, Vec::new()).policy();
        assert_eq!(p(200), Policy::Rules);
        assert_eq!(p(204), Policy::Rules);
        assert_eq!(p(301), Policy::AllowAll);
        assert_eq!(p(404), Policy::AllowAll);
        assert_eq!(p(401), Policy::AllowAll);
        assert_eq!(p(429), Policy::DisallowAll);
        assert_eq!(p(500), Policy::DisallowAll);
        assert_eq!(p(503), Policy::DisallowAll);
        assert_eq!(p(100), Policy::DisallowAll);
        assert_eq!(Fetch::http(200, 5, Vec::new()).policy(), Policy::Rules);
        assert_eq!(Fetch::http(200, 6, Vec::new()).policy(), Policy::AllowAll);
        assert_eq!(Fetch::Unreachable.policy(), Policy::DisallowAll);
    }
}
