//! Unit tests of the frontier filter.

use std::borrow::Cow;
use std::io::Write;

use anyhow::Result;
use robofilter::{MatchPath, Outcome, UrlChecker};

use crate::counts::*;
use crate::decide::*;
use crate::print::*;
use crate::sink::*;
use crate::*;

#[test]
fn classify_lines() {
    let url = |s: &'static [u8]| Line::Url(s, MatchPath::from_url(s));
    let bad = |s: &'static [u8]| Line::Invalid(s);
    let cases: &[(&[u8], Line<'_>)] = &[
        (b"http://x/a", url(b"http://x/a")),
        (b"http://x/a\r", url(b"http://x/a")),
        (b"s3+a.b-c://k", url(b"s3+a.b-c://k")),
        (b"http://x/\xe3\x83\x84", url(b"http://x/\xe3\x83\x84")),
        (b"", Line::Empty),
        (b"\r", Line::Empty),
        (b"\r\r", bad(b"\r")),
        (b"x.example/a", bad(b"x.example/a")),
        (b"1http://x/", bad(b"1http://x/")),
        (b"://x/", bad(b"://x/")),
        (b"http:/x", bad(b"http:/x")),
        (b"http://x/a b", url(b"http://x/a b")),
        (b"http://x/a\tb", url(b"http://x/a")),
        (b"http://x/a\t\x00\r", url(b"http://x/a")),
        (b"http://x/a \tb", bad(b"http://x/a \tb")),
        (b"http://x/a ", bad(b"http://x/a ")),
        (b"http://x/\x7f", bad(b"http://x/\x7f")),
        (b" http://x/", bad(b" http://x/")),
        (b"\thttp://x/", bad(b"\thttp://x/")),
    ];
    for (line, want) in cases {
        assert_eq!(classify(line), *want, "{:?}", line.escape_ascii());
    }
}

/// Output gathered in memory, in order.
impl Put for Vec<u8> {
    fn put(&mut self, out: Emitted) -> Result<Vec<u8>> {
        for part in out.parts() {
            self.extend_from_slice(&part);
        }
        let mut buf = out.out;
        buf.clear();
        Ok(buf)
    }
}

/// Streams `input` in blocks of `block_len` octets; returns the
/// `--emit all` output, the counts and the reported lines.
fn stream(
    input: &[u8],
    block_len: usize,
) -> (String, Counts, Vec<(String, u64, BadKind)>) {
    stream_for(&["bot"], input, block_len)
}

/// [`stream_for`] with `--emit all`.
fn stream_for(
    agents: &[&str],
    input: &[u8],
    block_len: usize,
) -> (String, Counts, Vec<(String, u64, BadKind)>) {
    stream_emit(agents, input, block_len, Emit::All)
}

/// [`stream`] for `agents` and `emit`; checks that a memory-mapped
/// file of the same octets gives the same, for one worker and for two
/// (windows read in when mapped, or faulted in and unmapped on another
/// thread; lines output as they are passed through from the window).
fn stream_emit(
    agents: &[&str],
    input: &[u8],
    block_len: usize,
    emit: Emit,
) -> (String, Counts, Vec<(String, u64, BadKind)>) {
    let decide = |mapped| decide_for(agents, input, block_len, emit, mapped);
    let streamed = decide(None);
    for workers in [1, 2] {
        let mapped = decide(Some(workers));
        let what = format!("mapped, {workers} workers, block {block_len}");
        assert_eq!(mapped.0, streamed.0, "{what}");
        assert_eq!(
            format!("{:?}", (mapped.1, &mapped.2)),
            format!("{:?}", (streamed.1, &streamed.2)),
            "{what}"
        );
    }
    streamed
}

/// A rules file whose one group disallows `/d` for every agent.
fn slash_d_rules() -> robofilter::AlignedBytes {
    let robots = b"User-agent: *\nDisallow: /d\n";
    let bytes = robofilter::Compiler::new().compile(robots).unwrap();
    robofilter::AlignedBytes::from(&bytes[..])
}

/// A decider printing `emit` lines (no JSON, no reasons) with
/// `checker`, lines longer than `max_url_len` being invalid.
fn decider<'r, 'a>(
    checker: &'r UrlChecker<'a>,
    emit: Emit,
    max_url_len: usize,
) -> Decider<'r, 'a> {
    Decider {
        checker,
        name: "rules",
        emit,
        json: false,
        explain: false,
        max_url_len,
        format: crate::Format::Lines,
        usage: &[],
        respect: &[],
    }
}

/// A sink into memory, with blocks of `block_len` octets and `workers`
/// workers, that has written nothing yet.
fn empty_sink(block_len: usize, workers: usize) -> Sink<Vec<u8>> {
    Sink {
        out: Vec::new(),
        block_len,
        counts: Counts::default(),
        agents: Vec::new(),
        hosts: Vec::new(),
        bad: Vec::new(),
        spare: Vec::new(),
        progress: None,
        workers,
    }
}

/// Decides `input` for `agents` with blocks of `block_len` octets,
/// streamed, or from a file (memory-mapped in windows of at least 22
/// octets, most of them not starting on a page) for `mapped` workers.
fn decide_for(
    agents: &[&str],
    input: &[u8],
    block_len: usize,
    emit: Emit,
    mapped: Option<usize>,
) -> (String, Counts, Vec<(String, u64, BadKind)>) {
    let bytes = slash_d_rules();
    let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
    let checker = UrlChecker::rules(&rules, agents).unwrap();
    let decider = decider(&checker, emit, 20);
    let mut sink = empty_sink(block_len, mapped.unwrap_or(1));
    let mut file = FileState { name: "in", line_base: 0 };
    if mapped.is_some() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(input).unwrap();
        let len = input.len() as u64;
        sink.mapped(&decider, tmp.as_file(), len, &mut file).unwrap();
    } else {
        sink.stream(&decider, input, &mut file).unwrap();
    }
    (String::from_utf8(sink.out).unwrap(), sink.counts, sink.bad)
}

