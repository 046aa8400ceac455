//! The Parquet output's two paths against each other: row groups copied
//! as they are (with every row written) and every row encoded, on the same
//! inputs, must read back as the same table (types, values, nulls, the
//! `ARROW:schema` and the Parquet schema), with the same counts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder};
use arrow_array::types::{Int8Type, Int32Type};
use arrow_array::{
    Array, ArrayRef, Date64Array, DictionaryArray, Float64Array, Int32Array,
    Int64Array, LargeStringArray, RecordBatch, StringArray, StringViewArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use robofilter::{AlignedBytes, Compiler, Rules, UrlChecker};
use robofilter_frontier::{Emit, Format, Options};
use robofilter_io::Output;

use crate::{ParquetInputs, run};

/// A directory of the test's own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!(
            "robofilter-columnar-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `/private` disallowed for every agent, `/a-only` for `A` alone.
const ROBOTS: &[u8] =
    b"User-agent: A\nDisallow: /a-only\n\nUser-agent: *\nDisallow: /private\n";

fn options(emit: Emit, explain: bool) -> Options {
    Options {
        emit,
        json: false,
        explain,
        max_url_len: 4096,
        threads: 2,
        format: Format::Lines,
        usage: Vec::new(),
        respect: Vec::new(),
    }
}

/// Row `i`'s URL: allowed, disallowed for one or both agents, not a URL,
/// or (every 13th row) null.
fn url(i: usize) -> Option<String> {
    match i % 13 {
        0 => None,
        4 => Some(format!("not a url {i}")),
        _ if i % 7 == 1 => Some(format!("http://example.com/private/{i}")),
        _ if i % 5 == 2 => Some(format!("https://example.com/a-only/{i}")),
        _ => Some(format!("http://h{}.example/page/{i}", i % 17)),
    }
}

/// The URL column in the Arrow type `kind`.
fn url_column(kind: &str, n: usize) -> ArrayRef {
    let urls: Vec<Option<String>> = (0..n).map(url).collect();
    match kind {
        "string" => Arc::new(StringArray::from(urls)),
        "large_string" => Arc::new(LargeStringArray::from(urls)),
        "string_view" => Arc::new(StringViewArray::from(urls)),
        "dictionary" => Arc::new(
            urls.iter()
                .map(|u| u.as_deref())
                .collect::<DictionaryArray<Int32Type>>(),
        ),
        _ => unreachable!("{kind}"),
    }
}

/// Columns around the URLs, each with nulls: an int64, a large string, a
/// dictionary, a list, a struct, a timestamp with a time zone, a float
/// and a date64 (whole days, which a coerced writer keeps).
fn extra_columns(n: usize) -> Vec<(&'static str, ArrayRef)> {
    let mut list = ListBuilder::new(Int32Builder::new());
    for i in 0..n {
        match i % 6 {
            0 => list.append_null(),
            1 => list.append(true),
            _ => {
                list.values().append_value(i as i32);
                list.values().append_null();
                list.values().append_value(-(i as i32));
                list.append(true);
            }
        }
    }
    let list: ArrayRef = Arc::new(list.finish());
    let a: ArrayRef = Arc::new(Int32Array::from_iter(
        (0..n).map(|i| (i % 4 != 0).then_some(i as i32)),
    ));
    let b: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| (i % 3 != 0).then(|| format!("b{i}"))),
    ));
    let nulls = (0..n).map(|i| i % 10 != 5).collect::<Vec<bool>>();
    let fields = vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Utf8, true),
    ];
    let strukt: ArrayRef = Arc::new(StructArray::new(
        fields.into(),
        vec![a, b],
        Some(nulls.into()),
    ));
    let day = 86_400_000i64;
    vec![
        (
            "id",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| (i % 9 != 3).then_some(i as i64)),
            )),
        ),
        (
            "note",
            Arc::new(LargeStringArray::from_iter(
                (0..n).map(|i| (i % 5 != 0).then(|| format!("note {i}"))),
            )),
        ),
        (
            "status",
            Arc::new(
                (0..n)
                    .map(|i| match i % 4 {
                        0 => None,
                        1 => Some("fetched"),
                        _ => Some("unfetched"),
                    })
                    .collect::<DictionaryArray<Int8Type>>(),
            ),
        ),
        ("outlinks", list),
        ("meta", strukt),
        (
            "seen",
            Arc::new(
                TimestampMicrosecondArray::from_iter(
                    (0..n).map(|i| (i % 8 != 2).then_some(i as i64 * 1_000)),
                )
                .with_timezone("UTC"),
            ),
        ),
        (
            "score",
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| (i % 11 != 7).then_some(i as f64 / 3.0)),
            )),
        ),
        (
            "day",
            Arc::new(Date64Array::from_iter(
                (0..n).map(|i| (i % 12 != 1).then_some(i as i64 * day)),
            )),
        ),
    ]
}

