//! Multi-host bundles: every host decides as its own compiled robots.txt,
//! fetch outcomes follow RFC 9309 §2.3.1, unknown hosts stay unknown, and
//! any damage is rejected.

use std::sync::Arc;

use robofilter::{
    AlignedBytes, Bundle, BundleBuilder, Compiler, Config, Dialect, Fetch,
    FetchStatus, HostCache, HostRules, Members, Outcome, Rules, UrlChecker,
};

use crate::differential::{Rng, random_robots, random_url};

/// Hosts with random bodies (many repeated), plus every fetch outcome.
fn random_hosts(rng: &mut Rng, n: usize) -> Vec<(String, Fetch)> {
    let bodies: Vec<Vec<u8>> =
        (0..n / 4 + 1).map(|_| random_robots(rng)).collect();
    (0..n)
        .map(|i| {
            let host = match i % 3 {
                0 => format!("h{i}.example"),
                1 => format!("WWW.H{i}.Example"),
                _ => format!("h{i}.example:{}", 8000 + i),
            };
            let fetch = match rng.below(10) {
                0 => Fetch::http(
                    404,
                    0,
                    b"User-agent: *\nDisallow: /\n".to_vec(),
                ),
                1 => Fetch::http(503, 0, Vec::new()),
                2 => Fetch::http(429, 0, Vec::new()),
                3 => Fetch::Unreachable,
                4 => Fetch::http(200, 6, bodies[0].clone()),
                5 => Fetch::http(301, 1, Vec::new()),
                _ => Fetch::http(
                    200,
                    rng.below(6) as u32,
                    bodies[rng.below(bodies.len())].clone(),
                ),
            };
            (host, fetch)
        })
        .collect()
}

fn build(hosts: &[(String, Fetch)], config: Config) -> AlignedBytes {
    let mut b = BundleBuilder::new(config);
    for (h, f) in hosts {
        b.add(h, f.clone()).unwrap();
    }
    AlignedBytes::from(&b.finish().unwrap()[..])
}

#[test]
fn every_host_decides_as_its_own_robots_txt() {
    let mut rng = Rng::new(7);
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        let hosts = random_hosts(&mut rng, 300);
        let config = Config::new().dialect(dialect);
        let bytes = build(&hosts, config.clone());
        let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
        assert_eq!(bundle.dialect(), dialect);
        assert_eq!(bundle.host_len(), hosts.len());
        let distinct: std::collections::HashSet<&[u8]> = hosts
            .iter()
            .filter_map(|(_, f)| match f {
                Fetch::Http { status: 200..=299, body } => Some(&body[..]),
                _ => None,
            })
            .collect();
        assert_eq!(bundle.member_len(), distinct.len(), "bodies stored once");
        let compiler = Compiler::with_config(config);
        let mut key = Vec::new();
        for (host, fetch) in &hosts {
            let name = robofilter::normalize_host(host).unwrap();
            let i = bundle.find(name.as_bytes()).expect("host present");
            let info = bundle.host(i);
            assert_eq!(info.name(), name.as_bytes());
            let url_base = format!("http://{host}");
            assert!(robofilter::url_authority(url_base.as_bytes(), &mut key));
            assert_eq!(key, name.as_bytes(), "URL authority = host name");
            match (fetch, info.rules()) {
                (
                    Fetch::Http { status: 200..=299, body },
                    HostRules::Member(m),
                ) => {
                    let alone = AlignedBytes::from(
                        &compiler.compile(body).unwrap()[..],
                    );
                    let alone = Rules::from_bytes(alone.as_bytes()).unwrap();
                    let member = bundle.member(m).unwrap();
                    for agent in ["FooBot", "BarBot", "other"] {
                        let (a, b) = (
                            alone.matcher(agent).unwrap(),
                            member.matcher(agent).unwrap(),
                        );
                        for _ in 0..20 {
                            let url = random_url(&mut rng);
                            assert_eq!(a.decide(&url), b.decide(&url));
                        }
                    }
                }
                (
                    Fetch::Http { status: 429 | 500..=599, .. }
                    | Fetch::Unreachable
                    | Fetch::Unreadable,
                    r,
                ) => {
                    assert_eq!(r, HostRules::DisallowAll, "{host} {fetch:?}")
                }
                (
                    Fetch::Http { status: 300..=499, .. }
                    | Fetch::TooManyRedirects,
                    r,
                ) => {
                    assert_eq!(r, HostRules::AllowAll, "{host} {fetch:?}")
                }
                other => panic!("unexpected {other:?}"),
            }
            let want_status = match fetch {
                Fetch::Http { status, .. } => FetchStatus::Http(*status),
                Fetch::Unreachable => FetchStatus::Unreachable,
                Fetch::TooManyRedirects => FetchStatus::TooManyRedirects,
                Fetch::Unreadable => FetchStatus::Unreadable,
            };
            assert_eq!(info.status(), want_status);
        }
        // Hosts that are not in the bundle are not found, including
        // near misses.
        for miss in [
            "h0.example:80",
            "h1.example",
            "www.h0.example",
            "h2.example",
            "",
            "x",
        ] {
            let found = bundle
                .find(miss.as_bytes())
                .map(|i| bundle.host(i).name().to_vec());
            assert!(
                found.is_none() || found.as_deref() == Some(miss.as_bytes()),
                "{miss}"
            );
        }
        assert!(bundle.find(b"h1.example").is_none());
        assert!(
            bundle.find(b"H0.example").is_none(),
            "lookups take normalised names"
        );
    }
}

