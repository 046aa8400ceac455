//! The real corpus (`../shared/data`, not in the repository) as the tools
//! read it: the robots.txt archive unpacked once into this project's
//! `target/data/`, and the gzip URL list read whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Extracts the robots.txt archive once into `target/data/` beside this
/// project's Cargo.toml (shared by every tool here) and returns its
/// `latest/` directory (one `HOST.txt` per host).
pub fn extract(archive: &Path) -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/data");
    let done = root.join(".extracted");
    if !done.exists() {
        eprintln!("extracting {} ...", archive.display());
        std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(&root)
            .status()
            .map_err(|e| format!("running tar: {e}"))?;
        if !status.success() {
            return Err(format!("tar -xzf {} failed", archive.display()));
        }
        std::fs::write(&done, b"").map_err(|e| e.to_string())?;
    }
    Ok(root.join("latest"))
}

/// The decompressed bytes of a gzip file (by `gzip -dc`).
pub fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip -dc {} failed", path.display()));
    }
    Ok(out.stdout)
}