#[test]
fn columns_are_the_outcomes_names() {
    use Outcome::*;
    for o in [Allow, Disallow, Unknown, Invalid] {
        let mut out = Vec::new();
        write_column(&mut out, o);
        assert_eq!(out, format!("{}\t", o.as_str()).as_bytes());
    }
}

#[test]
fn stream_carries_lines_across_blocks() {
    let input =
        b"http://x/a\nhttp://x/d/l\n\nbad\nhttp://x/d/long/long/long\n\
                  http://x/d";
    let want = "allow\thttp://x/a\n\
                disallow\thttp://x/d/l\n\
                invalid\t\n\
                invalid\tbad\n\
                invalid\thttp://x/d/long/long/long\n\
                disallow\thttp://x/d\n";
    for block_len in [1, 2, 3, 7, 11, 16, 100] {
        let (out, counts, bad) = stream(input, block_len);
        assert_eq!(out, want, "block {block_len}");
        assert_eq!(counts.lines, 6);
        assert_eq!((counts.invalid, counts.empty, counts.too_long), (3, 1, 1));
        let bad: Vec<_> = bad.iter().map(|b| (b.1, b.2)).collect();
        assert_eq!(
            bad,
            [(3, BadKind::Empty), (4, BadKind::NotUrl), (5, BadKind::TooLong)],
            "block {block_len}"
        );
    }
    assert_eq!(stream(b"", 4).1.lines, 0);
    assert_eq!(stream(b"\n", 4).1.empty, 1);
}

/// A line longer than both the block and --max-url-len passes through
/// in pieces, accounted for as one invalid line.
#[test]
fn stream_passes_over_long_lines_through() {
    let long = format!("http://x/{}", "y".repeat(100));
    // The long line's end, and whether a line follows it.
    let ends = [("\n", true), ("\r\n", true), ("", false), ("\r", false)];
    for (last, more) in ends {
        let mut input = format!("http://x/a\n{long}{last}");
        if more {
            input.push_str("http://x/d\n");
        }
        for block_len in [4, 7, 16, 33] {
            let (out, counts, bad) = stream(input.as_bytes(), block_len);
            let mut want = format!("allow\thttp://x/a\ninvalid\t{long}\n");
            if more {
                want.push_str("disallow\thttp://x/d\n");
            }
            assert_eq!(out, want, "block {block_len} {last:?}");
            assert_eq!(counts.lines, 2 + u64::from(more));
            assert_eq!(counts.octets, input.len() as u64);
            assert_eq!(counts.too_long, 1);
            assert_eq!(
                counts.lines,
                counts.allowed + counts.disallowed + counts.invalid
            );
            assert_eq!(bad[0].1, 2);
        }
    }
}

/// With several agents, a long line passed through in pieces gets one
/// `invalid` column per agent, like a line held whole.
#[test]
fn stream_passes_over_long_lines_through_for_several_agents() {
    let long = format!("http://x/{}\tf", "y".repeat(100));
    let input = format!("http://x/d\t1\n{long}\r\nhttp://x/a\n");
    for block_len in [4, 7, 33, 1000] {
        let (out, counts, _) =
            stream_for(&["bot", "other"], input.as_bytes(), block_len);
        assert_eq!(
            out,
            format!(
                "disallow\tdisallow\thttp://x/d\t1\n\
                 invalid\tinvalid\t{long}\n\
                 allow\tallow\thttp://x/a\n"
            ),
            "block {block_len}"
        );
        assert_eq!((counts.lines, counts.too_long), (3, 1));
    }
}

