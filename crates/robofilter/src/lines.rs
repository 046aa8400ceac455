//! Frontier lines and Arrow column values classified as URLs, with the path each dialect matches: a line's URL is found in the same one vectorised pass ([`robofilter_scan`]) that finds where the line ends.

use std::ops::ControlFlow;

use crate::url::MatchPath;

/// Classifies the line `buf[..len]` (without its `\n`): its URL and the
/// URL's path, or `None` if the line is not a URL. `buf` may go on past
/// `len` (the rest of the caller's chunk), which lets the one vectorised
/// pass ([`robofilter_scan::scan`]) read whole blocks.
///
/// After one trailing `\r` is stripped, the URL is the line up to its
/// first TAB (the rest are the line's *fields*, which this ignores), or the
/// whole line. The line is not a URL if the URL does not start with
/// `scheme://`, where the scheme is `[A-Za-z][A-Za-z0-9+.-]*`, holds an
/// ASCII control octet (0x00-0x1F, 0x7F), or ends with a space. Spaces
/// inside the URL belong to it: the google dialect matches them raw, the
/// rfc9309 dialect as `%20` (docs/SEMANTICS.md section 4b). Octets above 0x7F
/// (UTF-8) are allowed.
///
/// ```
/// let line = b"http://x/a b\tdepth=2";
/// let (url, path) = robofilter::url_line(line, line.len()).unwrap();
/// assert_eq!(url, b"http://x/a b");
/// assert_eq!(path.to_vec(), b"/a b");
/// let line = b"http://x/a \tdepth=2";
/// assert!(robofilter::url_line(line, line.len()).is_none());
/// ```
///
/// # Panics
///
/// If `len > buf.len()`.
#[inline]
pub fn url_line(buf: &[u8], len: usize) -> Option<(&[u8], MatchPath<'_>)> {
    robofilter_scan::scan(buf, len).map(|line| url_and_path(buf, line))
}

/// [`url_line`] for the first line of `buf` (up to its first `\n`, or all
/// of `buf`), with the offset where that line ends (of the `\n`, or
/// `buf.len()`): how a frontier chunk is read line by line. One pass finds
/// both for a line without fields, since it stops at the line's first
/// control octet ([`robofilter_scan::scan_next`]).
///
/// ```
/// let chunk = b"http://x/a\r\nnot a url\n";
/// let (end, line) = robofilter::next_url_line(chunk);
/// assert_eq!((end, line.unwrap().0), (11, &b"http://x/a"[..]));
/// assert_eq!(robofilter::next_url_line(&chunk[12..]).0, 9);
/// ```
#[inline(always)]
pub fn next_url_line(buf: &[u8]) -> (usize, Option<(&[u8], MatchPath<'_>)>) {
    let (end, line) = robofilter_scan::scan_next(buf);
    (end, line.map(|line| url_and_path(buf, line)))
}

/// Calls `f(start, len, url)` for each line of `chunk` in order, where
/// `(len, url)` is [`next_url_line`]`(&chunk[start..])`, until `f` breaks
/// or the chunk ends: how a frontier chunk is read, with the loop inside
/// the line classifier's vector pass ([`robofilter_scan::scan_lines`]),
/// so that a line costs no call into it.
///
/// ```
/// use std::ops::ControlFlow;
/// let chunk = b"http://x/a\r\nnot a url\nhttp://y/";
/// let mut lines = Vec::new();
/// let _ = robofilter::for_each_url_line(chunk, |start, len, url| {
///     lines.push((start, len, url.map(|(url, _)| url)));
///     ControlFlow::<()>::Continue(())
/// });
/// assert_eq!(lines[0], (0, 11, Some(&b"http://x/a"[..])));
/// assert_eq!(lines[1], (12, 9, None));
/// assert_eq!(lines[2], (22, 9, Some(&b"http://y/"[..])));
/// ```
#[inline]
pub fn for_each_url_line<'c, B>(
    chunk: &'c [u8],
    mut f: impl FnMut(
        usize,
        usize,
        Option<(&'c [u8], MatchPath<'c>)>,
    ) -> ControlFlow<B>,
) -> ControlFlow<B> {
    robofilter_scan::scan_lines(
        chunk,
        #[inline(always)]
        |start, len, line| {
            let url = line.map(|line| url_and_path(&chunk[start..], line));
            f(start, len, url)
        },
    )
}

