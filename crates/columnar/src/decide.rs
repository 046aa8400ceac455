//! Deciding a batch of rows: each row's URL classified as a frontier
//! line's is (a null one is invalid), decided for every agent on the
//! worker threads (each a contiguous run of rows, with its own host
//! cache), into a verdict code per agent and row, a reason per agent and
//! row with `--explain`, and the rows `--emit` selects.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::types::UInt8Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, StringArray, UInt8Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};
use rayon::prelude::*;
use robofilter::{
    HostCache, Outcome, Preference, Target, UrlChecker, UsageKey, write_why,
};
use robofilter_frontier::{BadKind, Counts, Emit, refused, usage_error};

use crate::urls::Urls;

/// The verdict names, indexed by the codes of verdict columns (the
/// wheel's `VERDICTS`).
pub const VERDICTS: [&str; 4] = ["allow", "disallow", "unknown", "invalid"];

/// A verdict column's field: `dictionary<uint8, string>`, nullable (null
/// where the URL is), as the wheel's `Rules.check` returns them.
pub fn verdict_field(name: &str) -> Field {
    let ty = DataType::Dictionary(
        Box::new(DataType::UInt8),
        Box::new(DataType::Utf8),
    );
    Field::new(name, ty, true)
}

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

/// The values of preference columns, indexed by their codes
/// ([`usage_code`]); a row with no preference to have is null.
const PREFERENCES: [&str; 3] = ["unknown", "y", "n"];

/// A preference's code in a preference column ([`PREFERENCES`]).
fn usage_code(p: Preference) -> u8 {
    match p {
        Preference::Unknown => 0,
        Preference::Yes => 1,
        Preference::No => 2,
    }
}

/// The code of a row with no preference to have (null in the column).
const NO_PREFERENCE: u8 = u8::MAX;

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
    /// Per agent and key, the preference codes ([`usage_code`]).
    usage: Vec<Vec<u8>>,
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
                column.push(o as u8);
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
                    column
                        .push(prefs.map_or(NO_PREFERENCE, |p| {
                            usage_code(p.get(key))
                        }));
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
        let mut usage: Vec<Vec<u8>> =
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
        let values: ArrayRef = Arc::new(StringArray::from(VERDICTS.to_vec()));
        let verdicts = codes
            .into_iter()
            .map(|c| {
                let keys = UInt8Array::new(c.into(), nulls.clone());
                let d = DictionaryArray::<UInt8Type>::try_new(
                    keys,
                    values.clone(),
                )
                .expect("codes are in range");
                Arc::new(d) as ArrayRef
            })
            .collect();
        let prefs: ArrayRef =
            Arc::new(StringArray::from(PREFERENCES.to_vec()));
        let usage = usage
            .into_iter()
            .map(|c| {
                let nulls = NullBuffer::from_iter(
                    c.iter().map(|&c| c != NO_PREFERENCE),
                );
                let c: Vec<u8> = c.into_iter().map(|c| c.min(2)).collect();
                let keys = UInt8Array::new(c.into(), Some(nulls));
                let d =
                    DictionaryArray::<UInt8Type>::try_new(keys, prefs.clone())
                        .expect("codes are in range");
                Arc::new(d) as ArrayRef
            })
            .collect();
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
