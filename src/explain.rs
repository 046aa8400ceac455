//! `robofilter check` and `robofilter explain`: verdicts for URLs given on
//! the command line; and [`escape`], the one escaping of robots.txt text
//! in human and TSV output.

use std::borrow::Cow;
use std::io::Write;

use anyhow::{Result, anyhow};
use robofilter::{
    GroupSource, HostCache, MatchPath, Outcome, Target, UrlChecker,
};

use crate::args::{CheckArgs, ExplainArgs};
use crate::files::{self, Output};

/// Prints `VERDICT<TAB>URL` per URL: `allow` or `disallow`, and with a
/// bundle also `unknown` (no entry for the URL's host); with several
/// agents, one verdict column per agent.
pub fn check(args: CheckArgs) -> Result<()> {
    let dialect = args.dialect.map(Into::into);
    let open = files::Open::any().dialect(dialect);
    files::with_checker(&args.robots, &args.agent, open, |checker| {
        let mut cache = HostCache::new();
        let mut out = Output::new(None)?;
        let mut each = vec![Outcome::Invalid; args.agent.len()];
        for url in &args.urls {
            let url = files::os_bytes(url);
            let target = target(checker, &url, &mut cache, &args.robots)?;
            target.outcomes(&url, MatchPath::from_url(&url), &mut each);
            for verdict in &each {
                out.write_all(verdict.as_str().as_bytes())?;
                out.write_all(b"\t")?;
            }
            out.write_all(&url)?;
            out.write_all(b"\n")?;
        }
        out.finish()
    })
}

/// Prints `VERDICT<TAB>URL<TAB>REASON<TAB>GROUP` per URL, where GROUP says
/// whose group applied: `own group`, `* group` or `no group` (also when a
/// bundle decides by the host's fetch outcome or has no entry for it).
/// With several agents, one line per URL and agent, the agent in a fifth
/// column.
pub fn explain(args: ExplainArgs) -> Result<()> {
    let dialect = args.dialect.map(Into::into);
    let several = args.agent.len() > 1;
    let open = files::Open::any().dialect(dialect);
    files::with_checker(&args.file, &args.agent, open, |checker| {
        let mut cache = HostCache::new();
        let mut out = Output::new(None)?;
        let mut reason = Vec::new();
        for url in &args.urls {
            let url = files::os_bytes(url);
            let target = target(checker, &url, &mut cache, &args.file)?;
            for (agent, name) in args.agent.iter().enumerate() {
                reason.clear();
                let (verdict, group) = why(&mut reason, &url, target, agent);
                out.write_all(verdict.as_str().as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(&url)?;
                out.write_all(b"\t")?;
                out.write_all(escape(&reason).as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(group.as_bytes())?;
                if several {
                    out.write_all(b"\t")?;
                    out.write_all(name.as_bytes())?;
                }
                out.write_all(b"\n")?;
            }
        }
        out.finish()
    })
}

/// The outcome of `url` for agent number `agent` and whose group decided
/// it, with the reason written to `reason`.
fn why(
    reason: &mut Vec<u8>,
    url: &[u8],
    target: Target<'_, '_>,
    agent: usize,
) -> (Outcome, &'static str) {
    match target {
        Target::Rules(ms) => {
            let m = &ms[agent];
            let why = m.explain(url);
            robofilter::write_reason(reason, why.reason());
            let group = match m.source() {
                GroupSource::Specific => "own group",
                GroupSource::Global => "* group",
                GroupSource::None => "no group",
            };
            (Outcome::from(why.verdict()), group)
        }
        other => {
            robofilter::write_why(reason, url, Some(other), agent);
            (other.outcome(agent, url, MatchPath::from_url(url)), "no group")
        }
    }
}

/// What decides `url`: the rules file, or the bundle entry of its host.
fn target<'m, 'a>(
    checker: &'m UrlChecker<'a>,
    url: &[u8],
    cache: &mut HostCache<'m, 'a>,
    path: &std::path::Path,
) -> Result<Target<'m, 'a>> {
    checker
        .target(url, cache)
        .map_err(|e| anyhow!("bundle '{}', {e}", files::display(path)))
}

/// Text from a robots.txt (or a bundle's host names) made safe for a
/// terminal and for one TSV column: valid UTF-8 and printable ASCII stay
/// as they are; `\` becomes `\\`; TAB, LF and CR become `\t`, `\n`, `\r`;
/// other control characters (C0, DEL, C1) and bytes that are not UTF-8
/// become `\xNN` per byte. The result is unambiguous: the original bytes
/// can be recovered from it.
pub fn escape(text: &[u8]) -> Cow<'_, str> {
    if text.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'\\') {
        // Printable ASCII is UTF-8.
        return Cow::Borrowed(std::str::from_utf8(text).expect("ASCII"));
    }
    let mut out = String::with_capacity(text.len() + 8);
    let hex = |out: &mut String, b: u8| {
        use std::fmt::Write as _;
        write!(out, "\\x{b:02x}").expect("string");
    };
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        hex(&mut out, b);
                    }
                }
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            hex(&mut out, b);
        }
    }
    Cow::Owned(out)
}

/// Appends [`escape`]d `out[from..]` in place of `out[from..]`.
pub fn escape_tail(out: &mut Vec<u8>, from: usize) {
    if let Cow::Owned(e) = escape(&out[from..]) {
        out.truncate(from);
        out.extend_from_slice(e.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_text_and_escapes_controls_tab_backslash_and_bad_bytes() {
        let cases: &[(&[u8], &str)] = &[
            (b"/a/b?c=d", "/a/b?c=d"),
            (b"", ""),
            (b"/\xe3\x83\x84", "/\u{30c4}"),
            (b"/a\tb", "/a\\tb"),
            (b"/a\x1b[31mred", "/a\\x1b[31mred"),
            (b"/a\\tb", "/a\\\\tb"),
            (b"\r\n\x00\x7f", "\\r\\n\\x00\\x7f"),
            (b"/\xc2\x9b2J", "/\\xc2\\x9b2J"),
            (b"/\xff\xe3\x83", "/\\xff\\xe3\\x83"),
        ];
        for (text, want) in cases {
            assert_eq!(escape(text), *want, "{:?}", text.escape_ascii());
        }
        let mut out = b"head\t".to_vec();
        out.extend_from_slice(b"a\tb");
        escape_tail(&mut out, 5);
        assert_eq!(out, b"head\ta\\tb");
    }

    /// The output never holds a raw control character (TAB included).
    #[test]
    fn escape_output_has_no_control_bytes() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            for _ in 0..(state % 24) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(state as u8);
            }
            state = state.wrapping_add(1);
            let e = escape(&text);
            assert!(
                !e.chars().any(char::is_control),
                "{:?} -> {e:?}",
                text.escape_ascii()
            );
        }
    }
}
