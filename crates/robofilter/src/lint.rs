//! Lint of a robots.txt or rules file: rules that never decide (proved on automata), unreachable groups, look-alike agents, lines not understood.
//!
//! # What "never decides" means, and how it is proved
//!
//! A rule *decides* a path when it is the rule [`Matcher::explain`] names
//! for it: among the matching candidates of the agent's merged group (each
//! rule's normalised pattern, and each Allow's index.html alias), the
//! longest Disallow wins if it is strictly longer than the longest Allow,
//! else the longest Allow; equal lengths of one kind go to the earliest
//! line. So a candidate `c` of kind `K`, length `L`, on line `l` is
//! *beaten* on a path by a matching candidate `d` of another rule when
//!
//! - `d` has the same kind and is longer, or as long and on an earlier
//!   line;
//! - `d` is an Allow, `c` a Disallow, and `d` is at least as long (Allow
//!   wins ties);
//! - `d` is a Disallow, `c` an Allow, and `d` is strictly longer;
//! - or (rfc9309) the path is `/robots.txt`, with or without a query,
//!   which is always allowed (two pseudo-candidates that beat everything).
//!
//! A rule never decides in a group iff for each of its candidates `c`, the
//! paths `c` matches are contained in the union of the paths matched by
//! the candidates that beat it: a language inclusion between patterns,
//! which are regular. The proof is a breadth-first search of the product
//! of their position automata (each pattern's token positions, a `*` a
//! self-loop, an unanchored pattern's end absorbing), over the octets the
//! patterns name plus one octet none of them names (every other octet
//! behaves like it), from the states after the leading `/`. A reachable
//! product state where `c` accepts and no beater does is a witness: the
//! rule decides that path. A state where an unanchored beater has matched
//! is not expanded: every extension is beaten. When the search ends
//! without a witness, the rule provably never decides; when its work (the
//! automaton positions it steps, a state of `n` positions costing `n` per
//! octet of the alphabet, stored states included) would pass
//! [`Linter::work_limit`], the answer is `undecided`.
//!
//! Two cheap steps come first, and settle nearly every rule of real
//! files: the paths the rule's pattern writes out (its literal octets,
//! each `*` empty or an unnamed octet), checked with the engine's direct
//! matcher, are witnesses if no beater matches them; and a search of the
//! product with one beater alone (whose literal prefix starts every path
//! the rule matches) is a proof that that beater covers it.
//!
//! Paths are all octet strings that start with `/` (as
//! [`Matcher::blocks_entirely`] counts them). The rfc9309 normalisation
//! maps URLs onto a subset of them, so "never decides" is exact for every
//! URL; "decides" means some octet path is decided by the rule, which in
//! rare rfc9309 cases (a witness that an escape in the URL would rewrite)
//! may be no URL's path.
//!
//! A rule is linted in every merged group that holds it (every agent the
//! file names, and the `*` fallback): it is reported only if it never
//! decides in any of them.
//!
//! [`Matcher::explain`]: crate::Matcher::explain
//! [`Matcher::blocks_entirely`]: crate::Matcher::blocks_entirely

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use hashbrown::HashTable;

use crate::aligned::AlignedBytes;
use crate::compile::Config;
use crate::dialect::Dialect;
use crate::error::BuildError;
use crate::kind::InputKind;
use crate::parse::RobotsTxt;
use crate::pattern::{self, Tok};
use crate::rules::{RuleInfo, Rules};
use crate::usage::UsageRule;
use crate::verdict::RuleKind;

/// The default [`Linter::work_limit`]: automaton positions one proof may
/// step before it says `undecided` (some 50 ms).
const DEFAULT_WORK_LIMIT: u64 = 10_000_000;

/// Lints robots.txt files and rules files.
///
/// # Example: a look-alike agent, a cancelled and a shadowed rule
///
/// ```
/// use robofilter::{Config, LintKind, Linter};
///
/// let robots = b"User-agent: GPT-Bot\nDisallow: /\n\n\
///                User-agent: *\nDisallow: /a/\nDisallow: /b\n\
///                Allow: /a/\nAllow: /b*\n";
/// let linter = Linter::new().known_agents(["GPTBot"]);
/// let findings = linter.lint_robots_txt(robots, &Config::new())?;
/// let kinds: Vec<_> = findings.iter().map(|f| (f.line(), f.kind())).collect();
/// assert_eq!(
///     kinds,
///     [(1, LintKind::Lookalike), (5, LintKind::Cancelled), (6, LintKind::Shadowed)]
/// );
/// // `Allow: /b*` (3 octets) decides every path `Disallow: /b` matches.
/// assert_eq!(findings[2].by(), [8]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Linter {
    known: Vec<String>,
    work_limit: u64,
}

impl Default for Linter {
    fn default() -> Linter {
        Linter { known: Vec::new(), work_limit: DEFAULT_WORK_LIMIT }
    }
}

/// What a [`Finding`] is about.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum LintKind {
    /// The rule's pattern matches no path (a path starts with `/`).
    MatchesNothing,
    /// The rule repeats an earlier rule of the same kind and pattern.
    Duplicate,
    /// A Disallow whose pattern an Allow repeats: Allow wins ties.
    Cancelled,
    /// Rules of higher precedence decide every path the rule matches.
    Shadowed,
    /// The proof exceeded its budget.
    Undecided,
    /// A group (or a rule) that no crawler's product token reaches.
    Unreachable,
    /// A `user-agent` value that holds no product token.
    NoToken,
    /// A `user-agent` value that looks like a known crawler's token but
    /// is not it.
    Lookalike,
    /// A `user-agent` value with more than a product token (`ccbot/2.0`):
    /// it is read as the token it starts with.
    NotAToken,
    /// A line the parser did not understand (unknown key, no separator).
    NotUnderstood,
    /// A line understood only leniently, as Google's parser does (a key
    /// typo, a missing colon).
    Lenient,
    /// A line or file cut short (over-long line, NUL, parse limit).
    Cut,
    /// Any other parser diagnostic.
    Parser,
}

