//! The Parquet output: one file, whose row groups are either encoded from
//! Arrow batches (the rows `--emit` cut, or an input whose columns cannot
//! be copied), in groups of [`ROW_GROUP_ROWS`] rows, or an input's row
//! group with its column chunks copied as they are (no decoding, no
//! encoding) and only the added columns encoded.

use std::fs::File;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::Compression;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::SchemaDescriptor;
use robofilter_io::Output;

use crate::read::ParquetFile;

/// Rows per row group encoded: with the input's columns, a row group is
/// held in memory (encoded) until it is written.
const ROW_GROUP_ROWS: usize = 128 << 10;

/// What the reader hands the writer, in the output's order.
pub(crate) enum Message<'f> {
    /// Rows with all the output's columns, to encode.
    Rows(RecordBatch),
    /// The added columns of a batch of a row group to copy: encoded into
    /// that row group's added column chunks.
    Added(Vec<ArrayRef>),
    /// The end of a row group to copy: `file`'s row group `group`, its
    /// column chunks copied, then the added columns given since the last
    /// `Copy`.
    Copy { file: &'f ParquetFile, group: usize },
}

/// Column writers of a row group being encoded, and its rows so far.
struct Encoding {
    writers: Vec<ArrowColumnWriter>,
    rows: usize,
}

/// The output file being written.
pub(crate) struct Writer {
    file: SerializedFileWriter<Output>,
    factory: ArrowRowGroupWriterFactory,
    /// The output's Arrow schema: the input's fields, then the added.
    schema: SchemaRef,
    /// How many of its fields are the input's.
    input_fields: usize,
    /// The output's leaf columns that are the input's.
    input_leaves: usize,
    /// The row group of `Rows` being encoded.
    rows: Option<Encoding>,
    /// The added columns of the row group to copy, being encoded.
    added: Option<Encoding>,
    out_name: String,
}

/// The Parquet schema written for the Arrow schema `schema` (as
/// [`ArrowWriter`] converts it).
pub(crate) fn parquet_schema(
    schema: &SchemaRef,
) -> parquet::errors::Result<SchemaDescriptor> {
    ArrowSchemaConverter::new().convert(schema)
}

/// Whether `input`'s row groups can be copied as they are into an output
/// whose Parquet schema is `out` (its first `input_fields` fields the
/// input's): the input's Parquet schema is, field for field, the one
/// written for its Arrow schema (names, physical and logical types,
/// repetition, nesting, field ids), so that its column chunks fit the
/// output's footer and a reader reads them, through the output's
/// `ARROW:schema`, as it reads the Arrow writer's own. An input written
/// otherwise (say timestamps as INT96, decimals as fixed-length bytes,
/// dates of a coercing writer, lists' items named otherwise, a column
/// required there and optional in the first input) is encoded instead,
/// as is every input when a column type makes the output's schema differ.
pub(crate) fn can_copy(
    out: &SchemaDescriptor,
    input_fields: usize,
    input: &ParquetFile,
) -> bool {
    let ours = out.root_schema().get_fields();
    let theirs = input.metadata().file_metadata().schema_descr();
    let theirs = theirs.root_schema().get_fields();
    theirs.len() == input_fields
        && ours.len() >= input_fields
        && ours[..input_fields].iter().zip(theirs).all(|(a, b)| a == b)
}

impl Writer {
    /// A writer of `schema` (the input's `input_fields` fields, then the
    /// added ones) to `out`: snappy, and the `ARROW:schema` key and the
    /// Parquet schema that [`ArrowWriter`] writes for `schema`. With
    /// `copying` (some row groups will be copied), no page index (column
    /// and offset indexes) is written: copied column chunks have none, and
    /// this writer takes them for every column chunk or for none (a footer
    /// of both panics).
    pub(crate) fn new(
        out: Output,
        schema: &SchemaRef,
        input_fields: usize,
        copying: bool,
    ) -> Result<Writer> {
        let out_name = out.describe();
        let cannot = |e: parquet::errors::ParquetError| {
            anyhow!("cannot write output {out_name}: {e}")
        };
        // The properties of the Arrow writer this one replaces.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS));
        if copying {
            props = props
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_offset_index_disabled(true);
        }
        let props = props.build();
        let (file, factory) =
            ArrowWriter::try_new(out, Arc::clone(schema), Some(props))
                .and_then(ArrowWriter::into_serialized_writer)
                .map_err(cannot)?;
        let descr = file.schema_descr();
        let input_leaves = (0..descr.num_columns())
            .take_while(|&i| descr.get_column_root_idx(i) < input_fields)
            .count();
        Ok(Writer {
            file,
            factory,
            schema: Arc::clone(schema),
            input_fields,
            input_leaves,
            rows: None,
            added: None,
            out_name,
        })
    }

    /// Takes one message.
    pub(crate) fn take(&mut self, message: Message<'_>) -> Result<()> {
        match message {
            Message::Rows(batch) => self.rows(&batch),
            Message::Added(columns) => self.added(&columns),
            Message::Copy { file, group } => self.copy(file, group),
        }
    }

    fn cannot(&self, e: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("cannot write output {}: {e}", self.out_name)
    }

    /// New column writers for every column of a row group.
    fn writers(&self) -> Result<Vec<ArrowColumnWriter>> {
        let index = self.file.flushed_row_groups().len();
        self.factory.create_column_writers(index).map_err(|e| self.cannot(e))
    }