/// The lengths of the runs of [`runs_frontier`].
fn run_lens() -> impl Iterator<Item = usize> {
    (1..500).step_by(3).chain((1..500).step_by(5).rev())
}

/// A frontier of allowed (`/a`) and disallowed (`/d`) lines in runs
/// of 1 to 500 lines, the sixth line of every seventh run ending in
/// `\r\n`, and a last line without `\n`.
fn runs_frontier() -> Vec<u8> {
    let mut input = Vec::new();
    for (k, run) in run_lens().enumerate() {
        let path = if k % 2 == 0 { "a" } else { "d" };
        for i in 0..run {
            let cr = k % 7 == 3 && i == 5;
            let end = if cr { "\r\n" } else { "\n" };
            write!(input, "http://x/{path}{i}{end}").unwrap();
        }
    }
    input.extend_from_slice(b"http://x/last");
    input
}

/// The lines of `input` whose path starts with `/a` (`allowed`) or
/// `/d`, without their `\r`, each ending in `\n`.
fn selected(input: &[u8], allowed: bool) -> String {
    let want = if allowed { "http://x/a" } else { "http://x/d" };
    let mut out = String::new();
    for line in std::str::from_utf8(input).unwrap().split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with(want) || allowed && line == "http://x/last" {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn lines_passed_through_are_the_lines_copied() {
    let input = runs_frontier();
    assert!(input.len() > 16 * MIN_PASSED_RUN);
    for (emit, allowed) in [(Emit::Allowed, true), (Emit::Disallowed, false)] {
        let want = selected(&input, allowed);
        // Blocks of several chunks and of many; the mapped runs are
        // checked against the streamed ones.
        for block_len in [CHUNK_LEN, 3 * CHUNK_LEN + 17, 1 << 12] {
            let (out, counts, _) =
                stream_emit(&["bot"], &input, block_len, emit);
            assert_eq!(out, want, "{emit:?}, block {block_len}");
            let lines = run_lens().sum::<usize>() as u64 + 1;
            assert_eq!(counts.lines, lines);
        }
    }
}

/// A chunk decided with `pass` holds runs of at least
/// [`MIN_PASSED_RUN`] octets that rebuild what it outputs without.
#[test]
fn passed_runs_rebuild_the_output() {
    let input = runs_frontier();
    let bytes = slash_d_rules();
    let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
    let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
    for emit in [Emit::Allowed, Emit::Disallowed] {
        let decider = decider(&checker, emit, 100);
        let copied = decider.chunk(&input, Vec::new(), false).emitted;
        assert!(copied.runs.is_empty());
        let passed = decider.chunk(&input, Vec::new(), true).emitted;
        assert!(passed.runs.len() > 10, "{emit:?}");
        assert!(!passed.out.is_empty() && passed.out.len() < input.len() / 4);
        for (_, run) in &passed.runs {
            assert!(run.len() >= MIN_PASSED_RUN);
            assert_eq!(input[run.end - 1], b'\n');
        }
        let parts = parts(&passed.out, &passed.runs, &input);
        let rebuilt: Vec<u8> =
            parts.iter().flat_map(|p| p.iter().copied()).collect();
        assert_eq!(rebuilt, copied.out, "{emit:?}");
    }
}

/// `push_text` appends exactly the line, by either copy: lengths about
/// the 128-octet cut, with the chunk ending at, before and after the
/// 128 octets, onto output that already holds octets.
#[test]
fn push_text_appends_exactly_the_line() {
    let chunk: Vec<u8> = (0..400u32).map(|i| (i % 251) as u8).collect();
    for start in [0, 1, 100, 271, 272, 273, 399] {
        for chunk_end in [start + 127, start + 128, start + 129, 400] {
            let buf = &chunk[start..chunk_end.min(400)];
            for len in (0..=buf.len()).filter(|l| l % 7 == 0 || *l > 120) {
                let mut out = b"before".to_vec();
                push_text(&mut out, buf, len);
                assert_eq!(out[..6], *b"before");
                assert_eq!(out[6..], buf[..len], "{start} {len}");
            }
        }
    }
}

#[test]
fn split_is_newline_aligned_and_complete() {
    let mut data = Vec::new();
    for i in 0..200_000 {
        data.extend_from_slice(format!("http://x/{i}\n").as_bytes());
    }
    data.extend_from_slice(b"http://x/last");
    // A line longer than two chunks, and a newline just before a cut.
    let mut long = data[..CHUNK_LEN - 1].to_vec();
    long.push(b'\n');
    long.extend(std::iter::repeat_n(b'a', 2 * CHUNK_LEN + 5));
    long.extend_from_slice(b"\nhttp://x/\n");
    for data in [&data[..], &long, b"\n", b"x", &data[..CHUNK_LEN]] {
        for chunks in [split(data), split_parallel(data)] {
            assert!(chunks.iter().all(|c| !c.is_empty()));
            assert_eq!(chunks.concat(), data);
            for c in &chunks[..chunks.len() - 1] {
                assert!(c.ends_with(b"\n"));
            }
        }
    }
    assert!(split(&data).len() > 1);
    assert_eq!(split_parallel(&long).len(), 3);
    assert!(split(b"").is_empty());
    assert!(split_parallel(b"").is_empty());
}

#[test]
fn json_strings_are_escaped_and_bytes_kept() {
    let json = |line: JsonLine<'_>| {
        let mut out = Vec::new();
        line.write(&mut out);
        String::from_utf8(out).unwrap()
    };
    let text = b"a\"b\\c\td\x7f\xe3\x83\x84";
    assert_eq!(
        json(JsonLine::new(Some(text), Outcome::Invalid)),
        "{\"url\":\"a\\\"b\\\\c\\td\x7f\u{30c4}\",\"verdict\":\"invalid\",\
         \"host\":null}\n"
    );
    let mut line = JsonLine::new(Some(b"http://x/\xff"), Outcome::Allow);
    line.host = Some(Some(Cow::Borrowed("x")));
    let agents = ["bot".to_string()];
    let why = Why::new(b"line 2: Allow: /", Some((2, b"/")));
    line.explain(&agents, vec![why]);
    assert_eq!(
        json(line),
        "{\"url_base64\":\"aHR0cDovL3gv/w==\",\"verdict\":\"allow\",\
         \"host\":\"x\",\"reason\":\"line 2: Allow: /\",\"line\":2,\
         \"pattern\":\"/\"}\n"
    );
    let mut line = JsonLine::new(None, Outcome::Invalid);
    line.explain(&agents, vec![Why::new(b"not a URL", None)]);
    assert_eq!(
        json(line),
        "{\"url\":null,\"verdict\":\"invalid\",\"host\":null,\
         \"reason\":\"not a URL\",\"line\":null,\"pattern\":null}\n"
    );
}

/// The CRC-32 of gzip (RFC 1952), bit by bit.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// A gzip member of `text` in stored deflate blocks, so that the octets
/// of `text` are in the member as they are (a `1f 8b 08 00` in `text`
/// is where a member may start, but does not).
fn stored_member(text: &[u8]) -> Vec<u8> {
    let mut member = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let mut blocks = text.chunks(u16::MAX as usize).peekable();
    if text.is_empty() {
        member.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        member.push(u8::from(blocks.peek().is_none()));
        let len = block.len() as u16;
        member.extend_from_slice(&len.to_le_bytes());
        member.extend_from_slice(&(!len).to_le_bytes());
        member.extend_from_slice(block);
    }
    member.extend_from_slice(&crc32(text).to_le_bytes());
    member.extend_from_slice(&(text.len() as u32).to_le_bytes());
    member
}

/// Lines of every kind for the gzip tests: allowed, disallowed, with
/// `\r\n`, empty, not URLs, longer than the decider's 20 octets (one
/// longer than most batches), octets where a gzip member may start, and
/// a last line without `\n`.
fn gzip_text() -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..48 {
        match i % 8 {
            0 => writeln!(text, "http://x/a/{i}").unwrap(),
            1 => write!(text, "http://x/d/{i}\r\n").unwrap(),
            2 => text.push(b'\n'),
            3 => text.extend_from_slice(b"x\x1f\x8b\x08\x00 not a URL\n"),
            4 => writeln!(text, "http://x/{}", "y".repeat(i * 4)).unwrap(),
            5 => text.extend_from_slice(b"\x1f\x8b\x08\x04\x1f\x8b\n"),
            _ => writeln!(text, "http://x/d{i}").unwrap(),
        }
    }
    text.extend_from_slice(b"http://x/last");
    text
}

