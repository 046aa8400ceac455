//! Reading inputs (owned, aligned copies; stdin; a bundle's index, then
//! its members one by one) and writing outputs atomically.

use std::fs::{self, File};
use std::io::{self, IoSlice, Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result, anyhow, bail};
use robofilter::{
    Bundle, Compiler, Config, Dialect, MemberSpan, Members, Rules, UrlChecker,
};

/// The first bytes of every rules file.
const RULES_MAGIC: &[u8; 8] = b"ROBOFLTR";

/// The bytes of a whole input: an owned copy that starts at an 8-byte
/// aligned address (as [`Rules::from_bytes`] requires). Nothing is
/// memory-mapped: a mapped file truncated underneath the run raises
/// SIGBUS (see [`read_owned`]).
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
    words: Vec<u64>,
    len: usize,
}

impl Aligned {
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }

    /// Reads `r` to its end; `hint` is the expected length (a file's size),
    /// read in one go when right.
    fn read_from(mut r: impl Read, hint: usize) -> io::Result<Aligned> {
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

/// How to name `path` in messages (`-` is stdin).
pub fn display(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Whether `path` means stdin.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Opens `path` for reading, with its length if it is a regular file. `what` names the file's role in messages.
pub fn open(path: &Path, what: &str) -> Result<(File, Option<u64>)> {
    let file = File::open(path).with_context(|| {
        format!("cannot open {what} '{}' (check the path)", path.display())
    })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat {what} '{}'", path.display()))?;
    if meta.is_dir() {
        // Where a bundle may go, a shard directory may too: say what is
        // missing from this one.
        let shards = match what.contains("bundle") {
            true => " or a shard directory, which has an index.json",
            false => "",
        };
        bail!(
            "{what} '{}' is a directory (expected a file{shards})",
            path.display()
        );
    }
    let len = meta.is_file().then_some(meta.len());
    Ok((file, len))
}

/// What went wrong when a URL list of `len` octets at the run's start has
/// only `now` left: it was cut underneath the run.
pub fn shrank(len: u64, now: u64) -> String {
    format!(
        "the file shrank from {len} octets to {now} while the run read it \
         (rewritten in place?): stopped; an output file (-o) is left as it \
         was. Run again once the list is complete."
    )
}

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
/// read, which [`stop_on_sigbus`] turns into a stop that removes the run's
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
    stop_on_sigbus();
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
/// load time (see BENCHMARKS.md).
pub fn read_owned(path: &Path, what: &str) -> Result<Bytes> {
    if is_stdin(path) {
        return read_all(io::stdin().lock(), 0, path, what);
    }
    let (file, len) = open(path, what)?;
    let hint = len.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    read_all(file, hint, path, what)
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

/// Maps all `len` octets of `file`, a bundle this process holds a read
/// lease on; `None` if the system will not map it.
#[allow(unsafe_code)]
fn map_leased(file: &File, len: u64) -> Option<memmap2::Mmap> {
    let len = usize::try_from(len).ok().filter(|&n| n > 0)?;
    // A read error on a mapped page raises SIGBUS: stopped with a word.
    stop_on_sigbus();
    // SAFETY: the map is only read, as octets, while the lease it was
    // taken under is held (`BundleIndex` drops the map first). Under the
    // lease no other process can open the file for writing or truncate
    // it: the kernel holds it back and this process stops on the SIGIO
    // it gets (`lease`), so the octets stay those the file had when the
    // lease was taken. A read error on a page raises SIGBUS, which
    // `stop_on_sigbus` turns into a stop.
    unsafe { memmap2::MmapOptions::new().len(len).map(file) }.ok()
}

/// A bundle file read lazily: its index (header, tables, host names) when
/// opened, each member the first time it is used ([`MemberFile`]). The
/// file stays open, so a file renamed over it changes nothing for this
/// run.
///
/// Where the system grants this process a read lease on the file (Linux,
/// a local file system, a file this user owns and nobody has open for
/// writing; see [`lease`]), the whole file is mapped and members are read
/// from the page cache where they are, with no copy: the lease keeps any
/// other process from opening the file for writing until the run stops.
/// Elsewhere each member is read into an [`Arena`] by a positioned read,
/// and the file's identity (device, inode, size, modification time) is
/// checked after every read, so that a file rewritten in place is
/// reported instead of mixing two versions. (Not the change time:
/// unlinking the file, as renaming another over it does, changes it.)
pub struct BundleIndex {
    name: String,
    /// The whole file, mapped, while the lease is held. Declared before
    /// it: unmapped first.
    map: Option<memmap2::Mmap>,
    /// Held for the run; given back when dropped.
    _lease: Option<lease::Lease>,
    file: File,
    identity: Identity,
    len: u64,
    /// The index's octets, read (empty when the file is mapped).
    index: Aligned,
    index_len: usize,
}

/// What tells a file rewritten in place from the one opened.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl Identity {
    #[cfg(unix)]
    fn of(file: &File) -> io::Result<Identity> {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata()?;
        Ok(Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        })
    }
}

impl BundleIndex {
    /// Opens `path` and reads its index if it is a regular file holding a
    /// bundle; `None` for anything else (stdin, a pipe, a rules file),
    /// which is read whole with [`read_owned`].
    #[cfg(unix)]
    pub fn open(path: &Path, what: &str) -> Result<Option<BundleIndex>> {
        use std::os::unix::fs::FileExt;
        // Only a regular file is opened here: a FIFO opened and closed
        // would lose (or refuse) its writer's data before `read_owned`.
        if is_stdin(path) || !fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return Ok(None);
        }
        let (file, len) = open(path, what)?;
        if len.is_none() {
            return Ok(None);
        }
        let name = display(path);
        let read_error = || format!("cannot read {what} '{name}'");
        // The lease first: from then on the file cannot change, so its
        // length, index and members are all read from one version.
        let lease = lease::Lease::take(&file, &name);
        let identity = Identity::of(&file).with_context(read_error)?;
        let len = identity.len;
        let mut head = [0u8; 64];
        let head_len = usize::try_from(len).map_or(64, |n| n.min(64));
        file.read_exact_at(&mut head[..head_len], 0)
            .with_context(read_error)?;
        if !Bundle::is_bundle(&head[..head_len]) {
            return Ok(None);
        }
        let damaged = || format!("bundle '{name}' is damaged or unusable");
        let index_len =
            Bundle::index_len(&head[..head_len], len).with_context(damaged)?;
        let map = lease.as_ref().and_then(|_| map_leased(&file, len));
        // Without a map the lease is of no use: given back at once.
        let lease = lease.filter(|_| map.is_some());
        // A mapped index is used where it lies (`load`).
        let mut index = Aligned::default();
        if map.is_none() {
            index.words = vec![0; index_len.div_ceil(8)];
            index.len = index_len;
            let buf =
                &mut bytemuck::cast_slice_mut(&mut index.words)[..index_len];
            file.read_exact_at(buf, 0).with_context(read_error)?;
        }
        let bundle = BundleIndex {
            name,
            map,
            _lease: lease,
            file,
            identity,
            len,
            index,
            index_len,
        };
        bundle.check_unchanged().map_err(anyhow::Error::new)?;
        Ok(Some(bundle))
    }

    /// Whether members are read from a map of the file under a lease
    /// (else by positioned reads into an [`Arena`]).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    #[cfg(not(unix))]
    pub fn open(_path: &Path, _what: &str) -> Result<Option<BundleIndex>> {
        Ok(None)
    }

    /// Loads the bundle from the index, naming the file in errors.
    pub fn load(&self) -> Result<Bundle<'_>> {
        let index = match &self.map {
            // `Bundle::index_len` checked it against the file's length,
            // which is the map's.
            Some(map) => &map[..self.index_len],
            None => self.index.as_bytes(),
        };
        Bundle::from_index(index, self.len).with_context(|| {
            format!("bundle '{}' is damaged or unusable", self.name)
        })
    }

    /// Fails, naming the file, if it is no longer the file opened.
    #[cfg(unix)]
    fn check_unchanged(&self) -> io::Result<()> {
        if Identity::of(&self.file)? == self.identity {
            return Ok(());
        }
        Err(io::Error::other(format!(
            "bundle '{}' was changed in place during the run (its size or \
             modification time differs from when it was opened), so its members no \
             longer match the index this run loaded; run again, and \
             replace a bundle in use by writing a new file and renaming it \
             over the old one (as `robofilter compile -o` does)",
            self.name
        )))
    }
}

