//! RFC 9309's own examples in the rfc9309 dialect, and one test per
//! difference between the dialects (docs/SEMANTICS.md sections 3 and 4), each
//! asserting that google gives one verdict and rfc9309 the other.
//!
//! Every verdict goes through the whole pipeline (compile -> bytes ->
//! load -> decide), is checked against the direct matcher (`explain`), and,
//! where the oracle can express the case, against `tests/oracle.rs` too.

use robofilter::{
    AlignedBytes, Compiler, Config, Dialect, EngineKind, RFC9309_PARSE_LIMIT,
    Reason, Rules, Verdict,
};

use crate::oracle::{OracleDialect, oracle_allowed};

/// The verdict of `config` (compiled for all agents) for `agent` on `url`,
/// asserting that the automaton and the direct matcher agree.
fn allowed_with(
    config: Config,
    robots: &[u8],
    agent: &str,
    url: &str,
) -> bool {
    let dialect = config.get_dialect();
    let bytes = Compiler::with_config(config).compile(robots).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    assert_eq!(rules.dialect(), dialect);
    let m = rules.matcher(agent).unwrap();
    let fast = m.decide(url.as_bytes());
    let slow = m.explain(url.as_bytes()).verdict();
    assert_eq!(fast, slow, "{dialect}: decide vs explain, {agent} {url}");
    fast == Verdict::Allow
}

/// As [`allowed_with`] with the dialect's defaults, also checked against
/// the oracle.
fn allowed(robots: &str, agent: &str, url: &str, dialect: Dialect) -> bool {
    let got = allowed_with(
        Config::new().dialect(dialect),
        robots.as_bytes(),
        agent,
        url,
    );
    let oracle_dialect = match dialect {
        Dialect::Google => OracleDialect::Google,
        Dialect::Rfc9309 => OracleDialect::Rfc9309,
    };
    let oracle = oracle_allowed(
        robots.as_bytes(),
        &[agent],
        url.as_bytes(),
        oracle_dialect,
    );
    assert_eq!(
        got, oracle,
        "{dialect}: robofilter vs oracle, {robots:?} {url}"
    );
    got
}

const ALLOW: bool = true;
const DISALLOW: bool = false;

/// `(what, robots, agent, url, expected)` in the rfc9309 dialect.
type Case<'a> = (&'a str, &'a str, &'a str, &'a str, bool);

fn check_rfc(cases: &[Case<'_>]) {
    let mut failed = Vec::new();
    for &(what, robots, agent, url, expected) in cases {
        let got = allowed(robots, agent, url, Dialect::Rfc9309);
        if got != expected {
            failed.push(format!(
                "{what}: {agent} {url}: expected {}, got {}",
                verdict_name(expected),
                verdict_name(got)
            ));
        }
    }
    assert!(failed.is_empty(), "rfc9309 failures:\n{}", failed.join("\n"));
}

fn verdict_name(allowed: bool) -> &'static str {
    if allowed { "allow" } else { "disallow" }
}

/// RFC 9309 §2.2.2: the table of paths, their encoded forms and the path
/// to match. A rule written in any column matches a URL written in any
/// other column (unreserved escapes are decoded, non-ASCII is encoded).
#[test]
fn section_2_2_2_percent_encoding_table() {
    // (rule path, URL paths that must match it)
    let rows: &[(&str, &[&str])] = &[
        ("/foo/bar?baz=quz", &["/foo/bar?baz=quz"]),
        (
            "/foo/bar/ツ",
            &["/foo/bar/%E3%83%84", "/foo/bar/ツ", "/foo/bar/%e3%83%84"],
        ),
        ("/foo/bar/%E3%83%84", &["/foo/bar/%E3%83%84", "/foo/bar/ツ"]),
        (
            "/foo/bar/%62%61%7A",
            &["/foo/bar/baz", "/foo/bar/%62%61%7A", "/foo/bar/%62a%7a"],
        ),
        ("/foo/bar/baz", &["/foo/bar/%62%61%7A"]),
        ("/~joe", &["/%7Ejoe", "/%7ejoe", "/~joe"]),
        ("/%7Ejoe", &["/~joe", "/%7ejoe"]),
        ("/%7ejoe", &["/~joe"]),
    ];
    for &(rule, urls) in rows {
        let body = format!("User-agent: *\nDisallow: {rule}\n");
        for url in urls {
            let url = format!("https://www.example.com{url}");
            check_rfc(&[(rule, &body, "FooBot", &url, DISALLOW)]);
        }
    }
    // And the paths that differ stay different: the query is part of the
    // path, and reserved escapes are not decoded.
    check_rfc(&[
        (
            "query kept",
            "User-agent: *\nDisallow: /foo/bar?baz=quz\n",
            "a",
            "http://x/foo/bar?baz=qux",
            ALLOW,
        ),
        (
            "%2F is not /",
            "User-agent: *\nDisallow: /a/b\n",
            "a",
            "http://x/a%2Fb",
            ALLOW,
        ),
        (
            "%2f is %2F",
            "User-agent: *\nDisallow: /a%2fb\n",
            "a",
            "http://x/a%2Fb",
            DISALLOW,
        ),
        (
            "ツ vs other char",
            "User-agent: *\nDisallow: /ツ\n",
            "a",
            "http://x/%E3%83%85",
            ALLOW,
        ),
    ]);
}

