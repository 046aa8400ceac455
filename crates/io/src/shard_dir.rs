//! Shard directories: `compile --shards N -o DIR` writes N bundles and an
//! `index.json` naming them; `filter`, `check`, `explain` and `inspect`
//! read such a directory wherever they take a bundle, opening a shard only
//! when a URL needs it. A host's shard is [`robofilter::shard_of_key`] of
//! its bundle host key.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, anyhow, bail};
use robofilter::{
    Bundle, Dialect, HOST_HASH_NAME, MemberReader, Members, ShardOpener,
    UrlChecker,
};

use crate::bundle_file::{Arena, BundleIndex, MemberFile};
use crate::compiled::{check_agents, check_dialect, load_bundle};
use crate::owned::Bytes;
use crate::path as files;
use crate::read::read_compiled;

/// The most shards a directory may have.
pub const MAX_SHARDS: u32 = 1 << 16;

/// The index file of a shard directory.
pub const INDEX_NAME: &str = "index.json";

/// What `index.json` says it is (its `format` key).
pub const FORMAT: &str = "robofilter-shards";

/// The version of the shard directory layout (`index.json`'s `version`).
pub const VERSION: u32 = 1;

/// The file name of shard `i` of `n`: `shard-00003-of-00008.bundle`.
pub fn shard_name(i: u32, n: u32) -> String {
    format!("shard-{i:05}-of-{n:05}.bundle")
}

/// `index.json`: what every reader checks before it opens a shard.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardIndex {
    /// Always `FORMAT`.
    pub format: String,
    /// The layout version, `VERSION`.
    pub version: u32,
    /// How many shards: a host's shard is `hash(key) mod shards`.
    pub shards: u32,
    /// The host hash, [`HOST_HASH_NAME`].
    pub hash: String,
    /// The dialect every shard was compiled in.
    pub dialect: String,
    /// The agents the shards were compiled for; `None`: every agent the
    /// files name, and `*`.
    pub agents: Option<Vec<String>>,
    /// Tells this build's shards from another's.
    pub build_id: String,
    /// The hosts in all shards together.
    pub hosts: u64,
    /// Per shard, in order.
    pub files: Vec<ShardFile>,
}

/// One shard as `index.json` records it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    /// The file name, [`shard_name`].
    pub name: String,
    /// Its length in octets.
    pub length: u64,
    /// The CRC-32 (IEEE) of the whole file.
    pub crc32: u32,
    /// The hosts it holds.
    pub hosts: u64,
    /// The shard's fingerprint ([`fingerprint`]: a CRC-32 of the checksums
    /// the shard itself stores, its index's and each member's): a reader
    /// compares it before the shard's first verdict, so that another
    /// build's shard of the same length is refused without reading the
    /// whole file. Absent from indexes written before it was added: the
    /// whole file's CRC is checked then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<u32>,
}

/// A bundle's fingerprint: the CRC-32 of its index checksum and of each
/// member's own checksum, in member order, each read by `read_at` (four
/// octets at a file offset; `None` if they cannot be read, and then so is
/// the fingerprint).
pub fn fingerprint(
    bundle: &Bundle<'_>,
    mut read_at: impl FnMut(u64) -> Option<[u8; 4]>,
) -> Option<u32> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bundle.index_checksum().to_le_bytes());
    for m in 0..bundle.member_len() {
        crc.update(&read_at(bundle.member_checksum_at(m))?);
    }
    Some(crc.finalize())
}

impl ShardFile {
    /// The record of shard `i` of `n`: `bundle`, loaded from `bytes`.
    pub fn of(i: u32, n: u32, bundle: &Bundle<'_>, bytes: &[u8]) -> ShardFile {
        ShardFile {
            name: shard_name(i, n),
            length: bytes.len() as u64,
            crc32: crc32fast::hash(bytes),
            hosts: bundle.host_len() as u64,
            fingerprint: fingerprint(bundle, |at| {
                let at = usize::try_from(at).ok()?;
                bytes.get(at..at + 4)?.try_into().ok()
            }),
        }
    }
}

