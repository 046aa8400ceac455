//! Shard directories: `compile --shards N -o DIR` writes N bundles and an
//! `index.json` naming them; `filter`, `check`, `explain` and `inspect`
//! read such a directory wherever they take a bundle, opening a shard only
//! when a URL needs it. A host's shard is [`robofilter::shard_of_key`] of
//! its bundle host key.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use robofilter::{
    Bundle, Dialect, HOST_HASH_NAME, MemberReader, Members, ShardOpener,
    UrlChecker,
};

use crate::args::{MAX_SHARDS, ShardArgs};
use crate::files::{self, Arena, BundleIndex, MemberFile, Output};
use crate::input::Input;

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
    /// Always [`FORMAT`].
    pub format: String,
    /// The layout version, [`VERSION`].
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
}

impl ShardIndex {
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
        let index: ShardIndex = serde_json::from_slice(&text)
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
/// The destination must not exist.
pub struct AtomicDir {
    dest: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl AtomicDir {
    /// Creates the temporary directory beside `dest`, before any work.
    pub fn create(dest: &Path) -> Result<AtomicDir> {
        if fs::symlink_metadata(dest).is_ok() {
            bail!(
                "output '{}' exists: --shards writes a new directory (remove \
                 it, or name another)",
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
        let prefix = files::temp_prefix(name);
        let temp = files::registered_temp(|| {
            tempfile::Builder::new()
                .prefix(&prefix)
                .suffix(files::TEMP_SUFFIX)
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
        files::commit_temp(temp.path(), || {
            if fs::symlink_metadata(&dest).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "it was created during the run",
                ));
            }
            fs::rename(temp.path(), &dest)
        })
        .with_context(|| {
            format!("cannot write output '{}'", dest.display())
        })?;
        // Renamed: nothing left for the TempDir to remove.
        let _ = temp.keep();
        Ok(())
    }
}

impl Drop for AtomicDir {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let path = temp.path().to_path_buf();
            drop(temp);
            files::forget_temp(&path);
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

/// Runs `f` with a checker of the shard directory `dir` for `agents`:
/// each shard's index is read, checked against `index.json` and loaded the
/// first time a URL of one of its hosts is decided, and its members as
/// `filter` reads a bundle's (each once, by a positioned read).
pub fn with_checker<T>(
    dir: &Path,
    agents: &[String],
    f: impl for<'a> FnOnce(&UrlChecker<'a>) -> Result<T>,
) -> Result<T> {
    let index = ShardIndex::read(dir)?;
    files::check_agents(agents, index.dialect())?;
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
    let agents: Vec<&str> = agents.iter().map(String::as_str).collect();
    let checker = UrlChecker::shards(n, dialect, open, &agents);
    f(&checker)
}

/// Opens shard `i` of `dir` and reads its bundle index, after checking
/// that it is the file `index` names.
fn open_shard(
    dir: &Path,
    index: &ShardIndex,
    i: usize,
) -> Result<BundleIndex> {
    index.check_shard(dir, i, false)?;
    let path = dir.join(&index.files[i].name);
    match BundleIndex::open(&path, "shard")? {
        Some(shard) => Ok(shard),
        None => bail!(
            "shard '{}' is not a bundle (compile the shards again)",
            files::display(&path)
        ),
    }
}

/// `robofilter shard --shards N [FILE...]`: `SHARD<TAB>LINE` per line.
pub fn run(args: ShardArgs) -> Result<()> {
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    let inputs: Vec<_> =
        paths.iter().map(|p| (p.as_path(), "URL list")).collect();
    crate::input::check_streams_once(&inputs)?;
    let read: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    match &args.output {
        Some(out) => files::check_output_not_input(out, &read)?,
        None => files::check_stdout_not_input(&read)?,
    }
    let mut out = Output::new(args.output.as_deref())?;
    // Every input is opened before any output, as `filter` does.
    let inputs: Vec<Input> =
        paths.iter().map(|p| Input::open(p)).collect::<Result<_>>()?;
    let (mut lines, mut keyless, mut examples) = (0u64, 0u64, Vec::new());
    let mut key = Vec::new();
    let mut line = Vec::new();
    for (path, input) in paths.iter().zip(inputs) {
        let name = files::display(path);
        let mut reader =
            io::BufReader::with_capacity(1 << 20, input.into_reader(path)?);
        let mut number = 0u64;
        loop {
            line.clear();
            let whole = read_line(&mut reader, &mut line, MAX_LINE_LEN)
                .with_context(|| format!("cannot read '{name}'"))?;
            let Some(whole) = whole else { break };
            number += 1;
            lines += 1;
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            match whole.then(|| {
                robofilter::shard_of_line(text, args.shards, &mut key)
            }) {
                Some(Some(s)) => write!(out, "{s}\t")?,
                _ => {
                    keyless += 1;
                    if examples.len() < 5 {
                        examples.push(format!("{name}:{number}"));
                    }
                    out.write_all(b"-\t")?;
                }
            }
            out.write_all(text)?;
            if !whole {
                // The rest of an over-long line, streamed through.
                copy_line(&mut reader, &mut out)
                    .with_context(|| format!("cannot read '{name}'"))?;
            }
            out.write_all(b"\n")?;
        }
    }
    out.finish()?;
    if keyless > 0 {
        diag!(
            "robofilter: warning: {keyless} of {lines} lines have no host \
             key (shard `-`): {}{}",
            examples.join(", "),
            if keyless > 5 { ", ..." } else { "" }
        );
    }
    Ok(())
}

/// Lines longer than this have no shard (`-`) and are passed through.
const MAX_LINE_LEN: usize = 64 << 10;

/// Reads one line (without its `\n`) into `line`, at most `cap` octets:
/// `None` at the end of the input, `Some(false)` if the line goes on past
/// `cap` (the rest is still to be read).
fn read_line(
    r: &mut impl io::BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    let mut any = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(true));
        }
        any = true;
        let room = cap - line.len();
        match memchr::memchr(b'\n', &buf[..buf.len().min(room)]) {
            Some(k) => {
                line.extend_from_slice(&buf[..k]);
                r.consume(k + 1);
                return Ok(Some(true));
            }
            None if buf.len() >= room => {
                line.extend_from_slice(&buf[..room]);
                r.consume(room);
                return Ok(Some(false));
            }
            None => {
                let n = buf.len();
                line.extend_from_slice(buf);
                r.consume(n);
            }
        }
    }
}

/// Copies the rest of the current line (up to and without its `\n`).
fn copy_line(
    r: &mut impl io::BufRead,
    out: &mut impl Write,
) -> io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(k) => {
                out.write_all(&buf[..k])?;
                r.consume(k + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                out.write_all(buf)?;
                r.consume(n);
            }
        }
    }
}
