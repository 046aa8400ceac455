//! `MatchPath::from_url` against an independent transcription of
//! google/robotstxt's `GetPathParamsQuery`, and `url_authority`'s contract.

#![no_main]

use libfuzzer_sys::fuzz_target;
use robofilter::{MatchPath, url_authority};

/// `GetPathParamsQuery` (google/robotstxt `robots.cc`), step by step.
fn reference(url: &[u8]) -> Vec<u8> {
    let find_from = |from: usize, pred: &dyn Fn(u8) -> bool| {
        url.get(from..)
            .and_then(|s| s.iter().position(|&b| pred(b)))
            .map(|k| from + k)
    };
    let is_stop = |b: u8| matches!(b, b'/' | b'?' | b';');
    let search_start = if url.starts_with(b"//") { 2 } else { 0 };
    let early_path = find_from(search_start, &is_stop);
    let protocol = url[search_start..]
        .windows(3)
        .position(|w| w == b"://")
        .map(|k| search_start + k);
    let protocol_end = match (protocol, early_path) {
        (Some(p), Some(e)) if e < p => search_start,
        (Some(p), _) => p + 3,
        (None, _) => search_start,
    };
    let Some(path_start) = find_from(protocol_end, &is_stop) else {
        return b"/".to_vec();
    };
    let hash = find_from(search_start, &|b| b == b'#');
    if hash.is_some_and(|h| h < path_start) {
        return b"/".to_vec();
    }
    let path_end = hash.unwrap_or(url.len());
    let mut out = Vec::new();
    if url[path_start] != b'/' {
        out.push(b'/');
    }
    out.extend_from_slice(&url[path_start..path_end]);
    out
}

fuzz_target!(|data: &[u8]| {
    let path = MatchPath::from_url(data);
    assert_eq!(path.to_vec(), reference(data), "url {data:?}");
    // The tail is borrowed from the URL and rebuilds the same path.
    let tail = path.tail();
    if !tail.is_empty() {
        let at = tail.as_ptr() as usize - data.as_ptr() as usize;
        assert!(at + tail.len() <= data.len());
        assert_eq!(MatchPath::from_url_path(tail), path);
    }

    let mut out = vec![b'x'];
    let found = url_authority(data, &mut out);
    assert_eq!(found, !out.is_empty(), "url {data:?}");
    assert!(!out.iter().any(|b| b.is_ascii_uppercase()));
    assert!(!out.iter().any(|b| b"/?#@".contains(b)));
    if found {
        // Idempotent: the same scheme with the authority found gives it back.
        let scheme = data
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
            .count();
        let mut url = data[..scheme + 3].to_vec();
        url.extend_from_slice(&out);
        url.push(b'/');
        let mut again = Vec::new();
        assert!(url_authority(&url, &mut again), "url {data:?}");
        assert_eq!(again, out, "url {data:?}");
    }
});