impl ShardIndex {
    /// The index of a build of `files` (in shard order), compiled with
    /// `dialect` for `agents` (`None`: every agent).
    pub fn new(
        dialect: Dialect,
        agents: Option<Vec<String>>,
        build_id: String,
        files: Vec<ShardFile>,
    ) -> ShardIndex {
        ShardIndex {
            format: FORMAT.into(),
            version: VERSION,
            shards: files.len() as u32,
            hash: HOST_HASH_NAME.into(),
            dialect: dialect.to_string(),
            agents,
            build_id,
            hosts: files.iter().map(|f| f.hosts).sum(),
            files,
        }
    }

    /// The index as `index.json` holds it.
    pub fn to_json(&self) -> Vec<u8> {
        let mut json =
            serde_json::to_vec_pretty(self).expect("an index serialises");
        json.push(b'\n');
        json
    }

    /// Whether `path` is a shard directory (a directory holding
    /// `index.json`).
    pub fn is_dir(path: &Path) -> bool {
        path.is_dir() && path.join(INDEX_NAME).is_file()
    }

    /// Reads and checks `DIR/index.json`, naming the file in errors.
    pub fn read(dir: &Path) -> Result<ShardIndex> {
        let path = dir.join(INDEX_NAME);
        let name = files::display(&path);
        // An index is a few hundred octets per shard: 64 MiB is plenty.
        let text = read_capped(&path, 64 << 20)
            .with_context(|| format!("cannot read shard index '{name}'"))?;
        ShardIndex::from_json(&text, &name)
    }

    /// Parses and checks the octets of an `index.json` (read from anywhere:
    /// a remote file system too), naming it `name` in errors.
    pub fn from_json(text: &[u8], name: &str) -> Result<ShardIndex> {
        let index: ShardIndex = serde_json::from_slice(text)
            .with_context(|| format!("shard index '{name}' is damaged"))?;
        let bad = |why: String| -> Result<ShardIndex> {
            bail!("shard index '{name}' is unusable: {why}")
        };
        if index.format != FORMAT {
            return bad(format!("its format is {:?}", index.format));
        }
        if index.version != VERSION {
            return bad(format!(
                "its version is {}, this robofilter reads version {VERSION} \
                 (compile the shards again)",
                index.version
            ));
        }
        if index.hash != HOST_HASH_NAME {
            return bad(format!(
                "its host hash is {:?}, this robofilter shards by \
                 {HOST_HASH_NAME:?}",
                index.hash
            ));
        }
        if index.dialect.parse::<Dialect>().is_err() {
            return bad(format!("unknown dialect {:?}", index.dialect));
        }
        if index.shards == 0 || index.shards > MAX_SHARDS {
            return bad(format!("{} shards", index.shards));
        }
        if index.files.len() != index.shards as usize {
            return bad(format!(
                "it names {} shard files for {} shards",
                index.files.len(),
                index.shards
            ));
        }
        for (i, f) in index.files.iter().enumerate() {
            let want = shard_name(i as u32, index.shards);
            if f.name != want {
                return bad(format!(
                    "shard {i} is named {:?}, not {want:?}",
                    f.name
                ));
            }
        }
        Ok(index)
    }

    /// The dialect (checked by [`ShardIndex::read`]).
    pub fn dialect(&self) -> Dialect {
        self.dialect.parse().expect("checked when read")
    }

    /// The index of the shard that holds `host` (a host name, normalised
    /// as bundle host keys are).
    pub fn shard_of_host(&self, host: &str) -> Result<usize> {
        let key = robofilter::normalize_host(host).map_err(|e| anyhow!(e))?;
        Ok(robofilter::shard_of_key(key.as_bytes(), self.shards) as usize)
    }

    /// Shard `i` of `dir` read whole after [`ShardIndex::check_shard`]
    /// (its CRC-32 included): its path and octets, for
    /// [`ShardIndex::load_shard`].
    pub fn read_shard(
        &self,
        dir: &Path,
        i: usize,
    ) -> Result<(PathBuf, Bytes)> {
        self.check_shard(dir, i, true)?;
        let path = dir.join(&self.files[i].name);
        let bytes = read_compiled(&path, "shard")?;
        Ok((path, bytes))
    }