/// Memory for a bundle's members: one private anonymous map, as large as
/// the members of the bundle could need and reserved without committing
/// it, that members are read into one after another. Its pages are
/// faulted in as members fill them.
///
/// A heap buffer per member cost more: each was zeroed before the read
/// overwrote it, and on a worker thread glibc grew its heap with one
/// `mprotect` per member (12,589 calls for the 13 k members of the corpus
/// frontier). One URL per host of that frontier: 216 → 192 ms CPU
/// (BENCHMARKS.md, "Issue 13: members read into one map, the rfc9309
/// walk, and what the member phase is").
pub struct Arena {
    map: Option<memmap2::MmapMut>,
}

impl Arena {
    /// An arena for the `members` members of `index`'s bundle; an empty
    /// one, whose members each get a heap buffer, if the system will not
    /// map that much (a strict overcommit policy, `ulimit -v`).
    pub fn for_bundle(index: &BundleIndex, members: usize) -> Arena {
        if index.is_mapped() {
            return Arena { map: None };
        }
        // The spans fit in the file; each member adds up to 15 octets of
        // alignment.
        let len = usize::try_from(index.len)
            .ok()
            .and_then(|n| n.checked_add(members.checked_mul(16)?))
            .filter(|&n| n > 0);
        let map = len.and_then(|n| {
            memmap2::MmapOptions::new()
                .len(n)
                .no_reserve_swap()
                .map_anon()
                .ok()
        });
        Arena { map }
    }
}

/// The members of a [`BundleIndex`]'s bundle, each read once (by a
/// positioned read of its span) into an [`Arena`] and kept for the run.
pub struct MemberFile<'f> {
    index: &'f BundleIndex,
    /// The arena's octets not handed out yet, 8-byte aligned.
    free: Mutex<&'f mut [u8]>,
    /// Per member: its span as read. Boxed, so that the slots of members a
    /// run never reads take 16 octets each.
    slots: Vec<OnceLock<Box<io::Result<Span<'f>>>>>,
}

/// A member's span as read: in the arena, or (once the arena is used up,
/// or without one) in a heap buffer of its own after up to 7 octets that
/// align the member to 8.
enum Span<'f> {
    Arena(&'f [u8]),
    Heap(usize, Aligned),
}

impl<'f> MemberFile<'f> {
    /// Empty slots for the `member_len` members of `index`'s bundle, to be
    /// read into `arena`.
    pub fn new(
        index: &'f BundleIndex,
        member_len: usize,
        arena: &'f mut Arena,
    ) -> MemberFile<'f> {
        // A mapped bundle's members are read where they are: no slots.
        let read = if index.is_mapped() { 0 } else { member_len };
        let slots = (0..read).map(|_| OnceLock::new()).collect();
        let free: &'f mut [u8] = match &mut arena.map {
            Some(map) => map,
            None => &mut [],
        };
        MemberFile { index, free: Mutex::new(free), slots }
    }

    /// Member `m`'s padding and octets: in the leased map, or read on
    /// first use (a [`robofilter::MemberReader`]). Fails, naming the file,
    /// if the file was changed in place since it was opened.
    #[cfg(unix)]
    pub fn read(
        &self,
        m: usize,
        span: MemberSpan,
    ) -> io::Result<(&[u8], &[u8])> {
        if let Some(map) = &self.index.map {
            // `Bundle::from_index` checked every span against the file's
            // length, which is the map's.
            let bytes = usize::try_from(span.offset())
                .ok()
                .zip(usize::try_from(span.end()).ok())
                .and_then(|(start, end)| map.get(start..end))
                .ok_or_else(|| {
                    io::Error::other(format!(
                        "bundle '{}': member {m} lies outside the file",
                        self.index.name
                    ))
                })?;
            return Ok(bytes.split_at(span.padding()));
        }
        let slot = self.slots[m].get_or_init(|| Box::new(self.fill(span)));
        match &**slot {
            Ok(read) => {
                let span_bytes = match read {
                    Span::Arena(bytes) => bytes,
                    Span::Heap(lead, buf) => &buf.as_bytes()[*lead..],
                };
                Ok(span_bytes.split_at(span.padding()))
            }
            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
        }
    }

    /// Reads a member's span into the arena, or into a buffer of its own.
    #[cfg(unix)]
    fn fill(&self, span: MemberSpan) -> io::Result<Span<'f>> {
        use std::os::unix::fs::FileExt;
        let read_at = |bytes: &mut [u8]| {
            self.index.file.read_exact_at(bytes, span.offset())
        };
        // The member, after `padding` octets, starts 8-byte aligned.
        let lead = (8 - span.padding() % 8) % 8;
        let len = span.padding() + span.member_len();
        let read = match self.take(lead + len) {
            Some(taken) => {
                let bytes = &mut taken[lead..];
                read_at(bytes).map(|()| Span::Arena(bytes))
            }
            None => {
                let all = lead + len;
                let mut buf =
                    Aligned { words: vec![0; all.div_ceil(8)], len: all };
                let bytes: &mut [u8] =
                    bytemuck::cast_slice_mut(&mut buf.words);
                read_at(&mut bytes[lead..all]).map(|()| Span::Heap(lead, buf))
            }
        };
        // A change in place shows in the identity after the read, whenever
        // it happened: that error comes first.
        self.index.check_unchanged()?;
        read.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot read bundle '{}': {e}", self.index.name),
            )
        })
    }

    /// The next `len` octets of the arena (8-byte aligned), `None` once it
    /// is used up.
    fn take(&self, len: usize) -> Option<&'f mut [u8]> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let want =
            len.checked_next_multiple_of(8).filter(|&n| n <= free.len())?;
        let (taken, rest) = std::mem::take(&mut *free).split_at_mut(want);
        *free = rest;
        Some(&mut taken[..len])
    }

    #[cfg(not(unix))]
    pub fn read(
        &self,
        _m: usize,
        _span: MemberSpan,
    ) -> io::Result<(&[u8], &[u8])> {
        unreachable!("BundleIndex::open reads no index off unix")
    }
}

