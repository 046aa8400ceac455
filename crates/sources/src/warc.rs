//! `--warc FILE.warc[.gz]`: the robots.txt captures of a WARC file.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, BufRead, Read};
use std::path::Path;

use anyhow::{Result, anyhow};
use robofilter::{Fetch, normalize_host, url_host_key};
use url::Url;

use crate::{
    Compression, HostSource, Limits, SourceStats, count, decode_error,
    examples, is_blank, open_stream, snippet, trim_eol,
};
use robofilter_io as files;

/// The most redirects a crawler follows (RFC 9309 §2.3.1.2).
const MAX_REDIRECTS: u32 = 5;
/// The longest WARC header line accepted.
const MAX_WARC_LINE: usize = 64 << 10;
/// The longest WARC record header accepted.
const MAX_WARC_HEADER: usize = 1 << 20;
/// Room in a response record's block for the HTTP header: 1 MiB.
const HTTP_HEAD_ROOM: usize = 1 << 20;
/// The most HTTP header fields read of one response.
const MAX_HTTP_FIELDS: usize = 256;

/// The most octets of a response record's block read: the body cap plus
/// [`HTTP_HEAD_ROOM`]. The rest of a longer block is skipped unread (a
/// capture of a large file costs no memory).
fn block_cap(limits: Limits) -> usize {
    limits.body.saturating_add(HTTP_HEAD_ROOM)
}

