//! Hot groups: a group stored as split parts or for the direct matcher
//! that decides many URLs gets its whole verdict DFA, built in memory.
//!
//! Bundles are compiled with a small byte budget per group (32 KiB), so
//! that 74.6 k hosts fit in under 5 KB each; a group over it is split into
//! score DFAs walked side by side, or, past that, decided by the direct
//! matcher. Both give the one automaton's verdicts, at about 1-1.5 k more
//! instructions per URL. A frontier is not spread evenly over its hosts,
//! though: in the corpus frontier one host (reddit.com, a 3-part split
//! group whose one automaton takes 39 KiB) has 30 % of the URLs.
//!
//! So a [`UrlChecker`](crate::UrlChecker) counts the URLs each such group
//! decides, and the thread that counts the [`HOT_AFTER`]th builds the
//! group's verdict DFA from its stored rules, exactly as `compile` builds
//! one for a single robots.txt (the same group budgets: 50,000 states,
//! 25 M steps, 4 MiB), with at most [`STEPS_PER_URL`] construction steps
//! per URL the group has decided. From then on every thread walks it. A
//! build that ran out of those steps is tried again when the count has
//! grown fourfold; one past the group budgets is not. The verdicts are the
//! same by construction: the stored engine and the built one are two
//! encodings of the same rules, which the differential tests check against
//! each other (and `check.rs`'s tests check the switch).
//!
//! The cost is bounded per checker (and its shards): [`MEMORY`] octets of
//! built automata and [`WORK`] construction steps; past either, groups
//! keep their stored engine. Builds cost about 165 instructions a step:
//! reddit.com's group 0.65 M steps (0.11 G instructions), wikipedia.org's
//! 418 rules 0.52 M: about 0.1 G instructions, which a group saving 1 k
//! per URL repays over some 100 k URLs. On the corpus frontier (2.2 M
//! URLs) only reddit.com's group reaches [`HOT_AFTER`] and the run takes
//! 15 % fewer instructions (the lab notes in docs/records). A
//! lower count pays off less often: at 16,384 wikipedia's group was built
//! too (98 M instructions) and saved 13 M over its 9 k remaining URLs
//! (−12 % in all); at 4,096 eight groups were built (−6 %).
//!
//! Without the `compile` feature (the search path alone) nothing is built.

// Without the compiler there is nothing to build: the counters and the
// allowance are never used.
#![cfg_attr(not(feature = "compile"), allow(dead_code))]

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};

use crate::dfa::OwnedDfa;
use crate::rules::{EngineKind, Matcher};
use crate::url::MatchPath;
use crate::verdict::Verdict;

/// URLs a group decides with its stored engine before its whole DFA is
/// first tried; then again at 4, 16, 64 ... times as many.
pub(crate) const HOT_AFTER: u32 = 32_768;

/// Construction steps a build may take per URL the group has decided: the
/// first try gets 2 M steps (about 0.35 G instructions), which the real
/// over-budget groups above fit; a try never costs more than about 10 k
/// instructions per URL the group has decided, each of which cost about
/// 1 k more than one automaton's walk.
const STEPS_PER_URL: u64 = 64;

/// The most octets of built automata per checker (and its shards).
pub(crate) const MEMORY: usize = 64 << 20;

/// The most construction steps per checker (and its shards): about 17 G
/// instructions, four groups at the group work budget or a hundred or
/// more real ones.
pub(crate) const WORK: u64 = 100_000_000;

/// The group budgets a build uses (those of `Config::new`, which a test
/// checks): a rules file compiled with budgets at least these stored its
/// groups as they would be built again, so its groups are not tried.
pub(crate) const BUILD_STATES: u32 = 50_000;
pub(crate) const BUILD_WORK: u64 = 25_000_000;
pub(crate) const BUILD_BYTES: u64 = 4 << 20;

/// What builds may still spend, shared by the groups of a checker and of
/// its shards.
#[derive(Debug)]
pub(crate) struct Allowance {
    bytes: AtomicUsize,
    work: AtomicU64,
}

impl Allowance {
    /// [`MEMORY`] octets and [`WORK`] steps.
    pub(crate) fn new() -> Arc<Allowance> {
        Arc::new(Allowance {
            bytes: AtomicUsize::new(MEMORY),
            work: AtomicU64::new(WORK),
        })
    }

    /// Takes up to `want` construction steps; returns how many it took.
    fn take_work(&self, want: u64) -> u64 {
        let take = |left: u64| Some(left - left.min(want));
        let prev = self.work.fetch_update(Relaxed, Relaxed, take);
        prev.map_or(0, |left| left.min(want))
    }

    /// Gives back steps taken and not spent.
    fn give_work(&self, steps: u64) {
        self.work.fetch_add(steps, Relaxed);
    }

    /// Takes `n` octets of memory if that many are left.
    fn take_bytes(&self, n: usize) -> bool {
        let take = |left: usize| left.checked_sub(n);
        self.bytes.fetch_update(Relaxed, Relaxed, take).is_ok()
    }
}

