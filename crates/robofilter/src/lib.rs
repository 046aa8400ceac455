//! robofilter compiles robots.txt files ([RFC 9309]) into automata and decides
//! URLs against them at memory speed.
//!
//! A robots.txt is compiled once into a *rules file*: a versioned, checksummed
//! container that loads without copying (from a memory map or
//! [`include_rules!`]) and answers each URL with one table lookup per path
//! octet, whatever the number of rules. The `robofilter` command-line tool
//! wraps this for crawl frontiers; this crate is the engine.
//!
//! # Example: compile, load, decide
//!
//! ```
//! use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules, Verdict};
//!
//! let robots = b"\
//! User-agent: *
//! Disallow: /search
//! Allow: /search/about
//!
//! User-agent: FooBot
//! Disallow: /*.pdf$
//! ";
//! let compiler = Compiler::with_config(Config::new().dialect(Dialect::Rfc9309));
//! let bytes = AlignedBytes::from(&compiler.compile(robots)?[..]);
//! let rules = Rules::from_bytes(bytes.as_bytes())?;
//!
//! let other = rules.matcher("OtherBot")?;
//! assert_eq!(other.decide(b"https://x.example/search?q=1"), Verdict::Disallow);
//! assert_eq!(other.decide(b"https://x.example/search/about"), Verdict::Allow);
//!
//! // FooBot's own group hides `*`.
//! let foo = rules.matcher("foobot")?;
//! assert_eq!(foo.decide(b"https://x.example/search"), Verdict::Allow);
//! assert_eq!(foo.decide(b"https://x.example/a.pdf"), Verdict::Disallow);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: a worker with precompiled rules
//!
//! A crawler worker depends on `robofilter` with `default-features = false`
//! (no parser, no compiler, no CLI dependencies) and embeds or maps the file:
//!
//! ```ignore
//! static RULES: &[u8] = robofilter::include_rules!("../rules.bin");
//!
//! let rules = robofilter::Rules::from_bytes(RULES)?;
//! let bot = rules.matcher("MyCrawler")?;
//! if bot.is_allowed(url.as_bytes()) { /* fetch */ }
//! ```
//!
//! # Example: explain a verdict
//!
//! ```
//! use robofilter::{AlignedBytes, Compiler, Reason, Rules};
//!
//! let bytes = Compiler::new().compile(b"User-agent: *\nDisallow: /a\nAllow: /a/b\n")?;
//! let bytes = AlignedBytes::from(&bytes[..]);
//! let rules = Rules::from_bytes(bytes.as_bytes())?;
//! let why = rules.matcher("bot")?.explain(b"http://x/a/b/c");
//! match why.reason() {
//!     Reason::Rule(r) => assert_eq!((r.line(), r.value()), (3, &b"/a/b"[..])),
//!     other => panic!("unexpected {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: many hosts in one bundle
//!
//! A crawl frontier mixes hosts; a [`Bundle`] maps each authority to its
//! compiled robots.txt or to the outcome of a failed fetch (RFC 9309
//! §2.3.1), and a host without an entry has no verdict (`unknown`). See
//! [`Bundle`] for an example and the layout.
//!
//! # Semantics
//!
//! Two dialects share the parser and the compiler:
//!
//! - [`Dialect::Google`] gives exactly the verdicts of google/robotstxt (the C++
//!   reference): keys matched by case-insensitive prefix with accepted typos, a
//!   missing colon accepted on two-token lines, product tokens cut to
//!   `[A-Za-z_-]`, groups for the same agent merged, a group naming the agent
//!   hides `*` (even with no rules), precedence by the octet length of the
//!   normalised pattern (wildcards counted), Allow wins ties, `$` anchors only
//!   as the last octet, `Allow: <dir>/index.htm…` also allows exactly
//!   `<dir>/`, pattern escapes upper-cased and non-ASCII escaped, URLs used as
//!   given.
//! - [`Dialect::Rfc9309`] (the default) is the same except: the URL path and
//!   every pattern go through one percent-normalisation (unreserved escapes
//!   decoded, other escapes upper-cased, non-ASCII/controls/space escaped);
//!   `%2A`/`%24` in a pattern are a literal `*`/`$`, which the URL's `*`/`$`
//!   and its escapes `%2A`/`%24` (either case) match; `/robots.txt` (with any
//!   query) is always allowed; only the first 500 KiB are parsed (a line cut by
//!   the limit is dropped; a line ending exactly at the limit is kept).
//!
//! The URL's path is extracted as google/robotstxt does (see [`MatchPath`]):
//! scheme and authority dropped, query kept, fragment dropped; in the rfc9309
//! dialect the authority ends at the first `/`, `?` or `#` (RFC 3986), so a
//! `;` inside it never starts the path.
//!
//! # Crate features
//!
//! - `compile` (default): the robots.txt parser (`RobotsTxt`) and the
//!   compiler (`Compiler`).
//! - `parallel` (with `cli`): [`BundleBuilder`] compiles distinct robots.txt
//!   bodies on all cores (rayon).
//! - `cli` (default): the `robofilter` binary (clap, clap_mangen,
//!   clap_complete, rayon, anyhow, serde, serde_json, base64, flate2, zstd,
//!   indicatif, tempfile, signal-hook, httparse, url).
//!
//! With `default-features = false` the crate loads rules files and decides URLs
//! only, with a few small dependencies (`bytemuck`, `crc32fast`, `memchr`, and
//! `robofilter-scan`, this workspace's line classifier).
//!
//! # Safety
//!
//! This crate contains no `unsafe` code (`#![forbid(unsafe_code)]`). Zero-copy
//! table views go through `bytemuck`'s checked casts, and a loaded file is
//! validated in full before any lookup.
//!
//! [RFC 9309]: https://www.rfc-editor.org/rfc/rfc9309

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub use crate::access::{Fetch, FetchStatus, Policy};
pub use crate::agent::check_product_token;
pub use crate::aligned::AlignedBytes;
pub use crate::bundle::{Bundle, HostInfo, HostRules, MemberSpan, host_hash};
pub use crate::check::{
    HostCache, HostEntry, Matchers, MemberError, MemberReader, Members,
    Outcome, ShardOpener, Target, UrlChecker, write_reason, write_why,
};
pub use crate::dialect::{Dialect, ParseDialectError};
pub use crate::error::{AgentError, LoadError, UsageError};
pub use crate::kind::{INPUT_KIND_HEAD, InputKind};
pub use crate::lines::{
    for_each_url_line, for_each_url_value, next_url_line, url_line,
};
pub use crate::matcher::BLOCKED_SEARCH_LIMIT;
pub use crate::rules::{
    AgentInfo, EngineKind, Explanation, GroupInfo, Matcher, OtherRecord,
    Reason, Record, RuleInfo, Rules,
};
pub use crate::shard::{
    HOST_HASH_NAME, host_hash64, shard_of_key, shard_of_line, shard_of_url,
};
pub use crate::url::{
    MatchPath, NoHostKey, normalize_host, scheme_len, url_authority,
    url_host_key,
};
pub use crate::usage::{
    ContentSignal, Preference, Preferences, SignalKey, UsageKey, UsageRule,
    UsageRules,
};
pub use crate::verdict::{GroupSource, RuleKind, Verdict};
pub use crate::wire::{
    BUNDLE_FORMAT_OLDEST, BUNDLE_FORMAT_VERSION, FORMAT_VERSION,
};

