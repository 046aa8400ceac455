//! Deterministic random robots.txt files and URLs, shared by the
//! engine's tests and the CLI's (which include this file by path).

#![allow(dead_code)]

// ---------------------------------------------------------------------------
// Deterministic randomness

/// SplitMix64: small, fast, and the same sequence on every platform.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `1 / n`.
    pub(crate) fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------
// Random inputs

/// Pattern pieces: the small alphabet plus escapes that the dialects treat
/// differently, and the index.html special.
#[rustfmt::skip]
const PATTERN_PIECES: &[&str] = &[
    "a", "a", "b", "b", "/", "/", "/", "*", "*", "$", "%", "%2A", "%24",
    "%61", "%7e", "index.html", "\u{e9}", "%c3%A9",
];

#[rustfmt::skip]
const URL_PIECES: &[&str] = &[
    "a", "a", "b", "b", "/", "/", "/", "*", "$", "%", "?", "%2A", "%24",
    "%61", "%7e", "%7E", "~", "index.html", "%C3%A9", "\u{e9}",
];

fn random_pattern(rng: &mut Rng) -> String {
    if rng.one_in(8) {
        return String::new();
    }
    let mut p = String::new();
    match rng.below(10) {
        0 => p.push('*'),
        1 => {}
        _ => p.push('/'),
    }
    for _ in 0..rng.below(6) {
        p.push_str(rng.pick(PATTERN_PIECES));
    }
    p
}

pub(crate) fn random_robots(rng: &mut Rng) -> Vec<u8> {
    const UA_KEYS: &[&str] =
        &["User-agent:", "user-agent:", "USER-AGENT :", "useragent:"];
    const UA_VALUES: &[&str] =
        &["FooBot", "BarBot", "*", "foobot", "FooBot/2.1", "* x", "Bar Bot"];
    const ALLOW_KEYS: &[&str] = &["Allow:", "allow:", "ALLOW :"];
    const DISALLOW_KEYS: &[&str] =
        &["Disallow:", "disallow:", "Disalow:", "dissallow:"];
    let eol = rng.pick(&["\n", "\n", "\n", "\r\n", "\r"]);
    let mut out = String::new();
    let line = |out: &mut String, text: &str| {
        out.push_str(text);
        out.push_str(eol);
    };
    if rng.one_in(6) {
        // A rule before any group: ignored.
        line(&mut out, &format!("Disallow: {}", random_pattern(rng)));
    }
    for _ in 0..1 + rng.below(4) {
        for _ in 0..1 + rng.below(2) {
            let key = rng.pick(UA_KEYS);
            let value = rng.pick(UA_VALUES);
            if rng.one_in(12) {
                // A missing colon: accepted for two-token lines only.
                line(&mut out, &format!("user-agent {value}"));
            } else {
                line(&mut out, &format!("{key} {value}"));
            }
            if rng.one_in(10) {
                line(&mut out, "Crawl-delay: 3");
            }
        }
        for _ in 0..rng.below(6) {
            let allow = rng.one_in(2);
            let key = if allow {
                rng.pick(ALLOW_KEYS)
            } else {
                rng.pick(DISALLOW_KEYS)
            };
            let pattern = random_pattern(rng);
            match rng.below(20) {
                // Missing colon.
                0 => {
                    let key = key.trim_end_matches(':').trim_end();
                    line(&mut out, &format!("{key} {pattern}"));
                }
                // Unknown key: ignored, and does not end the group.
                1 => line(&mut out, &format!("Disallowed-not {pattern}")),
                2 => line(&mut out, &format!("{key}{pattern} # note")),
                3 => line(&mut out, ""),
                4 => line(&mut out, "Sitemap: http://x/s.xml"),
                _ => line(&mut out, &format!("{key} {pattern}")),
            }
        }
        if rng.one_in(3) {
            line(&mut out, "");
        }
    }
    if rng.one_in(4) {
        // No final line terminator.
        out.truncate(out.len() - eol.len());
    }
    out.into_bytes()
}

pub(crate) fn random_url(rng: &mut Rng) -> Vec<u8> {
    let mut url = String::from("http://x");
    match rng.below(20) {
        0 => return url.into_bytes(),
        1 => url.push_str("/robots.txt"),
        2 => url.push_str("/robots.txt?a"),
        _ => {
            url.push('/');
            for _ in 0..rng.below(7) {
                url.push_str(rng.pick(URL_PIECES));
            }
        }
    }
    if rng.one_in(15) {
        url.push_str("#a");
    }
    url.into_bytes()
}