    /// A shard's octets (from [`ShardIndex::read_shard`], the file
    /// `path`) loaded as a bundle, which must have the index's dialect.
    pub fn load_shard<'b>(
        &self,
        bytes: &'b [u8],
        path: &Path,
    ) -> Result<Bundle<'b>> {
        let bundle = load_bundle(bytes, path)?;
        if bundle.dialect() != self.dialect() {
            bail!(
                "shard '{}' has the {} dialect, its index says {}",
                files::display(path),
                bundle.dialect(),
                self.dialect()
            );
        }
        Ok(bundle)
    }

    /// Checks that `DIR/<shard i>` is the file this index names (its
    /// length, and with `crc` its CRC-32 too), naming the file in errors.
    pub fn check_shard(&self, dir: &Path, i: usize, crc: bool) -> Result<()> {
        let f = &self.files[i];
        let path = dir.join(&f.name);
        let name = files::display(&path);
        let meta = fs::metadata(&path).with_context(|| {
            format!(
                "shard {i} of '{}' is missing: cannot open '{name}' (a \
                 shard directory is used whole: compile it again or copy \
                 every shard)",
                files::display(dir)
            )
        })?;
        if meta.len() != f.length {
            bail!(
                "shard '{name}' is {} octets, its index says {}: it is not \
                 the shard of this build (compile the shards again, or copy \
                 the whole directory)",
                meta.len(),
                f.length
            );
        }
        if crc {
            let mut hasher = crc32fast::Hasher::new();
            let mut file = fs::File::open(&path)
                .with_context(|| format!("cannot open shard '{name}'"))?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = io::Read::read(&mut file, &mut buf)
                    .with_context(|| format!("cannot read shard '{name}'"))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
            let got = hasher.finalize();
            if got != f.crc32 {
                bail!(
                    "shard '{name}' is damaged: its CRC-32 is {got:08x}, its \
                     index says {:08x}",
                    f.crc32
                );
            }
        }
        Ok(())
    }
}

/// Reads at most `cap` octets of `path`; more is an error.
fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let file = fs::File::open(path)?;
    io::Read::read_to_end(&mut io::Read::take(file, cap + 1), &mut out)?;
    if out.len() as u64 > cap {
        return Err(io::Error::other(format!("longer than {cap} octets")));
    }
    Ok(out)
}

/// A shard directory being written: a temporary directory beside the
/// destination (removed on a signal or on drop), renamed to it on commit.
/// The destination is new, or a shard directory (it has an `index.json`),
/// which is then replaced as a whole: the new directory and the old are
/// exchanged in one step where the system can (Linux `RENAME_EXCHANGE`),
/// and the old one is removed only after that.
pub struct AtomicDir {
    dest: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl AtomicDir {
    /// Creates the temporary directory beside `dest`, before any work.
    pub fn create(dest: &Path) -> Result<AtomicDir> {
        if fs::symlink_metadata(dest).is_ok() && !ShardIndex::is_dir(dest) {
            bail!(
                "output '{}' exists and is not a shard directory (it has no \
                 index.json): --shards replaces only a shard directory \
                 (remove it, or name another)",
                dest.display()
            );
        }
        let Some(name) = dest.file_name() else {
            bail!("output '{}' is not a directory name", dest.display());
        };
        let parent = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let prefix = crate::output::temp_prefix(name);
        let temp = crate::temps::registered_temp(|| {
            tempfile::Builder::new()
                .prefix(&prefix)
                .suffix(crate::output::TEMP_SUFFIX)
                .tempdir_in(parent)
                .map(|t| {
                    let path = t.path().to_path_buf();
                    (t, path)
                })
        })
        .with_context(|| {
            format!(
                "cannot create a temporary directory in '{}' for output \
                 '{}' (does the directory exist and is it writable?)",
                parent.display(),
                dest.display()
            )
        })?;
        Ok(AtomicDir { dest: dest.to_path_buf(), temp: Some(temp) })
    }

    /// The temporary directory's path.
    pub fn path(&self) -> &Path {
        self.temp.as_ref().expect("not committed").path()
    }

    /// Writes `bytes` as `name` in the temporary directory, synced.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path().join(name);
        let write = || -> io::Result<()> {
            let mut f = fs::File::create(&path)?;
            f.write_all(bytes)?;
            f.sync_all()
        };
        write().with_context(|| {
            format!(
                "cannot write '{}' of output '{}'",
                name,
                self.dest.display()
            )
        })
    }

