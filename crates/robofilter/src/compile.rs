//! The compiler: robots.txt -> rules file.
//!
//! For each agent the file names (or each agent asked for), the merged group is
//! selected exactly as the matcher would select it; identical merged groups are
//! stored once. Each group becomes a verdict DFA; past its budget, score DFAs
//! over parts of its rules (the split engine); past that too, the direct
//! matcher. Both are slower but give the same verdicts. A group with no
//! Disallow rule is stored as "allow all".

use std::collections::{HashMap, HashSet};

use crate::dfa::build::{self, Budget, BuildRule, OverBudget};
use crate::dialect::Dialect;
use crate::error::BuildError;
use crate::kind::InputKind;
use crate::parse;
use crate::parse::{RobotsTxt, Rule, Selection};
use crate::pattern::{self, Tok};
use crate::verdict::GroupSource;
use crate::verdict::RuleKind;
use crate::wire::{
    self, ENGINE_ALLOW_ALL, ENGINE_DFA, ENGINE_DIRECT, ENGINE_SPLIT,
    FORMAT_VERSION, NOTE_BYTES, NOTE_NONE, NOTE_STATES, NOTE_WORK, push_rec,
};

/// The compiler's settings.
///
/// # Example
///
/// ```
/// use robofilter::{Compiler, Config, Dialect};
///
/// let config = Config::new().dialect(Dialect::Google).agent("Googlebot");
/// let bytes = Compiler::with_config(config).compile(b"User-agent: *\n")?;
/// assert!(!bytes.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    dialect: Dialect,
    agents: Option<Vec<String>>,
    parse_limit: usize,
    max_states: usize,
    max_work: u64,
    max_bytes: usize,
    max_file_work: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: rfc9309, all agents, 500 KiB parse limit, 50,000 DFA
    /// states and 25 M construction steps per group, 4 MiB per group's
    /// automata, and 200 M construction steps per file.
    pub fn new() -> Config {
        Config {
            dialect: Dialect::Rfc9309,
            agents: None,
            parse_limit: parse::RFC9309_PARSE_LIMIT,
            max_states: 50_000,
            max_work: 25_000_000,
            max_bytes: 4 << 20,
            max_file_work: DEFAULT_FILE_WORK,
        }
    }

    /// The dialect (default: [`Dialect::Rfc9309`]).
    pub fn dialect(mut self, dialect: Dialect) -> Config {
        self.dialect = dialect;
        self
    }

    /// Compiles decisions for this agent (may be called several times). By
    /// default every agent the file names is compiled, plus the `*`
    /// fallback for all others.
    pub fn agent(mut self, name: &str) -> Config {
        self.agents.get_or_insert_with(Vec::new).push(name.to_string());
        self
    }

    /// The rfc9309 parse limit in octets (default and minimum: 500 KiB;
    /// smaller values are raised to it). The google dialect has no limit.
    pub fn parse_limit(mut self, octets: usize) -> Config {
        self.parse_limit = octets.max(parse::RFC9309_PARSE_LIMIT);
        self
    }

    /// The most DFA states one group may take before it is split into score
    /// DFAs or uses the direct matcher (default 50,000).
    pub fn dfa_state_limit(mut self, states: usize) -> Config {
        self.max_states = states;
        self
    }

    /// The most subset-construction steps one group may take before it
    /// is split (default 25,000,000).
    pub fn dfa_work_limit(mut self, steps: u64) -> Config {
        self.max_work = steps;
        self
    }

    /// The most octets one group's automata may take (default 4 MiB): a
    /// larger verdict DFA is split into score DFAs, and a group whose
    /// parts together exceed it uses the direct matcher. Small values
    /// make bundles of many hosts small at the cost of speed on the
    /// hosts with the most complex rules.
    pub fn dfa_byte_limit(mut self, octets: usize) -> Config {
        self.max_bytes = octets;
        self
    }

    /// The most construction steps one whole file may take, over all its
    /// groups (default 200,000,000, about three seconds of one core). Once they
    /// are spent, the remaining groups use the direct matcher (same
    /// verdicts, slower), so any robots.txt compiles in bounded time and
    /// memory however many groups it has.
    pub fn file_work_limit(mut self, steps: u64) -> Config {
        self.max_file_work = steps;
        self
    }

    /// The dialect.
    pub fn get_dialect(&self) -> Dialect {
        self.dialect
    }

    /// The agents to compile, if restricted.
    pub fn get_agents(&self) -> Option<&[String]> {
        self.agents.as_deref()
    }

    /// The rfc9309 parse limit.
    pub fn get_parse_limit(&self) -> usize {
        self.parse_limit
    }

    /// One group's construction budget: its states, its work, and as many
    /// table cells as its byte budget has octets (a cell takes at least 2
    /// octets, and minimisation removes states: past that the result is
    /// unlikely to fit, and stopping there bounds the time spent on large
    /// groups).
    fn group_budget(&self) -> Budget {
        Budget {
            max_states: self.max_states,
            max_work: self.max_work,
            max_cells: self.max_bytes as u64,
        }
    }
}

/// Compiles robots.txt files into rules files.
///
/// # Example
///
/// ```
/// use robofilter::{AlignedBytes, Compiler, Rules, Verdict};
///
/// let robots = b"User-agent: *\nDisallow: /*.pdf$\nAllow: /\n";
/// let bytes = AlignedBytes::from(&Compiler::new().compile(robots)?[..]);
/// let rules = Rules::from_bytes(bytes.as_bytes())?;
/// let m = rules.matcher("AnyBot")?;
/// assert_eq!(m.decide(b"http://x/a.pdf"), Verdict::Disallow);
/// assert_eq!(m.decide(b"http://x/a.pdf?download"), Verdict::Allow);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Compiler {
    config: Config,
}

impl Compiler {
    /// A compiler with the default [`Config`].
    pub fn new() -> Compiler {
        Compiler::default()
    }

