//! The manifest entry `robofilter fetch` writes (one JSON line per host,
//! read by `compile --manifest` and by the next run as its cache), and the
//! journal `OUT.journal`: entries appended as they complete, locked
//! against a second run, read back to resume, removed once OUT is
//! replaced.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use fs4::TryLockError;
use serde::{Deserialize, Serialize};

use crate::fetch::cache;

/// A manifest line's `status`: an HTTP status, or `"unreachable"`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Status {
    Http(u16),
    Unreachable,
}

impl Status {
    pub fn is_2xx(self) -> bool {
        matches!(self, Status::Http(200..=299))
    }

    /// A definite answer from the server (2xx, or 4xx but 429): a copy
    /// that may stand in for a later failed refresh.
    pub fn is_success(self) -> bool {
        matches!(self, Status::Http(s) if (200..=299).contains(&s)
            || ((400..=499).contains(&s) && s != 429))
    }

    /// A failure that may fall back to a previous copy: 5xx, 429, or no
    /// response.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Unreachable | Status::Http(429 | 500..=599))
    }
}

/// One host's entry, as held in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The bundle host key.
    pub host: String,
    /// The robots.txt URL requested first.
    pub url: String,
    pub status: Status,
    pub body: Vec<u8>,
    /// The body was cut at `--max-body`.
    pub truncated: bool,
    /// The redirect targets followed (and, past five or for a loop, the
    /// one that was not).
    pub redirect_chain: Vec<String>,
    /// When the response this entry holds was received or last
    /// revalidated (Unix seconds).
    pub fetched_at: u64,
    /// When the host was last asked (a failed refresh of a stale copy
    /// leaves `fetched_at` as it was).
    pub checked_at: u64,
    /// Fresh until then.
    pub expires: u64,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// Why the fetch failed (unreachable, a redirect loop, ...).
    pub error: Option<String>,
    pub elapsed_ms: u64,
    /// The first failed refresh since `fetched_at`, when the previous
    /// copy is kept in use.
    pub stale_since: Option<u64>,
}

/// The JSON form of an [`Entry`]: what `compile --manifest` reads.
#[derive(Serialize, Deserialize)]
struct Wire {
    host: String,
    #[serde(default)]
    url: String,
    status: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body_base64: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    truncated: bool,
    #[serde(default)]
    redirects: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    redirect_chain: Vec<String>,
    #[serde(default)]
    fetched_at: String,
    #[serde(default)]
    checked_at: String,
    #[serde(default)]
    expires: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_modified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default)]
    elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stale_since: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !b
}

impl Entry {
    /// The JSON line, with its `\n`. The body is a JSON string when it is
    /// UTF-8, else `body_base64`.
    pub fn to_line(&self) -> Vec<u8> {
        let (body, body_base64) = if self.body.is_empty() {
            (None, None)
        } else {
            match std::str::from_utf8(&self.body) {
                Ok(s) => (Some(s.to_string()), None),
                Err(_) => (None, Some(BASE64.encode(&self.body))),
            }
        };
        let wire = Wire {
            host: self.host.clone(),
            url: self.url.clone(),
            status: match self.status {
                Status::Http(s) => s.into(),
                Status::Unreachable => "unreachable".into(),
            },
            body,
            body_base64,
            truncated: self.truncated,
            redirects: self.redirect_chain.len(),
            redirect_chain: self.redirect_chain.clone(),
            fetched_at: cache::rfc3339(self.fetched_at),
            checked_at: cache::rfc3339(self.checked_at),
            expires: cache::rfc3339(self.expires),
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
            error: self.error.clone(),
            elapsed_ms: self.elapsed_ms,
            stale_since: self.stale_since.map(cache::rfc3339),
        };
        let mut line =
            serde_json::to_vec(&wire).expect("an entry always serializes");
        line.push(b'\n');
        line
    }

    /// Reads a line [`Entry::to_line`] wrote. Missing times read as 0 (an
    /// entry written by hand is expired and too old to stand in).
    pub fn from_line(line: &[u8]) -> Result<Entry, String> {
        let w: Wire =
            serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let status = match &w.status {
            serde_json::Value::Number(n) => n
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .map(Status::Http),
            serde_json::Value::String(s) if s == "unreachable" => {
                Some(Status::Unreachable)
            }
            _ => None,
        }
        .ok_or_else(|| format!("bad status {}", w.status))?;
        let body = match (w.body, w.body_base64) {
            (Some(s), _) => s.into_bytes(),
            (None, Some(b)) => BASE64.decode(b).map_err(|e| e.to_string())?,
            (None, None) => Vec::new(),
        };
        let time = |s: &str| cache::parse_rfc3339(s).unwrap_or(0);
        Ok(Entry {
            host: w.host,
            url: w.url,
            status,
            body,
            truncated: w.truncated,
            redirect_chain: w.redirect_chain,
            fetched_at: time(&w.fetched_at),
            checked_at: time(&w.checked_at),
            expires: time(&w.expires),
            etag: w.etag,
            last_modified: w.last_modified,
            error: w.error,
            elapsed_ms: w.elapsed_ms,
            stale_since: w
                .stale_since
                .as_deref()
                .and_then(cache::parse_rfc3339),
        })
    }
}

/// Reads the entries of a manifest or journal, by host key (a later line
/// for a host replaces an earlier one); lines that cannot be read (a line
/// cut by an interruption, a hand-written line without the cache keys)
/// are counted, not fatal.
pub fn read_entries(path: &Path) -> Result<(HashMap<String, Entry>, usize)> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((HashMap::new(), 0));
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot open '{}'", path.display()));
        }
    };
    read_from(BufReader::new(file))
        .with_context(|| format!("cannot read '{}'", path.display()))
}

fn read_from(
    mut r: impl BufRead,
) -> io::Result<(HashMap<String, Entry>, usize)> {
    let (mut map, mut bad) = (HashMap::new(), 0);
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok((map, bad));
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        // A line without its `\n` was cut by an interruption.
        match (line.last() == Some(&b'\n')).then(|| Entry::from_line(&line)) {
            Some(Ok(e)) => {
                map.insert(e.host.clone(), e);
            }
            _ => bad += 1,
        }
    }
}

/// `OUT.journal`, locked for the run.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// The journal's path beside `out`.
    pub fn path_for(out: &Path) -> PathBuf {
        let mut name = out.as_os_str().to_owned();
        name.push(".journal");
        PathBuf::from(name)
    }

    /// Opens (or creates) and locks the journal of `out`; its entries are
    /// what an interrupted run already fetched.
    pub fn open(
        out: &Path,
    ) -> Result<(Journal, HashMap<String, Entry>, usize)> {
        let path = Journal::path_for(out);
        let file = File::options()
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
        let (entries, bad) = read_from(BufReader::new(&file))
            .with_context(|| format!("cannot read '{}'", path.display()))?;
        Ok((Journal { path, file }, entries, bad))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry: one write of a whole line, so that an
    /// interruption leaves at most one partial last line (which the next
    /// run skips).
    pub fn append(&mut self, entry: &Entry) -> Result<()> {
        self.file.write_all(&entry.to_line()).with_context(|| {
            format!("cannot write the journal '{}'", self.path.display())
        })
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
        let (map, bad) = read_from(&text[..]).unwrap();
        assert_eq!(map.len(), 1);
        assert_eq!(bad, 2);
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
