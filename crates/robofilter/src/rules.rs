//! Loaded rules files: agent lookup, verdicts and explanations.
//!
//! [`Rules::from_bytes`] checks everything once (header, checksum, every table
//! reference, every automaton transition) and then borrows the bytes: no copy,
//! no allocation, no decoding. After that, a verdict can never panic or read out
//! of bounds, whatever file was loaded.

use std::sync::Arc;

use crate::agent::check_product_token;
use crate::dfa::Dfa;
use crate::dialect::Dialect;
use crate::direct::{Pairs, PrefixIndex};
use crate::error::{AgentError, LoadError, UsageError};
use crate::pattern;
use crate::usage::{ContentSignal, UsageRule, UsageRules};
use crate::verdict::{GroupSource, RuleKind, Verdict};
use crate::wire::{
    self, ENGINE_ALLOW_ALL, ENGINE_DFA, ENGINE_DIRECT, ENGINE_SPLIT,
    FORMAT_VERSION, NOTE_BYTES, NOTE_FILE_WORK, NOTE_RULE_STARS, NOTE_STATES,
    NOTE_WORK, Table,
};

/// A loaded rules file, borrowing its bytes.
///
/// # Example: load precompiled rules and decide URLs
///
/// ```
/// use robofilter::{Compiler, Rules, Verdict, AlignedBytes};
///
/// let bytes = Compiler::new().compile(b"User-agent: *\nDisallow: /cart\n")?;
/// let bytes = AlignedBytes::from(&bytes[..]);
/// let rules = Rules::from_bytes(bytes.as_bytes())?;
/// let bot = rules.matcher("ExampleBot")?;
/// assert_eq!(bot.decide(b"https://shop.example/cart?id=1"), Verdict::Disallow);
/// assert!(bot.is_allowed(b"https://shop.example/"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Rules<'a> {
    pub(crate) dialect: Dialect,
    pub(crate) parse_limit: u32,
    pub(crate) dfa_state_limit: u32,
    pub(crate) dfa_work_limit: u64,
    pub(crate) dfa_byte_limit: u64,
    pub(crate) strings: &'a [u8],
    pub(crate) robots: Table<'a>,
    pub(crate) agents: Table<'a>,
    pub(crate) groups: Table<'a>,
    pub(crate) rules: Table<'a>,
    pub(crate) engines: &'a [u8],
    pub(crate) sitemaps: Table<'a>,
    pub(crate) delays: Table<'a>,
    pub(crate) diagnostics: Table<'a>,
    /// The side section (empty if none): read and checked only by
    /// [`Rules::other_lines`].
    pub(crate) side: &'a [u8],
}

/// The engine a group was compiled to.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum EngineKind {
    /// A minimised verdict DFA: one table lookup per path octet.
    VerdictDfa,
    /// The direct matcher, linear in rules x path: used when the group's DFA
    /// exceeded its construction budget.
    Direct,
    /// The group has no Disallow rule that could match: always allow.
    AllowAll,
    /// Several score DFAs whose best Allow/Disallow precedences are
    /// combined: used when one verdict DFA for the whole group exceeded its
    /// construction budget. One table walk per part.
    SplitDfa,
}

impl EngineKind {
    /// A short name: `dfa`, `direct` or `allow-all`.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::VerdictDfa => "dfa",
            EngineKind::Direct => "direct",
            EngineKind::AllowAll => "allow-all",
            EngineKind::SplitDfa => "split-dfa",
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Engine<'a> {
    Dfa(Dfa<'a>),
    Split(Vec<Dfa<'a>>),
    /// The direct matcher; a matcher builds the candidate filter once.
    Direct(Option<Arc<DirectIndex>>),
    AllowAll,
}

/// The direct matcher's candidate filter: a trie of the group's literal
/// prefixes. Entry `e` is the group's rule `e` for `e` below the group's
/// rule count, then each Allow rule's index.html alias, in `aliases`.
#[derive(Debug)]
pub(crate) struct DirectIndex {
    pub(crate) trie: PrefixIndex,
    /// The aliases' entries: (rule, alias pattern).
    pub(crate) aliases: Vec<(u32, Vec<u8>)>,
    /// Per entry, the pairs of literal octets after its first `*`: a path
    /// that lacks one cannot match it.
    pub(crate) pairs: Vec<Pairs>,
}

/// The decision procedure for one agent, ready to decide URLs.
///
/// Cheap to clone; holds borrowed tables only.
#[derive(Clone, Debug)]
pub struct Matcher<'a> {
    pub(crate) rules: Rules<'a>,
    pub(crate) group: u32,
    pub(crate) source: GroupSource,
    pub(crate) engine: Engine<'a>,
}

/// One rule as stored in a rules file.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RuleInfo<'a> {
    pub(crate) line: u32,
    pub(crate) kind: RuleKind,
    pub(crate) value: &'a [u8],
    pub(crate) pattern: &'a [u8],
}

