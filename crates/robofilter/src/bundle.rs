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
//! # Loading reads the index, not the members
//!
//! [`Bundle::from_bytes`] checks the header, the checksum of the *index*
//! (header, host table, hash slots, member table and host names) and the
//! range of every index entry, reading nothing outside the index: its cost
//! grows with the number of hosts, not with the size of the members. Members
//! are checked (their own checksum and structure) only when
//! [`Bundle::member`] loads one, so opening costs a pass over the index
//! (about 1.5 MB for 70,000 hosts), not over the file, and a lookup never
//! decodes anything.
//!
//! The byte layout is in `wire.rs`, beside the rules file's; the builder
//! is [`BundleBuilder`](crate::BundleBuilder), in `bundle_build.rs`.
//!
use crate::access::FetchStatus;
use crate::dialect::Dialect;
use crate::error::LoadError;
use crate::rules::Rules;
use crate::wire::{
    self, ALLOW_ALL, BUNDLE_FORMAT_OLDEST, BUNDLE_FORMAT_VERSION,
    BUNDLE_MAGIC, CAUSE_REC, DISALLOW_ALL, HOST_REC, MEMBER_REC, Table,
};

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
    cause: Option<&'a str>,
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
    /// Why a host without rules got none, in words, as recorded when the
    /// bundle was built (say, "connection refused"); `None` for a host
    /// with rules, or when nothing was recorded.
    pub fn cause(&self) -> Option<&'a str> {
        self.cause
    }
}

/// Where a member lies in a bundle file ([`Bundle::member_span`]): the
/// padding before it (under 64 octets, zero), then the member.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct MemberSpan {
    offset: u64,
    padding: usize,
    len: usize,
}

