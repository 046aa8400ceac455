//! The report of peer-compare: the tables, examples and notes it prints.

use super::*;

// ---------------------------------------------------------------------------
// Report

#[derive(Default)]
pub(crate) struct Report {
    pub(crate) workloads: Vec<WorkloadReport>,
    pub(crate) notes: Vec<String>,
}

pub(crate) struct WorkloadReport {
    pub(crate) name: String,
    pub(crate) rows: Vec<Row>,
    pub(crate) floor: f64,
    pub(crate) setup: Vec<(Lib, Setup)>,
    pub(crate) files: usize,
    /// URLs of one pass.
    pub(crate) urls: usize,
    pub(crate) file_names: Vec<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) examples: Vec<Examples>,
    /// The CLI rows (`None`: --no-cli, or the binary is missing in a
    /// smoke run).
    pub(crate) cli: Option<CliReport>,
}

/// One table row.
pub(crate) struct Row {
    pub(crate) workload: String,
    pub(crate) lib: Lib,
    pub(crate) rate: f64,
    /// robofilter's rate over this one, and which robofilter.
    pub(crate) ratio: Option<(f64, Lib)>,
    /// For peers: the dialect compared with; for robofilter: itself.
    pub(crate) reference: Option<Lib>,
    pub(crate) agreement: String,
    /// Timed on this many URLs (a sample or a prefix), if not all.
    pub(crate) timed_on: Option<usize>,
}

pub(crate) struct Examples {
    pub(crate) workload: String,
    pub(crate) lib: Lib,
    pub(crate) reference: Lib,
    pub(crate) compared: usize,
    pub(crate) differ: usize,
    pub(crate) kinds: BTreeMap<String, usize>,
    pub(crate) shown: Vec<Example>,
}

pub(crate) struct Example {
    pub(crate) file: String,
    pub(crate) url: String,
    pub(crate) robofilter: u8,
    pub(crate) peer: u8,
    pub(crate) kind: String,
}

impl WorkloadReport {
    /// The fastest peer's rate (not robofilter's).
    pub(crate) fn fastest_peer(&self) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| !r.lib.is_robofilter())
            .map(|r| r.rate)
            .max_by(f64::total_cmp)
    }
}