    /// A compiler with the given settings.
    pub fn with_config(config: Config) -> Compiler {
        Compiler { config }
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Parses a robots.txt body with this compiler's dialect and limit.
    pub fn parse(&self, body: &[u8]) -> RobotsTxt {
        let limit = match self.config.dialect {
            Dialect::Google => None,
            Dialect::Rfc9309 => Some(self.config.parse_limit),
        };
        RobotsTxt::parse_with_limit(body, self.config.dialect, limit)
    }

    /// Compiles a robots.txt body into rules-file bytes.
    ///
    /// Any text compiles. A body that is compressed (gzip, zstd) or
    /// already compiled (a rules file, a bundle) is refused: read as text
    /// it has no rules, and every URL would be allowed.
    ///
    /// # Errors
    ///
    /// [`BuildError`] if the body is not text ([`BuildError::not_text`]
    /// tells what it is), or if the result would not fit the format's
    /// 32-bit offsets (a robots.txt of several GiB).
    pub fn compile(&self, body: &[u8]) -> Result<Vec<u8>, BuildError> {
        let kind = InputKind::of(body);
        if !kind.is_text() {
            return Err(BuildError::refused(kind));
        }
        self.compile_parsed(&self.parse(body))
    }

    /// Compiles an already parsed robots.txt (its dialect must be this
    /// compiler's).
    ///
    /// # Errors
    ///
    /// As for [`Compiler::compile`].
    pub fn compile_parsed(
        &self,
        robots: &RobotsTxt,
    ) -> Result<Vec<u8>, BuildError> {
        self.compile_counted(robots).map(|(bytes, _)| bytes)
    }

    /// [`Compiler::compile_parsed`], also returning the construction steps
    /// it counted against [`Config::file_work_limit`] (for tests of the
    /// budget; not a stable interface).
    ///
    /// # Errors
    ///
    /// As for [`Compiler::compile`].
    #[doc(hidden)]
    pub fn compile_counted(
        &self,
        robots: &RobotsTxt,
    ) -> Result<(Vec<u8>, u64), BuildError> {
        let mut w = Writer::new(self.config.clone());
        w.robots(robots)?;
        let spent = w.meter.spent();
        Ok((w.finish()?, spent))
    }
}

/// The precedence of the implicit rfc9309 `/robots.txt` allow rules:
/// above any real pattern (lines are at most 16,663 octets, at most three
/// times that once escaped), and small enough that 4 x it fits a `u32`.
const ROBOTS_TXT_PRIORITY: u32 = 1 << 24;

/// The default [`Config::file_work_limit`]: eight groups at the group
/// budget. Measured at about 60 M steps per second of one core (the
/// groups of dailymotion.com's robots.txt), so about 3 s; all of that
/// file's groups fit.
const DEFAULT_FILE_WORK: u64 = 200_000_000;

/// The most `*` one rule may hold (runs of `*` count once) for its group
/// to be built as an automaton. Each `*` of a rule multiplies the states
/// its group's automaton may need; the real corpus (74.6 k files) has at
/// most 78, while a 16 k-octet line can hold 8 k. Past this the group
/// uses the direct matcher, which is linear in the rule's length per URL.
const MAX_RULE_STARS: usize = 256;

/// The most score DFAs a split group may have; past it, the direct matcher
/// is as fast and far smaller.
const MAX_PARTS: usize = 32;

/// The smallest part cap a split tries (see `Writer::engine`). On the
/// 86.4 k-host corpus bundle (Googlebot, 32 KiB), caps down to 4 KiB take
/// 480 of its 3,381 direct groups to the split engine; 1 KiB takes 50
/// more at a fifth more compile time (docs/records).
const MIN_PART_CAP: usize = 1 << 12;

/// Why [`split`] gave up.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum SplitStop {
    /// More than [`MAX_PARTS`] parts: a smaller cap would need as many.
    Parts,
    /// More than `max_bytes` octets: smaller parts may take fewer.
    Bytes,
    /// The file's work budget ran out.
    FileWork,
}

/// Builds score DFAs for `rules[range]`, halving parts that exceed
/// `budget` or take more than `cap` octets (a part of one rule is always
/// kept), until there would be more than [`MAX_PARTS`] parts or more than
/// `max_bytes` octets.
///
/// `failed` holds the ranges that did not fit under a larger cap: with
/// the same state and work budgets and a smaller cap they cannot fit
/// either (construction stops at the same point or earlier, and a larger
/// automaton stays larger), so they are halved without being built
/// again.
#[allow(clippy::too_many_arguments)]
fn split(
    rules: &[BuildRule],
    range: core::ops::Range<usize>,
    budget: Budget,
    cap: usize,
    max_bytes: usize,
    meter: &mut build::Meter,
    parts: &mut Vec<Vec<u8>>,
    failed: &mut HashSet<(usize, usize)>,
) -> Result<(), SplitStop> {
    if parts.len() >= MAX_PARTS {
        return Err(SplitStop::Parts);
    }
    if parts.iter().map(Vec::len).sum::<usize>() > max_bytes {
        return Err(SplitStop::Bytes);
    }
    // One rule's automaton is linear in its length (each `*` segment is a
    // KMP-like chain), so a single rule is always built.
    let budget = if range.len() == 1 {
        Budget {
            max_states: usize::MAX,
            max_work: u64::MAX,
            max_cells: u64::MAX,
        }
    } else {
        budget
    };
    let key = (range.start, range.end);
    let built = match failed.contains(&key) {
        true => None,
        false => {
            let outside: Vec<u32> = rules[..range.start]
                .iter()
                .chain(&rules[range.end..])
                .map(|r| r.priority)
                .collect();
            let part = &rules[range.clone()];
            match build::build_scores(part, &outside, budget, meter) {
                Ok(built) if range.len() == 1 || built.len() <= cap => {
                    parts.push(built);
                    return Ok(());
                }
                // Halves would need the same exhausted file budget.
                Err(OverBudget::FileWork) => return Err(SplitStop::FileWork),
                other => Some(other),
            }
        }
    };
    // Over a group budget, or built but larger than the cap: halves are
    // often far smaller than the whole (a part's states multiply only its
    // own rules' positions).
    if built.is_some() {
        failed.insert(key);
    }
    let mid = range.start + range.len() / 2;
    let mut half = |range, parts: &mut Vec<Vec<u8>>, failed: &mut _| {
        split(rules, range, budget, cap, max_bytes, meter, parts, failed)
    };
    half(range.start..mid, parts, failed)?;
    half(mid..range.end, parts, failed)
}