impl LintKind {
    /// The name in output: `shadowed`, `duplicate`, `cancelled`,
    /// `matches-nothing`, `undecided`, `unreachable`, `no-token`,
    /// `lookalike`, `not-a-token`, `not-understood`, `lenient`, `cut`,
    /// `parser`.
    pub fn as_str(self) -> &'static str {
        match self {
            LintKind::MatchesNothing => "matches-nothing",
            LintKind::Duplicate => "duplicate",
            LintKind::Cancelled => "cancelled",
            LintKind::Shadowed => "shadowed",
            LintKind::Undecided => "undecided",
            LintKind::Unreachable => "unreachable",
            LintKind::NoToken => "no-token",
            LintKind::Lookalike => "lookalike",
            LintKind::NotAToken => "not-a-token",
            LintKind::NotUnderstood => "not-understood",
            LintKind::Lenient => "lenient",
            LintKind::Cut => "cut",
            LintKind::Parser => "parser",
        }
    }

    /// Whether the finding says a rule never decides any path (proved).
    pub fn is_never_decides(self) -> bool {
        matches!(
            self,
            LintKind::MatchesNothing
                | LintKind::Duplicate
                | LintKind::Cancelled
                | LintKind::Shadowed
        )
    }
}

/// One lint finding: a line, a kind and a sentence.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Finding {
    line: u32,
    kind: LintKind,
    message: String,
    rule: Option<(RuleKind, Vec<u8>)>,
    by: Vec<u32>,
    agent: Option<Vec<u8>>,
    similar: Option<String>,
}

impl Finding {
    /// The line in the robots.txt (0: the file as a whole, or a line a
    /// rules file does not keep).
    pub fn line(&self) -> u32 {
        self.line
    }
    /// What the finding is about.
    pub fn kind(&self) -> LintKind {
        self.kind
    }
    /// One sentence, lower-case, without a final period.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// For a rule's finding: its kind and value as written.
    pub fn rule(&self) -> Option<(RuleKind, &[u8])> {
        self.rule.as_ref().map(|(k, v)| (*k, &v[..]))
    }
    /// For a rule that never decides: the lines of the rules that decide
    /// the paths it matches instead, or of the one rule that covers it
    /// alone when there is one (the earlier rule for `duplicate`, the
    /// Allow for `cancelled`; empty for `matches-nothing`).
    pub fn by(&self) -> &[u32] {
        &self.by
    }
    /// For an agent's finding: the `user-agent` value (from a rules file,
    /// the lower-cased product token, the only form it keeps).
    pub fn agent(&self) -> Option<&[u8]> {
        self.agent.as_deref()
    }
    /// For a look-alike: the known token it resembles.
    pub fn similar_to(&self) -> Option<&str> {
        self.similar.as_deref()
    }

    fn new(line: u32, kind: LintKind, message: String) -> Finding {
        Finding {
            line,
            kind,
            message,
            rule: None,
            by: Vec::new(),
            agent: None,
            similar: None,
        }
    }
}

impl Linter {
    /// A linter with no known agents and the default proof budget
    /// (10 million steps per proof).
    pub fn new() -> Linter {
        Linter::default()
    }

