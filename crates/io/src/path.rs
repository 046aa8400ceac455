//! How an argument names a file: `-` for stdin, opening with messages that
//! say what to do, and a URL argument's bytes.

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result, bail};

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