/// The automaton builder's rules for a group's `(kind, pattern)` pairs
/// (patterns normalised, none empty) in `dialect`: with each Allow rule's
/// index.html alias and, in rfc9309, the always-allowed `/robots.txt`.
/// `None` if a rule holds more than [`MAX_RULE_STARS`] `*`: such a group
/// uses the direct matcher.
fn build_rules<'r>(
    dialect: Dialect,
    rules: impl Iterator<Item = (RuleKind, &'r [u8])>,
) -> Option<Vec<BuildRule>> {
    let mut out: Vec<BuildRule> = Vec::new();
    let mut add = |kind, priority: u32, pat: &[u8]| {
        let (toks, anchored) = pattern::tokens(pat, dialect);
        out.push(BuildRule { kind, priority, toks, anchored });
    };
    for (kind, p) in rules {
        add(kind, p.len() as u32, p);
        if kind == RuleKind::Allow {
            if let Some(alias) = pattern::index_html_alias(p) {
                add(RuleKind::Allow, alias.len() as u32, &alias);
            }
        }
    }
    let stars = |r: &BuildRule| {
        let mut n = 0;
        for (i, t) in r.toks.iter().enumerate() {
            if *t == Tok::Star && (i == 0 || r.toks[i - 1] != Tok::Star) {
                n += 1;
            }
        }
        n
    };
    if out.iter().any(|r| stars(r) > MAX_RULE_STARS) {
        return None;
    }
    if dialect == Dialect::Rfc9309 {
        // RFC 9309 §2.2.2: /robots.txt (with any query) always wins.
        for pat in [&b"/robots.txt$"[..], b"/robots.txt?"] {
            let toks = pat
                .iter()
                .filter(|&&b| b != b'$')
                .map(|&b| Tok::Byte(b))
                .collect();
            out.push(BuildRule {
                kind: RuleKind::Allow,
                priority: ROBOTS_TXT_PRIORITY,
                toks,
                anchored: pat.ends_with(b"$"),
            });
        }
    }
    Some(out)
}

/// What [`whole_dfa`] gave.
#[derive(Debug)]
pub(crate) enum Whole {
    /// The DFA's bytes.
    Built(Vec<u8>),
    /// The work given ran out first: more work may build it.
    OutOfWork,
    /// Past the state or byte budget, or a rule with too many `*`.
    TooLarge,
}

/// One verdict DFA for a group's `(kind, pattern)` pairs (as stored in a
/// rules file), built within the group budgets of [`Config::new`] (50,000
/// states, 25 M steps, 4 MiB) and at most `work` steps: what a
/// [`UrlChecker`](crate::UrlChecker) builds in memory for a split or
/// direct group that decides many URLs (`tier.rs`). The same construction
/// as [`Compiler::compile`]'s for one robots.txt, so the same verdicts as
/// the stored engine. Returns the outcome and the steps spent.
pub(crate) fn whole_dfa<'r>(
    dialect: Dialect,
    rules: impl Iterator<Item = (RuleKind, &'r [u8])>,
    work: u64,
) -> (Whole, u64) {
    let Some(rules) = build_rules(dialect, rules) else {
        return (Whole::TooLarge, 0);
    };
    let config = Config::new();
    let budget = config.group_budget();
    let mut meter = build::Meter::new(work);
    let whole = match build::build(&rules, budget, &mut meter) {
        Ok(b) if b.len() <= config.max_bytes => Whole::Built(b),
        Err(OverBudget::FileWork) => Whole::OutOfWork,
        Ok(_) | Err(_) => Whole::TooLarge,
    };
    (whole, meter.spent())
}

/// The split engine's bytes: `count`, 0, then (offset, length) per part,
/// then the parts at 8-aligned offsets.
fn split_blob(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    push_rec(&mut out, &[parts.len() as u32, 0]);
    let mut off = (8 + parts.len() * 8).next_multiple_of(8);
    for p in parts {
        push_rec(&mut out, &[off as u32, p.len() as u32]);
        off = (off + p.len()).next_multiple_of(8);
    }
    for p in parts {
        out.resize(out.len().next_multiple_of(8), 0);
        out.extend_from_slice(p);
    }
    out
}

/// An engine written to the engines section: engine code, budget note,
/// offset and length.
type Placed = (u32, u32, u64, u64);

/// Accumulates the sections of a rules file.
struct Writer {
    config: Config,
    strings: Vec<u8>,
    /// Where each string already in `strings` starts.
    string_ids: HashMap<Vec<u8>, u32>,
    robots: Vec<u8>,
    agents: Vec<u8>,
    groups: Vec<u8>,
    rules: Vec<u8>,
    engines: Vec<u8>,
    sitemaps: Vec<u8>,
    delays: Vec<u8>,
    diagnostics: Vec<u8>,
    /// The side section's records and strings (see `wire.rs`).
    others: Vec<u8>,
    other_strings: Vec<u8>,
    group_ids: HashMap<Vec<u32>, u32>,
    group_len: u32,
    rule_len: u32,
    /// The construction work left for this file.
    meter: build::Meter,
    /// Engines already built, by their rules' kinds and patterns (groups
    /// of different agents often repeat the same rules on other lines):
    /// engine code, note, offset and length in `engines`.
    built: HashMap<Vec<(RuleKind, Vec<u8>)>, Placed>,
}

fn to_u32(n: usize, what: &str) -> Result<u32, BuildError> {
    u32::try_from(n).map_err(|_| BuildError::too_large(format!("{what}: {n}")))
}

fn source_code(source: GroupSource) -> u32 {
    match source {
        GroupSource::Specific => 0,
        GroupSource::Global => 1,
        GroupSource::None => 2,
    }
}

impl Writer {
    fn new(config: Config) -> Writer {
        let meter = build::Meter::new(config.max_file_work);
        Writer {
            config,
            strings: Vec::new(),
            string_ids: HashMap::new(),
            robots: Vec::new(),
            agents: Vec::new(),
            groups: Vec::new(),
            rules: Vec::new(),
            engines: Vec::new(),
            sitemaps: Vec::new(),
            delays: Vec::new(),
            diagnostics: Vec::new(),
            others: Vec::new(),
            other_strings: Vec::new(),
            group_ids: HashMap::new(),
            group_len: 0,
            rule_len: 0,
            meter,
            built: HashMap::new(),
        }
    }

    /// Stores a string once: an equal string already stored (a rule's
    /// pattern equal to its value as written, a rule repeated in other
    /// agents' groups, a diagnostic's kind) is shared.
    fn string(&mut self, s: &[u8]) -> Result<(u32, u32), BuildError> {
        if let Some(&off) = self.string_ids.get(s) {
            return Ok((off, s.len() as u32));
        }
        let off = to_u32(self.strings.len(), "string table")?;
        self.strings.extend_from_slice(s);
        to_u32(self.strings.len(), "string table")?;
        self.string_ids.insert(s.to_vec(), off);
        Ok((off, s.len() as u32))
    }