/// Runs `f` with a checker of `bundle` (loaded from `index`) for
/// `agents`, whose members are read (or used in the leased map) when a URL
/// first needs them: what `filter`, `check` and `explain` do with a
/// bundle file, as the last thing before the process ends (the checker's
/// memory is not freed).
pub fn with_bundle_checker<T>(
    index: &BundleIndex,
    bundle: &Bundle<'_>,
    agents: &[&str],
    f: impl for<'a> FnOnce(&UrlChecker<'a>) -> Result<T>,
) -> Result<T> {
    let mut arena = Arena::for_bundle(index, bundle.member_len());
    let file = MemberFile::new(index, bundle.member_len(), &mut arena);
    let read = |m, span| file.read(m, span);
    let members = Arc::new(Members::with_reader(bundle, &read));
    let checker = UrlChecker::bundle(bundle, members, agents)
        .map_err(|e| anyhow!("bundle '{}', {e}", index.name))?;
    let result = f(&checker);
    // The run ends with the process: the checker is left to the exit
    // rather than dropped. Freeing the matchers of thousands of members
    // one by one took 5-10 ms at the end of the mixed-host frontier, in
    // which `-j 2` has nothing to share (BENCHMARKS.md, "Issue 13:
    // bundles read under a lease").
    std::mem::forget(checker);
    result
}

/// Fails unless a compiled file's dialect `have` is the one the user
/// asked for, if any.
pub fn check_dialect(
    want: Option<Dialect>,
    have: Dialect,
    what: &str,
    path: &Path,
) -> Result<()> {
    match want {
        Some(want) if want != have => bail!(
            "{what} '{}' was compiled with the {have} dialect, not \
             {want} (omit --dialect, or compile again with \
             --dialect {want})",
            display(path)
        ),
        _ => Ok(()),
    }
}

/// What a file holds, told by its first bytes (the magic of a rules file or
/// a bundle; anything else is taken for a robots.txt).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Kind {
    Rules,
    Bundle,
    RobotsTxt,
}

impl Kind {
    pub fn of(bytes: &[u8]) -> Kind {
        if bytes.starts_with(RULES_MAGIC) {
            Kind::Rules
        } else if Bundle::is_bundle(bytes) {
            Kind::Bundle
        } else {
            Kind::RobotsTxt
        }
    }

    /// How messages name a compiled file of this kind; `None` for a
    /// robots.txt (or any other text).
    pub fn compiled_name(self) -> Option<&'static str> {
        match self {
            Kind::Rules => Some("compiled rules file"),
            Kind::Bundle => Some("compiled bundle"),
            Kind::RobotsTxt => None,
        }
    }
}

/// Loads a rules file's bytes, naming the file in errors.
pub fn load_rules<'a>(bytes: &'a [u8], path: &Path) -> Result<Rules<'a>> {
    match Kind::of(bytes) {
        Kind::Rules => Rules::from_bytes(bytes).with_context(|| {
            format!("rules file '{}' is damaged or unusable", display(path))
        }),
        Kind::Bundle => bail!(
            "'{}' is a bundle, not a single rules file (use it with \
             `robofilter filter`, `check`, `explain` or `inspect`)",
            display(path)
        ),
        Kind::RobotsTxt => bail!(
            "'{}' is not a rules file (to use a robots.txt, compile it \
             first with `robofilter compile ROBOTS_TXT -o RULES`)",
            display(path)
        ),
    }
}

/// Loads a bundle's bytes, naming the file in errors.
pub fn load_bundle<'a>(bytes: &'a [u8], path: &Path) -> Result<Bundle<'a>> {
    Bundle::from_bytes(bytes).with_context(|| {
        format!("bundle '{}' is damaged or unusable", display(path))
    })
}

/// A loaded rules file or bundle.
pub enum Compiled<'a> {
    Rules(Rules<'a>),
    Bundle(Bundle<'a>),
}

impl<'a> Compiled<'a> {
    /// Loads `bytes`, a rules file or a bundle (by its magic).
    pub fn load(bytes: &'a [u8], path: &Path) -> Result<Compiled<'a>> {
        Ok(match Kind::of(bytes) {
            Kind::Bundle => Compiled::Bundle(load_bundle(bytes, path)?),
            _ => Compiled::Rules(load_rules(bytes, path)?),
        })
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Compiled::Rules(r) => r.dialect(),
            Compiled::Bundle(b) => b.dialect(),
        }
    }
}

/// Checks the agent a user names against the dialect (SEMANTICS.md
/// section 4b): rfc9309 refuses an agent that is not a product token;
/// google decides it as the reference does and warns.
pub fn check_agent(agent: &str, dialect: Dialect) -> Result<()> {
    match robofilter::check_product_token(agent) {
        Ok(()) => Ok(()),
        Err(e) if dialect == Dialect::Rfc9309 => Err(anyhow::anyhow!(e)),
        Err(e) => {
            diag!(
                "robofilter: warning: {e}; the google dialect decides it as \
                 google/robotstxt does: it names no group, so the '*' group \
                 applies"
            );
            Ok(())
        }
    }
}

/// [`check_agent`] for each of `agents`, and a usage error if one is named
/// twice (agents match case-insensitively, so `GPTBot` and `gptbot` are the
/// same agent).
pub fn check_agents(agents: &[String], dialect: Dialect) -> Result<()> {
    for (i, agent) in agents.iter().enumerate() {
        if let Some(first) =
            agents[..i].iter().find(|a| a.eq_ignore_ascii_case(agent))
        {
            bail!(
                "--agent '{agent}' is given twice (agents match \
                 case-insensitively: '{first}' names the same one); name each \
                 agent once"
            );
        }
        check_agent(agent, dialect)?;
    }
    Ok(())
}

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

/// A compressed input format, told by its magic bytes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// The command line tool of the format (`gzip`, `zstd`).
    pub fn tool(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// The format `head` (a file's first octets) starts with, if any.
    pub fn detect(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }
}

/// A file that is not robots.txt text but one robofilter or a compressor
/// wrote, told by its magic bytes ([`NotRobotsTxt::of`]): read as text, it
/// has no rules, and every URL would be allowed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum NotRobotsTxt {
    /// A rules file or a bundle ([`Kind::Rules`], [`Kind::Bundle`]).
    Compiled(Kind),
    Compressed(Compression),
}

impl NotRobotsTxt {
    /// What `bytes` (a file's first octets at least) are, if not text.
    pub fn of(bytes: &[u8]) -> Option<NotRobotsTxt> {
        match Kind::of(bytes) {
            Kind::RobotsTxt => {
                Compression::detect(bytes).map(NotRobotsTxt::Compressed)
            }
            kind => Some(NotRobotsTxt::Compiled(kind)),
        }
    }
}

impl std::fmt::Display for NotRobotsTxt {
    /// `a compiled rules file`, `gzip-compressed`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRobotsTxt::Compiled(kind) => {
                write!(f, "a {}", kind.compiled_name().unwrap_or("file"))
            }
            NotRobotsTxt::Compressed(c) => {
                write!(f, "{}-compressed", c.tool())
            }
        }
    }
}

