//! Frontiers as the field stores them (issue 41): Common Crawl's CDXJ
//! lines (plain and multi-member gzip, decoded on several threads), and
//! Parquet in and out, each against `filter` on the same URLs as lines;
//! damaged files fail with their offset and leave no output.

use std::io::Write as _;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int64Array, LargeStringArray,
    RecordBatch, StringArray, StringViewArray,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::util::Dir;

/// A bundle-free rules file: `/private` disallowed for every agent,
/// `/a-only` for the agent `A` alone.
fn rules(dir: &Dir) {
    dir.write(
        "robots.txt",
        "User-agent: A\nDisallow: /a-only\n\nUser-agent: *\n\
         Disallow: /private\n",
    );
    dir.run(&["compile", "robots.txt", "-o", "rules.bin"]).ok();
}

/// `n` URLs of one host, some disallowed, some not URLs at all; row `i`
/// is `None` where `nulls` and `i % 7 == 3`.
fn urls(n: usize, nulls: bool) -> Vec<Option<String>> {
    (0..n)
        .map(|i| match i % 7 {
            3 if nulls => None,
            5 => Some(format!("not a url {i}")),
            1 => Some(format!("http://example.com/private/{i}")),
            2 => Some(format!("http://example.com/a-only/{i}?q=caf\u{e9}")),
            _ => Some(format!("http://example.com/page/{i}")),
        })
        .collect()
}

/// A CDXJ record in Common Crawl's shape for `url`, with the URL's `/`
/// escaped in every third record (as some writers do).
fn cdxj_record(i: usize, url: &str) -> String {
    let json_url = match i % 3 {
        0 => url.replace('/', "\\/"),
        _ => url.to_string(),
    };
    format!(
        "com,example)/page/{i} 20240{:09} {{\"url\": \"{json_url}\", \
         \"mime\": \"text/html\", \"mime-detected\": \"text/html\", \
         \"status\": \"200\", \"digest\": \"SHA1DIGEST{i:08}\", \"length\": \
         \"{}\", \"offset\": \"{}\", \"filename\": \
         \"crawl-data/CC-MAIN-2024-10/segments/1/warc/CC-MAIN-{i}.warc.gz\"}}\n",
        i,
        1000 + i,
        i * 1000
    )
}

/// Gzip of `text`, one member.
fn gzip(text: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    );
    gz.write_all(text).unwrap();
    gz.finish().unwrap()
}

/// `filter --emit all` (verdict columns, then the line), split per line
/// into its verdict columns.
fn verdict_columns(out: &str, agents: usize) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split('\t').take(agents).map(str::to_string).collect())
        .collect()
}

