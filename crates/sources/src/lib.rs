//! Bundle inputs: the hosts and fetch outcomes to compile into a bundle,
//! from a directory of robots.txt files (`--hosts`), a JSON-lines manifest
//! (`--manifest`) or WARC captures such as Common Crawl's (`--warc`), and
//! the read caps that keep every input's memory bounded.
//!
//! A bad member (a file that cannot be read, a broken manifest line, a
//! capture that is not an HTTP response) never fails the whole build: it is
//! listed in [`SourceStats::bad`] with its file and line or byte offset, and
//! its host, when known, is recorded as [`Fetch::Unreadable`] so that its
//! URLs are disallowed with a reason instead of becoming `unknown`.

pub mod entry;
mod hosts;
mod manifest;
mod warc;

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use robofilter::{Config, Fetch};

use robofilter_io as files;

pub use hosts::read_hosts_dir;
pub use manifest::read_manifest;
pub use warc::read_warc;

pub use robofilter_io::{GOOGLE_READ_CAP, Limits};

/// How many examples a note lists.
const EXAMPLES: usize = 3;

/// One host's input for a bundle.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct HostSource {
    /// The authority as given (the builder normalises it with
    /// [`robofilter::normalize_host`]).
    pub host: String,
    /// What the crawler got.
    pub fetch: Fetch,
    /// Why a fetch gave no rules, in words, when known (a manifest's
    /// `"error"`, or what made the member bad); empty otherwise. The
    /// bundle keeps it for hosts without rules, and explanations name it.
    pub cause: String,
    /// Where it came from, for messages: `DIR/x.txt`, `FILE:LINE` or
    /// `FILE at byte OFFSET`.
    pub origin: String,
}

/// The default per-group byte budget of bundles: at 32 KiB the 74.6 k-host
/// corpus takes under 5 KB per host and compiles four times faster than at
/// the single-file budget, with the same filter speed.
pub const BUNDLE_DFA_BYTE_LIMIT: usize = 32 << 10;

/// Compiles `sources` into a bundle with `config`, and loads every member
/// once (the self-check a reader would otherwise make lazily), handing
/// each loaded member to `each_member` (the CLI counts groups by engine).
/// What `robofilter compile --hosts|--manifest|--warc` and the wheel's
/// `Rules.compile_hosts` both run, so that they give the same bytes.
///
/// # Errors
///
/// A host name that is not an authority, a host given twice, a body that
/// is not text, or a bundle over the format's limits; each names the
/// member's origin.
pub fn build_bundle(
    sources: Vec<HostSource>,
    config: Config,
    mut each_member: impl FnMut(&robofilter::Rules<'_>),
) -> Result<robofilter::AlignedBytes> {
    let mut builder = robofilter::BundleBuilder::new(config);
    for s in sources {
        builder
            .add_with_cause(&s.host, s.fetch, &s.cause)
            .with_context(|| s.origin.clone())?;
    }
    let bytes = builder.finish_aligned().context("cannot build the bundle")?;
    let bundle = robofilter::Bundle::from_bytes(bytes.as_bytes())
        .context("internal error: the bundle does not load")?;
    for m in 0..bundle.member_len() {
        let rules = bundle
            .member(m)
            .context("internal error: a bundle member does not load")?;
        each_member(&rules);
    }
    Ok(bytes)
}

/// Facts about an input, for the compile summary.
#[derive(Debug, Default)]
pub struct SourceStats {
    /// What was skipped, replaced or left unresolved, and why: one
    /// sentence each.
    pub notes: Vec<String>,
    /// Bad members, one message each (`ORIGIN: what is wrong; what was
    /// done`): reported as warnings, fatal with `--strict`.
    pub bad: Vec<String>,
    /// Inputs read: files, non-empty lines or WARC records.
    pub read: usize,
    /// Inputs that give no host (not a `.txt` file, not a robots.txt
    /// response record).
    pub skipped: usize,
    /// Captures ignored for a later capture of the same host (WARC).
    pub replaced: usize,
    /// Hosts whose fetch ends at a redirect that is not resolved (WARC).
    pub unresolved: usize,
}

impl SourceStats {
    /// A bad member whose host is not known: nothing is recorded.
    fn skip(&mut self, origin: &str, msg: impl std::fmt::Display) {
        self.bad.push(format!("{origin}: {msg}; skipped"));
    }

    /// Adds a member, unless its 2xx body is not robots.txt text (still
    /// compressed, or a compiled file): read as text it would have no
    /// rules and allow everything, so it is a bad member, recorded as
    /// unreadable, whatever the source.
    pub fn add(&mut self, out: &mut Vec<HostSource>, source: HostSource) {
        if let Fetch::Http { status: 200..=299, body } = &source.fetch {
            let kind = robofilter::InputKind::of(body);
            if !kind.is_text() {
                let msg = format!("the body is {kind}, not a robots.txt");
                self.unreadable(out, source.host, source.origin, msg);
                return;
            }
        }
        out.push(source);
    }

    /// A bad member whose host is known: recorded as unreadable.
    fn unreadable(
        &mut self,
        out: &mut Vec<HostSource>,
        host: String,
        origin: String,
        msg: impl std::fmt::Display,
    ) {
        let cause = msg.to_string();
        self.bad.push(format!(
            "{origin}: {cause}; host '{host}' recorded as unreadable (its \
             URLs are disallowed)"
        ));
        let fetch = Fetch::Unreadable;
        out.push(HostSource { host, fetch, origin, cause });
    }
}

/// Reads a robots.txt (`-`: stdin) up to one octet past `limits.body`;
/// the flag says whether there was more. Never reads without bound, so
/// `/dev/zero` or an endless pipe costs at most the cap.
pub fn read_robots(path: &Path, limits: Limits) -> Result<(Vec<u8>, bool)> {
    let name = files::display(path);
    let reader: Box<dyn Read> = if files::is_stdin(path) {
        Box::new(io::stdin().lock())
    } else {
        let file = File::open(path).with_context(|| {
            format!("cannot open robots.txt '{name}' (check the path)")
        })?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            bail!("robots.txt '{name}' is a directory (expected a file)");
        }
        Box::new(file)
    };
    read_capped(reader, limits.body)
        .with_context(|| format!("cannot read robots.txt '{name}'"))
}

