//! The one escaping of robots.txt text (and of a bundle's host names) in
//! human and TSV output: unambiguous, and never a raw control character.

use std::borrow::Cow;

/// Text from a robots.txt (or a bundle's host names) made safe for a
/// terminal and for one TSV column: valid UTF-8 and printable ASCII stay
/// as they are; `\` becomes `\\`; TAB, LF and CR become `\t`, `\n`, `\r`;
/// other control characters (C0, DEL, C1) and bytes that are not UTF-8
/// become `\xNN` per byte. The result is unambiguous: the original bytes
/// can be recovered from it.
pub fn escape(text: &[u8]) -> Cow<'_, str> {
    if text.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'\\') {
        // Printable ASCII is UTF-8.
        return Cow::Borrowed(std::str::from_utf8(text).expect("ASCII"));
    }
    let mut out = String::with_capacity(text.len() + 8);
    let hex = |out: &mut String, b: u8| {
        use std::fmt::Write as _;
        write!(out, "\\x{b:02x}").expect("string");
    };
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        hex(&mut out, b);
                    }
                }
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            hex(&mut out, b);
        }
    }
    Cow::Owned(out)
}

/// Appends [`escape`]d `out[from..]` in place of `out[from..]`.
pub fn escape_tail(out: &mut Vec<u8>, from: usize) {
    if let Cow::Owned(e) = escape(&out[from..]) {
        out.truncate(from);
        out.extend_from_slice(e.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_text_and_escapes_controls_tab_backslash_and_bad_bytes() {
        let cases: &[(&[u8], &str)] = &[
            (b"/a/b?c=d", "/a/b?c=d"),
            (b"", ""),
            (b"/\xe3\x83\x84", "/\u{30c4}"),
            (b"/a\tb", "/a\\tb"),
            (b"/a\x1b[31mred", "/a\\x1b[31mred"),
            (b"/a\\tb", "/a\\\\tb"),
            (b"\r\n\x00\x7f", "\\r\\n\\x00\\x7f"),
            (b"/\xc2\x9b2J", "/\\xc2\\x9b2J"),
            (b"/\xff\xe3\x83", "/\\xff\\xe3\\x83"),
        ];
        for (text, want) in cases {
            assert_eq!(escape(text), *want, "{:?}", text.escape_ascii());
        }
        let mut out = b"head\t".to_vec();
        out.extend_from_slice(b"a\tb");
        escape_tail(&mut out, 5);
        assert_eq!(out, b"head\ta\\tb");
    }

    /// The output never holds a raw control character (TAB included).
    #[test]
    fn escape_output_has_no_control_bytes() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            for _ in 0..(state % 24) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(state as u8);
            }
            state = state.wrapping_add(1);
            let e = escape(&text);
            assert!(
                !e.chars().any(char::is_control),
                "{:?} -> {e:?}",
                text.escape_ascii()
            );
        }
    }
}
