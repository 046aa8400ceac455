//! A CDXJ line's URL: Common Crawl's URL index writes one capture per
//! line as `SURT TIMESTAMP {json}`, and the URL is the JSON object's
//! `url` string. The line itself is what `filter` selects and passes
//! through, as a frontier line's fields are.

use std::borrow::Cow;
use std::ops::Range;

/// Where a CDXJ line's URL is, as [`url_of`] found it.
#[derive(Clone, Debug, Eq, PartialEq)]
pub(crate) enum CdxjUrl {
    /// The JSON string has no escapes: the URL is these octets of the
    /// line, borrowed.
    InLine(Range<usize>),
    /// The JSON string has escapes: the URL is the scratch buffer,
    /// unescaped into it.
    Scratch,
    /// No JSON object after the second space, JSON that does not parse,
    /// or no `url` string in it: the line is invalid.
    Missing,
}

/// The one field of the JSON object that `filter` reads; every other
/// field is skipped (and checked to be JSON).
#[derive(serde::Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    url: Option<JsonStr<'a>>,
}

/// A JSON string, borrowed from the input when it has no escapes (serde
/// reads an `Option<Cow<str>>` as owned always).
struct JsonStr<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = JsonStr<'a>;
            fn expecting(
                &self,
                f: &mut std::fmt::Formatter<'_>,
            ) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(Visitor(std::marker::PhantomData))
    }
}

/// Finds the URL of the CDXJ line `text` (without its `\n` and a
/// trailing `\r`): the JSON object starts after the line's second space
/// and runs to its end, and must parse whole. A URL with escapes (`\/`,
/// `\u00e9`) is unescaped into `scratch`.
pub(crate) fn url_of(text: &[u8], scratch: &mut Vec<u8>) -> CdxjUrl {
    let Some(json) = json_part(text) else {
        return CdxjUrl::Missing;
    };
    let at = text.len() - json.len();
    match fast_url(json) {
        Some(Some(url)) => CdxjUrl::InLine(at + url.start..at + url.end),
        Some(None) => CdxjUrl::Missing,
        None => parsed_url(json, at, scratch),
    }
}

/// [`url_of`] by a full JSON parse (serde_json): for every line
/// [`fast_url`] leaves to it.
fn parsed_url(json: &[u8], at: usize, scratch: &mut Vec<u8>) -> CdxjUrl {
    let record: Record<'_> = match serde_json::from_slice(json) {
        Ok(r) => r,
        Err(_) => return CdxjUrl::Missing,
    };
    match record.url.map(|u| u.0) {
        None => CdxjUrl::Missing,
        Some(Cow::Borrowed(url)) => {
            // Borrowed from `json`, so within it: its offset there.
            let start = url.as_ptr() as usize - json.as_ptr() as usize;
            CdxjUrl::InLine(at + start..at + start + url.len())
        }
        Some(Cow::Owned(url)) => {
            scratch.clear();
            scratch.extend_from_slice(url.as_bytes());
            CdxjUrl::Scratch
        }
    }
}

/// Most quotes [`fast_url`] reads in one object (Common Crawl's records
/// have about 44); an object with more goes to the full parse.
const FAST_QUOTES: usize = 128;

/// The URL of the JSON object `json` (which starts with `{`) read
/// without a parser, for the objects Common Crawl writes: every value a
/// string, every string free of escapes, control octets and non-ASCII
/// octets, and no whitespace but spaces. `Some(Some(range))`: the `url`
/// value is `json[range]`; `Some(None)`: such an object without a `url`
/// key. `None`: anything else (an escape, another kind of value, a
/// second `url`, JSON that does not parse), which the full parse
/// decides; so the answer is always the full parse's.
///
/// One pass over 16 octets at a time
/// ([`robofilter_scan::quotes_and_specials`]) finds every quote
/// and refuses any `\`, control or non-ASCII octet; without them, the
/// quotes pair up into the strings, key and value by turns, and the
/// octets between strings must be the object's punctuation.
fn fast_url(json: &[u8]) -> Option<Option<Range<usize>>> {
    let mut quotes = [0u32; FAST_QUOTES];
    let mut n = 0;
    let mut take = |base: usize, mut bits: u32| -> Option<()> {
        while bits != 0 {
            *quotes.get_mut(n)? =
                (base + bits.trailing_zeros() as usize) as u32;
            n += 1;
            bits &= bits - 1;
        }
        Some(())
    };
    if json.len() > u32::MAX as usize {
        return None;
    }
    let mut blocks = json.chunks_exact(16);
    let mut base = 0;
    for block in blocks.by_ref() {
        let (quotes, special) = robofilter_scan::quotes_and_specials(
            block.try_into().expect("16"),
        );
        if special != 0 {
            return None;
        }
        take(base, quotes)?;
        base += 16;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut last = [b' '; 16];
        last[..tail.len()].copy_from_slice(tail);
        let (quotes, special) = robofilter_scan::quotes_and_specials(&last);
        if special != 0 {
            return None;
        }
        take(base, quotes)?;
    }
    // Each field's four quotes: `"key" : "value"`, after `{` or `,`.
    let fields = quotes[..n].chunks_exact(4);
    if !fields.remainder().is_empty() {
        return None;
    }
    let mut url = None;
    let mut after = 1;
    for field in fields {
        let [k0, k1, v0, v1] = [0, 1, 2, 3].map(|i| field[i] as usize);
        // Spaces before the first key, a `,` before the others.
        let want = (after > 1).then_some(b',');
        if between(&json[after..k0])? != want
            || between(&json[k1 + 1..v0])? != Some(b':')
        {
            return None;
        }
        if &json[k0 + 1..k1] == b"url" {
            if url.is_some() {
                return None;
            }
            url = Some(v0 + 1..v1);
        }
        after = v1 + 1;
    }
    // After the last value (or the `{` of an empty object): the `}`.
    (between(&json[after..])? == Some(b'}')).then_some(url)
}

