//! Tests: the SSE2, AVX2 and portable passes, alone and in the chunk loop, against a naive byte-by-byte oracle.

use core::ops::ControlFlow;
use std::string::ToString;
use std::vec;
use std::vec::Vec;

use super::{
    Baseline, Line, find, portable, scan, scan_each, scan_each_with,
    scan_lines, scan_lines_with, scan_next, scan_next_with, scan_with,
};

/// The definition, one octet at a time (the oracle).
fn naive(buf: &[u8], len: usize) -> Option<Line> {
    let mut whole = &buf[..len];
    if whole.last() == Some(&b'\r') {
        whole = &whole[..len - 1];
    }
    let line = match whole.iter().position(|&b| b == b'\t') {
        Some(tab) => &whole[..tab],
        None => whole,
    };
    if line.iter().any(|&b| b.is_ascii_control()) || line.ends_with(b" ") {
        return None;
    }
    if !line.first()?.is_ascii_alphabetic() {
        return None;
    }
    let mut n = 1;
    while n < line.len()
        && (line[n].is_ascii_alphanumeric() || b"+.-".contains(&line[n]))
    {
        n += 1;
    }
    if !line[n..].starts_with(b"://") {
        return None;
    }
    let first =
        |set: &[u8]| (n + 3..line.len()).find(|&k| set.contains(&line[k]));
    Some(Line {
        url_len: line.len(),
        line_len: whole.len(),
        scheme_len: n,
        authority_end: first(b"/?#").unwrap_or(line.len()),
        path_start: first(b"/?;"),
        fragment: first(b"#"),
    })
}

/// [`scan`] with the portable pass in place of the SSE2 one.
fn scan_portable(buf: &[u8], len: usize) -> Option<Line> {
    let line_len = match buf[..len].last() {
        Some(b'\r') => len - 1,
        _ => len,
    };
    let scheme_len = super::scheme_len(&buf[..line_len])?;
    let found = portable::find(buf, line_len, scheme_len + 3);
    if found.url_end < line_len && buf[found.url_end] != b'\t' {
        return None;
    }
    found.line(buf, line_len, scheme_len)
}

/// What [`scan_next`] must give: the first `\n` (or the end), and
/// [`scan`] of the line before it.
fn next_by_memchr(buf: &[u8]) -> (usize, Option<Line>) {
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    (end, naive(buf, end))
}

/// Every implementation on `buf[..len]`, against the oracle.
fn check(buf: &[u8], len: usize) {
    let want = naive(buf, len);
    let show = || buf[..len].escape_ascii().to_string();
    assert_eq!(scan(buf, len), want, "scan {:?} (len {len})", show());
    // SAFETY: the baseline pass needs nothing of the CPU.
    let baseline = unsafe { scan_with::<Baseline>(buf, len) };
    assert_eq!(baseline, want, "baseline {:?}", show());
    assert_eq!(scan_portable(buf, len), want, "portable {:?}", show());
    // The line as the start of a frontier chunk: alone, ended by `\n`, and
    // followed by more of the chunk.
    let next = next_by_memchr(buf);
    assert_eq!(scan_next(buf), next, "next {:?}", show());
    // SAFETY: as above.
    let baseline = unsafe { scan_next_with::<Baseline>(buf) };
    assert_eq!(baseline, next, "baseline next {:?}", show());
    if !buf[..len].contains(&b'\n') {
        let mut chunk = buf[..len].to_vec();
        assert_eq!(scan_next(&chunk), (len, want), "last {:?}", show());
        chunk.push(b'\n');
        chunk.extend_from_slice(&buf[len..]);
        assert_eq!(scan_next(&chunk), (len, want), "line {:?}", show());
    }
    if let Some(line) = want {
        // The facts' documented bounds.
        let from = line.authority_start();
        assert!(from <= line.authority_end());
        assert!(line.authority_end() <= line.url_len());
        assert!(line.url_len() <= line.line_len());
        match line.fields() {
            Some(f) => assert_eq!(buf[f - 1], b'\t'),
            None => assert_eq!(line.url_len(), line.line_len()),
        }
        for k in [line.path_start(), line.fragment()].into_iter().flatten() {
            assert!((from..line.url_len()).contains(&k));
        }
    }
    // The same pass on both targets agrees on the raw facts too.
    if let Some(line) = want {
        let from = line.scheme_len() + 3;
        for limit in [line.line_len(), buf.len()] {
            let portable = portable::find(buf, limit, from);
            assert_eq!(find(buf, limit, from), portable);
            #[cfg(target_arch = "x86_64")]
            if super::avx2::available() {
                // SAFETY: the CPU has AVX2.
                let avx2 = unsafe { super::avx2::find(buf, limit, from) };
                assert_eq!(avx2, portable);
            }
        }
    }
}