    /// Renames the temporary directory to the destination, which must
    /// still not exist.
    pub fn commit(mut self) -> Result<()> {
        let temp = self.temp.take().expect("not committed");
        let dest = self.dest.clone();
        let mut replaced = false;
        crate::temps::commit_temp(temp.path(), || {
            if fs::symlink_metadata(&dest).is_err() {
                return fs::rename(temp.path(), &dest);
            }
            if !ShardIndex::is_dir(&dest) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "something other than a shard directory was created \
                     there during the run",
                ));
            }
            replaced = true;
            exchange(temp.path(), &dest)
        })
        .with_context(|| {
            format!("cannot write output '{}'", dest.display())
        })?;
        if replaced {
            // The old directory now sits at the temporary path.
            let old = temp.path().to_path_buf();
            let _ = temp.keep();
            fs::remove_dir_all(&old).with_context(|| {
                format!(
                    "wrote '{}', but cannot remove the shard directory it \
                     replaced, now at '{}' (remove it)",
                    dest.display(),
                    old.display()
                )
            })?;
            return Ok(());
        }
        // Renamed: nothing left for the TempDir to remove.
        let _ = temp.keep();
        Ok(())
    }
}

/// Puts directory `new` at `dest` and the directory at `dest` at `new`:
/// in one step on Linux (`renameat2(RENAME_EXCHANGE)`: no moment without
/// a directory at `dest`), else by two renames.
fn exchange(new: &Path, dest: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, new, CWD, dest, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(()),
            // A file system without the exchange: two renames below.
            Err(e)
                if e == rustix::io::Errno::INVAL
                    || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    let aside = new.with_extension("old");
    fs::rename(dest, &aside)?;
    if let Err(e) = fs::rename(new, dest) {
        let _ = fs::rename(&aside, dest);
        return Err(e);
    }
    fs::rename(&aside, new)
}

impl Drop for AtomicDir {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let path = temp.path().to_path_buf();
            drop(temp);
            crate::temps::forget_temp(&path);
        }
    }
}

/// The files of the shard directory `dir` (its index and every shard that
/// exists), for the check that an output is not an input; none if `dir`
/// is not a shard directory.
pub fn files_of(dir: &Path) -> Vec<PathBuf> {
    if !ShardIndex::is_dir(dir) {
        return Vec::new();
    }
    let mut files = vec![dir.join(INDEX_NAME)];
    if let Ok(entries) = fs::read_dir(dir) {
        let shard = |p: &PathBuf| p.extension().is_some_and(|e| e == "bundle");
        files.extend(entries.flatten().map(|e| e.path()).filter(shard));
    }
    files
}

/// A shard directory opened for deciding URLs: its index read and checked,
/// each shard opened when a URL of one of its hosts first needs it.
///
/// What it opens lives as long as the process (the index, and each shard's
/// index and the members read): a front end opens a directory once per
/// run (the CLI) or keeps it open (the wheel).
#[derive(Clone, Copy)]
pub struct OpenShards {
    n: usize,
    dialect: Dialect,
    hosts: u64,
    open: &'static ShardOpener<'static>,
}

impl OpenShards {
    /// The dialect the shards were compiled with.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// How many shards the directory has.
    pub fn shard_len(&self) -> usize {
        self.n
    }

    /// The hosts in all shards together, as `index.json` says.
    pub fn host_len(&self) -> u64 {
        self.hosts
    }

    /// A checker of these shards for `agents`.
    pub fn checker(&self, agents: &[&str]) -> UrlChecker<'static> {
        UrlChecker::shards(self.n, self.dialect, self.open, agents)
    }
}

