//! How much of a robots.txt is read: every front end reads a bounded head
//! (a robots.txt given as `/dev/zero` costs at most the cap), as much as
//! the dialect could use and never a cut that could change a verdict.

use robofilter::{Config, Dialect, MAX_LINE_LEN};

/// The most octets of a robots.txt the google dialect reads: 4 MiB, eight
/// times the 500 KiB that Google's crawler itself reads (its documented
/// limit), so that no real robots.txt is near it. The reference parser has
/// no limit; a larger body is refused (one file) or recorded as unreadable
/// (a bundle member) rather than cut, because a cut could change verdicts.
pub const GOOGLE_READ_CAP: usize = 4 << 20;

/// How much of a robots.txt body is read.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Limits {
    /// The most octets kept of a body.
    pub body: usize,
    /// Whether a longer body may be cut to `body` octets without changing
    /// any verdict (rfc9309: nothing past the parse limit is parsed).
    pub cut_ok: bool,
}

impl Limits {
    /// The caps for `config`'s dialect. rfc9309 parses only the first
    /// `parse_limit` octets and looks at one octet more to tell whether the
    /// last line was cut; keeping one more line's worth ([`MAX_LINE_LEN`])
    /// and one octet beyond that leaves the verdicts exactly as for the
    /// whole file.
    pub fn new(config: &Config) -> Limits {
        match config.get_dialect() {
            Dialect::Rfc9309 => Limits {
                body: config
                    .get_parse_limit()
                    .saturating_add(MAX_LINE_LEN + 1),
                cut_ok: true,
            },
            Dialect::Google => Limits { body: GOOGLE_READ_CAP, cut_ok: false },
        }
    }

    /// Applies the cap to a whole body: cut (rfc9309) or refused (google).
    pub fn apply(&self, mut body: Vec<u8>) -> Result<Vec<u8>, String> {
        if body.len() <= self.body {
            return Ok(body);
        }
        if self.cut_ok {
            body.truncate(self.body);
            return Ok(body);
        }
        Err(self.too_large())
    }

    /// A body that was cut short (a fetch's `--max-body`, a crawler's
    /// WARC-Truncated record) without its cut last line: a line is used
    /// only if it ended inside the kept part, since the rest of it could
    /// have changed what it says (`Allow: /public-area` cut to `Allow: /`).
    /// In both dialects; a body with no line end at all is then empty.
    pub fn drop_cut_line(mut body: Vec<u8>) -> Vec<u8> {
        let end = body.iter().rposition(|&b| b == b'\n' || b == b'\r');
        body.truncate(end.map_or(0, |i| i + 1));
        body
    }

    /// The message for a body over the google dialect's cap.
    pub fn too_large(&self) -> String {
        format!(
            "the robots.txt is larger than {} octets, the most the google \
             dialect reads (Google's crawler reads 500 KiB; use the rfc9309 \
             dialect, which reads only its parse limit, or shorten the file)",
            self.body
        )
    }
}
