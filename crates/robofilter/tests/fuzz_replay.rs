//! Replays `data/fuzz/` (minimised fuzz findings and regression inputs)
//! with the checks of the fuzz target each file's name starts with.

use robofilter::{
    AlignedBytes, Bundle, Compiler, Config, Dialect, NoHostKey, Rules,
};

use crate::{lines_checks, path_checks};

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
    let compiled = Compiler::with_config(config).compile(robots);
    if !robofilter::InputKind::of(robots).is_text() {
        // Compressed or compiled input is refused, never read as text.
        assert!(compiled.is_err_and(|e| e.not_text().is_some()));
        return;
    }
    let bytes = compiled.unwrap();
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
        path_checks::check(&url);
        match path_checks::reference_host_key(&url) {
            Ok(_) => keyed += 1,
            Err(NoHostKey::Missing) => missing += 1,
            Err(NoHostKey::Ambiguous) => ambiguous += 1,
        }
        differ += usize::from(
            path_checks::reference_path(&url, true)
                != path_checks::reference_path(&url, false),
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

/// The lines checks on generated chunks: URL-ish lines ended by `\n`,
/// `\r\n` or nothing, some with fields, some with a stray `\r` or control
/// octet, padded by 0-39 octets so that line starts and ends fall
/// anywhere in the vector passes' 16- and 32-octet blocks; each chunk
/// whole and cut short, so that it ends anywhere too.
#[test]
fn lines_target_on_generated_chunks() {
    const ENDS: &[&[u8]] = &[
        b"\n",
        b"\r\n",
        b"\tfetched=1\n",
        b"\t\r\n",
        b" \n",
        b"\r",
        b"\x00",
        b"\n\n",
        b"",
    ];
    let urls = generated_urls(3000);
    let mut rng = crate::differential::Rng::new(0x11e5);
    let (mut url_lines, mut other_lines) = (0, 0);
    let mut chunk = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        chunk.extend_from_slice(url);
        // Runs of 'x' move the next line's start across block boundaries.
        chunk.resize(chunk.len() + rng.below(40), b'x');
        chunk.extend_from_slice(ENDS[rng.below(ENDS.len())]);
        if i % 8 == 7 {
            // Cut short, a chunk ends anywhere in a line or a block.
            for cut in [chunk.len(), chunk.len() / 2, chunk.len() / 3] {
                lines_checks::check(&chunk[..cut]);
            }
            for (_, _, url) in lines_checks::reference_lines(&chunk) {
                url_lines += usize::from(url.is_some());
                other_lines += usize::from(url.is_none());
            }
            chunk.clear();
        }
    }
    assert!(
        url_lines > 500 && other_lines > 500,
        "{url_lines} URL lines and {other_lines} others"
    );
}

/// The references themselves, on the examples docs/SEMANTICS.md and the module
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
            path_checks::reference_path(url, false),
            google,
            "{}",
            url.escape_ascii()
        );
        assert_eq!(
            path_checks::reference_path(url, true),
            rfc,
            "{}",
            url.escape_ascii()
        );
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
            path_checks::reference_host_key(url),
            want.map(<[u8]>::to_vec),
            "{}",
            url.escape_ascii()
        );
    }
}

/// The lines reference on the examples of `url_line`'s and the scan
/// crate's docs.
#[test]
fn lines_reference_on_documented_examples() {
    use lines_checks::reference_url;
    let urls: &[(&[u8], Option<&[u8]>)] = &[
        (
            b"https://example.com/a;b?c#top\r",
            Some(b"https://example.com/a;b?c#top"),
        ),
        (
            b"https://example.com/a b\tfetched=1\tscore=0.5",
            Some(b"https://example.com/a b"),
        ),
        (b"http://x/a \tdepth=2", None),
        (b"https://example.com/a ", None),
        (b"example.com/a", None),
        (b"s3+x://bucket/key", Some(b"s3+x://bucket/key")),
        (b"1http://x/", None),
        (b"http:/x", None),
        (b"http://x/a\x01b", None),
        (b"http://x/a\x7f", None),
        (b"http://x/\xc3\xa9", Some(b"http://x/\xc3\xa9")),
    ];
    for &(line, want) in urls {
        assert_eq!(reference_url(line), want, "{}", line.escape_ascii());
    }
    let lines =
        lines_checks::reference_lines(b"http://x/a\r\nnot a url\nhttp://y/");
    let got: Vec<_> = lines
        .iter()
        .map(|(s, l, u)| (*s, *l, u.as_ref().map(|u| u.0)))
        .collect();
    assert_eq!(
        got,
        [
            (0, 11, Some(&b"http://x/a"[..])),
            (12, 9, None),
            (22, 9, Some(&b"http://y/"[..]))
        ]
    );
    assert_eq!(
        lines[0].2.as_ref().map(|u| &u.1),
        Some(&[b"/a".to_vec(), b"/a".to_vec()])
    );
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
        Some("path") => path_checks::check(data),
        Some("lines") => lines_checks::check(data),
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
