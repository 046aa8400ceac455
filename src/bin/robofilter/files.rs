//! Reading inputs (memory maps, stdin) and writing outputs atomically.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use memmap2::Mmap;
use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules};

/// The first bytes of every rules file.
const RULES_MAGIC: &[u8; 8] = b"ROBOFLTR";

/// The bytes of a whole input, 8-byte aligned (as [`Rules::from_bytes`]
/// requires): a memory map, or an aligned copy when the input cannot be
/// mapped (stdin, pipes, empty files).
pub enum Bytes {
    Map(Mmap),
    Owned(AlignedBytes),
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
    // the file; Rust cannot check that. robofilter maps only files it reads
    // (rules files, robots.txt files and URL lists named on the command
    // line) and documents in `--help` that they must not change during a
    // run. `robofilter compile` and `filter -o` replace files by renaming a
    // new one over them, which leaves an existing mapping intact. The
    // loaded rules are validated in full by `Rules::from_bytes` before use.
    let map = unsafe { Mmap::map(file) };
    map.with_context(|| format!("cannot map {what} '{}'", path.display()))
}

/// Reads all of `path` (`-`: stdin), mapping it when it is a regular file.
pub fn read(path: &Path, what: &str) -> Result<Bytes> {
    if is_stdin(path) {
        return read_all(io::stdin().lock(), path, what);
    }
    let (file, len) = open(path, what)?;
    match len {
        Some(len) if len > 0 => Ok(Bytes::Map(map(&file, path, what)?)),
        _ => read_all(file, path, what),
    }
}

fn read_all(mut r: impl Read, path: &Path, what: &str) -> Result<Bytes> {
    let mut buf = Vec::new();
    r.read_to_end(&mut buf)
        .with_context(|| format!("cannot read {what} '{}'", display(path)))?;
    Ok(Bytes::Owned(AlignedBytes::from(&buf[..])))
}

/// Whether `bytes` start like a rules file.
pub fn is_rules_file(bytes: &[u8]) -> bool {
    bytes.starts_with(RULES_MAGIC)
}

/// Loads a rules file's bytes, naming the file in errors.
pub fn load_rules<'a>(bytes: &'a [u8], path: &Path) -> Result<Rules<'a>> {
    if !is_rules_file(bytes) {
        bail!(
            "'{}' is not a rules file (to use a robots.txt, compile it \
             first with `robofilter compile ROBOTS_TXT -o RULES`)",
            display(path)
        );
    }
    Rules::from_bytes(bytes)
        .with_context(|| format!("rules file '{}'", display(path)))
}

/// Compiles a robots.txt in memory into aligned rules-file bytes.
pub fn compile(body: &[u8], config: Config, path: &Path) -> Result<Bytes> {
    let bytes =
        Compiler::with_config(config).compile(body).with_context(|| {
            format!("cannot compile robots.txt '{}'", display(path))
        })?;
    Ok(Bytes::Owned(AlignedBytes::from(&bytes[..])))
}

/// Reads a rules file, or a robots.txt (told apart by the magic bytes)
/// and compiles it in memory with `config` and `dialect`. A rules file
/// keeps its own dialect; `dialect`, if given, must be that one.
pub fn rules_or_robots(
    path: &Path,
    dialect: Option<Dialect>,
    config: Config,
) -> Result<Bytes> {
    let bytes = read(path, "robots.txt or rules file")?;
    if !is_rules_file(&bytes) {
        let config = config.dialect(dialect.unwrap_or_default());
        return compile(&bytes, config, path);
    }
    if let Some(want) = dialect {
        let have = load_rules(&bytes, path)?.dialect();
        if have != want {
            bail!(
                "rules file '{}' was compiled with the {have} dialect, not \
                 {want} (omit --dialect, or compile the robots.txt again \
                 with --dialect {want})",
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
