//! Whole-URL verdicts for one or more agents, from one rules file or a
//! bundle: the decision `robofilter filter` makes for every line, shared
//! with other front ends (the Python wheel) so that all of them give the
//! same answer.
//!
//! A frontier line is a URL, optionally followed by a TAB and fields (see
//! [`url_line`]). The line is *not a URL* ([`Outcome::Invalid`]) if the
//! URL is empty, holds an ASCII control octet, ends with a space or does
//! not start with `scheme://`. A URL is then decided, for each agent, by
//! the rules file, or, for a bundle, by its host's entry: the host's rules,
//! the fixed verdict of its fetch outcome, or [`Outcome::Unknown`] when the
//! bundle has no entry for it. The host lookup and the path are shared by
//! the agents: N agents cost one lookup and N walks.

use std::sync::{Arc, OnceLock};

use crate::access::FetchStatus;
use crate::bundle::{Bundle, HostInfo, HostRules, MemberSpan};
use crate::dialect::Dialect;
use crate::error::{AgentError, LoadError, UsageError};
use crate::lines::url_line;
use crate::matcher::is_rfc9309_robots_txt;
use crate::rules::{Matcher, Reason, RuleInfo, Rules};
use crate::shard::shard_of_key;
use crate::tier::{Allowance, Hot};
use crate::url::{MatchPath, NoHostKey, url_authority, url_host_key_end};
use crate::usage::{Preferences, UsageRules};
use crate::verdict::{RuleKind, Verdict};

/// The outcome of one line.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Outcome {
    /// The URL may be crawled.
    Allow,
    /// The URL must not be crawled.
    Disallow,
    /// A bundle has no entry for the URL's host (or the URL has no host).
    Unknown,
    /// The line is not a URL.
    Invalid,
}

impl Outcome {
    /// The outcome's name as `filter` writes it: `allow`, `disallow`,
    /// `unknown` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Disallow => "disallow",
            Outcome::Unknown => "unknown",
            Outcome::Invalid => "invalid",
        }
    }
}

impl Outcome {
    /// The outcome of a line for several agents together: `invalid` if
    /// the line is not a URL, else `disallow` if any agent is disallowed,
    /// else `unknown` if the host is unknown, else `allow` (`allow` for no
    /// agents).
    ///
    /// ```
    /// use robofilter::Outcome::{Allow, Disallow, Unknown};
    ///
    /// assert_eq!(robofilter::Outcome::combine(&[Allow, Disallow]), Disallow);
    /// assert_eq!(robofilter::Outcome::combine(&[Unknown, Unknown]), Unknown);
    /// assert_eq!(robofilter::Outcome::combine(&[Allow, Allow]), Allow);
    /// ```
    pub fn combine(outcomes: &[Outcome]) -> Outcome {
        Outcome::combine_all(outcomes.iter().copied())
    }

    /// [`Outcome::combine`] over an iterator.
    fn combine_all(outcomes: impl Iterator<Item = Outcome>) -> Outcome {
        let rank = |o: &Outcome| match o {
            Outcome::Allow => 0,
            Outcome::Unknown => 1,
            Outcome::Disallow => 2,
            Outcome::Invalid => 3,
        };
        outcomes.max_by_key(rank).unwrap_or(Outcome::Allow)
    }
}

impl From<Verdict> for Outcome {
    fn from(v: Verdict) -> Outcome {
        match v {
            Verdict::Allow => Outcome::Allow,
            Verdict::Disallow => Outcome::Disallow,
        }
    }
}

/// The member rules files of a bundle, each checked and loaded the first
/// time one of its hosts is looked up, then kept. Shared by every
/// [`UrlChecker`] of the bundle (and across threads).
///
/// A bundle loaded whole ([`Bundle::from_bytes`]) has its members' bytes;
/// one loaded from its index ([`Bundle::from_index`]) gets them from a
/// [`MemberReader`] ([`Members::with_reader`]), once per member.
pub struct Members<'a> {
    /// Boxed: a bundle has a slot per member (86 k in the corpus's), of
    /// which a run may use a few, and a slot holding a `Rules` inline took
    /// 13 MB, all written when the slots were made.
    slots: Vec<OnceLock<Box<Result<Rules<'a>, LoadError>>>>,
    reader: Option<&'a MemberReader<'a>>,
}

/// Reads the file octets of a bundle member for [`Members`]: given the
/// member's index and [`MemberSpan`], the padding and the member (the
/// member at an 8-byte aligned address), which [`Bundle::member_from`]
/// then checks. The caller does the I/O, and its error names the file.
pub type MemberReader<'a> = dyn Fn(usize, MemberSpan) -> std::io::Result<(&'a [u8], &'a [u8])>
    + Sync
    + 'a;

impl core::fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Members")
            .field("slots", &self.slots)
            .field("reader", &self.reader.map(|_| "MemberReader"))
            .finish()
    }
}

impl<'a> Members<'a> {
    /// Empty slots for every member of `bundle`, which holds its members'
    /// bytes.
    pub fn new(bundle: &Bundle<'a>) -> Members<'a> {
        Members {
            slots: (0..bundle.member_len()).map(|_| OnceLock::new()).collect(),
            reader: None,
        }
    }

    /// Empty slots for every member of `bundle`, whose members' bytes
    /// `reader` reads (once per member) when first used.
    pub fn with_reader(
        bundle: &Bundle<'a>,
        reader: &'a MemberReader<'a>,
    ) -> Members<'a> {
        Members { reader: Some(reader), ..Members::new(bundle) }
    }

    /// Member `m` of `bundle` (the bundle these slots were made for),
    /// loaded on first use.
    ///
    /// # Panics
    ///
    /// If `m` is not a member index of the bundle.
    pub fn get(
        &self,
        bundle: &Bundle<'a>,
        m: usize,
    ) -> Result<&Rules<'a>, &LoadError> {
        let load = || match self.reader {
            None => bundle.member(m),
            Some(read) => {
                let (padding, member) = read(m, bundle.member_span(m))
                    .map_err(|e| LoadError::read(e.to_string()))?;
                bundle.member_from(m, padding, member)
            }
        };
        self.slots[m].get_or_init(|| Box::new(load())).as_ref().as_ref()
    }
}

