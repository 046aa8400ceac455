//! A deliberately naive verdict oracle, written only from
//! `docs/SEMANTICS.md` (sections 2, 4 and 7) and independent of `src/`.
//!
//! It re-parses the robots.txt body for every query and matches each rule
//! with the position-set algorithm of section 2: straight-line code, no
//! automata, no precomputation. Being slow and obvious is the point: the
//! compiled automata are checked against it, so it must be easy to check
//! against the text by eye. Step numbers in comments refer to section 2.

/// Which rule set to apply.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleDialect {
    /// google/robotstxt, byte for byte (section 2).
    Google,
    /// RFC 9309: section 2 plus the differences listed in section 4.
    Rfc9309,
}

/// Maximum bytes kept per line (8 * 2083 - 1); the rest is discarded.
const MAX_LINE_LEN: usize = 16663;

/// rfc9309 parse limit: only this many body bytes are parsed.
const RFC_PARSE_LIMIT: usize = 512_000;

/// The verdict for `url` when the caller is `agents`.
///
/// `agents` usually holds one product token. Several tokens reproduce
/// Google's multi-agent API: the groups naming any of them are merged into
/// one group, as if they named a single agent.
#[allow(dead_code)]
pub fn oracle_allowed(
    robots: &[u8],
    agents: &[&str],
    url: &[u8],
    dialect: OracleDialect,
) -> bool {
    let rfc = dialect == OracleDialect::Rfc9309;

    let raw_path = extract_path(url);
    let path =
        if rfc { normalize_rfc_url(&raw_path) } else { raw_path.clone() };

    // Section 4, item 3.
    if rfc {
        let before_query = match raw_path.iter().position(|&b| b == b'?') {
            Some(i) => &raw_path[..i],
            None => &raw_path[..],
        };
        if normalize_rfc(before_query) == b"/robots.txt" {
            return true;
        }
    }

    // Section 4, item 4: only the first RFC_PARSE_LIMIT bytes are parsed,
    // and the line the limit cuts through is dropped (robofilter's reading:
    // a line cut exactly before its terminator is not cut).
    let mut body = robots;
    let mut truncated = false;
    if rfc && body.len() > RFC_PARSE_LIMIT {
        // A line whose terminator is the first octet past the limit was
        // read whole, so it is kept.
        truncated = !matches!(body[RFC_PARSE_LIMIT], b'\n' | b'\r');
        body = &body[..RFC_PARSE_LIMIT];
    }

    let mut in_global = false;
    let mut in_specific = false;
    let mut ever_specific = false;
    let mut saw_rule = false;
    let mut allow_global: i64 = -1;
    let mut allow_specific: i64 = -1;
    let mut disallow_global: i64 = -1;
    let mut disallow_specific: i64 = -1;

    for line in split_lines(body, truncated) {
        let Some((key, value)) = split_key_value(&line) else {
            continue;
        };
        match classify_key(&key) {
            Key::UserAgent => {
                if saw_rule {
                    in_global = false;
                    in_specific = false;
                    saw_rule = false;
                }
                let starred = value.first() == Some(&b'*')
                    && (value.len() == 1 || is_ascii_space(value[1]));
                if starred {
                    in_global = true;
                } else {
                    let token = product_token(&value);
                    for agent in agents {
                        if token.eq_ignore_ascii_case(agent.as_bytes()) {
                            in_specific = true;
                            ever_specific = true;
                        }
                    }
                }
            }
            kind @ (Key::Allow | Key::Disallow) => {
                if !in_global && !in_specific {
                    continue;
                }
                saw_rule = true;
                let pattern = if rfc {
                    normalize_rfc(&value)
                } else {
                    normalize_google(&value)
                };
                let mut score = None;
                if matches(&pattern, &path, rfc) {
                    score = Some(pattern.len() as i64);
                } else if kind == Key::Allow {
                    let retry = index_htm_pattern(&pattern)
                        .filter(|derived| matches(derived, &path, rfc));
                    score = retry.map(|derived| derived.len() as i64);
                }
                if let Some(score) = score {
                    let bucket = match (kind == Key::Allow, in_specific) {
                        (true, true) => &mut allow_specific,
                        (true, false) => &mut allow_global,
                        (false, true) => &mut disallow_specific,
                        (false, false) => &mut disallow_global,
                    };
                    if score > *bucket {
                        *bucket = score;
                    }
                }
            }
            Key::Sitemap | Key::Unknown => {}
        }
    }

    // Verdict. Ties go to allow; score 0 counts as "no rule".
    if allow_specific > 0 || disallow_specific > 0 {
        return disallow_specific <= allow_specific;
    }
    if ever_specific {
        return true;
    }
    if allow_global > 0 || disallow_global > 0 {
        return disallow_global <= allow_global;
    }
    true
}

