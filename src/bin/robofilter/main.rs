//! The `robofilter` command-line tool.
//!
//! The library stays pure; this binary owns argument parsing, memory maps,
//! threads, output and exit codes (see `--help` for the exit statuses).

mod args;
mod compile;
mod explain;
mod files;
mod filter;
mod inspect;
mod sources;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

/// The exit status of every error (clap's usage errors use it too).
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("robofilter: {err:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Check(a) => explain::check(a),
        Command::Compile(a) => compile::run(a),
        Command::Filter(a) => filter::run(a),
        Command::Explain(a) => explain::explain(a),
        Command::Inspect(a) => inspect::run(a),
    }
}

/// A reader of our stdout went away (`robofilter ... | head`): not an
/// error, like a SIGPIPE death but with status 0.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