/// RFC 9309 §2.2.3: `*`, `$`, `#`, and `%2A`/`%24` as literal characters.
#[test]
fn section_2_2_3_special_characters() {
    check_rfc(&[
        (
            "# comment",
            "User-agent: *\nDisallow: / # comment in line\n",
            "a",
            "http://x/a",
            DISALLOW,
        ),
        (
            "$ end",
            "User-agent: *\nDisallow: /\nAllow: /this/path/exactly$\n",
            "a",
            "http://x/this/path/exactly",
            ALLOW,
        ),
        (
            "$ end",
            "User-agent: *\nDisallow: /\nAllow: /this/path/exactly$\n",
            "a",
            "http://x/this/path/exactly/",
            DISALLOW,
        ),
        (
            "$ end",
            "User-agent: *\nDisallow: /\nAllow: /this/path/exactly$\n",
            "a",
            "http://x/this/path/exactly?q",
            DISALLOW,
        ),
        (
            "* any",
            "User-agent: *\nDisallow: /\nAllow: /this/*/exactly\n",
            "a",
            "http://x/this/a/b/exactly",
            ALLOW,
        ),
        (
            "* any",
            "User-agent: *\nDisallow: /\nAllow: /this/*/exactly\n",
            "a",
            "http://x/this//exactly",
            ALLOW,
        ),
        (
            "* any",
            "User-agent: *\nDisallow: /\nAllow: /this/*/exactly\n",
            "a",
            "http://x/this/exactly",
            DISALLOW,
        ),
        (
            "%2A literal",
            "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
            "a",
            "https://www.example.com/path/file-with-a-*.html",
            DISALLOW,
        ),
        // The pattern's `%2A` is the octet `*`, and in the URL `%2A` and
        // `%24` (either case) are the characters `*` and `$` (RFC 9309
        // section 2.2.2; docs/SEMANTICS.md section 4 item 2, changed
        // 2026-11-28), so the escape matches as the character does.
        (
            "%2A in the URL matches the pattern's %2A",
            "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
            "a",
            "https://www.example.com/path/file-with-a-%2A.html",
            DISALLOW,
        ),
        (
            "%2a (lower case) in the URL matches too",
            "User-agent: *\nDisallow: /search/%2A/\n",
            "a",
            "https://www.example.com/search/%2a/",
            DISALLOW,
        ),
        (
            "%24 in the URL matches the pattern's %24",
            "User-agent: *\nDisallow: /path/foo-%24\n",
            "a",
            "https://www.example.com/path/foo-%24",
            DISALLOW,
        ),
        (
            "a raw * in the pattern is a wildcard that %2A in the URL meets",
            "User-agent: *\nDisallow: /\nAllow: /a*$\n",
            "a",
            "https://www.example.com/a%2A",
            ALLOW,
        ),
        (
            "%24 in the URL is a character, not an end",
            "User-agent: *\nDisallow: /\nAllow: /a$\n",
            "a",
            "https://www.example.com/a%24",
            DISALLOW,
        ),
        (
            "%2A is not a wildcard",
            "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
            "a",
            "https://www.example.com/path/file-with-a-b.html",
            ALLOW,
        ),
        (
            "%24 literal",
            "User-agent: *\nDisallow: /path/foo-%24\n",
            "a",
            "https://www.example.com/path/foo-$",
            DISALLOW,
        ),
        (
            "%24 is not an anchor",
            "User-agent: *\nDisallow: /path/foo-%24\n",
            "a",
            "https://www.example.com/path/foo-",
            ALLOW,
        ),
        (
            "%24 at the end matches a prefix",
            "User-agent: *\nDisallow: /path/foo-%24\n",
            "a",
            "https://www.example.com/path/foo-$bar",
            DISALLOW,
        ),
        (
            "* literal in URL",
            "User-agent: *\nDisallow: /a*b\n",
            "a",
            "http://x/a*b",
            DISALLOW,
        ),
    ]);
}

