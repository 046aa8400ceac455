//! Parquet inputs: each file's footer read and checked before any output
//! (a directory is its `*.parquet` files, in name order), then read one
//! row group at a time, in batches, so that memory stays bounded by a row
//! group's URL column (or its columns, when they are written out) whatever
//! the file's size.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::serialized_reader::SerializedPageReader;
use robofilter_io as files;

use robofilter_arrow::{Urls, is_url_type};

/// Rows per batch read.
pub(crate) const BATCH_ROWS: usize = 64 << 10;

/// One Parquet input, its footer read.
pub(crate) struct ParquetFile {
    pub(crate) path: PathBuf,
    pub(crate) name: String,
    /// Its length when its footer was read.
    len: u64,
    meta: ArrowReaderMetadata,
    /// The URL column's index among the schema's top-level fields.
    pub(crate) url_index: usize,
}

/// The Parquet inputs of a run, in order, each checked: a readable
/// footer and a URL column of a string or binary type.
pub struct ParquetInputs {
    pub(crate) files: Vec<ParquetFile>,
}

impl ParquetInputs {
    /// Opens `paths` (a directory: its `*.parquet` files in name order)
    /// and reads each file's footer, whose URLs are in `url_column`.
    ///
    /// # Errors
    ///
    /// A path that cannot be read, a directory without Parquet files, a
    /// damaged footer (with the file's name and the footer's offset), or
    /// a file without a string or binary column `url_column`.
    pub fn open(paths: &[PathBuf], url_column: &str) -> Result<Self> {
        let mut files = Vec::new();
        for path in paths {
            if files::is_stdin(path) {
                bail!(
                    "Parquet cannot be read from stdin (its footer is at its \
                     end): name the file"
                );
            }
            if path.is_dir() {
                let parts = parts_of(path)?;
                for part in parts {
                    files.push(ParquetFile::open(&part, url_column)?);
                }
            } else {
                files.push(ParquetFile::open(path, url_column)?);
            }
        }
        Ok(ParquetInputs { files })
    }

    /// Every file read, for the check that the output is none of them.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// The total length of the files, for a progress bar.
    pub fn len(&self) -> u64 {
        self.files.iter().map(|f| f.len).sum()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The files as URL lists for the line filter: each a stream of its
    /// URL column's values, one per line (a null one empty; a `\n` or
    /// `\r` inside a value read as a NUL, which keeps it one invalid
    /// line), so that `--json`, `--explain` and the printers work as for
    /// URL lines, and line numbers are row numbers.
    pub fn into_url_lines(self) -> (Vec<PathBuf>, Vec<files::Input>) {
        self.files
            .into_iter()
            .map(|f| {
                let path = f.path.clone();
                let lines = UrlLines::new(f);
                (path, files::Input::Stream(Box::new(lines)))
            })
            .unzip()
    }
}

/// The `*.parquet` files of a directory, in name order.
fn parts_of(dir: &Path) -> Result<Vec<PathBuf>> {
    let name = files::display(dir);
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory '{name}'"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()
        .with_context(|| format!("cannot read directory '{name}'"))?;
    parts.retain(|p| {
        p.is_file() && p.extension().is_some_and(|e| e == "parquet")
    });
    parts.sort();
    if parts.is_empty() {
        bail!("directory '{name}' holds no *.parquet file");
    }
    Ok(parts)
}

impl ParquetFile {
    fn open(path: &Path, url_column: &str) -> Result<ParquetFile> {
        let name = files::display(path);
        let (file, len) = files::open(path, "Parquet file")?;
        let Some(len) = len else {
            bail!(
                "Parquet file '{name}' is not a regular file (its footer is \
                 at its end): name the file"
            );
        };
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| {
                anyhow::anyhow!(
                    "Parquet file '{name}' ({len} octets): its footer (at \
                     octet {}) cannot be read: {e}; the file is damaged or \
                     cut (a Parquet file ends with its footer and `PAR1`)",
                    len.saturating_sub(8)
                )
            })?;
        let schema = meta.schema();
        let Some((url_index, field)) = schema.column_with_name(url_column)
        else {
            let names: Vec<&str> =
                schema.fields().iter().map(|f| f.name().as_str()).collect();
            bail!(
                "Parquet file '{name}' has no column '{url_column}' (its \
                 columns: {}); name the URLs' column with --url-column",
                names.join(", ")
            );
        };
        if !is_url_type(field.data_type()) {
            bail!(
                "Parquet file '{name}': column '{url_column}' is {}, not \
                 strings or binary",
                field.data_type()
            );
        }
        let path = path.to_path_buf();
        Ok(ParquetFile { path, name, len, meta, url_index })
    }