/// `text` as gzip members of `len` octets each but the first (`first`
/// octets, which may be none); the members' offsets too.
fn members_of(text: &[u8], first: usize, len: usize) -> (Vec<u8>, Vec<usize>) {
    let mut gz = Vec::new();
    let mut offsets = Vec::new();
    let mut from = 0;
    let mut to = first;
    loop {
        let to_end = to.min(text.len());
        offsets.push(gz.len());
        gz.extend_from_slice(&stored_member(&text[from..to_end]));
        if to_end == text.len() {
            return (gz, offsets);
        }
        from = to_end;
        to = from + len;
    }
}

/// What [`gunzip_for`] and [`plain_for`] give: the output, the counts and
/// the reported lines (as text).
type Decided = (Vec<u8>, String);

/// Decides `input` (`--emit all`, lines longer than 20 octets invalid)
/// with `workers` workers by `read`, one of [`Sink`]'s readers.
fn decided_by(
    workers: usize,
    read: impl FnOnce(&mut Sink<Vec<u8>>, &Decider<'_, '_>) -> Result<()>,
) -> Result<Decided> {
    let bytes = slash_d_rules();
    let rules = robofilter::Rules::from_bytes(bytes.as_bytes()).unwrap();
    let checker = UrlChecker::rules(&rules, &["bot"]).unwrap();
    let decider = decider(&checker, Emit::All, 20);
    let mut sink = empty_sink(64, workers);
    read(&mut sink, &decider)?;
    Ok((sink.out, format!("{:?}", (sink.counts, sink.bad))))
}