/// A bundle member that could not be used: its rules file is damaged, or
/// it was compiled for other agents.
///
/// One pointer wide, so that `Result<Target, MemberError>` stays small
/// (see [`Target`]).
#[derive(Clone, Debug)]
pub struct MemberError {
    inner: Box<MemberErrorInner>,
}

#[derive(Clone, Debug)]
struct MemberErrorInner {
    shard: Option<usize>,
    member: Option<usize>,
    message: String,
}

impl MemberError {
    fn new(member: usize, message: String) -> MemberError {
        let inner =
            MemberErrorInner { shard: None, member: Some(member), message };
        MemberError { inner: Box::new(inner) }
    }

    /// The error of shard `shard` that could not be opened.
    fn shard(shard: usize, message: String) -> MemberError {
        let inner =
            MemberErrorInner { shard: Some(shard), member: None, message };
        MemberError { inner: Box::new(inner) }
    }

    /// This error, which happened in shard `shard`.
    fn in_shard(mut self, shard: usize) -> MemberError {
        self.inner.shard = Some(shard);
        self
    }

    /// The member's index in its bundle (`None`: a shard could not be
    /// opened).
    pub fn member(&self) -> Option<usize> {
        self.inner.member
    }

    /// The shard, for a sharded bundle ([`UrlChecker::shards`]).
    pub fn shard_index(&self) -> Option<usize> {
        self.inner.shard
    }
}

impl core::fmt::Display for MemberError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let MemberErrorInner { shard, member, message } = &*self.inner;
        match (shard, member) {
            (Some(s), Some(m)) => {
                write!(f, "shard {s}, member {m}: {message}")
            }
            (Some(s), None) => write!(f, "shard {s}: {message}"),
            (None, Some(m)) => write!(f, "member {m}: {message}"),
            (None, None) => f.write_str(message),
        }
    }
}

/// The matchers of one rules file, one per agent in a checker's order:
/// what [`Target::Rules`] points to. It dereferences to the slice.
#[derive(Debug)]
pub struct Matchers<'a> {
    each: Box<[Matcher<'a>]>,
    /// Per agent, the count of its split or direct group, which gets its
    /// whole DFA once it has decided many URLs (see `tier.rs`); agents of
    /// one group share it.
    hot: Box<[Option<Arc<Hot>>]>,
    /// Per agent, its Content-Usage rules, read from the side section the
    /// first time a URL's preferences are asked for.
    usage: OnceLock<Result<Box<[UsageRules]>, UsageError>>,
}

impl<'a> Matchers<'a> {
    /// The matchers, one per agent.
    pub fn new(each: Vec<Matcher<'a>>) -> Matchers<'a> {
        let hot = each.iter().map(|_| None).collect();
        Matchers { each: each.into_boxed_slice(), hot, usage: OnceLock::new() }
    }

    /// [`Matchers::new`] whose split and direct groups get their whole DFA
    /// once they are hot, within `allowance`.
    fn tiered(
        each: Vec<Matcher<'a>>,
        allowance: &Arc<Allowance>,
    ) -> Matchers<'a> {
        let mut hot: Vec<Option<Arc<Hot>>> = Vec::with_capacity(each.len());
        for (i, m) in each.iter().enumerate() {
            let same = (0..i).find(|&j| each[j].group() == m.group());
            hot.push(match same {
                Some(j) => hot[j].clone(),
                None => Hot::for_matcher(m, allowance).map(Arc::new),
            });
        }
        Matchers {
            each: each.into_boxed_slice(),
            hot: hot.into(),
            usage: OnceLock::new(),
        }
    }

    /// Agent `i`'s Content-Usage rules (`agents`: the agents' names, in
    /// the matchers' order), read once for every agent: the first call's
    /// `agents` are the ones kept.
    ///
    /// # Errors
    ///
    /// As [`Rules::content_usage`].
    ///
    /// # Panics
    ///
    /// If `agents` holds fewer names than there are matchers and `i` is
    /// past them.
    pub fn usage(
        &self,
        agents: &[String],
        i: usize,
    ) -> Result<&UsageRules, UsageError> {
        let all = self.usage.get_or_init(|| {
            let each = self.each.iter().zip(agents);
            each.map(|(m, agent)| m.rules.content_usage(agent)).collect()
        });
        match all {
            Ok(all) => Ok(&all[i]),
            Err(e) => Err(e.clone()),
        }
    }

    /// Agent `i`'s verdict for `path` (read in the rules' dialect).
    #[inline]
    fn decide(&self, i: usize, path: MatchPath<'_>) -> Verdict {
        decide_one(&self.each[i], &self.hot[i], path)
    }

    /// Every agent's outcome for `path` (read in the rules' dialect) into
    /// `out`: agents whose group is the same (most agents fall back to
    /// `*`) share one walk: same group, same verdict.
    #[inline(never)]
    fn outcomes(&self, path: MatchPath<'_>, out: &mut [Outcome]) {
        let out = &mut out[..self.each.len()];
        for i in 0..self.each.len() {
            let group = self.each[i].group();
            out[i] = match (0..i).find(|&j| self.each[j].group() == group) {
                Some(j) => out[j],
                None => Outcome::from(self.decide(i, path)),
            };
        }
    }

    /// Whether agent `i`'s group decides by a DFA built while deciding
    /// (see `tier.rs`).
    pub fn is_built(&self, i: usize) -> bool {
        self.hot[i].as_ref().is_some_and(|h| h.is_built())
    }
}

/// A matcher's verdict for `path`, through its group's count (`hot`) if it
/// has one.
#[inline(always)]
fn decide_one(
    m: &Matcher<'_>,
    hot: &Option<Arc<Hot>>,
    path: MatchPath<'_>,
) -> Verdict {
    match hot {
        None => m.decide_path(path),
        Some(hot) => hot.decide(m, path),
    }
}

