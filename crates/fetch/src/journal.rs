//! The journal `OUT.journal`: manifest entries ([`Entry`], the one type
//! `robofilter-sources` reads too) appended as they complete, locked
//! against a second run, read back to resume, removed once OUT is
//! replaced; and the previous OUT read as the cache.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fs4::TryLockError;
pub use robofilter_sources::entry::{Entry, Status};

/// Where an entry's line is: the journal or the previous OUT, at this
/// offset. Entries are held by their place, not their bodies, so that a
/// run's memory does not grow with the robots.txt files it fetched.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Loc {
    pub in_journal: bool,
    pub offset: u64,
    pub len: usize,
}

/// An entry without its body (read from the file when needed), and where
/// its line is.
#[derive(Clone, Debug)]
pub struct Indexed {
    pub entry: Entry,
    pub loc: Loc,
}

/// The entries of a manifest or journal, by host key.
pub type Index = HashMap<String, Indexed>;

/// An opened previous OUT (its entries are the cache) and its index.
pub struct Previous {
    file: Option<File>,
    pub index: Index,
    /// Lines that are not entries.
    pub bad: usize,
}

impl Previous {
    /// Reads the index of `path` if it is a regular file. Lines that
    /// cannot be read (a hand-written line without the cache keys) are
    /// counted, not fatal.
    pub fn open(path: &Path) -> Result<Previous> {
        if !fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return Ok(Previous { file: None, index: Index::new(), bad: 0 });
        }
        let file = File::open(path)
            .with_context(|| format!("cannot open '{}'", path.display()))?;
        let (index, bad, _) = read_index(BufReader::new(&file), false)
            .with_context(|| format!("cannot read '{}'", path.display()))?;
        Ok(Previous { file: Some(file), index, bad })
    }

    /// The whole entry at `loc` (of this file), body included.
    pub fn entry(&self, loc: Loc) -> Result<Entry> {
        let file = self.file.as_ref().expect("an index entry has a file");
        let line = read_at(file, loc.offset, loc.len)
            .context("cannot read the previous output again")?;
        Entry::from_line(&line).map_err(|e| {
            anyhow::anyhow!("an entry of the previous output changed ({e})")
        })
    }
}

/// Reads the lines of a manifest or journal into an index (a later line
/// for a host replaces an earlier one): the index, the lines that could
/// not be read (a line without its `\n` was cut by an interruption), and
/// the length read.
fn read_index(
    mut r: impl BufRead,
    in_journal: bool,
) -> io::Result<(Index, usize, u64)> {
    let (mut map, mut bad, mut pos) = (Index::new(), 0, 0u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok((map, bad, pos));
        }
        let offset = pos;
        pos += n as u64;
        if line.trim_ascii().is_empty() {
            continue;
        }
        match (line.last() == Some(&b'\n')).then(|| Entry::from_line(&line)) {
            Some(Ok(mut entry)) => {
                entry.body = Vec::new();
                let loc = Loc { in_journal, offset, len: n };
                map.insert(entry.host.clone(), Indexed { entry, loc });
            }
            _ => bad += 1,
        }
    }
}

/// Reads `len` octets of `file` at `offset`.
fn read_at(file: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; len];
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut buf, offset)?;
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file.try_clone()?;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(&mut buf)?;
    }
    Ok(buf)
}

/// The lines of the journal and of the previous OUT, read back by place.
pub struct Lines<'a> {
    pub journal: &'a Journal,
    pub previous: &'a Previous,
}

impl Lines<'_> {
    /// The line (with its `\n`) at `loc`.
    pub fn line(&self, loc: Loc) -> Result<Vec<u8>> {
        let (file, path) = if loc.in_journal {
            (Some(&self.journal.file), self.journal.path.as_path())
        } else {
            (self.previous.file.as_ref(), Path::new("the previous output"))
        };
        let file = file.expect("an index entry comes from an open file");
        read_at(file, loc.offset, loc.len).with_context(|| {
            format!(
                "cannot read '{}' again at byte {} (was it changed during \
                 the run?)",
                path.display(),
                loc.offset
            )
        })
    }
}

/// `OUT.journal`, locked for the run.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// Its length: where the next entry goes.
    len: u64,
}

impl Journal {
    /// The journal's path beside `out`.
    pub fn path_for(out: &Path) -> PathBuf {
        let mut name = out.as_os_str().to_owned();
        name.push(".journal");
        PathBuf::from(name)
    }