/// Opens the shard directory `dir` for `agents` (checked against the
/// agents it was compiled for) and, if given, the dialect the user asked
/// for: see [`OpenShards`]. Each shard's index is read, checked against
/// `index.json` and loaded the first time a URL of one of its hosts is
/// decided, and its members as `filter` reads a bundle's.
pub fn open_shards(
    dir: &Path,
    agents: &[String],
    dialect: Option<Dialect>,
) -> Result<OpenShards> {
    let index = ShardIndex::read(dir)?;
    check_dialect(dialect, index.dialect(), "shard directory", dir)?;
    check_agents(agents, index.dialect())?;
    if let Some(compiled) = &index.agents {
        for agent in agents {
            if agent != "*"
                && !compiled.iter().any(|c| c.eq_ignore_ascii_case(agent))
            {
                bail!(
                    "shard directory '{}' was compiled for {} only, not for \
                     '{agent}' (compile it again with --agent {agent}, or \
                     without --agent for every agent)",
                    files::display(dir),
                    compiled.join(", ")
                );
            }
        }
    }
    // What a checker of shards borrows lives as long as the process (the
    // CLI makes one per run): the shards' indexes, their member files and
    // readers, each made when its shard is first needed.
    let n = index.files.len();
    let hosts = index.hosts;
    let dialect = index.dialect();
    let index: &'static ShardIndex = Box::leak(Box::new(index));
    let dir: &'static Path = Box::leak(dir.to_path_buf().into_boxed_path());
    let bundles: &'static [OnceLock<Result<BundleIndex, String>>] =
        Vec::leak((0..n).map(|_| OnceLock::new()).collect());
    let member_files: &'static [OnceLock<MemberFile<'static>>] =
        Vec::leak((0..n).map(|_| OnceLock::new()).collect());
    let readers: &'static [OnceLock<&'static MemberReader<'static>>] =
        Vec::leak((0..n).map(|_| OnceLock::new()).collect());
    let open = move |i: usize| -> Result<
        (Bundle<'static>, Arc<Members<'static>>),
        String,
    > {
        let shard = bundles[i]
            .get_or_init(|| {
                open_shard(dir, index, i).map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let bundle = shard.load().map_err(|e| format!("{e:#}"))?;
        let file = member_files[i].get_or_init(|| {
            let n = bundle.member_len();
            let arena = Box::leak(Box::new(Arena::for_bundle(shard, n)));
            MemberFile::new(shard, n, arena)
        });
        let reader = *readers[i].get_or_init(|| {
            Box::leak(Box::new(move |m, span| file.read(m, span)))
        });
        let members = Members::with_reader(&bundle, reader);
        Ok((bundle, Arc::new(members)))
    };
    let open: &'static ShardOpener<'static> = Box::leak(Box::new(open));
    Ok(OpenShards { n, dialect, hosts, open })
}

/// Opens shard `i` of `dir` and reads its bundle index, after checking
/// that it is the file `index` names.
fn open_shard(
    dir: &Path,
    index: &ShardIndex,
    i: usize,
) -> Result<BundleIndex> {
    let want = &index.files[i];
    // Without a fingerprint in index.json (an older build), the whole
    // file's CRC is checked instead.
    index.check_shard(dir, i, want.fingerprint.is_none())?;
    let path = dir.join(&want.name);
    let shard = match BundleIndex::open(&path, "shard")? {
        Some(shard) => shard,
        None => bail!(
            "shard '{}' is not a bundle (compile the shards again)",
            files::display(&path)
        ),
    };
    if let Some(want_print) = want.fingerprint {
        let bundle = shard.load()?;
        let have = fingerprint(&bundle, |at| shard.read_4(at).ok());
        if have != Some(want_print) {
            let have =
                have.map_or("unreadable".into(), |h| format!("{h:08x}"));
            bail!(
                "shard '{}' is not the shard of this build: its fingerprint \
                 is {have}, index.json says {want_print:08x} (a shard of \
                 another build, copied in?); compile the shards again, or \
                 copy the whole directory",
                files::display(&path)
            );
        }
    }
    Ok(shard)
}
