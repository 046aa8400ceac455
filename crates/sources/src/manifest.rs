//! `--manifest FILE.jsonl`: one JSON object a line, a host's fetch outcome.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::io::{self, BufRead, Read};
use std::path::Path;

use anyhow::{Result, bail};
use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use robofilter::{Fetch, normalize_host};
use serde::de::{self, IgnoredAny, Visitor};
use serde::{Deserialize, Deserializer};

use crate::entry::ENTRY_KEYS;
use crate::{
    HostSource, Limits, SourceStats, count, decode_error, examples,
    open_stream,
};
use robofilter_io as files;

/// Room on a manifest line for everything but the body: 64 KiB.
const LINE_SLACK: usize = 64 << 10;

/// How far past the line cap a line end is looked for before the input
/// is taken for something else than a manifest (`/dev/zero`): 256 MiB.
const MAX_SKIP: u64 = 256 << 20;

/// Skips past the next `\n` (or to the end of the input), reading at most
/// about `max` octets: the octets skipped, and whether the line ended.
fn skip_line(input: &mut dyn BufRead, max: u64) -> io::Result<(u64, bool)> {
    let mut skipped = 0u64;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok((skipped, true));
        }
        if let Some(i) = memchr::memchr(b'\n', buf) {
            input.consume(i + 1);
            return Ok((skipped + i as u64 + 1, true));
        }
        let n = buf.len();
        input.consume(n);
        skipped += n as u64;
        if skipped >= max {
            return Ok((skipped, false));
        }
    }
}

/// Standard base64, padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

const EXAMPLE_LINE: &str =
    r#"{"host": "example.com", "status": 200, "body": "..."}"#;

/// The longest manifest line read: six octets per body octet (a `\u00XX`
/// escape, JSON's worst case; base64 takes four per three) for a body at
/// the read cap, plus [`LINE_SLACK`] for the other keys. So every line
/// whose body is within the cap is read, and `/dev/zero` costs at most
/// this much memory.
pub fn line_cap(limits: Limits) -> usize {
    limits.body.saturating_mul(6).saturating_add(LINE_SLACK)
}

