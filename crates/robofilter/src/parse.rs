//! The robots.txt parser: bytes in, groups, records and diagnostics out.
//!
//! Parsing never fails and is linear in the input. It follows google/robotstxt
//! line by line (see the crate's [semantics](crate#semantics) section), and
//! reports, as [`Diagnostic`]s, everything a strict RFC 9309 reader would not
//! have accepted: byte-order marks, missing colons, key typos, unknown keys,
//! rules outside any group, over-long lines and the rfc9309 parse limit.
//!
//! Groups are formed exactly as the reference's matcher forms them: consecutive
//! `user-agent` lines open a group, Allow/Disallow lines (even empty ones) close
//! the run of `user-agent` lines, and nothing else (blank lines, sitemaps,
//! unknown lines) ends a group.

use core::fmt;

use crate::dialect::Dialect;
use crate::normalize;
use crate::verdict::{GroupSource, RuleKind};

/// Longest line google/robotstxt keeps: `8 * 2083 - 1` octets. The rest of
/// the line is discarded.
pub const MAX_LINE_LEN: usize = 8 * 2083 - 1;

/// The RFC 9309 §2.5 parse limit, 500 KiB. The rfc9309 dialect parses at
/// most this many octets unless configured higher (never lower).
pub const RFC9309_PARSE_LIMIT: usize = 500 * 1024;

/// A parsed robots.txt file.
///
/// # Example
///
/// ```
/// use robofilter::{Dialect, RobotsTxt};
///
/// let robots = RobotsTxt::parse(
///     b"User-agent: *\nDisallow: /private\nSitemap: https://x/s.xml\n",
///     Dialect::Rfc9309,
/// );
/// assert_eq!(robots.groups().len(), 1);
/// assert_eq!(robots.groups()[0].rules()[0].pattern(), b"/private");
/// assert_eq!(robots.sitemaps()[0].url(), b"https://x/s.xml");
/// ```
#[derive(Clone, Debug)]
pub struct RobotsTxt {
    dialect: Dialect,
    groups: Vec<Group>,
    sitemaps: Vec<Sitemap>,
    crawl_delays: Vec<CrawlDelay>,
    other_lines: Vec<OtherLine>,
    diagnostics: Vec<Diagnostic>,
    line_len: u32,
}

/// A group: a run of `user-agent` lines and the rules that follow them.
#[derive(Clone, Debug)]
pub struct Group {
    agents: Vec<UserAgent>,
    rules: Vec<Rule>,
}

/// One `user-agent` line of a group.
#[derive(Clone, Debug)]
pub struct UserAgent {
    line: u32,
    value: Vec<u8>,
    global: bool,
    token: Vec<u8>,
}

/// One Allow or Disallow line.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub struct Rule {
    line: u32,
    kind: RuleKind,
    value: Vec<u8>,
    pattern: Vec<u8>,
}

/// A `sitemap` line.
#[derive(Clone, Debug)]
pub struct Sitemap {
    line: u32,
    url: Vec<u8>,
}

/// A `crawl-delay` line (not used for verdicts; reported and stored).
#[derive(Clone, Debug)]
pub struct CrawlDelay {
    line: u32,
    group: Option<usize>,
    value: Vec<u8>,
}

/// A `key: value` line that is not a user-agent, Allow, Disallow, Sitemap
/// or Crawl-delay line (Content-Signal, Clean-param, Host, Request-rate,
/// Visit-time, an unknown key, ...): not used for verdicts, kept as written
/// for `inspect`.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct OtherLine {
    line: u32,
    group: Option<usize>,
    key: Vec<u8>,
    value: Vec<u8>,
}

/// Something the parser accepted leniently or ignored, with its line.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Diagnostic {
    line: u32,
    kind: DiagnosticKind,
}