/// Writes a Parquet file of `columns` in row groups of `group` rows;
/// `coerce`: as a writer that coerces types (Date64 as a 32-bit date,
/// lists' items named `element`), whose columns cannot be copied.
fn write(
    path: &Path,
    columns: Vec<(&str, ArrayRef)>,
    group: usize,
    coerce: bool,
) {
    let columns = columns.into_iter().map(|(n, a)| (n, a, true));
    let batch = RecordBatch::try_from_iter_with_nullable(columns).unwrap();
    let schema = batch.schema();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .set_coerce_types(coerce)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// A file's table (its batches concatenated) and footer.
fn read(path: &Path) -> (RecordBatch, Arc<ParquetMetaData>) {
    let file = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let meta = Arc::clone(builder.metadata());
    let schema = Arc::clone(builder.schema());
    let batches: Vec<RecordBatch> =
        builder.build().unwrap().map(Result::unwrap).collect();
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(c, field)| {
            let parts: Vec<&dyn Array> =
                batches.iter().map(|b| b.column(c).as_ref()).collect();
            match parts.is_empty() {
                true => arrow_array::new_empty_array(field.data_type()),
                false => arrow_select::concat::concat(&parts).unwrap(),
            }
        })
        .collect();
    (RecordBatch::try_new(schema, columns).unwrap(), meta)
}

/// Filters `inputs` into `out` for agents A and B, copying row groups or
/// not; gives the counts as text.
fn filter_to(
    inputs: &[PathBuf],
    out: &Path,
    options: &Options,
    copy: bool,
) -> String {
    let bytes = Compiler::new().compile(ROBOTS).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let checker = UrlChecker::rules(&rules, &["A", "B"]).unwrap();
    let inputs = ParquetInputs::open(inputs, "url").unwrap();
    let output = Output::new(Some(out)).unwrap();
    let report =
        run(&checker, "rules", options, inputs, output, copy).unwrap();
    format!("{:?} {:?} {:?}", report.counts, report.per_agent, report.bad)
}

/// Runs both paths on `inputs` and checks that they read back the same;
/// gives the footers of the copied output and the encoded one.
fn both_paths(
    dir: &Dir,
    inputs: &[PathBuf],
    options: &Options,
) -> (Arc<ParquetMetaData>, Arc<ParquetMetaData>) {
    let (copied, encoded) =
        (dir.join("copied.parquet"), dir.join("enc.parquet"));
    let a = filter_to(inputs, &copied, options, true);
    let b = filter_to(inputs, &encoded, options, false);
    assert_eq!(a, b, "counts");
    let (a, a_meta) = read(&copied);
    let (b, b_meta) = read(&encoded);
    assert_eq!(a.schema(), b.schema(), "Arrow schemas");
    assert_eq!(a.num_rows(), b.num_rows());
    for (c, field) in a.schema().fields().iter().enumerate() {
        assert_eq!(
            a.column(c).data_type(),
            b.column(c).data_type(),
            "column {}",
            field.name()
        );
        assert_eq!(a.column(c), b.column(c), "column {}", field.name());
    }
    // The same footer but for the row groups: the Parquet schema, and
    // the key-value metadata (`ARROW:schema`).
    let (fa, fb) = (a_meta.file_metadata(), b_meta.file_metadata());
    assert_eq!(
        fa.schema_descr().root_schema(),
        fb.schema_descr().root_schema()
    );
    assert_eq!(fa.key_value_metadata(), fb.key_value_metadata());
    assert!(
        fa.key_value_metadata()
            .unwrap()
            .iter()
            .any(|kv| kv.key == "ARROW:schema")
    );
    // Both files read back whole by the reader of row groups too.
    for path in [&copied, &encoded] {
        let reader =
            SerializedFileReader::new(std::fs::File::open(path).unwrap())
                .unwrap();
        for g in 0..reader.num_row_groups() {
            reader
                .get_row_group(g)
                .unwrap()
                .get_row_iter(None)
                .unwrap()
                .count();
        }
    }
    (a_meta, b_meta)
}

