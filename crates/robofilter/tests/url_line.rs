//! `robofilter::url_line` (the CLI's and the wheel's line classifier, built
//! on the robofilter-scan crate) against its definition: the scheme
//! grammar, the TAB that ends the URL, the control-octet and trailing-space
//! rules and `MatchPath::from_url`.

use robofilter::{MatchPath, url_line};

use crate::lines_checks::reference_url;

/// The definition, written out ([`reference_url`], the lines fuzz
/// target's reference); its path is `MatchPath::from_url`'s.
fn oracle(line: &[u8]) -> Option<(&[u8], MatchPath<'_>)> {
    reference_url(line).map(|url| (url, MatchPath::from_url(url)))
}

#[test]
fn url_line_matches_its_definition_on_random_lines() {
    const PIECES: &[&[u8]] = &[
        b"/",
        b"?",
        b";",
        b"#",
        b":",
        b"//",
        b"://",
        b"@",
        b"%",
        b" ",
        b"\r",
        b"\t",
        b"\x00",
        b"\x7f",
        b"\x80",
        b"\xe3\x83\x84",
        b"a",
        b"1",
        b"+",
        b"xxxxxxxxxxxxxxxxxxxxxxx",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut buf = Vec::new();
    let mut urls = 0;
    for _ in 0..200_000 {
        buf.clear();
        buf.extend_from_slice(
            [&b""[..], b"h", b"s3+x://", b"http://"][next(4)],
        );
        for _ in 0..next(16) {
            buf.extend_from_slice(PIECES[next(PIECES.len())]);
        }
        let (len, line) = (buf.len(), buf.clone());
        let want = oracle(&line);
        urls += usize::from(want.is_some());
        // Alone, and followed by more of the caller's chunk.
        for tail in
            [&b""[..], b"\n#/ x\x00?http://y/", b"\n/a;b#cccccccccccccccc"]
        {
            buf.truncate(len);
            buf.extend_from_slice(tail);
            assert_eq!(
                url_line(&buf, len),
                want,
                "{:?}",
                buf[..len].escape_ascii().to_string()
            );
        }
    }
    assert!(urls > 20_000, "only {urls} URL lines");
}
