//! `robofilter filter RULES --agent NAME... [FILE...]`: frontier lines in
//! (a URL, optionally a TAB and fields), selected lines (or every line
//! after its verdict columns, one per agent) out. The work is the
//! `robofilter-frontier` crate's; this file checks the arguments, opens
//! the rules, and reports.

use std::fmt::Write as _;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use robofilter::UsageKey;
use robofilter_frontier::{
    BadKind, Counts, Emit, Format, MAX_THREADS_PER_CORE, Options,
};

use crate::args::{EmitArg, FilterArgs};
use robofilter_columnar::ParquetInputs;
use robofilter_io::{self as files, Input, Output};

/// How `filter`'s inputs hold their URLs (`--input-format`).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
enum InputFormat {
    /// A URL per line, optionally followed by a TAB and fields.
    #[default]
    Lines,
    /// Common Crawl's CDXJ: `SURT TIMESTAMP {json}`, the URL in the
    /// JSON's `url`.
    Cdxj,
    /// Parquet files: the URLs in the --url-column.
    Parquet,
}

impl InputFormat {
    /// The format named on the command line (clap allows these three).
    fn named(name: &str) -> InputFormat {
        match name {
            "cdxj" => InputFormat::Cdxj,
            "parquet" => InputFormat::Parquet,
            _ => InputFormat::Lines,
        }
    }
}

pub fn run(args: FilterArgs) -> Result<()> {
    let input_format = InputFormat::named(&args.input_format);
    let start = Instant::now();
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    if files::is_stdin(&args.rules) && paths.iter().any(|p| files::is_stdin(p))
    {
        bail!(
            "the rules file and the URL list cannot both come from stdin \
             (name the URL list as a FILE, or the rules file as RULES)"
        );
    }
    let mut inputs = vec![(args.rules.as_path(), "rules file or bundle")];
    inputs.extend(paths.iter().map(|p| (p.as_path(), "URL list")));
    files::check_streams_once(&inputs)?;
    // Parquet inputs: every footer read (and the URL column found) before
    // any output; a directory is its parts.
    let parquet = match input_format {
        InputFormat::Parquet => {
            Some(ParquetInputs::open(&paths, &args.url_column)?)
        }
        _ => None,
    };
    let parquet_out = args.output.as_deref().is_some_and(is_parquet_name);
    if parquet_out && parquet.is_none() {
        bail!(
            "output '{}' is named as a Parquet file, but the inputs are \
             lines: a Parquet output needs Parquet inputs (--input-format \
             parquet); name the output otherwise",
            files::display(args.output.as_deref().expect("an output"))
        );
    }
    if !args.respect.is_empty() && args.emit != EmitArg::Allowed {
        bail!(
            "--respect drops allowed lines whose usage preference is `n`: \
             it needs --emit allowed (the default)"
        );
    }
    let parts = parquet.as_ref().map(ParquetInputs::paths);
    // Before any work: an output that is an input would destroy it, and a
    // missing output directory is better known now than after the run.
    let mut read: Vec<&Path> = match &parts {
        Some(parts) => parts.iter().map(PathBuf::as_path).collect(),
        None => paths.iter().map(PathBuf::as_path).collect(),
    };
    read.push(&args.rules);
    // A shard directory's files are inputs too (read later, lazily).
    let shard_files = files::files_of(&args.rules);
    read.extend(shard_files.iter().map(PathBuf::as_path));
    match &args.output {
        Some(out) => files::check_output_not_input(out, &read)?,
        None => files::check_stdout_not_input(&read)?,
    }
    let out = Output::new(args.output.as_deref())?;

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max_threads = cores * MAX_THREADS_PER_CORE;
    let threads = match args.threads {
        Some(n) if usize::from(n) > max_threads => {
            diag!(
                "robofilter: warning: -j {n} capped at {max_threads} threads \
                 ({MAX_THREADS_PER_CORE} per core)"
            );
            max_threads
        }
        Some(n) => usize::from(n),
        None => cores,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("cannot start the worker threads")?;

    let rules_name = files::display(&args.rules);
    let open = files::Open::compiled();
    let options = Options {
        emit: match args.emit {
            EmitArg::Allowed => Emit::Allowed,
            EmitArg::Disallowed => Emit::Disallowed,
            EmitArg::Unknown => Emit::Unknown,
            EmitArg::All => Emit::All,
        },
        json: args.json,
        explain: args.explain,
        max_url_len: args.max_url_len,
        threads,
        format: match input_format {
            InputFormat::Cdxj => Format::Cdxj,
            InputFormat::Lines | InputFormat::Parquet => Format::Lines,
        },
        usage: dedup(&args.usage),
        respect: dedup(&args.respect),
    };
    files::with_checker(&args.rules, &args.agent, open, |checker| {
        let run = match parquet {
            Some(parquet) if parquet_out => robofilter_columnar::filter(
                checker,
                &rules_name,
                &options,
                parquet,
                out,
            )?,
            parquet => {
                let (paths, inputs) = match parquet {
                    // Printed as URL lines: a line per row.
                    Some(parquet) => parquet.into_url_lines(),
                    // Every input opened before any output: a bad path
                    // fails first.
                    None => {
                        let inputs = robofilter_frontier::open_inputs(&paths)?;
                        (paths.clone(), inputs)
                    }
                };
                let progress = progress_bar(&inputs);
                robofilter_frontier::filter(
                    checker,
                    &rules_name,
                    &options,
                    &paths,
                    inputs,
                    out,
                    progress,
                )?
            }
        };
        report(&run.counts, &run.bad, args.max_url_len, start);
        report_agents(&args.agent, &run.per_agent);
        if run.hosts.len() > 1 {
            let seen: Vec<String> = run
                .hosts
                .iter()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .collect();
            diag!(
                "robofilter: warning: one rules file decided every line, and \
                 the lines are of several hosts ({}, ...): a robots.txt \
                 speaks for its own host only; for a frontier of many hosts, \
                 compile a bundle (`robofilter compile --hosts|--manifest`)",
                seen.join(", ")
            );
        }
        Ok(())
    })
}

/// Whether an output is named as a Parquet file (`*.parquet`): then a
/// Parquet input's rows are written as Parquet.
fn is_parquet_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// A progress bar over the inputs' octets, on stderr when it is a
/// terminal; the length is known when every input is a plain file.
fn progress_bar(inputs: &[Input]) -> Option<ProgressBar> {
    if !io::stderr().is_terminal() {
        return None;
    }
    let known: Option<u64> = inputs.iter().map(Input::plain_len).sum();
    let bar = match known {
        Some(len) => ProgressBar::new(len).with_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} \
                 eta {eta}",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template(
                "{spinner} {bytes} {binary_bytes_per_sec}",
            )
            .expect("valid template"),
        ),
    };
    Some(bar)
}

