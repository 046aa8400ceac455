//! Bundle inputs: the hosts and fetch outcomes to compile into a bundle,
//! from a directory of robots.txt files (`--hosts`), a JSON-lines manifest
//! (`--manifest`) or WARC captures such as Common Crawl's (`--warc`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use robofilter::{Fetch, normalize_host, url_authority};
use serde_json::Value;

use crate::files;

/// The most redirects a crawler follows (RFC 9309 §2.3.1.2).
const MAX_REDIRECTS: u32 = 5;
/// The longest WARC header line accepted.
const MAX_WARC_LINE: usize = 64 << 10;
/// The longest WARC record header accepted.
const MAX_WARC_HEADER: usize = 1 << 20;
/// The largest body a `Content-Encoding: gzip` may expand to.
const MAX_GUNZIP: u64 = 64 << 20;
/// How many examples a note lists.
const EXAMPLES: usize = 3;

/// Standard base64, padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One host's input for a bundle.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct HostSource {
    /// The authority as given (the builder normalises it with
    /// [`robofilter::normalize_host`]).
    pub host: String,
    /// What the crawler got.
    pub fetch: Fetch,
    /// Where it came from, for messages: `DIR/x.txt`, `FILE:LINE` or
    /// `FILE at byte OFFSET`.
    pub origin: String,
}

/// Facts about an input, for the compile summary.
#[derive(Debug, Default)]
pub struct SourceStats {
    /// What was skipped, replaced or left unresolved, and why: one
    /// sentence each.
    pub notes: Vec<String>,
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

// ---------------------------------------------------------------------
// --hosts DIR

/// Reads `DIR/<host>.txt` files, sorted by name: each is that host's
/// robots.txt, fetched with status 200. Other files and subdirectories are
/// skipped.
pub fn read_hosts_dir(dir: &Path) -> Result<(Vec<HostSource>, SourceStats)> {
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
        if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            subdirs.push(lossy.into_owned());
            continue;
        }
        if !lossy.ends_with(".txt") {
            not_txt.push(lossy.into_owned());
            continue;
        }
        let Some(host) = name.to_str().and_then(|n| n.strip_suffix(".txt"))
        else {
            bail!(
                "'{origin}': the file name is not UTF-8, so it names no \
                 host (rename it to HOST.txt, such as example.com.txt)"
            );
        };
        let key = normalize_host(host).map_err(|e| {
            anyhow!(
                "'{origin}': {e} (name each file after its host's \
                 authority, such as example.com.txt or \
                 example.com:8080.txt)"
            )
        })?;
        if let Some(prev) = seen.get(&key) {
            bail!(
                "'{prev}' and '{origin}' are both host '{key}' (names are \
                 case-insensitive and ports 80 and 443 are dropped; remove \
                 one of them)"
            );
        }
        let body = fs::read(&path)
            .with_context(|| format!("cannot read robots.txt '{origin}'"))?;
        seen.insert(key, origin.clone());
        stats.read += 1;
        out.push(HostSource {
            host: host.to_string(),
            fetch: Fetch::Http { status: 200, body },
            origin,
        });
    }
    stats.skipped = not_txt.len() + subdirs.len();
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

// ---------------------------------------------------------------------
// Compressed inputs

/// How an input is compressed, by its magic bytes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    fn detect(bytes: &[u8]) -> Compression {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    /// ` (decompressed)` after a byte offset in a compressed stream.
    fn offset_suffix(self) -> &'static str {
        match self {
            Compression::None => "",
            _ => " (decompressed)",
        }
    }
}

/// A reader of `bytes`, decompressed; every gzip member and zstd frame.
fn decoder<'a>(
    bytes: &'a [u8],
    name: &str,
) -> Result<(Box<dyn BufRead + 'a>, Compression)> {
    let comp = Compression::detect(bytes);
    let reader: Box<dyn BufRead + 'a> = match comp {
        Compression::None => Box::new(bytes),
        Compression::Gzip => {
            Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(bytes)))
        }
        Compression::Zstd => {
            let d = zstd::stream::read::Decoder::with_buffer(bytes)
                .with_context(|| format!("cannot start zstd on '{name}'"))?;
            Box::new(BufReader::new(d))
        }
    };
    Ok((reader, comp))
}

/// The error of a failed read of a decompressed stream.
fn decode_error(
    name: &str,
    comp: Compression,
    pos: u64,
    e: io::Error,
) -> anyhow::Error {
    let what = match comp {
        Compression::None => "read",
        Compression::Gzip => "decompress (gzip)",
        Compression::Zstd => "decompress (zstd)",
    };
    anyhow!(
        "cannot {what} '{name}' after byte {pos}{}: {e} (is the file \
         complete?)",
        comp.offset_suffix()
    )
}

// ---------------------------------------------------------------------
// --manifest FILE.jsonl

