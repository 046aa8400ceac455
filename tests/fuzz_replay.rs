//! Replays `data/fuzz/` (minimised fuzz findings and regression inputs)
//! with the checks of the fuzz target each file's name starts with.

use robofilter::{
    AlignedBytes, Bundle, Compiler, Config, Dialect, MatchPath, NoHostKey,
    Rules, url_authority, url_host_key,
};

/// The compile target: flags octet (bit 0: google; bits 1-3: budget), the
/// robots.txt up to 0xFF, URLs separated by `\n`; `decide` must equal the
/// direct matcher's verdict.
fn compile(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let (robots, urls) = match rest.iter().position(|&b| b == 0xFF) {
        Some(k) => (&rest[..k], &rest[k + 1..]),
        None => (rest, &b""[..]),
    };
    let dialect =
        if flags & 1 == 0 { Dialect::Rfc9309 } else { Dialect::Google };
    let mut config = Config::new().dialect(dialect);
    config = match (flags >> 1) & 7 {
        0 | 1 => config.dfa_state_limit(256),
        2 => config.dfa_state_limit(1),
        3 => config.dfa_state_limit(4),
        4 => config.dfa_byte_limit(0),
        5 => config.dfa_byte_limit(512),
        6 => config.dfa_state_limit(16).dfa_byte_limit(2048),
        _ => config.dfa_work_limit(64),
    };
    let bytes = Compiler::with_config(config).compile(robots).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    for agent in ["FooBot", "*", "robofilter-fuzz"] {
        let m = rules.matcher(agent).unwrap();
        for url in urls.split(|&b| b == b'\n').take(16) {
            assert_eq!(m.decide(url), m.explain(url).verdict(), "{agent}");
        }
    }
}

/// The load target: arbitrary bytes as a rules file and as a bundle; when
/// they load, every accessor runs without panicking.
fn load(data: &[u8]) {
    let bytes = AlignedBytes::from(data);
    if let Ok(rules) = Rules::from_bytes(bytes.as_bytes()) {
        let _ = rules.groups().count();
        let _ = rules.agents().count();
        for agent in ["FooBot", "googlebot"] {
            if let Ok(m) = rules.matcher(agent) {
                let _ = m.decide(b"http://x/a?b");
                let _ = m.explain(b"http://x/");
            }
        }
    }
    if let Ok(bundle) = Bundle::from_bytes(bytes.as_bytes()) {
        let _ = bundle.hosts().count();
        for m in 0..bundle.member_len() {
            let _ = bundle.member(m);
        }
    }
}

/// The path target: the path in both dialects and the host key, each
/// against a reference written out step by step here, never through the
/// library's own helpers. `fuzz/fuzz_targets/path.rs` runs the same checks
/// with the same references; keep the two in step.
fn path(data: &[u8]) {
    for dialect in [Dialect::Google, Dialect::Rfc9309] {
        let path = MatchPath::parse(data, dialect);
        let want = reference_path(data, dialect == Dialect::Rfc9309);
        assert_eq!(path.to_vec(), want, "{dialect:?} {}", data.escape_ascii());
        // The same path from the google reading's result, as the line scan
        // gets it, and from the tail alone.
        assert_eq!(
            MatchPath::from_url(data).for_dialect(data, dialect),
            path,
            "{dialect:?} {}",
            data.escape_ascii()
        );
        let tail = path.tail();
        if !tail.is_empty() {
            let at = tail.as_ptr() as usize - data.as_ptr() as usize;
            assert!(at + tail.len() <= data.len());
            assert_eq!(MatchPath::from_url_path(tail), path);
        }
    }
    assert_eq!(
        MatchPath::from_url(data),
        MatchPath::parse(data, Dialect::Google)
    );

    // What `out` held before must not survive either outcome.
    let mut key = b"stale".to_vec();
    let got = url_host_key(data, &mut key).map(|()| key.clone());
    assert_eq!(got, reference_host_key(data), "{}", data.escape_ascii());
    if got.is_err() {
        assert!(key.is_empty(), "{}", data.escape_ascii());
    }
    let mut out = b"stale".to_vec();
    assert_eq!(url_authority(data, &mut out), got.is_ok());
    assert_eq!(out, got.unwrap_or_default());
}

