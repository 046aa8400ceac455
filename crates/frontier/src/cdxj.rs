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
}
