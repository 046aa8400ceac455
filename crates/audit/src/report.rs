//! The audit as one self-contained HTML page: the summary's numbers (the
//! very JSON lines of `inspect --summary --json`) and every host's
//! stances, embedded as JSON and drawn by a script in the page, which
//! loads nothing from the network.
//!
//! Hosts that share their stances share one row (a string of one digit
//! per agent, the stance's index in [`Stance::COUNTED`]); the hosts are
//! one string of names, a row index per host and, with ranks, a rank per
//! host (0: none). The per-host CSV is made in the browser when asked
//! for. So the page grows with the hosts and the distinct rows, not with
//! hosts times agents.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::signal::Signal;
use crate::stance::Stance;
use crate::summary::Summary;
use crate::table::StanceTable;

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Renders the report of `summary`, counted from `table`, with each
/// host's rank if ranks were given (`host_ranks`, in the table's order),
/// and `facts` (what was audited, `(name, value)`) under the title.
///
/// ```
/// use robofilter_audit::{Stance, StanceTable, Summary, report_html};
///
/// let mut table = StanceTable::new(&["GPTBot"]);
/// table.push(b"a.example", &[Stance::BlockedEntirely]);
/// table.finish();
/// let summary = Summary::new(&table, &[None], None);
/// let html = report_html(&summary, &table, None, &[("bundle", "a.bundle".into())]);
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(!html.contains("http://") && !html.contains("https://"));
/// ```
///
/// # Panics
///
/// If `host_ranks` does not hold one entry per host of `table`.
pub fn report_html(
    summary: &Summary,
    table: &StanceTable,
    host_ranks: Option<&[Option<u32>]>,
    facts: &[(&str, String)],
) -> String {
    let tiers = summary.tiers();
    let mut data = Map::new();
    data.insert("hosts".into(), json!(summary.host_len()));
    data.insert("stances".into(), json!(Stance::COUNTED.map(Stance::as_str)));
    data.insert("labels".into(), json!(Stance::COUNTED.map(Stance::label)));
    data.insert("signals".into(), json!(Signal::ALL.map(Signal::as_str)));
    data.insert("signal_labels".into(), json!(Signal::ALL.map(Signal::label)));
    data.insert("tiers".into(), json!(tiers));
    data.insert("tier_hosts".into(), json!(summary.tier_host_len()));
    let lines = |by_category| -> Value {
        let lines = summary.lines(by_category).iter();
        Value::Array(lines.map(|l| l.to_json(tiers)).collect())
    };
    data.insert("agents".into(), lines(false));
    data.insert("categories".into(), lines(true));
    let rows: Vec<String> = (0..table.row_len())
        .map(|r| {
            let row = table.row(r).iter();
            row.map(|s| char::from(b'0' + s.index() as u8)).collect()
        })
        .collect();
    data.insert("rows".into(), json!(rows));
    let mut names = String::new();
    let mut host_rows = Vec::with_capacity(table.host_len());
    for i in 0..table.host_len() {
        if i > 0 {
            names.push('\n');
        }
        names.push_str(&String::from_utf8_lossy(table.host(i).0));
        host_rows.push(table.row_of(i));
    }
    data.insert("host_names".into(), json!(names));
    data.insert("host_rows".into(), json!(host_rows));
    if let Some(ranks) = host_ranks {
        assert_eq!(ranks.len(), table.host_len(), "one rank per host");
        let ranks: Vec<u32> = ranks.iter().map(|r| r.unwrap_or(0)).collect();
        data.insert("host_ranks".into(), json!(ranks));
    } else {
        data.insert("host_ranks".into(), Value::Null);
    }
    // `<` only occurs inside strings, where `\u003c` is the same text: the
    // script element cannot be closed by a host or agent name.
    let data = Value::Object(data).to_string().replace('<', "\\u003c");

    let mut page = String::with_capacity(data.len() + (16 << 10));
    let title = format!(
        "robots.txt stances of {} hosts toward {} agents",
        summary.host_len(),
        table.agents().len()
    );
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
    page.push_str("<meta charset=\"utf-8\">\n");
    page.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, \
         initial-scale=1\">\n",
    );
    // Nothing may load from anywhere but this file.
    page.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src \
         'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
    );
    let _ = writeln!(page, "<title>{}</title>", escape(&title));
    let _ = writeln!(page, "<style>\n{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(page, "<h1>{}</h1>", escape(&title));
    page.push_str("<p class=\"meta\">");
    for (i, (name, value)) in facts.iter().enumerate() {
        if i > 0 {
            page.push_str(" · ");
        }
        let _ = write!(page, "{}: {}", escape(name), escape(value));
    }
    page.push_str("</p>\n");
    page.push_str(
        "<p class=\"meta\">Each host's stance toward an agent is decided \
         from its compiled robots.txt over every path (blocked entirely: \
         everything but /robots.txt is disallowed), or from its fetch \
         outcome (RFC 9309: unavailable allows all, unreachable is \
         failed to fetch). A category's stance on a host is blocked \
         entirely or allows all only if it is so for every agent of the \
         category.</p>\n",
    );
    page.push_str("<p id=\"error\"></p>\n<div id=\"main\"></div>\n");
    page.push_str(
        "<noscript>The tables are drawn by the page's script; \
                   the numbers are in the JSON below.</noscript>\n",
    );
    let _ = writeln!(
        page,
        "<script type=\"application/json\" id=\"data\">{data}</script>"
    );
    let _ = writeln!(page, "<script>\n{SCRIPT}</script>\n</body>\n</html>");
    page
}

/// Text for HTML content and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