/// The matchable path, written out from google/robotstxt's
/// `GetPathParamsQuery` (robots.cc) with `find`-style searches. `rfc9309`
/// applies SEMANTICS.md section 4 item 5: when a scheme is recognised or
/// the URL starts with `//`, the path starts at the first `/ ? #` after the
/// authority instead of the first `/ ? ;`; everything else is the same.
fn reference_path(url: &[u8], rfc9309: bool) -> Vec<u8> {
    let find = |from: usize, set: &[u8]| {
        (from..url.len()).find(|&i| set.contains(&url[i]))
    };
    let find_str = |from: usize, needle: &[u8]| {
        (from..url.len()).find(|&i| url[i..].starts_with(needle))
    };
    let search_start = if url.starts_with(b"//") { 2 } else { 0 };
    let early_path = find(search_start, b"/?;");
    let mut protocol_end = find_str(search_start, b"://");
    if let (Some(e), Some(p)) = (early_path, protocol_end)
        && e < p
    {
        protocol_end = None;
    }
    let has_authority = protocol_end.is_some() || search_start == 2;
    let protocol_end = protocol_end.map_or(search_start, |p| p + 3);
    let stops: &[u8] = if rfc9309 && has_authority { b"/?#" } else { b"/?;" };
    let Some(path_start) = find(protocol_end, stops) else {
        return b"/".to_vec();
    };
    let hash = find(search_start, b"#");
    if hash.is_some_and(|h| h < path_start) {
        return b"/".to_vec();
    }
    let path_end = hash.unwrap_or(url.len());
    let mut out = Vec::new();
    if url[path_start] != b'/' {
        out.push(b'/');
    }
    out.extend_from_slice(&url[path_start..path_end]);
    out
}

/// The bundle host key as src/url.rs's module docs define it, written out:
/// `scheme://` (a letter, then letters, digits, `+ - .`), the authority up
/// to the first `/ ? #`, ambiguous if it holds an octet RFC 3986 forbids
/// there (checked first, on the whole authority), the host after the last
/// `@`, an IPv6 literal up to its `]`, otherwise up to the first `:`;
/// missing if the host is empty; lower-cased; the port kept unless it is
/// empty, `80` or `443`.
fn reference_host_key(url: &[u8]) -> Result<Vec<u8>, NoHostKey> {
    let mut i = 0;
    while i < url.len()
        && (url[i].is_ascii_alphanumeric() || b"+-.".contains(&url[i]))
    {
        i += 1;
    }
    if i == 0 || !url[0].is_ascii_alphabetic() || !url[i..].starts_with(b"://")
    {
        return Err(NoHostKey::Missing);
    }
    let mut authority = Vec::new();
    for &b in &url[i + 3..] {
        if b == b'/' || b == b'?' || b == b'#' {
            break;
        }
        authority.push(b);
    }
    for &b in &authority {
        let forbidden = b <= 0x1f
            || b == 0x7f
            || matches!(
                b,
                b' ' | b'\\'
                    | b'"'
                    | b'<'
                    | b'>'
                    | b'^'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
            );
        if forbidden {
            return Err(NoHostKey::Ambiguous);
        }
    }
    if let Some(at) = authority.iter().rposition(|&b| b == b'@') {
        authority.drain(..=at);
    }
    let host_len = if authority.first() == Some(&b'[') {
        authority
            .iter()
            .position(|&b| b == b']')
            .map_or(authority.len(), |k| k + 1)
    } else {
        authority.iter().position(|&b| b == b':').unwrap_or(authority.len())
    };
    if host_len == 0 {
        return Err(NoHostKey::Missing);
    }
    let port = authority.split_off(host_len);
    if port != b"" && port != b":" && port != b":80" && port != b":443" {
        authority.extend_from_slice(&port);
    }
    Ok(authority.to_ascii_lowercase())
}

/// URL-ish strings from the pieces that decide paths and host keys.
fn generated_urls(n: usize) -> Vec<Vec<u8>> {
    const PIECES: &[&[u8]] = &[
        b"http",
        b"HTTPS",
        b"s3+x",
        b"h",
        b"1",
        b":",
        b"//",
        b"://",
        b"/",
        b"?",
        b";",
        b"#",
        b"@",
        b"[",
        b"]",
        b"::1",
        b":80",
        b":443",
        b":8080",
        b"A.Example",
        b"b",
        b".",
        b"\\",
        b" ",
        b"|",
        b"%41",
        b"\x01",
        b"\x7f",
        b"\xc3\xa9",
    ];
    let mut rng = crate::differential::Rng::new(0x4ea1);
    (0..n)
        .map(|_| {
            // Half of them start like a URL, so that the authority rules
            // (not only the scheme check) are reached often.
            let mut url =
                if rng.one_in(2) { b"http://".to_vec() } else { Vec::new() };
            for _ in 0..rng.below(9) {
                url.extend_from_slice(PIECES[rng.below(PIECES.len())]);
            }
            url
        })
        .collect()
}