#[test]
fn duplicate_and_invalid_hosts_are_rejected() {
    let mut b = BundleBuilder::new(Config::new());
    b.add("a.example", Fetch::Unreachable).unwrap();
    let err = b.add("A.example:443", Fetch::Unreachable).unwrap_err();
    assert!(err.to_string().contains("'a.example' is given twice"), "{err}");
    for bad in ["", "a/b", "a b", "u@h"] {
        assert!(b.add(bad, Fetch::Unreachable).is_err(), "{bad:?}");
    }
}

/// A status outside 100-599 (LinkedIn's 999) is a failed fetch, not an
/// error that fails the build: the host is unreachable, so disallowed, and
/// it has an entry (its URLs are not `unknown`).
#[test]
fn a_status_outside_100_599_is_an_unreachable_host() {
    let mut b = BundleBuilder::new(Config::new());
    b.add("c.example", Fetch::http(99, 0, Vec::new())).unwrap();
    b.add("d.example", Fetch::Http { status: 999, body: b"x".to_vec() })
        .unwrap();
    b.add("e.example", Fetch::Unreadable).unwrap();
    let bytes = AlignedBytes::from(&b.finish().unwrap()[..]);
    let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
    for (host, status) in [
        ("c.example", FetchStatus::Unreachable),
        ("d.example", FetchStatus::Unreachable),
        ("e.example", FetchStatus::Unreadable),
    ] {
        let info = bundle.host(bundle.find(host.as_bytes()).unwrap());
        assert_eq!(info.rules(), HostRules::DisallowAll, "{host}");
        assert_eq!(info.status(), status, "{host}");
    }
}

/// A host without rules keeps the cause it was added with (cut at a
/// character boundary past 200 octets); a host with rules keeps none, and
/// the explanation of its URLs names the cause.
#[test]
fn causes_are_kept_for_hosts_without_rules() {
    let long = "é".repeat(150); // 300 octets
    let mut b = BundleBuilder::new(Config::new());
    let cases: [(&str, Fetch, &str); 6] = [
        ("a.example", Fetch::Unreachable, "connection refused"),
        ("b.example", Fetch::http(503, 0, vec![]), " HTTP 503 from x "),
        ("c.example", Fetch::http(404, 0, vec![]), ""),
        ("d.example", Fetch::http(200, 0, b"Disallow: /".to_vec()), "n"),
        ("e.example", Fetch::Http { status: 999, body: vec![] }, ""),
        ("f.example", Fetch::Unreadable, &long),
    ];
    for (host, fetch, cause) in cases {
        b.add_with_cause(host, fetch, cause).unwrap();
    }
    let bytes = AlignedBytes::from(&b.finish().unwrap()[..]);
    let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
    let cause = |host: &str| {
        bundle.host(bundle.find(host.as_bytes()).unwrap()).cause()
    };
    assert_eq!(cause("a.example"), Some("connection refused"));
    assert_eq!(cause("b.example"), Some("HTTP 503 from x"));
    assert_eq!(cause("c.example"), None);
    assert_eq!(cause("d.example"), None, "a host with rules keeps no cause");
    assert_eq!(cause("e.example"), Some("status 999 is not an HTTP status"));
    assert_eq!(cause("f.example"), Some(&long[..200]));

    let members = Arc::new(Members::new(&bundle));
    let checker = UrlChecker::bundle(&bundle, members, &["bot"]).unwrap();
    let mut cache = HostCache::new();
    let url = b"http://a.example/x";
    let target = checker.target(url, &mut cache).unwrap();
    let mut why = Vec::new();
    robofilter::write_why(&mut why, url, Some(target), 0);
    assert_eq!(
        String::from_utf8(why).unwrap(),
        "robots.txt unreachable (connection refused), unreachable: \
         disallow all (RFC 9309)"
    );
}