/// The index.htm retry for an Allow pattern that did not match: when the
/// part from its last `/` starts with `/index.htm`, the pattern is tried
/// again as `<everything up to and including that last />$`.
fn index_htm_pattern(pattern: &[u8]) -> Option<Vec<u8>> {
    let slash = pattern.iter().rposition(|&b| b == b'/')?;
    if !pattern[slash..].starts_with(b"/index.htm") {
        return None;
    }
    let mut derived = pattern[..=slash].to_vec();
    derived.push(b'$');
    Some(derived)
}

/// Path extraction (`GetPathParamsQuery`), steps 1 to 5.
pub(crate) fn extract_path(url: &[u8]) -> Vec<u8> {
    let find_from = |start: usize, pred: &dyn Fn(u8) -> bool| {
        (start..url.len()).find(|&i| pred(url[i]))
    };
    let is_path_start = |b: u8| b == b'/' || b == b'?' || b == b';';

    // Step 1.
    let mut start = 0;
    if url.starts_with(b"//") {
        start = 2;
    }
    // Step 2.
    let first_sep = find_from(start, &is_path_start).unwrap_or(url.len());
    let scheme = (start..url.len())
        .find(|&i| url[i..].starts_with(b"://"))
        .filter(|&colon| colon < first_sep);
    if let Some(colon) = scheme {
        start = colon + 3;
    }
    // Step 3.
    let Some(path_start) = find_from(start, &is_path_start) else {
        return b"/".to_vec();
    };
    // Step 4.
    let mut end = url.len();
    if let Some(hash) = url.iter().position(|&b| b == b'#') {
        if hash < path_start {
            return b"/".to_vec();
        }
        end = hash;
    }
    // Step 5.
    let mut path = Vec::new();
    if url[path_start] == b'?' || url[path_start] == b';' {
        path.push(b'/');
    }
    path.extend_from_slice(&url[path_start..end]);
    path
}

/// Tokenising steps 1 to 3: BOM skip, CR/LF/CRLF lines, line cap. When
/// `truncated`, the final unterminated line was cut by the parse limit and
/// is dropped.
fn split_lines(body: &[u8], truncated: bool) -> Vec<Vec<u8>> {
    const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
    let mut i = 0;
    while i < 3 && i < body.len() && body[i] == BOM[i] {
        i += 1;
    }
    let mut lines = Vec::new();
    let mut current = Vec::new();
    let mut last_was_cr = false;
    for &b in &body[i..] {
        if b == b'\n' && last_was_cr {
            // The LF of a CRLF pair.
            last_was_cr = false;
            continue;
        }
        if b == b'\n' || b == b'\r' {
            lines.push(std::mem::take(&mut current));
            last_was_cr = b == b'\r';
            continue;
        }
        last_was_cr = false;
        if current.len() < MAX_LINE_LEN {
            current.push(b);
        }
    }
    if !truncated {
        lines.push(current);
    }
    lines
}

