//! The temporary files and directories a run has made and not yet renamed
//! into place: removed when it is interrupted (by the signal handlers,
//! where the front end installed them) and never left behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::signal_safe;

/// Creates a temporary file or directory with `create` (which gives it and
/// its path) and registers the path for removal on a signal, as
/// `AtomicFile` does with its temporary file.
pub fn registered_temp<T>(
    create: impl FnOnce() -> io::Result<(T, PathBuf)>,
) -> io::Result<T> {
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
pub(crate) struct Temps {
    paths: Vec<PathBuf>,
}

impl Temps {
    /// How many temporary files and directories exist now.
    pub(crate) fn len(&self) -> usize {
        self.paths.len()
    }

    pub(crate) fn add(&mut self, path: PathBuf) {
        signal_safe::add(&path);
        self.paths.push(path);
    }

    pub(crate) fn remove(&mut self, path: &Path) {
        self.paths.retain(|p| p != path);
        signal_safe::remove(path);
    }
}

/// The registry of temporary files and directories, locked.
pub(crate) fn temp_registry() -> std::sync::MutexGuard<'static, Temps> {
    static TEMPS: std::sync::Mutex<Temps> =
        std::sync::Mutex::new(Temps { paths: Vec::new() });
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the registered temporary files and directories; the registry
/// is returned locked, to be held until the exit: no rename or new
/// temporary file after this point.
pub(crate) fn remove_temps() -> std::sync::MutexGuard<'static, Temps> {
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