/// What a [`Diagnostic`] is about.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A (possibly partial) UTF-8 byte-order mark at the start was skipped.
    ByteOrderMark,
    /// A line had no colon; the whitespace between its two tokens was taken
    /// as the separator.
    MissingColon,
    /// A key was accepted as another key (a typo or a longer word with the
    /// key as prefix, such as `useragent` or `disallowed`).
    AcceptedKey {
        /// The key as written.
        written: String,
        /// The key it was read as.
        read_as: &'static str,
    },
    /// A key robofilter does not know; the line was ignored.
    UnknownKey(String),
    /// A record that is parsed and ignored (crawl-delay, host, clean-param,
    /// ...). Crawl-delay values are kept.
    UnusedRecord(String),
    /// A line without a key/value separator (or with more than two tokens and
    /// no colon) was ignored.
    InvalidLine,
    /// An Allow/Disallow line before any `user-agent` line was ignored.
    RuleOutsideGroup,
    /// A line longer than [`MAX_LINE_LEN`] was cut to that length.
    LineTruncated {
        /// The line's full length in octets.
        len: usize,
    },
    /// A NUL octet ended the line early.
    NulInLine,
    /// The rfc9309 parse limit was reached; the rest of the file (and the
    /// line it cut) was not parsed.
    ParseLimit {
        /// The limit in octets.
        limit: usize,
        /// The file's size in octets.
        size: usize,
    },
}

impl RobotsTxt {
    /// Parses a robots.txt body with the dialect's default settings (for
    /// rfc9309, the 500 KiB parse limit).
    pub fn parse(body: &[u8], dialect: Dialect) -> RobotsTxt {
        let limit = match dialect {
            Dialect::Google => None,
            Dialect::Rfc9309 => Some(RFC9309_PARSE_LIMIT),
        };
        RobotsTxt::parse_with_limit(body, dialect, limit)
    }

    /// Parses a robots.txt body, reading at most `limit` octets (`None`: no
    /// limit). A line cut by the limit is dropped.
    pub fn parse_with_limit(
        body: &[u8],
        dialect: Dialect,
        limit: Option<usize>,
    ) -> RobotsTxt {
        let mut p = Parser {
            out: RobotsTxt {
                dialect,
                groups: Vec::new(),
                sitemaps: Vec::new(),
                crawl_delays: Vec::new(),
                other_lines: Vec::new(),
                diagnostics: Vec::new(),
                line_len: 0,
            },
            saw_rule: false,
        };
        let mut body = body;
        let mut cut = None;
        if let Some(limit) = limit.filter(|&l| body.len() > l) {
            cut = Some(Diagnostic {
                line: 0,
                kind: DiagnosticKind::ParseLimit { limit, size: body.len() },
            });
            let complete = matches!(body[limit], b'\n' | b'\r');
            body = &body[..limit];
            if !complete {
                let end = body
                    .iter()
                    .rposition(|&b| b == b'\n' || b == b'\r')
                    .map_or(0, |i| i + 1);
                body = &body[..end];
            }
        }
        let bom = body.iter().zip(b"\xEF\xBB\xBF").take_while(|(a, b)| a == b);
        let bom_len = bom.count();
        if bom_len > 0 {
            p.diag(1, DiagnosticKind::ByteOrderMark);
        }
        let mut line_num = 0u32;
        let mut start = bom_len;
        let mut last_was_cr = false;
        let mut i = bom_len;
        while i < body.len() {
            let b = body[i];
            if b == b'\n' || b == b'\r' {
                let crlf_tail = i == start && last_was_cr && b == b'\n';
                if !crlf_tail {
                    line_num += 1;
                    p.line(line_num, &body[start..i]);
                }
                last_was_cr = b == b'\r';
                start = i + 1;
            }
            i += 1;
        }
        line_num += 1;
        p.line(line_num, &body[start..]);
        if let Some(mut d) = cut {
            d.line = line_num;
            p.out.diagnostics.push(d);
        }
        p.out.line_len = line_num;
        p.out
    }

    /// The dialect this file was parsed with.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The groups, in file order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The sitemap lines, in file order.
    pub fn sitemaps(&self) -> &[Sitemap] {
        &self.sitemaps
    }

    /// The crawl-delay lines, in file order.
    pub fn crawl_delays(&self) -> &[CrawlDelay] {
        &self.crawl_delays
    }