/// `" \t\n\v\f\r"`.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_ascii_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_ascii_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// Line parsing steps 1 to 4. `None` means the line is skipped.
fn split_key_value(line: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    // Step 1.
    let cut = line.iter().position(|&b| b == b'#' || b == 0);
    let line = match cut {
        Some(i) => &line[..i],
        None => line,
    };
    // Step 2.
    let line = trim(line);
    if line.is_empty() {
        return None;
    }
    // Step 3.
    let (key, value) = match line.iter().position(|&b| b == b':') {
        Some(colon) => (&line[..colon], &line[colon + 1..]),
        None => {
            let is_blank = |b: &u8| *b == b' ' || *b == b'\t';
            let run_start = line.iter().position(is_blank)?;
            let mut run_end = run_start;
            while run_end < line.len() && is_blank(&line[run_end]) {
                run_end += 1;
            }
            if line[run_end..].iter().any(is_blank) {
                return None;
            }
            (&line[..run_start], &line[run_end..])
        }
    };
    // Step 4.
    let key = trim(key);
    if key.is_empty() {
        return None;
    }
    Some((key.to_vec(), trim(value).to_vec()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    Unknown,
}

/// Line parsing step 5: case-insensitive prefix, in this order.
fn classify_key(key: &[u8]) -> Key {
    let has_prefix = |prefix: &str| {
        key.len() >= prefix.len()
            && key[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
    };
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| has_prefix(p));
    if any(&["user-agent", "useragent", "user agent"]) {
        Key::UserAgent
    } else if any(&["allow"]) {
        Key::Allow
    } else if any(&[
        "disallow",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
    ]) {
        Key::Disallow
    } else if any(&["sitemap", "site-map"]) {
        Key::Sitemap
    } else {
        Key::Unknown
    }
}

/// The product token: the longest prefix made of `[A-Za-z_-]`.
fn product_token(value: &[u8]) -> &[u8] {
    let len = value
        .iter()
        .take_while(|&&b| b.is_ascii_alphabetic() || b == b'_' || b == b'-')
        .count();
    &value[..len]
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn push_escape(out: &mut Vec<u8>, octet: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push(b'%');
    out.push(HEX[usize::from(octet >> 4)]);
    out.push(HEX[usize::from(octet & 0x0f)]);
}

/// The valid escape `%XY` at `s[i..]`, as its octet.
fn escape_at(s: &[u8], i: usize) -> Option<u8> {
    if s[i] != b'%' || i + 2 >= s.len() {
        return None;
    }
    Some(hex_value(s[i + 1])? << 4 | hex_value(s[i + 2])?)
}

/// Google value normalisation (line parsing step 6): valid escapes get
/// upper-case hex, bytes >= 0x80 are escaped, nothing else changes.
fn normalize_google(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < value.len() {
        if let Some(octet) = escape_at(value, i) {
            push_escape(&mut out, octet);
            i += 3;
        } else if value[i] >= 0x80 {
            push_escape(&mut out, value[i]);
            i += 1;
        } else {
            out.push(value[i]);
            i += 1;
        }
    }
    out
}

/// The rfc9309 normalisation (section 4, item 1), applied to both the
/// URL path and every pattern.
fn normalize_rfc(s: &[u8]) -> Vec<u8> {
    normalize_rfc_as(s, false)
}

/// The rfc9309 normalisation of a URL's path: in it `%2A` and `%24` (either
/// case) are the characters `*` and `$` (docs/SEMANTICS.md section 4 item
/// 2), which a pattern's literal `%2A`/`%24` atoms match.
fn normalize_rfc_url(s: &[u8]) -> Vec<u8> {
    normalize_rfc_as(s, true)
}

fn normalize_rfc_as(s: &[u8], url: bool) -> Vec<u8> {
    let is_unreserved = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (url && matches!(b, b'*' | b'$'))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if let Some(octet) = escape_at(s, i) {
            if is_unreserved(octet) {
                out.push(octet);
            } else {
                push_escape(&mut out, octet);
            }
            i += 3;
        } else {
            let b = s[i];
            // Octets >= 0x80, controls (0x00-0x1F, 0x7F) and space.
            if !(0x20..0x7f).contains(&b) || b == b' ' {
                push_escape(&mut out, b);
            } else {
                out.push(b);
            }
            i += 1;
        }
    }
    out
}

/// One element of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    Byte(u8),
    /// `*`: any run of bytes, including an empty one.
    Star,
    /// A final `$`.
    End,
}

/// Splits a normalised pattern into atoms. In rfc9309 `%2A` and `%24` are
/// the literal octets `*` and `$` (section 4, item 2).
fn atoms(pattern: &[u8], rfc: bool) -> Vec<Atom> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pattern.len() {
        let rest = &pattern[i..];
        if rfc && rest.starts_with(b"%2A") {
            out.push(Atom::Byte(b'*'));
            i += 3;
        } else if rfc && rest.starts_with(b"%24") {
            out.push(Atom::Byte(b'$'));
            i += 3;
        } else if rest[0] == b'*' {
            out.push(Atom::Star);
            i += 1;
        } else if rest[0] == b'$' && rest.len() == 1 {
            out.push(Atom::End);
            i += 1;
        } else {
            out.push(Atom::Byte(rest[0]));
            i += 1;
        }
    }
    out
}