/// The RFC 9309 §5.1 example file (docs/SEMANTICS.md vector C28).
const RFC_5_1: &str = "\
User-agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot
";

/// RFC 9309 §5.1: the outcomes the RFC describes for each crawler.
#[test]
fn section_5_1_simple_example() {
    let r = RFC_5_1;
    check_rfc(&[
        // foobot: only the two allowed URLs.
        (
            "foobot",
            r,
            "foobot",
            "http://www.example.com/example/page.html",
            ALLOW,
        ),
        (
            "foobot",
            r,
            "foobot",
            "http://www.example.com/example/allowed.gif",
            ALLOW,
        ),
        (
            "foobot",
            r,
            "foobot",
            "http://www.example.com/example/disallowed.gif",
            DISALLOW,
        ),
        ("foobot", r, "foobot", "http://www.example.com/", DISALLOW),
        (
            "foobot",
            r,
            "foobot",
            "http://www.example.com/publications/",
            DISALLOW,
        ),
        (
            "foobot",
            r,
            "FooBot",
            "http://www.example.com/example/page.html",
            ALLOW,
        ),
        // barbot and bazbot: everything but /example/page.html.
        (
            "barbot",
            r,
            "barbot",
            "http://www.example.com/example/page.html",
            DISALLOW,
        ),
        ("barbot", r, "barbot", "http://www.example.com/example/a.gif", ALLOW),
        ("barbot", r, "barbot", "http://www.example.com/", ALLOW),
        (
            "bazbot",
            r,
            "bazbot",
            "http://www.example.com/example/page.html",
            DISALLOW,
        ),
        (
            "bazbot",
            r,
            "bazbot",
            "http://www.example.com/example/other.html",
            ALLOW,
        ),
        // quxbot: an empty group, so everything.
        ("quxbot", r, "quxbot", "http://www.example.com/example/a.gif", ALLOW),
        ("quxbot", r, "quxbot", "http://www.example.com/example/", ALLOW),
        // Everyone else: the `*` group.
        ("*", r, "otherbot", "http://www.example.com/a.gif", DISALLOW),
        ("*", r, "otherbot", "http://www.example.com/a/b.gif", DISALLOW),
        ("*", r, "otherbot", "http://www.example.com/a.gif?x", ALLOW),
        (
            "*",
            r,
            "otherbot",
            "http://www.example.com/example/page.html",
            DISALLOW,
        ),
        (
            "*",
            r,
            "otherbot",
            "http://www.example.com/publications/a.html",
            ALLOW,
        ),
        (
            "*",
            r,
            "otherbot",
            "http://www.example.com/publications/a.gif",
            ALLOW,
        ),
        ("*", r, "otherbot", "http://www.example.com/", ALLOW),
    ]);
}

/// RFC 9309 §5.2: the longest match wins (docs/SEMANTICS.md vector G14).
#[test]
fn section_5_2_longest_match() {
    let r = "User-Agent: foobot\nAllow: /example/page/\n\
             Disallow: /example/page/disallowed.gif\n";
    check_rfc(&[
        (
            "longest",
            r,
            "foobot",
            "http://x/example/page/disallowed.gif",
            DISALLOW,
        ),
        ("longest", r, "foobot", "http://x/example/page/allowed.gif", ALLOW),
        ("longest", r, "foobot", "http://x/example/page/", ALLOW),
        ("no rule", r, "foobot", "http://x/example/", ALLOW),
    ]);
}

/// A case where the dialects must differ: `(difference, robots, url,
/// google verdict, rfc9309 verdict)`, for agent `FooBot`.
type Difference<'a> = (&'a str, &'a str, &'a str, bool, bool);