/// Reads a JSON-lines manifest (possibly gzip- or zstd-compressed): one
/// object per line with `host`, `status` (a number, or `"unreachable"`),
/// and optionally `body` or `body_base64`, and `redirects`.
pub fn read_manifest(path: &Path) -> Result<(Vec<HostSource>, SourceStats)> {
    let name = files::display(path);
    let bytes = files::read(path, "manifest")?;
    let (mut input, comp) = decoder(&bytes, &name)?;
    let mut stats = SourceStats::default();
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut unknown: BTreeMap<String, usize> = BTreeMap::new();
    let mut ignored_bodies = Vec::new();
    let (mut line, mut line_no, mut pos) = (Vec::new(), 0usize, 0u64);
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .map_err(|e| decode_error(&name, comp, pos, e))?;
        if n == 0 {
            break;
        }
        pos += n as u64;
        line_no += 1;
        let mut text = &line[..];
        if line_no == 1 {
            text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        }
        // Trailing only: columns in messages count from the line start.
        let text = text.trim_ascii_end();
        if text.trim_ascii_start().is_empty() {
            continue;
        }
        stats.read += 1;
        let entry =
            parse_entry(text).map_err(|e| anyhow!("{name}:{line_no}: {e}"))?;
        let key = normalize_host(&entry.host).map_err(|e| {
            anyhow!(
                "{name}:{line_no}: {e} (give the host's authority, such as \
                 \"example.com\" or \"example.com:8080\")"
            )
        })?;
        if let Some(prev) = seen.insert(key.clone(), line_no) {
            bail!(
                "{name}:{line_no}: host '{key}' is already on line {prev} \
                 (give each host once)"
            );
        }
        for k in entry.unknown {
            *unknown.entry(k).or_default() += 1;
        }
        if entry.ignored_body {
            ignored_bodies.push(key);
        }
        out.push(HostSource {
            host: entry.host,
            fetch: entry.fetch,
            origin: format!("{name}:{line_no}"),
        });
    }
    if !unknown.is_empty() {
        let mut keys = String::new();
        for (k, n) in &unknown {
            let sep = if keys.is_empty() { "" } else { ", " };
            let _ = write!(keys, "{sep}\"{k}\" ({})", count(*n, "line"));
        }
        stats.notes.push(format!("ignored unknown keys: {keys}"));
    }
    if !ignored_bodies.is_empty() {
        stats.notes.push(format!(
            "ignored the body of {} whose status is not 2xx: {}",
            count(ignored_bodies.len(), "host"),
            examples(&ignored_bodies)
        ));
    }
    Ok((out, stats))
}

/// One manifest line, parsed.
#[derive(Debug)]
struct Entry {
    host: String,
    fetch: Fetch,
    /// Keys other than the known ones.
    unknown: Vec<String>,
    /// A body was given with a status other than 2xx.
    ignored_body: bool,
}

const EXAMPLE_LINE: &str =
    r#"{"host": "example.com", "status": 200, "body": "..."}"#;

/// Parses one manifest line; the error says what is wrong and what to do.
fn parse_entry(line: &[u8]) -> Result<Entry, String> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.rsplit_once(" at line ").map_or(&*msg, |p| p.0);
        format!(
            "invalid JSON at column {}: {msg} (write one JSON object per \
             line, such as {EXAMPLE_LINE})",
            e.column()
        )
    })?;
    let Value::Object(map) = value else {
        return Err(format!(
            "expected a JSON object, found {} (write one object per line, \
             such as {EXAMPLE_LINE})",
            kind(&value)
        ));
    };
    // `null` counts as absent for the optional keys.
    let get = |k: &str| map.get(k).filter(|v| !v.is_null());
    let host = match map.get("host") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => {
            return Err(format!(
                "\"host\" must be a string, not {} (such as \"host\": \
                 \"example.com\")",
                kind(v)
            ));
        }
        None => {
            return Err(format!(
                "no \"host\" (add the host's authority, such as \
                 {EXAMPLE_LINE})"
            ));
        }
    };
    let status = match map.get("status") {
        Some(Value::String(s)) if s == "unreachable" => None,
        Some(Value::Number(n)) => {
            match n.as_u64().and_then(|s| u16::try_from(s).ok()) {
                Some(s) if (100..=599).contains(&s) => Some(s),
                _ => {
                    return Err(format!(
                        "\"status\" {n} is not an HTTP status (give 100-599, \
                         or \"unreachable\" for a fetch without a response)"
                    ));
                }
            }
        }
        Some(v) => {
            return Err(format!(
                "\"status\" must be an HTTP status number or \
                 \"unreachable\", not {} (such as \"status\": 404)",
                describe(v)
            ));
        }
        None => {
            return Err("no \"status\" (add the HTTP status, such as \
                 \"status\": 200, or \"status\": \"unreachable\")"
                .to_string());
        }
    };
    let redirects = match get("redirects") {
        None => 0,
        Some(v) => v.as_u64().ok_or_else(|| {
            format!(
                "\"redirects\" must be a whole number of redirects \
                 followed, not {} (such as \"redirects\": 1)",
                describe(v)
            )
        })?,
    };
    let body = match (get("body"), get("body_base64")) {
        (Some(_), Some(_)) => {
            return Err("both \"body\" and \"body_base64\" are given \
                 (keep one: \"body\" for UTF-8 text, \"body_base64\" for \
                 exact bytes)"
                .to_string());
        }
        (Some(Value::String(s)), None) => Some(s.as_bytes().to_vec()),
        (Some(v), None) => {
            return Err(format!(
                "\"body\" must be a string, not {} (for bytes that are not \
                 UTF-8, use \"body_base64\")",
                kind(v)
            ));
        }
        (None, Some(Value::String(s))) => {
            Some(BASE64.decode(s).map_err(|e| {
                format!(
                    "\"body_base64\" is not base64: {e} (use the standard \
                     alphabet A-Z a-z 0-9 + /, without line breaks)"
                )
            })?)
        }
        (None, Some(v)) => {
            return Err(format!(
                "\"body_base64\" must be a string, not {}",
                kind(v)
            ));
        }
        (None, None) => None,
    };
    let is_2xx = status.is_some_and(|s| (200..=299).contains(&s));
    let ignored_body = body.is_some() && !is_2xx;
    let body = if is_2xx { body.unwrap_or_default() } else { Vec::new() };
    let redirects = u32::try_from(redirects).unwrap_or(u32::MAX);
    let fetch = match status {
        Some(s) => Fetch::http(s, redirects, body),
        None if redirects > MAX_REDIRECTS => Fetch::TooManyRedirects,
        None => Fetch::Unreachable,
    };
    let known = ["host", "status", "body", "body_base64", "redirects"];
    let unknown =
        map.keys().filter(|k| !known.contains(&k.as_str())).cloned().collect();
    Ok(Entry { host, fetch, unknown, ignored_body })
}

/// A JSON value's kind, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short JSON value, or its kind, for messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Number(_) | Value::Bool(_) => v.to_string(),
        Value::String(s) if s.len() <= 40 => v.to_string(),
        _ => kind(v).to_string(),
    }
}

// ---------------------------------------------------------------------
// --warc FILE.warc[.gz]

