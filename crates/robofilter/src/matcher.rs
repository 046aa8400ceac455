//! A loaded group's decision procedure for one agent: verdicts (by the
//! verdict DFA, the split group's parts, or the direct matcher), their
//! explanations, and whether the group blocks a whole site.

use crate::dfa::{Dfa, decide_lanes, decide_lanes_one};
use crate::dialect::Dialect;
use crate::direct::Pairs;
use crate::rules::{
    DirectIndex, Engine, EngineKind, Explanation, Matcher, Reason, RuleInfo,
    Rules,
};
use crate::url::MatchPath;
use crate::verdict::{GroupSource, RuleKind, Verdict};
use crate::{normalize, pattern, wire};

impl<'a> Matcher<'a> {
    /// Decides a URL (scheme and authority are ignored; the path is read
    /// as the rules' dialect reads it, see [`MatchPath::parse`]).
    #[inline]
    pub fn decide(&self, url: &[u8]) -> Verdict {
        self.decide_path(MatchPath::parse(url, self.rules.dialect))
    }

    /// The dialect of the rules this matcher decides by.
    #[inline]
    pub fn dialect(&self) -> Dialect {
        self.rules.dialect
    }

    /// Whether the URL may be fetched.
    #[inline]
    pub fn is_allowed(&self, url: &[u8]) -> bool {
        self.decide(url).is_allow()
    }

    /// Decides an already extracted path.
    #[inline(always)]
    pub fn decide_path(&self, path: MatchPath<'_>) -> Verdict {
        self.decide_parts(path.has_lead_slash(), path.tail())
    }

    /// [`Matcher::decide_path`] with the path as its flag and its slice,
    /// which are passed in registers: a `MatchPath` (three words) passed
    /// whole goes through the stack, where reading it back as one vector
    /// after word stores stalls store-to-load forwarding on every URL
    /// (`perf annotate`; the lab notes in docs/records).
    ///
    /// A verdict DFA, the usual engine, is walked inline; the others are
    /// a call. Out of line, the call cost `filter` 2 % of its CPU time on
    /// one host although it saved instructions (the lab notes in docs/records).
    #[inline(always)]
    fn decide_parts(&self, lead_slash: bool, tail: &[u8]) -> Verdict {
        match &self.engine {
            Engine::Dfa(dfa) => dfa.decide(
                MatchPath::from_parts(lead_slash, tail),
                self.rules.dialect,
            ),
            _ => self.decide_other(lead_slash, tail),
        }
    }

    /// [`Matcher::decide_parts`] for any engine; out of line.
    #[inline(never)]
    fn decide_other(&self, lead_slash: bool, tail: &[u8]) -> Verdict {
        let path = MatchPath::from_parts(lead_slash, tail);
        let dialect = self.rules.dialect;
        match &self.engine {
            Engine::Dfa(dfa) => dfa.decide(path, dialect),
            Engine::Split(parts) => {
                // Two to four parts are walked in lockstep: their loads
                // overlap, where one after the other each waits on its own
                // (1.5x per path for three parts). A part walked although
                // the ones before it settled the verdict cannot change it:
                // its scores are at most its highest precedence. More parts
                // are walked one by one, in descending order of precedence,
                // each only while its rules could still change the
                // verdict: with many parts that skip pays more than the
                // overlap (10 parts walked four at a time were 1.1-1.4x
                // slower; docs/records).
                let max = |scores: &[(u32, u32)]| {
                    scores
                        .iter()
                        .fold((0, 0), |(a, d), &(x, y)| (a.max(x), d.max(y)))
                };
                let (allow, disallow) = match parts.len() {
                    2 => max(&Dfa::scores_lockstep(
                        parts.first_chunk::<2>().expect("two parts"),
                        path,
                        dialect,
                    )),
                    3 => max(&Dfa::scores_lockstep(
                        parts.first_chunk::<3>().expect("three parts"),
                        path,
                        dialect,
                    )),
                    4 => max(&Dfa::scores_lockstep(
                        parts.first_chunk::<4>().expect("four parts"),
                        path,
                        dialect,
                    )),
                    _ => {
                        let (mut allow, mut disallow) = (0, 0);
                        for part in parts {
                            let p = part.max_priority();
                            if p < disallow || p <= allow {
                                break;
                            }
                            let (a, d) = part.scores(path, dialect);
                            allow = allow.max(a);
                            disallow = disallow.max(d);
                        }
                        (allow, disallow)
                    }
                };
                if disallow > allow {
                    Verdict::Disallow
                } else {
                    Verdict::Allow
                }
            }
            Engine::AllowAll => Verdict::Allow,
            Engine::Direct(index) => {
                self.direct_verdict(path, index.as_deref())
            }
        }
    }