/// Reads at most `cap` octets; the flag says whether there was more.
fn read_capped(reader: impl Read, cap: usize) -> io::Result<(Vec<u8>, bool)> {
    let mut body = Vec::new();
    reader.take(cap as u64 + 1).read_to_end(&mut body)?;
    let more = body.len() > cap;
    body.truncate(cap);
    Ok((body, more))
}

// ---------------------------------------------------------------------
// Compressed inputs

/// How an input is compressed: the tool that decompresses it (`gzip`,
/// `zstd`), or `None` for plain.
type Compression = Option<&'static str>;

/// ` (decompressed)` after a byte offset in a compressed stream.
fn offset_suffix(comp: Compression) -> &'static str {
    match comp {
        None => "",
        Some(_) => " (decompressed)",
    }
}

/// A streaming reader of `path` (`-`: stdin), decompressed; every gzip
/// member and zstd frame. Streaming, not read whole: the memory a
/// manifest or WARC file costs is bounded by the line and record caps,
/// whatever its size (`/dev/zero` included).
fn open_stream(
    path: &Path,
    what: &str,
) -> Result<(Box<dyn BufRead>, Compression)> {
    let name = files::display(path);
    let raw: Box<dyn BufRead + Send> = if files::is_stdin(path) {
        Box::new(BufReader::with_capacity(64 << 10, io::stdin()))
    } else {
        let (file, _) = files::open(path, what)?;
        Box::new(BufReader::with_capacity(64 << 10, file))
    };
    let (kind, decoded, reader) = files::decoder(raw, &name, what)?;
    // A rules file or bundle given here: its lines would all be bad (and a
    // run would write nothing of use): most likely the files were swapped.
    for k in [kind, decoded] {
        if k.is_compiled() {
            bail!(
                "'{name}' is {k}, not a {what}; give the {what}, and use \
                 the compiled file with `robofilter filter`, `check`, \
                 `explain` or `inspect`"
            );
        }
    }
    let reader: Box<dyn BufRead> = match kind.tool() {
        None => Box::new(BufReader::with_capacity(64 << 10, reader)),
        Some(_) => Box::new(BufReader::new(reader)),
    };
    Ok((reader, kind.tool()))
}

