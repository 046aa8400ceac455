//! URL forms at the edges (issue 11, part B items 10 and 12): where the
//! authority ends per dialect, authorities readers disagree on, and the
//! rfc9309 `/robots.txt` exception for hosts whose robots.txt failed.

use robofilter::{
    AlignedBytes, Bundle, BundleBuilder, Compiler, Config, Dialect, Fetch,
    HostCache, Members, Outcome, Rules, Target, UrlChecker, write_why,
};

const ROBOTS: &[u8] = b"User-agent: *\nDisallow: /private\nDisallow: /;x\n";

fn bundle(dialect: Dialect) -> AlignedBytes {
    let mut b = BundleBuilder::new(Config::new().dialect(dialect));
    b.add("a.example", Fetch::http(200, 0, ROBOTS.to_vec())).unwrap();
    b.add(
        "b.example",
        Fetch::http(200, 0, b"User-agent: *\nAllow: /\n".to_vec()),
    )
    .unwrap();
    b.add("down.example", Fetch::http(503, 0, Vec::new())).unwrap();
    b.add("gone.example", Fetch::Unreachable).unwrap();
    AlignedBytes::from(&b.finish().unwrap()[..])
}

/// The outcome of each line in a bundle of `dialect`.
fn outcomes(dialect: Dialect, lines: &[&str]) -> Vec<Outcome> {
    let bytes = bundle(dialect);
    let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
    let members = std::sync::Arc::new(Members::new(&bundle));
    let checker = UrlChecker::bundle(&bundle, members, &["bot"]).unwrap();
    let mut cache = HostCache::new();
    lines
        .iter()
        .map(|l| checker.check(l.as_bytes(), &mut cache).unwrap())
        .collect()
}

#[test]
fn rfc9309_authority_ends_at_slash_query_or_fragment() {
    use Outcome::*;
    // The `;` is inside the authority: rfc9309 reads /private/x.
    let lines =
        ["http://u;x@a.example/private/x", "http://u;x@a.example/public"];
    assert_eq!(outcomes(Dialect::Rfc9309, &lines), [Disallow, Allow]);
    // The google dialect keeps the reference's reading: the path starts at
    // the `;` (`/;x@a.example/...`), which `Disallow: /;x` matches.
    assert_eq!(outcomes(Dialect::Google, &lines), [Disallow, Disallow]);
    let lines = ["http://u;y@a.example/private/x"];
    assert_eq!(outcomes(Dialect::Google, &lines), [Allow]);
    assert_eq!(outcomes(Dialect::Rfc9309, &lines), [Disallow]);
}

#[test]
fn a_single_rules_file_reads_the_path_in_its_dialect_too() {
    for (dialect, want) in [
        (Dialect::Rfc9309, Outcome::Disallow),
        (Dialect::Google, Outcome::Allow),
    ] {
        let compiler = Compiler::with_config(Config::new().dialect(dialect));
        let bytes = AlignedBytes::from(&compiler.compile(ROBOTS).unwrap()[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let url = b"http://u;y@a.example/private/x";
        let matcher = rules.matcher("bot").unwrap();
        assert_eq!(Outcome::from(matcher.decide(url)), want, "{dialect}");
        let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
        let got = checker.check(url, &mut HostCache::new()).unwrap();
        assert_eq!(got, want, "{dialect}");
    }
}

#[test]
fn an_authority_with_a_forbidden_octet_is_invalid_in_a_bundle() {
    use Outcome::*;
    for dialect in [Dialect::Rfc9309, Dialect::Google] {
        let lines = [
            // Some readers take a.example (after the `@`), others b.example.
            "http://b.example\\@a.example/private",
            "http://a.example|/private",
            "http://a.example^/private",
            "http://a.example{x}/private",
            "http://a.example\"/private",
            "http://a.example`/private",
            // The same octets after the authority are only path bytes.
            "http://a.example/private\\x",
            "http://b.example/a|b",
        ];
        let got = outcomes(dialect, &lines);
        assert_eq!(
            got,
            [
                Invalid, Invalid, Invalid, Invalid, Invalid, Invalid,
                Disallow, Allow
            ],
            "{dialect}"
        );
    }
}

#[test]
fn rfc9309_always_allows_robots_txt_even_for_unreachable_hosts() {
    use Outcome::*;
    let lines = [
        "http://down.example/robots.txt",
        "http://down.example/robots.txt?x=1",
        "http://gone.example/%72obots.txt",
        "http://down.example/robots.txt/x",
        "http://down.example/robots.txtx",
        "http://down.example/",
    ];
    assert_eq!(
        outcomes(Dialect::Rfc9309, &lines),
        [Allow, Allow, Allow, Disallow, Disallow, Disallow]
    );
    // google/robotstxt has no such exception (docs/SEMANTICS.md H11).
    assert_eq!(outcomes(Dialect::Google, &lines), [Disallow; 6]);
}

#[test]
fn explanations_name_the_robots_txt_exception_and_the_ambiguous_host() {
    let bytes = bundle(Dialect::Rfc9309);
    let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
    let members = std::sync::Arc::new(Members::new(&bundle));
    let checker = UrlChecker::bundle(&bundle, members, &["bot"]).unwrap();
    for (url, robots_txt) in [
        (&b"http://down.example/robots.txt"[..], true),
        (&b"http://b.example\\@a.example/x"[..], false),
    ] {
        let mut cache = HostCache::new();
        let target = checker.target(url, &mut cache).unwrap();
        let mut out = Vec::new();
        write_why(&mut out, url, Some(target), 0);
        let text = String::from_utf8(out).unwrap();
        if robots_txt {
            assert!(matches!(target, Target::RobotsTxt(..)), "{target:?}");
            assert!(text.contains("/robots.txt is always allowed"), "{text}");
            assert!(text.contains("HTTP 503"), "{text}");
        } else {
            assert!(matches!(target, Target::Ambiguous), "{target:?}");
            assert!(text.contains("RFC 3986"), "{text}");
        }
    }
}
