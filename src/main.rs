//! The `robofilter` command-line tool.
//!
//! The library stays pure; this binary owns argument parsing, memory maps,
//! threads, output and exit codes (see `--help` for the exit statuses).

/// `eprintln!` that never panics: a diagnostic that cannot be written
/// (`2>/dev/full`, a closed pipe) is dropped, and the run's exit status
/// still tells the outcome.
macro_rules! diag {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod audit;
mod compile;
mod diff;
mod explain;
mod fetch;
mod filter;
mod inspect;
mod json;
mod lint;
mod shard;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::args::{Cli, Command, Generate};

/// The exit status of every error (clap's usage errors use it too).
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    // The CLI owns its process: interrupted runs remove their temporary
    // outputs, and inputs may be memory-mapped (robofilter-io).
    robofilter_io::install_signal_handlers();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            diag!("robofilter: {err:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Prints clap's `--help`/`--version` (status 0) or usage error (status 2,
/// with our `robofilter:` prefix instead of clap's `error:`).
fn usage_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !err.use_stderr() {
        // --help, --version: stdout; a failed write is not an error worth
        // a panic.
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let text = err.render().to_string();
    let text = match err.kind() {
        // `robofilter` alone: clap prints the help; say why first.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            format!("a subcommand is required\n\n{text}")
        }
        _ => text.strip_prefix("error: ").unwrap_or(&text).to_string(),
    };
    let _ = write!(io::stderr(), "robofilter: {text}");
    ExitCode::from(EXIT_ERROR)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        // `--agent-list` adds its tokens wherever `--agent` is taken.
        Command::Check(mut a) => {
            a.agent = audit::agent_names(a.agent, &a.agent_list)?;
            explain::check(a)
        }
        Command::Compile(mut a) => {
            a.agent = audit::agent_names(a.agent, &a.agent_list)?;
            compile::run(a)
        }
        Command::Filter(mut a) => {
            a.agent = audit::agent_names(a.agent, &a.agent_list)?;
            filter::run(a)
        }
        Command::Explain(mut a) => {
            a.agent = audit::agent_names(a.agent, &a.agent_list)?;
            explain::explain(a)
        }
        Command::Fetch(a) => fetch::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Shard(a) => shard::run(a),
        Command::Generate(a) => generate(a.what),
    }
}

/// `robofilter generate man|complete-SHELL`: the man page or a shell's
/// completion script, from the same clap definitions as `--help`.
fn generate(what: Generate) -> anyhow::Result<()> {
    use clap_complete::Shell;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let shell = match what {
        Generate::Man => {
            cmd.build();
            let man = clap_mangen::Man::new(cmd.clone());
            let top_extra = cmd.get_after_help().map(|h| h.to_string());
            man.render_title(&mut out)?;
            man.render_name_section(&mut out)?;
            man.render_synopsis_section(&mut out)?;
            man.render_description_section(&mut out)?;
            man.render_options_section(&mut out)?;
            // One section per subcommand (its synopsis, description and
            // options as subsections), so that `man robofilter` holds
            // every option, instead of naming a page per subcommand.
            let subs = cmd
                .get_subcommands()
                .filter(|s| !s.is_hide_set() && s.get_name() != "help");
            for sub in subs {
                let name = format!("robofilter {}", sub.get_name());
                let man = clap_mangen::Man::new(sub.clone().bin_name(&name));
                let mut part = Vec::new();
                man.render_synopsis_section(&mut part)?;
                man.render_description_section(&mut part)?;
                man.render_options_section(&mut part)?;
                // Only what the page's own (the exit statuses) lacks.
                let extra = sub.get_after_help().map(|h| h.to_string());
                if extra.is_some_and(|h| Some(h) != top_extra) {
                    man.render_extra_section(&mut part)?;
                }
                writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
                for line in String::from_utf8_lossy(&part).lines() {
                    let line = match line.strip_prefix(".SH ") {
                        Some(title) => format!(".SS {title}"),
                        None => line.to_string(),
                    };
                    writeln!(out, "{line}")?;
                }
            }
            // The exit statuses (`after_help`) and the version.
            man.render_extra_section(&mut out)?;
            man.render_version_section(&mut out)?;
            None
        }
        Generate::CompleteBash => Some(Shell::Bash),
        Generate::CompleteZsh => Some(Shell::Zsh),
        Generate::CompleteFish => Some(Shell::Fish),
        Generate::CompletePowershell => Some(Shell::PowerShell),
        Generate::CompleteElvish => Some(Shell::Elvish),
    };
    if let Some(shell) = shell {
        clap_complete::generate(shell, &mut cmd, "robofilter", &mut out);
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.flush()?;
    Ok(())
}

/// A reader of our stdout went away (`robofilter ... | head`): not an
/// error, like a SIGPIPE death but with status 0.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let pipe = Some(io::ErrorKind::BrokenPipe);
    err.chain().any(|e| {
        // JSON written straight to the output reports its write errors as
        // serde_json's, which keep the I/O error's kind.
        e.downcast_ref::<io::Error>().map(io::Error::kind) == pipe
            || e.downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == pipe
    })
}
