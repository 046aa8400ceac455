//! robofilter's columnar frontiers: Parquet files (a crawl frontier as
//! data teams keep it, or Common Crawl's columnar URL index) filtered by
//! the same decide path as frontier lines, and written back as Parquet
//! with their columns unchanged and one verdict column per agent.
//!
//! [`ParquetInputs::open`] reads every input's footer before any output
//! (a damaged or cut file fails there, naming the file and the footer's
//! offset), and checks that the URL column is a string or binary column
//! (`string`, `large_string`, `string_view`, `binary`, `large_binary`,
//! `binary_view`, or a dictionary of one). [`filter`] then reads each
//! file one row group at a time, in batches of 64 Ki rows, so that
//! memory is bounded by a row group whatever the file's size; the URLs
//! are read in place from the column's buffers, and each batch's rows
//! are decided on the worker threads. A writer thread writes the output
//! while the next batch is read and decided, in one of two ways:
//!
//! - With every row written (`--emit all`), an input's row groups are
//!   copied: only its URL column is decoded, and the output's row group
//!   is the input's column chunks copied as they are (compressed pages
//!   in the input's codec, octet for octet, 8 KiB at a time from the
//!   file), then the added columns encoded (snappy), so that the
//!   output's row groups are the input's, one for one. Each copied
//!   chunk's pages are read through first (headers parsed, pages
//!   decompressed, values counted), so that a damaged input still fails,
//!   naming its file and row group, rather than being copied. The
//!   output's footer is the one the Arrow writer writes for the same
//!   columns (its Parquet schema and `ARROW:schema`), without page
//!   indexes (column and offset indexes), which copied chunks do not
//!   carry, and with the input's chunk statistics. An input whose
//!   Parquet schema is not the one the Arrow writer writes for its
//!   columns (timestamps as INT96, say: `write::can_copy`) is encoded
//!   instead, as below.
//! - Otherwise each batch, its columns as they were plus the verdict
//!   columns (and the preference columns with `--usage`, the reason
//!   columns with `--explain`), cut to the rows `--emit` selects, is
//!   encoded, snappy-compressed, in row groups of 128 Ki rows.
//!
//! Memory is a batch of URLs and its verdicts, plus for a copied row
//! group its added columns encoded (a few octets a row, more with
//! `--explain`) and one page, or for an encoded one up to 128 Ki rows of
//! every column encoded. The output is committed only when every input
//! was read whole.
//!
//! The verdict columns are the wheel's: `dictionary<uint8, string>` with
//! the values [`VERDICTS`], null where the URL is null, named `verdict`
//! for one agent and `verdict_<agent>` for several; with `--usage`, the
//! preference columns follow (`usage_<key>`, `usage_<key>_<agent>`:
//! `unknown`, `y`, `n`, null where there is none to have); the reason
//! columns are `reason` or `reason_<agent>`, strings.
//!
//! For a text output, [`ParquetInputs::into_url_lines`] turns each file
//! into URL lines (one per row), which the frontier filter prints as it
//! prints URL lists.

mod decide;
mod read;
mod write;

#[cfg(test)]
mod tests;

use std::sync::{Arc, mpsc};

use anyhow::{Result, anyhow, bail};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use robofilter::UrlChecker;
use robofilter::UsageKey;
use robofilter_frontier::{Emit, Options, Report};
use robofilter_io::Output;

pub use crate::read::ParquetInputs;
pub use robofilter_arrow::{VERDICTS, verdict_field};

use crate::decide::Decide;
use crate::write::{Message, Writer};
use robofilter_arrow::{Urls, usage_column_name, usage_field};

/// The names of the columns added for `agents`: a verdict column per
/// agent (`verdict`, or `verdict_<agent>` for several), then per agent
/// and key of `usage` a preference column (`usage_<key>`, or
/// `usage_<key>_<agent>`: the wheel's names), then with `explain` a
/// reason column per agent (`reason`, `reason_<agent>`).
pub fn added_columns(
    agents: &[String],
    explain: bool,
    usage: &[UsageKey],
) -> Vec<String> {
    let names = |prefix: &str| -> Vec<String> {
        match agents {
            [_] => vec![prefix.to_string()],
            _ => agents.iter().map(|a| format!("{prefix}_{a}")).collect(),
        }
    };
    let mut columns = names("verdict");
    for agent in agents {
        let agent = (agents.len() > 1).then_some(agent.as_str());
        columns.extend(usage.iter().map(|&k| usage_column_name(k, agent)));
    }
    if explain {
        columns.extend(names("reason"));
    }
    columns
}

