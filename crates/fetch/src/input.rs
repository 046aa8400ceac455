//! The hosts `robofilter fetch` gets: read from host lists, URL lists or
//! frontiers (plain, gzip or zstd; `-` is stdin), one robots.txt URL per
//! bundle host key, in the order first seen.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Read};
use std::path::PathBuf;

use anyhow::Result;
use robofilter::{
    NoHostKey, normalize_host, scheme_len, shard_of_key, url_host_key,
};

use robofilter_io as files;
use robofilter_sources as sources;

/// The longest input line read (a longer one is reported and skipped).
const MAX_LINE: usize = 64 << 10;

/// How many bad lines are listed one by one.
const LISTED: usize = 10;

/// One host to fetch.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Target {
    /// The bundle host key.
    pub key: String,
    /// Some input named https for this key (or gave it bare, with the
    /// default `--scheme https`).
    pub https: bool,
}

impl Target {
    /// The robots.txt URL: the chosen scheme, the key (so the scheme's
    /// default port unless the key names one).
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}/robots.txt", self.key)
    }
}

/// What reading the inputs found.
#[derive(Debug, Default)]
pub struct InputStats {
    pub lines: u64,
    /// Bad lines: the first [`LISTED`] messages, and how many in all.
    pub bad: Vec<String>,
    pub bad_len: u64,
    /// Hosts in other shards.
    pub other_shards: u64,
}

/// Reads every input; `https` is the scheme of bare authorities, `shard`
/// keeps only the keys of shard `I` of `N`.
pub fn read_targets(
    inputs: &[PathBuf],
    https: bool,
    shard: Option<(u32, u32)>,
) -> Result<(Vec<Target>, InputStats)> {
    let mut stats = InputStats::default();
    let mut targets: Vec<Target> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut skipped_keys: HashSet<String> = HashSet::new();
    let stdin = [PathBuf::from("-")];
    let inputs = if inputs.is_empty() { &stdin[..] } else { inputs };
    let mut line = Vec::new();
    for path in inputs {
        let name = files::display(path);
        let mut r = sources::open_lines(path, "host list")?;
        let mut line_no = 0u64;
        loop {
            line.clear();
            let (at, name) = (line_no, &name);
            let read_error = move |e: std::io::Error| {
                // A decoder's error already says how to check the file.
                let hint = match e.to_string().contains(" -t FILE") {
                    true => "",
                    false => " (is the file complete?)",
                };
                anyhow::anyhow!(
                    "cannot read host list '{name}' after line {at}: {e}{hint}"
                )
            };
            let n = r
                .by_ref()
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .map_err(read_error)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            stats.lines += 1;
            if n > MAX_LINE && line.last() != Some(&b'\n') {
                skip_line(&mut r).map_err(read_error)?;
                stats.bad(format!(
                    "{name}:{line_no}: longer than {MAX_LINE} octets; skipped"
                ));
                continue;
            }
            match parse_line(&line, https) {
                Ok(None) => {}
                Ok(Some((key, https))) => {
                    let other = shard.is_some_and(|(i, n)| {
                        shard_of_key(key.as_bytes(), n) != i
                    });
                    if other {
                        if skipped_keys.insert(key) {
                            stats.other_shards += 1;
                        }
                        continue;
                    }
                    match index.get(&key) {
                        Some(&t) => targets[t].https |= https,
                        None => {
                            index.insert(key.clone(), targets.len());
                            targets.push(Target { key, https });
                        }
                    }
                }
                Err(msg) => {
                    stats.bad(format!("{name}:{line_no}: {msg}; skipped"))
                }
            }
        }
    }
    Ok((targets, stats))
}

/// Skips past the next `\n` without keeping what it reads (`/dev/zero`
/// costs no memory).
fn skip_line(r: &mut dyn BufRead) -> std::io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(i) = memchr::memchr(b'\n', buf) {
            r.consume(i + 1);
            return Ok(());
        }
        let n = buf.len();
        r.consume(n);
    }
}

impl InputStats {
    fn bad(&mut self, msg: String) {
        self.bad_len += 1;
        if self.bad.len() < LISTED {
            self.bad.push(msg);
        }
    }
}

