//! `--hosts DIR`: a directory of `<host>.txt` robots.txt files.

use std::collections::HashMap;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::Path;

use anyhow::{Context, Result};
use robofilter::{Fetch, normalize_host};

use crate::{HostSource, Limits, SourceStats, count, examples, read_capped};

/// Reads `DIR/<host>.txt` files, sorted by name: each is that host's
/// robots.txt, fetched with status 200. Other files and subdirectories are
/// skipped. A `.txt` entry that is not a readable regular file (a dangling
/// symlink, a directory, a FIFO, socket or device, a file without read
/// permission) is a bad member: reported, and its host recorded as
/// unreadable. A FIFO or device is never opened (a FIFO would block the
/// build, a device could be endless).
pub fn read_hosts_dir(
    dir: &Path,
    limits: Limits,
) -> Result<(Vec<HostSource>, SourceStats)> {
    let listing = fs::read_dir(dir).with_context(|| {
        format!(
            "cannot read hosts directory '{}' (check that it exists and is \
             a directory)",
            dir.display()
        )
    })?;
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.with_context(|| {
            format!("cannot list hosts directory '{}'", dir.display())
        })?;
        names.push(entry.file_name());
    }
    names.sort();

    let mut stats = SourceStats::default();
    let (mut not_txt, mut subdirs) = (Vec::new(), Vec::new());
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let origin = path.display().to_string();
        let lossy = name.to_string_lossy();
        // Follows symlinks: a link to a robots.txt is a robots.txt.
        let meta = fs::metadata(&path);
        if !lossy.ends_with(".txt") {
            if meta.as_ref().is_ok_and(Metadata::is_dir) {
                subdirs.push(lossy.into_owned());
            } else {
                not_txt.push(lossy.into_owned());
            }
            continue;
        }
        let Some(host) = name.to_str().and_then(|n| n.strip_suffix(".txt"))
        else {
            stats.skip(
                &origin,
                "the file name is not UTF-8, so it names no host (rename it \
                 to HOST.txt, such as example.com.txt)",
            );
            continue;
        };
        let key = match normalize_host(host) {
            Ok(key) => key,
            Err(e) => {
                stats.skip(
                    &origin,
                    format!(
                        "{e} (name each file after its host's authority, \
                         such as example.com.txt or example.com:8080.txt)"
                    ),
                );
                continue;
            }
        };
        if let Some(prev) = seen.get(&key) {
            stats.skip(
                &origin,
                format!(
                    "host '{key}' is already given by '{prev}' (names are \
                     case-insensitive and ports 80 and 443 are dropped; \
                     remove one of them), the first counts"
                ),
            );
            continue;
        }
        seen.insert(key, origin.clone());
        stats.read += 1;
        match read_member(&path, meta, limits) {
            Ok(body) => out.push(HostSource {
                host: host.to_string(),
                fetch: Fetch::Http { status: 200, body },
                origin,
                cause: String::new(),
            }),
            Err(msg) => {
                stats.unreadable(&mut out, host.to_string(), origin, msg)
            }
        }
    }
    stats.skipped = not_txt.len() + subdirs.len();
    if out.is_empty() && stats.bad.is_empty() {
        // An empty bundle would make every URL `unknown`, exit 0.
        let what = match stats.skipped {
            0 => "is empty".to_string(),
            1 => "holds no HOST.txt file (1 other entry)".to_string(),
            n => format!("holds no HOST.txt file ({n} other entries)"),
        };
        anyhow::bail!(
            "hosts directory '{}' {what}: nothing to compile (name each \
             robots.txt after its host's authority, such as \
             example.com.txt)",
            dir.display()
        );
    }
    if !not_txt.is_empty() {
        stats.notes.push(format!(
            "skipped {} not ending in .txt: {}",
            count(not_txt.len(), "file"),
            examples(&not_txt)
        ));
    }
    if !subdirs.is_empty() {
        stats.notes.push(format!(
            "skipped {}: {}",
            count(subdirs.len(), "subdirectory"),
            examples(&subdirs)
        ));
    }
    Ok((out, stats))
}