#[test]
fn cdxj_lines_decide_as_their_urls_and_pass_through_whole() {
    let dir = Dir::new("cdxj");
    rules(&dir);
    let urls = urls(6000, false);
    let mut cdxj = String::new();
    let mut lines = String::new();
    for (i, url) in urls.iter().enumerate() {
        let url = url.as_deref().unwrap();
        cdxj.push_str(&cdxj_record(i, url));
        lines.push_str(url);
        lines.push('\n');
    }
    // Two damaged records: JSON cut short, and no `url`.
    cdxj.push_str("com,example)/x 2024 {\"url\": \"http://example.com/x\"\n");
    cdxj.push_str("com,example)/y 2024 {\"status\": \"200\"}\n");
    lines.push_str("not a url\nnot a url\n");
    dir.write("u.cdxj", &cdxj);
    dir.write("u.txt", &lines);
    // One member per record, as Common Crawl writes them: many segments.
    let members: Vec<u8> =
        cdxj.split_inclusive('\n').flat_map(|r| gzip(r.as_bytes())).collect();
    assert!(members.len() > 1 << 20, "several segments per thread");
    dir.write("u.cdxj.gz", &members);
    let all = ["filter", "rules.bin", "--agent", "A", "--agent", "B"];
    let all = [&all[..], &["--emit", "all"]].concat();
    let want = dir.run(&[&all[..], &["u.txt"]].concat()).ok();
    for (input, j) in [("u.cdxj", "1"), ("u.cdxj.gz", "1"), ("u.cdxj.gz", "2")]
    {
        let args = [&all[..], &["--input-format", "cdxj", "-j", j, input]];
        let run = dir.run(&args.concat());
        let got = run.ok();
        assert_eq!(verdict_columns(&got, 2), verdict_columns(&want, 2));
        // The line whole after the verdict columns.
        let passed: Vec<&str> =
            got.lines().map(|l| l.splitn(3, '\t').nth(2).unwrap()).collect();
        let records: Vec<&str> = cdxj.lines().collect();
        assert_eq!(passed, records, "{input} -j {j}");
        // Every 7th URL and the two damaged records are invalid.
        run.stderr_has(&[&format!("{input}:6, {input}:13"), "859 invalid"]);
    }
    // The selected lines, whole.
    let allowed = dir
        .run(&["filter", "rules.bin", "--agent", "B", "--input-format"])
        .code;
    assert_eq!(allowed, Some(2), "a format is named");
    let got = dir
        .run(&[
            "filter",
            "rules.bin",
            "--agent",
            "B",
            "--input-format",
            "cdxj",
            "--emit",
            "disallowed",
            "u.cdxj.gz",
        ])
        .ok();
    let want: Vec<&str> = cdxj
        .lines()
        .filter(|l| l.contains("\\/private\\/") || l.contains("/private/"))
        .collect();
    assert_eq!(got.lines().collect::<Vec<_>>(), want);
    // --json and --explain: the URL unescaped, the record whole.
    let json = dir
        .run(&[
            "filter",
            "rules.bin",
            "--agent",
            "B",
            "--input-format",
            "cdxj",
            "--emit",
            "all",
            "--json",
            "--explain",
            "u.cdxj",
        ])
        .ok();
    let rows: Vec<serde_json::Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 6002);
    assert_eq!(rows[1]["url"], "http://example.com/private/1");
    assert_eq!(rows[1]["verdict"], "disallow");
    assert_eq!(rows[1]["pattern"], "/private");
    assert_eq!(rows[1]["record"], cdxj.lines().nth(1).unwrap());
    assert_eq!(rows[3]["url"], "http://example.com/page/3");
    assert_eq!(rows[6001]["url"], serde_json::Value::Null);
    assert_eq!(rows[6001]["verdict"], "invalid");
}

#[test]
fn a_damaged_gzip_member_fails_with_its_offset_and_writes_nothing() {
    let dir = Dir::new("cdxj-damaged");
    rules(&dir);
    let records: Vec<String> = urls(4000, false)
        .iter()
        .enumerate()
        .map(|(i, u)| cdxj_record(i, u.as_deref().unwrap()))
        .collect();
    let members: Vec<Vec<u8>> =
        records.iter().map(|r| gzip(r.as_bytes())).collect();
    let bad = 2500;
    let at: usize = members[..bad].iter().map(Vec::len).sum();
    let mut bytes = members.concat();
    // The CRC-32 of the member in the middle.
    let crc = at + members[bad].len() - 8;
    bytes[crc] ^= 0xff;
    dir.write("bad.cdxj.gz", &bytes);
    for j in ["1", "2"] {
        dir.run(&[
            "filter",
            "rules.bin",
            "--agent",
            "B",
            "--input-format",
            "cdxj",
            "-j",
            j,
            "bad.cdxj.gz",
            "-o",
            "out.txt",
        ])
        .fails_without_output(&[
            "URL list 'bad.cdxj.gz'",
            &format!("the gzip member at octet {at} is damaged"),
            "`gzip -t FILE` checks it",
        ]);
        assert!(!dir.join("out.txt").exists(), "-j {j}: output written");
    }
    // Cut inside the last member.
    dir.write("cut.cdxj.gz", &members.concat()[..bytes.len() - 5]);
    let last: usize = members[..members.len() - 1].iter().map(Vec::len).sum();
    dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "B",
        "--input-format",
        "cdxj",
        "cut.cdxj.gz",
        "-o",
        "out.txt",
    ])
    .fails_without_output(&[
        &format!("the gzip member at octet {last} is cut short"),
        "decompressed octets: the file is damaged or cut",
    ]);
    assert!(!dir.join("out.txt").exists());
}

/// A Parquet file of `columns` (name, array) in `row_groups` groups.
pub(crate) fn write_parquet(
    dir: &Dir,
    name: &str,
    columns: Vec<(&str, ArrayRef)>,
) {
    let columns = columns.into_iter().map(|(n, a)| (n, a, true));
    let batch = RecordBatch::try_from_iter_with_nullable(columns).unwrap();
    let schema = batch.schema();
    let file = std::fs::File::create(dir.join(name)).unwrap();
    // Small row groups: a file of several.
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1500))
        .build();
    let mut w = ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