    /// The product tokens of known crawlers (say, the AI crawlers list)
    /// that `user-agent` values are compared with (default: none).
    pub fn known_agents<I, S>(mut self, tokens: I) -> Linter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.known = tokens.into_iter().map(Into::into).collect();
        self
    }

    /// The most work one proof does before the rule is reported
    /// `undecided`: automaton positions stepped, summed over the product
    /// states searched and the octets tried (default 10,000,000, about
    /// 50 ms).
    pub fn work_limit(mut self, steps: u64) -> Linter {
        self.work_limit = steps;
        self
    }

    /// The proof budget ([`Linter::work_limit`]).
    pub fn get_work_limit(&self) -> u64 {
        self.work_limit
    }

    /// Lints a robots.txt: compiled in memory for every agent with
    /// `config` (dialect and parse limit), then linted as a rules file,
    /// with its `user-agent` lines, which a rules file does not keep.
    ///
    /// # Errors
    ///
    /// As [`Compiler::compile`](crate::Compiler::compile): a body that is
    /// not text, or too large for the format.
    pub fn lint_robots_txt(
        &self,
        body: &[u8],
        config: &Config,
    ) -> Result<Vec<Finding>, BuildError> {
        let kind = InputKind::of(body);
        if !kind.is_text() {
            return Err(BuildError::refused(kind));
        }
        let config = match config.get_agents() {
            Some(_) => Config::new()
                .dialect(config.get_dialect())
                .parse_limit(config.get_parse_limit()),
            None => config.clone(),
        };
        let compiler = crate::compile::Compiler::with_config(config);
        let robots = compiler.parse(body);
        let bytes = AlignedBytes::from(&compiler.compile_parsed(&robots)?[..]);
        let rules = Rules::from_bytes(bytes.as_bytes())
            .expect("a rules file just compiled loads");
        Ok(self.run(&rules, Some(&robots)))
    }

    /// Lints a rules file (or a bundle member): its rules, the agent
    /// table's product tokens, and the parser's diagnostics it stores.
    pub fn lint(&self, rules: &Rules<'_>) -> Vec<Finding> {
        self.run(rules, None)
    }

    fn run(
        &self,
        rules: &Rules<'_>,
        robots: Option<&RobotsTxt>,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        // The merged groups some crawler gets, and those only the empty
        // token reaches (user-agent values that start with no token).
        let mut reachable = BTreeSet::new();
        let mut unreached = BTreeSet::new();
        for a in rules.agents().chain(rules.fallback()) {
            if let Some(g) = a.group() {
                if a.name().is_empty() {
                    unreached.insert(g);
                } else {
                    reachable.insert(g);
                }
            }
        }
        let mut proofs: BTreeMap<u32, RuleProof<'_>> = BTreeMap::new();
        for &g in &reachable {
            self.prove_group(rules, g, &mut proofs);
        }
        for p in proofs.values() {
            out.extend(p.finding(rules.dialect(), self.work_limit));
        }
        match robots {
            Some(robots) => self.agent_lines(robots, &mut out),
            None => {
                self.agent_tokens(rules, &mut out);
                unreachable_rules(rules, &unreached, &proofs, &mut out);
            }
        }
        diagnostics(rules, &mut out);
        usage_lines(rules, &mut out);
        out.sort_by_key(|f| (f.line, f.kind));
        out
    }

    /// Proves, for each rule of merged group `g` not yet known to decide,
    /// whether it decides a path in this group.
    fn prove_group<'a>(
        &self,
        rules: &Rules<'a>,
        g: usize,
        proofs: &mut BTreeMap<u32, RuleProof<'a>>,
    ) {
        let dialect = rules.dialect();
        let list: Vec<RuleInfo<'a>> = rules.group_rules(g).collect();
        let mut cands: Vec<Cand> = Vec::new();
        for (i, r) in list.iter().enumerate() {
            cands.push(Cand::new(i, r, r.pattern().to_vec(), dialect));
            if r.kind() == RuleKind::Allow {
                if let Some(alias) = pattern::index_html_alias(r.pattern()) {
                    cands.push(Cand::new(i, r, alias, dialect));
                }
            }
        }
        let robots_txt = robots_txt_nfas(dialect);
        // Candidates by literal prefix: those whose prefix is a prefix of
        // another's, or extends it, are the only ones whose languages can
        // meet.
        let mut by_lit: Vec<usize> = (0..cands.len()).collect();
        by_lit.sort_by(|&a, &b| cands[a].lit.cmp(&cands[b].lit));
        let mut exact: HashMap<&[u8], Vec<usize>> = HashMap::new();
        for (i, c) in cands.iter().enumerate() {
            exact.entry(&c.lit[..]).or_default().push(i);
        }
        let mut lit_lens: Vec<usize> =
            cands.iter().map(|c| c.lit.len()).collect();
        lit_lens.sort_unstable();
        lit_lens.dedup();
        // The first rule of each (kind, pattern), for duplicates and
        // cancelling pairs.
        let mut first: HashMap<(RuleKind, &[u8]), u32> = HashMap::new();
        for r in &list {
            let e = first.entry((r.kind(), r.pattern())).or_insert(r.line());
            *e = (*e).min(r.line());
        }
        for (i, r) in list.iter().enumerate() {
            let proof = proofs.entry(r.line()).or_insert_with(|| RuleProof {
                rule: *r,
                outcome: Outcome::Never,
                witness: None,
                groups: 0,
                by: BTreeSet::new(),
                robots_txt: false,
                duplicate_of: Some(u32::MAX),
                cancelled_by: Some(u32::MAX),
            });
            if proof.outcome == Outcome::Decides {
                continue;
            }
            proof.groups += 1;
            let dup = first[&(r.kind(), r.pattern())];
            proof.duplicate_of = proof
                .duplicate_of
                .and_then(|d| (dup < r.line()).then_some(d.min(dup)));
            let allow = first.get(&(RuleKind::Allow, r.pattern()));
            proof.cancelled_by =
                proof.cancelled_by.and_then(|d| match (r.kind(), allow) {
                    (RuleKind::Disallow, Some(&a)) => Some(d.min(a)),
                    _ => None,
                });
            let mut group_outcome = Outcome::Never;
            for (ci, c) in
                cands.iter().enumerate().filter(|(_, c)| c.rule == i)
            {
                let mut beaters: Vec<usize> = Vec::new();
                let mut consider = |d: usize| {
                    if d != ci && cands[d].beats(c) {
                        beaters.push(d);
                    }
                };
                let shorter =
                    lit_lens.iter().take_while(|&&k| k <= c.lit.len());
                for &k in shorter {
                    for &d in exact.get(&c.lit[..k]).into_iter().flatten() {
                        consider(d);
                    }
                }
                let from = by_lit.partition_point(|&d| cands[d].lit < c.lit);
                for &d in &by_lit[from..] {
                    if !cands[d].lit.starts_with(&c.lit) {
                        break;
                    }
                    if cands[d].lit.len() > c.lit.len() {
                        consider(d);
                    }
                }
                let beaters_of: Vec<&Cand> =
                    beaters.iter().map(|&d| &cands[d]).collect();
                match self.settle(c, &beaters_of, &robots_txt, dialect) {
                    Proof::Decides(path) => {
                        group_outcome = Outcome::Decides;
                        proof.witness = Some((g, path));
                        break;
                    }
                    Proof::Undecided => group_outcome = Outcome::Undecided,
                    Proof::Never(who) => {
                        for w in who {
                            match beaters.get(w - 1) {
                                Some(&d) => {
                                    proof
                                        .by
                                        .insert(list[cands[d].rule].line());
                                }
                                None => proof.robots_txt = true,
                            }
                        }
                    }
                }
            }
            proof.outcome = match (proof.outcome, group_outcome) {
                (_, Outcome::Decides) => Outcome::Decides,
                (Outcome::Undecided, _) | (_, Outcome::Undecided) => {
                    Outcome::Undecided
                }
                _ => Outcome::Never,
            };
        }
    }

    /// Whether candidate `c` decides a path that none of `beaters` (nor
    /// rfc9309's `/robots.txt`) matches: first on the paths its pattern
    /// writes out, then by a proof that one beater alone covers it, then
    /// by the search of the whole product. `Proof::Never` gives indices
    /// into `beaters` plus one (past them: `/robots.txt`).
    fn settle(
        &self,
        c: &Cand,
        beaters: &[&Cand],
        robots_txt: &[Nfa],
        dialect: Dialect,
    ) -> Proof {
        if let Some(path) = written_witness(c, beaters, dialect) {
            return Proof::Decides(path);
        }
        // A rule covers `c` alone only if its literal prefix starts every
        // path `c` matches (every path starts with `/`).
        let starts = |d: &Cand| {
            c.lit.starts_with(&d.lit) || (c.lit.is_empty() && d.lit == b"/")
        };
        let mut covers: Vec<usize> =
            (0..beaters.len()).filter(|&i| starts(beaters[i])).collect();
        // Outright: the same pattern, or a plain prefix (no `*`, no `$`),
        // which matches every path that starts with it.
        for &i in &covers {
            let d = beaters[i];
            let plain = !d.nfa.anchored && !d.nfa.toks.contains(&Tok::Star);
            if d.pat == c.pat || plain {
                return Proof::Never(vec![i + 1]);
            }
        }
        // Then by search, the most specific first; such products are
        // small: a tenth of the budget each.
        covers.sort_by_key(|&i| std::cmp::Reverse(beaters[i].lit.len()));
        for i in covers {
            let mut nfas = vec![&c.nfa, &beaters[i].nfa];
            nfas.extend(robots_txt);
            if let Proof::Never(who) = prove(&nfas, self.work_limit / 10) {
                let n = beaters.len();
                let who = who
                    .iter()
                    .map(|&w| if w == 1 { i + 1 } else { n + w - 1 });
                return Proof::Never(who.collect());
            }
        }
        let mut nfas = vec![&c.nfa];
        nfas.extend(beaters.iter().map(|d| &d.nfa));
        nfas.extend(robots_txt);
        prove(&nfas, self.work_limit)
    }

    /// The `user-agent` lines of a parsed robots.txt: unreachable groups,
    /// values without a product token, look-alikes, values with more than
    /// a token.
    fn agent_lines(&self, robots: &RobotsTxt, out: &mut Vec<Finding>) {
        for group in robots.groups() {
            let agents = group.agents();
            let reached =
                agents.iter().any(|a| a.is_global() || !a.token().is_empty());
            if !reached {
                let (first, last) =
                    (agents[0].line(), agents[agents.len() - 1].line());
                let lines = match first == last {
                    true => format!("user-agent line {first}"),
                    false => format!("user-agent lines {first}-{last}"),
                };
                let rules =
                    group.rules().iter().filter(|r| !r.pattern().is_empty());
                let n = rules.count();
                out.push(Finding::new(
                    first,
                    LintKind::Unreachable,
                    format!(
                        "the group of {lines} applies to no crawler: no value \
                         is '*' or starts with a product token (letters, '-', \
                         '_'), so its {} never apply",
                        counted(n, "rule")
                    ),
                ));
            }
            for a in agents.iter().filter(|a| !a.is_global()) {
                if let Some(f) =
                    self.agent_value(a.line(), a.value(), a.token(), reached)
                {
                    out.push(f);
                }
            }
        }
    }

    /// One `user-agent` value with its product token.
    fn agent_value(
        &self,
        line: u32,
        value: &[u8],
        token: &[u8],
        reached: bool,
    ) -> Option<Finding> {
        let shown = lossy(value);
        let read = lossy(token);
        let mut f = match self.lookalike(value, token) {
            Some(known) if token.is_empty() => Finding::new(
                line,
                LintKind::Lookalike,
                format!(
                    "user-agent '{shown}' names no product token (a token \
                     starts with a letter, '-' or '_'), so {known} does not \
                     read this group"
                ),
            ),
            Some(known) if token != value => Finding::new(
                line,
                LintKind::Lookalike,
                format!(
                    "user-agent '{shown}' is read as the product token \
                     '{read}', not '{known}', so {known} does not read this \
                     line"
                ),
            ),
            Some(known) => Finding::new(
                line,
                LintKind::Lookalike,
                format!(
                    "user-agent '{shown}' looks like the crawler token \
                     '{known}' but is not it (tokens are compared whole, \
                     ignoring case only), so {known} does not read this line"
                ),
            ),
            // An unreachable group's lines are its one finding.
            None if token.is_empty() && !reached => return None,
            None if token.is_empty() => Finding::new(
                line,
                LintKind::NoToken,
                format!(
                    "user-agent '{shown}' names no crawler: a product token \
                     starts with a letter, '-' or '_'"
                ),
            ),
            None if token != value => Finding::new(
                line,
                LintKind::NotAToken,
                format!(
                    "user-agent '{shown}' is read as the product token \
                     '{read}' (RFC 9309 section 2.2.1: a token is letters, \
                     '-' and '_'; other parsers may read the value \
                     differently)"
                ),
            ),
            None => return None,
        };
        f.similar = match f.kind {
            LintKind::Lookalike => {
                self.lookalike(value, token).map(String::from)
            }
            _ => None,
        };
        f.agent = Some(value.to_vec());
        Some(f)
    }

    /// The agent table of a rules file, which keeps product tokens only
    /// (lower-cased) and no line numbers.
    fn agent_tokens(&self, rules: &Rules<'_>, out: &mut Vec<Finding>) {
        for a in rules.agents() {
            let name = a.name();
            if name.is_empty() {
                continue;
            }
            if let Some(known) = self.lookalike(name, name) {
                let mut f = Finding::new(
                    0,
                    LintKind::Lookalike,
                    format!(
                        "a group names the agent '{}', which looks like the \
                         crawler token '{known}' but is not it, so {known} \
                         does not read that group (a rules file keeps no \
                         user-agent lines)",
                        lossy(name)
                    ),
                );
                f.agent = Some(name.to_vec());
                f.similar = Some(known.to_string());
                out.push(f);
            }
        }
    }

    /// The known token that `value` (read as product token `token`) looks
    /// like but is not, if any:
    ///
    /// - none if `token` is a known token (case-insensitively);
    /// - squashed (lower-cased, only ASCII letters and digits kept), the
    ///   token or the value's leading run of letters, digits, `-`, `_`
    ///   and spaces equals the known token squashed (`GPT-Bot`,
    ///   `Google Extended`);
    /// - a word of the value (a run of letters, digits, `-`, `_`) is a
    ///   distinctive known token: at least 5 octets, and with `bot`, a
    ///   digit, `-`, `_` or a capital after its first letter
    ///   (`Mozilla/5.0 (compatible; GPTBot/1.0)`, read as `Mozilla`; the
    ///   list's `Spider` is no such token, `Sogou web spider` is not
    ///   about it);
    /// - squashed, the token is the known token with two neighbours
    ///   swapped (`GTPBot`), for a known token of at least 6 letters and
    ///   digits; or one edit from it (an insertion, deletion or
    ///   substitution: `acebookexternalhit`) for one of at least 10,
    ///   unless both are variants of one family (the same first `-` or
    ///   `_` segment, as `SemrushBot-SA` and `SemrushBot-SWA` are).
    ///
    /// (Shorter tokens one edit apart are often other crawlers: on the
    /// 74,637-host corpus, `snapbot` and `ShapBot`, `xspider` and
    /// `Spider`, `antibot` and `Andibot`.)
    fn lookalike(&self, value: &[u8], token: &[u8]) -> Option<&str> {
        let known = &self.known;
        if known.iter().any(|k| k.as_bytes().eq_ignore_ascii_case(token)) {
            return None;
        }
        let lead_len = value
            .iter()
            .take_while(|&&b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' ')
            })
            .count();
        let (t, lead) = (squash(token), squash(&value[..lead_len]));
        let same = known.iter().find(|k| {
            let k = squash(k.as_bytes());
            !k.is_empty() && (k == t || k == lead)
        });
        if let Some(k) = same {
            return Some(k);
        }
        let word =
            |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
        let words: Vec<&[u8]> =
            value.split(|b| !word(b)).filter(|w| !w.is_empty()).collect();
        let distinctive = |k: &str| {
            let k = k.as_bytes();
            k.len() >= 5
                && (k.to_ascii_lowercase().windows(3).any(|w| w == b"bot")
                    || k[1..].iter().any(|&b| {
                        b.is_ascii_uppercase()
                            || b.is_ascii_digit()
                            || matches!(b, b'-' | b'_')
                    }))
        };
        let named = known.iter().find(|k| {
            distinctive(k)
                && words.iter().any(|w| w.eq_ignore_ascii_case(k.as_bytes()))
        });
        if let Some(k) = named {
            return Some(k);
        }
        if t.is_empty() {
            return None;
        }
        let family = |s: &[u8]| {
            let mut parts = s.split(|&b| b == b'-' || b == b'_');
            let first = parts.next().unwrap_or_default().to_ascii_lowercase();
            (first, parts.next().is_some())
        };
        let (t_family, t_parts) = family(token);
        known
            .iter()
            .find(|k| {
                let sk = squash(k.as_bytes());
                let (k_family, k_parts) = family(k.as_bytes());
                let variants = t_parts && k_parts && t_family == k_family;
                (sk.len() >= 6 && swapped(&t, &sk))
                    || (sk.len() >= 10 && !variants && one_edit(&t, &sk))
            })
            .map(String::as_str)
    }
}