    /// Opens (or creates) and locks the journal of `out`; its entries are
    /// what an interrupted run already fetched (and the count of lines
    /// that could not be read).
    pub fn open(out: &Path) -> Result<(Journal, Index, usize)> {
        let path = Journal::path_for(out);
        let mut file = File::options()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .with_context(|| {
                format!(
                    "cannot open the journal '{}' (is its directory \
                     writable?)",
                    path.display()
                )
            })?;
        // fs4's, by path: std's inherent `File::try_lock` needs Rust 1.89.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => bail!(
                "journal '{}' is locked: another `robofilter fetch` is \
                 writing '{}' (wait for it to end, or choose another -o)",
                path.display(),
                out.display()
            ),
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| {
                    format!("cannot lock the journal '{}'", path.display())
                });
            }
        }
        let (entries, bad, mut len) = read_index(BufReader::new(&file), true)
            .with_context(|| format!("cannot read '{}'", path.display()))?;
        // A last line cut by an interruption is ended, so that the next
        // entry starts a line of its own.
        if len > 0 && read_at(&file, len - 1, 1).ok().as_deref() != Some(b"\n")
        {
            file.write_all(b"\n").with_context(|| {
                format!("cannot write the journal '{}'", path.display())
            })?;
            len += 1;
        }
        Ok((Journal { path, file, len }, entries, bad))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry: one write of a whole line, so that an
    /// interruption leaves at most one partial last line (which the next
    /// run skips). Returns where it is.
    pub fn append(&mut self, entry: &Entry) -> Result<Loc> {
        let line = entry.to_line();
        self.file.write_all(&line).with_context(|| {
            format!("cannot write the journal '{}'", self.path.display())
        })?;
        let loc = Loc { in_journal: true, offset: self.len, len: line.len() };
        self.len += line.len() as u64;
        Ok(loc)
    }

    /// Gives up before any fetch because of `err`: an empty journal (this
    /// run made it) is removed, one with entries kept for the next run.
    pub fn abandon(self, err: anyhow::Error) -> anyhow::Error {
        if self.len == 0 {
            let _ = fs::remove_file(&self.path);
        }
        err
    }

    /// Removes the journal (OUT has been replaced), then unlocks it.
    pub fn finish(self) -> Result<()> {
        fs::remove_file(&self.path).with_context(|| {
            format!("cannot remove the journal '{}'", self.path.display())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            host: "a.example:8080".into(),
            url: "http://a.example:8080/robots.txt".into(),
            status: Status::Http(200),
            body: b"User-agent: *\nDisallow: /x\n".to_vec(),
            truncated: false,
            redirect_chain: vec!["http://b.example/robots.txt".into()],
            fetched_at: 1_764_028_471,
            checked_at: 1_764_028_471,
            expires: 1_764_114_871,
            etag: Some("\"v1\"".into()),
            last_modified: None,
            error: None,
            elapsed_ms: 12,
            stale_since: None,
        }
    }

    #[test]
    fn lines_round_trip() {
        let mut e = entry();
        assert_eq!(Entry::from_line(&e.to_line()).unwrap(), e);
        let text = String::from_utf8(e.to_line()).unwrap();
        assert!(text.contains("\"redirects\":1"), "{text}");
        assert!(text.contains("\"body\":\"User-agent"), "{text}");
        e.body = vec![0xff, 0xfe, b'x'];
        e.status = Status::Unreachable;
        e.stale_since = Some(1_764_000_000);
        let text = String::from_utf8(e.to_line()).unwrap();
        assert!(text.contains("\"body_base64\":\"//54\""), "{text}");
        assert!(text.contains("\"status\":\"unreachable\""), "{text}");
        assert_eq!(Entry::from_line(text.as_bytes()).unwrap(), e);
    }

    #[test]
    fn cut_and_broken_lines_are_counted() {
        let good = entry().to_line();
        let mut text = good.clone();
        text.extend_from_slice(b"{\"host\":\"x\"}\n");
        text.extend_from_slice(&good[..good.len() / 2]);
        let (map, bad, len) = read_index(&text[..], true).unwrap();
        assert_eq!(map.len(), 1);
        assert_eq!(bad, 2);
        assert_eq!(len, text.len() as u64);
        let loc = map["a.example:8080"].loc;
        assert_eq!((loc.offset, loc.len), (0, good.len()));
        assert!(map["a.example:8080"].entry.body.is_empty());
    }

    /// An entry appended after a cut last line starts a line of its own,
    /// and is found again (with its place) by the next open.
    #[test]
    fn append_after_a_cut_line() {
        let dir = std::env::temp_dir()
            .join(format!("robofilter-journal-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out.jsonl");
        let good = entry().to_line();
        fs::write(Journal::path_for(&out), &good[..good.len() / 2]).unwrap();
        let (mut j, index, bad) = Journal::open(&out).unwrap();
        assert_eq!((index.len(), bad), (0, 1));
        let loc = j.append(&entry()).unwrap();
        // A second open of a locked journal is refused.
        let second = Journal::open(&out).err().unwrap().to_string();
        assert!(second.contains("is locked"), "{second}");
        let previous = Previous { file: None, index: Index::new(), bad: 0 };
        let lines = Lines { journal: &j, previous: &previous };
        assert_eq!(lines.line(loc).unwrap(), good);
        drop(j);
        let (j, index, bad) = Journal::open(&out).unwrap();
        assert_eq!(bad, 1);
        assert_eq!(index["a.example:8080"].loc, loc);
        j.finish().unwrap();
        assert!(!Journal::path_for(&out).exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn status_classes() {
        use Status::*;
        assert!(Http(200).is_success() && Http(404).is_success());
        assert!(!Http(429).is_success() && !Http(503).is_success());
        assert!(Http(429).is_failure() && Unreachable.is_failure());
        assert!(!Http(404).is_failure() && !Http(301).is_failure());
    }
}
