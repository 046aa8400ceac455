//! Deciding a batch of rows: each row's URL classified as a frontier
//! line's is (a null one is invalid), decided for every agent on the
//! worker threads (each a contiguous run of rows, with its own host
//! cache), into a verdict code per agent and row, a reason per agent and
//! row with `--explain`, and the rows `--emit` selects.

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, BooleanArray, StringArray};
use arrow_buffer::NullBuffer;
use rayon::prelude::*;
use robofilter::{
    HostCache, Outcome, Target, UrlChecker, UsageKey, write_why,
};
use robofilter_arrow::{
    Urls, preference_code, usage_array, verdict_array, verdict_code,
};
use robofilter_frontier::{BadKind, Counts, Emit, refused, usage_error};

/// Fewest rows per thread: below this a thread costs more than it saves.
const MIN_PER_THREAD: usize = 8 << 10;

/// How rows are decided.
pub(crate) struct Decide<'r, 'a> {
    pub(crate) checker: &'r UrlChecker<'a>,
    pub(crate) name: &'r str,
    pub(crate) emit: Emit,
    pub(crate) explain: bool,
    pub(crate) max_url_len: usize,
    pub(crate) threads: usize,
    /// `--usage`: the keys whose preference columns are added.
    pub(crate) usage: &'r [UsageKey],
    /// `--respect`: allowed rows whose preference for one of these is `n`
    /// are not selected.
    pub(crate) respect: &'r [UsageKey],
}

/// A batch's verdicts.
pub(crate) struct Decided {
    /// One verdict column per agent.
    pub(crate) verdicts: Vec<ArrayRef>,
    /// Per agent and key of [`Decide::usage`], its preferences.
    pub(crate) usage: Vec<ArrayRef>,
    /// With `--explain`, one reason column per agent.
    pub(crate) reasons: Vec<ArrayRef>,
    /// The rows `--emit` selects (`None`: every row).
    pub(crate) selected: Option<BooleanArray>,
    pub(crate) counts: Counts,
    /// Per agent, with several: allowed, disallowed, unknown, invalid.
    pub(crate) agents: Vec<[u64; 4]>,
    /// The first not-a-URL rows: 0-based row in the batch, and why.
    pub(crate) bad: Vec<(u64, BadKind)>,
}

/// One thread's part of a batch.
struct Part {
    codes: Vec<Vec<u8>>,
    /// Per agent and key, the preference codes ([`preference_code`];
    /// `None`: no preference to have).
    usage: Vec<Vec<Option<u8>>>,
    reasons: Vec<StringBuilder>,
    selected: Vec<bool>,
    counts: Counts,
    agents: Vec<[u64; 4]>,
    bad: Vec<(u64, BadKind)>,
}

/// How many not-a-URL rows a batch reports.
const REPORT_LEN: usize = 5;

impl Decide<'_, '_> {
    /// Decides every row of `urls` (`rows` of them).
    pub(crate) fn batch(
        &self,
        urls: &Urls<'_>,
        rows: usize,
    ) -> Result<Decided, String> {
        let parts = self.threads.min(rows / MIN_PER_THREAD).max(1);
        let part_len = rows.div_ceil(parts).max(1);
        let ranges: Vec<_> = (0..rows)
            .step_by(part_len)
            .map(|s| s..(s + part_len).min(rows))
            .collect();
        let parts: Vec<Part> = ranges
            .into_par_iter()
            .map(|r| self.part(urls, r))
            .collect::<Result<_, _>>()?;
        Ok(self.join(urls, parts, rows))
    }