/// Calls `f(i, url)` for each `i` in `0..n` in order, where `url` is
/// [`url_line`]`(buf, len)` of `(buf, len) = value(i)`, until `f` breaks:
/// how a column of URLs (an Arrow string array, say) is read, with the
/// loop inside the line classifier's vector pass
/// ([`robofilter_scan::scan_each`]), as [`for_each_url_line`] reads a
/// chunk of lines, so that `f` (the walk of the URL's path, say) is
/// inlined into it.
///
/// ```
/// use std::ops::ControlFlow;
/// let data = b"http://x/anot a url";
/// let offsets = [0, 10, 19];
/// let mut urls = Vec::new();
/// let _ = robofilter::for_each_url_value(
///     2,
///     |i| (&data[offsets[i]..], offsets[i + 1] - offsets[i]),
///     |i, url| {
///         urls.push((i, url.map(|(url, path)| (url, path.to_vec()))));
///         ControlFlow::<()>::Continue(())
///     },
/// );
/// assert_eq!(urls, [(0, Some((&b"http://x/a"[..], b"/a".to_vec()))), (1, None)]);
/// ```
#[inline]
pub fn for_each_url_value<'v, B>(
    n: usize,
    value: impl Fn(usize) -> (&'v [u8], usize),
    mut f: impl FnMut(usize, Option<(&'v [u8], MatchPath<'v>)>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    robofilter_scan::scan_each(
        n,
        value,
        #[inline(always)]
        |i, buf, line| f(i, line.map(|line| url_and_path(buf, line))),
    )
}

/// The URL and its google/robotstxt path, from the scan's facts.
#[inline(always)]
fn url_and_path(
    buf: &[u8],
    line: robofilter_scan::Line,
) -> (&[u8], MatchPath<'_>) {
    let url = &buf[..line.url_len()];
    // google/robotstxt's path: from the first `/ ? ;` after `://` to the
    // fragment; `/` if there is none or a `#` comes first.
    let tail = match (line.path_start(), line.fragment()) {
        (Some(p), Some(f)) if f < p => &[][..],
        (Some(p), f) => &url[p..f.unwrap_or(url.len())],
        (None, _) => &[][..],
    };
    (url, MatchPath::from_url_path(tail))
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    /// The chunk loop gives every line of the sample frontiers (URLs, and
    /// lines with fields) and of a chunk of odd lines as
    /// [`next_url_line`](super::next_url_line) does from each line's start.
    #[test]
    fn for_each_url_line_is_next_url_line_in_a_loop() {
        let odd = b"http://a/b#c\r\n\nx\r\nhttps://h/p?q\tf=1\nftp://u@h:21/\n \nhttp://a/ ";
        let chunks: [&[u8]; 3] = [
            include_bytes!("../../../data/sample/urls.txt"),
            include_bytes!("../../../data/sample/frontier.tsv"),
            odd,
        ];
        for chunk in chunks {
            let mut want = Vec::new();
            let mut start = 0;
            while start < chunk.len() {
                let (len, url) = super::next_url_line(&chunk[start..]);
                want.push((start, len, url));
                start += len + 1;
            }
            let mut got = Vec::new();
            let _ = super::for_each_url_line(chunk, |start, len, url| {
                got.push((start, len, url));
                ControlFlow::<()>::Continue(())
            });
            assert!(want.len() >= 3);
            assert_eq!(got, want);
        }
    }
}
