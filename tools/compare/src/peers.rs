//! The peer libraries, each run on a robots.txt and a URL the one way every
//! comparison runs it: `texting_robots`, `fast-robots`, and `robotstxt`
//! (the Rust port of google/robotstxt).
//!
//! Each peer gets the robots.txt as its API takes it: texting_robots the
//! raw bytes, fast-robots and robotstxt a `&str`, which [`text`] makes
//! (invalid UTF-8 replaced by U+FFFD). fast-robots takes a path rather
//! than a URL, so it gets [`path_query`]: Google's path extraction, the
//! same as robofilter's and robotstxt's. robotstxt has no parse-once API:
//! [`robotstxt_allowed`] parses the file again on every call.
//!
//! [`Peer::allowed`] runs one peer once (parse, then decide), for tests;
//! the timed loops keep the parsed peers ([`TextingRobots`],
//! [`FastRobots`] and its matcher) and decide many URLs with them.
//!
//! This file uses only `robofilter` and the three peer crates, so another
//! crate's tests can include it as it is, with those crates as
//! dev-dependencies, e.g. from `crates/robofilter/tests/main.rs`:
//!
//! ```text
//! #[allow(dead_code)]
//! #[path = "../../../tools/compare/src/peers.rs"]
//! mod peers;
//! ```

use std::borrow::Cow;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use robofilter::MatchPath;

/// A peer library.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Peer {
    TextingRobots,
    FastRobots,
    Robotstxt,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3] =
        [Peer::TextingRobots, Peer::FastRobots, Peer::Robotstxt];

    /// The crate and the version built here, as reports name it.
    pub fn label(self) -> &'static str {
        match self {
            Peer::TextingRobots => "texting_robots 0.2.2",
            Peer::FastRobots => "fast-robots 0.1.5",
            Peer::Robotstxt => "robotstxt 0.3.0",
        }
    }

    /// Whether the peer allows `url` for `agent` under the robots.txt
    /// `robots`, parsed for this one call. An error if the peer refused the
    /// file or panicked (the comparisons then allow every URL of the file).
    pub fn allowed(
        self,
        robots: &[u8],
        agent: &str,
        url: &str,
    ) -> Result<bool, String> {
        let panicked = || format!("{} panicked", self.label());
        match self {
            Peer::TextingRobots => guarded(|| {
                TextingRobots::new(agent, robots).map(|r| r.allowed(url))
            })
            .unwrap_or_else(|| Err(panicked()))
            .map_err(|e| format!("{}: {e}", self.label())),
            Peer::FastRobots => {
                let text = text(robots);
                guarded(|| {
                    FastRobots::parse(&text).matcher().allowed(agent, url)
                })
                .ok_or_else(panicked)
            }
            Peer::Robotstxt => robotstxt_allowed(&text(robots), agent, url)
                .ok_or_else(panicked),
        }
    }
}

/// texting_robots, parsed once per file for one agent.
pub struct TextingRobots(texting_robots::Robot);

impl TextingRobots {
    /// Parses `robots` (raw bytes) for `agent`; an error if the crate
    /// refuses the file.
    pub fn new(agent: &str, robots: &[u8]) -> Result<TextingRobots, String> {
        texting_robots::Robot::new(agent, robots)
            .map(TextingRobots)
            .map_err(|e| format!("{e:#}"))
    }

    /// Whether `url` (a whole URL) is allowed.
    #[inline]
    pub fn allowed(&self, url: &str) -> bool {
        self.0.allowed(url)
    }
}

/// fast-robots, parsed once per file (for every agent); its
/// [`matcher`](FastRobots::matcher) is built from the parse.
pub struct FastRobots<'a>(fast_robots::RobotsTxt<'a>);

impl<'a> FastRobots<'a> {
    /// Parses `robots` (text, see [`text`]); the crate accepts any text.
    pub fn parse(robots: &'a str) -> FastRobots<'a> {
        FastRobots(fast_robots::RobotsTxt::parse(robots))
    }

    /// The crate's matcher of the parsed file.
    pub fn matcher(&'a self) -> FastRobotsMatcher<'a> {
        FastRobotsMatcher(self.0.matcher())
    }
}

/// fast-robots' matcher of one file.
pub struct FastRobotsMatcher<'a>(fast_robots::RobotsMatcher<'a>);

impl FastRobotsMatcher<'_> {
    /// Whether `url` (a whole URL: the crate gets its [`path_query`]) is
    /// allowed for `agent`.
    #[inline]
    pub fn allowed(&self, agent: &str, url: &str) -> bool {
        self.0.is_allowed(agent, &path_query(url))
    }
}

/// robotstxt's verdict for `url` and `agent` under `robots` (text, see
/// [`text`]), parsed again on this call (the crate has no other API);
/// `None` if it panicked.
#[inline]
pub fn robotstxt_allowed(
    robots: &str,
    agent: &str,
    url: &str,
) -> Option<bool> {
    guarded(|| {
        robotstxt::DefaultMatcher::default()
            .one_agent_allowed_by_robots(robots, agent, url)
    })
}

/// A robots.txt as the peers that take `&str` get it: invalid UTF-8
/// replaced by U+FFFD.
pub fn text(robots: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(robots)
}

/// The path and query of a URL, for fast-robots (which takes a path):
/// google's path extraction, the same as robofilter's and robotstxt's.
pub fn path_query(url: &str) -> Cow<'_, str> {
    let path = MatchPath::from_url(url.as_bytes());
    let tail = path.tail();
    if path.has_lead_slash() {
        if tail.is_empty() {
            return Cow::Borrowed("/");
        }
        return Cow::Owned(format!("/{}", String::from_utf8_lossy(tail)));
    }
    // `tail` is a slice of `url` cut at ASCII delimiters.
    let start = tail.as_ptr() as usize - url.as_ptr() as usize;
    Cow::Borrowed(&url[start..start + tail.len()])
}

thread_local! {
    /// Set while a library call runs under `guarded`: its panic is counted,
    /// not printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Prints panics only outside [`guarded`] (call it once, first).
pub fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !QUIET.with(Cell::get) {
            default(info);
        }
    }));
}

/// Runs a library call; `None` if it panicked.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    let was = QUIET.with(|q| q.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f)).ok();
    QUIET.with(|q| q.set(was));
    r
}
