//! A bundle file opened lazily: its index when opened, each member when a
//! URL first needs it, under a read lease (mapped) or by positioned reads
//! checked against the file's identity.

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result, anyhow};
use robofilter::{Bundle, MemberSpan, Members, UrlChecker};

use crate::lease;
use crate::owned::Aligned;
use crate::path::{display, is_stdin, open};
use crate::signals::{self, stop_on_sigbus};

/// Maps all `len` octets of `file`, a bundle this process holds a read
/// lease on; `None` if the system will not map it.
#[allow(unsafe_code)]
fn map_leased(file: &File, len: u64) -> Option<memmap2::Mmap> {
    let len = usize::try_from(len).ok().filter(|&n| n > 0)?;
    // A read error on a mapped page raises SIGBUS: stopped with a word.
    if !stop_on_sigbus() {
        return None;
    }
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
/// writing; see `lease`), the whole file is mapped and members are read
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
    pub(crate) map: Option<memmap2::Mmap>,
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
    /// which is read whole with `read_owned`.
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
        let lease = match signals::installed() {
            true => lease::Lease::take(&file, &name),
            false => None,
        };
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

    /// The four octets at file offset `at`: from the map, or read, and the
    /// file checked to be the one opened.
    #[cfg(unix)]
    pub fn read_4(&self, at: u64) -> io::Result<[u8; 4]> {
        use std::os::unix::fs::FileExt;
        let mut out = [0u8; 4];
        match &self.map {
            Some(map) => {
                let range = usize::try_from(at)
                    .ok()
                    .and_then(|a| Some(a..a.checked_add(4)?))
                    .and_then(|r| map.get(r))
                    .ok_or_else(|| io::Error::other("outside the file"))?;
                out.copy_from_slice(range);
            }
            None => {
                self.file.read_exact_at(&mut out, at)?;
                self.check_unchanged()?;
            }
        }
        Ok(out)
    }

    #[cfg(not(unix))]
    pub fn read_4(&self, _at: u64) -> io::Result<[u8; 4]> {
        unreachable!("BundleIndex::open reads no index off unix")
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
/// (the lab notes in docs/records).
pub struct Arena {
    pub(crate) map: Option<memmap2::MmapMut>,
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
    pub(crate) slots: Vec<OnceLock<Box<io::Result<Span<'f>>>>>,
}

/// A member's span as read: in the arena, or (once the arena is used up,
/// or without one) in a heap buffer of its own after up to 7 octets that
/// align the member to 8.
pub(crate) enum Span<'f> {
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
    // which `-j 2` has nothing to share (the lab notes in docs/records).
    std::mem::forget(checker);
    result
}