/// The input's row groups, column chunk sizes included, are the output's
/// (its first columns): it was copied.
fn copied_from(
    input: &Path,
    out: &ParquetMetaData,
    groups: std::ops::Range<usize>,
) {
    let file = std::fs::File::open(input).unwrap();
    let input = SerializedFileReader::new(file).unwrap();
    let input = input.metadata();
    assert_eq!(input.num_row_groups(), groups.len());
    for (g, o) in (0..input.num_row_groups()).zip(groups) {
        let (i, o) = (input.row_group(g), out.row_group(o));
        assert_eq!(i.num_rows(), o.num_rows());
        for (c, ic) in i.columns().iter().enumerate() {
            let oc = o.column(c);
            assert_eq!(
                ic.compressed_size(),
                oc.compressed_size(),
                "group {g}"
            );
            assert_eq!(ic.num_values(), oc.num_values());
        }
    }
}

#[test]
fn copied_row_groups_read_back_as_the_encoded_output() {
    let dir = Dir::new("copy");
    let n = 5000;
    for kind in ["string", "large_string", "dictionary", "string_view"] {
        let mut columns = extra_columns(n);
        columns.insert(1, ("url", url_column(kind, n)));
        let input = dir.join(&format!("{kind}.parquet"));
        // Row groups of 1500 rows: 4 of them.
        write(&input, columns, 1500, false);
        for explain in [false, true] {
            let options = options(Emit::All, explain);
            let (copied, encoded) =
                both_paths(&dir, std::slice::from_ref(&input), &options);
            copied_from(&input, &copied, 0..4);
            // The encoded output: row groups of up to 128 Ki rows.
            assert_eq!(encoded.num_row_groups(), 1, "{kind}");
        }
    }
}

#[test]
fn row_groups_of_several_batches_are_copied_whole() {
    let dir = Dir::new("big-groups");
    // Groups of 140,000 rows: three batches each, over the 128 Ki rows of
    // an encoded row group.
    let n = 150_000;
    let mut columns = extra_columns(n);
    columns.insert(0, ("url", url_column("string", n)));
    let input = dir.join("big.parquet");
    write(&input, columns, 140_000, false);
    let (copied, encoded) = both_paths(
        &dir,
        std::slice::from_ref(&input),
        &options(Emit::All, false),
    );
    copied_from(&input, &copied, 0..2);
    assert_eq!(encoded.row_group(0).num_rows(), 128 << 10);
}

#[test]
fn parts_are_copied_in_order_and_others_are_encoded_between() {
    let dir = Dir::new("parts");
    std::fs::create_dir(dir.join("parts")).unwrap();
    let n = 3000;
    // Parts 0 and 2 as the Arrow writer writes them; part 1 coerced (its
    // Date64 column a 32-bit date, its Arrow types the same), so that its
    // Parquet schema is not the output's: encoded, between copied row
    // groups. (A coercing writer names lists' items otherwise, in their
    // Arrow type too: such parts are refused; no list here.)
    for part in 0..3 {
        let mut columns = extra_columns(n);
        columns.retain(|(name, _)| *name != "outlinks");
        columns.insert(1, ("url", url_column("large_string", n)));
        let path = dir.join(&format!("parts/part-{part:05}.parquet"));
        write(&path, columns, 1000, part == 1);
    }
    let parts = vec![dir.join("parts")];
    let (copied, encoded) =
        both_paths(&dir, &parts, &options(Emit::All, true));
    copied_from(&dir.join("parts/part-00000.parquet"), &copied, 0..3);
    // Part 1's 3,000 rows: one encoded row group.
    assert_eq!(copied.row_group(3).num_rows(), 3000);
    copied_from(&dir.join("parts/part-00002.parquet"), &copied, 4..7);
    assert_eq!(copied.num_row_groups(), 7);
    assert_eq!(encoded.num_row_groups(), 1);
    // The rows in the parts' order: the ids run 0..n three times.
    let (table, _) = read(&dir.join("copied.parquet"));
    let ids = table.column_by_name("id").unwrap();
    let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
    let want: Vec<Option<i64>> = (0..3)
        .flat_map(|_| (0..n).map(|i| (i % 9 != 3).then_some(i as i64)))
        .collect();
    assert_eq!(ids.iter().collect::<Vec<_>>(), want);
}

#[test]
fn a_partial_selection_is_encoded() {
    let dir = Dir::new("partial");
    let n = 4000;
    let mut columns = extra_columns(n);
    columns.insert(1, ("url", url_column("dictionary", n)));
    let input = dir.join("in.parquet");
    write(&input, columns, 1000, false);
    for emit in [Emit::Allowed, Emit::Disallowed, Emit::Unknown] {
        let (copied, _) = both_paths(
            &dir,
            std::slice::from_ref(&input),
            &options(emit, true),
        );
        // Rows cut: no row group is copied.
        assert!(copied.num_row_groups() <= 1, "{emit:?}");
    }
}