#[test]
fn examples() {
    let url = |s: &str| scan(s.as_bytes(), s.len());
    let facts = |s: &str| {
        let l = url(s).unwrap();
        (l.scheme_len(), l.authority_end(), l.path_start(), l.fragment())
    };
    assert_eq!(facts("http://a/b"), (4, 8, Some(8), None));
    assert_eq!(facts("http://a"), (4, 8, None, None));
    assert_eq!(facts("http://u;x@a/p"), (4, 12, Some(8), None));
    assert_eq!(facts("http://a#f/x"), (4, 8, Some(10), Some(8)));
    assert_eq!(facts("http://a?q#f"), (4, 8, Some(8), Some(10)));
    assert_eq!(facts("s3+x.y-z://b/k"), (8, 12, Some(12), None));
    assert_eq!(facts("h://\u{e9}/\u{e9}"), (1, 6, Some(6), None));
    assert_eq!(url("http://a/\r").unwrap().url_len(), 9);
    // Spaces inside the URL; a TAB ends it, and the fields hold anything.
    assert_eq!(facts("http://a/ b"), (4, 8, Some(8), None));
    assert_eq!(facts("http://a b/c d"), (4, 10, Some(10), None));
    let fields =
        |s: &str| url(s).map(|l| (l.url_len(), l.line_len(), l.fields()));
    assert_eq!(fields("http://a/\tb"), Some((9, 11, Some(10))));
    assert_eq!(fields("http://a/\t"), Some((9, 10, Some(10))));
    assert_eq!(fields("http://a/\t\t\x00 #/\r\r"), Some((9, 16, Some(10))));
    assert_eq!(fields("http://a\t/x#y"), Some((8, 13, Some(9))));
    assert_eq!(facts("http://a\t/x#y"), (4, 8, None, None));
    assert_eq!(fields("http://a/ x\t \r"), Some((11, 13, Some(12))));
    for bad in [
        "",
        "\r",
        "\r\r",
        "http://a/\r\r",
        "http://a/\rx",
        "http://a/ ",
        "http://a/ \tb",
        "http://a/ \r",
        "http:\t//a/",
        "\thttp://a/",
        "http://a/\x7f",
        "http://a/\x7f\tx",
        "http://a/\x00\tx",
        "http://a/\x00",
        " http://a/",
        "1http://a/",
        "://a/",
        "http:/a",
        "http//a",
        "a.example/p",
        "ht tp://a/",
    ] {
        assert_eq!(url(bad), None, "{bad:?}");
    }
}

/// A control octet, a TAB or a space in any lane of any block, and a `#` or `/`
/// in any lane, at every length around the block size, before and after
/// the path's start.
#[test]
fn every_lane_of_every_block() {
    // Without a path, and with one from the start (the pass's second
    // phase then sees every lane).
    for (base, len) in [&b"http://"[..], b"http://a/"]
        .into_iter()
        .flat_map(|base| (base.len() + 1..80).map(move |len| (base, len)))
    {
        let mut line = Vec::from(base);
        line.resize(len, b'a');
        check(&line, len);
        for k in 0..len {
            for b in [
                b'/', b'?', b';', b'#', b' ', b'\t', 0, 0x1f, 0x7f, 0x80, 0xff,
            ] {
                let mut l = line.clone();
                l[k] = b;
                check(&l, len);
                // The line inside a longer chunk whose tail is all control
                // octets and spaces.
                l.extend_from_slice(&[b' ', 0, b'\t', 0x7f].repeat(5));
                check(&l, len);
            }
        }
    }
}