/// One group's count of URLs and, once built, its whole DFA.
#[derive(Debug)]
pub(crate) struct Hot {
    seen: AtomicU32,
    /// The highest threshold a thread reached while another was building
    /// (0 for none): tried by the builder if its build runs out of steps.
    missed: AtomicU32,
    /// A thread is building.
    busy: AtomicBool,
    /// `Some(None)`: it does not fit, or the allowance is spent.
    dfa: OnceLock<Option<OwnedDfa>>,
    allowance: Arc<Allowance>,
}

impl Hot {
    /// A counter for `matcher`'s group if building it again may pay:
    /// `None` if it walks one automaton already (or allows everything),
    /// or if nothing can be built (no `compile` feature, a file compiled
    /// with budgets at least a build's).
    pub(crate) fn for_matcher(
        matcher: &Matcher<'_>,
        allowance: &Arc<Allowance>,
    ) -> Option<Hot> {
        if !cfg!(feature = "compile")
            || !matches!(
                matcher.engine_kind(),
                EngineKind::SplitDfa | EngineKind::Direct
            )
        {
            return None;
        }
        let rules = matcher.rules();
        let (states, work) = rules.dfa_budgets();
        let bytes = rules.dfa_byte_limit().unwrap_or(0);
        if states >= BUILD_STATES && work >= BUILD_WORK && bytes >= BUILD_BYTES
        {
            return None;
        }
        Some(Hot {
            seen: AtomicU32::new(0),
            missed: AtomicU32::new(0),
            busy: AtomicBool::new(false),
            dfa: OnceLock::new(),
            allowance: Arc::clone(allowance),
        })
    }

    /// `matcher`'s verdict for `path` (read in its dialect already), by
    /// the built DFA once there is one, else by the stored engine,
    /// counting the URL.
    #[inline]
    pub(crate) fn decide(
        &self,
        matcher: &Matcher<'_>,
        path: MatchPath<'_>,
    ) -> Verdict {
        match self.dfa.get() {
            Some(Some(dfa)) => decide_built(dfa, path, matcher.dialect()),
            Some(None) => matcher.decide_path(path),
            None => {
                let n = self.seen.fetch_add(1, Relaxed).wrapping_add(1);
                // At HOT_AFTER, then at 4, 16, 64 ... times as many.
                if n >= HOT_AFTER
                    && n.is_power_of_two()
                    && (n / HOT_AFTER).trailing_zeros() % 2 == 0
                {
                    self.build(matcher, n);
                }
                matcher.decide_path(path)
            }
        }
    }

    /// Whether the whole DFA has been built ([`Matchers::is_built`]).
    ///
    /// [`Matchers::is_built`]: crate::Matchers::is_built
    pub(crate) fn is_built(&self) -> bool {
        matches!(self.dfa.get(), Some(Some(_)))
    }

    /// Tries to build the group's DFA with the work `seen` URLs allow
    /// ([`STEPS_PER_URL`] each), within the allowance; one thread at a
    /// time. A thread that reaches a threshold while another builds
    /// leaves it in `missed`; a build that runs out of steps tries it
    /// then. (One reached in the instant between a build's last look at
    /// `missed` and its release of `busy` is still skipped.)
    #[cold]
    #[inline(never)]
    fn build(&self, matcher: &Matcher<'_>, seen: u32) {
        if self.busy.swap(true, Acquire) {
            self.missed.fetch_max(seen, Relaxed);
            return;
        }
        let mut seen = seen;
        // A thread that found no DFA, then counted past the next
        // threshold while another finished one, must not build (and
        // charge the allowance for) a second. The finished build's `set`
        // came before its `busy` release, which this thread acquired.
        while self.dfa.get().is_none() {
            let want = (u64::from(seen) * STEPS_PER_URL).min(BUILD_WORK);
            match self.try_build(matcher, want) {
                Some(done) => {
                    let _ = self.dfa.set(done);
                }
                // Out of steps: again at once if another thread reached
                // a later threshold meanwhile.
                None => match self.missed.swap(0, Relaxed) {
                    later if later > seen => seen = later,
                    _ => break,
                },
            }
        }
        self.busy.store(false, Release);
    }

    /// `None`: out of work, to be tried again with more; `Some(None)`:
    /// given up for good, so that the group's URLs stop counting.
    ///
    /// A build gives up when the DFA is too large, when it ran out of the
    /// group's whole budget ([`BUILD_WORK`]), or when no step at all is
    /// left in the allowance (spent, or, with four or more builds in
    /// flight at once, all held by them). One that ran out of fewer steps,
    /// because fewer were asked for or because builds in flight held part
    /// of the allowance, is tried again when the count has grown
    /// fourfold.
    #[cfg(feature = "compile")]
    fn try_build(
        &self,
        matcher: &Matcher<'_>,
        want: u64,
    ) -> Option<Option<OwnedDfa>> {
        use crate::compile::{Whole, whole_dfa};
        let allowance = &self.allowance;
        let work = allowance.take_work(want);
        if work == 0 {
            return Some(None);
        }
        let (whole, spent) =
            whole_dfa(matcher.dialect(), matcher.rule_patterns(), work);
        allowance.give_work(work.saturating_sub(spent));
        let bytes = match whole {
            Whole::Built(bytes) => bytes,
            Whole::OutOfWork if work < BUILD_WORK => return None,
            Whole::OutOfWork | Whole::TooLarge => return Some(None),
        };
        let bytes = crate::aligned::AlignedBytes::from(&bytes[..]);
        let dfa = crate::dfa::Dfa::from_bytes_with(bytes.as_bytes(), true)
            .ok()
            .and_then(|d| OwnedDfa::new(&d));
        Some(dfa.filter(|d| allowance.take_bytes(d.size())))
    }