impl Report {
    pub(crate) fn print(&self, args: &Args, command: &str) {
        let mut out = String::new();
        let _ = writeln!(out, "# robofilter and its peers\n");
        let _ = writeln!(out, "command: `{command}`\n");
        let _ = writeln!(
            out,
            "Single-threaded; URLs/s per core = URLs / thread CPU time, median of {} \
             interleaved rounds. Ratio = robofilter's rate / the library's rate (the \
             robofilter dialect in brackets). robotstxt 0.3.0 parses the robots.txt \
             again for every URL, so it runs on an evenly spaced sample of at most {} \
             URLs (count shown). Peers built: texting_robots 0.2.2, robotstxt 0.3.0, \
             fast-robots 0.1.5 (all from crates.io).\n",
            args.runs, args.sample
        );
        let _ = writeln!(
            out,
            "× fastest peer = the row's rate / the fastest peer's (texting_robots, \
             fast-robots or robotstxt) in the same workload; scan ÷ row = how many \
             times faster the newline scan is (the in-process memchr scan for the \
             library rows, `wc -l` of the same file for the CLI rows). The \
             robofilter CLI rows time the released binary as a user runs it: \
             `robofilter filter RULES URLS --agent A -j 1|2 --emit all -o /dev/null` \
             on the workload's URLs written once to a file, user + sys CPU time of \
             the process (`getrusage(RUSAGE_CHILDREN)`), in the same interleaved \
             rounds; `-j 2`'s rate is per CPU-second of both threads, its wall \
             speed-up the median wall time of `-j 1` over that of `-j 2`. \
             \"Two `-j 1` at once\" is what the machine allows: twice the wall \
             time of one `-j 1` run over that of two started together (2× on \
             two free cores, 1× if only one core is to be had).\n"
        );
        let _ = writeln!(
            out,
            "| workload | library | URLs/s per core | ratio vs robofilter | \
             × fastest peer | scan ÷ row | agreement |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---|");
        for w in &self.workloads {
            let fastest = w.fastest_peer();
            let vs_peer = |rate: f64| match fastest {
                Some(f) if f > 0.0 => times(rate / f),
                _ => "—".into(),
            };
            for row in &w.rows {
                let lib = match row.timed_on {
                    Some(n) => {
                        format!("{} ({} URLs)", row.lib.label(), thousands(n))
                    }
                    None => row.lib.label().to_string(),
                };
                let ratio = match row.ratio {
                    Some((x, rf)) => format!(
                        "{} ({})",
                        times(x),
                        if rf == Lib::RfGoogle { "google" } else { "rfc9309" }
                    ),
                    None => "—".into(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {lib} | {} | {ratio} | {} | {} | {} |",
                    row.workload,
                    per_second(row.rate),
                    vs_peer(row.rate),
                    times(w.floor / row.rate),
                    row.agreement
                );
                if row.lib != Lib::RfRfc {
                    continue;
                }
                if let Some(c) = &w.cli {
                    let _ = writeln!(
                        out,
                        "| {} | robofilter CLI `-j 1` (google; process CPU) | \
                         {} | — | {} | {} | {} |",
                        w.name,
                        per_second(c.j1),
                        vs_peer(c.j1),
                        times(c.wc / c.j1),
                        c.agreement
                    );
                    let _ = writeln!(
                        out,
                        "| {} | robofilter CLI `-j 2` (per CPU-s of both \
                         threads; wall speed-up over `-j 1`: {}; two `-j 1` at \
                         once: {}) | {} | — | {} | {} | same binary and rules |",
                        w.name,
                        times(c.speedup),
                        times(c.pair),
                        per_second(c.j2),
                        vs_peer(c.j2),
                        times(c.wc / c.j2),
                    );
                }
            }
            let _ = writeln!(
                out,
                "| {} | floor: memchr newline scan (in process) | {} lines/s \
                 | — | {} | — | — |",
                w.name,
                per_second(w.floor),
                vs_peer(w.floor)
            );
            if let Some(c) = &w.cli {
                let _ = writeln!(
                    out,
                    "| {} | floor: `wc -l` of the URL file (process CPU) | \
                     {} lines/s | — | {} | — | — |",
                    w.name,
                    per_second(c.wc),
                    vs_peer(c.wc)
                );
            }
        }

        let _ = writeln!(
            out,
            "\n## Side by side (URLs per CPU-second, medians of the same \
             rounds)\n"
        );
        let _ = writeln!(
            out,
            "| workload | robofilter library (google) | CLI `-j 1` | CLI `-j 2` \
             | `-j 2` wall speed-up (two `-j 1` at once) | fast-robots | texting_robots | robotstxt \
             (sample) | newline scan: memchr / `wc -l` | library ÷ fastest peer \
             | CLI `-j 1` ÷ fastest peer | memchr ÷ library | `wc -l` ÷ CLI `-j 1` |"
        );
        let _ = writeln!(
            out,
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
        for w in &self.workloads {
            let rate = |lib| {
                w.rows.iter().find(|r| r.lib == lib).map_or(0.0, |r| r.rate)
            };
            let lib = rate(Lib::RfGoogle);
            let fastest = w.fastest_peer().unwrap_or(0.0);
            let dash = || "—".to_string();
            let c = w.cli.as_ref();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} \
                 | {} | {} |",
                w.name,
                per_second(lib),
                c.map_or_else(dash, |c| per_second(c.j1)),
                c.map_or_else(dash, |c| per_second(c.j2)),
                c.map_or_else(dash, |c| format!(
                    "{} ({})",
                    times(c.speedup),
                    times(c.pair)
                )),
                per_second(rate(Lib::Fast)),
                per_second(rate(Lib::Texting)),
                per_second(rate(Lib::Robotstxt)),
                per_second(w.floor),
                c.map_or_else(dash, |c| per_second(c.wc)),
                times(lib / fastest),
                c.map_or_else(dash, |c| times(c.j1 / fastest)),
                times(w.floor / lib),
                c.map_or_else(dash, |c| times(c.wc / c.j1)),
            );
        }

        let _ = writeln!(
            out,
            "\n## Set-up (thread CPU time, all files of the workload)\n"
        );
        let _ = writeln!(
            out,
            "| workload | files | library | set-up | set-up + one pass \
             over all URLs | failed files |"
        );
        let _ = writeln!(out, "|---|---:|---|---:|---:|---|");
        for w in &self.workloads {
            for (lib, s) in &w.setup {
                let what = match s.slowest() {
                    _ if *lib == Lib::Robotstxt => {
                        "none (parses per call)".to_string()
                    }
                    Some((i, ns)) if w.files > 1 => format!(
                        "{:.3} s (slowest {}: {:.3} s)",
                        s.total_ns() / 1e9,
                        w.file_names[i],
                        ns / 1e9
                    ),
                    _ => format!("{:.3} s", s.total_ns() / 1e9),
                };
                let failed = if s.failed.is_empty() {
                    "0".to_string()
                } else {
                    let first = s.failed.iter().take(3).map(|(f, e)| {
                        let e: String = e.chars().take(80).collect();
                        format!("{f}: {e}")
                    });
                    format!(
                        "{} (allowed-all): {}",
                        s.failed.len(),
                        first.collect::<Vec<_>>().join("; ")
                    )
                };
                let rate =
                    w.rows.iter().find(|r| r.lib == *lib).map(|r| r.rate);
                let total = match rate {
                    Some(rate) if rate > 0.0 => format!(
                        "{:.2} s{}",
                        s.total_ns() / 1e9 + w.urls as f64 / rate,
                        if *lib == Lib::Robotstxt {
                            " (extrapolated)"
                        } else {
                            ""
                        }
                    ),
                    _ => "—".into(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {what} | {total} | {failed} |",
                    w.name,
                    w.files,
                    lib.label()
                );
            }
        }

        let _ = writeln!(out, "\n## Notes\n");
        for note in &self.notes {
            let _ = writeln!(out, "- {note}");
        }
        for w in &self.workloads {
            for note in &w.notes {
                let _ = writeln!(out, "- {}: {note}", w.name);
            }
        }

        let _ = writeln!(out, "\n## Disagreements with robofilter\n");
        for w in &self.workloads {
            for ex in &w.examples {
                let rf = if ex.reference == Lib::RfGoogle {
                    "google"
                } else {
                    "rfc9309"
                };
                let _ = writeln!(
                    out,
                    "### {} — {} vs robofilter ({rf}): {} of {} differ",
                    ex.workload,
                    ex.lib.label(),
                    thousands(ex.differ),
                    thousands(ex.compared)
                );
                if !ex.kinds.is_empty() {
                    let kinds: Vec<String> = ex
                        .kinds
                        .iter()
                        .map(|(k, n)| format!("{k} {n}"))
                        .collect();
                    let what = if ex.lib == Lib::Robotstxt {
                        "known divergence kinds (crates/robofilter/tests/differential.rs)"
                    } else {
                        "by URL"
                    };
                    let _ = writeln!(out, "\n{what}: {}", kinds.join(", "));
                }
                if !ex.shown.is_empty() {
                    let _ = writeln!(
                        out,
                        "\n| robots.txt | URL | robofilter | {} | kind |",
                        ex.lib.label()
                    );
                    let _ = writeln!(out, "|---|---|---|---|---|");
                    for e in &ex.shown {
                        let url: String = e.url.chars().take(160).collect();
                        let _ = writeln!(
                            out,
                            "| {} | `{}` | {} | {} | {} |",
                            e.file,
                            url.replace('|', "%7C").replace('`', "%60"),
                            verdict(e.robofilter),
                            verdict(e.peer),
                            e.kind
                        );
                    }
                }
                let _ = writeln!(out);
            }
        }
        print!("{out}");
    }
}

pub(crate) fn verdict(v: u8) -> &'static str {
    match v {
        0 => "disallow",
        1 => "allow",
        _ => "panic",
    }
}

pub(crate) fn percent(n: usize, of: usize) -> String {
    if of == 0 {
        return "n/a".into();
    }
    let p = 100.0 * n as f64 / of as f64;
    if n == of {
        "100 %".into()
    } else if p >= 99.99 {
        format!("{p:.4} %")
    } else {
        format!("{p:.2} %")
    }
}

pub(crate) fn per_second(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

pub(crate) fn times(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.2}×")
    }
}

pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