/// The octets that change the answer, runs that cross blocks, and chunk
/// tails from none to more than a block.
const PIECES: &[&[u8]] = &[
    b"/",
    b"?",
    b";",
    b"#",
    b":",
    b"//",
    b"://",
    b" ",
    b"\r",
    b"\t",
    b"\n",
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"\x80",
    b"\xff",
    b"\xe3\x83\x84",
    b"a",
    b"Z",
    b"0",
    b"+",
    b".",
    b"-",
    b"%2F",
    b"@",
    b"xxxxxxxxxxxxxxx",
    b"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
];

/// A xorshift generator from `seed`: `next(n)` is below `n`.
fn xorshift(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

#[test]
fn random_lines_against_the_oracle() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut buf = Vec::new();
    let (mut urls, mut lines) = (0, 0);
    for _ in 0..250_000 {
        buf.clear();
        // Mostly lines that start like a URL, so that the rest matters.
        match next(8) {
            0 => {}
            1 => buf.extend_from_slice(b"h"),
            2 => buf.extend_from_slice(b"s3+x.y-z://"),
            _ => buf.extend_from_slice(b"https://"),
        }
        for _ in 0..next(24) {
            // Control octets and spaces less often than the rest.
            let piece = PIECES[next(PIECES.len())];
            if piece.iter().any(|&b| b <= b' ' || b == 0x7f) && next(3) != 0 {
                continue;
            }
            buf.extend_from_slice(piece);
        }
        if next(4) == 0 {
            buf.push(b'\r');
        }
        let len = buf.len();
        // The rest of the chunk: nothing, a partial block or more.
        for _ in 0..[0, 1, 7, 15, 16, 17, 40][next(7)] {
            buf.push(PIECES[next(PIECES.len())][0]);
        }
        check(&buf, len);
        lines += 1;
        urls += usize::from(naive(&buf, len).is_some());
    }
    // The generator reaches both answers often.
    assert!(urls > lines / 4 && urls < lines * 3 / 4, "{urls} of {lines}");
}

/// Every line of up to five octets after `h://` over the octets that
/// matter.
#[test]
fn every_short_line() {
    const ALPHABET: &[u8] = b"/?;#: \t\r\x00\x7fa\xff";
    let mut line = Vec::from(&b"h://"[..]);
    let mut count = 0;
    for n in 0..=5u32 {
        for mut code in 0..ALPHABET.len().pow(n) {
            line.truncate(4);
            for _ in 0..n {
                line.push(ALPHABET[code % ALPHABET.len()]);
                code /= ALPHABET.len();
            }
            check(&line, line.len());
            count += 1;
        }
    }
    assert_eq!(count, (0..=5).map(|n| ALPHABET.len().pow(n)).sum::<usize>());
}

#[test]
fn public_types_are_send_and_sync() {
    fn is<T: Send + Sync + Unpin>() {}
    is::<Line>();
}

/// The tests above check the AVX2 pass (through [`scan`] and
/// [`scan_next`], and its raw facts) only where the CPU has AVX2: say so
/// where it does not.
#[test]
fn avx2_is_checked_where_the_cpu_has_it() {
    #[cfg(target_arch = "x86_64")]
    if super::avx2::available() {
        assert!(std::is_x86_feature_detected!("avx2"));
        return;
    }
    std::println!(
        "skipping: no AVX2 here; only the SSE2 or portable pass was checked"
    );
}

/// The lines of `chunk` as `scan_lines` must give them: the oracle's
/// [`next_by_memchr`] from each line's start.
fn lines_by_memchr(chunk: &[u8]) -> Vec<(usize, usize, Option<Line>)> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chunk.len() {
        let (len, line) = next_by_memchr(&chunk[start..]);
        lines.push((start, len, line));
        start += len + 1;
    }
    lines
}