/// Reads the `response` records of a WARC file (1.0 or 1.1; plain, gzip
/// with any number of members, or zstd) whose URI is an http(s)
/// `/robots.txt`. Redirects to captures in the same file are followed; of
/// several captures of one host, the last counts.
pub fn read_warc(path: &Path) -> Result<(Vec<HostSource>, SourceStats)> {
    let name = files::display(path);
    let bytes = files::read(path, "WARC file")?;
    let (input, comp) = decoder(&bytes, &name)?;
    let mut warc = Warc::new(input, name, comp);
    let mut stats = SourceStats::default();
    let mut other_types: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad_uris = Vec::new();
    let mut decoding: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut truncated = Vec::new();
    let mut caps: Vec<Capture> = Vec::new();
    while let Some(rec) = warc.next_record()? {
        stats.read += 1;
        let Some(block) = rec.block else {
            *other_types.entry(rec.kind).or_default() += 1;
            continue;
        };
        let uri = rec.uri.unwrap_or_default();
        let Some(target) = Uri::parse(&uri) else {
            bad_uris.push(uri);
            continue;
        };
        let http = parse_http(&block)
            .map_err(|e| anyhow!("{}: {e}", warc.at(rec.offset)))?;
        for issue in http.issues {
            decoding.entry(issue).or_default().push(target.authority.clone());
        }
        if rec.truncated {
            truncated.push(target.authority.clone());
        }
        let location = http.location.and_then(|l| target.resolve(&l));
        caps.push(Capture {
            uri: target,
            status: http.status,
            location,
            body: http.body,
            offset: rec.offset,
        });
    }

    // The last capture of each URI (redirect targets) and of each host.
    let mut by_uri: HashMap<&str, usize> = HashMap::new();
    let mut by_host: HashMap<&str, usize> = HashMap::new();
    let mut schemes: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut recaptured: HashSet<&str> = HashSet::new();
    let mut others = 0;
    for (i, c) in caps.iter().enumerate() {
        by_uri.insert(&c.uri.key, i);
        if !c.uri.is_robots_txt() {
            others += 1;
            continue;
        }
        let host = c.uri.authority.as_str();
        if by_host.insert(host, i).is_some() {
            stats.replaced += 1;
            recaptured.insert(host);
        }
        schemes.entry(host).or_default().insert(&c.uri.scheme);
    }
    let mut kept: Vec<(&str, usize)> = by_host.into_iter().collect();
    kept.sort_unstable_by_key(|p| p.1);

    let mut reached: HashSet<usize> = HashSet::new();
    let (mut unresolved, mut loops) = (Vec::new(), Vec::new());
    let mut out = Vec::with_capacity(kept.len());
    for (host, i) in kept {
        let fetch = match follow(&caps, &by_uri, i, &mut reached) {
            Outcome::Final(f) => f,
            Outcome::Unresolved(f, target) => {
                unresolved.push(match target {
                    Some(t) => format!("{host} -> {t}"),
                    None => format!("{host} (no Location)"),
                });
                f
            }
            Outcome::Loop => {
                loops.push(host.to_string());
                Fetch::TooManyRedirects
            }
        };
        out.push(HostSource {
            host: host.to_string(),
            fetch,
            origin: warc.at(caps[i].offset),
        });
    }

    let notes = &mut stats.notes;
    if !other_types.is_empty() {
        let n: usize = other_types.values().sum();
        let list: Vec<String> =
            other_types.iter().map(|(k, n)| format!("{n} {k}")).collect();
        notes.push(format!(
            "skipped {} that are not responses: {}",
            count(n, "record"),
            list.join(", ")
        ));
    }
    if !bad_uris.is_empty() {
        notes.push(format!(
            "skipped {} whose WARC-Target-URI is not an http(s) URI with a \
             valid host: {}",
            count(bad_uris.len(), "response"),
            examples(&bad_uris)
        ));
    }
    if others > 0 {
        let targets =
            reached.iter().filter(|&&i| !caps[i].uri.is_robots_txt()).count();
        notes.push(format!(
            "{} not for /robots.txt gave no host ({targets} of them served \
             as redirect targets)",
            count(others, "response")
        ));
    }
    if !recaptured.is_empty() {
        let mut hosts: Vec<&str> = recaptured.iter().copied().collect();
        hosts.sort_unstable();
        let both = hosts.iter().filter(|h| schemes[*h].len() > 1).count();
        notes.push(format!(
            "{} captured more than once ({both} over both http and https): \
             the last capture counts, {} ignored: {}",
            count(hosts.len(), "host"),
            count(stats.replaced, "earlier capture"),
            examples(&hosts)
        ));
    }
    stats.unresolved = unresolved.len();
    if !unresolved.is_empty() {
        notes.push(format!(
            "unresolved redirects (the target is not captured in the \
             file; robots.txt unavailable, allow all) for {}: {}",
            count(unresolved.len(), "host"),
            examples(&unresolved)
        ));
    }
    if !loops.is_empty() {
        notes.push(format!(
            "{} in a redirect loop, counted as too many redirects: {}",
            count(loops.len(), "host"),
            examples(&loops)
        ));
    }
    for (issue, hosts) in &decoding {
        notes.push(format!(
            "{}: {issue}, kept the body as stored: {}",
            count(hosts.len(), "capture"),
            examples(hosts)
        ));
    }
    if !truncated.is_empty() {
        notes.push(format!(
            "{} truncated by the crawler (WARC-Truncated), used as stored: {}",
            count(truncated.len(), "capture"),
            examples(&truncated)
        ));
    }
    stats.skipped = stats.read - caps.len() + others;
    Ok((out, stats))
}

/// One response record of an http(s) URI.
struct Capture {
    uri: Uri,
    status: u16,
    /// The redirect target, resolved and normalised.
    location: Option<Uri>,
    /// The decoded body (empty unless the status is 2xx).
    body: Vec<u8>,
    offset: u64,
}