/// Prints the not-a-URL warning (if any) and the summary on stderr.
fn report(
    c: &Counts,
    bad: &[(String, u64, BadKind)],
    max_url_len: usize,
    start: Instant,
) {
    debug_assert_eq!(
        c.lines,
        c.allowed + c.disallowed + c.unknown + c.invalid
    );
    debug_assert!(c.empty <= c.invalid);
    if c.invalid > 0 {
        let mut at: Vec<String> = bad
            .iter()
            .map(|(name, line, kind)| {
                let note = match kind {
                    BadKind::Empty => " (empty)",
                    BadKind::TooLong => " (too long)",
                    BadKind::NotUrl => "",
                    BadKind::AmbiguousHost => " (ambiguous host)",
                };
                format!("{name}:{line}{note}")
            })
            .collect();
        if c.invalid > bad.len() as u64 {
            at.push("...".to_string());
        }
        let long = match c.too_long {
            0 => String::new(),
            n => format!(", {n} longer than {max_url_len} octets"),
        };
        let are = if c.invalid == 1 {
            "1 line is not a URL".to_string()
        } else {
            format!("{} lines are not URLs", c.invalid)
        };
        diag!(
            "robofilter: warning: {are} ({} empty{long}): {}",
            c.empty,
            at.join(", ")
        );
    }
    let secs = start.elapsed().as_secs_f64();
    let per_sec = c.lines as f64 / secs.max(1e-9);
    // Small runs in lines/s: "0.0 M lines/s" says nothing.
    let rate = match per_sec >= 1e5 {
        true => format!("{:.1} M lines/s", per_sec / 1e6),
        false => format!("{per_sec:.0} lines/s"),
    };
    let mut line = String::new();
    write!(
        line,
        "robofilter: {} {}: {} allowed, {} disallowed, {} unknown, {} \
         invalid ({} empty) in {secs:.3} s ({rate})",
        c.lines,
        if c.lines == 1 { "line" } else { "lines" },
        c.allowed,
        c.disallowed,
        c.unknown,
        c.invalid,
        c.empty
    )
    .expect("string");
    if c.refused > 0 {
        write!(line, "; {} allowed lines dropped by --respect", c.refused)
            .expect("string");
    }
    diag!("{line}");
}

/// The usage keys given, each once, in the order first given.
fn dedup(keys: &[UsageKey]) -> Vec<UsageKey> {
    let mut out: Vec<UsageKey> = Vec::with_capacity(keys.len());
    for &k in keys {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// With several agents, each agent's own counts, after the summary (whose
/// counts are of all agents together: a line is disallowed if any agent
/// is disallowed, unknown if none is and any is unknown).
fn report_agents(agents: &[String], per_agent: &[[u64; 4]]) {
    for (agent, [allowed, disallowed, unknown, invalid]) in
        agents.iter().zip(per_agent)
    {
        diag!(
            "robofilter: {agent}: {allowed} allowed, {disallowed} disallowed, \
             {unknown} unknown, {invalid} invalid"
        );
    }
}