pub(crate) fn read_parquet(dir: &Dir, name: &str) -> RecordBatch {
    let file = std::fs::File::open(dir.join(name)).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    arrow_select_concat(&batches)
}

/// The rows of each row group of a Parquet file, and each one's column
/// chunks' (offset, compressed size).
pub(crate) fn row_groups(
    dir: &Dir,
    name: &str,
) -> Vec<(i64, Vec<(u64, u64)>)> {
    let file = std::fs::File::open(dir.join(name)).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| {
            let chunks = g.columns().iter().map(|c| c.byte_range()).collect();
            (g.num_rows(), chunks)
        })
        .collect()
}

/// Batches concatenated (the test reads small files).
fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
    let schema = batches[0].schema();
    let columns = (0..schema.fields().len())
        .map(|c| {
            let parts: Vec<&dyn Array> =
                batches.iter().map(|b| b.column(c).as_ref()).collect();
            arrow_select::concat::concat(&parts).unwrap()
        })
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}

/// A verdict column's values, `None` where null.
pub(crate) fn verdicts(column: &dyn Array) -> Vec<Option<String>> {
    let d = column
        .as_any()
        .downcast_ref::<DictionaryArray<arrow_array::types::UInt8Type>>()
        .expect("dictionary<uint8, string>");
    let values =
        d.values().as_any().downcast_ref::<StringArray>().unwrap().clone();
    (0..d.len())
        .map(|i| d.key(i).map(|k| values.value(k).to_string()))
        .collect()
}

#[test]
fn parquet_comes_out_with_its_columns_and_the_lines_verdicts() {
    let dir = Dir::new("parquet");
    rules(&dir);
    let n = 5000;
    let urls = urls(n, true);
    let lines: String = urls
        .iter()
        .map(|u| format!("{}\n", u.as_deref().unwrap_or("")))
        .collect();
    dir.write("u.txt", &lines);
    let two = ["--agent", "A", "--agent", "B"];
    let want = dir
        .run(
            &[&["filter", "rules.bin", "--emit", "all"][..], &two, &["u.txt"]]
                .concat(),
        )
        .ok();
    let want = verdict_columns(&want, 2);
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
    let extra: ArrayRef = Arc::new(LargeStringArray::from_iter(
        (0..n).map(|i| (i % 5 != 0).then(|| format!("extra {i}"))),
    ));
    let url_columns: Vec<(&str, ArrayRef)> = vec![
        ("string", Arc::new(StringArray::from(urls.clone()))),
        ("large_string", Arc::new(LargeStringArray::from(urls.clone()))),
        ("string_view", Arc::new(StringViewArray::from(urls.clone()))),
        (
            "dictionary",
            Arc::new(
                urls.iter()
                    .map(|u| u.as_deref())
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
        ),
    ];
    for (kind, url) in url_columns {
        let name = format!("{kind}.parquet");
        let columns =
            vec![("id", ids.clone()), ("url", url), ("extra", extra.clone())];
        write_parquet(&dir, &name, columns);
        let input = read_parquet(&dir, &name);
        let args = [
            &["filter", "rules.bin", "--emit", "all", "--explain"][..],
            &two,
            &["--input-format", "parquet", &name, "-o", "out.parquet"],
        ];
        dir.run(&args.concat()).ok();
        let out = read_parquet(&dir, "out.parquet");
        // Every row written: the input's row groups copied, their column
        // chunks of the same sizes, then the added columns.
        let (ins, outs) =
            (row_groups(&dir, &name), row_groups(&dir, "out.parquet"));
        assert_eq!(ins.len(), 4, "{kind}");
        assert_eq!(outs.len(), ins.len(), "{kind}");
        for ((in_rows, ic), (out_rows, oc)) in ins.iter().zip(&outs) {
            assert_eq!(in_rows, out_rows, "{kind}");
            assert_eq!(oc.len(), ic.len() + 4, "{kind}");
            for (i, o) in ic.iter().zip(oc) {
                assert_eq!(i.1, o.1, "{kind}: a chunk's size");
            }
        }
        let schema = out.schema();
        let names: Vec<&str> =
            schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "id",
                "url",
                "extra",
                "verdict_A",
                "verdict_B",
                "reason_A",
                "reason_B"
            ]
        );
        for c in 0..3 {
            assert_eq!(out.column(c), input.column(c), "{kind}: column {c}");
        }
        for (agent, column) in out.columns()[3..5].iter().enumerate() {
            let got = verdicts(column.as_ref());
            for (row, (g, u)) in got.iter().zip(&urls).enumerate() {
                match u {
                    None => assert_eq!(g, &None, "{kind} row {row}"),
                    Some(_) => assert_eq!(
                        g.as_deref(),
                        Some(want[row][agent].as_str()),
                        "{kind} row {row}"
                    ),
                }
            }
        }
        let reasons =
            out.column(6).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(reasons.value(1), "line 5: Disallow: /private");
        assert!(reasons.is_null(3));
        // --emit selects rows as it selects lines; one agent: `verdict`.
        let args = [
            &["filter", "rules.bin", "--agent", "B", "--emit", "disallowed"][..],
            &["--input-format", "parquet", &name, "-o", "out.parquet"],
        ];
        dir.run(&args.concat()).ok();
        let out = read_parquet(&dir, "out.parquet");
        // Rows cut: encoded, in one row group (of up to 128 Ki rows).
        assert_eq!(row_groups(&dir, "out.parquet").len(), 1, "{kind}");
        assert_eq!(out.schema().field(3).name(), "verdict");
        let ids = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let want_ids: Vec<i64> =
            (0..n as i64).filter(|i| i % 7 == 1).collect();
        assert_eq!(ids.values().to_vec(), want_ids, "{kind}");
        // Without a Parquet output: URL lines, as from the lines.
        let args = [
            &["filter", "rules.bin", "--emit", "all"][..],
            &two,
            &["--input-format", "parquet", &name],
        ];
        let text = dir.run(&args.concat()).ok();
        assert_eq!(verdict_columns(&text, 2), want, "{kind}");
    }
}