/// Where a rule stands after the groups seen so far.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Outcome {
    Decides,
    Never,
    Undecided,
}

/// A rule's proof over every merged group that holds it.
struct RuleProof<'a> {
    rule: RuleInfo<'a>,
    outcome: Outcome,
    /// When it decides: a merged group and a path it decides there.
    witness: Option<(usize, Vec<u8>)>,
    /// The merged groups it was proved in.
    groups: usize,
    /// The lines of the rules that beat it where it matches.
    by: BTreeSet<u32>,
    /// Whether `/robots.txt` (rfc9309, always allowed) beat it somewhere.
    robots_txt: bool,
    /// An earlier rule of the same kind and pattern in every group
    /// (`u32::MAX`: none seen yet; `None`: not in some group).
    duplicate_of: Option<u32>,
    /// An Allow of the same pattern in every group (for a Disallow).
    cancelled_by: Option<u32>,
}

impl RuleProof<'_> {
    fn finding(&self, dialect: Dialect, limit: u64) -> Option<Finding> {
        let r = &self.rule;
        let text = rule_text(r);
        let every = match self.groups {
            1 => "",
            _ => " in any agent's group",
        };
        let (kind, message, by) = match self.outcome {
            Outcome::Decides => return None,
            Outcome::Undecided => (
                LintKind::Undecided,
                format!(
                    "whether '{text}' decides any path is undecided: its \
                     proof went past the budget of product states"
                ),
                Vec::new(),
            ),
            Outcome::Never => {
                let nothing = {
                    let nfa = Nfa::new(r.pattern(), dialect);
                    let mut nfas = vec![&nfa];
                    let robots = robots_txt_nfas(dialect);
                    nfas.extend(robots.iter());
                    let alias = pattern::index_html_alias(r.pattern())
                        .filter(|_| r.kind() == RuleKind::Allow)
                        .map(|a| Nfa::new(&a, dialect));
                    let never = |nfas: &[&Nfa]| {
                        matches!(prove(nfas, limit), Proof::Never(_))
                    };
                    never(&nfas)
                        && alias.as_ref().is_none_or(|a| {
                            nfas[0] = a;
                            never(&nfas)
                        })
                };
                let by: Vec<u32> = self.by.iter().copied().collect();
                match (nothing, self.duplicate_of, self.cancelled_by) {
                    (true, _, _) => {
                        let p = r.pattern();
                        let why = if !p.starts_with(b"/")
                            && !p.starts_with(b"*")
                        {
                            not_a_path(r.value())
                        } else if dialect == Dialect::Rfc9309
                            && pattern::literal_prefix(p, dialect)
                                .starts_with(b"/robots.txt")
                        {
                            "only /robots.txt, which RFC 9309 always allows, \
                             could match it"
                                .to_string()
                        } else {
                            "no path can match it".to_string()
                        };
                        (
                            LintKind::MatchesNothing,
                            format!("'{text}' matches no path: {why}"),
                            Vec::new(),
                        )
                    }
                    (_, Some(d), _) if d != u32::MAX => (
                        LintKind::Duplicate,
                        format!(
                            "'{text}' repeats the rule on line {d} and never \
                             decides a path{every}"
                        ),
                        vec![d],
                    ),
                    (_, _, Some(a)) if a != u32::MAX => (
                        LintKind::Cancelled,
                        format!(
                            "'{text}' never decides a path{every}: the Allow \
                             on line {a} has the same pattern, and Allow wins \
                             ties"
                        ),
                        vec![a],
                    ),
                    _ => {
                        // `/robots.txt` is named only when no rule is.
                        let whom = match (by.is_empty(), self.robots_txt) {
                            (true, true) => {
                                "/robots.txt, always allowed".to_string()
                            }
                            _ => lines(&by),
                        };
                        (
                            LintKind::Shadowed,
                            format!(
                                "'{text}' never decides a path{every}: every \
                                 path it matches is decided by a rule of \
                                 higher precedence ({whom})"
                            ),
                            by,
                        )
                    }
                }
            }
        };
        let mut f = Finding::new(r.line(), kind, message);
        f.rule = Some((r.kind(), r.value().to_vec()));
        f.by = by;
        Some(f)
    }
}