/// Reads one member, or says why it cannot be read.
fn read_member(
    path: &Path,
    meta: io::Result<Metadata>,
    limits: Limits,
) -> Result<Vec<u8>, String> {
    let meta = match meta {
        Ok(m) => m,
        Err(_) if fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) => {
            let target = fs::read_link(path)
                .map_or_else(|_| "?".to_string(), |t| t.display().to_string());
            return Err(format!(
                "a symbolic link to '{target}', which cannot be followed \
                 (does the target exist?)"
            ));
        }
        Err(e) => return Err(format!("cannot read the file's type: {e}")),
    };
    check_type(&meta)?;
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    // The type again, of what was opened (the entry may have changed).
    check_type(&file.metadata().map_err(|e| format!("cannot stat: {e}"))?)?;
    let (body, more) = read_capped(file, limits.body)
        .map_err(|e| format!("cannot read: {e}"))?;
    if more && !limits.cut_ok {
        return Err(limits.too_large());
    }
    let kind = robofilter::InputKind::of(&body);
    if !kind.is_text() {
        return Err(format!("{kind}, not a robots.txt (replace it with one)"));
    }
    Ok(body)
}

/// Only a regular file is a robots.txt.
fn check_type(meta: &Metadata) -> Result<(), String> {
    let t = meta.file_type();
    let what = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else {
        special_kind(t)
    };
    Err(format!("{what}, not a robots.txt file (not opened)"))
}

/// What a file that is neither a regular file nor a directory is.
#[cfg(unix)]
fn special_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: std::fs::FileType) -> &'static str {
    "not a regular file"
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn hosts_fixture() {
        let (hosts, stats) =
            read_hosts_dir(&fixture("hosts"), limits()).unwrap();
        let want = [
            ("a.example", ok(200, RULES_A)),
            ("b.example", ok(200, RULES_A)),
            (
                "c.example:8080",
                ok(
                    200,
                    "User-agent: *\nAllow: /api/public\nDisallow: /api/\n",
                ),
            ),
            (
                "d.example",
                ok(200, "\u{feff}User-agent: *\r\nDisallow: /tmp/\r\n"),
            ),
            ("e.example", ok(200, "")),
        ];
        let want: Vec<_> = want.iter().map(|(h, f)| (*h, f)).collect();
        assert_eq!(outcomes(&hosts), want);
        assert!(hosts[2].origin.ends_with("hosts/c.example:8080.txt"));
        assert_eq!((stats.read, stats.skipped), (5, 2));
        assert!(stats.bad.is_empty(), "{:?}", stats.bad);
        assert!(stats.notes[0].contains("notes.md"), "{:?}", stats.notes);
        assert!(stats.notes[1].contains("archive"), "{:?}", stats.notes);
    }

    #[cfg(unix)]
    #[test]
    fn hosts_bad_members() {
        let dir = TempDir::new();
        dir.file("a.example.txt", b"Disallow: /\n");
        dir.file("a.example:80.txt", b"");
        dir.file("user@b.example.txt", b"");
        fs::create_dir(dir.0.join("c.example.txt")).unwrap();
        std::os::unix::fs::symlink("missing", dir.0.join("d.example.txt"))
            .unwrap();
        let (hosts, stats) = read_hosts_dir(&dir.0, limits()).unwrap();
        assert_eq!(
            outcomes(&hosts),
            [
                ("a.example", &ok(200, "Disallow: /\n")),
                ("c.example", &Fetch::Unreadable),
                ("d.example", &Fetch::Unreadable),
            ]
        );
        let bad = stats.bad.join("\n");
        assert_eq!(stats.bad.len(), 4, "{bad}");
        assert!(bad.contains("a.example:80.txt: host 'a.example' is already"));
        assert!(bad.contains("user@b.example.txt: host name"), "{bad}");
        assert!(bad.contains("c.example.txt: a directory"), "{bad}");
        assert!(bad.contains("d.example.txt: a symbolic link to 'missing'"));

        let e = error(read_hosts_dir(&dir.0.join("missing"), limits()));
        assert!(e.contains("cannot read hosts directory"), "{e}");
    }
}