/// Reads the `response` records of a WARC file (1.0 or 1.1; plain, gzip
/// with any number of members, or zstd) whose URI is an http(s)
/// `/robots.txt`. Redirects to captures in the same file are followed; of
/// several captures of one host, the last counts.
///
/// A damaged WARC framing (a record that does not start with `WARC/`, a
/// missing Content-Length, a cut file) stops the read with an error: the
/// records after it cannot be found. A record whose block is not an HTTP
/// response is a bad member: reported with its byte offset, and its host
/// recorded as [`Fetch::Unreadable`].
pub fn read_warc(
    path: &Path,
    limits: Limits,
) -> Result<(Vec<HostSource>, SourceStats)> {
    let name = files::display(path);
    let (input, comp) = open_stream(path, "WARC file")?;
    let mut warc = Warc::new(input, name, comp, block_cap(limits));
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
        let http = match parse_http(&block, rec.cut, limits) {
            Ok(http) => http,
            Err(e) => {
                caps.push(Capture {
                    uri: target,
                    status: 0,
                    location: None,
                    body: Vec::new(),
                    offset: rec.offset,
                    error: Some(e),
                });
                continue;
            }
        };
        for issue in http.issues {
            decoding.entry(issue).or_default().push(target.host.clone());
        }
        let mut body = http.body;
        if rec.truncated {
            truncated.push(target.host.clone());
            body = Limits::drop_cut_line(body);
        }
        let location = http.location.and_then(|l| target.resolve(&l));
        caps.push(Capture {
            uri: target,
            status: http.status,
            location,
            body,
            offset: rec.offset,
            error: None,
        });
    }

    // The last capture of each URI (redirect targets) and of each host.
    let mut by_uri: HashMap<&str, usize> = HashMap::new();
    let mut by_host: HashMap<&str, usize> = HashMap::new();
    let mut schemes: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut recaptured: HashSet<&str> = HashSet::new();
    let mut others = 0;
    for (i, c) in caps.iter().enumerate() {
        by_uri.insert(c.uri.key(), i);
        if !c.uri.is_robots_txt() {
            others += 1;
            continue;
        }
        let host = c.uri.host.as_str();
        if by_host.insert(host, i).is_some() {
            stats.replaced += 1;
            recaptured.insert(host);
        }
        schemes.entry(host).or_default().insert(c.uri.url.scheme());
    }
    let mut kept: Vec<(&str, usize)> = by_host.into_iter().collect();
    kept.sort_unstable_by_key(|p| p.1);

    let mut reached: HashSet<usize> = HashSet::new();
    let (mut unresolved, mut loops) = (Vec::new(), Vec::new());
    let mut not_http = Vec::new();
    let mut out = Vec::with_capacity(kept.len());
    for (host, i) in kept {
        let origin = warc.at(caps[i].offset);
        let fetch = match follow(&caps, &by_uri, i, &mut reached) {
            RedirectEnd::Final(f) => f,
            RedirectEnd::Unresolved(f, target) => {
                unresolved.push(match target {
                    Some(t) => format!("{host} -> {t}"),
                    None => format!("{host} (no Location)"),
                });
                f
            }
            RedirectEnd::Loop => {
                loops.push(host.to_string());
                Fetch::TooManyRedirects
            }
            RedirectEnd::Unreadable(j) => {
                let c = &caps[j];
                let at = warc.at(c.offset);
                let msg = c.error.as_deref().unwrap_or_default();
                let msg = if j == i {
                    msg.to_string()
                } else {
                    format!(
                        "the redirect target {} at {at}: {msg}",
                        c.uri.key()
                    )
                };
                stats.unreadable(&mut out, host.to_string(), origin, msg);
                continue;
            }
        };
        if fetch == Fetch::Unreachable {
            not_http.push(host.to_string());
        }
        let host = host.to_string();
        let cause = match fetch {
            Fetch::Unreachable => "the capture's status is not HTTP's",
            _ => "",
        };
        let cause = cause.to_string();
        stats.add(&mut out, HostSource { host, fetch, origin, cause });
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
    if !not_http.is_empty() {
        notes.push(format!(
            "{} with a status outside 100-599, not an HTTP response: \
             unreachable, disallow all: {}",
            count(not_http.len(), "host"),
            examples(&not_http)
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
            "{} truncated by the crawler (WARC-Truncated), used without \
             their cut last line: {}",
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
    /// Why the record's block is not a usable HTTP response.
    error: Option<String>,
}

/// Where following a capture's redirects ends.
enum RedirectEnd {
    /// A final response, or more than five redirects.
    Final(Fetch),
    /// A redirect whose target (if any) is not captured.
    Unresolved(Fetch, Option<String>),
    /// A redirect back to a capture already visited.
    Loop,
    /// At this capture, which is not a usable HTTP response.
    Unreadable(usize),
}

/// Follows the redirects of capture `i` through captures of the file.
fn follow(
    caps: &[Capture],
    by_uri: &HashMap<&str, usize>,
    i: usize,
    reached: &mut HashSet<usize>,
) -> RedirectEnd {
    let (mut cur, mut hops) = (i, 0u32);
    let mut visited = vec![i];
    loop {
        let c = &caps[cur];
        if c.error.is_some() {
            return RedirectEnd::Unreadable(cur);
        }
        if !matches!(c.status, 301 | 302 | 303 | 307 | 308) {
            return RedirectEnd::Final(Fetch::http(
                c.status,
                hops,
                c.body.clone(),
            ));
        }
        let unresolved = Fetch::http(c.status, hops, Vec::new());
        let Some(target) = &c.location else {
            return RedirectEnd::Unresolved(unresolved, None);
        };
        let Some(&next) = by_uri.get(target.key()) else {
            return RedirectEnd::Unresolved(
                unresolved,
                Some(target.key().to_string()),
            );
        };
        hops += 1;
        if hops > MAX_REDIRECTS {
            return RedirectEnd::Final(Fetch::TooManyRedirects);
        }
        if visited.contains(&next) {
            return RedirectEnd::Loop;
        }
        visited.push(next);
        reached.insert(next);
        cur = next;
    }
}

/// An http(s) URI, normalised for comparison by the `url` crate (WHATWG
/// URL: lower-case scheme and host, no default port, dot segments
/// removed), without its fragment; and its bundle host key.
#[derive(Clone, Debug, Eq, PartialEq)]
struct Uri {
    url: Url,
    /// The bundle host key ([`url_host_key`]), the same function `filter`
    /// looks URLs up with.
    host: String,
}

impl Uri {
    /// Parses an absolute http(s) URI; `None` for other schemes, or a host
    /// without a bundle host key.
    fn parse(uri: &str) -> Option<Uri> {
        let uri = uri.trim();
        // WARC/1.0's grammar put the URI in angle brackets.
        let uri = uri
            .strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(uri);
        Uri::from_url(Url::parse(uri).ok()?, uri)
    }

    /// `url`, whose written form is `text`.
    fn from_url(mut url: Url, text: &str) -> Option<Uri> {
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        url.set_fragment(None);
        let mut key = Vec::new();
        url_host_key(text.as_bytes(), &mut key).ok()?;
        let host = String::from_utf8(key).ok()?;
        normalize_host(&host).ok()?;
        Some(Uri { url, host })
    }

    /// `scheme://host/path?query`, for comparison.
    fn key(&self) -> &str {
        self.url.as_str()
    }

    fn is_robots_txt(&self) -> bool {
        self.url.path() == "/robots.txt" && self.url.query().is_none()
    }

    /// Resolves a `Location` value against this URI (RFC 3986 §5.2).
    fn resolve(&self, location: &str) -> Option<Uri> {
        let loc = location.trim();
        if loc.is_empty() {
            return None;
        }
        let url = self.url.join(loc).ok()?;
        let text = url.as_str().to_string();
        Uri::from_url(url, &text)
    }
}

/// A record's header facts; `block` is kept for response records only.
struct Record {
    offset: u64,
    kind: String,
    uri: Option<String>,
    truncated: bool,
    block: Option<Vec<u8>>,
    /// The block is longer than the block cap: only its start was read.
    cut: bool,
}

/// A WARC stream being read, with the offset of the next byte.
struct Warc {
    input: Box<dyn BufRead>,
    pos: u64,
    name: String,
    comp: Compression,
    block_cap: usize,
}

impl Warc {
    fn new(
        input: Box<dyn BufRead>,
        name: String,
        comp: Compression,
        block_cap: usize,
    ) -> Self {
        Warc { input, pos: 0, name, comp, block_cap }
    }

    /// `FILE at byte OFFSET`.
    fn at(&self, offset: u64) -> String {
        format!(
            "{} at byte {offset}{}",
            self.name,
            super::offset_suffix(self.comp)
        )
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
        // A response's block up to the cap, the rest (and every other
        // record's block) skipped unread.
        let keep =
            if is_response { len.min(self.block_cap as u64) } else { 0 };
        let mut block = Vec::new();
        let read = (&mut self.input)
            .take(keep)
            .read_to_end(&mut block)
            .map(|n| n as u64)
            .and_then(|n| {
                let skip = io::copy(
                    &mut (&mut self.input).take(len - keep),
                    &mut io::sink(),
                )?;
                Ok(n + skip)
            });
        let got = read
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
        let cut = keep < len;
        let block = is_response.then_some(block);
        Ok(Some(Record { offset, kind, uri, truncated, block, cut }))
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

/// Parses an HTTP response message (a response record's block) with
/// `httparse`, leniently as crawlers' captures need (obsolete folded
/// lines, spaces before a colon, bad fields skipped). `cut`: only the
/// block's start was read.
fn parse_http(
    block: &[u8],
    cut: bool,
    limits: Limits,
) -> Result<Http, String> {
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_HTTP_FIELDS];
    let (status, head_len, chunked, encoding, location) = {
        let mut resp = httparse::Response::new(&mut fields);
        let mut config = httparse::ParserConfig::default();
        config
            .allow_spaces_after_header_name_in_responses(true)
            .allow_obsolete_multiline_headers_in_responses(true)
            .allow_multiple_spaces_in_response_status_delimiters(true)
            .ignore_invalid_headers_in_responses(true);
        // httparse knows HTTP/1.x only; crawlers also write `HTTP/2 200`
        // for HTTP/2 responses, with the same header block.
        let http2 = http2_status_line(block);
        let parsed = match &http2 {
            Some(b) => config.parse_response(&mut resp, b),
            None => config.parse_response(&mut resp, block),
        };
        let shift = http2.as_ref().map_or(0, |b| b.len() - block.len());
        let head_len = match parsed {
            Ok(httparse::Status::Complete(n)) => n - shift,
            Ok(httparse::Status::Partial) => {
                return Err("the HTTP response has no empty line after its \
                     headers (is the record's Content-Type \
                     application/http?)"
                    .to_string());
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(format!(
                    "the HTTP response has more than {MAX_HTTP_FIELDS} \
                     header fields"
                ));
            }
            Err(e) => {
                let first = block.split(|&b| b == b'\n').next().unwrap_or(b"");
                return Err(format!(
                    "the HTTP response does not parse ({e}; its first line \
                     is '{}'; is the record's Content-Type \
                     application/http?)",
                    snippet(first)
                ));
            }
        };
        let status = resp.code.unwrap_or_default();
        let (mut chunked, mut encoding, mut location) = (false, None, None);
        for f in resp.headers.iter() {
            let value = String::from_utf8_lossy(f.value).trim().to_string();
            if f.name.eq_ignore_ascii_case("Transfer-Encoding") {
                chunked |= value
                    .split(',')
                    .any(|c| c.trim().eq_ignore_ascii_case("chunked"));
            } else if f.name.eq_ignore_ascii_case("Content-Encoding") {
                encoding = Some(value.to_ascii_lowercase());
            } else if f.name.eq_ignore_ascii_case("Location")
                && location.is_none()
            {
                location = Some(value);
            }
        }
        (status, head_len, chunked, encoding, location)
    };
    let mut issues = Vec::new();
    if !(200..=299).contains(&status) {
        return Ok(Http { status, location, body: Vec::new(), issues });
    }
    let mut body = block[head_len..].to_vec();
    let encoded = chunked
        || !matches!(encoding.as_deref(), None | Some("" | "identity"));
    if cut && (encoded || body.len() <= limits.body) {
        // A cut chunked or compressed body cannot be decoded; a cut plain
        // one is kept only where nothing past the cap is parsed.
        return Err(format!(
            "the response is larger than the {} octets read of a record \
             and cannot be cut there",
            block_cap(limits)
        ));
    }
    if chunked {
        match dechunk(&body) {
            Some(b) => body = b,
            None => issues.push("malformed chunked encoding".to_string()),
        }
    }
    match encoding.as_deref() {
        None | Some("" | "identity") => {}
        Some("gzip" | "x-gzip") => match gunzip(&body, limits.body) {
            Some(b) => body = b,
            None => issues.push("gzip body does not decompress".to_string()),
        },
        Some(other) => {
            issues.push(format!("Content-Encoding '{other}' not decoded"))
        }
    }
    let body = limits.apply(body)?;
    Ok(Http { status, location, body, issues })
}

/// The block with an `HTTP/2` or `HTTP/3` status line rewritten to
/// `HTTP/1.1`, or `None` for any other block.
fn http2_status_line(block: &[u8]) -> Option<Vec<u8>> {
    let rest = block
        .strip_prefix(b"HTTP/2")
        .or_else(|| block.strip_prefix(b"HTTP/3"))?;
    let rest = rest.strip_prefix(b".0").unwrap_or(rest);
    if !rest.starts_with(b" ") {
        return None;
    }
    Some([&b"HTTP/1.1"[..], rest].concat())
}

/// Decodes `Transfer-Encoding: chunked` (chunk sizes by
/// `httparse::parse_chunk_size`); `None` if malformed.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let (used, size) = chunk_size(data)?;
        data = &data[used..];
        if size == 0 {
            return Some(out); // trailer fields are ignored
        }
        let size = usize::try_from(size).ok()?;
        let chunk = data.get(..size)?;
        out.extend_from_slice(chunk);
        data = &data[size..];
        data =
            data.strip_prefix(b"\r\n").or_else(|| data.strip_prefix(b"\n"))?;
    }
}

/// `httparse::parse_chunk_size`, also after a bare LF (RFC 9112 §2.2
/// lets a recipient take LF alone as a line end; crawlers' captures have
/// them): `(octets of the size line, chunk size)`.
fn chunk_size(data: &[u8]) -> Option<(usize, u64)> {
    let nl = memchr::memchr(b'\n', data)?;
    if nl > 0 && data[nl - 1] == b'\r' {
        return match httparse::parse_chunk_size(data) {
            Ok(httparse::Status::Complete(p)) => Some(p),
            _ => None,
        };
    }
    let line = [&data[..nl], b"\r\n"].concat();
    match httparse::parse_chunk_size(&line) {
        Ok(httparse::Status::Complete((_, size))) => Some((nl + 1, size)),
        _ => None,
    }
}

/// Decompresses a gzip body up to one octet past `cap` (the caller's cap
/// then cuts or refuses it); `None` if it is not compressed or damaged.
fn gunzip(data: &[u8], cap: usize) -> Option<Vec<u8>> {
    files::decompress_bytes(data, cap as u64).ok().flatten()
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::testing::*;
    use super::*;

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
            let (hosts, stats) = read_warc(&fixture(name), limits()).unwrap();
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
        read_warc(&dir.file("t.warc", bytes), limits())
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
        ];
        for (bytes, want) in cases {
            let e = error(read_warc_bytes(&bytes));
            assert!(e.contains(&want), "{want}\n{e}");
        }
    }

    /// A record that is not an HTTP response, or whose status is not
    /// HTTP's, costs only its own host.
    #[test]
    fn warc_bad_members() {
        let good = response(
            "http://a.example/robots.txt",
            "HTTP/1.1 200 OK",
            b"Disallow: /\n",
        );
        let mut w = good.clone();
        let at_b = w.len();
        w.extend(response(
            "http://b.example/robots.txt",
            "HTTP/1.1 2000",
            b"",
        ));
        let at_c = w.len();
        w.extend(warc_record("response", "http://c.example/robots.txt", b"x"));
        w.extend(response(
            "http://www.linkedin.com/robots.txt",
            "HTTP/1.1 999 Request denied",
            b"",
        ));
        // A redirect to a broken capture: unreadable too.
        w.extend(response(
            "http://d.example/robots.txt",
            "HTTP/1.1 301 Moved\r\nLocation: http://c.example/robots.txt",
            b"",
        ));
        let (hosts, stats) = read_warc_bytes(&w).unwrap();
        assert_eq!(
            outcomes(&hosts),
            [
                ("a.example", &ok(200, "Disallow: /\n")),
                ("b.example", &Fetch::Unreadable),
                ("c.example", &Fetch::Unreadable),
                ("www.linkedin.com", &Fetch::Unreachable),
                ("d.example", &Fetch::Unreadable),
            ]
        );
        let bad = stats.bad.join("\n");
        assert_eq!(stats.bad.len(), 3, "{bad}");
        assert!(bad.contains(&format!("at byte {at_b}: the HTTP response")));
        assert!(bad.contains("'HTTP/1.1 2000'"), "{bad}");
        assert!(
            bad.contains(&format!("at byte {at_c}: the HTTP response")),
            "{bad}"
        );
        assert!(
            bad.contains("the redirect target http://c.example/robots.txt")
        );
        let notes = stats.notes.join("\n");
        assert!(notes.contains("outside 100-599"), "{notes}");
        assert!(notes.contains("www.linkedin.com"), "{notes}");
    }

    /// A response larger than the read cap: a plain body is cut in the
    /// rfc9309 dialect, refused in the google dialect, and the file after
    /// it is still read.
    #[test]
    fn warc_record_cap() {
        let small = Limits { body: 100, cut_ok: true };
        let body = "Disallow: /x\n".repeat(100_000);
        let mut w = response(
            "http://a.example/robots.txt",
            "HTTP/1.1 200 OK",
            body.as_bytes(),
        );
        w.extend(response(
            "http://b.example/robots.txt",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
            format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()).as_bytes(),
        ));
        w.extend(response(
            "http://c.example/robots.txt",
            "HTTP/1.1 404 x",
            b"",
        ));
        let dir = TempDir::new();
        let path = dir.file("big.warc", &w);
        let (hosts, stats) = read_warc(&path, small).unwrap();
        assert_eq!(
            outcomes(&hosts),
            [
                ("a.example", &ok(200, &body[..100])),
                ("b.example", &Fetch::Unreadable),
                ("c.example", &fail(404)),
            ]
        );
        assert!(stats.bad[0].contains("cannot be cut"), "{:?}", stats.bad);
        let google = Limits { body: 100, cut_ok: false };
        let (hosts, _) = read_warc(&path, google).unwrap();
        assert_eq!(hosts[0].fetch, Fetch::Unreadable);
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
        assert_eq!(base.key(), "http://a.example/dir/robots.txt?q");
        assert_eq!(base.host, "a.example");
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
                base.resolve(loc).as_ref().map(Uri::key),
                Some(want),
                "{loc}"
            );
        }
        assert!(base.resolve("ftp://a.example/x").is_none());
        assert!(base.resolve("").is_none());
        assert!(Uri::parse("dns:a.example").is_none());
        assert!(Uri::parse("http://a.example").unwrap().url.path() == "/");
        // The host key is the library's, not the URL parser's.
        assert!(
            Uri::parse("http://b.example\\@a.example/robots.txt").is_none()
        );
    }

    #[test]
    fn http_pieces() {
        let status = |b: &[u8]| {
            parse_http(&[b, &b"\r\n\r\n"[..]].concat(), false, limits())
                .map(|h| h.status)
        };
        assert_eq!(status(b"HTTP/1.1 200 OK"), Ok(200));
        assert_eq!(status(b"HTTP/2 404"), Ok(404));
        assert_eq!(status(b"HTTP/1.1 999 Request denied"), Ok(999));
        assert!(status(b"HTTP/1.1 20").is_err());
        assert!(status(b"ICY 200 OK").is_err());
        assert_eq!(
            dechunk(b"3;x=y\r\nabc\r\n1\nd\n0\r\nTrailer: z\r\n\r\n")
                .as_deref(),
            Some(&b"abcd"[..])
        );
        assert_eq!(dechunk(b"3\r\nabc\r\n"), None); // no last chunk
        assert_eq!(dechunk(b"+3\r\nabc\r\n0\r\n"), None);
    }
}
