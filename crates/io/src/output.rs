//! Outputs that never destroy anything: written under a temporary name and
//! renamed into place, removed when the run is interrupted, and refused when
//! they are also an input.

use std::fs::{self, File};
use std::io::{self, IoSlice, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::path::{display, is_stdin};
use crate::temps::temp_registry;

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
/// `write_through`).
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
