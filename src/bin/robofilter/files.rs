//! Reading inputs (owned copies, memory maps, stdin) and writing outputs
//! atomically.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use memmap2::Mmap;
use robofilter::{Bundle, Compiler, Config, Dialect, Rules};

/// The first bytes of every rules file.
const RULES_MAGIC: &[u8; 8] = b"ROBOFLTR";

/// The bytes of a whole input: a memory map, or an owned copy that starts
/// at an 8-byte aligned address (as [`Rules::from_bytes`] requires).
pub enum Bytes {
    Map(Mmap),
    Owned(Aligned),
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(b) => b.as_bytes(),
        }
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

/// Opens `path` for reading, with its length if it is a regular file (one
/// that [`map`] can map). `what` names the file's role in messages.
pub fn open(path: &Path, what: &str) -> Result<(File, Option<u64>)> {
    let file = File::open(path).with_context(|| {
        format!("cannot open {what} '{}' (check the path)", path.display())
    })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat {what} '{}'", path.display()))?;
    if meta.is_dir() {
        bail!("{what} '{}' is a directory (expected a file)", path.display());
    }
    let len = meta.is_file().then_some(meta.len());
    Ok((file, len))
}

/// Memory-maps a regular file.
pub fn map(file: &File, path: &Path, what: &str) -> Result<Mmap> {
    // SAFETY: a memory map is only sound while no one modifies or truncates
    // the file; Rust cannot check that, and a mapped file truncated
    // underneath kills the process with SIGBUS. So rules files, bundles,
    // robots.txt files and URL lists are never mapped (see [`read_owned`]);
    // this maps only the manifests and WARC files that `compile` reads
    // once, front to back, and `--help` says inputs must not change during
    // a run.
    let map = unsafe { Mmap::map(file) };
    map.with_context(|| format!("cannot map {what} '{}'", path.display()))
}

/// Reads all of `path` (`-`: stdin), mapping it when it is a regular file
/// (for manifests and WARC files: see the risk at [`map`]).
pub fn read(path: &Path, what: &str) -> Result<Bytes> {
    if is_stdin(path) {
        return read_owned(path, what);
    }
    let (file, len) = open(path, what)?;
    match len {
        Some(len) if len > 0 => Ok(Bytes::Map(map(&file, path, what)?)),
        _ => read_all(file, 0, path, what),
    }
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
    Ok(Bytes::Owned(bytes))
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

/// Reads a robots.txt (`-`: stdin), refusing a rules file or a bundle,
/// which would otherwise parse as a robots.txt with no groups.
pub fn read_robots(path: &Path) -> Result<Bytes> {
    let bytes = read_owned(path, "robots.txt")?;
    refuse_compiled(&bytes, path)?;
    Ok(bytes)
}

/// Fails if `bytes` are a rules file or a bundle rather than a robots.txt.
fn refuse_compiled(bytes: &[u8], path: &Path) -> Result<()> {
    let what = match Kind::of(bytes) {
        Kind::RobotsTxt => return Ok(()),
        Kind::Rules => "compiled rules file",
        Kind::Bundle => "compiled bundle",
    };
    bail!(
        "'{}' is a {what}, not a robots.txt; give the robots.txt it was \
         compiled from, or use the {what} with `robofilter filter`, \
         `check`, `explain` or `inspect`",
        display(path)
    )
}

/// Compiles a robots.txt in memory into aligned rules-file bytes.
pub fn compile(body: &[u8], config: Config, path: &Path) -> Result<Bytes> {
    refuse_compiled(body, path)?;
    let bytes =
        Compiler::with_config(config).compile(body).with_context(|| {
            format!("cannot compile robots.txt '{}'", display(path))
        })?;
    Ok(Bytes::Owned(Aligned::from(&bytes[..])))
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
    if let Some(want) = dialect {
        let have = Compiled::load(&bytes, path)?.dialect();
        if have != want {
            bail!(
                "{what} '{}' was compiled with the {have} dialect, not \
                 {want} (omit --dialect, or compile again with \
                 --dialect {want})",
                display(path)
            );
        }
    }
    Ok(bytes)
}

/// An output file written under a temporary name in the same directory
/// and renamed over the destination by [`AtomicFile::commit`], so that the
/// destination is never half-written. Dropped uncommitted, it removes the
/// temporary file.
pub struct AtomicFile {
    dest: PathBuf,
    /// The temporary file; `None` when `dest` is not a regular file (a
    /// device such as `/dev/null`, or a FIFO): those are written in place,
    /// since renaming over them would replace the device with a file.
    tmp: Option<PathBuf>,
    file: Option<io::BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest`.
    pub fn create(dest: &Path) -> Result<AtomicFile> {
        if fs::metadata(dest).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let f =
                File::options().write(true).open(dest).with_context(|| {
                    format!("cannot open output '{}'", dest.display())
                })?;
            return Ok(AtomicFile {
                dest: dest.to_path_buf(),
                tmp: None,
                file: Some(io::BufWriter::with_capacity(1 << 20, f)),
            });
        }
        let Some(name) = dest.file_name() else {
            bail!("output '{}' is not a file name", dest.display());
        };
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let pid = std::process::id();
        for n in 0u32.. {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".robofilter-{pid}-{n}.tmp"));
            let tmp = dir.join(tmp_name);
            match File::options().write(true).create_new(true).open(&tmp) {
                Ok(f) => {
                    return Ok(AtomicFile {
                        dest: dest.to_path_buf(),
                        tmp: Some(tmp),
                        file: Some(io::BufWriter::with_capacity(1 << 20, f)),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!(
                            "cannot create a temporary file in '{}' for \
                             output '{}' (does the directory exist and is \
                             it writable?)",
                            dir.display(),
                            dest.display()
                        )
                    });
                }
            }
        }
        unreachable!("u32 range exhausted")
    }

    /// Flushes, syncs and renames the file over the destination (a
    /// non-regular destination is only flushed).
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("not committed yet");
        let what = || format!("cannot write output '{}'", self.dest.display());
        let file = file.into_inner().map_err(|e| e.into_error());
        let Some(tmp) = self.tmp.take() else {
            return file.map(drop).with_context(what);
        };
        let result = file
            .and_then(|f| f.sync_all())
            .with_context(what)
            .and_then(|()| fs::rename(&tmp, &self.dest).with_context(what));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        write_through(self.file.as_mut().expect("not committed"), buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (Some(_), Some(tmp)) = (self.file.take(), &self.tmp) {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Writes `buf` through `w`: small writes are buffered, large ones (a
/// chunk's output) go straight to the inner writer after a flush, instead
/// of being copied into the buffer first.
fn write_through<W: Write>(
    w: &mut io::BufWriter<W>,
    buf: &[u8],
) -> io::Result<()> {
    if buf.len() >= w.capacity() / 8 {
        w.flush()?;
        w.get_mut().write_all(buf)
    } else {
        w.write_all(buf)
    }
}

/// Where data output goes: stdout or an [`AtomicFile`].
pub enum Output {
    /// Stdout, unlocked so that a worker thread may write it (the buffer
    /// takes the lock once per 1 MiB).
    Stdout(io::BufWriter<io::Stdout>),
    File(AtomicFile),
}

impl Output {
    /// Stdout, or `path` written atomically.
    pub fn new(path: Option<&Path>) -> Result<Output> {
        Ok(match path {
            Some(p) => Output::File(AtomicFile::create(p)?),
            None => Output::Stdout(io::BufWriter::with_capacity(
                1 << 20,
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
}