/// The plain `text` streamed, for [`gunzip_for`] to give.
fn plain_for(text: &[u8]) -> Decided {
    decided_by(1, |sink, decider| {
        let mut file = FileState { name: "in.gz", line_base: 0 };
        sink.stream(decider, text, &mut file)
    })
    .unwrap()
}

/// The gzip file `gz` decided as [`Sink::gzip`] does, with `workers`
/// workers and segments of about `segment_len` octets.
fn gunzip_for(
    gz: &[u8],
    workers: usize,
    segment_len: usize,
) -> Result<Decided> {
    decided_by(workers, |sink, decider| {
        let mut file = FileState { name: "in.gz", line_base: 0 };
        let r = std::io::Cursor::new(gz.to_vec());
        sink.gzip_in(decider, r, &mut file, segment_len)
    })
}

/// Whatever the members' lengths and where they start (at every octet
/// of the text, empty members included), whatever the segments and
/// workers, a multi-member gzip file gives the lines of its text.
#[test]
fn gzip_members_give_the_lines_of_the_text() {
    let text = gzip_text();
    let want = plain_for(&text);
    let mut runs = 0;
    for len in [3, 17, 64, 1000] {
        for first in (0..len).filter(|f| len < 100 || f % 7 == 0) {
            let (gz, _) = members_of(&text, first, len);
            for (workers, segment_len) in
                [(1, 1), (1, 20), (2, 50), (1, 300), (2, 2000), (2, 1 << 18)]
            {
                let got = gunzip_for(&gz, workers, segment_len).unwrap();
                let what = format!(
                    "members of {len} after {first}, {workers} workers, \
                     segments of {segment_len}"
                );
                assert_eq!(got, want, "{what}");
                runs += 1;
            }
        }
    }
    assert!(runs > 1000);
}

/// A damaged member, wherever it is, stops the run with its offset; a
/// file cut inside its last member, with that member's offset.
#[test]
fn a_damaged_gzip_member_is_named_by_its_offset() {
    let text = gzip_text();
    let (gz, offsets) = members_of(&text, 30, 40);
    assert!(offsets.len() > 20);
    // Batches of several members and lines (a member or a line longer
    // than a batch is decoded as a stream, whose errors do not name the
    // member).
    for (workers, segment_len) in [(1, 100), (2, 50), (2, 200), (1, 1 << 18)] {
        for (m, &at) in offsets.iter().enumerate().skip(1).step_by(3) {
            let mut bad = gz.clone();
            // An octet of the member's text: its CRC-32 fails.
            bad[at + 20] ^= 0x01;
            let e = gunzip_for(&bad, workers, segment_len).unwrap_err();
            let e = format!("{e:#}");
            let want = format!(
                "URL list 'in.gz': the gzip member at octet {at} is \
                 damaged (its CRC-32 does not match), after {} \
                 decompressed octets",
                30 + 40 * (m - 1)
            );
            assert!(e.contains(&want), "{e}\n{want}");
        }
        let last = *offsets.last().unwrap();
        let cut = &gz[..gz.len() - 3];
        let e = gunzip_for(cut, workers, segment_len).unwrap_err();
        let want = format!(
            "URL list 'in.gz': the gzip member at octet {last} is cut \
             short by the file's end (octet {})",
            cut.len()
        );
        assert!(format!("{e:#}").contains(&want), "{e:#}");
    }
}