/// Fails if `bytes` are not robots.txt text ([`NotRobotsTxt`]), saying
/// what to give instead.
fn refuse_not_robots_txt(bytes: &[u8], path: &Path) -> Result<()> {
    let name = display(path);
    match NotRobotsTxt::of(bytes) {
        None => Ok(()),
        Some(what @ NotRobotsTxt::Compressed(c)) => {
            let file = match is_stdin(path) {
                true => "FILE".to_string(),
                false => format!("'{name}'"),
            };
            bail!(
                "'{name}' is {what}, not a robots.txt; decompress it first \
                 (`{} -dc {file} | robofilter compile - -o RULES`)",
                c.tool()
            )
        }
        Some(what @ NotRobotsTxt::Compiled(kind)) => {
            let kind = kind.compiled_name().unwrap_or("file");
            bail!(
                "'{name}' is {what}, not a robots.txt; give the robots.txt \
                 it was compiled from, or use the {kind} with `robofilter \
                 filter`, `check`, `explain` or `inspect`"
            )
        }
    }
}

/// Compiles a robots.txt in memory into aligned rules-file bytes.
pub fn compile(body: &[u8], config: Config, path: &Path) -> Result<Bytes> {
    refuse_not_robots_txt(body, path)?;
    let bytes =
        Compiler::with_config(config).compile(body).with_context(|| {
            format!("cannot compile robots.txt '{}'", display(path))
        })?;
    Ok(Aligned::from(&bytes[..]))
}

/// Reads a rules file or a bundle, or a robots.txt (told apart by the
/// magic bytes) and compiles it in memory with `config` and `dialect`. A
/// rules file or bundle keeps its own dialect; `dialect`, if given, must
/// be that one. Load the result with [`Compiled::load`].
pub fn rules_or_robots(
    path: &Path,
    dialect: Option<Dialect>,
    config: Config,
) -> Result<Bytes> {
    let bytes = read_owned(path, "robots.txt, rules file or bundle")?;
    let what = match Kind::of(&bytes) {
        Kind::RobotsTxt => {
            let config = config.dialect(dialect.unwrap_or_default());
            return compile(&bytes, config, path);
        }
        Kind::Rules => "rules file",
        Kind::Bundle => "bundle",
    };
    if dialect.is_some() {
        let have = Compiled::load(&bytes, path)?.dialect();
        check_dialect(dialect, have, what, path)?;
    }
    Ok(bytes)
}

/// An output file, decided before any work: a regular file (new, or an
/// existing one, or the target of a symbolic link to one) is written
/// under a temporary name in its directory and renamed over it by
/// [`AtomicFile::commit`], so that it is never half-written and a link to
/// it stays a link; a FIFO or device (`/dev/null`) is written in place,
/// since renaming over it would replace it with a plain file. Dropped
/// uncommitted, or on SIGINT, SIGTERM or SIGHUP, it removes its temporary
/// file and leaves the previous output as it was.
pub struct AtomicFile {
    /// The path as given, for messages.
    dest: PathBuf,
    file: Option<Dest>,
}

/// Where an [`AtomicFile`] writes.
enum Dest {
    /// A temporary file, renamed over `target` (the destination with its
    /// symbolic links resolved) on commit.
    Temp { file: io::BufWriter<tempfile::NamedTempFile>, target: PathBuf },
    /// A FIFO or device, written in place.
    InPlace(io::BufWriter<File>),
}

/// The output buffer: large writes bypass it (see [`write_through`]).
const OUT_BUF_LEN: usize = 1 << 20;

impl AtomicFile {
    /// Opens `dest` for writing: creates the temporary file next to it (or
    /// next to its link target), or opens a FIFO or device. Fails, before
    /// any work, when the directory does not exist or is not writable.
    pub fn create(dest: &Path) -> Result<AtomicFile> {
        let target = resolve_links(dest)?;
        let in_place = |path: &Path| -> Result<AtomicFile> {
            let f =
                File::options().write(true).open(path).with_context(|| {
                    format!("cannot open output '{}'", dest.display())
                })?;
            Ok(AtomicFile {
                dest: dest.to_path_buf(),
                file: Some(Dest::InPlace(io::BufWriter::with_capacity(
                    OUT_BUF_LEN,
                    f,
                ))),
            })
        };
        let existing = match fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => {
                bail!("output '{}' is a directory", dest.display())
            }
            Ok(m) if !m.is_file() => return in_place(&target),
            Ok(m) => Some(m),
            // A link the kernel resolves but a path walk cannot (the
            // `/proc/self/fd/N` behind `/dev/stdout`): never a name to
            // rename over.
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    && target != dest
                    && fs::metadata(dest).is_ok() =>
            {
                return in_place(dest);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot stat output '{}'", dest.display())
                });
            }
        };
        let file = temp_file(dest, &target, existing)?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            file: Some(Dest::Temp {
                file: io::BufWriter::with_capacity(OUT_BUF_LEN, file),
                target,
            }),
        })
    }

    /// Flushes, syncs and renames the file over the destination (a FIFO or
    /// device is only flushed).
    pub fn commit(mut self) -> Result<()> {
        let what = || format!("cannot write output '{}'", self.dest.display());
        match self.file.take().expect("not committed yet") {
            Dest::InPlace(w) => {
                w.into_inner()
                    .map_err(|e| e.into_error())
                    .with_context(what)?;
                Ok(())
            }
            Dest::Temp { file, target } => {
                let tmp = file.get_ref().path().to_path_buf();
                // On failure, dropping the file (inside the error) removes
                // it.
                let file = file.into_inner().map_err(|e| e.into_error());
                let file =
                    file.and_then(|f| f.as_file().sync_all().map(|()| f));
                // Held across the rename: a signal either removes the
                // temporary file before it is renamed, or waits for the
                // rename and finds nothing to remove.
                let mut temps = temp_registry();
                let result = file.and_then(|f| {
                    f.persist(&target).map(drop).map_err(|e| e.error)
                });
                temps.remove(&tmp);
                result.with_context(what)
            }
        }
    }

    /// See [`Output::write_parts`].
    pub fn write_parts(
        &mut self,
        parts: &mut [IoSlice<'_>],
    ) -> io::Result<()> {
        self.writer().write_parts(parts)
    }

    fn writer(&mut self) -> &mut dyn WriteThrough {
        match self.file.as_mut().expect("not committed") {
            Dest::Temp { file, .. } => file,
            Dest::InPlace(file) => file,
        }
    }
}

