//! The `lines` fuzz target's checks: a frontier chunk read line by line by
//! each of the library's readers (`for_each_url_line`, `next_url_line`,
//! `url_line`, built on robofilter-scan's vector passes), against a plain
//! reference. Shared by the fuzz target (`lines.rs` beside this file) and
//! the default test run (`tests/main.rs` includes this file,
//! `tests/fuzz_replay.rs` runs it and `tests/url_line.rs` uses its
//! reference), so that they never drift apart.
//!
//! The readers hold the only `unsafe` code of the workspace (the SIMD loads
//! of the scan crate), and a chunk's last block is where a vector pass
//! could read past its end or lose a line: the fuzzer's inputs end
//! anywhere.

use core::ops::ControlFlow;

use robofilter::{Dialect, for_each_url_line, next_url_line, url_line};

use super::path_checks::reference_path;

/// One line of a chunk as a reader reports it: where it starts, its
/// length without its `\n` (a `\r` before it included), and its URL with
/// the URL's path in the google and the rfc9309 reading.
pub type LineFacts<'c> = (usize, usize, Option<(&'c [u8], [Vec<u8>; 2])>);

/// The URL of a frontier line (without its `\n`), as docs/SEMANTICS.md section
/// 4b defines it: after one trailing `\r` is stripped, the line up to its
/// first TAB, if it starts with `[A-Za-z][A-Za-z0-9+.-]*://`, holds no ASCII
/// control octet and does not end with a space.
pub fn reference_url(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let url = match line.iter().position(|&b| b == b'\t') {
        Some(tab) => &line[..tab],
        None => line,
    };
    if url.iter().any(u8::is_ascii_control) || url.ends_with(b" ") {
        return None;
    }
    let (first, rest) = url.split_first()?;
    let scheme = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || b"+.-".contains(b))
        .count();
    (first.is_ascii_alphabetic() && rest[scheme..].starts_with(b"://"))
        .then_some(url)
}

/// The lines of `chunk` as the reference reads them: split at every `\n`;
/// the last line may lack one, and nothing follows a final `\n`.
pub fn reference_lines(chunk: &[u8]) -> Vec<LineFacts<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chunk.len() {
        let end = chunk[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(chunk.len(), |k| start + k);
        let url = reference_url(&chunk[start..end]).map(|url| {
            (url, [reference_path(url, false), reference_path(url, true)])
        });
        lines.push((start, end - start, url));
        start = end + 1;
    }
    lines
}

/// A reader's URL and path as [`LineFacts`] (its path in both readings).
fn facts<'c>(
    url: Option<(&'c [u8], robofilter::MatchPath<'_>)>,
) -> Option<(&'c [u8], [Vec<u8>; 2])> {
    url.map(|(url, path)| {
        let read = |d| path.for_dialect(url, d).to_vec();
        (url, [read(Dialect::Google), read(Dialect::Rfc9309)])
    })
}

/// The target: every reader on `data` as one chunk agrees with the
/// reference, and a reader told to stop after a line stops there (the
/// first octet picks which).
pub fn check(data: &[u8]) {
    let want = reference_lines(data);
    let show = || data.escape_ascii().to_string();

    let mut got = Vec::new();
    let done = for_each_url_line(data, |start, len, url| {
        got.push((start, len, facts(url)));
        ControlFlow::<()>::Continue(())
    });
    assert_eq!(done, ControlFlow::Continue(()));
    assert_eq!(got, want, "for_each_url_line {:?}", show());

    let mut got = Vec::new();
    let mut start = 0;
    while start < data.len() {
        let (len, url) = next_url_line(&data[start..]);
        got.push((start, len, facts(url)));
        start += len + 1;
    }
    assert_eq!(got, want, "next_url_line {:?}", show());

    for &(start, len, ref url) in &want {
        // Followed by the rest of the chunk, and alone.
        for rest in [&data[start..], &data[start..start + len]] {
            let got = facts(url_line(rest, len));
            assert_eq!(&got, url, "url_line at {start} {:?}", show());
        }
    }

    let Some(&stop) = data.first() else { return };
    let stop = usize::from(stop) % (want.len() + 1);
    let mut seen = 0;
    let done = for_each_url_line(data, |_, _, _| {
        seen += 1;
        match seen > stop {
            true => ControlFlow::Break(seen),
            false => ControlFlow::Continue(()),
        }
    });
    match stop < want.len() {
        true => assert_eq!(done, ControlFlow::Break(stop + 1), "{:?}", show()),
        false => assert_eq!(done, ControlFlow::Continue(()), "{:?}", show()),
    }
}