    /// The other `key: value` lines ([`OtherLine`]), in file order.
    pub fn other_lines(&self) -> &[OtherLine] {
        &self.other_lines
    }

    /// Everything the parser accepted leniently or ignored, in line order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The number of lines, counted as google/robotstxt counts them (a
    /// trailing line terminator starts one more, empty, line).
    pub fn line_len(&self) -> u32 {
        self.line_len
    }

    /// The distinct product tokens named by `user-agent` lines, lower-cased
    /// and sorted (`*` lines are not included).
    pub fn agent_tokens(&self) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = self
            .groups
            .iter()
            .flat_map(|g| g.agents.iter())
            .filter(|a| !a.global)
            .map(|a| a.token.to_ascii_lowercase())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The merged group that applies to a crawler calling itself by any of
    /// `agents` (usually one product token).
    ///
    /// Every group naming one of the agents (case-insensitively, whole
    /// token) is merged; if there is none, every `*` group is; if there is
    /// none of those either, no rule applies.
    pub fn select<A: AsRef<[u8]>>(&self, agents: &[A]) -> Selection<'_> {
        let names = |g: &Group| {
            g.agents.iter().any(|ua| {
                !ua.global
                    && agents
                        .iter()
                        .any(|a| a.as_ref().eq_ignore_ascii_case(&ua.token))
            })
        };
        let (source, chosen): (_, Vec<&Group>) =
            if self.groups.iter().any(names) {
                (
                    GroupSource::Specific,
                    self.groups.iter().filter(|g| names(g)).collect(),
                )
            } else if self.groups.iter().any(Group::is_global) {
                (
                    GroupSource::Global,
                    self.groups.iter().filter(|g| g.is_global()).collect(),
                )
            } else {
                (GroupSource::None, Vec::new())
            };
        let rules = chosen.iter().flat_map(|g| g.rules.iter()).collect();
        Selection { source, rules }
    }
}

/// The merged rules that apply to one crawler, in file order.
#[derive(Clone, Debug)]
pub struct Selection<'a> {
    source: GroupSource,
    rules: Vec<&'a Rule>,
}

impl<'a> Selection<'a> {
    /// Where the rules come from.
    pub fn source(&self) -> GroupSource {
        self.source
    }

    /// The rules, in file order (empty patterns included).
    pub fn rules(&self) -> &[&'a Rule] {
        &self.rules
    }
}

impl Group {
    /// The group's `user-agent` lines.
    pub fn agents(&self) -> &[UserAgent] {
        &self.agents
    }

    /// The group's Allow/Disallow lines, empty ones included.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether one of the group's `user-agent` lines is `*`.
    pub fn is_global(&self) -> bool {
        self.agents.iter().any(|a| a.global)
    }
}

impl UserAgent {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The value as written (trimmed).
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// Whether this is the global agent: `*`, or `*` followed by
    /// whitespace.
    pub fn is_global(&self) -> bool {
        self.global
    }

    /// The product token: the longest prefix of the value made of
    /// `[A-Za-z_-]` (empty for `*` lines).
    pub fn token(&self) -> &[u8] {
        &self.token
    }
}

impl Rule {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Allow or disallow.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    /// The value as written (comment removed, trimmed).
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The normalised pattern that is matched; its length is the rule's
    /// precedence. Empty means "no rule".
    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }
}

impl Sitemap {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The URL as written (comment removed, trimmed, never escaped).
    pub fn url(&self) -> &[u8] {
        &self.url
    }
}

impl CrawlDelay {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The index into [`RobotsTxt::groups`] of the group the line is in.
    pub fn group(&self) -> Option<usize> {
        self.group
    }

    /// The value as written.
    pub fn value(&self) -> &[u8] {
        &self.value
    }
}

impl OtherLine {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The index into [`RobotsTxt::groups`] of the group the line is in
    /// (the last group opened before it), `None` before any group.
    pub fn group(&self) -> Option<usize> {
        self.group
    }