/// [`write_through`] and [`write_parts`] behind a trait object.
trait WriteThrough: Write {
    fn write_through(&mut self, buf: &[u8]) -> io::Result<()>;
    fn write_parts(&mut self, parts: &mut [IoSlice<'_>]) -> io::Result<()>;
}

impl<W: Write> WriteThrough for io::BufWriter<W> {
    fn write_through(&mut self, buf: &[u8]) -> io::Result<()> {
        write_through(self, buf)
    }

    fn write_parts(&mut self, parts: &mut [IoSlice<'_>]) -> io::Result<()> {
        write_parts(self, parts)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer().write_through(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(Dest::Temp { file, .. }) = self.file.take() {
            let mut temps = temp_registry();
            let path = file.get_ref().path().to_path_buf();
            // The file's own drop removes it; its buffered bytes are not
            // worth writing first.
            let (file, _) = file.into_parts();
            drop(file);
            temps.remove(&path);
        }
    }
}

/// Follows symbolic links from `path` one by one (a relative link is
/// relative to its own directory) to the first name that is not a link,
/// which may not exist yet (a dangling link: the file is created there).
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    // Linux's own limit (MAXSYMLINKS).
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p).with_context(|| {
                    format!("cannot read link '{}'", p.display())
                })?;
                p = match p.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(p),
        }
    }
    bail!("output '{}': too many levels of symbolic links", path.display())
}

/// The name of a temporary output beside `name`: `.NAME.XXXXXX` and this
/// suffix, so that it is hidden and tells what left it.
pub const TEMP_SUFFIX: &str = ".robofilter-tmp";

/// `.NAME.`: how a temporary output beside `name` starts.
pub fn temp_prefix(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
}

/// Creates the temporary file beside `target` (registered for removal on
/// a signal), with the permissions (and, where allowed, the owner and
/// group) of `existing` if there is a file to replace, else those a new
/// file gets (0666 less the umask).
fn temp_file(
    dest: &Path,
    target: &Path,
    existing: Option<fs::Metadata>,
) -> Result<tempfile::NamedTempFile> {
    let Some(name) = target.file_name() else {
        bail!("output '{}' is not a file name", dest.display());
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = temp_prefix(name);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    cleanup_on_signals();
    let mut temps = temp_registry();
    let file = builder.tempfile_in(dir).with_context(|| {
        format!(
            "cannot create a temporary file in '{}' for output '{}' (does \
             the directory exist and is it writable?)",
            dir.display(),
            dest.display()
        )
    })?;
    temps.add(file.path().to_path_buf());
    drop(temps);
    if let Some(old) = existing {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Only root may give a file away; others keep their own.
            let owner = (Some(old.uid()), Some(old.gid()));
            let _ =
                std::os::unix::fs::fchown(file.as_file(), owner.0, owner.1);
        }
        let kept = file.as_file().set_permissions(old.permissions());
        if let Err(e) = kept {
            let tmp = file.path().to_path_buf();
            temp_registry().remove(&tmp);
            return Err(e).with_context(|| {
                format!(
                    "cannot give the new output '{}' the permissions of the \
                     old one",
                    dest.display()
                )
            });
        }
    }
    Ok(file)
}

/// Creates a temporary file or directory with `create` (which gives it and
/// its path) and registers the path for removal on a signal, as
/// [`AtomicFile`] does with its temporary file.
pub fn registered_temp<T>(
    create: impl FnOnce() -> io::Result<(T, PathBuf)>,
) -> io::Result<T> {
    cleanup_on_signals();
    let mut temps = temp_registry();
    let (temp, path) = create()?;
    temps.add(path);
    Ok(temp)
}

/// Runs `rename` (which moves the registered temporary `path` into place)
/// with the registry held, so that a signal either removes the temporary
/// before the rename or finds nothing to remove; then forgets `path`.
pub fn commit_temp(
    path: &Path,
    rename: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    let mut temps = temp_registry();
    let result = rename();
    temps.remove(path);
    result
}

/// Forgets the registered temporary `path` (removed by its owner).
pub fn forget_temp(path: &Path) {
    temp_registry().remove(path);
}

/// The temporary files and directories that exist now, for the signal
/// handlers: the paths, and (kept in step by [`Temps::add`] and
/// [`Temps::remove`]) their names in [`signal_safe`]'s slots for SIGBUS.
struct Temps {
    paths: Vec<PathBuf>,
}

impl Temps {
    fn add(&mut self, path: PathBuf) {
        signal_safe::add(&path);
        self.paths.push(path);
    }

    fn remove(&mut self, path: &Path) {
        self.paths.retain(|p| p != path);
        signal_safe::remove(path);
    }
}

/// The registry of temporary files and directories, locked.
fn temp_registry() -> std::sync::MutexGuard<'static, Temps> {
    static TEMPS: std::sync::Mutex<Temps> =
        std::sync::Mutex::new(Temps { paths: Vec::new() });
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the registered temporary files and directories; the registry
/// is returned locked, to be held until the exit: no rename or new
/// temporary file after this point.
fn remove_temps() -> std::sync::MutexGuard<'static, Temps> {
    let temps = temp_registry();
    for tmp in &temps.paths {
        match fs::symlink_metadata(tmp) {
            Ok(m) if m.is_dir() => {
                let _ = fs::remove_dir_all(tmp);
            }
            _ => {
                let _ = fs::remove_file(tmp);
            }
        }
    }
    temps
}

/// From the first call on, SIGINT, SIGTERM and SIGHUP remove the
/// registered temporary files and end the run with status 128 + the
/// signal's number (130, 143, 129), as a shell reports a death by signal.
fn cleanup_on_signals() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let signals =
                signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]);
            let mut signals = match signals {
                Ok(s) => s,
                Err(e) => {
                    diag!(
                        "robofilter: warning: cannot catch signals ({e}): \
                         an interrupted run may leave a temporary file"
                    );
                    return;
                }
            };
            std::thread::spawn(move || {
                if let Some(signo) = signals.forever().next() {
                    let _temps = remove_temps();
                    std::process::exit(128 + signo);
                }
            });
        });
    }
}

/// From the first call on, SIGBUS (a memory-mapped URL list cut
/// underneath the run, see [`map_window`], or a read error on a page of a
/// mapped input) removes the temporary output files, says why on stderr
/// and ends the run with status 135 (128 + SIGBUS), all inside the
/// handler: the faulting read cannot go on, and the handler Rust's
/// runtime installs would end the run with no word.
#[allow(unsafe_code)]
fn stop_on_sigbus() {
    use signal_hook::consts::SIGBUS;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        const WHY: &[u8] = b"robofilter: a memory-mapped input was cut \
            (a URL list rewritten in place?) or could not be read (a disk \
            error?) while it was read (SIGBUS): stopped; an output file \
            (-o) is left as it was. Run again once the list is complete.\n";
        let stop = || signal_safe::stop(WHY, 128 + SIGBUS);
        // SAFETY: `stop` only makes async-signal-safe system calls
        // (write, unlink, _exit) on memory that is never freed, and
        // neither allocates nor takes a lock.
        if let Err(e) =
            unsafe { signal_hook::low_level::register(SIGBUS, stop) }
        {
            diag!(
                "robofilter: warning: cannot catch SIGBUS ({e}): a URL list \
                 cut underneath the run would end it with no message"
            );
        }
    });
}