/// One row per difference of docs/SEMANTICS.md section 4 (with the section 3
/// row it answers).
const DIFFERENCES: &[Difference<'_>] = &[
    // §4.3 / §3 "The /robots.txt URI is implicitly allowed" (H11).
    (
        "robots.txt always allowed",
        "User-agent: *\nDisallow: /\n",
        "http://x/robots.txt",
        DISALLOW,
        ALLOW,
    ),
    (
        "robots.txt always allowed, query",
        "User-agent: *\nDisallow: /\n",
        "http://x/robots.txt?v=2",
        DISALLOW,
        ALLOW,
    ),
    (
        "robots.txt always allowed, escaped",
        "User-agent: *\nDisallow: /\n",
        "http://x/%72obots.txt",
        DISALLOW,
        ALLOW,
    ),
    (
        "robots.txt always allowed, own group",
        "User-agent: FooBot\nDisallow: /robots.txt\n",
        "http://x/robots.txt",
        DISALLOW,
        ALLOW,
    ),
    // §4.1 / §3 unreserved escapes decoded on both sides (E04-E07).
    (
        "unreserved decoded in pattern",
        "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n",
        "http://x/foo/bar/baz",
        ALLOW,
        DISALLOW,
    ),
    (
        "unreserved decoded in URL",
        "User-agent: *\nDisallow: /foo/bar/baz\n",
        "http://x/foo/bar/%62%61%7A",
        ALLOW,
        DISALLOW,
    ),
    (
        "~ vs %7E",
        "User-agent: *\nDisallow: /~joe\n",
        "http://x/%7Ejoe",
        ALLOW,
        DISALLOW,
    ),
    (
        "%7E vs ~",
        "User-agent: *\nDisallow: /%7Ejoe\n",
        "http://x/~joe",
        ALLOW,
        DISALLOW,
    ),
    // §4.1 / §3 raw UTF-8 URL is the same as its encoded form (E02).
    (
        "raw UTF-8 URL",
        "User-agent: *\nDisallow: /foo/bar/ツ\n",
        "http://x/foo/bar/ツ",
        ALLOW,
        DISALLOW,
    ),
    (
        "raw UTF-8 URL, escaped rule",
        "User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
        "http://x/foo/bar/ツ",
        ALLOW,
        DISALLOW,
    ),
    // §4.1 / §3 URL hex case (E09): `%7e` in the URL.
    (
        "%7e in URL vs %7e rule",
        "User-agent: *\nDisallow: /%7ejoe\n",
        "http://x/%7ejoe",
        ALLOW,
        DISALLOW,
    ),
    (
        "%7e in URL vs %7E rule",
        "User-agent: *\nDisallow: /%7Ejoe\n",
        "http://x/%7ejoe",
        ALLOW,
        DISALLOW,
    ),
    (
        "%e3 in URL (reserved hex case)",
        "User-agent: *\nDisallow: /%E3%83%84\n",
        "http://x/%e3%83%84",
        ALLOW,
        DISALLOW,
    ),
    (
        "%2f in URL vs %2F rule",
        "User-agent: *\nDisallow: /a%2Fb\n",
        "http://x/a%2fb",
        ALLOW,
        DISALLOW,
    ),
    // §4.2 / §3 `%2A` and `%24` literal (E13, E14).
    (
        "%2A matches *",
        "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
        "http://x/path/file-with-a-*.html",
        ALLOW,
        DISALLOW,
    ),
    (
        "%24 matches $",
        "User-agent: *\nDisallow: /path/foo-%24\n",
        "http://x/path/foo-$",
        ALLOW,
        DISALLOW,
    ),
    (
        "%2a (lower case) matches *",
        "User-agent: *\nDisallow: /a%2ab\n",
        "http://x/a*b",
        ALLOW,
        DISALLOW,
    ),
    // ... and the escapes themselves, either case (docs/SEMANTICS.md
    // section 4 item 2): google matches the escape's text only (a pattern
    // `%24` against a URL `%24` is a match in both dialects).
    (
        "%24 in the URL matches a literal $",
        "User-agent: *\nDisallow: /a$b\n",
        "http://x/a%24b",
        ALLOW,
        DISALLOW,
    ),
    (
        "%2a in the URL matches %2A",
        "User-agent: *\nDisallow: /search/%2A/\n",
        "http://x/search/%2a/",
        ALLOW,
        DISALLOW,
    ),
    // §4.1 / §3 controls and space escaped on both sides (E16, E17).
    (
        "space vs %20",
        "User-agent: *\nDisallow: /a b\n",
        "http://x/a%20b",
        ALLOW,
        DISALLOW,
    ),
    // §4.1 precedence is the normalised length: `/%7Ea` is 3 octets in
    // rfc9309 and ties `/~a`, so allow wins; in google it is 5 and wins.
    (
        "precedence after decoding",
        "User-agent: *\nAllow: /%7Ea\nDisallow: /~a\n",
        "http://x/~a",
        DISALLOW,
        ALLOW,
    ),
    (
        "precedence after decoding",
        "User-agent: *\nAllow: /~a\nDisallow: /%7E\n",
        "http://x/%7Ea",
        DISALLOW,
        ALLOW,
    ),
];

