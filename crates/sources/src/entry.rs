//! The manifest entry: one JSON line per host, the one type that `robofilter
//! fetch` writes (to its output and journal) and that `compile --manifest`
//! and the next fetch (its cache) read. [`ENTRY_KEYS`] names its keys for
//! the lenient reader of hand-written manifests (`manifest.rs`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

/// Every key an [`Entry`] line may hold, in the order written.
pub const ENTRY_KEYS: &[&str] = &[
    "host",
    "url",
    "status",
    "body",
    "body_base64",
    "truncated",
    "redirects",
    "redirect_chain",
    "fetched_at",
    "checked_at",
    "expires",
    "etag",
    "last_modified",
    "error",
    "elapsed_ms",
    "stale_since",
];

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
            fetched_at: rfc3339(self.fetched_at),
            checked_at: rfc3339(self.checked_at),
            expires: rfc3339(self.expires),
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
            error: self.error.clone(),
            elapsed_ms: self.elapsed_ms,
            stale_since: self.stale_since.map(rfc3339),
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
        let time = |s: &str| parse_rfc3339(s).unwrap_or(0);
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
            stale_since: w.stale_since.as_deref().and_then(parse_rfc3339),
        })
    }
}

/// Unix seconds as RFC 3339 UTC: `2026-11-24T23:54:31Z`.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Parses what [`rfc3339`] writes (UTC, `Z` or `+00:00`, fractional
/// seconds ignored) back to Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u64> {
        let t = s.get(r)?;
        t.bytes().all(|c| c.is_ascii_digit()).then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[n..];
    }
    if !(rest == "Z" || rest == "z" || rest == "+00:00") {
        return None;
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 {
        return None;
    }
    let days = days_from_civil(y as i64, mo as u32, d as u32);
    let days = u64::try_from(days).ok()?;
    Some(days * 86_400 + h * 3600 + mi * 60 + se.min(60))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry with every key set.
    fn full() -> Entry {
        Entry {
            host: "a.example".into(),
            url: "https://a.example/robots.txt".into(),
            status: Status::Http(200),
            body: b"User-agent: *\nDisallow: /x\n".to_vec(),
            truncated: true,
            redirect_chain: vec!["https://b.example/robots.txt".into()],
            fetched_at: 1_764_028_471,
            checked_at: 1_764_028_472,
            expires: 1_764_114_871,
            etag: Some("\"e\"".into()),
            last_modified: Some("Thu, 01 Jan 2026 00:00:00 GMT".into()),
            error: Some("note".into()),
            elapsed_ms: 3,
            stale_since: Some(1_764_028_000),
        }
    }

    #[test]
    fn entry_keys_are_the_keys_written() {
        let mut with_bytes = full();
        with_bytes.body = vec![0xff, 0xfe];
        let mut written = std::collections::BTreeSet::new();
        for e in [full(), with_bytes] {
            let v: serde_json::Value =
                serde_json::from_slice(&e.to_line()).unwrap();
            written.extend(v.as_object().unwrap().keys().cloned());
        }
        let known: std::collections::BTreeSet<String> =
            ENTRY_KEYS.iter().map(|k| k.to_string()).collect();
        assert_eq!(written, known);
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let e = full();
        assert_eq!(Entry::from_line(&e.to_line()).unwrap(), e);
        let mut binary = full();
        binary.body = vec![0, 0xff, b'\n'];
        assert_eq!(Entry::from_line(&binary.to_line()).unwrap(), binary);
    }

    #[test]
    fn rfc3339_round_trips() {
        for secs in [0, 951_782_400, 1_764_028_471, 4_102_444_799] {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs));
        }
        assert_eq!(rfc3339(1_764_028_471), "2025-11-24T23:54:31Z");
        assert_eq!(
            parse_rfc3339("2025-11-24T23:54:31.5+00:00"),
            Some(1_764_028_471)
        );
        assert_eq!(parse_rfc3339("2025-13-24T23:54:31Z"), None);
    }
}