/// Where following a capture's redirects ends.
enum Outcome {
    /// A final response, or more than five redirects.
    Final(Fetch),
    /// A redirect whose target (if any) is not captured.
    Unresolved(Fetch, Option<String>),
    /// A redirect back to a capture already visited.
    Loop,
}

/// Follows the redirects of capture `i` through captures of the file.
fn follow(
    caps: &[Capture],
    by_uri: &HashMap<&str, usize>,
    i: usize,
    reached: &mut HashSet<usize>,
) -> Outcome {
    let (mut cur, mut hops) = (i, 0u32);
    let mut visited = vec![i];
    loop {
        let c = &caps[cur];
        if !matches!(c.status, 301 | 302 | 303 | 307 | 308) {
            return Outcome::Final(Fetch::http(
                c.status,
                hops,
                c.body.clone(),
            ));
        }
        let unresolved = Fetch::http(c.status, hops, Vec::new());
        let Some(target) = &c.location else {
            return Outcome::Unresolved(unresolved, None);
        };
        let Some(&next) = by_uri.get(target.key.as_str()) else {
            return Outcome::Unresolved(unresolved, Some(target.key.clone()));
        };
        hops += 1;
        if hops > MAX_REDIRECTS {
            return Outcome::Final(Fetch::TooManyRedirects);
        }
        if visited.contains(&next) {
            return Outcome::Loop;
        }
        visited.push(next);
        reached.insert(next);
        cur = next;
    }
}

/// An http(s) URI, normalised for comparison: lower-case scheme and
/// authority, no default port, no fragment, dot segments removed.
#[derive(Clone, Debug, Eq, PartialEq)]
struct Uri {
    scheme: String,
    authority: String,
    /// The path (never empty) and query.
    path: String,
    /// `scheme://authority/path?query`.
    key: String,
}

impl Uri {
    /// Parses an absolute http(s) URI; `None` for other schemes, or a host
    /// that [`normalize_host`] rejects.
    fn parse(uri: &str) -> Option<Uri> {
        let uri = uri.trim();
        // WARC/1.0's grammar put the URI in angle brackets.
        let uri = uri
            .strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(uri);
        let (scheme, rest) = uri.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let mut auth = Vec::new();
        if !url_authority(uri.as_bytes(), &mut auth) {
            return None;
        }
        let authority = String::from_utf8(auth).ok()?;
        normalize_host(&authority).ok()?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        Some(Uri::new(scheme, authority, &rest[end..]))
    }

    fn new(scheme: String, authority: String, path: &str) -> Uri {
        let path = path.split('#').next().unwrap_or_default();
        let (p, q) =
            path.split_once('?').map_or((path, None), |(p, q)| (p, Some(q)));
        let mut path = remove_dot_segments(p);
        if let Some(q) = q {
            path.push('?');
            path.push_str(q);
        }
        let key = format!("{scheme}://{authority}{path}");
        Uri { scheme, authority, path, key }
    }

    fn is_robots_txt(&self) -> bool {
        self.path == "/robots.txt"
    }

    /// Resolves a `Location` value against this URI (RFC 3986 §5.2).
    fn resolve(&self, location: &str) -> Option<Uri> {
        let loc = location.trim();
        if loc.is_empty() {
            return None;
        }
        if has_scheme(loc) {
            return Uri::parse(loc);
        }
        if let Some(rest) = loc.strip_prefix("//") {
            return Uri::parse(&format!("{}://{rest}", self.scheme));
        }
        if loc.starts_with('#') {
            return Some(self.clone());
        }
        let path = if loc.starts_with('/') {
            loc.to_string()
        } else if loc.starts_with('?') {
            let base = self.path.split('?').next().unwrap_or("/");
            format!("{base}{loc}")
        } else {
            let base = self.path.split('?').next().unwrap_or("/");
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{loc}")
        };
        Some(Uri::new(self.scheme.clone(), self.authority.clone(), &path))
    }
}

/// Whether a URI reference starts with `scheme:`.
fn has_scheme(r: &str) -> bool {
    let Some(colon) = r.find(':') else { return false };
    let s = &r[..colon];
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// RFC 3986 §5.2.4, on a path; the result starts with `/`.
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *s {
            "." => {}
            ".." => {
                out.pop();
            }
            s => {
                out.push(s);
                continue;
            }
        }
        if last {
            out.push("");
        }
    }
    format!("/{}", out.join("/"))
}

/// A record's header facts; `block` is kept for response records only.
struct Record {
    offset: u64,
    kind: String,
    uri: Option<String>,
    truncated: bool,
    block: Option<Vec<u8>>,
}

/// A WARC stream being read, with the offset of the next byte.
struct Warc<'a> {
    input: Box<dyn BufRead + 'a>,
    pos: u64,
    name: String,
    comp: Compression,
}

impl<'a> Warc<'a> {
    fn new(
        input: Box<dyn BufRead + 'a>,
        name: String,
        comp: Compression,
    ) -> Self {
        Warc { input, pos: 0, name, comp }
    }

    /// `FILE at byte OFFSET`.
    fn at(&self, offset: u64) -> String {
        format!("{} at byte {offset}{}", self.name, self.comp.offset_suffix())
    }

    fn err(&self, offset: u64, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("{}: {msg}", self.at(offset))
    }

    /// Reads a line (with its end) into `buf`; `false` at the end.
    fn line(&mut self, buf: &mut Vec<u8>, record: u64) -> Result<bool> {
        buf.clear();
        let n = (&mut self.input)
            .take(MAX_WARC_LINE as u64)
            .read_until(b'\n', buf)
            .map_err(|e| decode_error(&self.name, self.comp, self.pos, e))?;
        self.pos += n as u64;
        if n == MAX_WARC_LINE && buf.last() != Some(&b'\n') {
            return Err(self.err(
                record,
                format!(
                    "a header line is longer than {MAX_WARC_LINE} bytes \
                     (is this a WARC file?)"
                ),
            ));
        }
        Ok(n > 0)
    }