#[test]
fn dialect_differences() {
    let mut failed = Vec::new();
    for &(what, robots, url, google, rfc) in DIFFERENCES {
        let g = allowed(robots, "FooBot", url, Dialect::Google);
        let r = allowed(robots, "FooBot", url, Dialect::Rfc9309);
        if (g, r) != (google, rfc) {
            failed.push(format!(
                "{what}: {robots:?} {url}: expected google {} rfc9309 {}, \
                 got google {} rfc9309 {}",
                verdict_name(google),
                verdict_name(rfc),
                verdict_name(g),
                verdict_name(r),
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Every row must really differ, so that the table tests something.
    for d in DIFFERENCES {
        assert_ne!(d.3, d.4, "{}: not a difference", d.0);
    }
}

/// The reason given for `/robots.txt` in rfc9309 is the RFC's rule.
#[test]
fn robots_txt_reason() {
    let config = Config::new().dialect(Dialect::Rfc9309);
    let bytes =
        Compiler::with_config(config).compile(b"User-agent: *\nDisallow: /\n");
    let bytes = AlignedBytes::from(&bytes.unwrap()[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let why = rules.matcher("a").unwrap().explain(b"http://x/robots.txt");
    assert_eq!(why.verdict(), Verdict::Allow);
    assert!(matches!(why.reason(), Reason::RobotsTxt), "{:?}", why.reason());
}

/// A body whose rule `disallow: /late` ends exactly `end` octets into the
/// file (its newline is octet `end`), padded with a comment line.
fn body_with_rule_ending_at(end: usize) -> Vec<u8> {
    let head = "user-agent: *\n";
    let rule = "disallow: /late";
    let filler = end - head.len() - rule.len() - 1;
    let mut body = String::from(head);
    body.push_str(&"#".repeat(filler));
    body.push('\n');
    body.push_str(rule);
    body.push('\n');
    assert_eq!(body.len(), end + 1);
    body.into_bytes()
}

/// §4.4 / §3: rfc9309 parses only the first 500 KiB (a line cut by the
/// limit is dropped); google has no limit (B39).
#[test]
fn parse_limit_500_kib() {
    assert_eq!(RFC9309_PARSE_LIMIT, 512_000);
    let url = "http://x/late";
    let google = Config::new().dialect(Dialect::Google);
    let rfc = Config::new().dialect(Dialect::Rfc9309);
    assert_eq!(rfc.get_parse_limit(), RFC9309_PARSE_LIMIT);
    // (where the rule's line ends, google verdict, rfc9309 verdict)
    let table: &[(usize, bool, bool)] = &[
        // Well inside: both disallow.
        (1000, DISALLOW, DISALLOW),
        // Ends exactly at the limit (its newline is the first octet past
        // it): read whole, kept.
        (RFC9309_PARSE_LIMIT, DISALLOW, DISALLOW),
        // Cut by the limit (`disallow: /lat` would still match): dropped.
        (RFC9309_PARSE_LIMIT + 1, DISALLOW, ALLOW),
        (RFC9309_PARSE_LIMIT + 3, DISALLOW, ALLOW),
        // Wholly past the limit.
        (700_000, DISALLOW, ALLOW),
    ];
    for &(end, g, r) in table {
        let body = body_with_rule_ending_at(end);
        let got_g = allowed_with(google.clone(), &body, "a", url);
        let got_r = allowed_with(rfc.clone(), &body, "a", url);
        assert_eq!((got_g, got_r), (g, r), "rule ending at {end}");
        let oracle_r = oracle_allowed(
            &body,
            &["a"],
            url.as_bytes(),
            OracleDialect::Rfc9309,
        );
        assert_eq!(got_r, oracle_r, "oracle, rule ending at {end}");
    }
}

/// §4.4: the limit is a setting. A higher one reads further; a lower one
/// is raised to 500 KiB; the rules file records it.
#[test]
fn parse_limit_configurable_never_below_500_kib() {
    let url = "http://x/late";
    let body = body_with_rule_ending_at(700_000);
    let rfc = || Config::new().dialect(Dialect::Rfc9309);

    let higher = rfc().parse_limit(1 << 20);
    assert_eq!(higher.get_parse_limit(), 1 << 20);
    assert!(!allowed_with(higher.clone(), &body, "a", url));
    let bytes = Compiler::with_config(higher).compile(&body).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    assert_eq!(rules.parse_limit(), Some(1 << 20));

    // Just too low for this rule.
    let short = rfc().parse_limit(699_999);
    assert!(allowed_with(short, &body, "a", url));

    for low in [0, 1, 1000, RFC9309_PARSE_LIMIT - 1] {
        let config = rfc().parse_limit(low);
        assert_eq!(config.get_parse_limit(), RFC9309_PARSE_LIMIT, "{low}");
        // Raised, not obeyed: a rule at 1000 octets still counts...
        let early = body_with_rule_ending_at(1000);
        assert!(!allowed_with(config.clone(), &early, "a", url), "{low}");
        // ...and one past 500 KiB still does not.
        assert!(allowed_with(config.clone(), &body, "a", url), "{low}");
        let bytes = Compiler::with_config(config).compile(&body).unwrap();
        let bytes = AlignedBytes::from(&bytes[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        assert_eq!(rules.parse_limit(), Some(RFC9309_PARSE_LIMIT));
    }

    // The google dialect ignores the setting: no limit at all.
    let google = Config::new().dialect(Dialect::Google).parse_limit(1 << 20);
    let big = body_with_rule_ending_at(1_500_000);
    assert!(!allowed_with(google.clone(), &big, "a", url));
    let bytes = Compiler::with_config(google).compile(&big).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    assert_eq!(
        Rules::from_bytes(bytes.as_bytes()).unwrap().parse_limit(),
        None
    );
}

/// The rfc9309 walk takes octets the normalisation leaves alone four at a
/// time and hands the rest of the path to the normaliser at the first
/// group of four with another one: every special octet (an escape that is
/// decoded, one that is kept, a malformed one, a space, non-ASCII) at
/// every offset of a group, in a one-automaton group, a split one and a
/// direct one, gives the oracle's verdict (and `decide` the same as
/// `explain`).
#[test]
fn special_octets_at_every_offset_of_the_walk() {
    let robots = "user-agent: *\n\
                  disallow: /a\n\
                  allow: /a*~b\n\
                  disallow: /*%2Fx\n\
                  disallow: /*c%20d\n\
                  allow: /*%E3%83%84$\n\
                  disallow: /*%zz\n\
                  allow: /*ab~\n";
    let specials =
        ["%7E", "%7e", "%2F", "%2f", "%", "%z", "%zz", " ", "\u{30c4}"];
    let mut urls = Vec::new();
    for lead in 0..8 {
        for special in specials {
            for tail in ["", "b", "x", "d", "~b", "ab~", "bcdefgh~b"] {
                let pad = "a".repeat(lead);
                urls.push(format!("http://h/{pad}{special}{tail}"));
                urls.push(format!("http://h/c{pad}{special}{tail}"));
            }
        }
    }
    // One automaton, the same group split into three score automata
    // walked in lockstep (a byte limit too small for one), and decided by
    // the direct matcher (smaller still), whose path an escape-free URL
    // gives as it is.
    let rfc = Config::new().dialect(Dialect::Rfc9309);
    for (config, engine) in [
        (rfc.clone(), EngineKind::VerdictDfa),
        (rfc.clone().dfa_byte_limit(3500), EngineKind::SplitDfa),
        (rfc.dfa_byte_limit(1024), EngineKind::Direct),
    ] {
        let bytes = Compiler::with_config(config.clone())
            .compile(robots.as_bytes())
            .unwrap();
        let bytes = AlignedBytes::from(&bytes[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let group = rules.groups().next().unwrap();
        assert_eq!(group.engine(), engine);
        for url in &urls {
            let got =
                allowed_with(config.clone(), robots.as_bytes(), "bot", url);
            let oracle = oracle_allowed(
                robots.as_bytes(),
                &["bot"],
                url.as_bytes(),
                OracleDialect::Rfc9309,
            );
            assert_eq!(got, oracle, "{url}");
        }
    }
}
