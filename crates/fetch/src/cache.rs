//! The cache policy of `robofilter fetch` as pure functions: how long a
//! response stays fresh (`Cache-Control`, `Expires`, clamped by
//! `--min-ttl`/`--max-ttl`), which outcomes are failures that may fall
//! back to a previous copy (`stale_since`, up to 30 days), and the
//! RFC 3339 timestamps the manifest carries.
//!
//! RFC 9309 section 2.4: a crawler SHOULD NOT use a cached robots.txt for
//! more than 24 hours unless it is unreachable, so the default lifetime
//! and the default `--max-ttl` are both 24 hours. RFC 9111 gives the
//! precedence: `no-store` and `no-cache` (revalidate every time) before
//! `max-age` before `Expires - Date`.

/// The lifetime of a response without cache headers: 24 hours.
pub const DEFAULT_TTL: u64 = 24 * 3600;

/// How soon a failed fetch (unreachable, 5xx, 429) is tried again: 1 hour
/// (within the `--min-ttl`/`--max-ttl` bounds).
pub const FAILURE_TTL: u64 = 3600;

/// How old a previous successful copy may be and still stand in for a
/// failed refresh: 30 days (Google's documented behaviour; an extension
/// of docs/SEMANTICS.md section 4a, recorded as `stale_since`).
pub const STALE_LIMIT: u64 = 30 * 24 * 3600;

/// The bounds a lifetime is clamped to.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Ttl {
    pub min: u64,
    pub max: u64,
}

impl Ttl {
    fn clamp(self, secs: u64) -> u64 {
        secs.max(self.min).min(self.max.max(self.min))
    }
}

/// The cache headers of a response, as received.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headers<'a> {
    pub cache_control: Option<&'a str>,
    pub expires: Option<&'a str>,
    pub date: Option<&'a str>,
}

/// The lifetime in seconds of a response received at `now` (Unix
/// seconds): `no-store` or `no-cache`: 0; else `max-age`; else `Expires`
/// less `Date` (or `now`), an unreadable `Expires` meaning already
/// expired (RFC 9111 section 5.3); else [`DEFAULT_TTL`]. Then clamped to
/// `ttl`.
pub fn lifetime(h: Headers<'_>, now: u64, ttl: Ttl) -> u64 {
    let mut max_age = None;
    for directive in h.cache_control.unwrap_or("").split(',') {
        let (name, value) = match directive.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
            None => (directive.trim(), None),
        };
        if name.eq_ignore_ascii_case("no-store")
            || name.eq_ignore_ascii_case("no-cache")
        {
            return ttl.clamp(0);
        }
        if name.eq_ignore_ascii_case("max-age") && max_age.is_none() {
            // A malformed max-age is stale (RFC 9111 section 4.2.1).
            max_age =
                Some(value.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0));
        }
    }
    if let Some(secs) = max_age {
        return ttl.clamp(secs);
    }
    if let Some(expires) = h.expires {
        let secs = match http_date(expires) {
            Some(exp) => {
                let base = h.date.and_then(http_date).unwrap_or(now);
                exp.saturating_sub(base)
            }
            None => 0,
        };
        return ttl.clamp(secs);
    }
    ttl.clamp(DEFAULT_TTL)
}

/// The lifetime of a failed fetch (see [`FAILURE_TTL`]).
pub fn failure_lifetime(ttl: Ttl) -> u64 {
    ttl.clamp(FAILURE_TTL)
}

/// Whether a previous copy fetched (or last revalidated) at `fetched_at`
/// may stand in for a failed refresh at `now`.
pub fn stale_usable(fetched_at: u64, now: u64) -> bool {
    now.saturating_sub(fetched_at) < STALE_LIMIT
}

