//! Unit tests of the I/O crate.

use std::fs::{self, File};
use std::io::{self, Read, Write};

use robofilter::{Bundle, Config};

use crate::bundle_file::Span;
use crate::lease;
use crate::*;

#[test]
fn aligned_read_keeps_every_byte() {
    /// Hands out at most 1000 bytes per read.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
    for len in [0, 1, 8, 65_535, 65_536, 65_537, 300_000] {
        for hint in [0, len / 2, len, len + 1, 2 * len + 9] {
            let got = Aligned::read_from(Trickle(&data[..len]), hint).unwrap();
            assert_eq!(got.as_bytes(), &data[..len], "{len} {hint}");
            assert_eq!(got.as_bytes().as_ptr() as usize % 8, 0);
        }
    }
}

/// A file read to an end short of its length at open fails, naming
/// both lengths; a whole or a grown one reads to its end.
#[test]
fn whole_fails_on_a_file_cut_underneath() {
    let data = b"http://x/a\nhttp://x/b\n";
    for len in [0, 5, data.len() as u64] {
        let mut got = Vec::new();
        Whole::new(&data[..], len).read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
    }
    let mut got = Vec::new();
    let err = Whole::new(&data[..], 100).read_to_end(&mut got);
    let err = err.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    assert!(err.to_string().contains("shrank from 100 octets to 22"));
    assert_eq!(got, data);
}

/// Members read through a [`MemberFile`] are the bundle's own octets,
/// with the member 8-byte aligned, whether they go to an arena with
/// room for all, one that runs out after a few (the rest go to the
/// heap), or none; each is read once.
#[test]
fn members_read_into_an_arena_or_the_heap_are_the_files_octets() {
    use robofilter::{BundleBuilder, Fetch};
    let mut builder = BundleBuilder::new(Config::new());
    for i in 0..40 {
        let body = format!(
            "User-agent: *\nDisallow: /{i}\n{}",
            "Allow: /x*y\n".repeat(i)
        );
        let fetch = Fetch::Http { status: 200, body: body.into_bytes() };
        builder.add(&format!("h{i}.test"), fetch).unwrap();
    }
    let bytes = builder.finish().unwrap();
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(&bytes).unwrap();
    let index = BundleIndex::open(tmp.path(), "bundle").unwrap();
    let index = index.expect("a bundle file");
    let bundle = index.load().unwrap();
    let n = bundle.member_len();
    assert!(n >= 40, "{n} members");
    let whole = Aligned::from(&bytes[..]);
    let full = Bundle::from_bytes(whole.as_bytes()).unwrap();
    // Room for about the first half of the members.
    let half: usize = (0..n / 2)
        .map(|m| bundle.member_span(m))
        .map(|s| s.padding() + s.member_len())
        .sum();
    let small = || Arena { map: memmap2::MmapMut::map_anon(half).ok() };
    let arenas = [Arena::for_bundle(&index, n), small(), Arena { map: None }];
    for (k, mut arena) in arenas.into_iter().enumerate() {
        let file = MemberFile::new(&index, n, &mut arena);
        for m in (0..n).chain(0..n) {
            let span = bundle.member_span(m);
            let (padding, member) = file.read(m, span).unwrap();
            let at = span.offset() as usize;
            assert_eq!(padding, &bytes[at..at + span.padding()]);
            assert_eq!(member, &bytes[at + span.padding()..][..member.len()]);
            assert_eq!(member.len(), span.member_len());
            assert_eq!(member.as_ptr() as usize % 8, 0, "arena {k}");
            full.member_from(m, padding, member).unwrap();
        }
        let in_arena = file
            .slots
            .iter()
            .filter(|s| matches!(**s.get().unwrap(), Ok(Span::Arena(_))))
            .count();
        match k {
            0 => assert_eq!(in_arena, n),
            1 => assert!(in_arena > 0 && in_arena < n, "{in_arena}"),
            _ => assert_eq!(in_arena, 0),
        }
    }
}

/// A bundle nobody has open for writing is leased and mapped: its
/// members are the file's octets where the map holds them (no copy),
/// 8-byte aligned; dropping the index gives the lease back, so that
/// the file can be opened for writing again without waiting.
#[cfg(target_os = "linux")]
#[test]
fn a_leased_bundle_is_read_from_its_map() {
    // Leases and maps need the handlers (the CLI's).
    install_signal_handlers();
    use std::os::unix::fs::OpenOptionsExt;

    use robofilter::{BundleBuilder, Fetch};
    let mut builder = BundleBuilder::new(Config::new());
    for i in 0..12 {
        let body = format!("User-agent: *\nDisallow: /{i}*x\n");
        let fetch = Fetch::Http { status: 200, body: body.into_bytes() };
        builder.add(&format!("h{i}.test"), fetch).unwrap();
    }
    let bytes = builder.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.bundle");
    fs::write(&path, &bytes).unwrap();
    let index = BundleIndex::open(&path, "bundle").unwrap().unwrap();
    if !index.is_mapped() {
        println!("skipped: this file system grants no read lease");
        return;
    }
    let map = index.map.as_ref().unwrap().as_ptr_range();
    let bundle = index.load().unwrap();
    let n = bundle.member_len();
    let mut arena = Arena::for_bundle(&index, n);
    assert!(arena.map.is_none(), "an arena beside the map");
    let file = MemberFile::new(&index, n, &mut arena);
    for m in 0..n {
        let span = bundle.member_span(m);
        let (padding, member) = file.read(m, span).unwrap();
        let at = span.offset() as usize + span.padding();
        assert_eq!(padding.len(), span.padding());
        assert_eq!(member, &bytes[at..at + span.member_len()]);
        assert!(map.contains(&member.as_ptr()), "member {m} copied");
        assert_eq!(member.as_ptr() as usize % 8, 0);
    }
    // A writer that would wait for the lease fails at once instead.
    let nonblocking_writer = || {
        fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
    };
    drop(file);
    drop(index);
    nonblocking_writer().expect("the lease was given back");
    // Given back when dropped, though the file stays open.
    let reader = File::open(&path).unwrap();
    let lease = lease::Lease::take(&reader, "b.bundle").unwrap();
    drop(lease);
    nonblocking_writer().expect("the lease was given back");
    drop(reader);
}

/// A window maps the octets asked for, from any offset (not only a
/// page's start), up to the length at open; a file now shorter than
/// that fails before any octet is mapped.
#[test]
fn windows_map_from_any_offset_and_refuse_a_cut_file() {
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    // Mapping needs the handlers that stop on SIGBUS (the CLI's).
    install_signal_handlers();
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(&data).unwrap();
    let file = tmp.as_file();
    let len = data.len() as u64;
    for (offset, min_len, populate) in [
        (0, 10, true),
        (1, 4096, false),
        (4095, 10, true),
        (4097, 9_000, false),
    ] {
        let w = map_window(file, offset, min_len, len, populate, "in");
        let w = w.unwrap().expect("a temporary file can be mapped");
        let start = offset as usize;
        let end = data.len().min(start + min_len);
        assert_eq!(w.data(), &data[start..end], "{offset} {min_len}");
        assert_eq!(w.end(), end as u64);
    }
    let err = map_window(file, 4096, 10, len + 1, true, "in").err().unwrap();
    let err = format!("{err:#}");
    assert!(
        err.contains("'in': the file shrank from 10001 octets to 10000"),
        "{err}"
    );
}
