//! `robofilter shard --shards N [FILE...]`: the shard of each URL or host,
//! as `compile --shards N` places it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::args::ShardArgs;
use robofilter_io::{self as files, Input, Output};

pub fn run(args: ShardArgs) -> Result<()> {
    let paths = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    let inputs: Vec<_> =
        paths.iter().map(|p| (p.as_path(), "URL list")).collect();
    files::check_streams_once(&inputs)?;
    let read: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    match &args.output {
        Some(out) => files::check_output_not_input(out, &read)?,
        None => files::check_stdout_not_input(&read)?,
    }
    let mut out = Output::new(args.output.as_deref())?;
    // Every input is opened before any output, as `filter` does.
    let inputs: Vec<Input> =
        paths.iter().map(|p| Input::open(p)).collect::<Result<_>>()?;
    let (mut lines, mut keyless, mut examples) = (0u64, 0u64, Vec::new());
    let mut key = Vec::new();
    let mut line = Vec::new();
    for (path, input) in paths.iter().zip(inputs) {
        let name = files::display(path);
        let mut reader =
            io::BufReader::with_capacity(1 << 20, input.into_reader(path)?);
        let mut number = 0u64;
        loop {
            line.clear();
            let whole = read_line(&mut reader, &mut line, MAX_LINE_LEN)
                .with_context(|| format!("cannot read '{name}'"))?;
            let Some(whole) = whole else { break };
            number += 1;
            lines += 1;
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            match whole.then(|| {
                robofilter::shard_of_line(text, args.shards, &mut key)
            }) {
                Some(Some(s)) => write!(out, "{s}\t")?,
                _ => {
                    keyless += 1;
                    if examples.len() < 5 {
                        examples.push(format!("{name}:{number}"));
                    }
                    out.write_all(b"-\t")?;
                }
            }
            out.write_all(text)?;
            if !whole {
                // The rest of an over-long line, streamed through.
                copy_line(&mut reader, &mut out)
                    .with_context(|| format!("cannot read '{name}'"))?;
            }
            out.write_all(b"\n")?;
        }
    }
    out.finish()?;
    if keyless > 0 {
        diag!(
            "robofilter: warning: {keyless} of {lines} lines have no host \
             key (shard `-`): {}{}",
            examples.join(", "),
            if keyless > 5 { ", ..." } else { "" }
        );
    }
    Ok(())
}

/// Lines longer than this have no shard (`-`) and are passed through.
const MAX_LINE_LEN: usize = 64 << 10;

/// Reads one line (without its `\n`) into `line`, at most `cap` octets:
/// `None` at the end of the input, `Some(false)` if the line goes on past
/// `cap` (the rest is still to be read).
fn read_line(
    r: &mut impl io::BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    let mut any = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(true));
        }
        any = true;
        let room = cap - line.len();
        match memchr::memchr(b'\n', &buf[..buf.len().min(room)]) {
            Some(k) => {
                line.extend_from_slice(&buf[..k]);
                r.consume(k + 1);
                return Ok(Some(true));
            }
            None if buf.len() >= room => {
                line.extend_from_slice(&buf[..room]);
                r.consume(room);
                return Ok(Some(false));
            }
            None => {
                let n = buf.len();
                line.extend_from_slice(buf);
                r.consume(n);
            }
        }
    }
}

/// Copies the rest of the current line (up to and without its `\n`).
fn copy_line(
    r: &mut impl io::BufRead,
    out: &mut impl Write,
) -> io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(k) => {
                out.write_all(&buf[..k])?;
                r.consume(k + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                out.write_all(buf)?;
                r.consume(n);
            }
        }
    }
}