/// An HTTP date (IMF-fixdate, or the obsolete RFC 850 and asctime forms)
/// as Unix seconds.
pub fn http_date(s: &str) -> Option<u64> {
    let t = httpdate::parse_http_date(s.trim()).ok()?;
    t.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use robofilter_sources::entry::{parse_rfc3339, rfc3339};

    use super::*;

    const TTL: Ttl = Ttl { min: 0, max: DEFAULT_TTL };
    const NOW: u64 = 1_764_028_471; // 2025-11-24T23:54:31Z

    fn cc(v: &str) -> Headers<'_> {
        Headers { cache_control: Some(v), ..Headers::default() }
    }

    #[test]
    fn lifetimes() {
        // (headers, ttl, want)
        let date = "Mon, 24 Nov 2025 23:54:31 GMT";
        let cases: &[(Headers<'_>, Ttl, u64)] = &[
            (Headers::default(), TTL, DEFAULT_TTL),
            (cc("max-age=600"), TTL, 600),
            (cc("public, Max-Age=\"60\""), TTL, 60),
            (cc("max-age=999999"), TTL, DEFAULT_TTL),
            (cc("max-age=60"), Ttl { min: 300, max: DEFAULT_TTL }, 300),
            (cc("no-store"), TTL, 0),
            (cc("max-age=600, no-cache"), TTL, 0),
            (cc("NO-STORE"), Ttl { min: 120, max: 900 }, 120),
            (cc("max-age=abc"), TTL, 0),
            (cc("private"), TTL, DEFAULT_TTL),
            (
                Headers {
                    expires: Some("Tue, 25 Nov 2025 00:54:31 GMT"),
                    date: Some(date),
                    ..Headers::default()
                },
                TTL,
                3600,
            ),
            // Expires without Date: counted from now.
            (
                Headers {
                    expires: Some("Tue, 25 Nov 2025 00:04:31 GMT"),
                    ..Headers::default()
                },
                TTL,
                600,
            ),
            // max-age wins over Expires.
            (
                Headers {
                    cache_control: Some("max-age=5"),
                    expires: Some("Tue, 25 Nov 2025 00:54:31 GMT"),
                    date: Some(date),
                },
                TTL,
                5,
            ),
            // An unreadable or past Expires: expired.
            (Headers { expires: Some("0"), ..Headers::default() }, TTL, 0),
            (
                Headers {
                    expires: Some("Thu, 01 Jan 1970 00:00:00 GMT"),
                    ..Headers::default()
                },
                TTL,
                0,
            ),
        ];
        for (i, (h, ttl, want)) in cases.iter().enumerate() {
            assert_eq!(lifetime(*h, NOW, *ttl), *want, "case {i}: {h:?}");
        }
        assert_eq!(failure_lifetime(TTL), 3600);
        assert_eq!(failure_lifetime(Ttl { min: 0, max: 60 }), 60);
    }

    #[test]
    fn stale_window() {
        assert!(stale_usable(NOW - 29 * 86_400, NOW));
        assert!(!stale_usable(NOW - 30 * 86_400, NOW));
        assert!(stale_usable(NOW + 5, NOW));
    }

    /// Against httpdate, an independent calendar: every day from 1970 to
    /// 2200 formats to the same date and parses back.
    #[test]
    fn rfc3339_matches_httpdate() {
        use std::time::{Duration, UNIX_EPOCH};
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
            "Oct", "Nov", "Dec",
        ];
        let mut secs = 0u64;
        while secs < 7_258_118_400 {
            let ours = rfc3339(secs);
            let theirs = httpdate::fmt_http_date(
                UNIX_EPOCH + Duration::from_secs(secs),
            );
            // "Thu, 01 Jan 1970 00:00:00 GMT" vs "1970-01-01T00:00:00Z"
            let p: Vec<&str> = theirs.split(' ').collect();
            let m = months.iter().position(|&m| m == p[2]).unwrap() + 1;
            let want = format!("{}-{m:02}-{}T{}Z", p[3], p[1], p[4]);
            assert_eq!(ours, want);
            assert_eq!(parse_rfc3339(&ours), Some(secs));
            secs += 86_400 + 3_607;
        }
        assert_eq!(parse_rfc3339("2025-11-24T23:54:31.250Z"), Some(NOW));
        assert_eq!(parse_rfc3339("2025-11-24T23:54:31+00:00"), Some(NOW));
        for bad in [
            "",
            "2025-11-24",
            "2025-13-01T00:00:00Z",
            "x025-11-24T23:54:31Z",
            "2025-11-24T23:54:31+01:00",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