    /// Reads the next record; `None` at the end of the stream.
    fn next_record(&mut self) -> Result<Option<Record>> {
        let mut line = Vec::new();
        let offset = loop {
            let start = self.pos;
            if !self.line(&mut line, start)? {
                return Ok(None);
            }
            if !is_blank(&line) {
                break start;
            }
        };
        let version = trim_eol(&line);
        if version != b"WARC/1.0" && version != b"WARC/1.1" {
            return Err(self.err(
                offset,
                format!(
                    "expected a record starting with WARC/1.0 or WARC/1.1, \
                     found '{}' (is this a WARC file, and are the \
                     Content-Length fields right?)",
                    snippet(version)
                ),
            ));
        }
        let mut fields: Vec<(String, String)> = Vec::new();
        let mut header_len = line.len();
        loop {
            if !self.line(&mut line, offset)? {
                return Err(self.err(
                    offset,
                    "the file ends inside the record's header (the file is \
                     truncated)",
                ));
            }
            header_len += line.len();
            if header_len > MAX_WARC_HEADER {
                return Err(self.err(
                    offset,
                    format!(
                        "the record's header is longer than \
                         {MAX_WARC_HEADER} bytes (is this a WARC file?)"
                    ),
                ));
            }
            if is_blank(&line) {
                break;
            }
            let text = String::from_utf8_lossy(trim_eol(&line)).into_owned();
            if text.starts_with([' ', '\t']) {
                match fields.last_mut() {
                    Some((_, v)) => {
                        v.push(' ');
                        v.push_str(text.trim());
                    }
                    None => {
                        return Err(self.err(
                            offset,
                            "the header starts with a continuation line",
                        ));
                    }
                }
                continue;
            }
            let Some((k, v)) = text.split_once(':') else {
                return Err(self.err(
                    offset,
                    format!("header line '{}' has no ':'", snippet(&line)),
                ));
            };
            fields.push((k.trim().to_string(), v.trim().to_string()));
        }
        let field = |name: &str| {
            fields
                .iter()
                .find(|f| f.0.eq_ignore_ascii_case(name))
                .map(|f| &f.1)
        };
        let Some(len) = field("Content-Length") else {
            return Err(self.err(offset, "the record has no Content-Length"));
        };
        let Ok(len) = len.parse::<u64>() else {
            return Err(self.err(
                offset,
                format!("Content-Length '{len}' is not a number of bytes"),
            ));
        };
        let Some(kind) = field("WARC-Type").cloned() else {
            return Err(self.err(offset, "the record has no WARC-Type"));
        };
        let uri = field("WARC-Target-URI").cloned();
        let truncated = field("WARC-Truncated").is_some();
        let is_response = kind.eq_ignore_ascii_case("response");
        if is_response && uri.is_none() {
            return Err(
                self.err(offset, "a response record without WARC-Target-URI")
            );
        }
        let mut block = Vec::new();
        let mut take = (&mut self.input).take(len);
        let got = if is_response {
            take.read_to_end(&mut block).map(|n| n as u64)
        } else {
            io::copy(&mut take, &mut io::sink())
        }
        .map_err(|e| decode_error(&self.name, self.comp, self.pos, e))?;
        self.pos += got;
        if got < len {
            return Err(self.err(
                offset,
                format!(
                    "the record's block is cut off: Content-Length is {len} \
                     but the file ends after {got} bytes (the file is \
                     truncated)"
                ),
            ));
        }
        for _ in 0..2 {
            let at = self.pos;
            if !self.line(&mut line, offset)? {
                return Err(self.err(
                    offset,
                    "the file ends before the CRLF CRLF that closes the \
                     record (the file is truncated)",
                ));
            }
            if !is_blank(&line) {
                return Err(self.err(
                    offset,
                    format!(
                        "the record's block is not followed by CRLF CRLF \
                         (found '{}' at byte {at}; is Content-Length \
                         {len} right?)",
                        snippet(&line)
                    ),
                ));
            }
        }
        let block = is_response.then_some(block);
        Ok(Some(Record { offset, kind, uri, truncated, block }))
    }
}

/// The parts of an HTTP response that decide a fetch.
#[derive(Debug)]
struct Http {
    status: u16,
    location: Option<String>,
    /// The decoded body of a 2xx response, else empty.
    body: Vec<u8>,
    /// Decoding that failed or was not done, for notes.
    issues: Vec<String>,
}

/// Parses an HTTP response message (a response record's block).
fn parse_http(block: &[u8]) -> Result<Http, String> {
    let (head, body) = split_head(block).ok_or(
        "the HTTP response has no empty line after its headers (is the \
         record's Content-Type application/http?)",
    )?;
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().unwrap_or_default();
    let status = parse_status_line(status_line).ok_or_else(|| {
        format!(
            "the HTTP status line '{}' is not like 'HTTP/1.1 200 OK' (is \
             the record's Content-Type application/http?)",
            snippet(status_line)
        )
    })?;
    if !(100..=599).contains(&status) {
        return Err(format!("HTTP status {status} is not in 100-599"));
    }
    let (mut chunked, mut encoding, mut location) = (false, None, None);
    for l in lines {
        let Some(colon) = l.iter().position(|&b| b == b':') else { continue };
        let name = &l[..colon];
        let value =
            String::from_utf8_lossy(&l[colon + 1..]).trim().to_string();
        if name.eq_ignore_ascii_case(b"Transfer-Encoding") {
            chunked |= value
                .split(',')
                .any(|c| c.trim().eq_ignore_ascii_case("chunked"));
        } else if name.eq_ignore_ascii_case(b"Content-Encoding") {
            encoding = Some(value.to_ascii_lowercase());
        } else if name.eq_ignore_ascii_case(b"Location") && location.is_none()
        {
            location = Some(value);
        }
    }
    let mut issues = Vec::new();
    if !(200..=299).contains(&status) {
        return Ok(Http { status, location, body: Vec::new(), issues });
    }
    let mut body = body.to_vec();
    if chunked {
        match dechunk(&body) {
            Some(b) => body = b,
            None => issues.push("malformed chunked encoding".to_string()),
        }
    }
    match encoding.as_deref() {
        None | Some("" | "identity") => {}
        Some("gzip" | "x-gzip") => match gunzip(&body) {
            Some(b) => body = b,
            None => issues.push("gzip body does not decompress".to_string()),
        },
        Some(other) => {
            issues.push(format!("Content-Encoding '{other}' not decoded"))
        }
    }
    Ok(Http { status, location, body, issues })
}