impl<'a> core::ops::Deref for Matchers<'a> {
    type Target = [Matcher<'a>];

    fn deref(&self) -> &[Matcher<'a>] {
        &self.each
    }
}

impl std::error::Error for MemberError {}

/// What decides one URL, for every agent of a checker.
///
/// Two words, so that it moves in registers: filter's per-line code moves
/// it several times, and a three-word `Target` went through the stack as
/// overlapping copies that stall store-to-load forwarding (35 % of the
/// per-line time on one host, by `perf annotate`).
#[derive(Clone, Copy, Debug)]
pub enum Target<'m, 'a> {
    /// The host's robots.txt rules (or the single rules file): one matcher
    /// per agent, in the checker's order.
    Rules(&'m Matchers<'a>),
    /// The fetch outcome of the host's robots.txt decides every URL, with
    /// the cause the bundle recorded, if any
    /// ([`HostInfo::cause`](crate::HostInfo::cause)).
    Fixed(Verdict, FetchStatus, Option<&'m &'a str>),
    /// The URL is the host's `/robots.txt`, which the rfc9309 dialect
    /// always allows (RFC 9309 section 2.2.2), whatever the fetch outcome
    /// (this status and cause) says about the host's other URLs.
    RobotsTxt(FetchStatus, Option<&'m &'a str>),
    /// The bundle has no entry for the host, or the URL has no host.
    Unknown,
    /// The URL's authority holds an octet RFC 3986 forbids there (see
    /// [`NoHostKey::Ambiguous`]): readers disagree on its host, so a bundle
    /// cannot decide it and the line is [`Outcome::Invalid`].
    Ambiguous,
}

// Kept at two words (see above): a wider variant fails the build.
const _: () = assert!(size_of::<Target<'static, 'static>>() <= 16);

impl Target<'_, '_> {
    /// This host's target for `url` in a bundle of `dialect`: a host whose
    /// fetch outcome disallows everything still has its `/robots.txt`
    /// allowed in the rfc9309 dialect (RFC 9309 section 2.2.2), so the
    /// target becomes [`Target::RobotsTxt`]. Every other target is kept.
    #[inline]
    pub fn for_url(self, dialect: Dialect, url: &[u8]) -> Self {
        match self {
            Target::Fixed(Verdict::Disallow, status, cause)
                if dialect == Dialect::Rfc9309
                    && is_rfc9309_robots_txt(MatchPath::parse(
                        url,
                        Dialect::Rfc9309,
                    )) =>
            {
                Target::RobotsTxt(status, cause)
            }
            target => target,
        }
    }

    /// The outcome of `url` for agent number `agent` (an index into the
    /// checker's agents), where `path` is the URL's path as [`url_line`]
    /// found it. The path is read in the rules' dialect.
    ///
    /// # Panics
    ///
    /// If `agent` is not an agent index of the checker.
    #[inline]
    pub fn outcome(
        &self,
        agent: usize,
        url: &[u8],
        path: MatchPath<'_>,
    ) -> Outcome {
        match *self {
            Target::Rules(ms) => {
                let path = path.for_dialect(url, ms[agent].dialect());
                Outcome::from(ms.decide(agent, path))
            }
            other => other.fixed_outcome(),
        }
    }

    /// The outcome of `url` for every agent, into `out` (one per agent,
    /// in the checker's order); the path is read once.
    ///
    /// Inlined, so that one agent's path reaches its walk in registers
    /// (out of line, the three-word path went through the stack).
    ///
    /// # Panics
    ///
    /// If `out` is shorter than the checker's agents.
    #[inline(always)]
    pub fn outcomes(
        &self,
        url: &[u8],
        path: MatchPath<'_>,
        out: &mut [Outcome],
    ) {
        match *self {
            Target::Rules(ms) => {
                let Some(first) = ms.first() else { return };
                let path = path.for_dialect(url, first.dialect());
                // Matched as slices: `ms.decide(0, path)` behind a length
                // test keeps its bounds checks (3 % more instructions on
                // one host).
                match (&*ms.each, &*ms.hot) {
                    ([one], [hot]) => {
                        out[0] = Outcome::from(decide_one(one, hot, path));
                    }
                    _ => ms.outcomes(path, out),
                }
            }
            other => out.fill(other.fixed_outcome()),
        }
    }

    /// The outcome of every agent when no rules decide.
    #[inline]
    fn fixed_outcome(&self) -> Outcome {
        match *self {
            Target::Rules(_) => unreachable!("rules decide per agent"),
            Target::Fixed(v, ..) => Outcome::from(v),
            Target::RobotsTxt(..) => Outcome::Allow,
            Target::Unknown => Outcome::Unknown,
            Target::Ambiguous => Outcome::Invalid,
        }
    }
}

/// The least capacity of a buffer that a thread writes for every URL
/// beside other threads: the first octets of two such buffers are then at
/// least this far apart, on different cache lines.
const UNSHARED: usize = 256;

/// A worker's memory of the last host it looked up: runs of URLs of one
/// host then cost one comparison each. One per thread.
#[derive(Debug)]
pub struct HostCache<'m, 'a> {
    key: Vec<u8>,
    last_key: Vec<u8>,
    /// `scheme://authority` of the URL whose host `last` is the target
    /// of: a URL that starts with it, followed by `/ ? #` or nothing, has
    /// the same host key without computing it.
    last_prefix: Vec<u8>,
    last: Option<Target<'m, 'a>>,
}

impl Default for HostCache<'_, '_> {
    fn default() -> Self {
        HostCache::new()
    }
}

impl<'m, 'a> HostCache<'m, 'a> {
    /// An empty cache, which allocates when it first remembers a host.
    pub fn new() -> Self {
        HostCache {
            key: Vec::new(),
            last_key: Vec::new(),
            last_prefix: Vec::new(),
            last: None,
        }
    }