/// The lines `scan_lines` gives for `chunk`, with the public pass and
/// with the baseline one.
fn scanned_lines(chunk: &[u8]) -> [Vec<(usize, usize, Option<Line>)>; 2] {
    let mut public = Vec::new();
    let _ = scan_lines(chunk, |start, len, line| {
        public.push((start, len, line));
        ControlFlow::<()>::Continue(())
    });
    let mut baseline = Vec::new();
    // SAFETY: the baseline pass needs nothing of the CPU.
    let _ = unsafe {
        scan_lines_with::<Baseline, ()>(chunk, |start, len, line| {
            baseline.push((start, len, line));
            ControlFlow::Continue(())
        })
    };
    [public, baseline]
}

#[test]
fn scan_lines_is_scan_next_line_by_line() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let starts: &[&[u8]] =
        &[b"https://", b"http://", b"s3+x://", b"h", b"", b"\r", b"\t"];
    let mut total = 0;
    for _ in 0..20_000 {
        // A chunk of up to 12 lines, the last one with or without `\n`.
        let mut chunk = Vec::new();
        for _ in 0..next(12) {
            chunk.extend_from_slice(starts[next(starts.len())]);
            for _ in 0..next(20) {
                chunk.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            if next(4) == 0 {
                chunk.push(b'\r');
            }
            chunk.push(b'\n');
        }
        if next(2) == 0 {
            chunk.pop();
        }
        let want = lines_by_memchr(&chunk);
        let show = chunk.escape_ascii().to_string();
        for got in scanned_lines(&chunk) {
            assert_eq!(got, want, "{show:?}");
        }
        total += want.len();
    }
    assert!(total > 50_000, "{total} lines");
}

#[test]
fn scan_lines_stops_where_told() {
    let chunk = b"http://a/\nnot\nhttp://b/\nhttp://c/";
    let mut seen = Vec::new();
    let stop = scan_lines(chunk, |start, _, line| {
        seen.push(start);
        match line {
            Some(l) if chunk[start..].starts_with(b"http://b") => {
                ControlFlow::Break(l.url_len())
            }
            _ => ControlFlow::Continue(()),
        }
    });
    assert_eq!(stop, ControlFlow::Break(9));
    assert_eq!(seen, [0, 10, 14]);
}

#[test]
fn scan_each_is_scan_value_by_value() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let starts: &[&[u8]] =
        &[b"https://", b"http://", b"s3+x://", b"h", b"", b"\r", b"\t"];
    let mut total = 0;
    for _ in 0..5_000 {
        // Up to 12 values one after another in one buffer, as an Arrow
        // string array keeps them: a value's scan may read on into the
        // next ones, which must not change its answer.
        let (mut data, mut offsets) = (Vec::new(), vec![0]);
        for _ in 0..next(12) {
            data.extend_from_slice(starts[next(starts.len())]);
            for _ in 0..next(20) {
                data.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            if next(4) == 0 {
                data.push(b'\r');
            }
            offsets.push(data.len());
        }
        let n = offsets.len() - 1;
        let value =
            |i: usize| (&data[offsets[i]..], offsets[i + 1] - offsets[i]);
        let want: Vec<_> = (0..n)
            .map(|i| {
                (
                    i,
                    scan(
                        &data[offsets[i]..offsets[i + 1]],
                        offsets[i + 1] - offsets[i],
                    ),
                )
            })
            .collect();
        let mut public = Vec::new();
        let _ = scan_each(n, value, |i, buf, line| {
            assert_eq!(buf.as_ptr(), data[offsets[i]..].as_ptr());
            public.push((i, line));
            ControlFlow::<()>::Continue(())
        });
        let mut baseline = Vec::new();
        // SAFETY: the baseline pass needs nothing of the CPU.
        let _ = unsafe {
            scan_each_with::<Baseline, ()>(n, value, |i, _, line| {
                baseline.push((i, line));
                ControlFlow::Continue(())
            })
        };
        let show = data.escape_ascii().to_string();
        assert_eq!(public, want, "{show:?}");
        assert_eq!(baseline, want, "{show:?}");
        total += n;
    }
    assert!(total > 20_000, "{total} values");
    let stop = scan_each(
        3,
        |i| (&b"http://a/http://b/"[i * 9 % 18..], 9),
        |i, _, _| match i {
            1 => ControlFlow::Break(i),
            _ => ControlFlow::Continue(()),
        },
    );
    assert_eq!(stop, ControlFlow::Break(1));
}