/// Whether the pattern matches a prefix of `path` (the whole path when it
/// ends in `$`). `reached[p]` says that the atoms seen so far can end just
/// before `path[p]`.
fn matches(pattern: &[u8], path: &[u8], rfc: bool) -> bool {
    let mut reached = vec![false; path.len() + 1];
    reached[0] = true;
    for atom in atoms(pattern, rfc) {
        let mut next = vec![false; path.len() + 1];
        match atom {
            Atom::End => return reached[path.len()],
            Atom::Star => {
                let first = reached.iter().position(|&r| r);
                if let Some(first) = first {
                    for n in &mut next[first..] {
                        *n = true;
                    }
                }
            }
            Atom::Byte(b) => {
                for p in 0..path.len() {
                    if reached[p] && path[p] == b {
                        next[p + 1] = true;
                    }
                }
            }
        }
        if !next.contains(&true) {
            return false;
        }
        reached = next;
    }
    true
}

#[test]
fn oracle_agrees_with_google_vectors() {
    let vectors = crate::util::google_vectors();
    assert_eq!(vectors.len(), 164, "expected 164 google vectors");
    let mut failures = Vec::new();
    for v in &vectors {
        let agents: Vec<&str> = if v.multi_agent {
            v.agent.split(',').collect()
        } else {
            vec![v.agent.as_str()]
        };
        let got = oracle_allowed(
            &v.robots,
            &agents,
            v.url.as_bytes(),
            OracleDialect::Google,
        );
        if got != v.allowed {
            failures.push(format!(
                "{}: agent {:?} url {:?}: expected allowed={}, oracle={}",
                v.id, v.agent, v.url, v.allowed, got
            ));
        }
    }
    assert!(failures.is_empty(), "oracle disagrees:\n{}", failures.join("\n"));
}

#[test]
fn oracle_agrees_with_spec_tests() {
    let cases = crate::util::spec_cases();
    assert!(cases.len() >= 146, "only {} spec cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let got = oracle_allowed(
            &c.robots,
            &[c.agent.as_str()],
            c.url.as_bytes(),
            OracleDialect::Google,
        );
        if got != c.allowed {
            failures.push(format!(
                "{}: agent {:?} url {:?}: expected allowed={}, oracle={}",
                c.file, c.agent, c.url, c.allowed, got
            ));
        }
    }
    assert!(failures.is_empty(), "oracle disagrees:\n{}", failures.join("\n"));
}