/// Decides every row of `inputs` with `checker` (the rules named
/// `rules_name` in messages) and writes the rows `options.emit` selects,
/// with their columns and the verdict columns, to `out` as one Parquet
/// file, committed once every input was read whole. Every input must
/// have the first's columns (names and types), so that the rows fit one
/// schema.
///
/// # Errors
///
/// An input whose columns differ from the first's, or that already has
/// a column named as a verdict or reason column; a row group that cannot
/// be read (the file and its offset named); an output that cannot be
/// written. Nothing is committed then.
pub fn filter(
    checker: &UrlChecker<'_>,
    rules_name: &str,
    options: &Options,
    inputs: ParquetInputs,
    out: Output,
) -> Result<Report> {
    run(checker, rules_name, options, inputs, out, true)
}

/// [`filter`]; with `copy` false, no row group is copied (every one is
/// encoded, as before copying was: the tests' reference).
fn run(
    checker: &UrlChecker<'_>,
    rules_name: &str,
    options: &Options,
    inputs: ParquetInputs,
    out: Output,
    copy: bool,
) -> Result<Report> {
    if options.json {
        bail!(
            "--json prints lines, and a Parquet output has columns: write \
             the output elsewhere than to a .parquet file, or leave out \
             --json"
        );
    }
    let Some(first) = inputs.files.first() else {
        bail!("no Parquet input");
    };
    let schema = out_schema(first.schema(), checker.agents(), options)?;
    for f in &inputs.files[1..] {
        if !same_columns(f.schema(), first.schema()) {
            bail!(
                "Parquet file '{}' has other columns than '{}' ({} against \
                 {}): the output has one schema; filter them apart",
                f.name,
                first.name,
                columns_of(f.schema()),
                columns_of(first.schema())
            );
        }
    }
    let decide = Decide {
        checker,
        name: rules_name,
        emit: options.emit,
        explain: options.explain,
        max_url_len: options.max_url_len,
        threads: options.threads.max(1),
        usage: &options.usage,
        respect: &options.respect,
    };
    // With every row written, each input whose columns can be copied
    // has its row groups copied (`write::can_copy`).
    // (Columns that have no Parquet schema: none, and the writer says
    // why.)
    let parquet = write::parquet_schema(&schema).ok();
    let input_fields = first.schema().fields().len();
    let copy: Vec<bool> = inputs
        .files
        .iter()
        .map(|f| {
            copy && options.emit == Emit::All
                && parquet
                    .as_ref()
                    .is_some_and(|p| write::can_copy(p, input_fields, f))
        })
        .collect();
    let copying = copy.contains(&true);
    let mut writer = Writer::new(out, &schema, input_fields, copying)?;
    let (queue, messages) = mpsc::sync_channel::<Message<'_>>(2);
    let mut report = Report {
        counts: Default::default(),
        per_agent: Vec::new(),
        hosts: Vec::new(),
        bad: Vec::new(),
    };
    let (run, written) = std::thread::scope(|scope| {
        let written = scope.spawn(move || -> Result<Output> {
            for message in messages {
                writer.take(message)?;
            }
            writer.finish()
        });
        let run =
            read_all(&inputs, &copy, &decide, &schema, &mut report, queue);
        (run, written.join())
    });
    let written =
        written.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    // A write error first: it is why a run stopped when its writer did.
    let out = written?;
    run?;
    out.finish()?;
    Ok(report)
}