    fn other_string(&mut self, s: &[u8]) -> Result<(u32, u32), BuildError> {
        let off = to_u32(self.other_strings.len(), "side section")?;
        self.other_strings.extend_from_slice(s);
        to_u32(self.other_strings.len(), "side section")?;
        Ok((off, s.len() as u32))
    }

    fn robots(&mut self, robots: &RobotsTxt) -> Result<(), BuildError> {
        let names: Vec<Vec<u8>> = match &self.config.agents {
            Some(list) => {
                let mut v: Vec<Vec<u8>> = list
                    .iter()
                    .map(|a| a.as_bytes().to_ascii_lowercase())
                    .collect();
                v.sort();
                v.dedup();
                v
            }
            None => robots.agent_tokens(),
        };
        let all_agents = self.config.agents.is_none();
        let agents_start =
            to_u32(self.agents.len() / wire::AGENT_REC, "agents")?;
        for name in &names {
            let sel = robots.select(&[name]);
            let group = self.group(&sel)?;
            let (off, len) = self.string(name)?;
            push_rec(
                &mut self.agents,
                &[off, len, group, source_code(sel.source())],
            );
        }
        let fallback = robots.select::<&[u8]>(&[]);
        let fallback_group =
            if all_agents { self.group(&fallback)? } else { wire::NO_GROUP };

        let sitemaps_start =
            to_u32(self.sitemaps.len() / wire::SITEMAP_REC, "sitemaps")?;
        for s in robots.sitemaps() {
            let (off, len) = self.string(s.url())?;
            push_rec(&mut self.sitemaps, &[s.line(), off, len, 0]);
        }
        let delays_start =
            to_u32(self.delays.len() / wire::DELAY_REC, "delays")?;
        // A group's `user-agent` values, one per line (a value never holds
        // a line break).
        let agents_of = |g: Option<usize>| {
            g.map_or_else(Vec::new, |g| {
                let values: Vec<&[u8]> = robots.groups()[g]
                    .agents()
                    .iter()
                    .map(|a| a.value())
                    .collect();
                values.join(&b"\n"[..])
            })
        };
        let group_code = |g: Option<usize>| {
            g.map_or(Ok(wire::NO_GROUP), |g| to_u32(g, "groups"))
        };
        for d in robots.crawl_delays() {
            let (off, len) = self.string(d.value())?;
            let (aoff, alen) = self.string(&agents_of(d.group()))?;
            let group = group_code(d.group())?;
            push_rec(
                &mut self.delays,
                &[d.line(), off, len, aoff, alen, group],
            );
        }
        // Side section: the group's agents are stored once per group.
        let mut group_agents: HashMap<Option<usize>, (u32, u32)> =
            HashMap::new();
        for o in robots.other_lines() {
            let (koff, klen) = self.other_string(o.key())?;
            let (voff, vlen) = self.other_string(o.value())?;
            let (aoff, alen) = match group_agents.get(&o.group()) {
                Some(&found) => found,
                None => {
                    let found = self.other_string(&agents_of(o.group()))?;
                    group_agents.insert(o.group(), found);
                    found
                }
            };
            let group = group_code(o.group())?;
            push_rec(
                &mut self.others,
                &[o.line(), group, koff, klen, voff, vlen, aoff, alen],
            );
        }
        let diags_start =
            to_u32(self.diagnostics.len() / wire::DIAG_REC, "diagnostics")?;
        for d in robots.diagnostics() {
            let (off, len) = self.string(d.kind().to_string().as_bytes())?;
            push_rec(&mut self.diagnostics, &[d.line(), off, len, 0]);
        }
        push_rec(
            &mut self.robots,
            &[
                agents_start,
                names.len() as u32,
                fallback_group,
                u32::from(all_agents),
                sitemaps_start,
                robots.sitemaps().len() as u32,
                delays_start,
                robots.crawl_delays().len() as u32,
                diags_start,
                robots.diagnostics().len() as u32,
                source_code(fallback.source()),
                robots.line_len(),
            ],
        );
        Ok(())
    }

    /// Stores a merged group once; returns its index.
    fn group(&mut self, sel: &Selection<'_>) -> Result<u32, BuildError> {
        if sel.source() == GroupSource::None {
            return Ok(wire::NO_GROUP);
        }
        let mut rules: Vec<&Rule> = sel
            .rules()
            .iter()
            .copied()
            .filter(|r| !r.pattern().is_empty())
            .collect();
        let key: Vec<u32> = rules.iter().map(|r| r.line()).collect();
        if let Some(&id) = self.group_ids.get(&key) {
            return Ok(id);
        }
        let content: Vec<(RuleKind, Vec<u8>)> =
            rules.iter().map(|r| (r.kind(), r.pattern().to_vec())).collect();
        let (engine, note, off, len) = match self.built.get(&content) {
            // The same engine bytes serve both groups.
            Some(&found) => found,
            None => {
                let (engine, note, bytes) = self.engine(&rules);
                // Engines are 64-byte aligned inside a 64-byte aligned
                // section.
                self.engines
                    .resize(self.engines.len().next_multiple_of(64), 0);
                let off = self.engines.len() as u64;
                let len = bytes.len() as u64;
                self.engines.extend_from_slice(&bytes);
                self.built.insert(content, (engine, note, off, len));
                (engine, note, off, len)
            }
        };
        if engine == ENGINE_DIRECT {
            // In the order of the direct matcher's index (by literal
            // prefix, ties in file order), which loading then finds sorted.
            let dialect = self.config.dialect;
            rules.sort_by_cached_key(|r| {
                pattern::literal_prefix(r.pattern(), dialect)
            });
        }
        let rules_start = self.rule_len;
        for r in &rules {
            let (voff, vlen) = self.string(r.value())?;
            let (poff, plen) = self.string(r.pattern())?;
            let kind = match r.kind() {
                RuleKind::Allow => 0,
                RuleKind::Disallow => 1,
            };
            // A line keeps at most 16,663 octets, so a value fits 15 bits
            // and its pattern (at most 3 octets per octet) 16.
            if vlen > wire::RULE_VALUE_MAX || plen > wire::RULE_PATTERN_MAX {
                return Err(BuildError::too_large(format!(
                    "rule on line {}: value of {vlen} octets or pattern of \
                     {plen} (at most {} and {})",
                    r.line(),
                    wire::RULE_VALUE_MAX,
                    wire::RULE_PATTERN_MAX
                )));
            }
            push_rec(
                &mut self.rules,
                &[r.line(), voff, poff, vlen | kind << 15 | plen << 16],
            );
            self.rule_len = to_u32(self.rule_len as usize + 1, "rules")?;
        }
        push_rec(
            &mut self.groups,
            &[
                engine,
                rules_start,
                rules.len() as u32,
                note,
                off as u32,
                (off >> 32) as u32,
                len as u32,
                (len >> 32) as u32,
            ],
        );
        let id = self.group_len;
        self.group_len += 1;
        self.group_ids.insert(key, id);
        Ok(id)
    }

