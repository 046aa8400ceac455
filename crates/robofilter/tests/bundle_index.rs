//! A bundle read as `filter` reads a bundle file: its index first
//! (`Bundle::index_len`, `Bundle::from_index`), then each member from its
//! span of the file (`Bundle::member_span`, `Bundle::member_from`). It
//! accepts exactly what the whole-file reader (`Bundle::from_bytes`,
//! `Bundle::member`) accepts, and its members decide alike.

use std::sync::Arc;

use robofilter::{
    AlignedBytes, Bundle, BundleBuilder, Config, Fetch, HostCache, Members,
    Outcome, UrlChecker,
};

use crate::differential::{Rng, random_robots, random_url};

/// Member `m`'s padding and octets, copied out of `file` as a positioned
/// read would, the member into an aligned buffer of its own.
fn span_of(
    bundle: &Bundle<'_>,
    file: &[u8],
    m: usize,
) -> (Vec<u8>, AlignedBytes) {
    let span = bundle.member_span(m);
    let (from, to) = (span.offset() as usize, span.end() as usize);
    let (padding, member) = file[from..to].split_at(span.padding());
    (padding.to_vec(), AlignedBytes::from(member))
}

/// Whether the index reader loads the bundle and every member of `file`.
fn lazy_loads(file: &[u8]) -> bool {
    let head = &file[..file.len().min(64)];
    let Ok(index_len) = Bundle::index_len(head, file.len() as u64) else {
        return false;
    };
    let index = AlignedBytes::from(&file[..index_len]);
    let Ok(bundle) = Bundle::from_index(index.as_bytes(), file.len() as u64)
    else {
        return false;
    };
    (0..bundle.member_len()).all(|m| {
        let (padding, member) = span_of(&bundle, file, m);
        bundle.member_from(m, &padding, member.as_bytes()).is_ok()
    })
}

/// Whether the whole-file reader loads the bundle and every member.
fn whole_loads(file: &[u8]) -> bool {
    let bytes = AlignedBytes::from(file);
    let Ok(b) = Bundle::from_bytes(bytes.as_bytes()) else { return false };
    (0..b.member_len()).all(|m| b.member(m).is_ok())
}

fn small_bundle() -> Vec<u8> {
    let mut b = BundleBuilder::new(Config::new());
    let body = |s: &str| Fetch::http(200, 0, s.as_bytes().to_vec());
    b.add("a.example", body("User-agent: *\nDisallow: /x\n")).unwrap();
    b.add("b.example", body("User-agent: b\nAllow: /\nDisallow: /*.pdf$\n"))
        .unwrap();
    b.add("c.example", Fetch::http(404, 0, Vec::new())).unwrap();
    b.add("d.example", Fetch::Unreachable).unwrap();
    b.add("e.example", body("User-agent: *\nDisallow: /e\n")).unwrap();
    b.finish().unwrap()
}

/// Every single-octet change and every truncation: the index reader
/// accepts the file exactly when the whole-file reader does (only the
/// undamaged file).
#[test]
fn index_reader_rejects_what_the_whole_reader_rejects() {
    let good = small_bundle();
    assert!(lazy_loads(&good) && whole_loads(&good));
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80] {
            let mut bad = good.clone();
            bad[i] ^= flip;
            assert_eq!(lazy_loads(&bad), whole_loads(&bad), "flip at {i}");
            assert!(!lazy_loads(&bad), "flip {flip:#x} at {i} accepted");
        }
    }
    for len in 0..good.len() {
        assert!(!lazy_loads(&good[..len]), "truncation to {len} accepted");
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(!lazy_loads(&longer));
    // The index alone, given the wrong file length, or members handed
    // the wrong octets.
    let index_len = Bundle::index_len(&good[..64], good.len() as u64).unwrap();
    let index = AlignedBytes::from(&good[..index_len]);
    let len = good.len() as u64;
    assert!(Bundle::from_index(index.as_bytes(), len + 1).is_err());
    assert!(Bundle::index_len(&good[..64], len - 1).is_err());
    let bundle = Bundle::from_index(index.as_bytes(), len).unwrap();
    assert!(bundle.member(0).is_err(), "no member bytes to load from");
    let (padding, member) = span_of(&bundle, &good, 1);
    let (_, other) = span_of(&bundle, &good, 0);
    assert!(bundle.member_from(1, &padding, other.as_bytes()).is_err());
    let short = AlignedBytes::from(&member.as_bytes()[1..]);
    assert!(bundle.member_from(1, &padding, short.as_bytes()).is_err());
}

/// Random bundles: every host's verdicts through members read span by
/// span (by a `Members::with_reader`) are those through the whole file.
#[test]
fn members_read_by_span_decide_as_the_whole_file() {
    let mut rng = Rng::new(13);
    let mut b = BundleBuilder::new(Config::new());
    let bodies: Vec<Vec<u8>> =
        (0..40).map(|_| random_robots(&mut rng)).collect();
    let hosts: Vec<String> =
        (0..120).map(|i| format!("h{i}.example")).collect();
    for h in &hosts {
        let body = bodies[rng.below(bodies.len())].clone();
        b.add(h, Fetch::http(200, 0, body)).unwrap();
    }
    let file = b.finish().unwrap();
    let whole = AlignedBytes::from(&file[..]);
    let whole = Bundle::from_bytes(whole.as_bytes()).unwrap();
    let index_len = Bundle::index_len(&file[..64], file.len() as u64).unwrap();
    let index = AlignedBytes::from(&file[..index_len]);
    let lazy =
        Bundle::from_index(index.as_bytes(), file.len() as u64).unwrap();
    // What a reader keeps: each member's span, read on first use.
    let spans: Vec<std::sync::OnceLock<(Vec<u8>, AlignedBytes)>> =
        (0..lazy.member_len()).map(|_| Default::default()).collect();
    let reads = std::sync::atomic::AtomicUsize::new(0);
    let read = |m: usize, _span| {
        let (padding, member) = spans[m].get_or_init(|| {
            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            span_of(&lazy, &file, m)
        });
        Ok((&padding[..], member.as_bytes()))
    };
    let whole_members = Arc::new(Members::new(&whole));
    let lazy_members = Arc::new(Members::with_reader(&lazy, &read));
    let agents = ["FooBot", "BarBot"];
    let a = UrlChecker::bundle(&whole, whole_members, &agents).unwrap();
    let z = UrlChecker::bundle(&lazy, lazy_members, &agents).unwrap();
    let (mut ca, mut cz) = (HostCache::new(), HostCache::new());
    let mut seen = std::collections::HashSet::new();
    for _ in 0..3000 {
        let host = &hosts[rng.below(hosts.len())];
        // random_url's host is `x`: put this host in its place.
        let tail = random_url(&mut rng);
        assert!(tail.starts_with(b"http://x"));
        let mut url = format!("http://{host}").into_bytes();
        url.extend_from_slice(&tail[8..]);
        let (mut x, mut y) = ([Outcome::Invalid; 2], [Outcome::Invalid; 2]);
        a.check_each(&url, &mut ca, &mut x).unwrap();
        z.check_each(&url, &mut cz, &mut y).unwrap();
        assert_eq!(x, y, "{}", String::from_utf8_lossy(&url));
        seen.extend(x);
    }
    assert!(
        seen.contains(&Outcome::Allow) && seen.contains(&Outcome::Disallow)
    );
    let reads = reads.into_inner();
    assert!(reads > 0 && reads <= lazy.member_len(), "{reads} reads");
}