/// Why a value that starts with neither `/` nor `*` matches nothing,
/// and what to write instead: a URL's path, or the value after `/`.
fn not_a_path(value: &[u8]) -> String {
    let url = value
        .windows(3)
        .position(|w| w == b"://")
        .filter(|&at| value[..at].iter().all(u8::is_ascii_alphabetic));
    if let Some(at) = url {
        let rest = &value[at + 3..];
        let path = rest
            .iter()
            .position(|&b| b == b'/')
            .map_or(&b"/"[..], |p| &rest[p..]);
        return format!(
            "a pattern is matched against the path, not the URL (write \
             '{}')",
            lossy(path)
        );
    }
    format!("a path always starts with '/' (write '/{}')", lossy(value))
}

/// `line 3`, `lines 3, 5 and 9`, `lines 3, 5, 9, 12, 20 and 4 more`.
fn lines(lines: &[u32]) -> String {
    const SHOWN: usize = 5;
    let list: Vec<String> =
        lines.iter().take(SHOWN).map(u32::to_string).collect();
    match lines.len() {
        0 => String::new(),
        1 => format!("line {}", list[0]),
        n if n <= SHOWN => {
            format!("lines {} and {}", list[..n - 1].join(", "), list[n - 1])
        }
        n => format!("lines {} and {} more", list.join(", "), n - SHOWN),
    }
}