/// Reads, decides and queues every input's rows, in order: of an input
/// to copy (`copy`), its URL column alone, and per row group the added
/// columns then the row group to copy; of the others, every column, and
/// the rows `--emit` selects with the added columns.
fn read_all<'f>(
    inputs: &'f ParquetInputs,
    copy: &[bool],
    decide: &Decide<'_, '_>,
    schema: &SchemaRef,
    report: &mut Report,
    queue: mpsc::SyncSender<Message<'f>>,
) -> Result<()> {
    // Closed: the writer stopped at an error, which the run reports.
    let send = |m: Message<'f>| {
        queue.send(m).map_err(|_| anyhow!("the output could not be written"))
    };
    for (f, &copy) in inputs.files.iter().zip(copy) {
        let mut row_base = 0u64;
        for g in 0..f.row_groups() {
            let mut rows = 0;
            f.read_row_group(g, copy, |batch| {
                // Projected for a copy: the URL column is the only one.
                let column = batch.column(if copy { 0 } else { f.url_index });
                let urls = Urls::of(column.as_ref()).expect("checked type");
                let n = batch.num_rows();
                let d = decide.batch(&urls, n).map_err(|e| anyhow!(e))?;
                if report.hosts.is_empty() && decide.checker.is_single() {
                    report.hosts = hosts_of(&urls, n);
                }
                for &(row, kind) in &d.bad {
                    if report.bad.len() < 5 {
                        let row = row_base + row + 1;
                        report.bad.push((f.name.clone(), row, kind));
                    }
                }
                row_base += n as u64;
                rows += n;
                report.counts += d.counts;
                if report.per_agent.len() < d.agents.len() {
                    report.per_agent.resize(d.agents.len(), [0; 4]);
                }
                for (t, c) in report.per_agent.iter_mut().zip(&d.agents) {
                    for (t, c) in t.iter_mut().zip(c) {
                        *t += c;
                    }
                }
                let mut columns: Vec<ArrayRef> = match copy {
                    true => Vec::new(),
                    false => batch.columns().to_vec(),
                };
                columns.extend(d.verdicts);
                columns.extend(d.usage);
                columns.extend(d.reasons);
                if copy {
                    return send(Message::Added(columns));
                }
                let out = RecordBatch::try_new(Arc::clone(schema), columns)?;
                let out = match &d.selected {
                    Some(keep) => {
                        arrow_select::filter::filter_record_batch(&out, keep)?
                    }
                    None => out,
                };
                if out.num_rows() > 0 {
                    send(Message::Rows(out))?;
                }
                Ok(())
            })?;
            // An empty row group is left out, as the rows path leaves it
            // (one that the reader reads empty while its footer says
            // otherwise is not: the writer finds it damaged).
            let footer_rows = f.metadata().row_group(g).num_rows();
            if copy && (rows > 0 || footer_rows != 0) {
                send(Message::Copy { file: f, group: g })?;
            }
        }
    }
    Ok(())
}

/// A few distinct host keys among the first rows, for the warning that
/// one rules file decided several hosts.
fn hosts_of(urls: &Urls<'_>, rows: usize) -> Vec<Vec<u8>> {
    let mut hosts: Vec<Vec<u8>> = Vec::new();
    for i in 0..rows.min(64) {
        let Some((buf, len)) = urls.get(i) else { continue };
        let mut host = Vec::new();
        if robofilter::url_authority(&buf[..len], &mut host)
            && !hosts.contains(&host)
        {
            hosts.push(host);
            if hosts.len() == 3 {
                break;
            }
        }
    }
    hosts
}

/// The output's schema: the input's fields, then the added columns
/// ([`added_columns`]); an input that has one of them already is refused.
fn out_schema(
    input: &SchemaRef,
    agents: &[String],
    options: &Options,
) -> Result<SchemaRef> {
    let added = added_columns(agents, options.explain, &options.usage);
    if let Some(c) = added.iter().find(|c| input.column_with_name(c).is_some())
    {
        bail!(
            "the Parquet input already has a column '{c}', which the output \
             adds: rename it first"
        );
    }
    let mut fields: Vec<Arc<Field>> = input.fields().iter().cloned().collect();
    for name in &added[..agents.len()] {
        fields.push(Arc::new(verdict_field(name)));
    }
    let n = agents.len() * (1 + options.usage.len());
    for name in &added[agents.len()..n] {
        fields.push(Arc::new(usage_field(name)));
    }
    for name in &added[n..] {
        let ty = arrow_schema::DataType::Utf8;
        fields.push(Arc::new(Field::new(name, ty, true)));
    }
    Ok(Arc::new(Schema::new_with_metadata(fields, input.metadata().clone())))
}

/// Whether two schemas have the same columns (names and types).
fn same_columns(a: &SchemaRef, b: &SchemaRef) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| {
            x.name() == y.name() && x.data_type() == y.data_type()
        })
}

/// A schema's columns, for messages.
fn columns_of(s: &SchemaRef) -> String {
    let c: Vec<String> = s
        .fields()
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect();
    c.join(", ")
}