    #[cfg(not(feature = "compile"))]
    fn try_build(&self, _: &Matcher<'_>, _: u64) -> Option<Option<OwnedDfa>> {
        Some(None)
    }
}

/// The built DFA's verdict, out of line: `Dfa::decide` is inlined where
/// it is called, and once behind `Matcher::decide_path` is enough.
#[inline(never)]
fn decide_built(
    dfa: &OwnedDfa,
    path: MatchPath<'_>,
    dialect: crate::dialect::Dialect,
) -> Verdict {
    dfa.get().decide(path, dialect)
}

#[cfg(all(test, feature = "compile"))]
mod tests {
    use super::*;
    use crate::aligned::AlignedBytes;
    use crate::compile::tests::WILDCARD_GROUP;
    use crate::compile::{Compiler, Config};
    use crate::rules::Rules;

    /// Calls `f` with the matcher of the wildcard group stored split (it
    /// exceeds a 24 KiB byte budget).
    fn with_split_group(f: impl FnOnce(&Matcher<'_>)) {
        let config = Config::new().dfa_byte_limit(24 << 10);
        let compiler = Compiler::with_config(config);
        let bytes =
            AlignedBytes::from(&compiler.compile(WILDCARD_GROUP).unwrap()[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let m = rules.matcher("bot").unwrap();
        assert_eq!(m.engine_kind(), EngineKind::SplitDfa);
        f(&m);
    }

    /// What is left of an allowance: (octets, steps).
    fn left(a: &Allowance) -> (usize, u64) {
        (a.bytes.load(Relaxed), a.work.load(Relaxed))
    }

    /// A thread that counted past the next threshold while another
    /// finished the build finds the DFA built: it builds nothing more and
    /// charges nothing more.
    #[test]
    fn a_built_group_is_not_built_again() {
        with_split_group(|m| {
            let allowance = Allowance::new();
            let hot = Hot::for_matcher(m, &allowance).unwrap();
            hot.build(m, HOT_AFTER);
            assert!(hot.is_built());
            let built = left(&allowance);
            assert!(built.0 < MEMORY && built.1 < WORK, "{built:?}");
            hot.build(m, 4 * HOT_AFTER);
            assert_eq!(left(&allowance), built);
        });
    }

    /// The steps a build of `m`'s group takes.
    fn steps_to_build(m: &Matcher<'_>) -> u64 {
        let probe = Allowance::new();
        let hot = Hot::for_matcher(m, &probe).unwrap();
        hot.build(m, HOT_AFTER);
        assert!(hot.is_built());
        let need = WORK - left(&probe).1;
        assert!(need >= 2 * STEPS_PER_URL, "{need}");
        need
    }

    /// A build left short of steps by builds in flight elsewhere (which
    /// hold part of the allowance) is tried again at the next threshold,
    /// where it succeeds once they have given their steps back.
    #[test]
    fn a_build_short_of_held_steps_is_tried_again() {
        with_split_group(|m| {
            let need = steps_to_build(m);

            let allowance = Allowance::new();
            let held = allowance.take_work(WORK - need / 2);
            let hot = Hot::for_matcher(m, &allowance).unwrap();
            // A count at which a build asks for the whole group budget.
            let seen = 16 * HOT_AFTER;
            assert!(u64::from(seen) * STEPS_PER_URL >= BUILD_WORK);
            hot.build(m, seen);
            assert!(hot.dfa.get().is_none(), "given up for good");
            allowance.give_work(held);
            hot.build(m, 4 * seen);
            assert!(hot.is_built());
        });
    }

    /// A threshold reached while another thread builds is left in
    /// `missed`; the builder, out of steps for its own count, tries that
    /// later count at once.
    #[test]
    fn a_threshold_reached_during_a_build_is_tried_after_it() {
        with_split_group(|m| {
            let need = steps_to_build(m);
            let hot = Hot::for_matcher(m, &Allowance::new()).unwrap();
            // While another thread builds, a threshold is only noted.
            hot.busy.store(true, Relaxed);
            hot.build(m, 4 * HOT_AFTER);
            assert_eq!(hot.missed.load(Relaxed), 4 * HOT_AFTER);
            assert!(!hot.is_built());
            hot.busy.store(false, Relaxed);
            // The builder's own count allows too few steps; the noted one
            // enough.
            let short = u32::try_from(need / STEPS_PER_URL / 2).unwrap();
            assert!(u64::from(short) * STEPS_PER_URL < need);
            hot.build(m, short);
            assert!(hot.is_built());
            assert_eq!(hot.missed.load(Relaxed), 0);
        });
    }
}