/// `1 rule`, `2 rules`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `Disallow: /a` as written.
fn rule_text(r: &RuleInfo<'_>) -> String {
    let kind = match r.kind() {
        RuleKind::Allow => "Allow",
        RuleKind::Disallow => "Disallow",
    };
    format!("{kind}: {}", lossy(r.value()))
}

fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Lower-cased ASCII letters and digits only.
fn squash(s: &[u8]) -> Vec<u8> {
    s.iter()
        .filter(|b| b.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect()
}

/// Whether `a` is `b` with two neighbouring octets swapped.
fn swapped(a: &[u8], b: &[u8]) -> bool {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a.len() == b.len()
        && pre + 1 < a.len()
        && a[pre] == b[pre + 1]
        && a[pre + 1] == b[pre]
        && a[pre + 2..] == b[pre + 2..]
}

/// Whether `a` and `b` differ by exactly one insertion, deletion,
/// substitution or transposition of adjacent octets.
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return false;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let pre = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        let rest = |from: usize| short[from..] == long[from..];
        rest(pre + 1)
            || (pre + 1 < short.len()
                && short[pre] == long[pre + 1]
                && short[pre + 1] == long[pre]
                && rest(pre + 2))
    } else {
        short[pre..] == long[pre + 1..]
    }
}

/// The rules of groups no crawler reaches (a rules file: the group of
/// the empty product token), reported once per rule that no reachable
/// group holds.
fn unreachable_rules(
    rules: &Rules<'_>,
    unreached: &BTreeSet<usize>,
    proofs: &BTreeMap<u32, RuleProof<'_>>,
    out: &mut Vec<Finding>,
) {
    let mut seen = BTreeSet::new();
    for &g in unreached {
        for r in rules.group_rules(g) {
            if proofs.contains_key(&r.line()) || !seen.insert(r.line()) {
                continue;
            }
            let mut f = Finding::new(
                r.line(),
                LintKind::Unreachable,
                format!(
                    "'{}' is in a group that applies to no crawler: its \
                     user-agent values start with no product token",
                    rule_text(&r)
                ),
            );
            f.rule = Some((r.kind(), r.value().to_vec()));
            out.push(f);
        }
    }
}

/// The parser's diagnostics that say a line was not understood, or only
/// leniently; a byte-order mark and records ignored for matching
/// (crawl-delay, ...) are not findings.
fn diagnostics(rules: &Rules<'_>, out: &mut Vec<Finding>) {
    for d in rules.diagnostics() {
        let text = lossy(d.text());
        if let Some((kind, message)) = diagnostic(&text) {
            out.push(Finding::new(d.line(), kind, message));
        }
    }
}