    fn engine(&mut self, rules: &[&Rule]) -> (u32, u32, Vec<u8>) {
        if rules.iter().all(|r| r.kind() == RuleKind::Allow) {
            return (ENGINE_ALLOW_ALL, NOTE_NONE, Vec::new());
        }
        if self.meter.left() == 0 {
            return (ENGINE_DIRECT, crate::wire::NOTE_FILE_WORK, Vec::new());
        }
        let dialect = self.config.dialect;
        let pairs = rules.iter().map(|r| (r.kind(), r.pattern()));
        let Some(mut build_rules) = build_rules(dialect, pairs) else {
            return (ENGINE_DIRECT, crate::wire::NOTE_RULE_STARS, Vec::new());
        };
        let max_bytes = self.config.max_bytes;
        let budget = self.config.group_budget();
        let over = match build::build(&build_rules, budget, &mut self.meter) {
            Ok(built) if built.len() <= max_bytes => {
                return (ENGINE_DFA, NOTE_NONE, built);
            }
            Ok(_) => NOTE_BYTES,
            Err(OverBudget::States) => NOTE_STATES,
            Err(OverBudget::Work) => NOTE_WORK,
            Err(OverBudget::Bytes) => NOTE_BYTES,
            Err(OverBudget::FileWork) => {
                return (
                    ENGINE_DIRECT,
                    crate::wire::NOTE_FILE_WORK,
                    Vec::new(),
                );
            }
        };
        // Too large for one automaton: split the rules into parts whose
        // score DFAs fit. Parts are ranges of precedence (highest first):
        // a part's scores then only need to be told apart where its own
        // live rules tell them apart (see `Nfa::canonical`), and the search
        // can stop before parts that can no longer change the verdict.
        build_rules.sort_by_key(|r| core::cmp::Reverse(r.priority));
        let n = build_rules.len();
        let meter = &mut self.meter;
        // Parts are capped at a power of two of octets, the largest first:
        // large parts leave little room for the rest, and smaller ones
        // (cheaper to build: construction stops at the cap) often fit
        // where they did not. The caps do not depend on the budget, so a
        // larger budget tries every cap a smaller one tries, and a group
        // never falls back further under a larger budget. A smaller cap
        // only refines the parts of a larger one, so once the parts are
        // too many, smaller caps are not tried.
        let mut cap = 1usize << max_bytes.max(1).ilog2();
        let mut parts = Vec::new();
        let mut failed = HashSet::new();
        loop {
            parts.clear();
            let part_budget = Budget {
                max_work: budget.max_work / 8,
                max_cells: cap as u64,
                ..budget
            };
            let mut part = |range, parts: &mut Vec<Vec<u8>>| {
                split(
                    &build_rules,
                    range,
                    part_budget,
                    cap,
                    max_bytes,
                    meter,
                    parts,
                    &mut failed,
                )
            };
            // A score DFA of the whole group is at least as large as its
            // verdict DFA and gets an eighth of the work: past the state or
            // work budget, only halves can fit.
            let built = if over == NOTE_BYTES || n < 2 {
                part(0..n, &mut parts)
            } else {
                part(0..n / 2, &mut parts)
                    .and_then(|()| part(n / 2..n, &mut parts))
            };
            let stop = match built {
                Ok(())
                    if parts.iter().map(Vec::len).sum::<usize>()
                        <= max_bytes =>
                {
                    return (ENGINE_SPLIT, over, split_blob(&parts));
                }
                Ok(()) => SplitStop::Bytes,
                Err(stop) => stop,
            };
            if stop != SplitStop::Bytes || cap <= MIN_PART_CAP {
                break;
            }
            cap /= 2;
        }
        if self.meter.left() == 0 {
            (ENGINE_DIRECT, crate::wire::NOTE_FILE_WORK, Vec::new())
        } else {
            (ENGINE_DIRECT, over, Vec::new())
        }
    }

    /// The side section (see `wire.rs`), empty when the file has no
    /// other line.
    fn side(&self) -> Result<Vec<u8>, BuildError> {
        if self.others.is_empty() {
            return Ok(Vec::new());
        }
        let n = to_u32(self.others.len() / wire::OTHER_REC, "other lines")?;
        let mut side = vec![0u8; 4];
        side.extend_from_slice(&n.to_le_bytes());
        side.extend_from_slice(&self.others);
        side.extend_from_slice(&self.other_strings);
        to_u32(side.len(), "side section")?;
        let crc = crc32fast::hash(&side[4..]);
        side[..4].copy_from_slice(&crc.to_le_bytes());
        Ok(side)
    }