/// Splits an HTTP message at the empty line after its header (`\r\n\r\n`
/// or a bare `\n\n`).
fn split_head(block: &[u8]) -> Option<(&[u8], &[u8])> {
    for nl in memchr::memchr_iter(b'\n', block) {
        let rest = &block[nl + 1..];
        if let Some(body) =
            rest.strip_prefix(b"\r\n").or_else(|| rest.strip_prefix(b"\n"))
        {
            return Some((&block[..nl], body));
        }
    }
    None
}

/// The code of `HTTP/x.y CODE [reason]`.
fn parse_status_line(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/")?;
    let mut parts = rest.split(|&b| b == b' ').filter(|p| !p.is_empty());
    parts.next()?;
    let code = parts.next()?;
    if code.len() != 3 || !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// Decodes `Transfer-Encoding: chunked`; `None` if malformed.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let nl = memchr::memchr(b'\n', data)?;
        let size = data[..nl].split(|&b| b == b';').next()?;
        let size = std::str::from_utf8(size).ok()?.trim();
        if size.is_empty() || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let size = usize::from_str_radix(size, 16).ok()?;
        data = &data[nl + 1..];
        if size == 0 {
            return Some(out); // trailer fields are ignored
        }
        let chunk = data.get(..size)?;
        out.extend_from_slice(chunk);
        data = &data[size..];
        data =
            data.strip_prefix(b"\r\n").or_else(|| data.strip_prefix(b"\n"))?;
    }
}

/// Decompresses a gzip body; `None` if it is not gzip or too large.
fn gunzip(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .take(MAX_GUNZIP + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() as u64 <= MAX_GUNZIP).then_some(out)
}

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