/// Read leases on bundles (`fcntl(F_SETLEASE, F_RDLCK)`, Linux). While
/// this process holds one, no other process can open the file for
/// writing or truncate it: the kernel holds such an opener back (for up
/// to `/proc/sys/fs/lease-break-time`, 45 s by default) and sends this
/// process SIGIO, on which the run stops at once (status 2, temporary
/// outputs removed, the file named), so that the opener goes on only
/// after it. A map of a leased bundle therefore shows the octets
/// validated for as long as the run lasts, as a copy would, without the
/// copy.
///
/// The system refuses a lease on a file open for writing anywhere, on a
/// file another user owns (without `CAP_LEASE`) and on file systems
/// without leases (NFS, FUSE); the caller then reads the members instead.
/// A run stopped (SIGSTOP) for longer than the lease-break time lets the
/// opener through: it stops at once when it resumes.
#[cfg(target_os = "linux")]
mod lease {
    use std::ffi::{CString, c_char};
    use std::fs::File;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::ptr;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

    /// More leased files at once than this (shards) are read instead.
    const SLOTS: usize = 64;

    /// Per slot: a leased descriptor (`FREE`, or `CLAIMED` while a lease
    /// is being taken), and the message naming its file (a C string,
    /// never freed: a reused slot leaks the old one, a few hundred octets
    /// per leased file).
    static FDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(FREE) }; SLOTS];
    static WHY: [AtomicPtr<c_char>; SLOTS] =
        [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];
    const FREE: i32 = -1;
    const CLAIMED: i32 = -2;

    /// A read lease, given back when dropped.
    pub struct Lease {
        slot: usize,
        /// A duplicate of the file's descriptor (the lease belongs to the
        /// open file, which both share), so that the slot never names a
        /// closed descriptor.
        fd: OwnedFd,
    }

    impl Lease {
        /// Takes a read lease on `file` (named `name` in messages), or
        /// `None` if the system refuses it.
        pub fn take(file: &File, name: &str) -> Option<Lease> {
            if !watch() {
                return None;
            }
            let fd = OwnedFd::from(file.try_clone().ok()?);
            let why = CString::new(message(name)).ok()?;
            let slot = FDS.iter().position(|s| {
                s.compare_exchange(
                    FREE,
                    CLAIMED,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            })?;
            // Not armed yet: the handler reads only armed slots' messages.
            WHY[slot].store(why.into_raw(), Ordering::Release);
            if fcntl(fd.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) != 0 {
                FDS[slot].store(FREE, Ordering::Release);
                return None;
            }
            FDS[slot].store(fd.as_raw_fd(), Ordering::Release);
            // A break that began before the slot was armed found no slot
            // to stop for: it shows here.
            if fcntl(fd.as_raw_fd(), libc::F_GETLEASE, 0) != libc::F_RDLCK {
                stop(slot);
            }
            Some(Lease { slot, fd })
        }
    }

    impl Drop for Lease {
        fn drop(&mut self) {
            FDS[self.slot].store(FREE, Ordering::Release);
            // Given back explicitly: the file's own descriptor keeps the
            // open file, and with it the lease, alive.
            fcntl(self.fd.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK);
        }
    }

    fn message(name: &str) -> String {
        format!(
            "robofilter: bundle '{name}' was opened for writing by another \
             process during the run (to be changed in place): stopped \
             before any verdict could come from a changed file, and the \
             other process goes on once this one has ended; an output file \
             (-o) is left as it was. Run again, and replace a bundle in use \
             by writing a new file and renaming it over the old one (as \
             `robofilter compile -o` does).\n"
        )
    }

    #[allow(unsafe_code)]
    fn fcntl(fd: i32, cmd: i32, arg: i32) -> i32 {
        // SAFETY: F_SETLEASE and F_GETLEASE take an int and touch no
        // memory of this process; a bad descriptor fails with EBADF.
        unsafe { libc::fcntl(fd, cmd, arg) }
    }

    /// Catches SIGIO (once); whether it is caught.
    #[allow(unsafe_code)]
    fn watch() -> bool {
        static CAUGHT: OnceLock<bool> = OnceLock::new();
        *CAUGHT.get_or_init(|| {
            // SAFETY: `on_sigio` only makes async-signal-safe system calls
            // (fcntl, write, unlink, _exit) on memory that is never freed,
            // and neither allocates nor takes a lock.
            unsafe { signal_hook::low_level::register(libc::SIGIO, on_sigio) }
                .is_ok()
        })
    }

    /// SIGIO: stops the run if a leased file's lease is being broken (its
    /// lease then reads as `F_UNLCK`); any other SIGIO is ignored.
    fn on_sigio() {
        for (slot, fd) in FDS.iter().enumerate() {
            let fd = fd.load(Ordering::Acquire);
            if fd >= 0 && fcntl(fd, libc::F_GETLEASE, 0) == libc::F_UNLCK {
                stop(slot);
            }
        }
    }

    /// Stops the run with status 2, naming slot `slot`'s file:
    /// async-signal-safe.
    #[allow(unsafe_code)]
    fn stop(slot: usize) -> ! {
        let why = WHY[slot].load(Ordering::Acquire);
        // SAFETY: messages are `CString::into_raw` pointers, never freed.
        let why = if why.is_null() {
            &[][..]
        } else {
            unsafe { std::ffi::CStr::from_ptr(why) }.to_bytes()
        };
        super::signal_safe::stop(why, 2)
    }
}

/// Leases exist on Linux only: elsewhere bundles are read, not mapped.
#[cfg(not(target_os = "linux"))]
mod lease {
    pub enum Lease {}

    impl Lease {
        pub fn take(_: &std::fs::File, _: &str) -> Option<Lease> {
            None
        }
    }
}