    /// This cache with its last host forgotten and its buffers kept, for
    /// any checker: a caller that decides one URL per call (the Python
    /// wheel's `verdict`) keeps it between calls, so that a call does not
    /// allocate the buffers again.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use robofilter::{
    ///     AlignedBytes, Bundle, BundleBuilder, Config, Fetch, HostCache,
    ///     Members, Outcome, UrlChecker,
    /// };
    ///
    /// let mut builder = BundleBuilder::new(Config::new());
    /// let body = b"User-agent: *\nDisallow: /a\n".to_vec();
    /// builder.add("x.example", Fetch::http(200, 0, body))?;
    /// let bytes = AlignedBytes::from(&builder.finish()?[..]);
    /// let bundle = Bundle::from_bytes(bytes.as_bytes())?;
    /// let mut kept: HostCache<'static, 'static> = HostCache::new();
    /// for (url, want) in [
    ///     (&b"http://x.example/a"[..], Outcome::Disallow),
    ///     (b"http://y.example/a", Outcome::Unknown),
    /// ] {
    ///     // A checker per call, as a caller with nothing to keep has.
    ///     let members = Arc::new(Members::new(&bundle));
    ///     let checker = UrlChecker::bundle(&bundle, members, &["bot"])?;
    ///     let mut cache = std::mem::take(&mut kept);
    ///     assert_eq!(checker.check(url, &mut cache)?, want);
    ///     kept = cache.emptied();
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn emptied<'n, 'b>(self) -> HostCache<'n, 'b> {
        let HostCache { mut key, mut last_key, mut last_prefix, last: _ } =
            self;
        key.clear();
        last_key.clear();
        last_prefix.clear();
        HostCache { key, last_key, last_prefix, last: None }
    }

    /// An empty cache for a thread that decides many URLs while other
    /// threads do the same: its buffers, written for every new host,
    /// start at 256 octets each, so that they never share a cache line
    /// with another thread's cache. (Two threads writing into one
    /// line take turns owning it; small per-thread buffers cost `filter
    /// -j 2` most of its speed-up.)
    pub fn unshared() -> Self {
        let buffer = || Vec::with_capacity(UNSHARED);
        HostCache {
            key: buffer(),
            last_key: buffer(),
            last_prefix: buffer(),
            last: None,
        }
    }

    /// The last host's target if `url` has the same `scheme://authority`.
    #[inline(always)]
    fn same_authority(&self, url: &[u8]) -> Option<Target<'m, 'a>> {
        let prefix = &self.last_prefix[..];
        let same = url.len() >= prefix.len()
            && same_octets(&url[..prefix.len()], prefix)
            && matches!(
                url.get(prefix.len()),
                None | Some(b'/' | b'?' | b'#')
            );
        self.last.filter(|_| same && !prefix.is_empty())
    }
}

/// `a == b` for slices of one length, compared in place up to 32 octets
/// (two overlapping loads of 8 or 16 octets per side) instead of by a
/// call to `memcmp`: a URL's `scheme://authority` is compared with the
/// last host's on every line, and the call cost about 2 % of a
/// mixed-host run (the lab notes in docs/records).
#[inline(always)]
fn same_octets(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn at<const N: usize>(s: &[u8], i: usize) -> [u8; N] {
        s[i..i + N].try_into().expect("N octets")
    }
    match n {
        16..=32 => {
            let word = |s, i| u128::from_ne_bytes(at(s, i));
            word(a, 0) == word(b, 0) && word(a, n - 16) == word(b, n - 16)
        }
        8..=15 => {
            let word = |s, i| u64::from_ne_bytes(at(s, i));
            word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

#[derive(Debug)]
enum Scope<'a> {
    Single(Matchers<'a>),
    Hosts {
        bundle: Bundle<'a>,
        members: Arc<Members<'a>>,
        /// The agents' matchers per member, built on first use.
        matchers: Vec<OnceLock<Result<Matchers<'a>, MemberError>>>,
        /// What hot groups may spend (shared with the other shards).
        allowance: Arc<Allowance>,
        /// The recorded causes of the hosts without rules, by host index:
        /// a [`Target::Fixed`] points at its cause here, so that a target
        /// stays two words.
        causes: Vec<(usize, &'a str)>,
    },
    Shards {
        dialect: Dialect,
        open: Opener<'a>,
        /// Per shard, a checker of its bundle, built on first use.
        shards: Vec<OnceLock<Result<UrlChecker<'a>, MemberError>>>,
        /// What hot groups may spend, in all shards together.
        allowance: Arc<Allowance>,
    },
}

/// A host's entry in a bundle or shard directory
/// ([`UrlChecker::host_entry`]).
#[derive(Clone, Copy, Debug)]
pub struct HostEntry<'m, 'a> {
    /// The host: its name, fetch outcome and recorded cause.
    pub info: HostInfo<'a>,
    /// Its robots.txt, compiled; `None` for a host whose fetch outcome
    /// decides every URL (allow all, disallow all).
    pub rules: Option<&'m Rules<'a>>,
}

/// Opens shard `i` of a sharded bundle ([`UrlChecker::shards`]): its
/// bundle and members. The caller does the I/O; its error names the file.
pub type ShardOpener<'a> = dyn Fn(usize) -> Result<(Bundle<'a>, Arc<Members<'a>>), String>
    + Sync
    + 'a;

/// A [`ShardOpener`], debug-printed by name.
struct Opener<'a>(&'a ShardOpener<'a>);

impl core::fmt::Debug for Opener<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ShardOpener")
    }
}

/// Decides whole URL lines for one or more agents.
///
/// Built once per run (or batch) and shared by the threads that decide
/// lines; each thread keeps its own [`HostCache`]
/// ([`HostCache::unshared`] when several threads decide at once).
///
/// ```
/// use robofilter::{Compiler, Outcome, Rules, UrlChecker};
///
/// let robots = b"User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /\n";
/// let bytes = Compiler::new().compile(robots)?;
/// let bytes = robofilter::AlignedBytes::from(&bytes[..]);
/// let rules = Rules::from_bytes(bytes.as_bytes())?;
/// let checker = UrlChecker::rules(&rules, &["FooBot", "GPTBot"])?;
/// let mut cache = robofilter::HostCache::new();
/// let mut each = [Outcome::Invalid; 2];
/// let mut check = |line: &[u8]| {
///     checker.check_each(line, &mut cache, &mut each).unwrap();
///     each
/// };
/// assert_eq!(check(b"https://example.com/private/x"), [Outcome::Disallow; 2]);
/// assert_eq!(check(b"https://example.com/public"), [Outcome::Allow, Outcome::Disallow]);
/// assert_eq!(check(b"not a url"), [Outcome::Invalid; 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct UrlChecker<'a> {
    scope: Scope<'a>,
    agents: Box<[String]>,
}

impl<'a> UrlChecker<'a> {
    /// A checker that decides every URL by `rules`, for each of `agents`.
    pub fn rules(
        rules: &Rules<'a>,
        agents: &[&str],
    ) -> Result<UrlChecker<'a>, AgentError> {
        let matchers = agents.iter().map(|a| rules.matcher(a));
        let matchers = matchers.collect::<Result<_, _>>()?;
        Ok(UrlChecker {
            scope: Scope::Single(Matchers::tiered(
                matchers,
                &Allowance::new(),
            )),
            agents: agents.iter().map(|a| a.to_string()).collect(),
        })
    }

    /// A checker that decides each URL by its host's entry in `bundle`,
    /// for each of `agents`. `members` holds the bundle's loaded members
    /// and may be shared by several checkers (for other agents, say).
    ///
    /// The checker borrows only the bundle's bytes (`'a`), so a front end
    /// can keep it next to them and reuse the matchers it built across
    /// calls, as the Python wheel does.
    ///
    /// Fails early if the bundle was compiled for other agents (every
    /// member is compiled with the same agents, so the first one tells)
    /// or its first member is damaged.
    pub fn bundle(
        bundle: &Bundle<'a>,
        members: Arc<Members<'a>>,
        agents: &[&str],
    ) -> Result<UrlChecker<'a>, MemberError> {
        UrlChecker::bundle_in(bundle, members, agents, Allowance::new())
    }

