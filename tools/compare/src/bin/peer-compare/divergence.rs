//! The known divergences between google/robotstxt (which robofilter's
//! google dialect follows) and the robotstxt crate, as listed in
//! crates/robofilter/tests/differential.rs: each check says whether a
//! divergence can apply to a (robots.txt, URL) pair.

use robotstxt::DefaultMatcher;
use robotstxt::matcher::{
    LongestMatchRobotsMatchStrategy, RobotsMatchStrategy,
};
use robotstxt::parser::{
    ParseKeyType, ParsedRobotsKey, RobotsTxtParser, escape_pattern,
};

use compare::peers::guarded;

/// A check on a robots.txt body.
type Check = fn(&str) -> bool;

/// The divergences that depend on the file alone.
pub fn file_kinds(robots: &str) -> Vec<&'static str> {
    let checks: [(&str, Check); 7] = [
        ("bom", bom),
        ("escape-pattern", escape),
        ("untrimmed-no-colon", untrimmed_no_colon),
        ("nul-in-line", |r| r.contains('\0')),
        ("unicode-whitespace", |r| {
            r.chars().any(|c| !c.is_ascii() && c.is_whitespace())
        }),
        ("separator-lines", separator_lines),
        ("long-line", |r| {
            lines(r).any(|l| l.len() >= robofilter::MAX_LINE_LEN)
        }),
    ];
    checks.iter().filter(|(_, f)| f(robots)).map(|(n, _)| *n).collect()
}

/// The divergences that depend on the URL too.
pub fn url_kinds(robots: &str, url: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if star_matcher(robots, url) {
        out.push("star-matcher");
    }
    if !robotstxt::get_path_params_query(url).is_ascii() {
        out.push("non-ascii-path");
    }
    out
}

fn bom(robots: &str) -> bool {
    robots.starts_with(['\u{feff}', '\u{ef}', '\u{bb}', '\u{bf}'])
}

/// The lines of a body as the crate splits them (CR, LF, CRLF).
fn lines(robots: &str) -> impl Iterator<Item = &str> {
    robots.split(['\n', '\r'])
}

/// How the crate reads a line: `Some((key type, value))` if it has a key.
fn key_value(line: &str) -> Option<(ParseKeyType, &str)> {
    let (key, value, ok) =
        RobotsTxtParser::<DefaultMatcher<'_>>::parse_key_value(line);
    if !ok {
        return None;
    }
    let mut parsed = ParsedRobotsKey::default();
    parsed.parse(key);
    let kind = match parsed.get_type() {
        ParseKeyType::UserAgent => ParseKeyType::UserAgent,
        ParseKeyType::Allow => ParseKeyType::Allow,
        ParseKeyType::Disallow => ParseKeyType::Disallow,
        ParseKeyType::Sitemap => ParseKeyType::Sitemap,
        ParseKeyType::Unknown => ParseKeyType::Unknown,
    };
    Some((kind, value))
}

/// Every Allow/Disallow value, as the crate reads it.
fn rule_values(robots: &str) -> impl Iterator<Item = &str> {
    lines(robots)
        .filter_map(key_value)
        .filter(|(k, _)| {
            matches!(k, ParseKeyType::Allow | ParseKeyType::Disallow)
        })
        .map(|(_, v)| v)
}

/// The reference's pattern match on bytes (docs/SEMANTICS.md section 2).
fn reference_matches(path: &[u8], pattern: &[u8]) -> bool {
    let mut reach = vec![false; path.len() + 1];
    reach[0] = true;
    for (i, &c) in pattern.iter().enumerate() {
        if c == b'$' && i + 1 == pattern.len() {
            return reach[path.len()];
        }
        let mut next = vec![false; path.len() + 1];
        if c == b'*' {
            if let Some(first) = reach.iter().position(|&r| r) {
                next[first..].iter_mut().for_each(|n| *n = true);
            }
        } else {
            for p in 0..path.len() {
                next[p + 1] = reach[p] && path[p] == c;
            }
        }
        if !next.contains(&true) {
            return false;
        }
        reach = next;
    }
    true
}

fn star_matcher(robots: &str, url: &str) -> bool {
    let path = robotstxt::get_path_params_query(url);
    rule_values(robots).any(|value| {
        let pattern = escape_pattern(value);
        let mut patterns = vec![pattern.clone()];
        if let Some(slash) = pattern.rfind('/')
            && pattern[slash..].starts_with("/index.htm")
        {
            patterns.push(format!("{}$", &pattern[..=slash]));
        }
        patterns.iter().any(|p| {
            let got =
                guarded(|| LongestMatchRobotsMatchStrategy::matches(&path, p));
            got != Some(reference_matches(path.as_bytes(), p.as_bytes()))
        })
    })
}

/// docs/SEMANTICS.md section 2, line parsing step 6.
fn reference_escape(value: &[u8]) -> Vec<u8> {
    let hex = |b: u8| b.is_ascii_hexdigit();
    let mut out = Vec::new();
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b == b'%'
            && i + 2 < value.len()
            && hex(value[i + 1])
            && hex(value[i + 2])
        {
            out.push(b'%');
            out.push(value[i + 1].to_ascii_uppercase());
            out.push(value[i + 2].to_ascii_uppercase());
            i += 3;
        } else if b >= 0x80 {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
            i += 1;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

fn escape(robots: &str) -> bool {
    rule_values(robots).any(|v| {
        escape_pattern(v).as_bytes() != reference_escape(v.as_bytes())
    })
}

fn untrimmed_no_colon(robots: &str) -> bool {
    lines(robots).any(|line| {
        !line.contains(['#', ':'])
            && line.starts_with([' ', '\t'])
            && line.trim().contains([' ', '\t'])
    })
}

fn separator_lines(robots: &str) -> bool {
    let mut in_agents = false;
    let mut other_seen = false;
    for (kind, _) in lines(robots).filter_map(key_value) {
        match kind {
            ParseKeyType::UserAgent => {
                if other_seen {
                    return true;
                }
                in_agents = true;
            }
            ParseKeyType::Allow | ParseKeyType::Disallow => {
                in_agents = false;
                other_seen = false;
            }
            ParseKeyType::Sitemap | ParseKeyType::Unknown => {
                other_seen |= in_agents;
            }
        }
    }
    false
}