#[test]
fn parquet_parts_keep_their_order_and_damage_is_named() {
    let dir = Dir::new("parquet-parts");
    rules(&dir);
    std::fs::create_dir(dir.join("parts")).unwrap();
    for part in 0..3 {
        let urls: Vec<String> = (0..100)
            .map(|i| format!("http://example.com/p{part}/{i}"))
            .collect();
        let name = format!("parts/part-{part:05}.parquet");
        write_parquet(
            &dir,
            &name,
            vec![("url", Arc::new(StringArray::from(urls)))],
        );
    }
    dir.write("parts/_SUCCESS", "");
    let args = ["filter", "rules.bin", "--agent", "B", "--input-format"];
    let args =
        [&args[..], &["parquet", "parts", "-o", "out.parquet"]].concat();
    dir.run(&args).ok();
    let out = read_parquet(&dir, "out.parquet");
    let urls = out.column(0).as_any().downcast_ref::<StringArray>().unwrap();
    let want: Vec<String> = (0..3)
        .flat_map(|p| {
            (0..100).map(move |i| format!("http://example.com/p{p}/{i}"))
        })
        .collect();
    assert_eq!(
        urls.iter().map(|u| u.unwrap().to_string()).collect::<Vec<_>>(),
        want
    );
    // A cut footer: the file and the footer's offset, nothing written.
    let whole = dir.read("parts/part-00001.parquet");
    dir.write("cut.parquet", &whole[..whole.len() - 3]);
    let args = ["filter", "rules.bin", "--agent", "B", "--input-format"];
    dir.run(
        &[&args[..], &["parquet", "cut.parquet", "-o", "o.parquet"]].concat(),
    )
    .fails_without_output(&[
        "Parquet file 'cut.parquet'",
        &format!("its footer (at octet {})", whole.len() - 3 - 8),
        "the file is damaged or cut",
    ]);
    assert!(!dir.join("o.parquet").exists());
    // A damaged page: the row group and its offset.
    let mut bad = whole.clone();
    for b in &mut bad[4..200] {
        *b = 0xff;
    }
    dir.write("bad.parquet", &bad);
    dir.run(
        &[&args[..], &["parquet", "bad.parquet", "-o", "o.parquet"]].concat(),
    )
    .fails_without_output(&[
        "Parquet file 'bad.parquet': row group 0 (at octet 4)",
    ]);
    assert!(!dir.join("o.parquet").exists());
    // A damaged column other than the URLs': the copied row groups are
    // read through too (each page of each column chunk), as the encoding
    // path decodes them; the file and the row group's offset named.
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..3000));
    let urls: Vec<String> =
        (0..3000).map(|i| format!("http://example.com/{i}")).collect();
    write_parquet(
        &dir,
        "two.parquet",
        vec![("url", Arc::new(StringArray::from(urls))), ("id", ids)],
    );
    let groups = row_groups(&dir, "two.parquet");
    assert_eq!(groups.len(), 2);
    let (group_at, id_at) = (groups[1].1[0].0, groups[1].1[1].0 as usize);
    let mut bad = dir.read("two.parquet");
    for b in &mut bad[id_at..id_at + 12] {
        *b = 0xff;
    }
    dir.write("bad-id.parquet", &bad);
    for emit in ["all", "disallowed"] {
        let args = [&args[..], &["parquet", "bad-id.parquet"]].concat();
        dir.run(&[&args[..], &["--emit", emit, "-o", "o.parquet"]].concat())
            .fails_without_output(&[&format!(
                "Parquet file 'bad-id.parquet': row group 1 (at octet \
                 {group_at}) cannot be read"
            )]);
        assert!(!dir.join("o.parquet").exists(), "--emit {emit}");
    }
    // Lines into a Parquet output: refused before any work.
    dir.write("u.txt", "http://example.com/\n");
    dir.run(&[
        "filter",
        "rules.bin",
        "--agent",
        "B",
        "u.txt",
        "-o",
        "o.parquet",
    ])
    .fails_without_output(&["needs Parquet inputs"]);
}

