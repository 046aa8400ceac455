//! What a byte string holds, told by its first octets: robots.txt text, a
//! compressed stream, or a file robofilter compiled. The magic octets of
//! every format robofilter reads live here, and nowhere else.
//!
//! Read as robots.txt, a gzip stream or a rules file has no rules, so
//! every URL would be allowed: [`Compiler::compile`] refuses such input,
//! and every front end tells what it was given with [`InputKind::of`].
//!
//! [`Compiler::compile`]: crate::Compiler::compile

/// The first octets of a rules file (layout: `wire.rs`).
pub(crate) const MAGIC: &[u8; 8] = b"ROBOFLTR";
/// The first octets of a bundle (layout: `wire.rs`).
pub(crate) const BUNDLE_MAGIC: &[u8; 8] = b"ROBOBNDL";
/// The first octets of a gzip member (RFC 1952: ID1, ID2).
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
/// The first octets of a zstd frame (RFC 8878: 0xFD2FB528, little-endian).
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// The octets [`InputKind::of`] needs to tell every kind apart.
pub const INPUT_KIND_HEAD: usize = 8;

/// What a byte string holds, told by its first octets.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum InputKind {
    /// Anything else: taken for text (a robots.txt, a URL list).
    Text,
    /// A gzip stream.
    Gzip,
    /// A zstd frame.
    Zstd,
    /// A rules file (`robofilter compile ROBOTS_TXT`).
    Rules,
    /// A bundle (`robofilter compile --hosts|--manifest|--warc`).
    Bundle,
}

impl InputKind {
    /// The kind of `bytes`, a whole input or at least its first
    /// [`INPUT_KIND_HEAD`] octets.
    pub fn of(bytes: &[u8]) -> InputKind {
        if bytes.starts_with(MAGIC) {
            InputKind::Rules
        } else if bytes.starts_with(BUNDLE_MAGIC) {
            InputKind::Bundle
        } else if bytes.starts_with(GZIP_MAGIC) {
            InputKind::Gzip
        } else if bytes.starts_with(ZSTD_MAGIC) {
            InputKind::Zstd
        } else {
            InputKind::Text
        }
    }

    /// Whether this is text (a robots.txt or a URL list).
    pub fn is_text(self) -> bool {
        self == InputKind::Text
    }

    /// Whether this is a compressed stream.
    pub fn is_compressed(self) -> bool {
        matches!(self, InputKind::Gzip | InputKind::Zstd)
    }

    /// Whether this is a file robofilter compiled.
    pub fn is_compiled(self) -> bool {
        matches!(self, InputKind::Rules | InputKind::Bundle)
    }

    /// The command-line tool that decompresses this kind (`gzip`, `zstd`),
    /// if it is compressed.
    pub fn tool(self) -> Option<&'static str> {
        match self {
            InputKind::Gzip => Some("gzip"),
            InputKind::Zstd => Some("zstd"),
            _ => None,
        }
    }
}

impl core::fmt::Display for InputKind {
    /// How messages name the kind: `gzip-compressed`, `a compiled rules
    /// file`, `text`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            InputKind::Text => "text",
            InputKind::Gzip => "gzip-compressed",
            InputKind::Zstd => "zstd-compressed",
            InputKind::Rules => "a compiled rules file",
            InputKind::Bundle => "a compiled bundle",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_by_their_magic() {
        assert_eq!(InputKind::of(b"\x1f\x8b\x08"), InputKind::Gzip);
        assert_eq!(InputKind::of(b"\x28\xb5\x2f\xfd\x00"), InputKind::Zstd);
        assert_eq!(InputKind::of(b"ROBOFLTR\x00"), InputKind::Rules);
        assert_eq!(InputKind::of(b"ROBOBNDL\x00"), InputKind::Bundle);
        assert_eq!(InputKind::of(b"User-agent: *"), InputKind::Text);
        assert_eq!(InputKind::of(b""), InputKind::Text);
        // A prefix of a magic is text.
        assert_eq!(InputKind::of(b"\x1f"), InputKind::Text);
        assert_eq!(InputKind::of(b"ROBOFLT"), InputKind::Text);
    }
}