    /// [`UrlChecker::bundle`] whose hot groups spend `allowance`.
    fn bundle_in(
        bundle: &Bundle<'a>,
        members: Arc<Members<'a>>,
        agents: &[&str],
        allowance: Arc<Allowance>,
    ) -> Result<UrlChecker<'a>, MemberError> {
        let matchers = (0..bundle.member_len()).map(|_| OnceLock::new());
        let causes = bundle
            .hosts()
            .enumerate()
            .filter_map(|(i, h)| h.cause().map(|c| (i, c)))
            .collect();
        let checker = UrlChecker {
            scope: Scope::Hosts {
                bundle: bundle.clone(),
                members,
                matchers: matchers.collect(),
                allowance,
                causes,
            },
            agents: agents.iter().map(|a| a.to_string()).collect(),
        };
        if bundle.member_len() > 0 {
            checker.member_matchers(0)?;
        }
        Ok(checker)
    }

    /// A checker that decides each URL by its host's entry in one of
    /// `count` bundles, the *shards* of a bundle split by host: a host's
    /// shard is [`shard_of_key`] of its bundle host key. `open` gives
    /// shard `i`'s bundle and members the first time a URL of one of its
    /// hosts is decided, so shards no URL needs are never opened; each
    /// opened shard must be of `dialect` and compiled for `agents`. The
    /// verdicts are exactly those of one bundle holding every shard's
    /// hosts.
    ///
    /// # Panics
    ///
    /// If `count` is 0.
    pub fn shards(
        count: usize,
        dialect: Dialect,
        open: &'a ShardOpener<'a>,
        agents: &[&str],
    ) -> UrlChecker<'a> {
        assert!(count > 0, "a sharded bundle has at least one shard");
        UrlChecker {
            scope: Scope::Shards {
                dialect,
                open: Opener(open),
                shards: (0..count).map(|_| OnceLock::new()).collect(),
                allowance: Allowance::new(),
            },
            agents: agents.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// The checker of shard `s`, opened on first use.
    fn shard(&self, s: usize) -> Result<&UrlChecker<'a>, MemberError> {
        let Scope::Shards { dialect, open, shards, allowance } = &self.scope
        else {
            unreachable!("only a sharded bundle has shards")
        };
        shards[s]
            .get_or_init(|| {
                let (bundle, members) =
                    (open.0)(s).map_err(|e| MemberError::shard(s, e))?;
                if bundle.dialect() != *dialect {
                    return Err(MemberError::shard(
                        s,
                        format!(
                            "its dialect is {}, the other shards' {dialect}",
                            bundle.dialect()
                        ),
                    ));
                }
                let agents: Vec<&str> =
                    self.agents.iter().map(String::as_str).collect();
                let allowance = Arc::clone(allowance);
                UrlChecker::bundle_in(&bundle, members, &agents, allowance)
                    .map_err(|e| e.in_shard(s))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The entry of the host whose key is `key` (see
    /// [`url_host_key`](crate::url_host_key)) in the checker's bundle or
    /// shards, with its compiled robots.txt when it has one (loaded as
    /// deciding one of its URLs would load it): what a caller reads the
    /// host's sitemaps, crawl delay and other lines from. `None`: no entry
    /// for the host, or the checker has one rules file and no hosts.
    ///
    /// # Errors
    ///
    /// A [`MemberError`] if the host's member or shard cannot be loaded.
    pub fn host_entry<'m>(
        &'m self,
        key: &[u8],
    ) -> Result<Option<HostEntry<'m, 'a>>, MemberError> {
        match &self.scope {
            Scope::Single(_) => Ok(None),
            Scope::Hosts { bundle, members, .. } => {
                let Some(i) = bundle.find(key) else { return Ok(None) };
                let info = bundle.host(i);
                let rules = match info.rules() {
                    HostRules::Member(m) => Some(
                        members
                            .get(bundle, m)
                            .map_err(|e| MemberError::new(m, e.to_string()))?,
                    ),
                    HostRules::AllowAll | HostRules::DisallowAll => None,
                };
                Ok(Some(HostEntry { info, rules }))
            }
            Scope::Shards { shards, .. } => {
                let s = shard_of_key(key, shards.len() as u32) as usize;
                let shard = self.shard(s)?;
                shard.host_entry(key).map_err(|e| e.in_shard(s))
            }
        }
    }

    /// Whether one rules file decides every URL, whatever its host (no
    /// bundle or shards: a host is not looked up).
    pub fn is_single(&self) -> bool {
        matches!(self.scope, Scope::Single(_))
    }

    /// The agents, in the order their outcomes are given.
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// Agent `agent`'s Content-Usage preferences (AIPREF; see
    /// [`UsageRules`]) for `url`, whose outcome for that agent is
    /// `outcome` by `target` (`None`: not a URL). `None` where there is no
    /// preference to have: a URL that is not allowed, a host without an
    /// entry, a line that is not a URL. A host whose robots.txt is
    /// unavailable (allow all) has no rule, so every key is unknown there.
    ///
    /// # Errors
    ///
    /// The host's rules file's side section is damaged.
    pub fn preferences(
        &self,
        url: &[u8],
        target: Option<Target<'_, 'a>>,
        agent: usize,
        outcome: Outcome,
    ) -> Result<Option<Preferences>, UsageError> {
        if outcome != Outcome::Allow {
            return Ok(None);
        }
        Ok(match target {
            Some(Target::Rules(ms)) => {
                Some(ms.usage(&self.agents, agent)?.preferences(url))
            }
            Some(Target::Fixed(..) | Target::RobotsTxt(..)) => {
                Some(Preferences::UNKNOWN)
            }
            Some(Target::Unknown | Target::Ambiguous) | None => None,
        })
    }

    /// [`UrlChecker::preferences`] of every agent, whose outcomes are
    /// `each`, into `out` (cleared first).
    ///
    /// # Errors
    ///
    /// As [`UrlChecker::preferences`].
    pub fn preferences_each(
        &self,
        url: &[u8],
        target: Option<Target<'_, 'a>>,
        each: &[Outcome],
        out: &mut Vec<Option<Preferences>>,
    ) -> Result<(), UsageError> {
        out.clear();
        for (agent, &outcome) in each[..self.agents.len()].iter().enumerate() {
            out.push(self.preferences(url, target, agent, outcome)?);
        }
        Ok(())
    }

    /// A buffer of one outcome per agent (each [`Outcome::Invalid`]) for a
    /// thread that decides many URLs beside other threads: like
    /// [`HostCache::unshared`], it shares no cache line with another
    /// thread's buffer.
    pub fn unshared_outcomes(&self) -> Vec<Outcome> {
        let mut each = Vec::with_capacity(self.agents.len().max(UNSHARED));
        each.resize(self.agents.len(), Outcome::Invalid);
        each
    }

    /// The agents' matchers for bundle member `m`.
    fn member_matchers(&self, m: usize) -> Result<&Matchers<'a>, MemberError> {
        let Scope::Hosts { bundle, members, matchers, allowance, .. } =
            &self.scope
        else {
            unreachable!("only bundles have members")
        };
        matchers[m]
            .get_or_init(|| {
                let error = |message: String| MemberError::new(m, message);
                let rules = members
                    .get(bundle, m)
                    .map_err(|e| error(e.to_string()))?;
                let each = self.agents.iter().map(|a| rules.matcher(a));
                each.collect::<Result<_, _>>()
                    .map(|each| Matchers::tiered(each, allowance))
                    .map_err(|e| error(e.to_string()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// What decides `url` (a line that [`url_line`] accepted).
    #[inline(always)]
    pub fn target<'m>(
        &'m self,
        url: &[u8],
        cache: &mut HostCache<'m, 'a>,
    ) -> Result<Target<'m, 'a>, MemberError> {
        let dialect = match &self.scope {
            Scope::Single(ms) => return Ok(Target::Rules(ms)),
            Scope::Hosts { bundle, .. } => bundle.dialect(),
            Scope::Shards { dialect, .. } => *dialect,
        };
        // Per host, cached; then the per-URL exception.
        let target = match cache.same_authority(url) {
            Some(target) => target,
            None => match self.new_host_target(url, cache)? {
                Some(target) => target,
                None => return Ok(Target::Ambiguous),
            },
        };
        Ok(target.for_url(dialect, url))
    }

    /// [`UrlChecker::target`] for a URL whose authority is not the last
    /// one's, before the per-URL exception: the host key, then the entry
    /// of its shard and bundle. `None` for an ambiguous authority.
    #[inline(never)]
    fn new_host_target<'m>(
        &'m self,
        url: &[u8],
        cache: &mut HostCache<'m, 'a>,
    ) -> Result<Option<Target<'m, 'a>>, MemberError> {
        let end = match url_host_key_end(url, &mut cache.key) {
            Ok(end) => end,
            Err(NoHostKey::Missing) => return Ok(Some(Target::Unknown)),
            Err(NoHostKey::Ambiguous) => return Ok(None),
        };
        let target = match (&self.scope, cache.last) {
            // The same key as the last host (another spelling of its
            // authority): its target, without a lookup or a shard.
            (_, Some(t)) if cache.key == cache.last_key => t,
            (Scope::Single(_), _) => unreachable!("a rules file has no hosts"),
            (Scope::Hosts { bundle, .. }, _) => {
                self.host_target(bundle, cache)?
            }
            (Scope::Shards { shards, .. }, _) => {
                let s = shard_of_key(&cache.key, shards.len() as u32) as usize;
                let inner = self.shard(s)?;
                let Scope::Hosts { bundle, .. } = &inner.scope else {
                    unreachable!("a shard is a bundle")
                };
                inner.host_target(bundle, cache).map_err(|e| e.in_shard(s))?
            }
        };
        cache.last_prefix.clear();
        cache.last_prefix.extend_from_slice(&url[..end]);
        Ok(Some(target))
    }

    /// The target of the host whose key is in `cache.key` (not the last
    /// host's: [`UrlChecker::new_host_target`] answers that one), which
    /// becomes the cache's last host.
    #[inline]
    fn host_target<'m>(
        &'m self,
        bundle: &Bundle<'a>,
        cache: &mut HostCache<'m, 'a>,
    ) -> Result<Target<'m, 'a>, MemberError> {
        let cause = |i: usize| match &self.scope {
            Scope::Hosts { causes, .. } => causes
                .binary_search_by_key(&i, |c| c.0)
                .ok()
                .map(|c| &causes[c].1),
            _ => None,
        };
        let target = match bundle.find(&cache.key) {
            None => Target::Unknown,
            Some(i) => {
                let host = bundle.host(i);
                match host.rules() {
                    HostRules::Member(m) => {
                        Target::Rules(self.member_matchers(m)?)
                    }
                    HostRules::AllowAll => {
                        Target::Fixed(Verdict::Allow, host.status(), cause(i))
                    }
                    HostRules::DisallowAll => Target::Fixed(
                        Verdict::Disallow,
                        host.status(),
                        cause(i),
                    ),
                }
            }
        };
        core::mem::swap(&mut cache.key, &mut cache.last_key);
        cache.last = Some(target);
        Ok(target)
    }

    /// The outcome of a URL whose path has been found already, for each
    /// agent, into `out` (one per agent).
    ///
    /// # Panics
    ///
    /// If `out` is shorter than [`agents`](UrlChecker::agents).
    #[inline]
    pub fn decide_url<'m>(
        &'m self,
        url: &[u8],
        path: MatchPath<'_>,
        cache: &mut HostCache<'m, 'a>,
        out: &mut [Outcome],
    ) -> Result<(), MemberError> {
        self.target(url, cache)?.outcomes(url, path, out);
        Ok(())
    }

    /// The outcome of one line (without its `\n`) for each agent, into
    /// `out` (one per agent).
    ///
    /// The error is a bundle member that cannot be used.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than [`agents`](UrlChecker::agents).
    #[inline]
    pub fn check_each<'m>(
        &'m self,
        line: &[u8],
        cache: &mut HostCache<'m, 'a>,
        out: &mut [Outcome],
    ) -> Result<(), MemberError> {
        match url_line(line, line.len()) {
            Some((url, path)) => self.decide_url(url, path, cache, out),
            None => {
                out[..self.agents.len()].fill(Outcome::Invalid);
                Ok(())
            }
        }
    }

    /// The outcome of one line (without its `\n`) for all agents together
    /// ([`Outcome::combine`]): for one agent, that agent's outcome.
    pub fn check<'m>(
        &'m self,
        line: &[u8],
        cache: &mut HostCache<'m, 'a>,
    ) -> Result<Outcome, MemberError> {
        let Some((url, path)) = url_line(line, line.len()) else {
            return Ok(Outcome::Invalid);
        };
        let target = self.target(url, cache)?;
        let each =
            (0..self.agents.len()).map(|a| target.outcome(a, url, path));
        Ok(Outcome::combine_all(each))
    }
}

