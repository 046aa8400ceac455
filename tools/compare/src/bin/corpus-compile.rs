//! corpus-compile: compiles every `*.txt` of a directory (one robots.txt
//! per host) with robofilter, loads each rules file back, and reports how
//! many groups got which engine, the sizes, and the compile times (CPU time
//! of this one thread; run it on an otherwise idle core).
//!
//! Usage: `corpus-compile DIR [google|rfc9309]` (see `tools/bench/corpus`).

use std::time::Instant;

use robofilter::{AlignedBytes, Compiler, Config, Dialect, EngineKind, Rules};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: corpus-compile DIR [DIALECT]");
    let dialect: Dialect = args
        .next()
        .map(|d| d.parse().expect("dialect: google or rfc9309"))
        .unwrap_or_default();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("readable directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();

    let compiler = Compiler::with_config(Config::new().dialect(dialect));
    let (mut bytes_total, mut groups) = (0usize, 0usize);
    let mut engines = [0usize; 4];
    let mut times: Vec<(f64, String)> = Vec::with_capacity(files.len());
    let start = Instant::now();
    for f in &files {
        let body = std::fs::read(f).expect("readable file");
        let t = Instant::now();
        let bytes = compiler.compile(&body).expect("compiles");
        times.push((t.elapsed().as_secs_f64(), f.display().to_string()));
        bytes_total += bytes.len();
        let aligned = AlignedBytes::from(&bytes[..]);
        let rules = Rules::from_bytes(aligned.as_bytes()).expect("loads");
        for g in rules.groups() {
            groups += 1;
            engines[match g.engine() {
                EngineKind::VerdictDfa => 0,
                EngineKind::SplitDfa => 1,
                EngineKind::Direct => 2,
                EngineKind::AllowAll => 3,
            }] += 1;
        }
    }
    let total = start.elapsed().as_secs_f64();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let median = times[times.len() / 2].0;
    println!(
        "| dialect | files | groups | dfa | split-dfa | direct | allow-all | total MB | mean KB/file | compile s (all) | median ms/file |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    println!(
        "| {dialect} | {} | {groups} | {} | {} | {} | {} | {:.1} | {:.1} | {total:.1} | {:.2} |",
        files.len(),
        engines[0],
        engines[1],
        engines[2],
        engines[3],
        bytes_total as f64 / 1e6,
        bytes_total as f64 / 1e3 / files.len() as f64,
        median * 1e3,
    );
    println!();
    println!("slowest files:");
    for (secs, name) in times.iter().take(5) {
        println!("  {secs:.2} s  {name}");
    }
}
