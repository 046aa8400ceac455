//! `robofilter check` and `robofilter explain`: verdicts for URLs given on
//! the command line.

use std::io::Write;

use anyhow::{Context, Result};
use robofilter::{Config, Dialect, GroupSource};

use crate::args::{CheckArgs, ExplainArgs};
use crate::files::{self, Output};

/// Prints `allow<TAB>URL` or `disallow<TAB>URL` per URL.
pub fn check(args: CheckArgs) -> Result<()> {
    let dialect: Dialect = args.dialect.map(Into::into).unwrap_or_default();
    let body = files::read(&args.robots, "robots.txt")?;
    let config = Config::new().dialect(dialect).agent(&args.agent);
    let bytes = files::compile(&body, config, &args.robots)?;
    let rules = files::load_rules(&bytes, &args.robots)?;
    let matcher = rules.matcher(&args.agent)?;
    let mut out = Output::new(None)?;
    for url in &args.urls {
        let url = files::os_bytes(url);
        let verdict = matcher.decide(&url);
        out.write_all(verdict.as_str().as_bytes())?;
        out.write_all(b"\t")?;
        out.write_all(&url)?;
        out.write_all(b"\n")?;
    }
    out.finish()
}

/// Prints `VERDICT<TAB>URL<TAB>REASON<TAB>GROUP` per URL, where GROUP says
/// whose group applied: `own group`, `* group` or `no group`.
pub fn explain(args: ExplainArgs) -> Result<()> {
    let dialect = args.dialect.map(Into::into);
    let config = Config::new().agent(&args.agent);
    let bytes = files::rules_or_robots(&args.file, dialect, config)?;
    let rules = files::load_rules(&bytes, &args.file)?;
    let matcher = rules.matcher(&args.agent).with_context(|| {
        format!("rules file '{}'", files::display(&args.file))
    })?;
    let group = match matcher.source() {
        GroupSource::Specific => "own group",
        GroupSource::Global => "* group",
        GroupSource::None => "no group",
    };
    let mut out = Output::new(None)?;
    for url in &args.urls {
        let url = files::os_bytes(url);
        let why = matcher.explain(&url);
        out.write_all(why.verdict().as_str().as_bytes())?;
        out.write_all(b"\t")?;
        out.write_all(&url)?;
        out.write_all(b"\t")?;
        let mut reason = Vec::new();
        robofilter::write_reason(&mut reason, why.reason());
        out.write_all(&reason)?;
        out.write_all(b"\t")?;
        out.write_all(group.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.finish()
}