    /// Encodes `batch`, in row groups of [`ROW_GROUP_ROWS`] rows.
    fn rows(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut at = 0;
        while at < batch.num_rows() {
            let mut encoding = match self.rows.take() {
                Some(e) => e,
                None => Encoding { writers: self.writers()?, rows: 0 },
            };
            let n =
                (batch.num_rows() - at).min(ROW_GROUP_ROWS - encoding.rows);
            let part = batch.slice(at, n);
            let mut writers = encoding.writers.iter_mut();
            for (field, column) in
                self.schema.fields().iter().zip(part.columns())
            {
                let leaves = compute_leaves(field, column)
                    .map_err(|e| self.cannot(e))?;
                for leaf in leaves {
                    let writer = writers.next().expect("a writer per leaf");
                    writer.write(&leaf).map_err(|e| self.cannot(e))?;
                }
            }
            encoding.rows += n;
            at += n;
            if encoding.rows == ROW_GROUP_ROWS {
                self.write_encoded(encoding)?;
            } else {
                self.rows = Some(encoding);
            }
        }
        Ok(())
    }

    /// Writes an encoded row group.
    fn write_encoded(&mut self, encoding: Encoding) -> Result<()> {
        let out_name = &self.out_name;
        let cannot = |e| anyhow!("cannot write output {out_name}: {e}");
        let mut group = self.file.next_row_group().map_err(cannot)?;
        for writer in encoding.writers {
            let chunk = writer.close().map_err(cannot)?;
            chunk.append_to_row_group(&mut group).map_err(cannot)?;
        }
        group.close().map_err(cannot)?;
        Ok(())
    }

    /// Encodes the added columns of a batch of the row group to copy.
    fn added(&mut self, columns: &[ArrayRef]) -> Result<()> {
        let mut encoding = match self.added.take() {
            Some(e) => e,
            None => self.added_writers()?,
        };
        let fields = &self.schema.fields()[self.input_fields..];
        let mut writers = encoding.writers.iter_mut();
        for (field, column) in fields.iter().zip(columns) {
            let leaves =
                compute_leaves(field, column).map_err(|e| self.cannot(e))?;
            for leaf in leaves {
                let writer = writers.next().expect("a writer per leaf");
                writer.write(&leaf).map_err(|e| self.cannot(e))?;
            }
        }
        encoding.rows += columns.first().map_or(0, |c| c.len());
        self.added = Some(encoding);
        Ok(())
    }

    /// Writers for the added columns alone (the input's are dropped).
    fn added_writers(&self) -> Result<Encoding> {
        let mut writers = self.writers()?;
        writers.drain(..self.input_leaves);
        Ok(Encoding { writers, rows: 0 })
    }

    /// Writes `input`'s row group `g`: the rows encoded so far first (a
    /// row group of their own), then its column chunks copied from the
    /// file (each checked first: [`ParquetFile::check_row_group`]), then
    /// its added columns.
    fn copy(&mut self, input: &ParquetFile, g: usize) -> Result<()> {
        if let Some(encoding) = self.rows.take() {
            self.write_encoded(encoding)?;
        }
        let added = match self.added.take() {
            Some(e) => e,
            None => self.added_writers()?,
        };
        let meta = input.metadata().row_group(g);
        let rows = u64::try_from(meta.num_rows()).unwrap_or(0);
        if added.rows as u64 != rows {
            // The reader read another number of rows than the footer
            // says: the file is damaged.
            let e = format!("{} rows read, {rows} in the footer", added.rows);
            return Err(input.damaged(g, &e));
        }
        let file: File = input.reopen()?;
        input.check_row_group(&file, g)?;
        let out_name = &self.out_name;
        let cannot = |e| anyhow!("cannot write output {out_name}: {e}");
        let mut group = self.file.next_row_group().map_err(cannot)?;
        for chunk in meta.columns() {
            let close = ColumnCloseResult {
                bytes_written: u64::try_from(chunk.compressed_size())
                    .unwrap_or(0),
                rows_written: rows,
                metadata: chunk.clone(),
                // Pyarrow and Spark write none by default, and the
                // input's page indexes are not read: the output has none
                // (`Writer::new`); the table read is the same.
                bloom_filter: None,
                column_index: None,
                offset_index: None,
            };
            // Read (by `std::io::copy`, 8 KiB at a time) and written: a
            // read error is the input's, named with its row group.
            group.append_column(&file, close).map_err(|e| {
                anyhow!(
                    "cannot copy row group {g} of Parquet file '{}' into \
                     output {out_name}: {e}",
                    input.name
                )
            })?;
        }
        for writer in added.writers {
            let chunk = writer.close().map_err(cannot)?;
            chunk.append_to_row_group(&mut group).map_err(cannot)?;
        }
        group.close().map_err(cannot)?;
        Ok(())
    }

    /// Writes what is left and the footer, and gives back the output.
    pub(crate) fn finish(mut self) -> Result<Output> {
        if let Some(encoding) = self.rows.take() {
            self.write_encoded(encoding)?;
        }
        let out_name = &self.out_name;
        self.file
            .into_inner()
            .map_err(|e| anyhow!("cannot write output {out_name}: {e}"))
    }
}