/// The path checks on generated inputs, beyond the seeds in data/fuzz/.
#[test]
fn path_target_on_generated_urls() {
    let (mut keyed, mut missing, mut ambiguous, mut differ) = (0, 0, 0, 0);
    for url in generated_urls(5000) {
        path(&url);
        match reference_host_key(&url) {
            Ok(_) => keyed += 1,
            Err(NoHostKey::Missing) => missing += 1,
            Err(NoHostKey::Ambiguous) => ambiguous += 1,
        }
        differ += usize::from(
            reference_path(&url, true) != reference_path(&url, false),
        );
    }
    // Every outcome is reached often enough for the comparison to mean
    // something.
    assert!(
        keyed > 500 && missing > 500 && ambiguous > 500 && differ > 100,
        "{keyed} keyed, {missing} missing, {ambiguous} ambiguous, {differ} \
         paths that differ between the dialects"
    );
}

/// The references themselves, on the examples SEMANTICS.md and the module
/// docs of src/url.rs give (a reference that agrees with a wrong library
/// on random strings would still fail here).
#[test]
fn path_references_on_documented_examples() {
    let paths: &[(&[u8], &[u8], &[u8])] = &[
        // (url, google, rfc9309)
        (
            b"http://u;x@a.example/private/x",
            b"/;x@a.example/private/x",
            b"/private/x",
        ),
        (b"//u;x@a.example/p", b"/;x@a.example/p", b"/p"),
        (b"http://x;a?q;r", b"/;a?q;r", b"/?q;r"),
        (b"http://x#frag/a", b"/", b"/"),
        (b"example.com?a", b"/?a", b"/?a"),
        (b"a;b/c", b"/;b/c", b"/;b/c"),
        (
            b"http://www.example.com/a/b?c=d&e=f#fragment",
            b"/a/b?c=d&e=f",
            b"/a/b?c=d&e=f",
        ),
        (b"", b"/", b"/"),
    ];
    for &(url, google, rfc) in paths {
        assert_eq!(
            reference_path(url, false),
            google,
            "{}",
            url.escape_ascii()
        );
        assert_eq!(reference_path(url, true), rfc, "{}", url.escape_ascii());
    }
    type KeyCase = (&'static [u8], Result<&'static [u8], NoHostKey>);
    let keys: &[KeyCase] = &[
        (b"HTTPS://User@WWW.Example.com:443/a", Ok(b"www.example.com")),
        (b"http://b.example:443/x", Ok(b"b.example")),
        (b"http://example.com:8080?q", Ok(b"example.com:8080")),
        (b"http://[::1]:80/", Ok(b"[::1]")),
        (b"/relative", Err(NoHostKey::Missing)),
        (b"http://u@/x", Err(NoHostKey::Missing)),
        (b"http://b.example\\@a.example/", Err(NoHostKey::Ambiguous)),
    ];
    for &(url, want) in keys {
        assert_eq!(
            reference_host_key(url),
            want.map(<[u8]>::to_vec),
            "{}",
            url.escape_ascii()
        );
    }
}

fn replay(name: &str, data: &[u8]) {
    match name.split('-').next() {
        Some("parse") => {
            for d in [Dialect::Google, Dialect::Rfc9309] {
                let parsed = Compiler::with_config(Config::new().dialect(d))
                    .parse(data);
                for g in parsed.groups() {
                    for r in g.rules() {
                        assert!((1..=parsed.line_len()).contains(&r.line()));
                    }
                }
            }
        }
        Some("compile") => compile(data),
        Some("load") => load(data),
        Some("path") => path(data),
        _ => panic!("data/fuzz/{name}: no target named by its prefix"),
    }
}

#[test]
fn fuzz_findings_replay() {
    let dir = crate::util::data_dir().join("fuzz");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    assert!(!names.is_empty(), "data/fuzz/ has no inputs");
    for name in &names {
        let data = std::fs::read(dir.join(name)).unwrap();
        replay(name, &data);
    }
    // The damaged golden file must not load.
    let flipped = std::fs::read(dir.join("load-golden-flipped")).unwrap();
    assert!(
        Rules::from_bytes(AlignedBytes::from(&flipped[..]).as_bytes())
            .is_err()
    );
}