/// Reads a JSON-lines manifest (possibly gzip- or zstd-compressed): one
/// object per line with `host`, `status` (a number, or `"unreachable"`),
/// and optionally `body` or `body_base64`, and `redirects`.
///
/// A bad line is reported in [`SourceStats::bad`]: skipped when its host
/// cannot be read (broken JSON, no `host`, a host that is not an
/// authority, a host given on an earlier line), else its host is recorded
/// as [`Fetch::Unreadable`].
pub fn read_manifest(
    path: &Path,
    limits: Limits,
) -> Result<(Vec<HostSource>, SourceStats)> {
    let name = files::display(path);
    let (mut input, comp) = open_stream(path, "manifest")?;
    let cap = line_cap(limits);
    let mut stats = SourceStats::default();
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut unknown: BTreeMap<String, usize> = BTreeMap::new();
    let (mut ignored_bodies, mut not_http) = (Vec::new(), Vec::new());
    let (mut line, mut line_no, mut pos) = (Vec::new(), 0usize, 0u64);
    loop {
        line.clear();
        let n = (&mut input)
            .take(cap as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| decode_error(&name, comp, pos, e))?;
        if n == 0 {
            break;
        }
        pos += n as u64;
        line_no += 1;
        let origin = format!("{name}:{line_no}");
        if n > cap && line.last() != Some(&b'\n') {
            let (rest, ended) = skip_line(&mut input, MAX_SKIP)
                .map_err(|e| decode_error(&name, comp, pos, e))?;
            pos += rest;
            if !ended {
                bail!(
                    "{origin}: no line end in {pos} octets (is this a \
                     JSON-lines manifest?)"
                );
            }
            stats.read += 1;
            stats.skip(
                &origin,
                format!(
                    "the line is longer than {cap} octets, the most a \
                     manifest line may take (a body is read up to {} \
                     octets)",
                    limits.body
                ),
            );
            continue;
        }
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
        // serde reads a struct from an array too; a line is an object.
        if text.trim_ascii_start().first() != Some(&b'{') {
            let what = serde_json::from_slice::<serde_json::Value>(text)
                .map(|v| kind(&v));
            match what {
                Ok(kind) => stats.skip(
                    &origin,
                    format!(
                        "expected a JSON object, found {kind} (write one \
                         object per line, such as {EXAMPLE_LINE})"
                    ),
                ),
                Err(e) => stats.skip(&origin, json_error(&e)),
            }
            continue;
        }
        let host = match serde_json::from_slice::<HostOnly>(text) {
            Ok(h) => h.host,
            Err(e) => {
                stats.skip(&origin, json_error(&e));
                continue;
            }
        };
        let key = match normalize_host(&host) {
            Ok(key) => key,
            Err(e) => {
                stats.skip(
                    &origin,
                    format!(
                        "{e} (give the host's authority, such as \
                         \"example.com\" or \"example.com:8080\")"
                    ),
                );
                continue;
            }
        };
        if let Some(prev) = seen.get(&key) {
            stats.skip(
                &origin,
                format!(
                    "host '{key}' is already on line {prev} (give each host \
                     once), the first counts"
                ),
            );
            continue;
        }
        seen.insert(key.clone(), line_no);
        let entry = match serde_json::from_slice::<Line>(text)
            .map_err(|e| json_error(&e))
            .and_then(|l| l.into_entry(limits))
        {
            Ok(entry) => entry,
            Err(msg) => {
                stats.unreadable(&mut out, host, origin, msg);
                continue;
            }
        };
        for k in entry.unknown {
            *unknown.entry(k).or_default() += 1;
        }
        if entry.ignored_body {
            ignored_bodies.push(key.clone());
        }
        if entry.not_http {
            not_http.push(key);
        }
        let (fetch, cause) = (entry.fetch, entry.cause);
        stats.add(&mut out, HostSource { host, fetch, origin, cause });
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
    if !not_http.is_empty() {
        stats.notes.push(format!(
            "{} with a status outside 100-599, not an HTTP response: \
             unreachable, disallow all: {}",
            count(not_http.len(), "host"),
            examples(&not_http)
        ));
    }
    Ok((out, stats))
}

/// A serde_json error as a message that says what to do.
fn json_error(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = msg.rsplit_once(" at line ").map_or(&*msg, |p| p.0);
    if e.is_syntax() || e.is_eof() {
        format!(
            "invalid JSON at column {}: {msg} (write one JSON object per \
             line, such as {EXAMPLE_LINE})",
            e.column()
        )
    } else {
        format!("{msg} (near column {}; such as {EXAMPLE_LINE})", e.column())
    }
}

/// A JSON value's kind, for messages.
fn kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The host of a line, read first so that a line broken elsewhere still
/// names its host.
#[derive(Deserialize)]
#[serde(expecting = "a JSON object with \"host\" and \"status\"")]
struct HostOnly {
    host: String,
}

/// One manifest line. `null` counts as absent for the optional keys.
#[derive(Deserialize)]
#[serde(expecting = "a JSON object with \"host\" and \"status\"")]
struct Line {
    #[allow(dead_code)] // read by `HostOnly`; here to be a known key
    host: IgnoredAny,
    status: Status,
    #[serde(default)]
    redirects: Option<u64>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_base64: Option<String>,
    /// The body was cut (`robofilter fetch --max-body`): its cut last line
    /// is dropped.
    #[serde(default)]
    truncated: Option<bool>,
    /// Why the fetch failed, in words (`robofilter fetch` writes it).
    #[serde(default)]
    error: Option<String>,
    #[serde(flatten)]
    unknown: BTreeMap<String, IgnoredAny>,
}

/// `"status"`: an HTTP status, or `"unreachable"` (`None`).
struct Status(Option<u16>);

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Status, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Status;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "an HTTP status number (such as 404) or \"unreachable\" \
                     (a fetch without a response)",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Status, E> {
                u16::try_from(v).map(|s| Status(Some(s))).map_err(|_| {
                    E::invalid_value(de::Unexpected::Unsigned(v), &self)
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Status, E> {
                if v == "unreachable" {
                    Ok(Status(None))
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// One manifest line, checked.
#[derive(Debug)]
struct Entry {
    fetch: Fetch,
    /// The line's `"error"`, or empty.
    cause: String,
    /// Keys other than the known ones.
    unknown: Vec<String>,
    /// A body was given with a status other than 2xx.
    ignored_body: bool,
    /// The status is outside 100-599: not an HTTP response.
    not_http: bool,
}

impl Line {
    fn into_entry(self, limits: Limits) -> Result<Entry, String> {
        let Status(status) = self.status;
        let body = match (self.body, self.body_base64) {
            (Some(_), Some(_)) => {
                return Err("both \"body\" and \"body_base64\" are given \
                     (keep one: \"body\" for UTF-8 text, \"body_base64\" \
                     for exact bytes)"
                    .to_string());
            }
            (Some(s), None) => Some(s.into_bytes()),
            (None, Some(s)) => Some(BASE64.decode(s).map_err(|e| {
                format!(
                    "\"body_base64\" is not base64: {e} (use the standard \
                     alphabet A-Z a-z 0-9 + /, without line breaks)"
                )
            })?),
            (None, None) => None,
        };
        let is_2xx = status.is_some_and(|s| (200..=299).contains(&s));
        let ignored_body = body.is_some() && !is_2xx;
        let body = match is_2xx {
            true if self.truncated == Some(true) => {
                Limits::drop_cut_line(limits.apply(body.unwrap_or_default())?)
            }
            true => limits.apply(body.unwrap_or_default())?,
            false => Vec::new(),
        };
        let redirects =
            u32::try_from(self.redirects.unwrap_or(0)).unwrap_or(u32::MAX);
        let fetch = match status {
            Some(s) => Fetch::http(s, redirects, body),
            None if redirects > 5 => Fetch::TooManyRedirects,
            None => Fetch::Unreachable,
        };
        let not_http = status.is_some_and(|s| !(100..=599).contains(&s))
            && fetch == Fetch::Unreachable;
        // What `robofilter fetch` writes for its cache and for people
        // (the one entry type's keys) is known: no note, no effect on the
        // bundle.
        let unknown = self
            .unknown
            .into_keys()
            .filter(|k| !ENTRY_KEYS.contains(&k.as_str()))
            .collect();
        let cause = self.error.unwrap_or_default();
        Ok(Entry { fetch, cause, unknown, ignored_body, not_http })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::io::Write as _;

    use robofilter::Policy;

    use super::super::testing::*;
    use super::*;

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
        let (hosts, stats) = read_manifest(&path, limits()).unwrap();
        let want = manifest_want();
        let want: Vec<_> = want.iter().map(|(h, f)| (*h, f)).collect();
        assert_eq!(outcomes(&hosts), want);
        assert!(hosts[6].origin.ends_with("manifest.jsonl:8"));
        assert_eq!(stats.read, 11);
        assert!(stats.bad.is_empty(), "{:?}", stats.bad);
        // `fetched_at` is a key `robofilter fetch` writes: no note.
        assert_eq!(stats.notes.len(), 1, "{:?}", stats.notes);
        assert!(stats.notes[0].contains("e.example"));
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
    fn a_truncated_body_loses_its_cut_last_line() {
        let cut = "User-agent: *\\nDisallow: /\\nAllow: /";
        let lines = format!(
            "{{\"host\":\"a.example\",\"status\":200,\"body\":\"{cut}\",\"truncated\":true}}\n\
             {{\"host\":\"b.example\",\"status\":200,\"body\":\"{cut}\"}}\n\
             {{\"host\":\"c.example\",\"status\":200,\"body\":\"Disallow: /x\\n\",\"truncated\":true}}\n\
             {{\"host\":\"d.example\",\"status\":200,\"body\":\"User-agent: *\",\"truncated\":true}}\n"
        );
        let dir = TempDir::new();
        let path = dir.file("m.jsonl", lines.as_bytes());
        let (hosts, stats) = read_manifest(&path, limits()).unwrap();
        assert!(stats.bad.is_empty() && stats.notes.is_empty(), "{stats:?}");
        let body = |i: usize| match &hosts[i].fetch {
            Fetch::Http { body, .. } => {
                String::from_utf8(body.clone()).unwrap()
            }
            other => panic!("{other:?}"),
        };
        // The cap fell inside `Allow: /public-area`: `Allow: /` is not
        // what the file said, so it goes.
        assert_eq!(body(0), "User-agent: *\nDisallow: /\n");
        // Not truncated: the last line is whole, without its line end.
        assert_eq!(body(1), "User-agent: *\nDisallow: /\nAllow: /");
        // Cut right after a line end: nothing is dropped.
        assert_eq!(body(2), "Disallow: /x\n");
        // No line end at all: nothing is left.
        assert_eq!(body(3), "");
        // In both dialects the first host then disallows `/secret`.
        for dialect in
            [robofilter::Dialect::Rfc9309, robofilter::Dialect::Google]
        {
            let config = robofilter::Config::new().dialect(dialect);
            let rules = robofilter::Compiler::with_config(config)
                .compile(body(0).as_bytes())
                .unwrap();
            let rules = robofilter::AlignedBytes::from(&rules[..]);
            let rules =
                robofilter::Rules::from_bytes(rules.as_bytes()).unwrap();
            let bot = rules.matcher("bot").unwrap();
            assert!(!bot.is_allowed(b"https://a.example/secret"), "{dialect}");
        }
    }

    #[test]
    fn a_body_that_is_not_text_is_a_bad_member() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut gz = flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        );
        gz.write_all(b"User-agent: *\nDisallow: /\n").unwrap();
        let gz = gz.finish().unwrap();
        let lines = format!(
            "{{\"host\":\"a.example\",\"status\":200,\"body_base64\":\"{}\"}}\n\
             {{\"host\":\"b.example\",\"status\":200,\"body_base64\":\"{}\"}}\n\
             {{\"host\":\"c.example\",\"status\":200,\"body\":\"ROBOFLTR\"}}\n\
             {{\"host\":\"d.example\",\"status\":404,\"body_base64\":\"{}\"}}\n",
            b64.encode(&gz),
            b64.encode(b"User-agent: *\nDisallow: /\n"),
            b64.encode(&gz),
        );
        let dir = TempDir::new();
        let path = dir.file("m.jsonl", lines.as_bytes());
        let (hosts, stats) = read_manifest(&path, limits()).unwrap();
        let got: Vec<_> =
            hosts.iter().map(|h| (h.host.as_str(), &h.fetch)).collect();
        assert_eq!(got[0], ("a.example", &Fetch::Unreadable));
        assert!(matches!(
            got[1],
            ("b.example", Fetch::Http { status: 200, .. })
        ));
        assert_eq!(got[2], ("c.example", &Fetch::Unreadable));
        // A 404's body is not used: no harm in it.
        assert!(matches!(
            got[3],
            ("d.example", Fetch::Http { status: 404, .. })
        ));
        assert_eq!(stats.bad.len(), 2, "{:?}", stats.bad);
        assert!(stats.bad[0].contains("gzip-compressed, not a robots.txt"));
        assert!(stats.bad[1].contains("a compiled rules file"));
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
            let (hosts, _) =
                read_manifest(&dir.file(name, &bytes), limits()).unwrap();
            let got: Vec<_> =
                hosts.into_iter().map(|h| (h.host, h.fetch)).collect();
            let want: Vec<_> = manifest_want()
                .into_iter()
                .map(|(h, f)| (h.to_string(), f))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    /// Each bad line is reported with its file and line; with a known
    /// host, the host is recorded as unreadable.
    #[test]
    fn manifest_bad_lines() {
        let good = r#"{"host":"a.example","status":200}"#;
        // (line, message, host recorded as unreadable)
        let cases: &[(&str, &str, bool)] = &[
            ("{\"host\":", ":2: invalid JSON at column 8: EOF", false),
            ("[1]", ":2: expected a JSON object, found an array", false),
            (r#"{"status":200}"#, ":2: missing field `host`", false),
            (
                r#"{"host":7,"status":200}"#,
                ":2: invalid type: integer `7`",
                false,
            ),
            (r#"{"host":"b c","status":200}"#, ":2: host name 'b c'", false),
            (
                r#"{"host":"A.example:443","status":404}"#,
                ":2: host 'a.example' is already on line 1",
                false,
            ),
            (r#"{"host":"b"}"#, ":2: missing field `status`", true),
            (
                r#"{"host":"b","status":70000}"#,
                "`70000`, expected an HTTP",
                true,
            ),
            (r#"{"host":"b","status":200.0}"#, "floating point", true),
            (
                r#"{"host":"b","status":"200"}"#,
                "string \"200\", expected",
                true,
            ),
            (r#"{"host":"b","status":"down"}"#, "\"down\"", true),
            (r#"{"host":"b","status":200,"redirects":-1}"#, "-1", true),
            (r#"{"host":"b","status":200,"body":1}"#, "integer `1`", true),
            (
                r#"{"host":"b","status":200,"body":"x","body_base64":"eA=="}"#,
                ":2: both \"body\" and \"body_base64\" are given",
                true,
            ),
            (
                r#"{"host":"b","status":200,"body_base64":"%%"}"#,
                ":2: \"body_base64\" is not base64",
                true,
            ),
        ];
        let dir = TempDir::new();
        for (i, (line, want, recorded)) in cases.iter().enumerate() {
            let path = dir.file(
                &format!("{i}.jsonl"),
                format!(
                    "{good}\n{line}\n{good2}\n",
                    good2 = r#"{"host":"z","status":404}"#
                )
                .as_bytes(),
            );
            let (hosts, stats) = read_manifest(&path, limits()).unwrap();
            assert_eq!(stats.bad.len(), 1, "{line}: {:?}", stats.bad);
            let bad = &stats.bad[0];
            assert!(bad.starts_with(&path.display().to_string()), "{bad}");
            assert!(bad.contains(want), "{line}: {bad}");
            let got: Vec<_> = outcomes(&hosts);
            let mut want_hosts = vec![("a.example", ok(200, ""))];
            if *recorded {
                want_hosts.push(("b", Fetch::Unreadable));
            }
            want_hosts.push(("z", fail(404)));
            let want_hosts: Vec<_> =
                want_hosts.iter().map(|(h, f)| (*h, f)).collect();
            assert_eq!(got, want_hosts, "{line}");
        }
        // Null is absent; unpadded base64 is fine; a BOM and CRLF too;
        // 999 is not an HTTP status: unreachable, with a note.
        let path = dir.file(
            "ok.jsonl",
            b"\xef\xbb\xbf{\"host\":\"a\",\"status\":200,\"body\":null,\
              \"body_base64\":\"eA\",\"redirects\":null}\r\n\
              {\"host\":\"www.linkedin.com\",\"status\":999}\n",
        );
        let (hosts, stats) = read_manifest(&path, limits()).unwrap();
        assert_eq!(hosts[0].fetch, ok(200, "x"));
        assert_eq!(hosts[1].fetch, Fetch::Unreachable);
        assert!(stats.bad.is_empty(), "{:?}", stats.bad);
        assert!(
            stats.notes[0].contains("outside 100-599"),
            "{:?}",
            stats.notes
        );
    }

    /// The keys `robofilter fetch` writes are known (no note); others
    /// still get one.
    #[test]
    fn manifest_fetch_keys_are_known() {
        let dir = TempDir::new();
        let path = dir.file(
            "m.jsonl",
            br#"{"host":"a","url":"https://a/robots.txt","status":200,"body":"x","truncated":false,"redirects":1,"redirect_chain":["https://b/robots.txt"],"fetched_at":"2026-01-01T00:00:00Z","checked_at":"2026-01-01T00:00:00Z","expires":"2026-01-02T00:00:00Z","etag":"\"e\"","last_modified":"Thu, 01 Jan 2026 00:00:00 GMT","error":null,"elapsed_ms":3,"stale_since":"2026-01-01T00:00:00Z"}
{"host":"b","status":"unreachable","error":"timeout","surprise":1}
"#,
        );
        let (hosts, stats) = read_manifest(&path, limits()).unwrap();
        assert_eq!(hosts[0].fetch, ok(200, "x"));
        assert_eq!(hosts[1].fetch, Fetch::Unreachable);
        assert!(stats.bad.is_empty(), "{:?}", stats.bad);
        assert_eq!(stats.notes.len(), 1, "{:?}", stats.notes);
        assert!(
            stats.notes[0].contains("\"surprise\" (1 line)"),
            "{:?}",
            stats.notes
        );
    }

    /// A line longer than the cap is skipped without reading it whole.
    #[test]
    fn manifest_line_cap() {
        let small = Limits { body: 10, cut_ok: true };
        let cap = line_cap(small);
        let long = format!(
            "{{\"host\":\"b\",\"status\":200,\"body\":\"{}\"}}",
            "x".repeat(cap)
        );
        let dir = TempDir::new();
        let path = dir.file(
            "m.jsonl",
            format!(
                "{long}\n{{\"host\":\"c\",\"status\":200,\"body\":\"{}\"}}\n",
                "y".repeat(20)
            )
            .as_bytes(),
        );
        let (hosts, stats) = read_manifest(&path, small).unwrap();
        // The long line is skipped; the next body is cut to the cap.
        assert_eq!(outcomes(&hosts), [("c", &ok(200, &"y".repeat(10)))]);
        assert!(stats.bad[0].contains(":1: the line is longer than"));
    }
}