/// `Content-Usage` lines (docs/SEMANTICS.md section 4c) whose expression
/// is not a Structured Fields Dictionary: every key unknown. (One outside
/// any group is the parser's diagnostic, a rule before any user-agent
/// line; a damaged side section is left to `inspect`, which reports it.)
fn usage_lines(rules: &Rules<'_>, out: &mut Vec<Finding>) {
    let Ok(lines) = rules.other_lines() else { return };
    for l in lines {
        let usage = l.key().eq_ignore_ascii_case(b"content-usage");
        if !usage || l.group().is_none() {
            continue;
        }
        if !UsageRule::new(l.line(), l.value(), rules.dialect()).is_parsed() {
            out.push(Finding::new(
                l.line(),
                LintKind::NotUnderstood,
                format!(
                    "'Content-Usage: {}': the expression is not an RFC \
                     9651 dictionary, so every usage key is unknown (write \
                     e.g. 'train-ai=n, search=y': lower-case keys, y or n)",
                    lossy(l.value())
                ),
            ));
        }
    }
}

/// A stored diagnostic's text (`DiagnosticKind`'s `Display`) as a
/// finding, `None` for those that are not.
fn diagnostic(text: &str) -> Option<(LintKind, String)> {
    let kind = if text.starts_with("byte-order mark")
        || text.ends_with("record ignored for matching")
    {
        return None;
    } else if text.starts_with("unknown key '") {
        return Some((
            LintKind::NotUnderstood,
            format!("{text}: the parser does not know the key"),
        ));
    } else if text.starts_with("no key/value separator") {
        LintKind::NotUnderstood
    } else if text.starts_with("rule before any user-agent line") {
        return Some((
            LintKind::Unreachable,
            "a rule before any user-agent line belongs to no group, so no \
             crawler follows it"
                .to_string(),
        ));
    } else if text.starts_with("key '") || text.starts_with("no colon") {
        return Some((
            LintKind::Lenient,
            format!(
                "{text}, as Google's parser does; stricter parsers ignore \
                 the line"
            ),
        ));
    } else if text.starts_with("line of ")
        || text.starts_with("NUL octet")
        || text.starts_with("parse limit")
    {
        LintKind::Cut
    } else {
        LintKind::Parser
    };
    Some((kind, text.to_string()))
}

/// A candidate of a merged group: a rule's pattern or its index.html
/// alias.
struct Cand {
    /// The rule's index in the group.
    rule: usize,
    kind: RuleKind,
    /// The precedence: the normalised pattern's length.
    len: usize,
    line: u32,
    /// The octets every path it matches starts with.
    lit: Vec<u8>,
    /// The normalised pattern (or alias).
    pat: Vec<u8>,
    nfa: Nfa,
}

impl Cand {
    fn new(
        rule: usize,
        r: &RuleInfo<'_>,
        pat: Vec<u8>,
        dialect: Dialect,
    ) -> Cand {
        Cand {
            rule,
            kind: r.kind(),
            len: pat.len(),
            line: r.line(),
            lit: pattern::literal_prefix(&pat, dialect),
            nfa: Nfa::new(&pat, dialect),
            pat,
        }
    }

    /// Whether `self`, matching a path `c` matches, makes another rule
    /// than `c`'s decide it (see the module docs).
    fn beats(&self, c: &Cand) -> bool {
        if self.rule == c.rule {
            return false;
        }
        match (self.kind, c.kind) {
            (a, b) if a == b => {
                self.len > c.len || (self.len == c.len && self.line < c.line)
            }
            (RuleKind::Allow, _) => self.len >= c.len,
            (RuleKind::Disallow, _) => self.len > c.len,
        }
    }
}

/// A pattern's position automaton: positions `0..=toks.len()`, a `*`
/// token a self-loop that may also be skipped; the last position accepts,
/// and is absorbing unless the pattern is anchored.
#[derive(Debug)]
struct Nfa {
    toks: Vec<Tok>,
    anchored: bool,
}

impl Nfa {
    fn new(pattern: &[u8], dialect: Dialect) -> Nfa {
        let (toks, anchored) = pattern::tokens(pattern, dialect);
        Nfa { toks, anchored }
    }
}

/// rfc9309's always-allowed `/robots.txt` and `/robots.txt?...`, which
/// beat every rule; none in the google dialect.
fn robots_txt_nfas(dialect: Dialect) -> Vec<Nfa> {
    match dialect {
        Dialect::Google => Vec::new(),
        Dialect::Rfc9309 => {
            [(&b"/robots.txt"[..], true), (b"/robots.txt?", false)]
                .iter()
                .map(|&(p, anchored)| Nfa {
                    toks: p.iter().map(|&b| Tok::Byte(b)).collect(),
                    anchored,
                })
                .collect()
        }
    }
}

/// The octets the automata name (and `/`, which starts every path).
fn named_octets<'n>(nfas: impl Iterator<Item = &'n Nfa>) -> [bool; 256] {
    let mut named = [false; 256];
    named[usize::from(b'/')] = true;
    for n in nfas {
        for t in &n.toks {
            if let Tok::Byte(b) = t {
                named[usize::from(*b)] = true;
            }
        }
    }
    named
}

/// An octet no automaton names (every such octet moves every automaton
/// alike): a digit or letter if one is free, which a URL path keeps as it
/// is; never `%`, `?` or `#`.
fn free_octet(named: &[bool; 256]) -> Option<u8> {
    (b'0'..=b'9')
        .chain(b'a'..=b'z')
        .chain(b'A'..=b'Z')
        .chain(0..=255)
        .find(|&b| !named[usize::from(b)] && !matches!(b, b'%' | b'?' | b'#'))
}