    /// The key as written (trimmed; its case kept).
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The value as written (comment removed, trimmed).
    pub fn value(&self) -> &[u8] {
        &self.value
    }
}

impl Diagnostic {
    /// The line number (0: the file as a whole).
    pub fn line(&self) -> u32 {
        self.line
    }

    /// What happened.
    pub fn kind(&self) -> &DiagnosticKind {
        &self.kind
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.kind)
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DiagnosticKind::*;
        match self {
            ByteOrderMark => write!(f, "byte-order mark skipped"),
            MissingColon => {
                write!(f, "no colon; whitespace taken as separator")
            }
            AcceptedKey { written, read_as } => {
                write!(f, "key '{written}' accepted as '{read_as}'")
            }
            UnknownKey(k) => write!(f, "unknown key '{k}' ignored"),
            UnusedRecord(k) => write!(f, "'{k}' record ignored for matching"),
            InvalidLine => write!(f, "no key/value separator; line ignored"),
            RuleOutsideGroup => {
                write!(f, "rule before any user-agent line ignored")
            }
            LineTruncated { len } => {
                write!(f, "line of {len} octets cut to {MAX_LINE_LEN} octets")
            }
            NulInLine => write!(f, "NUL octet ends the line"),
            ParseLimit { limit, size } => write!(
                f,
                "parse limit reached: only the first {limit} of {size} \
                 octets were parsed (RFC 9309 §2.5)"
            ),
        }
    }
}

/// Records that are not used for matching but are well known; they are
/// reported as unused rather than unknown.
const UNUSED_RECORDS: &[&str] = &[
    "clean-param",
    "content-signal",
    "domain",
    "host",
    "noarchive",
    "nofollow",
    "noindex",
    "request-rate",
    "revisit-after",
    "visit-time",
];

#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    Unknown,
}