/// The registered temporary files' names where a signal handler may read
/// them: in fixed slots, as C strings that are never freed (a name is
/// leaked when its file is committed or dropped: a few dozen octets per
/// temporary file), so that [`stop_on_sigbus`] needs neither a lock nor
/// an allocation.
mod signal_safe {
    use std::ffi::{CStr, CString, c_char};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, Ordering};

    /// More temporary files at once than this are not removed on SIGBUS
    /// (which only `filter`, with one output, can meet).
    const SLOTS: usize = 8;

    static NAMES: [AtomicPtr<c_char>; SLOTS] =
        [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];

    /// Registers the temporary file `path`.
    pub fn add(path: &Path) {
        let Ok(name) = CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        let name = name.into_raw();
        for slot in &NAMES {
            let free = ptr::null_mut();
            if slot
                .compare_exchange(
                    free,
                    name,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return;
            }
        }
        // No slot: not removed on SIGBUS. Freed, since no slot holds it.
        drop(unsafe_from_raw(name));
    }

    /// Forgets the temporary file `path` (its name is leaked).
    pub fn remove(path: &Path) {
        let path = path.as_os_str().as_bytes();
        for slot in &NAMES {
            let name = slot.load(Ordering::Acquire);
            if !name.is_null() && name_of(name).to_bytes() == path {
                let _ = slot.compare_exchange(
                    name,
                    ptr::null_mut(),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
        }
    }

    /// Writes `why` to stderr, removes every registered file and ends
    /// the process with `status`: async-signal-safe (what the SIGBUS and
    /// SIGIO handlers do).
    #[allow(unsafe_code)]
    pub fn stop(why: &[u8], status: i32) -> ! {
        // SAFETY: fd 2 is only written to; a closed one fails the write,
        // which is then skipped.
        let stderr = unsafe { std::os::fd::BorrowedFd::borrow_raw(2) };
        let _ = rustix::io::write(stderr, why);
        remove_all();
        signal_hook::low_level::exit(status);
    }

    /// Removes every registered file: async-signal-safe.
    fn remove_all() {
        for slot in &NAMES {
            let name = slot.load(Ordering::Acquire);
            if !name.is_null() {
                let _ = rustix::fs::unlink(name_of(name));
            }
        }
    }

    /// The name a slot held.
    #[allow(unsafe_code)]
    fn name_of<'a>(name: *mut c_char) -> &'a CStr {
        // SAFETY: slots hold only `CString::into_raw` pointers, never
        // freed once stored.
        unsafe { CStr::from_ptr(name) }
    }

    /// Takes back a name no slot took.
    #[allow(unsafe_code)]
    fn unsafe_from_raw(name: *mut c_char) -> CString {
        // SAFETY: `name` comes from `CString::into_raw` and was stored
        // nowhere.
        unsafe { CString::from_raw(name) }
    }
}

/// Fails when `out` is the same file (device and inode, through any link
/// or hard link) as one of `inputs` (`-`: stdin), naming both: writing the
/// output would destroy that input. A missing output is no input.
pub fn check_output_not_input(out: &Path, inputs: &[&Path]) -> Result<()> {
    #[cfg(unix)]
    {
        if is_stdin(out) {
            return Ok(());
        }
        let Ok(o) = fs::metadata(out) else {
            return Ok(());
        };
        if let Some(input) = input_that_is(&o, inputs) {
            bail!(
                "output '{}' is the input '{}' (the same file): writing it \
                 would destroy the input; choose another output",
                out.display(),
                display(input)
            );
        }
    }
    Ok(())
}

/// The first of `inputs` (`-`: stdin) that is the file `target` (the same
/// device and inode).
#[cfg(unix)]
fn input_that_is<'p>(
    target: &fs::Metadata,
    inputs: &[&'p Path],
) -> Option<&'p Path> {
    use std::os::unix::fs::MetadataExt;
    let id = (target.dev(), target.ino());
    inputs.iter().copied().find(|input| {
        let meta = match is_stdin(input) {
            true => stdin_metadata(),
            false => fs::metadata(input).ok(),
        };
        meta.is_some_and(|i| (i.dev(), i.ino()) == id)
    })
}

/// Fails if stdout is redirected to one of `inputs` (`>> u.txt`,
/// `1<>u.txt` or `> u.txt` for the URL list `u.txt`, or for stdin
/// redirected from it): the output would overwrite the input as it is
/// read. Only a regular file can be both.
pub fn check_stdout_not_input(inputs: &[&Path]) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let stdout = io::stdout().as_fd().try_clone_to_owned().ok();
        let Some(o) = stdout.and_then(|fd| File::from(fd).metadata().ok())
        else {
            return Ok(());
        };
        if !o.is_file() {
            return Ok(());
        }
        if let Some(input) = input_that_is(&o, inputs) {
            bail!(
                "stdout is the input '{}' (the same file): the output would \
                 overwrite it (and a `>` redirection has emptied it \
                 already); redirect stdout to another file or give -o OUT",
                display(input)
            );
        }
    }
    Ok(())
}

/// What stdin is (a file redirected with `<` can be an output too).
#[cfg(unix)]
fn stdin_metadata() -> Option<fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    File::from(fd).metadata().ok()
}