#[cfg(feature = "compile")]
pub use crate::bundle_build::BundleBuilder;
#[cfg(feature = "compile")]
pub use crate::compile::{Compiler, Config};
#[cfg(feature = "compile")]
pub use crate::error::BuildError;
#[cfg(feature = "compile")]
pub use crate::lint::{Finding, LintKind, Linter};
#[cfg(feature = "compile")]
pub use crate::parse::{
    CrawlDelay, Diagnostic, DiagnosticKind, Group, MAX_LINE_LEN, OtherLine,
    RFC9309_PARSE_LIMIT, RobotsTxt, Rule, Selection, Sitemap, UserAgent,
};

// The modules, in layers from the bottom up. A module imports only from
// its own layer or the layers above it here, always by the module's full
// path (never through the re-exports above), so the module graph has no
// cycles; `tests/module_graph.rs` checks that.
//
// The vocabulary and the file format.
mod agent;
mod aligned;
mod dialect;
mod error;
mod kind;
mod verdict;
mod wire;
// Reading URLs and robots.txt text.
mod lines;
mod normalize;
#[cfg(feature = "compile")]
mod parse;
mod pattern;
mod shard;
mod url;
mod usage;
// The engines, then the loaded rules file that dispatches to them.
mod dfa;
mod direct;
mod matcher;
mod rules;
// Many hosts: fetch outcomes, the bundle reader, the builders.
mod access;
mod bundle;
#[cfg(feature = "compile")]
mod bundle_build;
#[cfg(feature = "compile")]
mod compile;
mod tier;
// Whole URL lines, as every front end decides them.
mod check;
// Lint: what a robots.txt's rules never decide, proved on automata.
#[cfg(feature = "compile")]
mod lint;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "compile"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