// ---------------------------------------------------------------------
// Notes

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

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use robofilter::Policy;

    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/bundle").join(name)
    }

    /// A fresh directory under the system's temp directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
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

        fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
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

    fn ok(status: u16, body: &str) -> Fetch {
        Fetch::Http { status, body: body.as_bytes().to_vec() }
    }

    fn fail(status: u16) -> Fetch {
        Fetch::Http { status, body: Vec::new() }
    }

    fn outcomes(hosts: &[HostSource]) -> Vec<(&str, &Fetch)> {
        hosts.iter().map(|h| (h.host.as_str(), &h.fetch)).collect()
    }

    /// The error message of `r`, with its causes.
    fn error<T>(r: Result<T>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => format!("{e:#}"),
        }
    }

    const RULES_A: &str = "User-agent: *\nDisallow: /private/\n";

    #[test]
    fn hosts_fixture() {
        let (hosts, stats) = read_hosts_dir(&fixture("hosts")).unwrap();
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
        assert!(stats.notes[0].contains("notes.md"), "{:?}", stats.notes);
        assert!(stats.notes[1].contains("archive"), "{:?}", stats.notes);
    }

    #[test]
    fn hosts_dir_errors() {
        let dir = TempDir::new();
        dir.file("a.example.txt", b"");
        dir.file("A.Example:80.txt", b"");
        let e = error(read_hosts_dir(&dir.0));
        assert!(e.contains("A.Example:80.txt' and '"), "{e}");
        assert!(e.contains("a.example.txt' are both host 'a.example'"), "{e}");

        let dir = TempDir::new();
        dir.file("user@a.example.txt", b"");
        let e = error(read_hosts_dir(&dir.0));
        assert!(e.contains("user@a.example.txt': host name"), "{e}");
        assert!(e.contains("(name each file after"), "{e}");

        let e = error(read_hosts_dir(&dir.0.join("missing")));
        assert!(e.contains("cannot read hosts directory"), "{e}");
    }

    fn manifest_want() -> Vec<(&'static str, Fetch)> {
        let latin1 = b"User-agent: *\nDisallow: /caf\xe9/\n".to_vec();
        vec![
            ("a.example", ok(200, RULES_A)),
            ("B.Example:443", Fetch::Http { status: 200, body: latin1 }),
            ("c.example", fail(404)),
            ("d.example", fail(429)),
            ("e.example", fail(503)),
            ("f.example", Fetch::Unreachable),
            ("g.example", ok(200, "User-agent: *\nDisallow: /g/\n")),
            ("h.example", Fetch::TooManyRedirects),
            ("i.example:8080", ok(200, "")),
            ("j.example", fail(301)),
            ("k.example", ok(200, "User-agent: *\n")),
        ]
    }

    #[test]
    fn manifest_fixture() {
        let path = fixture("manifest.jsonl");
        let (hosts, stats) = read_manifest(&path).unwrap();
        let want = manifest_want();
        let want: Vec<_> = want.iter().map(|(h, f)| (*h, f)).collect();
        assert_eq!(outcomes(&hosts), want);
        assert!(hosts[6].origin.ends_with("manifest.jsonl:8"));
        assert_eq!(stats.read, 11);
        assert_eq!(stats.notes.len(), 2, "{:?}", stats.notes);
        assert!(stats.notes[0].contains("\"fetched_at\""));
        assert!(stats.notes[1].contains("e.example"));
        let policies: Vec<Policy> =
            hosts.iter().map(|h| h.fetch.policy()).collect();
        use Policy::*;
        assert_eq!(
            policies,
            [
                Rules,
                Rules,
                AllowAll,
                DisallowAll,
                DisallowAll,
                DisallowAll,
                Rules,
                AllowAll,
                Rules,
                AllowAll,
                Rules
            ]
        );
    }

    #[test]
    fn manifest_compressed() {
        let plain = fs::read(fixture("manifest.jsonl")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        );
        // Two gzip members, split mid-line.
        gz.write_all(&plain[..100]).unwrap();
        let mut two = gz.finish().unwrap();
        let mut gz = flate2::write::GzEncoder::new(
            two.split_off(two.len()),
            flate2::Compression::default(),
        );
        gz.write_all(&plain[100..]).unwrap();
        two.extend(gz.finish().unwrap());
        let zst = zstd::encode_all(&plain[..], 3).unwrap();
        let dir = TempDir::new();
        for (name, bytes) in [("m.jsonl.gz", two), ("m.jsonl.zst", zst)] {
            let (hosts, _) = read_manifest(&dir.file(name, &bytes)).unwrap();
            let got: Vec<_> =
                hosts.into_iter().map(|h| (h.host, h.fetch)).collect();
            let want: Vec<_> = manifest_want()
                .into_iter()
                .map(|(h, f)| (h.to_string(), f))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn manifest_errors() {
        let good = r#"{"host":"a.example","status":200}"#;
        let cases: &[(&str, &str)] = &[
            ("{\"host\":", ":2: invalid JSON at column 8: EOF"),
            ("[1]", ":2: expected a JSON object, found an array"),
            (r#"{"status":200}"#, ":2: no \"host\""),
            (r#"{"host":7,"status":200}"#, ":2: \"host\" must be a string"),
            (r#"{"host":"b"}"#, ":2: no \"status\""),
            (r#"{"host":"b","status":99}"#, "99 is not an HTTP status"),
            (r#"{"host":"b","status":600}"#, "600 is not an HTTP status"),
            (r#"{"host":"b","status":200.0}"#, "is not an HTTP status"),
            (r#"{"host":"b","status":"down"}"#, "not \"down\""),
            (r#"{"host":"b","status":200,"redirects":-1}"#, "\"redirects\""),
            (r#"{"host":"b","status":200,"body":1}"#, "\"body\" must be a"),
            (
                r#"{"host":"b","status":200,"body":"x","body_base64":"eA=="}"#,
                ":2: both \"body\" and \"body_base64\" are given",
            ),
            (
                r#"{"host":"b","status":200,"body_base64":"%%"}"#,
                ":2: \"body_base64\" is not base64",
            ),
            (r#"{"host":"b c","status":200}"#, ":2: host name 'b c'"),
            (
                r#"{"host":"A.example:443","status":404}"#,
                ":2: host 'a.example' is already on line 1",
            ),
        ];
        let dir = TempDir::new();
        for (i, (line, want)) in cases.iter().enumerate() {
            let path = dir.file(
                &format!("{i}.jsonl"),
                format!("{good}\n{line}\n").as_bytes(),
            );
            let e = error(read_manifest(&path));
            assert!(e.starts_with(&path.display().to_string()), "{e}");
            assert!(e.contains(want), "{line}: {e}");
        }
        // Null is absent; unpadded base64 is fine; a BOM and CRLF too.
        let path = dir.file(
            "ok.jsonl",
            b"\xef\xbb\xbf{\"host\":\"a\",\"status\":200,\"body\":null,\
              \"body_base64\":\"eA\",\"redirects\":null}\r\n",
        );
        let (hosts, _) = read_manifest(&path).unwrap();
        assert_eq!(hosts[0].fetch, ok(200, "x"));
    }

    fn warc_want() -> Vec<(&'static str, Fetch)> {
        let body =
            |d: &str| ok(200, &format!("User-agent: *\nDisallow: /{d}/\n"));
        vec![
            ("a.example", ok(200, RULES_A)),
            ("b.example", fail(404)),
            ("c.example", fail(500)),
            ("d.example", body("d")),
            ("www.d.example", body("d")),
            ("e.example", fail(302)),
            ("f.example", body("f")),
            ("g.example", body("g")),
            ("h.example", body("h")),
            ("i.example", fail(429)),
            ("j.example", body("j")),
            ("k.example", body("k")),
            ("l.example", Fetch::TooManyRedirects),
            ("m.example", Fetch::TooManyRedirects),
            ("n.example", Fetch::TooManyRedirects),
        ]
    }

    #[test]
    fn warc_fixtures() {
        let want = warc_want();
        let want: Vec<_> = want.iter().map(|(h, f)| (*h, f)).collect();
        let mut all_notes = Vec::new();
        for name in ["robots.warc", "robots.warc.gz"] {
            let (hosts, stats) = read_warc(&fixture(name)).unwrap();
            assert_eq!(outcomes(&hosts), want, "{name}");
            assert_eq!(
                (stats.read, stats.skipped, stats.replaced, stats.unresolved),
                (29, 12, 2, 1),
                "{name}"
            );
            all_notes.push(stats.notes);
        }
        assert_eq!(all_notes[0], all_notes[1]);
        let notes = all_notes[0].join("\n");
        for want in [
            "skipped 4 records that are not responses: 1 metadata, 2 \
             request, 1 warcinfo",
            "8 responses not for /robots.txt gave no host (6 of them",
            "2 hosts captured more than once (1 over both http and https)",
            "e.example -> http://elsewhere.example/robots.txt",
            "2 hosts in a redirect loop",
        ] {
            assert!(notes.contains(want), "{want}\n{notes}");
        }
    }

    fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\n\
             Content-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn response(uri: &str, head: &str, body: &[u8]) -> Vec<u8> {
        let mut block = format!("{head}\r\n\r\n").into_bytes();
        block.extend_from_slice(body);
        warc_record("response", uri, &block)
    }

    fn read_warc_bytes(
        bytes: &[u8],
    ) -> Result<(Vec<HostSource>, SourceStats)> {
        let dir = TempDir::new();
        read_warc(&dir.file("t.warc", bytes))
    }

    #[test]
    fn warc_redirect_limit() {
        // a.example: five redirects, then 200; b.example: six.
        let mut w = Vec::new();
        for (host, hops) in [("a.example", 5), ("b.example", 6)] {
            for i in 0..hops {
                let from = if i == 0 {
                    format!("http://{host}/robots.txt")
                } else {
                    format!("http://{host}/{i}")
                };
                let head = format!("HTTP/1.1 301 x\r\nLocation: /{}", i + 1);
                w.extend(response(&from, &head, b""));
            }
            let last = format!("http://{host}/{hops}");
            w.extend(response(&last, "HTTP/1.1 200 OK", b"Disallow: /\n"));
        }
        let (hosts, _) = read_warc_bytes(&w).unwrap();
        assert_eq!(
            outcomes(&hosts),
            [
                ("a.example", &ok(200, "Disallow: /\n")),
                ("b.example", &Fetch::TooManyRedirects)
            ]
        );
    }

    #[test]
    fn warc_bodies() {
        let mut w = response(
            "https://a.example:443/robots.txt",
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip",
            b"not gzip",
        );
        w.extend(response(
            "http://b.example/robots.txt",
            "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked",
            b"zz\r\nbroken",
        ));
        // Bare LF after the HTTP header; a chunked 404 is not decoded.
        w.extend(warc_record(
            "response",
            "http://c.example/robots.txt",
            b"HTTP/1.1 200 OK\nX: y\n\nbody",
        ));
        w.extend(response(
            "http://d.example/robots.txt",
            "HTTP/1.1 404 OK\r\nTransfer-Encoding: chunked",
            b"zz",
        ));
        let (hosts, stats) = read_warc_bytes(&w).unwrap();
        assert_eq!(
            outcomes(&hosts),
            [
                ("a.example", &ok(200, "not gzip")),
                ("b.example", &ok(200, "zz\r\nbroken")),
                ("c.example", &ok(200, "body")),
                ("d.example", &fail(404)),
            ]
        );
        let notes = stats.notes.join("\n");
        assert!(notes.contains("1 capture: gzip body does not"), "{notes}");
        assert!(notes.contains("1 capture: malformed chunked"), "{notes}");
    }

    #[test]
    fn warc_errors() {
        let good = response(
            "http://a.example/robots.txt",
            "HTTP/1.1 200 OK",
            b"Disallow: /\n",
        );
        let at = good.len();
        let wrong_len = String::from_utf8(good.clone())
            .unwrap()
            .replace("Content-Length: 31", "Content-Length: 25");
        let cases: Vec<(Vec<u8>, String)> = vec![
            (b"\r\nhello\r\n".to_vec(), "at byte 2: expected a record".into()),
            (
                wrong_len.into_bytes(),
                "at byte 0: the record's block is not followed".into(),
            ),
            (
                [&good[..], b"WARC/1.0\r\nWARC-Type: response\r\n\r\n"]
                    .concat(),
                format!("at byte {at}: the record has no Content-Length"),
            ),
            (
                response("http://b.example/robots.txt", "HTTP/1.1 2000", b""),
                "at byte 0: the HTTP status line 'HTTP/1.1 2000'".into(),
            ),
            (
                warc_record("response", "http://b.example/robots.txt", b"x"),
                "at byte 0: the HTTP response has no empty line".into(),
            ),
        ];
        for (bytes, want) in cases {
            let e = error(read_warc_bytes(&bytes));
            assert!(e.contains(&want), "{want}\n{e}");
        }
    }

    #[test]
    fn warc_truncated() {
        let full = fs::read(fixture("robots.warc")).unwrap();
        let last = full.windows(8).rposition(|w| w == b"WARC/1.0").unwrap();
        for cut in [last + 20, full.len() - 40, full.len() - 3] {
            let e = error(read_warc_bytes(&full[..cut]));
            assert!(e.contains(&format!("at byte {last}: ")), "{e}");
            assert!(e.contains("truncated"), "{e}");
        }
        let gz = fs::read(fixture("robots.warc.gz")).unwrap();
        let e = error(read_warc_bytes(&gz[..gz.len() - 10]));
        assert!(e.contains("cannot decompress (gzip)"), "{e}");
    }

    #[test]
    fn locations() {
        let base = Uri::parse("http://A.example:80/dir/robots.txt?q").unwrap();
        assert_eq!(base.key, "http://a.example/dir/robots.txt?q");
        let cases = [
            (
                "https://B.example:443/robots.txt",
                "https://b.example/robots.txt",
            ),
            ("//c.example/x", "http://c.example/x"),
            ("/robots.txt#f", "http://a.example/robots.txt"),
            ("new.txt", "http://a.example/dir/new.txt"),
            ("../up/./x.txt", "http://a.example/up/x.txt"),
            ("../../..", "http://a.example/"),
            ("?v=2", "http://a.example/dir/robots.txt?v=2"),
            ("#top", "http://a.example/dir/robots.txt?q"),
        ];
        for (loc, want) in cases {
            assert_eq!(
                base.resolve(loc).map(|u| u.key).as_deref(),
                Some(want)
            );
        }
        assert!(base.resolve("ftp://a.example/x").is_none());
        assert!(base.resolve("").is_none());
        assert!(Uri::parse("dns:a.example").is_none());
        assert!(Uri::parse("http://a.example").unwrap().path == "/");
    }

    #[test]
    fn http_pieces() {
        assert_eq!(parse_status_line(b"HTTP/1.1 200 OK"), Some(200));
        assert_eq!(parse_status_line(b"HTTP/2 404"), Some(404));
        assert_eq!(parse_status_line(b"HTTP/1.1 20"), None);
        assert_eq!(parse_status_line(b"ICY 200 OK"), None);
        assert_eq!(
            dechunk(b"3;x=y\r\nabc\r\n1\nd\n0\r\nTrailer: z\r\n\r\n")
                .as_deref(),
            Some(&b"abcd"[..])
        );
        assert_eq!(dechunk(b"3\r\nabc\r\n"), None); // no last chunk
        assert_eq!(dechunk(b"+3\r\nabc\r\n0\r\n"), None);
        assert_eq!(count(2, "subdirectory"), "2 subdirectories");
        assert_eq!(examples(&["a", "b", "c", "d"]), "a, b, c and 1 more");
    }
}