impl MemberSpan {
    /// The file offset of the padding (where the member's span starts).
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// The padding's length: the member starts this far into the span.
    pub fn padding(&self) -> usize {
        self.padding
    }
    /// The member's length in octets.
    pub fn member_len(&self) -> usize {
        self.len
    }
    /// The file offset just past the member.
    pub fn end(&self) -> u64 {
        self.offset + (self.padding + self.len) as u64
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
    /// The index: header, host table, hash slots, member table, names.
    index: &'a [u8],
    /// The whole file, when loaded by [`Bundle::from_bytes`].
    whole: Option<&'a [u8]>,
    /// The file's length (checked against the header).
    file_len: u64,
    dialect: Dialect,
    hosts: Table<'a>,
    slots: Table<'a>,
    members: Table<'a>,
    causes: Table<'a>,
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
            BUNDLE_FORMAT_OLDEST..=BUNDLE_FORMAT_VERSION,
            LoadError::bundle_version,
        )?;
        let index_len = wire::u64_at(bytes, 32);
        if index_len < wire::HEADER_LEN as u64
            || index_len > bytes.len() as u64
        {
            return Err(LoadError::structure("bundle index length"));
        }
        let index = &bytes[..index_len as usize];
        Bundle::from_parts(index, Some(bytes), bytes.len() as u64)
    }

    /// The length of the index (header, tables and host names) of the
    /// bundle file of `file_len` octets whose first 64 octets (at least)
    /// are `head`, for a reader that loads the index without the members:
    /// read that many octets from the start of the file and give them to
    /// [`Bundle::from_index`].
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if `head` is not the start of a bundle of this
    /// format version and length, or its index length is impossible.
    pub fn index_len(head: &[u8], file_len: u64) -> Result<usize, LoadError> {
        if head.len() < wire::HEADER_LEN {
            return Err(LoadError::too_short(head.len()));
        }
        let head = &head[..wire::HEADER_LEN];
        wire::check_header_of(
            head,
            BUNDLE_MAGIC,
            BUNDLE_FORMAT_OLDEST..=BUNDLE_FORMAT_VERSION,
            LoadError::bundle_version,
            file_len,
        )?;
        let index_len = wire::u64_at(head, 32);
        if index_len < wire::HEADER_LEN as u64 || index_len > file_len {
            return Err(LoadError::structure("bundle index length"));
        }
        usize::try_from(index_len)
            .map_err(|_| LoadError::structure("bundle index length"))
    }

    /// Loads a bundle from its index alone (the first
    /// [`index_len`](Bundle::index_len) octets of a file of `file_len`
    /// octets), with the same checks as [`Bundle::from_bytes`]. Its members
    /// are then read by the caller, each from the file range
    /// [`member_span`](Bundle::member_span) gives, and loaded with
    /// [`member_from`](Bundle::member_from), which checks them as
    /// [`member`](Bundle::member) does; [`member`](Bundle::member) itself
    /// fails, having no member bytes.
    ///
    /// `index` must start at an 8-byte aligned address.
    ///
    /// ```
    /// use robofilter::{AlignedBytes, Bundle, BundleBuilder, Config, Fetch, Verdict};
    ///
    /// let mut b = BundleBuilder::new(Config::new());
    /// b.add("a.example", Fetch::http(200, 0, b"User-agent: *\nDisallow: /x\n".to_vec()))?;
    /// let file = b.finish()?;
    /// // The index first, as a reader of the file would get it.
    /// let index_len = Bundle::index_len(&file[..64], file.len() as u64)?;
    /// let index = AlignedBytes::from(&file[..index_len]);
    /// let bundle = Bundle::from_index(index.as_bytes(), file.len() as u64)?;
    /// // Then a member, from its range of the file: the padding, and the
    /// // member in an aligned buffer of its own.
    /// let span = bundle.member_span(0);
    /// let (from, to) = (span.offset() as usize, span.end() as usize);
    /// let (padding, member) = file[from..to].split_at(span.padding());
    /// let member = AlignedBytes::from(member);
    /// let rules = bundle.member_from(0, padding, member.as_bytes())?;
    /// let verdict = rules.matcher("bot")?.decide(b"http://a.example/x");
    /// assert_eq!(verdict, Verdict::Disallow);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`LoadError`] saying what is wrong. Never panics, for any input.
    pub fn from_index(
        index: &'a [u8],
        file_len: u64,
    ) -> Result<Bundle<'a>, LoadError> {
        let index_len = Bundle::index_len(index, file_len)?;
        if index_len != index.len() {
            return Err(LoadError::length(index_len as u64, index.len()));
        }
        Bundle::from_parts(index, None, file_len)
    }

    /// Checks the index (whose header is checked already) and its entries.
    fn from_parts(
        index: &'a [u8],
        whole: Option<&'a [u8]>,
        file_len: u64,
    ) -> Result<Bundle<'a>, LoadError> {
        wire::check_integrity(index)?;
        let dialect = Dialect::from_byte(index[28])
            .ok_or_else(|| LoadError::structure("unknown dialect code"))?;
        let host_len = wire::u32_at(index, 40) as usize;
        let member_len = wire::u32_at(index, 44) as usize;
        let slot_len = wire::u32_at(index, 48) as usize;
        let cause_len = wire::u32_at(index, 52) as usize;
        if !slot_len.is_power_of_two() || slot_len <= host_len {
            return Err(LoadError::structure("bundle hash slot count"));
        }
        // Table extents follow from the counts; all must fit in the index,
        // and the host names take the rest of it.
        let lens = [
            host_len * HOST_REC,
            slot_len * 4,
            member_len * MEMBER_REC,
            cause_len * CAUSE_REC,
        ];
        let mut tables = [&index[..0]; 4];
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
        let causes = Table::new(tables[3], CAUSE_REC, "cause")?;
        let names = rest;
        let bundle = Bundle {
            index,
            whole,
            file_len,
            dialect,
            hosts,
            slots,
            members,
            causes,
            names,
        };
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
            if FetchStatus::from_code(self.hosts.get(i, 3)).is_none() {
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
        // Causes: by strictly increasing host index, each of a host
        // without rules, UTF-8 text of 1 to CAUSE_MAX octets.
        let mut next_host = 0;
        for c in 0..self.causes.len() {
            let host = self.causes.get(c, 0) as usize;
            if host < next_host || host >= self.hosts.len() {
                return bad("cause out of order or range");
            }
            next_host = host + 1;
            let entry = self.hosts.get(host, 2);
            if entry != ALLOW_ALL && entry != DISALLOW_ALL {
                return bad("cause of a host with rules");
            }
            let (off, len) =
                (self.causes.get(c, 1) as usize, self.causes.get(c, 2));
            let text = off
                .checked_add(len as usize)
                .and_then(|end| self.names.get(off..end));
            if text.is_none_or(|t| core::str::from_utf8(t).is_err())
                || len == 0
                || len as usize > wire::CAUSE_MAX
                || self.causes.get(c, 3) != 0
            {
                return bad("cause text");
            }
        }
        // Members follow the index in order, 64-byte aligned, with less
        // than 64 octets of padding before each; the padding is checked to
        // be zero when the member is loaded. So every octet of the file is
        // covered by the index checksum, a member's checksum, or that check.
        let mut end = self.index.len() as u64;
        for m in 0..self.members.len() {
            let (off, len) = self.member_extent(m);
            let next = off.checked_add(len);
            if off < end
                || off - end >= wire::MEMBER_ALIGN as u64
                || off % wire::MEMBER_ALIGN as u64 != 0
                || next.is_none_or(|e| e > self.file_len)
            {
                return bad("member out of bounds");
            }
            end = off + len;
        }
        if end != self.file_len {
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

    /// Host `i`'s cause, by binary search of the causes table.
    fn host_cause(&self, i: usize) -> Option<&'a str> {
        let (mut lo, mut hi) = (0, self.causes.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match (self.causes.get(mid, 0) as usize).cmp(&i) {
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
                core::cmp::Ordering::Equal => {
                    let off = self.causes.get(mid, 1) as usize;
                    let len = self.causes.get(mid, 2) as usize;
                    let text = &self.names[off..off + len];
                    return core::str::from_utf8(text).ok();
                }
            }
        }
        None
    }

    /// The dialect every member was compiled with.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The CRC-32 of the index that the bundle's header stores (checked
    /// when loaded).
    pub fn index_checksum(&self) -> u32 {
        let at = wire::CHECKSUM_AT;
        u32::from_le_bytes(
            self.index[at..at + 4].try_into().expect("4 octets"),
        )
    }

    /// The file offset of member `m`'s own checksum (the CRC-32 its rules
    /// file header stores). With [`Bundle::index_checksum`], the checksums
    /// of every member tell this bundle's content from another's without
    /// reading the members whole (a shard directory's `index.json` records
    /// their CRC as the shard's fingerprint).
    pub fn member_checksum_at(&self, m: usize) -> u64 {
        let span = self.member_span(m);
        span.offset() + span.padding() as u64 + wire::CHECKSUM_AT as u64
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
        let cause = match rules {
            HostRules::Member(_) => None,
            _ => self.host_cause(i),
        };
        HostInfo {
            name: self.host_name(i),
            rules,
            status: FetchStatus::from_code(self.hosts.get(i, 3))
                .expect("validated"),
            cause,
        }
    }

    /// All hosts, sorted by name.
    pub fn hosts(&self) -> impl Iterator<Item = HostInfo<'a>> + '_ {
        (0..self.hosts.len()).map(move |i| self.host(i))
    }

    /// The index of the host with this authority, which must already be
    /// normalised (see [`url_host_key`](crate::url_host_key)). `None`: the bundle has no entry
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
    /// another dialect than the bundle says, or if the bundle was loaded
    /// by [`Bundle::from_index`] (use [`Bundle::member_from`]).
    ///
    /// # Panics
    ///
    /// If `m` is out of range.
    pub fn member(&self, m: usize) -> Result<Rules<'a>, LoadError> {
        let span = self.member_span(m);
        let Some(whole) = self.whole else {
            return Err(LoadError::structure(
                "bundle loaded from its index only: its members are loaded \
                 with Bundle::member_from",
            ));
        };
        // In range: `validate` checked every member against the length.
        let (from, to) = (span.offset as usize, span.end() as usize);
        let (padding, member) = whole[from..to].split_at(span.padding);
        self.member_from(m, padding, member)
    }

    /// Where member `m` lies in the file: the padding before it, then its
    /// octets. What [`Bundle::member_from`] checks.
    ///
    /// # Panics
    ///
    /// If `m` is out of range.
    pub fn member_span(&self, m: usize) -> MemberSpan {
        assert!(m < self.members.len(), "member index {m} out of range");
        let (off, len) = self.member_extent(m);
        let gap_from = match m {
            0 => self.index.len() as u64,
            _ => {
                let (prev_off, prev_len) = self.member_extent(m - 1);
                prev_off + prev_len
            }
        };
        // `validate` checked the order, the padding (under 64 octets) and
        // the file length, so these fit.
        MemberSpan {
            offset: gap_from,
            padding: (off - gap_from) as usize,
            len: len as usize,
        }
    }

    /// Loads member `m` from the file's octets in
    /// [`member_span(m)`](Bundle::member_span): `padding`, which must be
    /// zero, then `member`, which must start at an 8-byte aligned address.
    /// Checks them exactly as [`Bundle::member`] does.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if the slices are not as long as the span says, the
    /// padding is not zero, or the member is damaged or was compiled with
    /// another dialect than the bundle says.
    ///
    /// # Panics
    ///
    /// If `m` is out of range.
    pub fn member_from<'b>(
        &self,
        m: usize,
        padding: &[u8],
        member: &'b [u8],
    ) -> Result<Rules<'b>, LoadError> {
        let span = self.member_span(m);
        if padding.len() != span.padding || member.len() != span.len {
            return Err(LoadError::length(
                (span.padding + span.len) as u64,
                padding.len() + member.len(),
            ));
        }
        if padding.iter().any(|&b| b != 0) {
            return Err(LoadError::structure(
                "non-zero padding before member",
            ));
        }
        let rules = Rules::from_bytes(member)?;
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
