//! `robofilter check` and `robofilter explain`: verdicts for URLs given on
//! the command line, with reasons escaped as every printer escapes them
//! ([`escape`]).

use robofilter_frontier::escape;
use std::io::Write;

use anyhow::{Result, anyhow};
use robofilter::{
    GroupSource, HostCache, MatchPath, Outcome, Target, UrlChecker,
};

use crate::args::{CheckArgs, ExplainArgs};
use robofilter_io::{self as files, Output};

/// Prints `VERDICT<TAB>URL` per URL: `allow` or `disallow`, and with a
/// bundle also `unknown` (no entry for the URL's host); with several
/// agents, one verdict column per agent.
pub fn check(args: CheckArgs) -> Result<()> {
    let dialect = args.dialect.map(Into::into);
    let open = files::Open::any().dialect(dialect);
    files::with_checker(&args.robots, &args.agent, open, |checker| {
        let mut cache = HostCache::new();
        let mut out = Output::new(None)?;
        let mut each = vec![Outcome::Invalid; args.agent.len()];
        for url in &args.urls {
            let url = files::os_bytes(url);
            let target = target(checker, &url, &mut cache, &args.robots)?;
            target.outcomes(&url, MatchPath::from_url(&url), &mut each);
            for verdict in &each {
                out.write_all(verdict.as_str().as_bytes())?;
                out.write_all(b"\t")?;
            }
            out.write_all(&url)?;
            out.write_all(b"\n")?;
        }
        out.finish()
    })
}

/// Prints `VERDICT<TAB>URL<TAB>REASON<TAB>GROUP` per URL, where GROUP says
/// whose group applied: `own group`, `* group` or `no group` (also when a
/// bundle decides by the host's fetch outcome or has no entry for it).
/// With several agents, one line per URL and agent, the agent in a fifth
/// column.
pub fn explain(args: ExplainArgs) -> Result<()> {
    let dialect = args.dialect.map(Into::into);
    let several = args.agent.len() > 1;
    let open = files::Open::any().dialect(dialect);
    files::with_checker(&args.file, &args.agent, open, |checker| {
        let mut cache = HostCache::new();
        let mut out = Output::new(None)?;
        let mut reason = Vec::new();
        for url in &args.urls {
            let url = files::os_bytes(url);
            let target = target(checker, &url, &mut cache, &args.file)?;
            for (agent, name) in args.agent.iter().enumerate() {
                reason.clear();
                let (verdict, group) = why(&mut reason, &url, target, agent);
                out.write_all(verdict.as_str().as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(&url)?;
                out.write_all(b"\t")?;
                out.write_all(escape(&reason).as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(group.as_bytes())?;
                if several {
                    out.write_all(b"\t")?;
                    out.write_all(name.as_bytes())?;
                }
                out.write_all(b"\n")?;
            }
        }
        out.finish()
    })
}

/// The outcome of `url` for agent number `agent` and whose group decided
/// it, with the reason written to `reason`.
fn why(
    reason: &mut Vec<u8>,
    url: &[u8],
    target: Target<'_, '_>,
    agent: usize,
) -> (Outcome, &'static str) {
    match target {
        Target::Rules(ms) => {
            let m = &ms[agent];
            let why = m.explain(url);
            robofilter::write_reason(reason, why.reason());
            let group = match m.source() {
                GroupSource::Specific => "own group",
                GroupSource::Global => "* group",
                GroupSource::None => "no group",
            };
            (Outcome::from(why.verdict()), group)
        }
        other => {
            robofilter::write_why(reason, url, Some(other), agent);
            (other.outcome(agent, url, MatchPath::from_url(url)), "no group")
        }
    }
}

/// What decides `url`: the rules file, or the bundle entry of its host.
fn target<'m, 'a>(
    checker: &'m UrlChecker<'a>,
    url: &[u8],
    cache: &mut HostCache<'m, 'a>,
    path: &std::path::Path,
) -> Result<Target<'m, 'a>> {
    checker
        .target(url, cache)
        .map_err(|e| anyhow!("bundle '{}', {e}", files::display(path)))
}