/// A streaming, decompressed reader of `path` (`-`: stdin) as
/// `open_stream` opens it, for other commands' line inputs
/// (`robofilter fetch`).
pub fn open_lines(path: &Path, what: &str) -> Result<Box<dyn BufRead>> {
    open_stream(path, what).map(|(r, _)| r)
}

/// The error of a failed read of a decompressed stream.
fn decode_error(
    name: &str,
    comp: Compression,
    pos: u64,
    e: io::Error,
) -> anyhow::Error {
    match comp {
        None => anyhow!(
            "cannot read '{name}' after byte {pos}: {e} (is the file \
             complete?)"
        ),
        // The decoder's error says how far it got and how to check the
        // file (robofilter-io).
        Some(tool) => anyhow!(
            "cannot decompress ({tool}) '{name}' after byte {pos}{}: {e}",
            offset_suffix(comp)
        ),
    }
}

// ---------------------------------------------------------------------
// Messages

fn is_blank(line: &[u8]) -> bool {
    trim_eol(line).is_empty()
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// At most 60 bytes of `b`, escaped, for messages.
fn snippet(b: &[u8]) -> String {
    let b = trim_eol(b);
    let mut s = b[..b.len().min(60)].escape_ascii().to_string();
    if b.len() > 60 {
        s.push_str("...");
    }
    s
}

/// `1 file`, `2 files`, `2 subdirectories`.
fn count(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

/// The first few items, and how many more.
fn examples<S: AsRef<str>>(items: &[S]) -> String {
    let mut s = String::new();
    for (i, item) in items.iter().take(EXAMPLES).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(item.as_ref());
    }
    if items.len() > EXAMPLES {
        let _ = write!(s, " and {} more", items.len() - EXAMPLES);
    }
    s
}

/// Helpers for the unit tests of the three readers.
#[cfg(test)]
mod testing {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use robofilter::{Config, Fetch};

    use super::{HostSource, Limits};

    pub fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/bundle")
            .join(name)
    }

    /// The rfc9309 caps at the default parse limit.
    pub fn limits() -> Limits {
        Limits::new(&Config::new())
    }

    /// A fresh directory under the system's temp directory, removed on drop.
    pub struct TempDir(pub PathBuf);

    impl TempDir {
        pub fn new() -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "robofilter-sources-{}-{n}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
            let path = self.0.join(name);
            fs::write(&path, bytes).unwrap();
            path
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    pub fn ok(status: u16, body: &str) -> Fetch {
        Fetch::Http { status, body: body.as_bytes().to_vec() }
    }

    pub fn fail(status: u16) -> Fetch {
        Fetch::Http { status, body: Vec::new() }
    }

    pub fn outcomes(hosts: &[HostSource]) -> Vec<(&str, &Fetch)> {
        hosts.iter().map(|h| (h.host.as_str(), &h.fetch)).collect()
    }

    /// The error message of `r`, with its causes.
    pub fn error<T>(r: anyhow::Result<T>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => format!("{e:#}"),
        }
    }

    pub const RULES_A: &str = "User-agent: *\nDisallow: /private/\n";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps() {
        let rfc = Limits::new(&Config::new());
        assert_eq!(rfc.body, 512_000 + 16_663 + 1);
        let big = vec![b'a'; rfc.body + 10];
        assert_eq!(rfc.apply(big).unwrap().len(), rfc.body);
        let g =
            Limits::new(&Config::new().dialect(robofilter::Dialect::Google));
        assert!(g.apply(vec![b'a'; g.body + 1]).is_err());
        assert_eq!(g.apply(vec![b'a'; g.body]).unwrap().len(), g.body);
        let (b, more) = read_capped(&b"abcdef"[..], 4).unwrap();
        assert_eq!((&b[..], more), (&b"abcd"[..], true));
        let (b, more) = read_capped(&b"abcd"[..], 4).unwrap();
        assert_eq!((&b[..], more), (&b"abcd"[..], false));
        assert_eq!(count(2, "subdirectory"), "2 subdirectories");
        assert_eq!(examples(&["a", "b", "c", "d"]), "a, b, c and 1 more");
    }
}