/// A line's host key and whether it names https; `None` for a blank line
/// or a `#` comment.
fn parse_line(
    line: &[u8],
    https: bool,
) -> Result<Option<(String, bool)>, String> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // A frontier line: the URL ends at the first TAB.
    let line = match memchr::memchr(b'\t', line) {
        Some(i) => &line[..i],
        None => line,
    };
    let line = line.trim_ascii();
    if line.is_empty() || line.starts_with(b"#") {
        return Ok(None);
    }
    let shown =
        || String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
    let (key, https) = if let Some(n) = scheme_len(line) {
        let scheme = line[..n].to_ascii_lowercase();
        let https = match &scheme[..] {
            b"https" => true,
            b"http" => false,
            _ => {
                return Err(format!(
                    "'{}': the scheme is not http or https",
                    shown()
                ));
            }
        };
        let mut key = Vec::new();
        match url_host_key(line, &mut key) {
            Ok(()) => {}
            Err(NoHostKey::Missing) => {
                return Err(format!("'{}' has no host", shown()));
            }
            Err(NoHostKey::Ambiguous) => {
                return Err(format!(
                    "'{}': the authority holds an octet RFC 3986 does not \
                     allow there, so readers disagree on its host",
                    shown()
                ));
            }
        }
        let key = String::from_utf8(key)
            .map_err(|_| format!("'{}': the host is not UTF-8", shown()))?;
        (key, https)
    } else {
        // A bare authority, perhaps followed by a path.
        let end = memchr::memchr(b'/', line).unwrap_or(line.len());
        let auth = std::str::from_utf8(&line[..end])
            .map_err(|_| format!("'{}': the host is not UTF-8", shown()))?;
        let key = normalize_host(auth).map_err(|e| {
            format!("{e} (give a host, host:port or an http(s) URL)")
        })?;
        (key, https)
    };
    // The URL the client will request must parse (a port over 65535, a
    // host that is not a DNS name or IP literal).
    let scheme = if https { "https" } else { "http" };
    url::Url::parse(&format!("{scheme}://{key}/robots.txt")).map_err(|e| {
        format!("'{}': not a host to fetch from ({e})", shown())
    })?;
    Ok(Some((key, https)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let p = |l: &str| parse_line(l.as_bytes(), true);
        let ok = |k: &str, https| Ok(Some((k.to_string(), https)));
        assert_eq!(p("Example.COM\n"), ok("example.com", true));
        assert_eq!(p("example.com:8080\r\n"), ok("example.com:8080", true));
        assert_eq!(
            parse_line(b"example.com", false),
            ok("example.com", false)
        );
        assert_eq!(p("http://A.example:80/x?y"), ok("a.example", false));
        assert_eq!(p("HTTPS://a.example:443"), ok("a.example", true));
        assert_eq!(
            p("http://a.example:8443/\tfield\tmore"),
            ok("a.example:8443", false)
        );
        assert_eq!(p("a.example/some/path"), ok("a.example", true));
        assert_eq!(p("http://[::1]:8080/"), ok("[::1]:8080", false));
        assert_eq!(p("  \n"), Ok(None));
        assert_eq!(p("# hosts\n"), Ok(None));
        for bad in [
            "ftp://a.example/",
            "http:///x",
            "a b",
            "http://a\\@b/",
            "a.example:99999",
            "user@a.example",
        ] {
            assert!(p(bad).is_err(), "{bad}: {:?}", p(bad));
        }
    }

    /// A line over the cap is reported and skipped; the next one counts.
    #[test]
    fn long_lines() {
        let path = std::env::temp_dir()
            .join(format!("robofilter-fetch-input-{}", std::process::id()));
        let mut text = "a.example\n".to_string();
        text.push_str(&"x".repeat(3 * MAX_LINE));
        text.push_str("\nb.example\n");
        std::fs::write(&path, text).unwrap();
        let (t, stats) =
            read_targets(std::slice::from_ref(&path), true, None).unwrap();
        std::fs::remove_file(&path).unwrap();
        let keys: Vec<&str> = t.iter().map(|t| t.key.as_str()).collect();
        assert_eq!(keys, ["a.example", "b.example"]);
        assert_eq!((stats.lines, stats.bad_len), (3, 1));
        assert!(
            stats.bad[0].ends_with(":2: longer than 65536 octets; skipped")
        );
    }

    #[test]
    fn urls() {
        let t = |key: &str, https| Target { key: key.into(), https }.url();
        assert_eq!(t("a.example", true), "https://a.example/robots.txt");
        assert_eq!(t("a.example:81", false), "http://a.example:81/robots.txt");
    }
}
