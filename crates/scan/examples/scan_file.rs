//! Times the line scan alone on a frontier file held in memory: `scan_lines` (two stages), `scan_next` in a loop (one pass per line) and the newline count (the floor), in interleaved rounds.
//!
//! ```text
//! cargo run --release -p robofilter-scan --features std \
//!     --example scan_file -- FILE [ROUNDS]
//! ```
//!
//! Each round times each reader once over the whole file (its order turns
//! round by round, so a neighbour's noise on a shared machine hits all
//! alike) and checks that both scans count the same lines and URLs and
//! sum the same facts; the medians are printed. Time is the thread's CPU
//! time where Linux's `/proc/thread-self/schedstat` gives it (in
//! nanoseconds), else wall time. Compare with `wc -l FILE` (a process that
//! also reads the file: user plus system time).

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Instant;

use robofilter_scan::{Line, scan_lines, scan_next};

/// What a reader found: lines, URLs, and a sum of every URL's facts (so
/// that none is optimised away, and the readers can be compared).
type Tally = (usize, usize, usize);

/// A reader of a whole file, by name.
type Reader = (&'static str, fn(&[u8]) -> Tally);

/// Adds one line to `tally`.
fn count(tally: &mut Tally, line: Option<Line>) {
    tally.0 += 1;
    if let Some(l) = line {
        tally.1 += 1;
        tally.2 += l.url_len()
            + l.line_len()
            + l.authority_end()
            + l.path_start().map_or(1, |p| p + 2)
            + l.fragment().map_or(1, |f| f + 2);
    }
}

/// The two-stage scan.
fn two_stages(buf: &[u8]) -> Tally {
    let mut tally = (0, 0, 0);
    let _ = scan_lines(buf, |_, _, line| {
        count(&mut tally, line);
        ControlFlow::<()>::Continue(())
    });
    tally
}

/// The per-line pass.
fn per_line(buf: &[u8]) -> Tally {
    let mut tally = (0, 0, 0);
    let mut start = 0;
    while start < buf.len() {
        let (len, line) = scan_next(&buf[start..]);
        count(&mut tally, line);
        start += len + 1;
    }
    tally
}

/// The newline count (memchr): no scan can be faster.
fn newlines(buf: &[u8]) -> Tally {
    let n = memchr::memchr_iter(b'\n', buf).count();
    (n + usize::from(buf.last().is_some_and(|&b| b != b'\n')), 0, 0)
}

/// Nanoseconds of this thread's CPU time, if Linux says.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Seconds `f` took on `buf`, and its answer.
fn time(f: fn(&[u8]) -> Tally, buf: &[u8]) -> (f64, Tally) {
    let (cpu, wall) = (cpu_ns(), Instant::now());
    let tally = f(black_box(buf));
    let secs = match (cpu, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 * 1e-9,
        _ => wall.elapsed().as_secs_f64(),
    };
    (secs, tally)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: scan_file FILE [ROUNDS]")?;
    let rounds: usize = args.next().map_or(Ok(11), |r| r.parse())?;
    let buf = std::fs::read(&path)?;
    let readers: [Reader; 3] = [
        ("scan_lines (two stages)", two_stages),
        ("scan_next (per line)", per_line),
        ("newline count (memchr)", newlines),
    ];
    let mut times = vec![Vec::new(); readers.len()];
    let mut tallies = vec![(0, 0, 0); readers.len()];
    for round in 0..rounds {
        for k in 0..readers.len() {
            let k = (k + round) % readers.len();
            let (secs, tally) = time(readers[k].1, &buf);
            times[k].push(secs);
            tallies[k] = tally;
        }
    }
    assert_eq!(tallies[0], tallies[1], "the two scans disagree");
    assert_eq!(tallies[0].0, tallies[2].0, "line counts differ");
    let (lines, urls, _) = tallies[0];
    println!("{path}: {} octets, {lines} lines, {urls} URLs", buf.len());
    for ((name, _), t) in readers.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        println!(
            "{name:24} {:8.2} ms  ({:.2} GB/s, {:.1} M lines/s)",
            median * 1e3,
            buf.len() as f64 / median * 1e-9,
            lines as f64 / median * 1e-6,
        );
    }
    Ok(())
}