#[test]
fn a_gzip_file_of_one_long_member_decodes_as_a_stream() {
    let dir = Dir::new("gzip-one-member");
    rules(&dir);
    // Over a batch of compressed octets at -j 1 and 2 (1 MiB a thread).
    let lines: String = (0..200_000u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let dir = if i % 5 == 0 { "private" } else { "page" };
            format!("http://example.com/{dir}/{h:016x}/{i}\n")
        })
        .collect();
    dir.write("u.txt", &lines);
    let gz = gzip(lines.as_bytes());
    assert!(gz.len() > 2 << 20, "longer than a batch: {}", gz.len());
    dir.write("u.txt.gz", &gz);
    let args = ["filter", "rules.bin", "--agent", "B", "--emit", "all"];
    let want = dir.run(&[&args[..], &["u.txt"]].concat()).ok();
    for j in ["1", "2"] {
        let got = dir.run(&[&args[..], &["-j", j, "u.txt.gz"]].concat()).ok();
        assert!(got == want, "-j {j}: the lines differ");
    }
}

#[test]
fn parquet_values_with_line_ends_stay_one_line_each() {
    let dir = Dir::new("parquet-line-ends");
    rules(&dir);
    // A `\n` or `\r` inside a value (in one batch of many, not the
    // first) makes that row one invalid line, its row number named.
    let urls: Vec<Option<String>> = (0..3000)
        .map(|i| match i {
            1700 => Some("http://example.com/a\nb".to_string()),
            2100 => Some("http://example.com/c\rd".to_string()),
            2101 => Some("http://example.com/private\r".to_string()),
            _ if i % 9 == 4 => Some(format!("http://example.com/private/{i}")),
            _ => Some(format!("http://example.com/page/{i}")),
        })
        .collect();
    write_parquet(
        &dir,
        "u.parquet",
        vec![("url", Arc::new(StringArray::from(urls.clone())))],
    );
    let args = ["filter", "rules.bin", "--agent", "B", "--emit", "all"];
    let run = dir.run(
        &[&args[..], &["--input-format", "parquet", "u.parquet"]].concat(),
    );
    let out = run.ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), urls.len());
    for (row, (line, url)) in lines.iter().zip(&urls).enumerate() {
        let url = url.as_deref().unwrap();
        let want = match row {
            1700 | 2100 | 2101 => {
                format!("invalid\t{}", url.replace(['\n', '\r'], "\0"))
            }
            _ if url.contains("/private/") => format!("disallow\t{url}"),
            _ => format!("allow\t{url}"),
        };
        assert_eq!(*line, want, "row {row}");
    }
    run.stderr_has(&["u.parquet:1701", "u.parquet:2101", "u.parquet:2102"]);
}