    /// Decides many paths at once: `out[i]` gets the verdict of
    /// `paths[i]`, exactly as [`Matcher::decide_path`] gives it.
    ///
    /// With a verdict automaton (the usual engine), the walks of several
    /// paths are interleaved so that their table loads overlap: per path,
    /// 1.2x to 1.4x faster than a loop over [`Matcher::decide_path`] where
    /// walks are long (a wildcard-heavy real file, see docs/records), about
    /// even where paths are decided within a few octets. Other engines
    /// decide the paths one by one. Batches of a few dozen paths are
    /// enough.
    ///
    /// # Panics
    ///
    /// If `out` and `paths` differ in length.
    ///
    /// # Example
    ///
    /// ```
    /// use robofilter::{AlignedBytes, Compiler, MatchPath, Rules, Verdict};
    ///
    /// let bytes = Compiler::new().compile(b"User-agent: *\nDisallow: /a\n")?;
    /// let bytes = AlignedBytes::from(&bytes[..]);
    /// let rules = Rules::from_bytes(bytes.as_bytes())?;
    /// let bot = rules.matcher("bot")?;
    /// let urls: [&[u8]; 3] = [b"http://x/a", b"http://x/b", b"http://x/a/c"];
    /// let paths = urls.map(|u| MatchPath::parse(u, bot.dialect()));
    /// let mut out = [Verdict::Allow; 3];
    /// bot.decide_paths(&paths, &mut out);
    /// assert_eq!(out, [Verdict::Disallow, Verdict::Allow, Verdict::Disallow]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decide_paths(&self, paths: &[MatchPath<'_>], out: &mut [Verdict]) {
        assert_eq!(
            paths.len(),
            out.len(),
            "decide_paths: {} paths but {} verdict slots",
            paths.len(),
            out.len()
        );
        let dialect = self.rules.dialect;
        match &self.engine {
            Engine::Dfa(dfa) => decide_lanes_one(dfa, paths, dialect, out),
            _ => {
                for (v, &p) in out.iter_mut().zip(paths) {
                    *v = self.decide_path(p);
                }
            }
        }
    }

    /// Decides `(matcher, path)` pairs whose matchers may differ (a batch
    /// of a mixed-host frontier, one matcher per host): `out[i]` gets
    /// `items[i].0.decide_path(items[i].1)`. Paths decided by verdict
    /// automata share the interleaved walks of [`Matcher::decide_paths`],
    /// each on its own automaton; the others are decided one by one.
    ///
    /// # Panics
    ///
    /// If `out` and `items` differ in length.
    ///
    /// # Example
    ///
    /// ```
    /// use robofilter::{AlignedBytes, Compiler, MatchPath, Matcher, Rules, Verdict};
    ///
    /// let load = |robots: &[u8]| -> Result<AlignedBytes, Box<dyn std::error::Error>> {
    ///     Ok(AlignedBytes::from(&Compiler::new().compile(robots)?[..]))
    /// };
    /// let (a, b) = (load(b"User-agent: *\nDisallow: /a\n")?, load(b"User-agent: *\nDisallow: /b\n")?);
    /// let (a, b) = (Rules::from_bytes(a.as_bytes())?, Rules::from_bytes(b.as_bytes())?);
    /// let (a, b) = (a.matcher("bot")?, b.matcher("bot")?);
    /// let path = |p: &'static [u8]| MatchPath::from_path(p);
    /// let items = [(&a, path(b"/a")), (&b, path(b"/a")), (&b, path(b"/b"))];
    /// let mut out = [Verdict::Allow; 3];
    /// Matcher::decide_batch(&items, &mut out);
    /// assert_eq!(out, [Verdict::Disallow, Verdict::Allow, Verdict::Disallow]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decide_batch(
        items: &[(&Matcher<'_>, MatchPath<'_>)],
        out: &mut [Verdict],
    ) {
        assert_eq!(
            items.len(),
            out.len(),
            "decide_batch: {} items but {} verdict slots",
            items.len(),
            out.len()
        );
        let mut any_dfa = false;
        for (v, &(m, p)) in out.iter_mut().zip(items) {
            match m.engine {
                Engine::Dfa(_) => any_dfa = true,
                _ => *v = m.decide_path(p),
            }
        }
        if any_dfa {
            let dfas = items.iter().enumerate().filter_map(|(i, &(m, p))| {
                match &m.engine {
                    Engine::Dfa(dfa) => Some((i, *dfa, p, m.rules.dialect)),
                    _ => None,
                }
            });
            decide_lanes(dfas, out);
        }
    }

    /// Whether the agent is blocked entirely: every path is disallowed
    /// except those starting with `/robots.txt` (the file itself, with any
    /// query, and in the google dialect an `Allow: /robots.txt` prefix
    /// rule's other paths).
    ///
    /// Decided from the compiled rules over all octet strings starting
    /// with `/`, never from the rule text alone: a verdict DFA is searched
    /// exhaustively for an allow-labelled state reachable outside
    /// `/robots.txt`. For split and direct groups, a path the rules allow
    /// (tried: `/`, each Allow pattern written out, with an unused octet
    /// appended) proves "no"; a Disallow matching every path that outranks
    /// every Allow proves "yes"; otherwise a split group's parts are
    /// searched together (up to [`BLOCKED_SEARCH_LIMIT`] state tuples).
    /// `None`: not decided within that limit (a direct group none of the
    /// above settles; compile it with a larger `dfa_byte_limit`).
    pub fn blocks_entirely(&self) -> Option<bool> {
        const EXEMPT: &[u8] = b"/robots.txt";
        let Some(g) = self.group() else { return Some(false) };
        match &self.engine {
            Engine::AllowAll => Some(false),
            Engine::Dfa(dfa) => Some(!dfa.allows_some_path_outside(EXEMPT)),
            Engine::Split(parts) => self
                .blocked_by_rules(g, EXEMPT)
                .or_else(|| split_reaches(parts, EXEMPT, true).map(|a| !a)),
            Engine::Direct(_) => self.blocked_by_rules(g, EXEMPT),
        }
    }

    /// Whether the agent may fetch every path: no path at all is
    /// disallowed. Exact for verdict DFAs (a search for a disallow-labelled
    /// state) and split groups (as in [`Matcher::blocks_entirely`]); for a
    /// direct group, a Disallow pattern written out that is disallowed
    /// proves "no", and no Disallow rule at all proves "yes"; `None`
    /// otherwise.
    pub fn allows_everything(&self) -> Option<bool> {
        let Some(g) = self.group() else { return Some(true) };
        match &self.engine {
            Engine::AllowAll => Some(true),
            Engine::Dfa(dfa) => Some(!dfa.reaches(b"", false)),
            Engine::Split(parts) => {
                split_reaches(parts, b"", false).map(|d| !d)
            }
            Engine::Direct(_) => {
                let mut any = false;
                for r in self.rules.group_rules(g) {
                    if r.kind != RuleKind::Disallow {
                        continue;
                    }
                    any = true;
                    let mut p = r.pattern.to_vec();
                    if p.last() == Some(&b'$') {
                        p.pop();
                    }
                    p.retain(|&b| b != b'*');
                    if p.first() != Some(&b'/') {
                        p.insert(0, b'/');
                    }
                    if self.best(&p, None).0 == Verdict::Disallow {
                        return Some(false);
                    }
                }
                (!any).then_some(true)
            }
        }
    }

    /// The rule-level answers of [`Matcher::blocks_entirely`]: a witness
    /// path that is allowed (`Some(false)`), or a universal Disallow that
    /// outranks every Allow (`Some(true)`).
    fn blocked_by_rules(&self, g: usize, exempt: &[u8]) -> Option<bool> {
        let rules: Vec<RuleInfo<'a>> = self.rules.group_rules(g).collect();
        // An octet no pattern holds: appended, it matches no literal.
        let used: Vec<bool> = (0..=255u8)
            .map(|b| rules.iter().any(|r| r.pattern.contains(&b)))
            .collect();
        let free = (b'0'..=b'z')
            .chain(0..=255)
            .find(|&b| !used[usize::from(b)] && b != b'?' && b != b'/');
        let mut probes: Vec<Vec<u8>> = vec![b"/".to_vec()];
        let allows = rules.iter().filter(|r| r.kind == RuleKind::Allow);
        for r in allows {
            let mut written: Vec<u8> = r.pattern.to_vec();
            if written.last() == Some(&b'$') {
                written.pop();
            }
            written.retain(|&b| b != b'*');
            if written.first() != Some(&b'/') {
                written.insert(0, b'/');
            }
            if let Some(alias) = pattern::index_html_alias(r.pattern) {
                probes.push(alias);
            }
            probes.push(written);
        }
        if let Some(z) = free {
            let extended: Vec<Vec<u8>> =
                probes.iter().map(|p| [&p[..], &[z][..]].concat()).collect();
            probes.extend(extended);
        }
        let allowed = |p: &[u8]| self.best(p, None).0 == Verdict::Allow;
        if probes.iter().any(|p| !p.starts_with(exempt) && allowed(p)) {
            return Some(false);
        }
        // A Disallow matching every path (`/`, `/*`, `*`, `/*$`...).
        let universal = |p: &[u8]| {
            let (body, anchored) = match p.strip_suffix(b"$") {
                Some(b) => (b, true),
                None => (p, false),
            };
            let literal: Vec<u8> =
                body.iter().copied().filter(|&b| b != b'*').collect();
            (literal.is_empty() || literal == b"/")
                && (!anchored || body.last() == Some(&b'*'))
        };
        let top = rules
            .iter()
            .filter(|r| r.kind == RuleKind::Disallow && universal(r.pattern))
            .map(|r| r.pattern.len())
            .max()?;
        let outranked =
            rules.iter().filter(|r| r.kind == RuleKind::Allow).all(|r| {
                let alias_len = pattern::index_html_alias(r.pattern)
                    .map_or(0, |a| a.len());
                (r.pattern.len() < top || r.pattern.starts_with(exempt))
                    && alias_len < top
            });
        outranked.then_some(true)
    }

    /// Where this agent's rules come from.
    pub fn source(&self) -> GroupSource {
        self.source
    }

    /// The engine the agent's group was stored with.
    pub(crate) fn engine_kind(&self) -> EngineKind {
        match self.engine {
            Engine::Dfa(_) => EngineKind::VerdictDfa,
            Engine::Split(_) => EngineKind::SplitDfa,
            Engine::Direct(_) => EngineKind::Direct,
            Engine::AllowAll => EngineKind::AllowAll,
        }
    }

    /// The rules file this matcher decides by.
    pub(crate) fn rules(&self) -> &Rules<'a> {
        &self.rules
    }

    /// The group's rules as stored: kind and normalised pattern, in file
    /// order (none if no group applies).
    #[cfg_attr(not(feature = "compile"), allow(dead_code))]
    pub(crate) fn rule_patterns(
        &self,
    ) -> impl Iterator<Item = (RuleKind, &'a [u8])> + '_ {
        let rules = self.group().map(|g| self.rules.group_rules(g));
        rules.into_iter().flatten().map(|r| (r.kind, r.pattern))
    }

    /// The index of the agent's group, if one applies.
    #[inline]
    pub fn group(&self) -> Option<usize> {
        (self.group != wire::NO_GROUP).then_some(self.group as usize)
    }

    /// The verdict and the deciding rule, found by the direct matcher over
    /// the group's stored rules. Slower than [`Matcher::decide`] (it
    /// allocates and visits every rule); gives the same verdict.
    pub fn explain(&self, url: &[u8]) -> Explanation<'a> {
        let path = MatchPath::parse(url, self.rules.dialect);
        let (verdict, reason, path) = self.direct(path, None);
        Explanation { verdict, reason, path, source: self.source }
    }

    fn direct(
        &self,
        path: MatchPath<'_>,
        index: Option<&DirectIndex>,
    ) -> (Verdict, Reason<'a>, Vec<u8>) {
        let mut v = Vec::with_capacity(path.tail().len() + 1);
        self.matchable(path, |b| v.push(b));
        let (verdict, reason) = self.best(&v, index);
        (verdict, reason, v)
    }

    /// The direct engine's verdict, without allocating for paths of up to
    /// 1 KiB, and without copying the path where the URL holds its
    /// matchable octets as they are (a path with no lead slash to add, in
    /// the google dialect or with no octet the rfc9309 normalisation
    /// changes).
    fn direct_verdict(
        &self,
        path: MatchPath<'_>,
        index: Option<&DirectIndex>,
    ) -> Verdict {
        // A path the rfc9309 normalisation leaves alone is its own
        // normalisation (scanned only when there is no slash to add).
        let as_is = || match self.rules.dialect {
            Dialect::Google => true,
            Dialect::Rfc9309 => !normalize::has_rfc9309_special(path.tail()),
        };
        if !path.has_lead_slash() && as_is() {
            return self.best(path.tail(), index).0;
        }
        const STACK: usize = 1024;
        // A normalised octet takes at most three.
        if 3 * path.tail().len() + 1 > STACK {
            return self.direct(path, index).0;
        }
        let mut buf = [0u8; STACK];
        let mut n = 0;
        self.matchable(path, |b| {
            buf[n] = b;
            n += 1;
        });
        self.best(&buf[..n], index).0
    }

    /// Emits the octets the rules match against ([`MatchPath::matchable`]).
    #[inline]
    fn matchable(&self, path: MatchPath<'_>, emit: impl FnMut(u8)) {
        path.matchable(self.rules.dialect, emit);
    }

    /// The direct matcher's verdict and reason for a matchable path with
    /// its index, then without (for tests: they must agree).
    #[cfg(all(test, feature = "compile"))]
    pub(crate) fn direct_both_ways(
        &self,
        path: &[u8],
    ) -> [(Verdict, Reason<'a>); 2] {
        let Engine::Direct(Some(index)) = &self.engine else {
            panic!("not a direct matcher");
        };
        [self.best(path, Some(index)), self.best(path, None)]
    }

    /// The direct matcher over a matchable path: every rule, or with
    /// `index`, only the candidates whose literal prefix the path starts
    /// with. Among matching rules of equal precedence the one on the
    /// earliest line is reported, whichever order they are visited in.
    fn best(
        &self,
        path: &[u8],
        index: Option<&DirectIndex>,
    ) -> (Verdict, Reason<'a>) {
        let dialect = self.rules.dialect;
        if dialect == Dialect::Rfc9309 && is_robots_txt(path) {
            return (Verdict::Allow, Reason::RobotsTxt);
        }
        let Some(g) = self.group() else {
            return (Verdict::Allow, Reason::NoGroup);
        };
        // Per kind: the longest match's length and line, and its reason.
        let mut best: [(usize, u32, Option<Reason<'a>>); 2] =
            [(0, u32::MAX, None), (0, u32::MAX, None)];
        let mut consider = |rule: RuleInfo<'a>, p: &[u8], alias: bool| {
            let slot = &mut best[rule.kind as usize];
            // (An empty pattern, which compiled files never hold, is no
            // match, as before.)
            let tie = p.len() == slot.0 && slot.2.is_some();
            let better = p.len() > slot.0 || (tie && rule.line < slot.1);
            if better && pattern::matches(p, dialect, path) {
                let reason = if alias {
                    Reason::IndexHtml(rule)
                } else {
                    Reason::Rule(rule)
                };
                *slot = (p.len(), rule.line, Some(reason));
            }
        };
        match index {
            Some(index) => {
                let start = self.rules.groups.get(g, 1) as usize;
                let len = self.rules.groups.get(g, 2) as usize;
                // The path's pairs, found for the first candidate that has
                // pairs to check.
                let mut have = None;
                index.trie.candidates(path, |e| {
                    let need = index.pairs[e as usize];
                    if !need.is_empty()
                        && !have
                            .get_or_insert_with(|| Pairs::of(path))
                            .covers(need)
                    {
                        return;
                    }
                    let e = e as usize;
                    if e < len {
                        let rule = self.rules.rule(start + e);
                        consider(rule, rule.pattern, false);
                    } else {
                        let (i, alias) = &index.aliases[e - len];
                        consider(
                            self.rules.rule(start + *i as usize),
                            alias,
                            true,
                        );
                    }
                });
            }
            None => {
                for rule in self.rules.group_rules(g) {
                    consider(rule, rule.pattern, false);
                    if rule.kind == RuleKind::Allow {
                        if let Some(alias) =
                            pattern::index_html_alias(rule.pattern)
                        {
                            consider(rule, &alias, true);
                        }
                    }
                }
            }
        }
        let [(allow, _, allow_rule), (disallow, _, disallow_rule)] = best;
        if disallow > allow {
            (Verdict::Disallow, disallow_rule.expect("matched"))
        } else {
            (Verdict::Allow, allow_rule.unwrap_or(Reason::NoMatchingRule))
        }
    }
}

/// The most state tuples [`Matcher::blocks_entirely`] visits in a split
/// group's parts before giving up.
pub const BLOCKED_SEARCH_LIMIT: usize = 200_000;

/// [`Dfa::allows_some_path_outside`] for a split group: a search over the
/// tuples of its parts' states (scores combined as a verdict is). `None`
/// past [`BLOCKED_SEARCH_LIMIT`] tuples.
fn split_reaches(
    parts: &[Dfa<'_>],
    exempt: &[u8],
    want_allow: bool,
) -> Option<bool> {
    use std::collections::HashSet;
    // Octets that every part puts in the same class behave alike; one
    // representative each, plus the octets of `exempt` themselves.
    let sig = |b: u8| -> Vec<u8> {
        parts.iter().map(|p| p.classes()[usize::from(b)]).collect()
    };
    let mut reps: Vec<u8> = Vec::new();
    let mut sigs: HashSet<Vec<u8>> = HashSet::new();
    for b in 0..=255u8 {
        if sigs.insert(sig(b)) || exempt.contains(&b) {
            reps.push(b);
        }
    }
    // Whether an octet's class holds another octet (one that leaves
    // `exempt` where this one continues it).
    let shared: Vec<bool> = (0..=255u8)
        .map(|b| (0..=255u8).any(|o| o != b && sig(o) == sig(b)))
        .collect();
    let allowed = |states: &[u32]| {
        let (mut a, mut d) = (0, 0);
        for (p, &s) in parts.iter().zip(states) {
            let (sa, sd) = p.state_scores(s);
            a = a.max(sa);
            d = d.max(sd);
        }
        (d <= a) == want_allow
    };
    let off = exempt.len() + 1;
    let first: Vec<u32> =
        parts.iter().map(|p| p.step(p.start_id(), b'/')).collect();
    let mut seen: HashSet<(Vec<u32>, usize)> = HashSet::new();
    let k0 = if exempt.first() == Some(&b'/') { 1 } else { off };
    let mut todo = vec![(first, k0)];
    seen.insert(todo[0].clone());
    while let Some((states, k)) = todo.pop() {
        if k == exempt.len() {
            continue;
        }
        if allowed(&states) {
            return Some(true);
        }
        for &b in &reps {
            let next: Vec<u32> = parts
                .iter()
                .zip(&states)
                .map(|(p, &s)| p.step(s, b))
                .collect();
            let nk =
                if k < exempt.len() && exempt[k] == b { k + 1 } else { off };
            // A representative stands for its whole class: the class's
            // other octets leave `exempt`.
            let mut targets = vec![nk];
            if nk != off && shared[usize::from(b)] {
                targets.push(off);
            }
            for t in targets {
                let key = (next.clone(), t);
                if !seen.contains(&key) {
                    if seen.len() >= BLOCKED_SEARCH_LIMIT {
                        return None;
                    }
                    seen.insert(key.clone());
                    todo.push(key);
                }
            }
        }
    }
    Some(false)
}

/// RFC 9309 §2.2.2: the path up to the query is exactly `/robots.txt`.
pub(crate) fn is_robots_txt(path: &[u8]) -> bool {
    let end = path.iter().position(|&b| b == b'?').unwrap_or(path.len());
    &path[..end] == b"/robots.txt"
}

/// [`is_robots_txt`] for a path not yet normalised: what the rfc9309
/// dialect's `/robots.txt` exception sees, without allocating (for hosts
/// whose verdict is fixed by the fetch outcome).
pub(crate) fn is_rfc9309_robots_txt(path: MatchPath<'_>) -> bool {
    const WANT: &[u8] = b"/robots.txt";
    let mut buf = [0u8; WANT.len()];
    let mut n = 0;
    let mut longer = false;
    let mut push = |b: u8| {
        if b == b'?' {
            return false;
        }
        if n == buf.len() {
            longer = true;
            return false;
        }
        buf[n] = b;
        n += 1;
        true
    };
    if path.has_lead_slash() && !push(b'/') {
        return false;
    }
    normalize::rfc9309_url(path.tail(), &mut push);
    !longer && &buf[..n] == WANT
}