/// Writes why a line got its outcome for agent number `agent`, in words
/// (the REASON of `filter --explain` and `robofilter explain`), given what
/// decided it (`None`: the line is not a URL). Returns the rules' reason
/// when rules decided (found by the direct matcher, which is slower than
/// [`Matcher::decide`]).
///
/// # Panics
///
/// If rules decided and `agent` is not an agent index of the checker.
pub fn write_why<'a>(
    out: &mut Vec<u8>,
    url: &[u8],
    target: Option<Target<'_, 'a>>,
    agent: usize,
) -> Option<Reason<'a>> {
    match target {
        Some(Target::Rules(ms)) => {
            let reason = ms[agent].explain(url).reason();
            write_reason(out, reason);
            return Some(reason);
        }
        Some(Target::Fixed(v, status, cause)) => {
            let what = match v {
                Verdict::Allow => "unavailable: allow all",
                Verdict::Disallow => "unreachable: disallow all",
            };
            let text = format!(
                "robots.txt {}, {what} (RFC 9309)",
                Outage(status, cause)
            );
            out.extend_from_slice(text.as_bytes());
        }
        Some(Target::RobotsTxt(status, cause)) => {
            let text = format!(
                "/robots.txt is always allowed (RFC 9309), although the \
                 host's robots.txt was {}",
                Outage(status, cause)
            );
            out.extend_from_slice(text.as_bytes());
        }
        Some(Target::Ambiguous) => out.extend_from_slice(
            b"the authority holds an octet RFC 3986 forbids there \
              (readers disagree on its host)",
        ),
        Some(Target::Unknown) => {
            let mut host = Vec::new();
            if url_authority(url, &mut host) {
                out.extend_from_slice(b"no entry for host ");
                out.extend_from_slice(&host);
            } else {
                out.extend_from_slice(b"no host in the URL");
            }
        }
        None => out.extend_from_slice(not_a_url(url).as_bytes()),
    }
    None
}