/// A path that `c` decides against `beaters`, among those its pattern
/// writes out: its literal octets, each `*` as nothing or as an octet no
/// pattern names, with such an octet appended when it is not anchored
/// (and `/` put first if it does not start the pattern). Each is checked
/// with the engine's direct matcher.
fn written_witness(
    c: &Cand,
    beaters: &[&Cand],
    dialect: Dialect,
) -> Option<Vec<u8>> {
    let nfas = std::iter::once(&c.nfa).chain(beaters.iter().map(|d| &d.nfa));
    let free = free_octet(&named_octets(nfas));
    let mut probes: Vec<Vec<u8>> = Vec::new();
    for fill in [None, free] {
        let mut p: Vec<u8> = Vec::new();
        for t in &c.nfa.toks {
            match t {
                Tok::Byte(b) => p.push(*b),
                Tok::Star => p.extend(fill),
            }
        }
        if p.first() != Some(&b'/') {
            p.insert(0, b'/');
        }
        if let (false, Some(z)) = (c.nfa.anchored, free) {
            probes.push([&p[..], &[z]].concat());
        }
        probes.push(p);
    }
    probes.into_iter().find(|p| {
        pattern::matches(&c.pat, dialect, p)
            && !beaters.iter().any(|d| pattern::matches(&d.pat, dialect, p))
            && !(dialect == Dialect::Rfc9309
                && crate::matcher::is_robots_txt(p))
    })
}

/// What [`prove`] found.
#[derive(Debug, Eq, PartialEq)]
enum Proof {
    /// A path the candidate matches and no beater does.
    Decides(Vec<u8>),
    /// None: the indices (into the automata, 1..) of the beaters that
    /// match some path the candidate matches.
    Never(Vec<usize>),
    /// Past the work limit.
    Undecided,
}

/// Searches the product of `nfas` (the candidate first, then the
/// automata that beat it) for a path starting with `/` that the
/// candidate matches and none of the others does, breadth first (so a
/// witness is a shortest one), stepping at most `limit` automaton
/// positions (each product state is stepped once per alphabet octet; a
/// stored state counts its positions too).
fn prove(nfas: &[&Nfa], limit: u64) -> Proof {
    // A product state is the sorted set of its automata's positions,
    // numbered globally: automaton `i` owns `offset[i]..=end[i]`.
    let mut offset = Vec::with_capacity(nfas.len());
    let mut owner: Vec<u32> = Vec::new();
    for (i, n) in nfas.iter().enumerate() {
        offset.push(owner.len() as u32);
        owner.extend(std::iter::repeat_n(i as u32, n.toks.len() + 1));
    }
    let end = |i: usize| offset[i] + nfas[i].toks.len() as u32;
    let c_end = end(0);
    // Position `pos` of automaton `i` and the `*` it may skip.
    let enter = |out: &mut Vec<u32>, i: usize, mut pos: usize| loop {
        out.push(offset[i] + pos as u32);
        if nfas[i].toks.get(pos) != Some(&Tok::Star) {
            break;
        }
        pos += 1;
    };
    let step = |state: &[u32], b: u8, out: &mut Vec<u32>| {
        out.clear();
        for &g in state {
            let i = owner[g as usize] as usize;
            let pos = (g - offset[i]) as usize;
            let n = nfas[i];
            match n.toks.get(pos) {
                None if !n.anchored => out.push(g),
                None => {}
                Some(Tok::Star) => enter(out, i, pos),
                Some(&Tok::Byte(x)) if x == b => enter(out, i, pos + 1),
                Some(_) => {}
            }
        }
        out.sort_unstable();
        out.dedup();
    };
    let named = named_octets(nfas.iter().copied());
    let alphabet: Vec<u8> = (0..=255u8)
        .filter(|&b| named[usize::from(b)])
        .chain(free_octet(&named))
        .collect();

    let mut start = Vec::new();
    for i in 0..nfas.len() {
        enter(&mut start, i, 0);
    }
    start.sort_unstable();
    let mut first = Vec::new();
    step(&start, b'/', &mut first);
    // Each state's parent and the octet that led to it, for the witness.
    // Each state stored once, found by its hash (FxHash's multiply-rotate:
    // the work limit bounds the effort whatever the keys).
    let hash = |s: &[u32]| {
        s.iter().fold(s.len() as u64, |h, &x| {
            (h.rotate_left(5) ^ u64::from(x))
                .wrapping_mul(0x517c_c1b7_2722_0a95)
        })
    };
    let mut states: Vec<Vec<u32>> = vec![first];
    let mut parent: Vec<(usize, u8)> = vec![(usize::MAX, b'/')];
    let mut index: HashTable<usize> = HashTable::new();
    index.insert_unique(hash(&states[0]), 0, |&i| hash(&states[i]));
    let mut queue = VecDeque::from([0usize]);
    let mut by = vec![false; nfas.len()];
    let mut next = Vec::new();
    let mut work: u64 = 0;
    while let Some(k) = queue.pop_front() {
        let state = &states[k];
        // The candidate's positions come first (the lowest numbers).
        let alive = state.first().is_some_and(|&g| owner[g as usize] == 0);
        if !alive {
            continue;
        }
        let c_accepts = state.contains(&c_end);
        let mut beaten = false;
        let mut covered = false;
        for &g in state {
            let i = owner[g as usize] as usize;
            if i > 0 && g == end(i) {
                beaten = true;
                if !nfas[i].anchored {
                    covered = true;
                    by[i] = true;
                } else if c_accepts {
                    by[i] = true;
                }
            }
        }
        if covered {
            // An unanchored beater has matched: it matches every
            // extension too.
            continue;
        }
        if c_accepts && !beaten {
            let mut path = Vec::new();
            let mut at = k;
            while at != usize::MAX {
                path.push(parent[at].1);
                at = parent[at].0;
            }
            path.reverse();
            return Proof::Decides(path);
        }
        for &b in &alphabet {
            work += states[k].len() as u64;
            if work > limit {
                return Proof::Undecided;
            }
            step(&states[k], b, &mut next);
            if next.first().is_none_or(|&g| owner[g as usize] != 0) {
                continue;
            }
            let h = hash(&next);
            if index.find(h, |&i| states[i] == next).is_some() {
                continue;
            }
            work += next.len() as u64;
            states.push(next.clone());
            index.insert_unique(h, states.len() - 1, |&i| hash(&states[i]));
            parent.push((k, b));
            queue.push_back(states.len() - 1);
        }
    }
    Proof::Never((1..nfas.len()).filter(|&i| by[i]).collect())
}

#[cfg(test)]
mod tests;