/// Classifies a key by case-insensitive prefix, as google/robotstxt does.
fn classify(key: &[u8]) -> (Key, &'static str) {
    let starts = |p: &str| {
        key.len() >= p.len()
            && key[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    };
    if ["user-agent", "useragent", "user agent"].iter().any(|p| starts(p)) {
        (Key::UserAgent, "user-agent")
    } else if starts("allow") {
        (Key::Allow, "allow")
    } else if [
        "disallow",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
    ]
    .iter()
    .any(|p| starts(p))
    {
        (Key::Disallow, "disallow")
    } else if starts("sitemap") || starts("site-map") {
        (Key::Sitemap, "sitemap")
    } else {
        (Key::Unknown, "")
    }
}

/// ASCII whitespace as C's `isspace` sees it.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

struct Parser {
    out: RobotsTxt,
    saw_rule: bool,
}

impl Parser {
    fn diag(&mut self, line: u32, kind: DiagnosticKind) {
        self.out.diagnostics.push(Diagnostic { line, kind });
    }

    fn line(&mut self, num: u32, raw: &[u8]) {
        let mut line = raw;
        if line.len() > MAX_LINE_LEN {
            self.diag(num, DiagnosticKind::LineTruncated { len: line.len() });
            line = &line[..MAX_LINE_LEN];
        }
        if let Some(nul) = line.iter().position(|&b| b == 0) {
            self.diag(num, DiagnosticKind::NulInLine);
            line = &line[..nul];
        }
        if let Some(hash) = line.iter().position(|&b| b == b'#') {
            line = &line[..hash];
        }
        let line = trim(line);
        if line.is_empty() {
            return;
        }
        let (key, value) =
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                (trim(&line[..colon]), trim(&line[colon + 1..]))
            } else {
                // google/robotstxt accepts whitespace for a forgotten colon, but
                // only if the line has exactly two tokens.
                let is_sep = |b: &u8| *b == b' ' || *b == b'\t';
                let Some(ws) = line.iter().position(is_sep) else {
                    self.diag(num, DiagnosticKind::InvalidLine);
                    return;
                };
                let value = trim(&line[ws..]);
                if value.iter().any(is_sep) {
                    self.diag(num, DiagnosticKind::InvalidLine);
                    return;
                }
                self.diag(num, DiagnosticKind::MissingColon);
                (trim(&line[..ws]), value)
            };
        if key.is_empty() {
            self.diag(num, DiagnosticKind::InvalidLine);
            return;
        }
        let (kind, canonical) = classify(key);
        if kind != Key::Unknown
            && !key.eq_ignore_ascii_case(canonical.as_bytes())
        {
            self.diag(
                num,
                DiagnosticKind::AcceptedKey {
                    written: String::from_utf8_lossy(key).into_owned(),
                    read_as: canonical,
                },
            );
        }
        match kind {
            Key::UserAgent => self.user_agent(num, value),
            Key::Allow => self.rule(num, RuleKind::Allow, value),
            Key::Disallow => self.rule(num, RuleKind::Disallow, value),
            Key::Sitemap => self
                .out
                .sitemaps
                .push(Sitemap { line: num, url: value.to_vec() }),
            Key::Unknown => self.unknown(num, key, value),
        }
    }

    fn user_agent(&mut self, num: u32, value: &[u8]) {
        if self.out.groups.is_empty() || self.saw_rule {
            self.out
                .groups
                .push(Group { agents: Vec::new(), rules: Vec::new() });
            self.saw_rule = false;
        }
        let global = value.first() == Some(&b'*')
            && value.get(1).is_none_or(|&b| is_space(b));
        let token = if global {
            Vec::new()
        } else {
            let n = value
                .iter()
                .take_while(|&&b| {
                    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
                })
                .count();
            value[..n].to_vec()
        };
        let group = self.out.groups.last_mut().expect("pushed above");
        group.agents.push(UserAgent {
            line: num,
            value: value.to_vec(),
            global,
            token,
        });
    }

    fn rule(&mut self, num: u32, kind: RuleKind, value: &[u8]) {
        let Some(group) = self.out.groups.last_mut() else {
            self.diag(num, DiagnosticKind::RuleOutsideGroup);
            return;
        };
        self.saw_rule = true;
        let pattern = normalize::pattern(value, self.out.dialect);
        group.rules.push(Rule {
            line: num,
            kind,
            value: value.to_vec(),
            pattern,
        });
    }

    fn unknown(&mut self, num: u32, key: &[u8], value: &[u8]) {
        let key_str = String::from_utf8_lossy(key).into_owned();
        let group = self.out.groups.len().checked_sub(1);
        if key.eq_ignore_ascii_case(b"content-usage") {
            // A group rule (draft-ietf-aipref-attach adds it to RFC 9309's
            // `rule`): kept for the usage rules, never a verdict. In the
            // rfc9309 dialect it ends the group's user-agent lines as
            // Allow and Disallow do; google/robotstxt does not know the
            // key, so the google dialect groups as if it were not there
            // (docs/SEMANTICS.md section 4c).
            match group {
                None => self.diag(num, DiagnosticKind::RuleOutsideGroup),
                Some(_) if self.out.dialect == Dialect::Rfc9309 => {
                    self.saw_rule = true;
                }
                Some(_) => {}
            }
            self.out.other_lines.push(OtherLine {
                line: num,
                group,
                key: key.to_vec(),
                value: value.to_vec(),
            });
            return;
        }
        if key.eq_ignore_ascii_case(b"crawl-delay") {
            self.out.crawl_delays.push(CrawlDelay {
                line: num,
                group,
                value: value.to_vec(),
            });
            self.diag(num, DiagnosticKind::UnusedRecord(key_str));
            return;
        }
        self.out.other_lines.push(OtherLine {
            line: num,
            group,
            key: key.to_vec(),
            value: value.to_vec(),
        });
        if UNUSED_RECORDS
            .iter()
            .any(|r| key.eq_ignore_ascii_case(r.as_bytes()))
        {
            self.diag(num, DiagnosticKind::UnusedRecord(key_str));
        } else {
            self.diag(num, DiagnosticKind::UnknownKey(key_str));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &[u8]) -> RobotsTxt {
        RobotsTxt::parse(s, Dialect::Google)
    }

    #[test]
    fn line_counting() {
        // CR, LF and CRLF are one break each; LF CR and CR CR LF are two.
        assert_eq!(parse(b"a\nb\rc\r\nd").line_len(), 4);
        assert_eq!(parse(b"a\n\rb").line_len(), 3);
        assert_eq!(parse(b"a\r\r\nb").line_len(), 3);
        assert_eq!(parse(b"a\n").line_len(), 2);
        assert_eq!(parse(b"").line_len(), 1);
    }

    #[test]
    fn groups_and_rules() {
        let r = parse(
            b"allow: /x\nuser-agent: a\nuser-agent: *\ndisallow: /p\n\
              sitemap: s\nallow:\nuser-agent: b\n",
        );
        assert_eq!(r.groups().len(), 2);
        let g = &r.groups()[0];
        assert!(g.is_global());
        assert_eq!(g.rules().len(), 2);
        assert_eq!(g.rules()[0].line(), 4);
        assert_eq!(
            r.diagnostics()[0].kind(),
            &DiagnosticKind::RuleOutsideGroup
        );
        assert_eq!(r.sitemaps()[0].line(), 5);
        assert_eq!(r.agent_tokens(), vec![b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn missing_colon_and_typos() {
        let r = parse(b"useragent FooBot\ndisalow /a\ndisallow /a /b\n");
        assert_eq!(r.groups()[0].agents()[0].token(), b"FooBot");
        assert_eq!(r.groups()[0].rules().len(), 1);
        let kinds: Vec<_> =
            r.diagnostics().iter().map(|d| d.kind().clone()).collect();
        assert!(kinds.contains(&DiagnosticKind::MissingColon));
        assert!(kinds.contains(&DiagnosticKind::InvalidLine));
    }

    #[test]
    fn parse_limit_drops_cut_line() {
        let mut body = b"user-agent: *\n".to_vec();
        body.extend(std::iter::repeat_n(
            b'#',
            RFC9309_PARSE_LIMIT - body.len() - 3,
        ));
        body.extend_from_slice(b"\ndisallow: /\n");
        let r = RobotsTxt::parse(&body, Dialect::Rfc9309);
        assert!(r.groups()[0].rules().is_empty());
        assert!(matches!(
            r.diagnostics().last().unwrap().kind(),
            DiagnosticKind::ParseLimit { .. }
        ));
        let g = RobotsTxt::parse(&body, Dialect::Google);
        assert_eq!(g.groups()[0].rules().len(), 1);
    }

    #[test]
    fn other_lines_keep_key_value_group_and_line() {
        let r = parse(
            b"Host: a.example\nuser-agent: *\ncontent-signal: search=yes \
              # c\ncrawl-delay: 5\nallow: /\nX-Thing:\nsitemap: s\n\
              Clean-param  ref\nnokey\n",
        );
        let got: Vec<_> = r
            .other_lines()
            .iter()
            .map(|o| (o.line(), o.group(), o.key(), o.value()))
            .collect();
        type Row<'a> = (u32, Option<usize>, &'a [u8], &'a [u8]);
        let want: Vec<Row<'_>> = vec![
            (1, None, b"Host", b"a.example"),
            (3, Some(0), b"content-signal", b"search=yes"),
            (6, Some(0), b"X-Thing", b""),
            (8, Some(0), b"Clean-param", b"ref"),
        ];
        assert_eq!(got, want);
        assert_eq!(r.crawl_delays().len(), 1);
    }

    #[test]
    fn select_specific_global_none() {
        let r = parse(b"user-agent: *\ndisallow: /\nuser-agent: FooBot\n");
        assert_eq!(r.select(&["foobot"]).source(), GroupSource::Specific);
        assert!(r.select(&["foobot"]).rules().is_empty());
        assert_eq!(r.select(&["other"]).source(), GroupSource::Global);
        let r = parse(b"user-agent: FooBot\ndisallow: /\n");
        assert_eq!(r.select(&["other"]).source(), GroupSource::None);
    }
}