    fn finish(self) -> Result<Vec<u8>, BuildError> {
        let side = self.side()?;
        let sections: [([u8; 4], &[u8]); 9] = [
            (wire::TAG_STRINGS, &self.strings),
            (wire::TAG_ROBOTS, &self.robots),
            (wire::TAG_AGENTS, &self.agents),
            (wire::TAG_GROUPS, &self.groups),
            (wire::TAG_RULES, &self.rules),
            (wire::TAG_ENGINES, &self.engines),
            (wire::TAG_SITEMAPS, &self.sitemaps),
            (wire::TAG_DELAYS, &self.delays),
            (wire::TAG_DIAGNOSTICS, &self.diagnostics),
        ];
        let side_section =
            (!side.is_empty()).then_some((wire::TAG_SIDE, &side[..]));
        // Empty sections are left out: a reader takes a missing one as
        // empty.
        let all: Vec<([u8; 4], &[u8])> = sections
            .into_iter()
            .filter(|(_, body)| !body.is_empty())
            .chain(side_section)
            .collect();
        let mut out = vec![0u8; wire::HEADER_LEN + all.len() * wire::DIR_REC];
        let mut dir = Vec::with_capacity(all.len() * wire::DIR_REC);
        for &(tag, body) in &all {
            let align = if tag == wire::TAG_ENGINES {
                wire::ENGINES_ALIGN
            } else {
                wire::SECTION_ALIGN
            };
            out.resize(out.len().next_multiple_of(align), 0);
            dir.extend_from_slice(&tag);
            dir.extend_from_slice(&0u32.to_le_bytes());
            dir.extend_from_slice(&(out.len() as u64).to_le_bytes());
            dir.extend_from_slice(&(body.len() as u64).to_le_bytes());
            out.extend_from_slice(body);
        }
        out[wire::HEADER_LEN..wire::HEADER_LEN + dir.len()]
            .copy_from_slice(&dir);
        out[..8].copy_from_slice(wire::MAGIC);
        out[8..12].copy_from_slice(&wire::ENDIAN_MARK.to_le_bytes());
        out[12..16].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        let len = out.len() as u64;
        out[16..24].copy_from_slice(&len.to_le_bytes());
        out[28] = self.config.dialect.to_byte();
        let limit = match self.config.dialect {
            Dialect::Google => 0,
            Dialect::Rfc9309 => {
                to_u32(self.config.parse_limit, "parse limit")?
            }
        };
        out[32..36].copy_from_slice(&limit.to_le_bytes());
        out[36..40].copy_from_slice(&(all.len() as u32).to_le_bytes());
        let max_states =
            u32::try_from(self.config.max_states).unwrap_or(u32::MAX);
        out[40..44].copy_from_slice(&max_states.to_le_bytes());
        // `side()` checked that the length fits.
        let side_len = side.len() as u32;
        out[wire::SIDE_LEN_AT..wire::SIDE_LEN_AT + 4]
            .copy_from_slice(&side_len.to_le_bytes());
        out[48..56].copy_from_slice(&self.config.max_work.to_le_bytes());
        let max_bytes =
            u64::try_from(self.config.max_bytes).unwrap_or(u64::MAX);
        out[56..64].copy_from_slice(&max_bytes.to_le_bytes());
        // The side section is last and outside the header's checksum.
        let core = out.len() - side.len();
        let crc = wire::checksum(&out[..core]);
        out[wire::CHECKSUM_AT..wire::CHECKSUM_AT + 4]
            .copy_from_slice(&crc.to_le_bytes());
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::aligned::AlignedBytes;
    use crate::rules::{EngineKind, Reason, Rules};

    /// A group whose DFA exceeds a tiny state budget is split into score
    /// DFAs and still gives the verdicts of the unsplit group.
    #[test]
    fn over_budget_groups_split_with_same_verdicts() {
        let robots = b"user-agent: *\ndisallow: /*a*b\nallow: /*b*a\n\
                       disallow: /x*y$\nallow: /x\ndisallow: /ab*ba*\n";
        let full = Compiler::new().compile(robots).unwrap();
        let split = Compiler::with_config(Config::new().dfa_state_limit(12))
            .compile(robots)
            .unwrap();
        let (full, split) =
            (AlignedBytes::from(&full[..]), AlignedBytes::from(&split[..]));
        let full = Rules::from_bytes(full.as_bytes()).unwrap();
        let split = Rules::from_bytes(split.as_bytes()).unwrap();
        let engines: Vec<_> = split.groups().map(|g| g.engine()).collect();
        assert_eq!(engines, [EngineKind::SplitDfa]);
        assert!(split.groups().next().unwrap().part_len() > 1);
        let (f, s) =
            (full.matcher("bot").unwrap(), split.matcher("bot").unwrap());
        // Every path of `/` and up to five octets over a small alphabet.
        let paths: Vec<Vec<u8>> = crate::pattern::words(b"abxy/", 5)
            .into_iter()
            .map(|w| [&b"/"[..], &w].concat())
            .collect();
        for p in &paths {
            let url = [b"http://h", &p[..]].concat();
            assert_eq!(
                f.decide(&url),
                s.decide(&url),
                "{:?}",
                String::from_utf8_lossy(&url)
            );
            assert_eq!(f.decide(&url), f.explain(&url).verdict());
        }
    }

    /// The section directory of a rules file: (tag, offset, length).
    fn directory(bytes: &[u8]) -> Vec<([u8; 4], usize, usize)> {
        let n = wire::u32_at(bytes, 36) as usize;
        (0..n)
            .map(|i| {
                let at = wire::HEADER_LEN + i * wire::DIR_REC;
                let tag: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
                let off = wire::u64_at(bytes, at + 8) as usize;
                (tag, off, wire::u64_at(bytes, at + 16) as usize)
            })
            .collect()
    }

    /// Format 3: each distinct string once, 16-octet rule records, empty
    /// sections left out, sections 8-byte aligned and engines 64; and a
    /// reader refuses a misaligned section and a file without its robots
    /// entry.
    #[test]
    fn format_3_stores_strings_once_and_leaves_empty_sections_out() {
        // Two agents share one group; the other agent's group repeats the
        // rule on another line; values equal their patterns.
        let robots = b"user-agent: a\nuser-agent: b\ndisallow: /x\n\n\
                       user-agent: c\ndisallow: /x\nallow: /x/y\n";
        let bytes = Compiler::new().compile(robots).unwrap();
        let dir = directory(&bytes);
        let tags: Vec<&[u8]> = dir.iter().map(|(t, _, _)| &t[..]).collect();
        assert_eq!(
            tags,
            [&b"STRS"[..], b"ROBO", b"AGNT", b"GRUP", b"RULE", b"ENGN"]
        );
        let len = |tag: &[u8]| dir.iter().find(|d| d.0 == tag).unwrap().2;
        // "a", "b", "c", "/x", "/x/y": each once.
        assert_eq!(len(b"STRS"), 1 + 1 + 1 + 2 + 4);
        // Groups {a, b} and {c}, each with its rules: 3 records.
        assert_eq!(len(b"RULE"), 3 * wire::RULE_REC);
        assert_eq!(wire::RULE_REC, 16);
        for &(tag, off, _) in &dir {
            let align = if &tag == b"ENGN" { 64 } else { 8 };
            assert_eq!(off % align, 0, "{}", String::from_utf8_lossy(&tag));
        }
        let aligned = AlignedBytes::from(&bytes[..]);
        let rules = Rules::from_bytes(aligned.as_bytes()).unwrap();
        assert_eq!(rules.sitemaps().count(), 0);
        for (agent, url, allowed) in [
            ("a", "http://h/x", false),
            ("b", "http://h/x/y", false),
            ("c", "http://h/x/y", true),
            ("c", "http://h/x/z", false),
            ("d", "http://h/x", true),
        ] {
            let m = rules.matcher(agent).unwrap();
            assert_eq!(m.is_allowed(url.as_bytes()), allowed, "{agent} {url}");
            let r = m.explain(url.as_bytes());
            assert_eq!(r.verdict() == crate::verdict::Verdict::Allow, allowed);
        }
        // Hostile: a section moved to an odd offset, and the robots entry
        // renamed away (checksums rewritten so the structure is what fails).
        let resum = |mut b: Vec<u8>| {
            let crc = wire::checksum(&b);
            b[wire::CHECKSUM_AT..wire::CHECKSUM_AT + 4]
                .copy_from_slice(&crc.to_le_bytes());
            AlignedBytes::from(&b[..])
        };
        let robo = dir.iter().position(|d| &d.0 == b"ROBO").unwrap();
        let at = wire::HEADER_LEN + robo * wire::DIR_REC;
        let mut moved = bytes.clone();
        let off = wire::u64_at(&bytes, at + 8) + 4;
        moved[at + 8..at + 16].copy_from_slice(&off.to_le_bytes());
        assert!(Rules::from_bytes(resum(moved).as_bytes()).is_err());
        let mut renamed = bytes.clone();
        renamed[at..at + 4].copy_from_slice(b"ROBX");
        assert!(Rules::from_bytes(resum(renamed).as_bytes()).is_err());
    }

    /// A byte budget sends a group to the split engine, then to the direct
    /// matcher; verdicts stay the same.
    #[test]
    fn byte_budget_falls_back_with_same_verdicts() {
        let robots = b"user-agent: *\ndisallow: /*a*b*c\nallow: /*b*a\n\
                       disallow: /x*y$\nallow: /x\n";
        let full =
            AlignedBytes::from(&Compiler::new().compile(robots).unwrap()[..]);
        let full = Rules::from_bytes(full.as_bytes()).unwrap();
        let size = full.groups().next().unwrap().size();
        for (limit, want) in [
            (size, EngineKind::VerdictDfa),
            (size - 1, EngineKind::SplitDfa),
            (64, EngineKind::Direct),
        ] {
            let config = Config::new().dfa_byte_limit(limit);
            let bytes = Compiler::with_config(config).compile(robots).unwrap();
            let bytes = AlignedBytes::from(&bytes[..]);
            let small = Rules::from_bytes(bytes.as_bytes()).unwrap();
            assert_eq!(small.dfa_byte_limit(), Some(limit as u64));
            let g = small.groups().next().unwrap();
            // Parts take more room than the whole, so a budget just under
            // the DFA may skip the split engine too.
            let fallback = [EngineKind::SplitDfa, EngineKind::Direct];
            match want {
                EngineKind::SplitDfa => {
                    assert!(fallback.contains(&g.engine()), "limit {limit}")
                }
                _ => assert_eq!(g.engine(), want, "limit {limit}"),
            }
            assert!(g.size() <= limit, "limit {limit}: {}", g.size());
            if want != EngineKind::VerdictDfa {
                assert_eq!(g.over_budget(), Some("byte budget"));
            }
            let (f, s) =
                (full.matcher("bot").unwrap(), small.matcher("bot").unwrap());
            for path in [
                "/", "/ab", "/abc", "/bxa", "/xay", "/xy", "/x", "/cba",
                "/aabbcc",
            ] {
                let url = format!("http://h{path}");
                assert_eq!(
                    f.decide(url.as_bytes()),
                    s.decide(url.as_bytes()),
                    "{limit} {path}"
                );
            }
        }
    }

    /// Wildcard rules of the kind large sites write (extensions anywhere,
    /// `*` between path segments, queries): their verdict DFA is a few tens
    /// of KiB, so byte budgets around it split the group.
    pub(crate) const WILDCARD_GROUP: &[u8] = b"user-agent: *\n\
        disallow: /*.json\ndisallow: /*.json-compact\n\
        disallow: /*.json-html\ndisallow: /*.xml\ndisallow: /*.rss\n\
        disallow: /*.i\ndisallow: /*.embed\n\
        disallow: /*/thread/*?*order=\ndisallow: /f/*/thread/*/*/c*\n\
        disallow: /thread/*/*/c*\ndisallow: /f/*/submit$\n\
        disallow: /f/*/submit/$\ndisallow: /message/compose*\n\
        disallow: /api\ndisallow: /post\ndisallow: /submit\n\
        disallow: /goto\ndisallow: /*after=\ndisallow: /*before=\n\
        disallow: /site/*t=\ndisallow: /login\ndisallow: /f/*/user/\n\
        disallow: /gold?\nallow: /partner_api/\nallow: /\n\
        allow: /maps/*.xml\n";

    /// Paths made of the pieces [`WILDCARD_GROUP`]'s rules test for, in a
    /// fixed pseudo-random order, with escapes and non-ASCII octets.
    pub(crate) fn wildcard_paths() -> Vec<Vec<u8>> {
        let pieces: [&[u8]; 18] = [
            b"/",
            b"f",
            b"thread",
            b"c",
            b".json",
            b".xml",
            b"?",
            b"order=",
            b"after=",
            b"submit",
            b"maps",
            b"site",
            b"t=",
            b"x",
            b"%2F",
            b"%7e",
            b"\xc3\xa9",
            b"-html",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut paths = Vec::new();
        for _ in 0..1500 {
            let mut p = b"/".to_vec();
            for _ in 0..next() % 9 {
                p.extend_from_slice(pieces[(next() % 18) as usize]);
            }
            paths.push(p);
        }
        paths
    }

    fn rules_of(robots: &[u8], config: Config) -> AlignedBytes {
        let bytes = Compiler::with_config(config).compile(robots).unwrap();
        AlignedBytes::from(&bytes[..])
    }

    /// Rules whose equal-length matches tie (`/ab*` and `/a*b` on `/ab`),
    /// listed out of prefix order, with an index.html alias among them.
    const TIES: &[u8] = b"user-agent: *\ndisallow: /ab*\ndisallow: /a*b\n\
        allow: /a/index.html\nallow: /a*\ndisallow: /a/\ndisallow: /*\n\
        allow: /c\ndisallow: /ab*\n";

    /// A direct group's rules are stored by literal prefix (ties in file
    /// order), and its matcher reports the same rule with its index as
    /// without: the earliest line among the longest matches.
    #[test]
    fn direct_groups_are_stored_in_index_order() {
        let mut paths = wildcard_paths();
        paths.extend(
            ["/ab", "/abc", "/a/", "/a/index.html", "/c", "/"]
                .map(|p| p.as_bytes().to_vec()),
        );
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let config = Config::new().dialect(dialect).dfa_byte_limit(64);
            for robots in [WILDCARD_GROUP, TIES] {
                let bytes = rules_of(robots, config.clone());
                let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
                let group = rules.groups().next().unwrap();
                assert_eq!(group.engine(), EngineKind::Direct);
                let keys: Vec<(Vec<u8>, u32)> = rules
                    .group_rules(0)
                    .map(|r| {
                        (
                            pattern::literal_prefix(r.pattern(), dialect),
                            r.line(),
                        )
                    })
                    .collect();
                assert!(keys.is_sorted(), "{dialect:?}");
                let m = rules.matcher("bot").unwrap();
                for p in &paths {
                    let [with, without] = m.direct_both_ways(p);
                    assert_eq!(with, without, "{:?}", p.escape_ascii());
                }
            }
            // `/ab` matches `/ab*` (line 2, and again on line 9) and `/a*b`
            // (line 3), all four octets long: line 2 is reported, though
            // `/a*b` is stored first.
            let bytes = rules_of(TIES, config);
            let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
            let lines: Vec<u32> =
                rules.group_rules(0).map(|r| r.line()).collect();
            assert_eq!(lines, [7, 3, 5, 6, 4, 2, 9, 8]);
            let m = rules.matcher("bot").unwrap();
            match m.explain(b"http://h/ab").reason() {
                Reason::Rule(r) => assert_eq!(r.line(), 2),
                other => panic!("{other:?}"),
            }
        }
    }

    /// A larger byte budget never gives a group a slower engine (direct
    /// is slower than split, split than one DFA). Splitting used to keep
    /// the first part that fit the budget and fail on the rest, so this
    /// group went direct at 56-80 KiB where 32-48 KiB split it.
    #[test]
    fn a_larger_byte_budget_never_falls_back_further() {
        let rank = |e: EngineKind| match e {
            EngineKind::VerdictDfa | EngineKind::AllowAll => 0,
            EngineKind::SplitDfa => 1,
            EngineKind::Direct => 2,
        };
        let paths = wildcard_paths();
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let full =
                rules_of(WILDCARD_GROUP, Config::new().dialect(dialect));
            let full = Rules::from_bytes(full.as_bytes()).unwrap();
            let f = full.matcher("bot").unwrap();
            assert_eq!(
                full.groups().next().unwrap().engine(),
                EngineKind::VerdictDfa
            );
            let mut worst = 2;
            let mut seen = Vec::new();
            for limit in (8usize << 10..=136 << 10).step_by(8 << 10) {
                let config =
                    Config::new().dialect(dialect).dfa_byte_limit(limit);
                let bytes = rules_of(WILDCARD_GROUP, config);
                let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
                let g = rules.groups().next().unwrap();
                assert!(
                    g.size() <= limit,
                    "{dialect:?} {limit}: {}",
                    g.size()
                );
                assert!(
                    rank(g.engine()) <= worst,
                    "{dialect:?}: {:?} at {limit} octets after {seen:?}",
                    g.engine()
                );
                worst = rank(g.engine());
                seen.push((limit >> 10, g.engine()));
                let m = rules.matcher("bot").unwrap();
                for p in &paths {
                    let url = [b"http://h", &p[..]].concat();
                    assert_eq!(
                        f.decide(&url),
                        m.decide(&url),
                        "{dialect:?} {limit} {:?}",
                        url.escape_ascii().to_string()
                    );
                }
            }
            let engines: Vec<_> = seen.iter().map(|s| s.1).collect();
            for want in [EngineKind::SplitDfa, EngineKind::VerdictDfa] {
                assert!(engines.contains(&want), "{dialect:?}: {seen:?}");
            }
        }
    }