impl<'a> RuleInfo<'a> {
    /// The line number in the robots.txt.
    pub fn line(&self) -> u32 {
        self.line
    }
    /// Allow or disallow.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }
    /// The value as written.
    pub fn value(&self) -> &'a [u8] {
        self.value
    }
    /// The normalised pattern; its length is the rule's precedence.
    pub fn pattern(&self) -> &'a [u8] {
        self.pattern
    }
}

/// Why a URL got its verdict.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Reason<'a> {
    /// This rule matched with the highest precedence.
    Rule(RuleInfo<'a>),
    /// The rule was an Allow whose last segment starts with `index.htm`,
    /// which also allows exactly its directory (google/robotstxt's rule).
    IndexHtml(RuleInfo<'a>),
    /// A group applies but none of its rules matched.
    NoMatchingRule,
    /// No group names the agent and there is no `*` group.
    NoGroup,
    /// RFC 9309 §2.2.2: `/robots.txt` is always allowed (rfc9309 only).
    RobotsTxt,
}

/// A verdict with its reason, from [`Matcher::explain`].
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Explanation<'a> {
    pub(crate) verdict: Verdict,
    pub(crate) reason: Reason<'a>,
    pub(crate) path: Vec<u8>,
    pub(crate) source: GroupSource,
}

impl<'a> Explanation<'a> {
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }
    /// Why.
    pub fn reason(&self) -> Reason<'a> {
        self.reason
    }
    /// The path that was matched (normalised in the rfc9309 dialect).
    pub fn path(&self) -> &[u8] {
        &self.path
    }
    /// Whether the agent's rules came from its own groups or from `*`.
    pub fn source(&self) -> GroupSource {
        self.source
    }
}

/// Facts about one compiled group, for `inspect`.
#[derive(Clone, Copy, Debug)]
pub struct GroupInfo {
    index: usize,
    engine: EngineKind,
    rule_len: usize,
    size: usize,
    state_len: usize,
    class_len: usize,
    parts: usize,
    over_budget: Option<&'static str>,
}

impl GroupInfo {
    /// The group's index in the file.
    pub fn index(&self) -> usize {
        self.index
    }
    /// The engine.
    pub fn engine(&self) -> EngineKind {
        self.engine
    }
    /// The number of stored rules (empty ones excluded).
    pub fn rule_len(&self) -> usize {
        self.rule_len
    }
    /// The engine's size in octets.
    pub fn size(&self) -> usize {
        self.size
    }
    /// The number of automata: 1 for a verdict DFA, the number of parts
    /// for a split DFA, 0 otherwise.
    pub fn part_len(&self) -> usize {
        self.parts
    }
    /// DFA states, summed over parts (0 for other engines).
    pub fn state_len(&self) -> usize {
        self.state_len
    }
    /// DFA byte classes, the most of any part (0 for other engines).
    pub fn class_len(&self) -> usize {
        self.class_len
    }
    /// Which construction budget the group exceeded, if it did.
    pub fn over_budget(&self) -> Option<&'static str> {
        self.over_budget
    }
}

/// One agent entry of a rules file.
#[derive(Clone, Copy, Debug)]
pub struct AgentInfo<'a> {
    name: &'a [u8],
    group: Option<usize>,
    source: GroupSource,
}

impl<'a> AgentInfo<'a> {
    /// The product token, lower-cased.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }
    /// The group index, if a group applies.
    pub fn group(&self) -> Option<usize> {
        self.group
    }
    /// Whether the group names the agent or is the `*` group.
    pub fn source(&self) -> GroupSource {
        self.source
    }
}

/// A stored record: line number and text (sitemaps, crawl-delays,
/// diagnostics).
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    line: u32,
    text: &'a [u8],
    agents: &'a [u8],
    group: u32,
}

impl<'a> Record<'a> {
    /// The line number (0: the whole file).
    pub fn line(&self) -> u32 {
        self.line
    }
    /// The value (sitemap URL, crawl-delay value, diagnostic message).
    pub fn text(&self) -> &'a [u8] {
        self.text
    }
    /// For crawl-delays: the `user-agent` values of the group, one per
    /// line (joined by `\n`; empty for other records and outside groups).
    pub fn agents(&self) -> &'a [u8] {
        self.agents
    }
    /// For crawl-delays: the index of the group in the robots.txt (in file
    /// order, counting every `user-agent` run), `None` before any group
    /// and for other records.
    pub fn group(&self) -> Option<usize> {
        (self.group != wire::NO_GROUP).then_some(self.group as usize)
    }
}

/// A robots.txt line that no verdict uses and that has no record of its
/// own (Content-Signal, Clean-param, Host, Request-rate, an unknown key,
/// ...), from the rules file's side section ([`Rules::other_lines`]).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct OtherRecord<'a> {
    line: u32,
    group: u32,
    key: &'a [u8],
    value: &'a [u8],
    agents: &'a [u8],
}