/// The octets between two strings (or a string and the object's end)
/// as [`fast_url`] reads them: spaces around at most one punctuation
/// octet, which is returned (`Some(Some(p))`; `Some(None)` for spaces
/// alone); `None` for anything else.
#[inline(always)]
fn between(octets: &[u8]) -> Option<Option<u8>> {
    // As Common Crawl writes them: `: ` and `, `.
    if let [p, b' '] = octets {
        if *p != b' ' {
            return Some(Some(*p));
        }
    }
    let mut rest = octets;
    while let [b' ', tail @ ..] = rest {
        rest = tail;
    }
    while let [head @ .., b' '] = rest {
        rest = head;
    }
    match rest {
        [] => Some(None),
        [p] => Some(Some(*p)),
        _ => None,
    }
}

/// The JSON part of a CDXJ line: from the first `{` after its second
/// space (spaces may repeat) to its end.
fn json_part(text: &[u8]) -> Option<&[u8]> {
    let mut rest = text;
    for _ in 0..2 {
        let space = memchr::memchr(b' ', rest)?;
        rest = &rest[space + 1..];
        while let [b' ', tail @ ..] = rest {
            rest = tail;
        }
    }
    (rest.first() == Some(&b'{')).then_some(rest)
}

/// Whether an unescaped URL can stand as a line's URL: a control octet
/// (a TAB, which would end the URL there, or a `\r` the line scan would
/// strip) makes it invalid, as it makes a frontier line's URL invalid.
pub(crate) fn is_plain(url: &[u8]) -> bool {
    !url.iter().any(|&b| b < 0x20 || b == 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_url_borrowed_or_unescaped() {
        let mut s = Vec::new();
        let line = br#"com,example)/a 20240101000000 {"url": "http://example.com/a", "status": "200"}"#;
        let CdxjUrl::InLine(r) = url_of(line, &mut s) else { panic!() };
        assert_eq!(&line[r], b"http://example.com/a");
        let line = br#"com,example)/ 2024 {"mime":"x","url":"http:\/\/example.com\/caf\u00e9"}"#;
        assert_eq!(url_of(line, &mut s), CdxjUrl::Scratch);
        assert_eq!(s, "http://example.com/café".as_bytes());
        for bad in [
            &br#"com,example)/ 2024 {"url": 3}"#[..],
            br#"com,example)/ 2024 {"uri": "http://x/"}"#,
            br#"com,example)/ 2024 {"url": "http://x/""#,
            br#"com,example)/ 2024 {"url": "http://x/"} trailing"#,
            br#"com,example)/ {"url": "http://x/"}"#,
            b"http://example.com/",
            b"",
        ] {
            assert_eq!(url_of(bad, &mut s), CdxjUrl::Missing, "{bad:?}");
        }
        assert!(is_plain(b"http://x/"));
        assert!(!is_plain(b"http://x/\ta"));
    }

    /// The full parse's answer for `text`: [`url_of`] as it was before
    /// [`fast_url`], the oracle of the differential tests.
    fn oracle(text: &[u8], scratch: &mut Vec<u8>) -> CdxjUrl {
        match json_part(text) {
            Some(json) => parsed_url(json, text.len() - json.len(), scratch),
            None => CdxjUrl::Missing,
        }
    }

    /// `url_of` gives the full parse's answer for `text`; returns what
    /// the fast path did (`None`: left it to the full parse).
    fn same(text: &[u8]) -> Option<bool> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (got, want) = (url_of(text, &mut a), oracle(text, &mut b));
        let shown = String::from_utf8_lossy(text);
        assert_eq!(got, want, "{shown}");
        if want == CdxjUrl::Scratch {
            assert_eq!(a, b, "{shown}");
        }
        json_part(text).and_then(fast_url).map(|u| u.is_some())
    }

    /// Which way [`same`] went: 0 the fast path found a URL, 1 it found
    /// none, 2 the full parse decided.
    fn way(fast: Option<bool>) -> usize {
        match fast {
            Some(true) => 0,
            Some(false) => 1,
            None => 2,
        }
    }

    #[test]
    fn the_fast_path_agrees_with_the_parse_on_hostile_lines() {
        let p = "com,x)/ 2024 ";
        let cases: &[&[u8]] = &[
            br#"{"url": "http://x/a"}"#,
            br#"{"url":"http://x/a","status":"200"}"#,
            br#"{ "url" : "http://x/a" , "s" : "2" }  "#,
            br#"{}"#,
            br#"{ }"#,
            br#"{"status": "200"}"#,
            // Duplicates: a second `url` fails the parse (invalid);
            // other keys may repeat.
            br#"{"url": "http://x/a", "url": "http://x/b"}"#,
            br#"{"a": "1", "a": "2", "url": "http://x/a"}"#,
            // A `url` key in a nested object is not the record's.
            br#"{"meta": {"url": "http://x/n"}}"#,
            br#"{"meta": {"url": "http://x/n"}, "url": "http://x/a"}"#,
            br#"{"list": ["url", "http://x/l"], "url": "http://x/a"}"#,
            // Keys and values that only look like `url`.
            br#"{"u\u0072l": "http://x/e"}"#,
            br#"{"URL": "http://x/a"}"#,
            br#"{"url ": "http://x/a"}"#,
            br#"{"": "url", "x": "url"}"#,
            br#"{"url": "url", "b": "c"}"#,
            // Escapes, in the URL and elsewhere.
            br#"{"url": "http:\/\/x\/a"}"#,
            br#"{"url": "http://x/\u00e9\ud83d\ude00"}"#,
            br#"{"url": "http://x/\ud800"}"#,
            br#"{"url": "http://x/\udc00a"}"#,
            br#"{"url": "http://x/\q"}"#,
            br#"{"url": "http://x/\u00"}"#,
            br#"{"url": "http://x/\"q\""}"#,
            br#"{"url": "http://x/a", "t": "a\"b"}"#,
            br#"{"t": "a\\", "url": "http://x/a"}"#,
            br#"{"t": "\\\"", "url": "http://x/a"}"#,
            // Other values.
            br#"{"url": null}"#,
            br#"{"url": 3}"#,
            br#"{"url": ["http://x/a"]}"#,
            br#"{"url": "http://x/a", "n": 12, "b": true, "z": null}"#,
            br#"{"url": "http://x/a", "n": 01}"#,
            br#"{"url": "http://x/a", "n": -}"#,
            // Whitespace other than spaces, control octets.
            b"{\"url\":\t\"http://x/a\"}",
            b"{\"url\": \"http://x/a\"}\r",
            b"{\"url\": \"http://x/a\"}\x0c",
            b"{\"url\": \"http://x/\ta\"}",
            b"{\"url\": \"http://x/a\x7f\"}",
            b"{\"url\": \"http://x/a\x00\"}",
            // Non-ASCII and non-UTF-8, in the URL, keys and other values.
            "{\"url\": \"http://x/caf\u{e9}\"}".as_bytes(),
            b"{\"url\": \"http://x/\xff\"}",
            b"{\"url\": \"http://x/a\", \"t\": \"\xff\"}",
            b"{\"\xff\": \"1\", \"url\": \"http://x/a\"}",
            b"{\"url\": \"http://x/\xc3\"}",
            // Truncated, trailing, broken punctuation.
            br#"{"url": "http://x/a""#,
            br#"{"url": "http://x/a"#,
            br#"{"url": "#,
            br#"{"url""#,
            br#"{"#,
            br#"{"url": "http://x/a",}"#,
            br#"{"url": "http://x/a"}}"#,
            br#"{"url": "http://x/a"} x"#,
            br#"{"url": "http://x/a"}{}"#,
            br#"{"url" "http://x/a"}"#,
            br#"{"url": "http://x/a" "b": "c"}"#,
            br#"{"url":: "http://x/a"}"#,
            br#"{, "url": "http://x/a"}"#,
            br#"{"url": "http://x/a",, "b": "c"}"#,
            br#"{"url": "http://x/a"]"#,
            br#"{"url": "a" : "b"}"#,
            br#"{"a" "url": "http://x/a"}"#,
        ];
        let mut ways = [0; 3];
        for case in cases {
            let line = [p.as_bytes(), case].concat();
            ways[way(same(&line))] += 1;
            // Every cut of every case, too.
            for cut in 0..line.len() {
                same(&line[..cut]);
            }
        }
        // Objects of up to 50 fields (200 quotes: past what the fast path
        // reads), the URL first, last or absent, short strings packing
        // up to 16 quotes into 16 octets.
        for fields in 0..50 {
            for url_at in [0, fields / 2, fields, usize::MAX] {
                let mut line = format!("{p}{{");
                for f in 0..fields {
                    let sep = if f == 0 { "" } else { "," };
                    match f == url_at {
                        true => {
                            line.push_str(&format!(r#"{sep}"url":"u{f}""#))
                        }
                        false => line.push_str(&format!(r#"{sep}"":"""#)),
                    }
                }
                line.push('}');
                let fast = same(line.as_bytes());
                let found = url_at < fields;
                let read = 4 * fields <= FAST_QUOTES;
                assert_eq!(fast, read.then_some(found), "{line}");
            }
        }
        // Each way through was taken: the cases test the fast path.
        assert!(ways.iter().all(|&n| n >= 2), "{ways:?}");
    }

    #[test]
    fn the_fast_path_agrees_with_the_parse_on_generated_lines() {
        // A xorshift generator: the same lines every run.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let keys: &[&[u8]] = &[
            b"\"url\"",
            b"\"url\"",
            b"\"mime\"",
            b"\"status\"",
            b"\"u\\u0072l\"",
            b"\"URL\"",
            b"\"\"",
            b"\"urll\"",
        ];
        let atoms: &[&[u8]] = &[
            b"http://example.com/",
            b"a",
            b"/",
            b"\\/",
            b"\\\\",
            b"\\\"",
            b"\\u00e9",
            b"\\ud800",
            b"\\ud83d\\ude00",
            b"\\n",
            b"\\x",
            b"\t",
            b"\x01",
            b"\x7f",
            b"\xc3\xa9",
            b"\xff",
            b"\xc3",
            b"{",
            b"}",
            b":",
            b",",
            b" ",
            b"url",
        ];
        let values: &[&[u8]] = &[
            b"null",
            b"true",
            b"0",
            b"-1.5e3",
            b"01",
            b"{\"url\": \"http://n/\"}",
            b"[\"url\", 1]",
            b"{}",
            b"nul",
            b"{\"a\": [1, {\"url\": 2}]}",
        ];
        let spaces: &[&[u8]] =
            &[b"", b"", b"", b" ", b" ", b"  ", b"\t", b"\r"];
        let damage = b"\"\\{}:, x\x00\xff";
        let mut ways = [0usize; 3];
        for _ in 0..60_000 {
            let mut line = b"com,example)/a 20240101000000 {".to_vec();
            // Half the lines as Common Crawl writes them (all strings,
            // no escapes, spaces only), half anything.
            let clean = next(2) == 0;
            let blanks = if clean { 6 } else { spaces.len() };
            for f in 0..next(6) {
                let space = |line: &mut Vec<u8>, i: usize| {
                    line.extend_from_slice(spaces[i]);
                };
                if f > 0 {
                    space(&mut line, next(blanks));
                    line.push(b',');
                }
                space(&mut line, next(blanks));
                line.extend_from_slice(keys[next(keys.len())]);
                space(&mut line, next(blanks));
                line.push(b':');
                space(&mut line, next(blanks));
                if !clean && next(5) == 0 {
                    line.extend_from_slice(values[next(values.len())]);
                    continue;
                }
                line.push(b'"');
                let hostile = !clean && next(2) == 0;
                for _ in 0..next(6) {
                    let atom = match hostile {
                        true => atoms[next(atoms.len())],
                        false => atoms[next(3)],
                    };
                    line.extend_from_slice(atom);
                }
                line.push(b'"');
            }
            line.extend_from_slice(spaces[next(blanks)]);
            line.push(b'}');
            line.extend_from_slice(spaces[next(blanks)]);
            // Now and then damaged: cut, an octet changed or added.
            match next(8) {
                0 => line.truncate(next(line.len() + 1)),
                1 => {
                    let at = next(line.len());
                    line[at] = damage[next(damage.len())];
                }
                2 => {
                    let at = next(line.len() + 1);
                    line.insert(at, damage[next(damage.len())]);
                }
                _ => {}
            }
            ways[way(same(&line))] += 1;
        }
        // Every way through was taken, often.
        assert!(ways.iter().all(|&n| n > 3_000), "{ways:?}");
    }
}