/// A version 3 bundle (written before the causes table) still loads:
/// the field that now counts causes was reserved and zero.
#[test]
fn a_version_3_bundle_still_loads() {
    let hosts = vec![
        ("a.example".to_string(), Fetch::Unreachable),
        (
            "b.example".to_string(),
            Fetch::http(200, 0, b"User-agent: *\nDisallow: /x\n".to_vec()),
        ),
    ];
    let mut v3 = build(&hosts, Config::new()).as_bytes().to_vec();
    v3[12..16].copy_from_slice(&3u32.to_le_bytes());
    v3[24..28].fill(0);
    let index_len = u64::from_le_bytes(v3[32..40].try_into().unwrap());
    let crc = crc32fast::hash(&v3[..index_len as usize]);
    v3[24..28].copy_from_slice(&crc.to_le_bytes());
    let v3 = AlignedBytes::from(&v3[..]);
    let bundle = Bundle::from_bytes(v3.as_bytes()).unwrap();
    let b = bundle.host(bundle.find(b"b.example").unwrap());
    assert!(matches!(b.rules(), HostRules::Member(0)));
    assert_eq!(bundle.host(0).cause(), None);
    let mut v2 = v3.as_bytes().to_vec();
    v2[12..16].copy_from_slice(&2u32.to_le_bytes());
    let v2 = AlignedBytes::from(&v2[..]);
    let err = Bundle::from_bytes(v2.as_bytes()).unwrap_err().to_string();
    assert!(err.contains("versions 3 to 4"), "{err}");
}

#[test]
fn empty_bundle_loads_and_knows_no_host() {
    let bytes = build(&[], Config::new());
    let bundle = Bundle::from_bytes(bytes.as_bytes()).unwrap();
    assert_eq!((bundle.host_len(), bundle.member_len()), (0, 0));
    assert!(bundle.find(b"a.example").is_none());
}

/// Every single-octet change and every truncation is rejected: when the
/// bundle opens (the index and its checksum), or when the member is loaded
/// (each member has its own checksum). No damaged byte ever yields a
/// verdict.
#[test]
fn damage_is_rejected_at_open_or_member_load() {
    let hosts = vec![
        (
            "a.example".to_string(),
            Fetch::http(200, 0, b"User-agent: *\nDisallow: /x\n".to_vec()),
        ),
        (
            "b.example".to_string(),
            Fetch::http(
                200,
                0,
                b"User-agent: b\nAllow: /\nDisallow: /*.pdf$\n".to_vec(),
            ),
        ),
        ("c.example".to_string(), Fetch::http(404, 0, Vec::new())),
    ];
    let mut b = BundleBuilder::new(Config::new());
    for (h, f) in hosts {
        b.add(&h, f).unwrap();
    }
    b.add_with_cause("d.example", Fetch::Unreachable, "connection refused")
        .unwrap();
    let good = AlignedBytes::from(&b.finish().unwrap()[..]);
    let good = good.as_bytes();
    let all_load = |bytes: &[u8]| -> bool {
        let bytes = AlignedBytes::from(bytes);
        let Ok(b) = Bundle::from_bytes(bytes.as_bytes()) else { return false };
        (0..b.member_len()).all(|m| b.member(m).is_ok())
    };
    assert!(all_load(good));
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80] {
            let mut bad = good.to_vec();
            bad[i] ^= flip;
            assert!(!all_load(&bad), "flip {flip:#x} at {i} accepted");
        }
    }
    for len in 0..good.len() {
        assert!(!all_load(&good[..len]), "truncation to {len} accepted");
    }
    let mut longer = good.to_vec();
    longer.push(0);
    assert!(!all_load(&longer));
}

#[test]
fn single_rules_files_are_not_bundles() {
    let single =
        Compiler::new().compile(b"User-agent: *\nDisallow: /\n").unwrap();
    assert!(!Bundle::is_bundle(&single));
    let single = AlignedBytes::from(&single[..]);
    let err = Bundle::from_bytes(single.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("bad magic"), "{err}");
}

/// A host cache emptied after one bundle's checker and taken up by
/// another's (as the wheel keeps one between calls) answers by the second
/// bundle, for a URL of the host the first one looked up last. (That the
/// first checker's targets cannot survive is the types' doing: they borrow
/// that checker. This checks the answers, whatever the cache keeps.)
#[test]
fn an_emptied_host_cache_forgets_its_last_host() {
    let body = |path: &str| format!("User-agent: *\nDisallow: {path}\n");
    let host = |path: &str| {
        let fetch = Fetch::http(200, 0, body(path).into_bytes());
        build(&[("a.example".to_string(), fetch)], Config::new())
    };
    let (one, two) = (host("/x"), host("/y"));
    let one = Bundle::from_bytes(one.as_bytes()).unwrap();
    let two = Bundle::from_bytes(two.as_bytes()).unwrap();
    let url = b"http://a.example/x";
    let decide = |bundle: &Bundle<'_>, cache: HostCache<'static, 'static>| {
        let members = Arc::new(Members::new(bundle));
        let checker = UrlChecker::bundle(bundle, members, &["bot"]).unwrap();
        let mut cache = cache;
        let outcome = checker.check(url, &mut cache).unwrap();
        (outcome, cache.emptied())
    };
    let (first, kept) = decide(&one, HostCache::new());
    assert_eq!(first, Outcome::Disallow);
    let (second, _) = decide(&two, kept);
    assert_eq!(second, Outcome::Allow);
}