/// A fetch status with the cause recorded for it, in words: "unreachable
/// (connection refused)", or the status alone.
struct Outage<'a>(FetchStatus, Option<&'a &'a str>);

impl core::fmt::Display for Outage<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.1 {
            Some(cause) => write!(f, "{} ({cause})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// Why a line's URL part `url` is not a URL, where a cause is not plain
/// from the line itself: a space at its end (a space inside a URL belongs
/// to it), a control octet.
fn not_a_url(url: &[u8]) -> &'static str {
    if url.ends_with(b" ") {
        "not a URL: it ends with a space (percent-encode it as %20)"
    } else if url.iter().any(|&b| b < 0x20 || b == 0x7f) {
        "not a URL: it holds a control octet (percent-encode it)"
    } else {
        "not a URL"
    }
}

/// Writes a rules file's reason in words, such as `line 3: Disallow: /a`.
pub fn write_reason(out: &mut Vec<u8>, reason: Reason<'_>) {
    match reason {
        Reason::Rule(rule) => write_rule(out, rule),
        Reason::IndexHtml(rule) => {
            write_rule(out, rule);
            // The rule also allows its directory: the value up to and
            // including its last `/`.
            let value = rule.value();
            let dir = value
                .iter()
                .rposition(|&b| b == b'/')
                .map_or(&b""[..], |i| &value[..=i]);
            out.extend_from_slice(b" (allows ");
            out.extend_from_slice(dir);
            out.extend_from_slice(b" by the index.html rule)");
        }
        Reason::NoMatchingRule => out.extend_from_slice(b"no matching rule"),
        Reason::NoGroup => out.extend_from_slice(b"no group for this agent"),
        Reason::RobotsTxt => {
            out.extend_from_slice(b"/robots.txt is always allowed (RFC 9309)")
        }
    }
}

/// `line 3: Disallow: /a`.
fn write_rule(out: &mut Vec<u8>, rule: RuleInfo<'_>) {
    let key = match rule.kind() {
        RuleKind::Allow => "Allow",
        RuleKind::Disallow => "Disallow",
    };
    out.extend_from_slice(format!("line {}: {key}: ", rule.line()).as_bytes());
    out.extend_from_slice(rule.value());
}

#[cfg(all(test, feature = "compile"))]
mod tests {
    use super::{HostCache, Outcome, Target, UrlChecker, same_octets};
    use crate::aligned::AlignedBytes;
    use crate::compile::tests::{WILDCARD_GROUP, wildcard_paths};
    use crate::compile::{Compiler, Config};
    use crate::dialect::Dialect;
    use crate::rules::{EngineKind, Rules};
    use crate::tier::{BUILD_BYTES, BUILD_STATES, BUILD_WORK, HOT_AFTER};