impl<'a> OtherRecord<'a> {
    /// The line number.
    pub fn line(&self) -> u32 {
        self.line
    }
    /// The index of the group the line is in (the last `user-agent` run
    /// before it, in file order), `None` before any group.
    pub fn group(&self) -> Option<usize> {
        (self.group != wire::NO_GROUP).then_some(self.group as usize)
    }
    /// The key as written (trimmed, case kept).
    pub fn key(&self) -> &'a [u8] {
        self.key
    }
    /// The value as written (comment removed, trimmed).
    pub fn value(&self) -> &'a [u8] {
        self.value
    }
    /// The group's `user-agent` values, one per line (joined by `\n`;
    /// empty outside groups).
    pub fn agents(&self) -> &'a [u8] {
        self.agents
    }
}

fn source_from(code: u32) -> Option<GroupSource> {
    match code {
        0 => Some(GroupSource::Specific),
        1 => Some(GroupSource::Global),
        2 => Some(GroupSource::None),
        _ => None,
    }
}

impl<'a> Rules<'a> {
    /// Loads a rules file, validating all of it.
    ///
    /// `bytes` must start at an 8-byte aligned address: a memory map, an
    /// [`AlignedBytes`](crate::AlignedBytes), or
    /// [`include_rules!`](crate::include_rules).
    ///
    /// # Errors
    ///
    /// Any damage (bad magic, version, endianness, length, checksum,
    /// alignment or structure) is a [`LoadError`] saying what is wrong and
    /// what to do. This function never panics, for any input.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Rules<'a>, LoadError> {
        wire::check_header(
            bytes,
            wire::MAGIC,
            FORMAT_VERSION..=FORMAT_VERSION,
            LoadError::version,
        )?;
        // The side section is outside the checksum and is not read here.
        let side_len = wire::u32_at(bytes, wire::SIDE_LEN_AT) as usize;
        let core_len = bytes
            .len()
            .checked_sub(side_len)
            .filter(|&c| c >= wire::HEADER_LEN)
            .ok_or_else(|| LoadError::structure("side section length"))?;
        wire::check_integrity(&bytes[..core_len])?;
        let dialect = Dialect::from_byte(bytes[28])
            .ok_or_else(|| LoadError::structure("unknown dialect code"))?;
        let parse_limit = wire::u32_at(bytes, 32);
        let dfa_state_limit = wire::u32_at(bytes, 40);
        let dfa_work_limit = wire::u64_at(bytes, 48);
        let dfa_byte_limit = wire::u64_at(bytes, 56);
        let n = wire::u32_at(bytes, 36) as usize;
        let dir_end = n
            .checked_mul(wire::DIR_REC)
            .and_then(|d| d.checked_add(wire::HEADER_LEN))
            .filter(|&e| e <= core_len)
            .ok_or_else(|| LoadError::structure("section directory"))?;
        let find = |tag: [u8; 4]| {
            (wire::HEADER_LEN..dir_end)
                .step_by(wire::DIR_REC)
                .find(|&at| bytes[at..at + 4] == tag)
                .map(|at| {
                    (wire::u64_at(bytes, at + 8), wire::u64_at(bytes, at + 16))
                })
        };
        // The side section is exactly the octets after the checksummed
        // part, or absent.
        let side = match find(wire::TAG_SIDE) {
            Some((off, len))
                if off == core_len as u64
                    && len == side_len as u64
                    && len > 0 =>
            {
                &bytes[core_len..]
            }
            None if side_len == 0 => &bytes[..0],
            _ => {
                return Err(LoadError::structure("side section out of place"));
            }
        };
        let section = |tag: [u8; 4]| -> Result<&'a [u8], LoadError> {
            if let Some((off, len)) = find(tag) {
                let end = off.checked_add(len);
                // Within the checksummed part: a verdict never reads the
                // side section's unchecked octets.
                let align = if tag == wire::TAG_ENGINES {
                    wire::ENGINES_ALIGN
                } else {
                    wire::SECTION_ALIGN
                };
                if off % align as u64 != 0
                    || end.is_none_or(|e| e > core_len as u64)
                {
                    return Err(LoadError::structure(format!(
                        "section {} out of bounds",
                        String::from_utf8_lossy(&tag)
                    )));
                }
                return Ok(&bytes[off as usize..(off + len) as usize]);
            }
            // Writers leave empty sections out.
            Ok(&bytes[..0])
        };
        let rules = Rules {
            dialect,
            parse_limit,
            dfa_state_limit,
            dfa_work_limit,
            dfa_byte_limit,
            strings: section(wire::TAG_STRINGS)?,
            robots: Table::new(
                section(wire::TAG_ROBOTS)?,
                wire::ROBOTS_REC,
                "robots",
            )?,
            agents: Table::new(
                section(wire::TAG_AGENTS)?,
                wire::AGENT_REC,
                "agent",
            )?,
            groups: Table::new(
                section(wire::TAG_GROUPS)?,
                wire::GROUP_REC,
                "group",
            )?,
            rules: Table::new(
                section(wire::TAG_RULES)?,
                wire::RULE_REC,
                "rule",
            )?,
            engines: section(wire::TAG_ENGINES)?,
            sitemaps: Table::new(
                section(wire::TAG_SITEMAPS)?,
                wire::SITEMAP_REC,
                "sitemap",
            )?,
            delays: Table::new(
                section(wire::TAG_DELAYS)?,
                wire::DELAY_REC,
                "crawl-delay",
            )?,
            diagnostics: Table::new(
                section(wire::TAG_DIAGNOSTICS)?,
                wire::DIAG_REC,
                "diagnostic",
            )?,
            side,
        };
        rules.validate()?;
        Ok(rules)
    }

    /// Checks every cross-reference so that lookups can index freely.
    fn validate(&self) -> Result<(), LoadError> {
        let bad = |what: &str| Err(LoadError::structure(what.to_string()));
        if self.robots.len() != 1 {
            return bad("expected exactly one robots entry");
        }
        let range_ok = |start: u32, len: u32, total: usize| {
            (start as usize)
                .checked_add(len as usize)
                .is_some_and(|e| e <= total)
        };
        let str_ok =
            |off: u32, len: u32| range_ok(off, len, self.strings.len());
        let r = &self.robots;
        let checks = [
            (r.get(0, 0), r.get(0, 1), self.agents.len()),
            (r.get(0, 4), r.get(0, 5), self.sitemaps.len()),
            (r.get(0, 6), r.get(0, 7), self.delays.len()),
            (r.get(0, 8), r.get(0, 9), self.diagnostics.len()),
        ];
        if !checks.iter().all(|&(s, l, t)| range_ok(s, l, t)) {
            return bad("robots entry range out of bounds");
        }
        let fallback = r.get(0, 2);
        if fallback != wire::NO_GROUP && fallback as usize >= self.groups.len()
        {
            return bad("fallback group out of range");
        }
        if source_from(r.get(0, 10)).is_none() {
            return bad("fallback source code");
        }
        for i in 0..self.agents.len() {
            let g = self.agents.get(i, 2);
            if !str_ok(self.agents.get(i, 0), self.agents.get(i, 1))
                || (g != wire::NO_GROUP && g as usize >= self.groups.len())
                || source_from(self.agents.get(i, 3)).is_none()
            {
                return bad("agent entry out of range");
            }
        }
        for i in 0..self.rules.len() {
            let t = &self.rules;
            let lens = t.get(i, 3);
            if !str_ok(t.get(i, 1), lens & wire::RULE_VALUE_MAX)
                || !str_ok(t.get(i, 2), lens >> 16)
            {
                return bad("rule entry out of range");
            }
        }
        for i in 0..self.delays.len() {
            let g = self.delays.get(i, 5);
            if g != wire::NO_GROUP && g >= self.robots.get(0, 11) {
                return bad("crawl-delay group out of range");
            }
        }
        for (t, fields) in [
            (&self.sitemaps, &[(1, 2)][..]),
            (&self.delays, &[(1, 2), (3, 4)][..]),
            (&self.diagnostics, &[(1, 2)][..]),
        ] {
            for i in 0..t.len() {
                if !fields
                    .iter()
                    .all(|&(o, l)| str_ok(t.get(i, o), t.get(i, l)))
                {
                    return bad("record text out of range");
                }
            }
        }
        for g in 0..self.groups.len() {
            if !range_ok(
                self.groups.get(g, 1),
                self.groups.get(g, 2),
                self.rules.len(),
            ) {
                return bad("group rule range out of bounds");
            }
            self.engine_with(g, true)?;
        }
        Ok(())
    }

    fn engine_bytes(&self, g: usize) -> Result<&'a [u8], LoadError> {
        let t = &self.groups;
        let off = u64::from(t.get(g, 4)) | u64::from(t.get(g, 5)) << 32;
        let len = u64::from(t.get(g, 6)) | u64::from(t.get(g, 7)) << 32;
        let end =
            off.checked_add(len).filter(|&e| e <= self.engines.len() as u64);
        if end.is_none() || off % 8 != 0 {
            return Err(LoadError::structure("engine bytes out of bounds"));
        }
        Ok(&self.engines[off as usize..(off + len) as usize])
    }

    /// Group `g`'s engine, after [`Rules::validate`] checked it.
    fn engine(&self, g: usize) -> Engine<'a> {
        self.engine_with(g, false).expect("validated")
    }

    fn engine_with(
        &self,
        g: usize,
        check: bool,
    ) -> Result<Engine<'a>, LoadError> {
        match self.groups.get(g, 0) {
            ENGINE_DFA => {
                let dfa = Dfa::from_bytes_with(self.engine_bytes(g)?, check)?;
                if dfa.is_scores() {
                    return Err(LoadError::structure(
                        "group DFA is a score DFA",
                    ));
                }
                Ok(Engine::Dfa(dfa))
            }
            ENGINE_SPLIT => {
                // [count u32, 0 u32, (offset u32, length u32) x count], then
                // the parts at 8-aligned offsets from the blob's start.
                let blob = self.engine_bytes(g)?;
                let bad = || {
                    LoadError::structure("split engine index out of bounds")
                };
                if blob.len() < 8 {
                    return Err(bad());
                }
                let count = wire::u32_at(blob, 0) as usize;
                let index_end =
                    count.checked_mul(8).and_then(|n| n.checked_add(8));
                if index_end.is_none_or(|e| e > blob.len()) || count == 0 {
                    return Err(bad());
                }
                let mut parts = Vec::with_capacity(count);
                for i in 0..count {
                    let off = wire::u32_at(blob, 8 + i * 8) as usize;
                    let len = wire::u32_at(blob, 12 + i * 8) as usize;
                    if off % 8 != 0
                        || off.checked_add(len).is_none_or(|e| e > blob.len())
                    {
                        return Err(bad());
                    }
                    let dfa =
                        Dfa::from_bytes_with(&blob[off..off + len], check)?;
                    if !dfa.is_scores() {
                        return Err(LoadError::structure(
                            "split part is not a score DFA",
                        ));
                    }
                    parts.push(dfa);
                }
                Ok(Engine::Split(parts))
            }
            ENGINE_DIRECT => Ok(Engine::Direct(None)),
            ENGINE_ALLOW_ALL => Ok(Engine::AllowAll),
            _ => Err(LoadError::structure("unknown engine code")),
        }
    }

    /// The dialect the file was compiled with.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The parse limit used at compile time (`None`: the whole file).
    pub fn parse_limit(&self) -> Option<usize> {
        (self.parse_limit != 0).then_some(self.parse_limit as usize)
    }

    /// The per-group DFA construction budgets the file was compiled with:
    /// (states, work steps). See `Config::dfa_state_limit`.
    pub fn dfa_budgets(&self) -> (u32, u64) {
        (self.dfa_state_limit, self.dfa_work_limit)
    }

    /// The per-group byte budget the file was compiled with (`None`: files
    /// written before the budget existed). See `Config::dfa_byte_limit`.
    pub fn dfa_byte_limit(&self) -> Option<u64> {
        (self.dfa_byte_limit != 0).then_some(self.dfa_byte_limit)
    }

    fn string(&self, off: u32, len: u32) -> &'a [u8] {
        &self.strings[off as usize..(off + len) as usize]
    }

    fn agent_range(&self) -> core::ops::Range<usize> {
        let start = self.robots.get(0, 0) as usize;
        start..start + self.robots.get(0, 1) as usize
    }

    /// Whether every agent has a decision (`true` for files compiled without
    /// `--agent`: unnamed agents get the `*` group).
    pub fn is_all_agents(&self) -> bool {
        self.robots.get(0, 3) & 1 != 0
    }

    /// The agents the file names, sorted, lower-cased.
    pub fn agents(&self) -> impl Iterator<Item = AgentInfo<'a>> + '_ {
        self.agent_range().map(move |i| {
            let t = &self.agents;
            let g = t.get(i, 2);
            AgentInfo {
                name: self.string(t.get(i, 0), t.get(i, 1)),
                group: (g != wire::NO_GROUP).then_some(g as usize),
                source: source_from(t.get(i, 3)).expect("validated"),
            }
        })
    }

    /// The group every agent not in [`Rules::agents`] gets, if the file was
    /// compiled for all agents.
    pub fn fallback(&self) -> Option<AgentInfo<'a>> {
        if !self.is_all_agents() {
            return None;
        }
        let g = self.robots.get(0, 2);
        Some(AgentInfo {
            name: b"*",
            group: (g != wire::NO_GROUP).then_some(g as usize),
            source: source_from(self.robots.get(0, 10)).expect("validated"),
        })
    }

    /// Looks up the decision procedure for a crawler's product token.
    ///
    /// The token is compared whole and case-insensitively (`FooBot/2.1`
    /// never matches a `FooBot` group; pass the bare token).
    ///
    /// # Errors
    ///
    /// [`AgentError`] if the file was compiled for a list of agents that does
    /// not include this one, or, in the rfc9309 dialect, if `agent` is not a
    /// product token ([`check_product_token`]). The google dialect takes any
    /// agent, as the reference does (a non-token falls back to `*`).
    pub fn matcher(&self, agent: &str) -> Result<Matcher<'a>, AgentError> {
        let info = self.agent_info(agent)?;
        let (group, engine) = match info.group {
            Some(g) => (g as u32, self.engine(g)),
            None => (wire::NO_GROUP, Engine::AllowAll),
        };
        let engine = match engine {
            Engine::Direct(None) => {
                Engine::Direct(Some(Arc::new(self.direct_index(group))))
            }
            other => other,
        };
        Ok(Matcher { rules: self.clone(), group, source: info.source, engine })
    }

    /// The agent's entry: its group and where the group comes from (its
    /// name is left empty), as [`Rules::matcher`] finds it.
    fn agent_info(&self, agent: &str) -> Result<AgentInfo<'a>, AgentError> {
        if self.dialect == Dialect::Rfc9309 {
            check_product_token(agent)?;
        }
        let needle = agent.as_bytes();
        let range = self.agent_range();
        let names = &self.agents;
        let found = {
            let (mut lo, mut hi) = (range.start, range.end);
            let mut hit = None;
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let name = self.string(names.get(mid, 0), names.get(mid, 1));
                match cmp_ignore_case(name, needle) {
                    core::cmp::Ordering::Less => lo = mid + 1,
                    core::cmp::Ordering::Greater => hi = mid,
                    core::cmp::Ordering::Equal => {
                        hit = Some(mid);
                        break;
                    }
                }
            }
            hit
        };
        Ok(match found {
            Some(i) => AgentInfo {
                name: b"",
                group: Some(names.get(i, 2))
                    .filter(|&g| g != wire::NO_GROUP)
                    .map(|g| g as usize),
                source: source_from(names.get(i, 3)).expect("validated"),
            },
            None => match self.fallback() {
                Some(f) => f,
                None => {
                    let known = self
                        .agents()
                        .map(|a| {
                            String::from_utf8_lossy(a.name()).into_owned()
                        })
                        .collect();
                    return Err(AgentError::new(needle, known));
                }
            },
        })
    }

    /// The crawl delay, in seconds, of the groups that apply to `agent`
    /// (those naming it, or else the `*` groups, as for its rules): the
    /// first of their `crawl-delay` lines, in file order, whose value is a
    /// number (`10`, `0.5`). `None` when no such line applies.
    ///
    /// # Errors
    ///
    /// As [`Rules::matcher`]: an agent the file was not compiled for, or
    /// in the rfc9309 dialect a value that is not a product token.
    ///
    /// ```
    /// use robofilter::{AlignedBytes, Compiler, Rules};
    ///
    /// let robots = b"User-agent: a\nCrawl-delay: 2.5\nDisallow: /a\n\n\
    ///                User-agent: *\nCrawl-delay: 10\nDisallow: /x\n";
    /// let bytes = AlignedBytes::from(&Compiler::new().compile(robots)?[..]);
    /// let rules = Rules::from_bytes(bytes.as_bytes())?;
    /// assert_eq!(rules.crawl_delay("A")?, Some(2.5));
    /// assert_eq!(rules.crawl_delay("other")?, Some(10.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn crawl_delay(&self, agent: &str) -> Result<Option<f64>, AgentError> {
        let applies = self.applies_to(agent)?;
        Ok(self
            .crawl_delays()
            .filter(|d| d.group().is_some() && applies(d.agents()))
            .find_map(|d| seconds(d.text())))
    }

    /// Which groups' records (crawl delays, other lines) apply to `agent`:
    /// a test of a record's group, given as its `user-agent` values
    /// ([`Record::agents`], [`OtherRecord::agents`]). A group applies when
    /// its rules are the agent's: it names the agent's product token, or,
    /// when no group does, it is a `*` group. A record outside any group
    /// (empty values) never applies.
    ///
    /// # Errors
    ///
    /// As [`Rules::matcher`].
    pub fn applies_to(
        &self,
        agent: &str,
    ) -> Result<impl Fn(&[u8]) -> bool + use<'_>, AgentError> {
        let source = self.agent_info(agent)?.source;
        let token = |v: &[u8]| {
            let n = v
                .iter()
                .take_while(|&&b| {
                    b.is_ascii_alphabetic() || matches!(b, b'-' | b'_')
                })
                .count();
            v[..n].to_vec()
        };
        let needle = token(agent.as_bytes());
        Ok(move |agents: &[u8]| {
            agents.split(|&b| b == b'\n').any(|value| match source {
                GroupSource::Specific => {
                    let global = value.first() == Some(&b'*');
                    !global
                        && !value.is_empty()
                        && token(value).eq_ignore_ascii_case(&needle)
                }
                GroupSource::Global => {
                    value.first() == Some(&b'*')
                        && value.get(1).is_none_or(u8::is_ascii_whitespace)
                }
                GroupSource::None => false,
            })
        })
    }

    /// The `Content-Usage` rules (AIPREF, [`UsageRules`]) of the groups
    /// that apply to `agent` ([`Rules::applies_to`]), from the side
    /// section, ready to give URLs their preferences.
    ///
    /// ```
    /// use robofilter::{AlignedBytes, Compiler, Preference, Rules, UsageKey};
    ///
    /// let robots = b"User-agent: *\nContent-Usage: train-ai=n\n\
    ///                Content-Usage: /blog/ train-ai=y\nDisallow: /x\n";
    /// let bytes = AlignedBytes::from(&Compiler::new().compile(robots)?[..]);
    /// let rules = Rules::from_bytes(bytes.as_bytes())?;
    /// let usage = rules.content_usage("AnyBot")?;
    /// let train = |url: &str| usage.preferences(url.as_bytes()).get(UsageKey::TrainAi);
    /// assert_eq!(train("https://a.example/"), Preference::No);
    /// assert_eq!(train("https://a.example/blog/1"), Preference::Yes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`UsageError::Agent`] as [`Rules::matcher`] fails, and
    /// [`UsageError::Load`] if the side section is damaged.
    pub fn content_usage(
        &self,
        agent: &str,
    ) -> Result<UsageRules, UsageError> {
        let applies = self.applies_to(agent)?;
        let rules = self
            .other_lines()?
            .into_iter()
            .filter(|r| {
                r.key.eq_ignore_ascii_case(b"content-usage")
                    && applies(r.agents)
            })
            .map(|r| UsageRule::new(r.line, r.value, self.dialect))
            .collect();
        Ok(UsageRules::new(rules, self.dialect))
    }

    /// The first `Content-Signal` line (Cloudflare's Content Signals
    /// Policy) of the groups that apply to `agent`, read as
    /// [`ContentSignal::parse`] reads it; `None` when they have none.
    ///
    /// # Errors
    ///
    /// As [`Rules::content_usage`].
    pub fn content_signal(
        &self,
        agent: &str,
    ) -> Result<Option<ContentSignal>, UsageError> {
        let applies = self.applies_to(agent)?;
        Ok(self
            .other_lines()?
            .into_iter()
            .find(|r| {
                r.key.eq_ignore_ascii_case(b"content-signal")
                    && applies(r.agents)
            })
            .map(|r| ContentSignal::parse(r.value)))
    }

    fn direct_index(&self, g: u32) -> DirectIndex {
        let mut rules =
            Vec::with_capacity(self.groups.get(g as usize, 2) as usize);
        let mut aliases = Vec::new();
        for (i, rule) in self.group_rules(g as usize).enumerate() {
            rules.push(rule.pattern);
            if rule.kind == RuleKind::Allow {
                if let Some(alias) = pattern::index_html_alias(rule.pattern) {
                    aliases.push((i as u32, alias));
                }
            }
        }
        // The rules in their stored order (a compiled direct group's is the
        // index's), then the aliases, which the sort moves into place.
        let patterns = || {
            let aliases = aliases.iter().map(|(_, a)| &a[..]);
            rules.iter().copied().chain(aliases)
        };
        let trie = PrefixIndex::new(patterns(), self.dialect);
        let pairs = patterns()
            .map(|p| {
                let mut pairs = Pairs::default();
                pattern::literal_pairs_after_star(p, self.dialect, |a, b| {
                    pairs.add(a, b)
                });
                pairs
            })
            .collect();
        DirectIndex { trie, aliases, pairs }
    }

    /// Facts about every compiled group.
    pub fn groups(&self) -> impl Iterator<Item = GroupInfo> + '_ {
        (0..self.groups.len()).map(move |g| {
            let t = &self.groups;
            let engine = self.engine(g);
            let (kind, state_len, class_len, parts) = match &engine {
                Engine::Dfa(d) => {
                    (EngineKind::VerdictDfa, d.state_len(), d.stride(), 1)
                }
                Engine::Split(p) => (
                    EngineKind::SplitDfa,
                    p.iter().map(Dfa::state_len).sum(),
                    p.iter().map(Dfa::stride).max().unwrap_or(0),
                    p.len(),
                ),
                Engine::Direct(_) => (EngineKind::Direct, 0, 0, 0),
                Engine::AllowAll => (EngineKind::AllowAll, 0, 0, 0),
            };
            let size = t.get(g, 6) as usize;
            let over_budget = match t.get(g, 3) {
                NOTE_STATES => Some("state budget"),
                NOTE_WORK => Some("work budget"),
                NOTE_BYTES => Some("byte budget"),
                NOTE_FILE_WORK => Some("work budget of the file"),
                NOTE_RULE_STARS => Some("wildcard budget of a rule"),
                _ => None,
            };
            GroupInfo {
                index: g,
                engine: kind,
                rule_len: t.get(g, 2) as usize,
                size,
                state_len,
                class_len,
                parts,
                over_budget,
            }
        })
    }

    /// The rules of group `g`, in the order stored: file order, except in
    /// a group decided by the direct matcher, whose rules the compiler
    /// stores by literal prefix (the order of the matcher's index, so that
    /// loading it needs no sort). [`RuleInfo::line`] gives each rule's
    /// line.
    pub fn group_rules(
        &self,
        g: usize,
    ) -> impl Iterator<Item = RuleInfo<'a>> + '_ {
        let start = self.groups.get(g, 1) as usize;
        let len = self.groups.get(g, 2) as usize;
        (start..start + len).map(move |i| self.rule(i))
    }

    pub(crate) fn rule(&self, i: usize) -> RuleInfo<'a> {
        let t = &self.rules;
        let lens = t.get(i, 3);
        RuleInfo {
            line: t.get(i, 0),
            kind: if lens & (1 << 15) == 0 {
                RuleKind::Allow
            } else {
                RuleKind::Disallow
            },
            value: self.string(t.get(i, 1), lens & wire::RULE_VALUE_MAX),
            pattern: self.string(t.get(i, 2), lens >> 16),
        }
    }

    fn records(
        &self,
        t: Table<'a>,
        range_at: usize,
        with_agents: bool,
    ) -> impl Iterator<Item = Record<'a>> + '_ {
        let start = self.robots.get(0, range_at) as usize;
        let len = self.robots.get(0, range_at + 1) as usize;
        (start..start + len).map(move |i| Record {
            line: t.get(i, 0),
            text: self.string(t.get(i, 1), t.get(i, 2)),
            agents: if with_agents {
                self.string(t.get(i, 3), t.get(i, 4))
            } else {
                b""
            },
            group: if with_agents { t.get(i, 5) } else { wire::NO_GROUP },
        })
    }

    /// The other `key: value` lines of the robots.txt, from the side
    /// section, in file order. The side section is checked (its own
    /// checksum and every record's range) here, not by
    /// [`Rules::from_bytes`]: deciding URLs never reads it.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if the side section is damaged; the rest of the
    /// file is unaffected.
    pub fn other_lines(&self) -> Result<Vec<OtherRecord<'a>>, LoadError> {
        let side = self.side;
        if side.is_empty() {
            return Ok(Vec::new());
        }
        let bad = |what: &str| {
            LoadError::structure(format!(
                "side section (other lines): {what} (compile it again)"
            ))
        };
        if side.len() < wire::SIDE_HEADER_LEN {
            return Err(bad("shorter than its header"));
        }
        let stored = wire::u32_at(side, 0);
        let computed = crc32fast::hash(&side[4..]);
        if stored != computed {
            return Err(bad(&format!(
                "checksum {computed:08x} does not match the stored \
                 {stored:08x}"
            )));
        }
        let n = wire::u32_at(side, 4) as usize;
        let recs_end = n
            .checked_mul(wire::OTHER_REC)
            .and_then(|r| r.checked_add(wire::SIDE_HEADER_LEN))
            .filter(|&e| e <= side.len())
            .ok_or_else(|| bad("record count"))?;
        let recs = Table::new(
            &side[wire::SIDE_HEADER_LEN..recs_end],
            wire::OTHER_REC,
            "other line",
        )?;
        let strings = &side[recs_end..];
        let text = |off: u32, len: u32| {
            let (off, len) = (off as usize, len as usize);
            off.checked_add(len)
                .filter(|&e| e <= strings.len())
                .map(|e| &strings[off..e])
                .ok_or_else(|| bad("record text out of range"))
        };
        let groups = self.robots.get(0, 11);
        (0..recs.len())
            .map(|i| {
                let group = recs.get(i, 1);
                if group != wire::NO_GROUP && group >= groups {
                    return Err(bad("record group out of range"));
                }
                Ok(OtherRecord {
                    line: recs.get(i, 0),
                    group,
                    key: text(recs.get(i, 2), recs.get(i, 3))?,
                    value: text(recs.get(i, 4), recs.get(i, 5))?,
                    agents: text(recs.get(i, 6), recs.get(i, 7))?,
                })
            })
            .collect()
    }

    /// The side section's size in octets (0: the robots.txt has no other
    /// line).
    pub fn side_len(&self) -> usize {
        self.side.len()
    }

    /// The sitemap lines.
    pub fn sitemaps(&self) -> impl Iterator<Item = Record<'a>> + '_ {
        self.records(self.sitemaps, 4, false)
    }

    /// The crawl-delay lines.
    pub fn crawl_delays(&self) -> impl Iterator<Item = Record<'a>> + '_ {
        self.records(self.delays, 6, true)
    }

    /// The parser's diagnostics.
    pub fn diagnostics(&self) -> impl Iterator<Item = Record<'a>> + '_ {
        self.records(self.diagnostics, 8, false)
    }
}

/// A crawl-delay value as seconds: digits, optionally a point and more
/// digits (`10`, `0.5`, `2.`); anything else (`-1`, `1e3`, `fast`) is not a
/// delay.
fn seconds(value: &[u8]) -> Option<f64> {
    let value = value.trim_ascii();
    let (int, frac) = match value.iter().position(|&b| b == b'.') {
        Some(dot) => (&value[..dot], &value[dot + 1..]),
        None => (value, &b""[..]),
    };
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !digits(int) || !digits(frac) {
        return None;
    }
    core::str::from_utf8(value).ok()?.parse().ok()
}

fn cmp_ignore_case(a: &[u8], b: &[u8]) -> core::cmp::Ordering {
    let a = a.iter().map(u8::to_ascii_lowercase);
    let b = b.iter().map(u8::to_ascii_lowercase);
    a.cmp(b)
}