    /// The file's Arrow schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        self.meta.schema()
    }

    /// How many row groups it has.
    pub(crate) fn row_groups(&self) -> usize {
        self.meta.metadata().num_row_groups()
    }

    /// Reads row group `g` (all columns, or with `url_only` its URL
    /// column alone), calling `f` with each batch; an error names the
    /// file and the row group's offset.
    pub(crate) fn read_row_group(
        &self,
        g: usize,
        url_only: bool,
        mut f: impl FnMut(RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let damaged = |e: &dyn std::fmt::Display| self.damaged(g, e);
        let file = self.reopen()?;
        let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
            file,
            self.meta.clone(),
        )
        .with_row_groups(vec![g])
        .with_batch_size(BATCH_ROWS);
        if url_only {
            let mask = ProjectionMask::roots(
                self.meta.parquet_schema(),
                [self.url_index],
            );
            builder = builder.with_projection(mask);
        }
        let reader = builder.build().map_err(|e| damaged(&e))?;
        for batch in reader {
            f(batch.map_err(|e| damaged(&e))?)?;
        }
        Ok(())
    }

    /// The file opened again, once it is checked to have the length it
    /// had when its footer was read.
    pub(crate) fn reopen(&self) -> Result<File> {
        let (file, now) = files::open(&self.path, "Parquet file")?;
        if now != Some(self.len) {
            bail!(
                "Parquet file '{}' changed during the run ({} octets when \
                 its footer was read, {} now)",
                self.name,
                self.len,
                now.map_or("not a file".to_string(), |n| n.to_string())
            );
        }
        Ok(file)
    }

    /// The error of a row group `g` that cannot be read: the file and
    /// the row group's offset named.
    pub(crate) fn damaged(
        &self,
        g: usize,
        e: &dyn std::fmt::Display,
    ) -> anyhow::Error {
        let group = self.meta.metadata().row_group(g);
        let offset = group.columns().first().map_or(0, |c| c.byte_range().0);
        anyhow::anyhow!(
            "Parquet file '{}': row group {g} (at octet {offset}) cannot be \
             read: {e}; the file is damaged or was changed during the run",
            self.name
        )
    }

    /// The file's Parquet metadata (its footer).
    pub(crate) fn metadata(&self) -> &ParquetMetaData {
        self.meta.metadata()
    }

    /// The index among the Parquet leaf columns of the URL column (a
    /// string or binary column is one leaf).
    pub(crate) fn url_leaf(&self) -> Option<usize> {
        let descr = self.meta.parquet_schema();
        (0..descr.num_columns())
            .find(|&i| descr.get_column_root_idx(i) == self.url_index)
    }

    /// Reads every page of row group `g`'s column chunks but the URL
    /// column's (which the reader decodes) from `file`: each page header
    /// parsed and each page decompressed, and the values counted against
    /// the chunk's, so that a damaged chunk is not copied as it is into
    /// the output (what decoding every column found, but for damage that
    /// only decoding the values would find); an error names the file and
    /// the row group's offset. One page is held at a time.
    pub(crate) fn check_row_group(&self, file: &File, g: usize) -> Result<()> {
        let group = self.meta.metadata().row_group(g);
        let url = self.url_leaf();
        let file = file.try_clone().with_context(|| {
            format!("cannot read Parquet file '{}'", self.name)
        })?;
        let file = Arc::new(file);
        let rows = usize::try_from(group.num_rows()).unwrap_or(usize::MAX);
        for (leaf, chunk) in group.columns().iter().enumerate() {
            if Some(leaf) == url {
                continue;
            }
            let pages = SerializedPageReader::new(
                Arc::clone(&file),
                chunk,
                rows,
                None,
            )
            .map_err(|e| self.damaged(g, &e))?;
            let mut values = 0i64;
            for page in pages {
                let page = page.map_err(|e| self.damaged(g, &e))?;
                if page.is_data_page() {
                    values += i64::from(page.num_values());
                }
            }
            if values != chunk.num_values() {
                let e = format!(
                    "column {} has {values} values in its pages, {} in the \
                     footer",
                    chunk.column_path(),
                    chunk.num_values()
                );
                return Err(self.damaged(g, &e));
            }
        }
        Ok(())
    }
}

/// A Parquet file's URL column as lines (see
/// [`ParquetInputs::into_url_lines`]).
struct UrlLines {
    file: Arc<ParquetFile>,
    /// The next row group to read.
    next: usize,
    buf: Vec<u8>,
    at: usize,
}

impl UrlLines {
    fn new(file: ParquetFile) -> UrlLines {
        UrlLines { file: Arc::new(file), next: 0, buf: Vec::new(), at: 0 }
    }

    /// Fills `buf` with the next row group's lines; false at the end.
    fn fill(&mut self) -> Result<bool> {
        if self.next >= self.file.row_groups() {
            return Ok(false);
        }
        self.buf.clear();
        self.at = 0;
        let buf = &mut self.buf;
        let file = Arc::clone(&self.file);
        file.read_row_group(self.next, true, |batch| {
            // Projected: the URL column is the batch's only one.
            let column = batch.column(0);
            let urls = Urls::of(column.as_ref()).expect("checked type");
            let from = buf.len();
            let rows = batch.num_rows();
            for i in 0..rows {
                if let Some((v, len)) = urls.get(i) {
                    buf.extend_from_slice(&v[..len]);
                }
                buf.push(b'\n');
            }
            // One `\n` per row and no `\r`, as nearly always: two scans
            // of the batch's lines tell; otherwise each value is mended.
            let lines = &buf[from..];
            if memchr::memchr_iter(b'\n', lines).count() != rows
                || memchr::memchr(b'\r', lines).is_some()
            {
                let mut at = from;
                for i in 0..rows {
                    let len = urls.get(i).map_or(0, |(_, len)| len);
                    for b in &mut buf[at..at + len] {
                        if matches!(*b, b'\n' | b'\r') {
                            *b = 0;
                        }
                    }
                    at += len + 1;
                }
            }
            Ok(())
        })?;
        self.next += 1;
        Ok(true)
    }
}

impl Read for UrlLines {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.buf.len() {
            let more =
                self.fill().map_err(|e| io::Error::other(format!("{e:#}")))?;
            if !more {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