    fn rules_of(robots: &[u8], config: Config) -> AlignedBytes {
        AlignedBytes::from(
            &Compiler::with_config(config).compile(robots).unwrap()[..],
        )
    }

    /// Equal slices of every length up to 40 compare equal; one octet
    /// changed anywhere, or one octet more, does not (the word loads
    /// overlap for 9 to 15 and 17 to 31 octets, and hand over to the
    /// slices' own compare past 32).
    #[test]
    fn same_octets_is_slice_equality() {
        let a: Vec<u8> = (0..41).map(|i| b'a' + i % 26).collect();
        for n in 0..=40 {
            let x = &a[..n];
            let mut y = x.to_vec();
            assert!(same_octets(x, &y), "{n}");
            for i in 0..n {
                y[i] ^= 0x20;
                assert!(!same_octets(x, &y), "{n} {i}");
                y[i] ^= 0x20;
            }
            assert!(!same_octets(x, &a[..n + 1]), "{n}");
        }
    }

    /// Decides `count` URLs made of `paths` (in turn) through `checker`,
    /// each checked against the reference matcher (`explain`); returns
    /// whether the agent's group was built after each URL.
    fn decide(
        checker: &UrlChecker<'_>,
        paths: &[Vec<u8>],
        count: usize,
    ) -> Vec<bool> {
        let mut cache = HostCache::new();
        let mut each = [Outcome::Invalid];
        let mut built = Vec::with_capacity(count);
        for p in paths.iter().cycle().take(count) {
            let url = [b"http://h", &p[..]].concat();
            checker.check_each(&url, &mut cache, &mut each).unwrap();
            let Ok(Target::Rules(ms)) = checker.target(&url, &mut cache)
            else {
                panic!("a rules file decides by rules");
            };
            let want = Outcome::from(ms[0].explain(&url).verdict());
            assert_eq!(each[0], want, "{:?}", url.escape_ascii().to_string());
            built.push(ms.is_built(0));
        }
        built
    }

    /// A split group and a direct group (compiled with small byte
    /// budgets) get their whole DFA after HOT_AFTER URLs, and give the
    /// reference's verdicts before and after, in both dialects.
    #[test]
    fn hot_split_and_direct_groups_are_built_with_the_same_verdicts() {
        let paths = wildcard_paths();
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            for (limit, engine) in
                [(24 << 10, EngineKind::SplitDfa), (64, EngineKind::Direct)]
            {
                let config =
                    Config::new().dialect(dialect).dfa_byte_limit(limit);
                let bytes = rules_of(WILDCARD_GROUP, config);
                let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
                assert_eq!(rules.groups().next().unwrap().engine(), engine);
                let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
                let n = HOT_AFTER as usize;
                let built = decide(&checker, &paths, n + paths.len());
                // Built by the thread that counted the HOT_AFTERth URL,
                // before it decided that URL.
                assert!(!built[n - 2], "{dialect:?} {engine:?}");
                assert!(built[n - 1], "{dialect:?} {engine:?}");
                assert!(built.last().copied().unwrap());
            }
        }
    }

    /// A group stored as one DFA has nothing to build; nor has a file
    /// compiled with budgets at least a build's (its groups would not fit
    /// again): a rule with more `*` than the builder takes.
    #[test]
    fn groups_that_cannot_gain_are_not_built() {
        let paths = wildcard_paths();
        let whole = rules_of(WILDCARD_GROUP, Config::new());
        let whole = Rules::from_bytes(whole.as_bytes()).unwrap();
        let stars =
            format!("user-agent: *\ndisallow: /{}x\n", "a*".repeat(300));
        let direct = rules_of(stars.as_bytes(), Config::new());
        let direct = Rules::from_bytes(direct.as_bytes()).unwrap();
        assert_eq!(
            direct.groups().next().unwrap().engine(),
            EngineKind::Direct
        );
        for rules in [&whole, &direct] {
            let checker = UrlChecker::rules(rules, &["bot"]).unwrap();
            let built = decide(&checker, &paths, HOT_AFTER as usize + 10);
            assert!(!built.iter().any(|&b| b));
        }
    }

    /// The budgets a build uses are `Config::new`'s (what a rules file
    /// records), so that a file compiled with them is not built again.
    #[test]
    fn builds_use_the_compilers_default_budgets() {
        let bytes = rules_of(b"user-agent: *\ndisallow: /a\n", Config::new());
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        assert_eq!(rules.dfa_budgets(), (BUILD_STATES, BUILD_WORK));
        assert_eq!(rules.dfa_byte_limit(), Some(BUILD_BYTES));
    }

    /// Threads deciding one hot group side by side: one builds, every
    /// verdict stays the reference's.
    #[test]
    fn threads_share_one_build() {
        let paths = wildcard_paths();
        let config = Config::new().dfa_byte_limit(24 << 10);
        let bytes = rules_of(WILDCARD_GROUP, config);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| decide(&checker, &paths, HOT_AFTER as usize));
            }
        });
        let built = decide(&checker, &paths, 1);
        assert!(built[0]);
    }
}