    /// Decides rows `range`.
    fn part(
        &self,
        urls: &Urls<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<Part, String> {
        let agents = self.checker.agents().len();
        let n = range.len();
        let mut p = Part {
            codes: vec![Vec::with_capacity(n); agents],
            usage: vec![Vec::with_capacity(n); agents * self.usage.len()],
            reasons: match self.explain {
                true => (0..agents)
                    .map(|_| StringBuilder::with_capacity(n, n * 16))
                    .collect(),
                false => Vec::new(),
            },
            selected: Vec::with_capacity(n),
            counts: Counts::default(),
            agents: match agents {
                1 => Vec::new(),
                n => vec![[0; 4]; n],
            },
            bad: Vec::new(),
        };
        let mut cache = HostCache::unshared();
        let mut each = self.checker.unshared_outcomes();
        let mut why = Vec::new();
        // Each agent's preferences, with --usage or --respect.
        let mut prefs = Vec::new();
        for i in range {
            p.counts.lines += 1;
            let value = urls.get(i);
            let (url, target, bad) = match value {
                None => (&[][..], None, Some(BadKind::Empty)),
                Some((_, len)) if len > self.max_url_len => {
                    (&[][..], None, Some(BadKind::TooLong))
                }
                Some((buf, len)) => match robofilter::url_line(buf, len) {
                    Some((url, path)) => {
                        let target =
                            self.checker.target(url, &mut cache).map_err(
                                |e| format!("bundle '{}', {e}", self.name),
                            )?;
                        target.outcomes(url, path, &mut each);
                        let bad = matches!(target, Target::Ambiguous)
                            .then_some(BadKind::AmbiguousHost);
                        (url, Some(target), bad)
                    }
                    None if len == 0 => (&[][..], None, Some(BadKind::Empty)),
                    None => (&[][..], None, Some(BadKind::NotUrl)),
                },
            };
            if target.is_none() {
                each.fill(Outcome::Invalid);
                let kind = bad.expect("a reason");
                p.counts.empty += u64::from(kind == BadKind::Empty);
                p.counts.too_long += u64::from(kind == BadKind::TooLong);
            }
            if let Some(kind) = bad {
                if p.bad.len() < REPORT_LEN {
                    p.bad.push((i as u64, kind));
                }
            }
            for (column, &o) in p.codes.iter_mut().zip(&each[..]) {
                column.push(verdict_code(o));
            }
            let outcome = match &each[..] {
                [one] => *one,
                each => {
                    for (counts, &o) in p.agents.iter_mut().zip(each) {
                        counts[o as usize] += 1;
                    }
                    Outcome::combine(each)
                }
            };
            if !self.usage.is_empty() || !self.respect.is_empty() {
                self.checker
                    .preferences_each(url, target, &each, &mut prefs)
                    .map_err(|e| usage_error(self.name, url, &e))?;
            }
            let k = self.usage.len();
            for (agent, prefs) in prefs.iter().enumerate() {
                for (column, &key) in
                    p.usage[agent * k..].iter_mut().zip(self.usage)
                {
                    column.push(prefs.map(|p| preference_code(p.get(key))));
                }
            }
            let refused = refused(self.respect, &prefs);
            let selected = p.counts.count(outcome, self.emit, refused);
            p.selected.push(selected);
            for (agent, reasons) in p.reasons.iter_mut().enumerate() {
                if value.is_none() {
                    reasons.append_null();
                    continue;
                }
                why.clear();
                write_why(&mut why, url, target, agent);
                reasons.append_value(String::from_utf8_lossy(&why));
            }
        }
        Ok(p)
    }

    /// The parts' results as one batch's columns.
    fn join(&self, urls: &Urls<'_>, parts: Vec<Part>, rows: usize) -> Decided {
        let agents = self.checker.agents().len();
        let mut codes: Vec<Vec<u8>> = vec![Vec::with_capacity(rows); agents];
        let mut usage: Vec<Vec<Option<u8>>> =
            vec![Vec::with_capacity(rows); agents * self.usage.len()];
        let mut reasons: Vec<Vec<StringArray>> = vec![Vec::new(); agents];
        let mut selected = Vec::with_capacity(rows);
        let mut counts = Counts::default();
        let mut per_agent =
            vec![[0u64; 4]; if agents == 1 { 0 } else { agents }];
        let mut bad = Vec::new();
        for mut p in parts {
            for (all, part) in codes.iter_mut().zip(&p.codes) {
                all.extend_from_slice(part);
            }
            for (all, part) in usage.iter_mut().zip(&p.usage) {
                all.extend_from_slice(part);
            }
            for (all, part) in reasons.iter_mut().zip(&mut p.reasons) {
                all.push(part.finish());
            }
            selected.extend_from_slice(&p.selected);
            counts += p.counts;
            for (t, c) in per_agent.iter_mut().zip(&p.agents) {
                for (t, c) in t.iter_mut().zip(c) {
                    *t += c;
                }
            }
            for b in p.bad {
                if bad.len() < REPORT_LEN {
                    bad.push(b);
                }
            }
        }
        let nulls: Option<NullBuffer> = urls.nulls().cloned();
        let verdicts = codes
            .into_iter()
            .map(|c| verdict_array(c, nulls.clone()))
            .collect();
        let usage = usage.iter().map(|c| usage_array(c)).collect();
        let reasons = reasons
            .into_iter()
            .filter(|r| !r.is_empty())
            .map(|parts| {
                let refs: Vec<&dyn arrow_array::Array> = parts
                    .iter()
                    .map(|a| a as &dyn arrow_array::Array)
                    .collect();
                arrow_select::concat::concat(&refs).expect("same type")
            })
            .collect();
        let selected =
            (self.emit != Emit::All).then(|| BooleanArray::from(selected));
        Decided {
            verdicts,
            usage,
            reasons,
            selected,
            counts,
            agents: per_agent,
            bad,
        }
    }
}