/// Whether `path` is this process's stdout (`/dev/stdout`, `/dev/fd/1`, or
/// the file stdout is redirected to): written as stdout, never replaced.
fn is_our_stdout(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let Ok(p) = fs::metadata(path) else {
            return false;
        };
        let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
            return false;
        };
        File::from(fd)
            .metadata()
            .is_ok_and(|s| (s.dev(), s.ino()) == (p.dev(), p.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Writes of at least this many octets bypass the output buffer (see
/// [`write_through`]).
pub const DIRECT_WRITE_LEN: usize = 16 << 10;

/// Writes `buf` through `w`: small writes are buffered, large ones (a
/// chunk's output, a run of lines passed through from a mapped input) go
/// straight to the inner writer after a flush, instead of being copied
/// into the buffer first.
fn write_through<W: Write>(
    w: &mut io::BufWriter<W>,
    buf: &[u8],
) -> io::Result<()> {
    if buf.len() >= DIRECT_WRITE_LEN {
        w.flush()?;
        w.get_mut().write_all(buf)
    } else {
        w.write_all(buf)
    }
}

/// Writes `parts` in order through `w`: a few short ones into the buffer;
/// else, after a flush, straight to the inner writer, gathered into as
/// few calls as the system takes (`writev`), with no copy.
fn write_parts<W: Write>(
    w: &mut io::BufWriter<W>,
    mut parts: &mut [IoSlice<'_>],
) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len < DIRECT_WRITE_LEN {
        return parts.iter().try_for_each(|p| w.write_all(p));
    }
    w.flush()?;
    let inner = w.get_mut();
    while !parts.is_empty() {
        match inner.write_vectored(parts) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut parts, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Where data output goes: stdout or an [`AtomicFile`].
pub enum Output {
    /// Stdout, unlocked so that a worker thread may write it (the buffer
    /// takes the lock once per 1 MiB).
    Stdout(io::BufWriter<io::Stdout>),
    File(AtomicFile),
}

impl Output {
    /// Writes `parts`, in order, as [`Write::write_all`] would write them
    /// one after another, with fewer calls and no copy where they are
    /// long.
    pub fn write_parts(
        &mut self,
        parts: &mut [IoSlice<'_>],
    ) -> io::Result<()> {
        match self {
            Output::Stdout(w) => write_parts(w, parts),
            Output::File(f) => f.write_parts(parts),
        }
    }

    /// Stdout (also for `-` and a path that is our stdout, such as
    /// `/dev/stdout`), or `path` as an [`AtomicFile`].
    pub fn new(path: Option<&Path>) -> Result<Output> {
        Ok(match path {
            Some(p) if !is_stdin(p) && !is_our_stdout(p) => {
                Output::File(AtomicFile::create(p)?)
            }
            _ => Output::Stdout(io::BufWriter::with_capacity(
                OUT_BUF_LEN,
                io::stdout(),
            )),
        })
    }

    /// Flushes stdout, or commits the file.
    pub fn finish(self) -> Result<()> {
        match self {
            Output::Stdout(mut w) => {
                w.flush().context("cannot write output to stdout")
            }
            Output::File(f) => f.commit(),
        }
    }

    /// How to name the destination in messages.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout(_) => "stdout".to_string(),
            Output::File(f) => format!("'{}'", f.dest.display()),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => write_through(w, buf),
            Output::File(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

/// A URL argument's bytes, exactly as given.
pub fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(s.as_bytes())
    }
    #[cfg(not(unix))]
    {
        match s.to_string_lossy() {
            std::borrow::Cow::Borrowed(s) => {
                std::borrow::Cow::Borrowed(s.as_bytes())
            }
            std::borrow::Cow::Owned(s) => {
                std::borrow::Cow::Owned(s.into_bytes())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_is_told_by_magic() {
        assert_eq!(
            Compression::detect(b"\x1f\x8b\x08"),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::detect(b"\x28\xb5\x2f\xfd\x00"),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::detect(b"http://"), None);
        assert_eq!(Compression::detect(b""), None);
    }

    /// Whatever the size hint (too small, exact, too large), the whole
    /// input is read, aligned, in reads of any size.
    #[test]
    fn aligned_read_keeps_every_byte() {
        /// Hands out at most 1000 bytes per read.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(1000);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
        for len in [0, 1, 8, 65_535, 65_536, 65_537, 300_000] {
            for hint in [0, len / 2, len, len + 1, 2 * len + 9] {
                let got =
                    Aligned::read_from(Trickle(&data[..len]), hint).unwrap();
                assert_eq!(got.as_bytes(), &data[..len], "{len} {hint}");
                assert_eq!(got.as_bytes().as_ptr() as usize % 8, 0);
            }
        }
    }

    /// A file read to an end short of its length at open fails, naming
    /// both lengths; a whole or a grown one reads to its end.
    #[test]
    fn whole_fails_on_a_file_cut_underneath() {
        let data = b"http://x/a\nhttp://x/b\n";
        for len in [0, 5, data.len() as u64] {
            let mut got = Vec::new();
            Whole::new(&data[..], len).read_to_end(&mut got).unwrap();
            assert_eq!(got, data);
        }
        let mut got = Vec::new();
        let err = Whole::new(&data[..], 100).read_to_end(&mut got);
        let err = err.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("shrank from 100 octets to 22"));
        assert_eq!(got, data);
    }

    /// Members read through a [`MemberFile`] are the bundle's own octets,
    /// with the member 8-byte aligned, whether they go to an arena with
    /// room for all, one that runs out after a few (the rest go to the
    /// heap), or none; each is read once.
    #[test]
    fn members_read_into_an_arena_or_the_heap_are_the_files_octets() {
        use robofilter::{BundleBuilder, Fetch};
        let mut builder = BundleBuilder::new(Config::new());
        for i in 0..40 {
            let body = format!(
                "User-agent: *\nDisallow: /{i}\n{}",
                "Allow: /x*y\n".repeat(i)
            );
            let fetch = Fetch::Http { status: 200, body: body.into_bytes() };
            builder.add(&format!("h{i}.test"), fetch).unwrap();
        }
        let bytes = builder.finish().unwrap();
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&bytes).unwrap();
        let index = BundleIndex::open(tmp.path(), "bundle").unwrap();
        let index = index.expect("a bundle file");
        let bundle = index.load().unwrap();
        let n = bundle.member_len();
        assert!(n >= 40, "{n} members");
        let whole = Aligned::from(&bytes[..]);
        let full = Bundle::from_bytes(whole.as_bytes()).unwrap();
        // Room for about the first half of the members.
        let half: usize = (0..n / 2)
            .map(|m| bundle.member_span(m))
            .map(|s| s.padding() + s.member_len())
            .sum();
        let small = || Arena { map: memmap2::MmapMut::map_anon(half).ok() };
        let arenas =
            [Arena::for_bundle(&index, n), small(), Arena { map: None }];
        for (k, mut arena) in arenas.into_iter().enumerate() {
            let file = MemberFile::new(&index, n, &mut arena);
            for m in (0..n).chain(0..n) {
                let span = bundle.member_span(m);
                let (padding, member) = file.read(m, span).unwrap();
                let at = span.offset() as usize;
                assert_eq!(padding, &bytes[at..at + span.padding()]);
                assert_eq!(
                    member,
                    &bytes[at + span.padding()..][..member.len()]
                );
                assert_eq!(member.len(), span.member_len());
                assert_eq!(member.as_ptr() as usize % 8, 0, "arena {k}");
                full.member_from(m, padding, member).unwrap();
            }
            let in_arena = file
                .slots
                .iter()
                .filter(|s| matches!(**s.get().unwrap(), Ok(Span::Arena(_))))
                .count();
            match k {
                0 => assert_eq!(in_arena, n),
                1 => assert!(in_arena > 0 && in_arena < n, "{in_arena}"),
                _ => assert_eq!(in_arena, 0),
            }
        }
    }

    /// A bundle nobody has open for writing is leased and mapped: its
    /// members are the file's octets where the map holds them (no copy),
    /// 8-byte aligned; dropping the index gives the lease back, so that
    /// the file can be opened for writing again without waiting.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_leased_bundle_is_read_from_its_map() {
        use std::os::unix::fs::OpenOptionsExt;

        use robofilter::{BundleBuilder, Fetch};
        let mut builder = BundleBuilder::new(Config::new());
        for i in 0..12 {
            let body = format!("User-agent: *\nDisallow: /{i}*x\n");
            let fetch = Fetch::Http { status: 200, body: body.into_bytes() };
            builder.add(&format!("h{i}.test"), fetch).unwrap();
        }
        let bytes = builder.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.bundle");
        fs::write(&path, &bytes).unwrap();
        let index = BundleIndex::open(&path, "bundle").unwrap().unwrap();
        if !index.is_mapped() {
            println!("skipped: this file system grants no read lease");
            return;
        }
        let map = index.map.as_ref().unwrap().as_ptr_range();
        let bundle = index.load().unwrap();
        let n = bundle.member_len();
        let mut arena = Arena::for_bundle(&index, n);
        assert!(arena.map.is_none(), "an arena beside the map");
        let file = MemberFile::new(&index, n, &mut arena);
        for m in 0..n {
            let span = bundle.member_span(m);
            let (padding, member) = file.read(m, span).unwrap();
            let at = span.offset() as usize + span.padding();
            assert_eq!(padding.len(), span.padding());
            assert_eq!(member, &bytes[at..at + span.member_len()]);
            assert!(map.contains(&member.as_ptr()), "member {m} copied");
            assert_eq!(member.as_ptr() as usize % 8, 0);
        }
        // A writer that would wait for the lease fails at once instead.
        let nonblocking_writer = || {
            fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
        };
        drop(file);
        drop(index);
        nonblocking_writer().expect("the lease was given back");
        // Given back when dropped, though the file stays open.
        let reader = File::open(&path).unwrap();
        let lease = lease::Lease::take(&reader, "b.bundle").unwrap();
        drop(lease);
        nonblocking_writer().expect("the lease was given back");
        drop(reader);
    }

    /// A window maps the octets asked for, from any offset (not only a
    /// page's start), up to the length at open; a file now shorter than
    /// that fails before any octet is mapped.
    #[test]
    fn windows_map_from_any_offset_and_refuse_a_cut_file() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        let file = tmp.as_file();
        let len = data.len() as u64;
        for (offset, min_len, populate) in [
            (0, 10, true),
            (1, 4096, false),
            (4095, 10, true),
            (4097, 9_000, false),
        ] {
            let w = map_window(file, offset, min_len, len, populate, "in");
            let w = w.unwrap().expect("a temporary file can be mapped");
            let start = offset as usize;
            let end = data.len().min(start + min_len);
            assert_eq!(w.data(), &data[start..end], "{offset} {min_len}");
            assert_eq!(w.end(), end as u64);
        }
        let err =
            map_window(file, 4096, 10, len + 1, true, "in").err().unwrap();
        let err = format!("{err:#}");
        assert!(
            err.contains("'in': the file shrank from 10001 octets to 10000"),
            "{err}"
        );
    }
}
