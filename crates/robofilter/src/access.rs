//! Fetch outcomes and the policy RFC 9309 section 2.3.1 gives each: what a
//! crawler got for a host's robots.txt, and how that host's URLs are then
//! decided (docs/SEMANTICS.md section 4a).

use core::fmt;

use crate::wire;

/// What a crawler got when it fetched a host's robots.txt.
///
/// [`Fetch::policy`] applies RFC 9309 §2.3.1 (see docs/SEMANTICS.md §4a).
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Fetch {
    /// A response with this HTTP status, and its body (only used for 2xx).
    /// The crawler followed at most five redirects to get it.
    Http {
        /// The final HTTP status.
        status: u16,
        /// The body, exact bytes.
        body: Vec<u8>,
    },
    /// No response: DNS failure, connection refused or reset, timeout.
    Unreachable,
    /// More than five consecutive redirects.
    TooManyRedirects,
    /// What was given for the host could not be read when the bundle was
    /// built (an unreadable file, a broken manifest line): treated like an
    /// unreachable host, so its URLs are disallowed with a reason instead of
    /// silently becoming `unknown`.
    Unreadable,
}

/// How a host's URLs are decided, by [`Fetch::policy`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Policy {
    /// By the robots.txt body.
    Rules,
    /// Every URL is allowed: the robots.txt is unavailable.
    AllowAll,
    /// Every URL is disallowed: the host is unreachable.
    DisallowAll,
}

impl Fetch {
    /// The outcome of an HTTP fetch that followed `redirects` redirects:
    /// more than five makes it [`Fetch::TooManyRedirects`] whatever the
    /// status, and a status outside 100-599 (LinkedIn's 999, say) is not an
    /// HTTP response at all: [`Fetch::Unreachable`].
    pub fn http(status: u16, redirects: u32, body: Vec<u8>) -> Fetch {
        if redirects > 5 {
            Fetch::TooManyRedirects
        } else if !(100..=599).contains(&status) {
            Fetch::Unreachable
        } else {
            Fetch::Http { status, body }
        }
    }

    /// RFC 9309 §2.3.1:
    ///
    /// - 2xx: the body's rules;
    /// - 3xx (a redirect the crawler did not follow to its end) and more
    ///   than five redirects: unavailable, allow all;
    /// - 4xx except 429: unavailable, allow all;
    /// - 429, 5xx and no response: unreachable, disallow all;
    /// - 1xx (not a final response) and codes outside 100-599: treated as
    ///   unreachable, disallow all;
    /// - unreadable at build time: disallow all.
    pub fn policy(&self) -> Policy {
        match *self {
            Fetch::Http { status, .. } => match status {
                200..=299 => Policy::Rules,
                429 | 0..=199 | 600.. => Policy::DisallowAll,
                300..=499 => Policy::AllowAll,
                _ => Policy::DisallowAll,
            },
            Fetch::TooManyRedirects => Policy::AllowAll,
            Fetch::Unreachable | Fetch::Unreadable => Policy::DisallowAll,
        }
    }

    /// The status code a bundle stores for this outcome.
    #[cfg(feature = "compile")]
    pub(crate) fn status_code(&self) -> u32 {
        match *self {
            Fetch::Http { status, .. } if (100..=599).contains(&status) => {
                u32::from(status)
            }
            Fetch::Http { .. } | Fetch::Unreachable => {
                wire::STATUS_UNREACHABLE
            }
            Fetch::TooManyRedirects => wire::STATUS_REDIRECTS,
            Fetch::Unreadable => wire::STATUS_UNREADABLE,
        }
    }
}

/// The fetch outcome stored for a host.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum FetchStatus {
    /// The final HTTP status.
    Http(u16),
    /// The host could not be reached.
    Unreachable,
    /// More than five redirects.
    TooManyRedirects,
    /// What was given for the host could not be read when the bundle was
    /// built.
    Unreadable,
}

impl FetchStatus {
    /// Decodes a bundle's status code (`None`: not a valid code).
    pub(crate) fn from_code(code: u32) -> Option<FetchStatus> {
        match code {
            wire::STATUS_UNREACHABLE => Some(FetchStatus::Unreachable),
            wire::STATUS_REDIRECTS => Some(FetchStatus::TooManyRedirects),
            wire::STATUS_UNREADABLE => Some(FetchStatus::Unreadable),
            c => u16::try_from(c)
                .ok()
                .filter(|s| (100..=599).contains(s))
                .map(FetchStatus::Http),
        }
    }
}

impl fmt::Display for FetchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchStatus::Http(s) => write!(f, "HTTP {s}"),
            FetchStatus::Unreachable => f.write_str("unreachable"),
            FetchStatus::TooManyRedirects => {
                f.write_str("more than five redirects")
            }
            FetchStatus::Unreadable => {
                f.write_str("unreadable when the bundle was built")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_policies() {
        let p = |s| Fetch::http(s, 0, Vec::new()).policy();
        assert_eq!(p(200), Policy::Rules);
        assert_eq!(p(204), Policy::Rules);
        assert_eq!(p(301), Policy::AllowAll);
        assert_eq!(p(404), Policy::AllowAll);
        assert_eq!(p(401), Policy::AllowAll);
        assert_eq!(p(429), Policy::DisallowAll);
        assert_eq!(p(500), Policy::DisallowAll);
        assert_eq!(p(503), Policy::DisallowAll);
        assert_eq!(p(100), Policy::DisallowAll);
        assert_eq!(p(999), Policy::DisallowAll);
        assert_eq!(p(0), Policy::DisallowAll);
        assert_eq!(Fetch::http(999, 0, Vec::new()), Fetch::Unreachable);
        assert_eq!(Fetch::http(200, 5, Vec::new()).policy(), Policy::Rules);
        assert_eq!(Fetch::http(200, 6, Vec::new()).policy(), Policy::AllowAll);
        assert_eq!(Fetch::Unreachable.policy(), Policy::DisallowAll);
        assert_eq!(Fetch::Unreadable.policy(), Policy::DisallowAll);
        // A status built by hand outside 100-599 is also a failed fetch.
        let odd = Fetch::Http { status: 999, body: Vec::new() };
        assert_eq!(odd.policy(), Policy::DisallowAll);
    }

    #[cfg(feature = "compile")]
    #[test]
    fn status_codes_round_trip() {
        for (fetch, status) in [
            (Fetch::http(200, 0, Vec::new()), FetchStatus::Http(200)),
            (Fetch::http(999, 0, Vec::new()), FetchStatus::Unreachable),
            (Fetch::Unreachable, FetchStatus::Unreachable),
            (Fetch::TooManyRedirects, FetchStatus::TooManyRedirects),
            (Fetch::Unreadable, FetchStatus::Unreadable),
        ] {
            assert_eq!(
                FetchStatus::from_code(fetch.status_code()),
                Some(status)
            );
        }
        assert_eq!(FetchStatus::from_code(999), None);
    }
}