    /// A split group of two to four parts is walked in lockstep
    /// (`Dfa::scores_lockstep`), a larger one part by part: both give the
    /// verdicts of the whole group's automaton and of the reference
    /// matcher (`explain`), in both dialects.
    #[test]
    fn split_parts_walked_together_give_the_whole_groups_verdicts() {
        let paths = wildcard_paths();
        // A small group whose parts are few (two under some budgets).
        let small: &[u8] = b"user-agent: *\ndisallow: /*a*b\nallow: /*b*a\n\
                             disallow: /x*y$\nallow: /x\ndisallow: /ab*ba*\n";
        for dialect in [Dialect::Google, Dialect::Rfc9309] {
            let mut part_counts = Vec::new();
            for robots in [WILDCARD_GROUP, small] {
                let full = rules_of(robots, Config::new().dialect(dialect));
                let full = Rules::from_bytes(full.as_bytes()).unwrap();
                let f = full.matcher("bot").unwrap();
                let by_states = [900, 700, 500, 200, 80, 40, 20, 12, 8, 5, 3]
                    .map(|n| {
                        Config::new().dialect(dialect).dfa_state_limit(n)
                    });
                let by_bytes = [2, 4, 24, 32, 48, 64, 96].map(|k| {
                    Config::new().dialect(dialect).dfa_byte_limit(k << 10)
                });
                for config in by_states.into_iter().chain(by_bytes) {
                    let bytes = rules_of(robots, config);
                    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
                    let g = rules.groups().next().unwrap();
                    if g.engine() != EngineKind::SplitDfa {
                        continue;
                    }
                    part_counts.push(g.part_len());
                    let m = rules.matcher("bot").unwrap();
                    for p in &paths {
                        let url = [b"http://h", &p[..]].concat();
                        let want = f.decide(&url);
                        assert_eq!(want, f.explain(&url).verdict());
                        assert_eq!(
                            want,
                            m.decide(&url),
                            "{dialect:?}, {} parts: {:?}",
                            g.part_len(),
                            url.escape_ascii().to_string()
                        );
                    }
                }
            }
            // 2, 3 and 4 parts walk in lockstep, more one by one.
            for n in [2, 3, 4] {
                assert!(
                    part_counts.contains(&n),
                    "{dialect:?}: {part_counts:?}"
                );
            }
            assert!(
                part_counts.iter().any(|&n| n > 4),
                "{dialect:?}: {part_counts:?}"
            );
        }
    }
}