/// The section 4 differences, one or two examples each, checked in both
/// dialects.
#[test]
fn oracle_rfc9309_differences() {
    use OracleDialect::{Google, Rfc9309};
    // (robots, url, google verdict, rfc9309 verdict)
    let table: &[(&str, &str, bool, bool)] = &[
        // Item 1: unreserved escapes are decoded on both sides.
        ("user-agent: *\ndisallow: /~joe\n", "http://x/%7Ejoe", true, false),
        ("user-agent: *\ndisallow: /%7ejoe\n", "http://x/~joe", true, false),
        ("user-agent: *\ndisallow: /%7ejoe\n", "http://x/%7ejoe", true, false),
        (
            "user-agent: *\ndisallow: /\nallow: /foo/bar/%62%61%7A\n",
            "http://x/foo/bar/baz",
            false,
            true,
        ),
        // ...other escapes are kept, with upper-case hex.
        ("user-agent: *\ndisallow: /a%2fb\n", "http://x/a/b", true, true),
        ("user-agent: *\ndisallow: /a%2fb\n", "http://x/a%2fb", true, false),
        // ...raw non-ASCII, controls and space are escaped.
        (
            "user-agent: *\ndisallow: /\u{30c4}\n",
            "http://x/\u{30c4}",
            true,
            false,
        ),
        (
            "user-agent: *\ndisallow: /%E3%83%84\n",
            "http://x/\u{30c4}",
            true,
            false,
        ),
        ("user-agent: *\ndisallow: /a b\n", "http://x/a%20b", true, false),
        // Item 2: %2A and %24 are literal.
        (
            "user-agent: *\ndisallow: /a-%2A.html\n",
            "http://x/a-*.html",
            true,
            false,
        ),
        (
            "user-agent: *\ndisallow: /a-%2A.html\n",
            "http://x/a-b.html",
            true,
            true,
        ),
        ("user-agent: *\ndisallow: /foo%24\n", "http://x/foo$", true, false),
        ("user-agent: *\ndisallow: /foo%24\n", "http://x/foo", true, true),
        // ... and match the escapes themselves in the URL, either case
        // (changed 2026-11-28); google matches the escape's text only.
        (
            "user-agent: *\ndisallow: /foo-%24\n",
            "http://x/foo-%24",
            false,
            false,
        ),
        ("user-agent: *\ndisallow: /foo-%24\n", "http://x/foo-$", true, false),
        ("user-agent: *\ndisallow: /s/%2A/\n", "http://x/s/%2a/", true, false),
        ("user-agent: *\ndisallow: /s/%2A/\n", "http://x/s/*/", true, false),
        // Item 3: /robots.txt is always allowed.
        ("user-agent: *\ndisallow: /\n", "http://x/robots.txt", false, true),
        ("user-agent: *\ndisallow: /\n", "http://x/robots.txt?a", false, true),
        ("user-agent: *\ndisallow: /\n", "http://x/robots.txtx", false, false),
        // Precedence is the normalised length: in rfc9309 `/%7ea`
        // becomes `/~a` (3 octets) and ties with `/~a`, so allow wins.
        (
            "user-agent: *\nallow: /%7ea\ndisallow: /~a\n",
            "http://x/~a",
            false,
            true,
        ),
    ];
    for &(robots, url, google, rfc) in table {
        let got = oracle_allowed(
            robots.as_bytes(),
            &["FooBot"],
            url.as_bytes(),
            Google,
        );
        assert_eq!(got, google, "google: {robots:?} {url:?}");
        let got = oracle_allowed(
            robots.as_bytes(),
            &["FooBot"],
            url.as_bytes(),
            Rfc9309,
        );
        assert_eq!(got, rfc, "rfc9309: {robots:?} {url:?}");
    }

    // Item 4: the parse limit. A rule wholly inside the first 512000
    // bytes counts; a rule cut by the limit, or past it, does not.
    let rule = "disallow: /late\n";
    let mut body = String::from("user-agent: *\n");
    let filler = RFC_PARSE_LIMIT - body.len() - rule.len();
    body.push_str(&"#".repeat(filler - 1));
    body.push('\n');
    body.push_str(rule);
    assert_eq!(body.len(), RFC_PARSE_LIMIT);
    let url = b"http://x/late";
    assert!(!oracle_allowed(body.as_bytes(), &["a"], url, Rfc9309));
    // Two more bytes in front: the limit now falls inside `/late`, and
    // the kept part `disallow: /la` would still match if it were parsed.
    let mut cut = body.clone();
    cut.insert_str(RFC_PARSE_LIMIT - rule.len(), "\n\n");
    assert!(oracle_allowed(cut.as_bytes(), &["a"], url, Rfc9309));
    assert!(!oracle_allowed(cut.as_bytes(), &["a"], url, Google));
}
