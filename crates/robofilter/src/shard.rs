//! The shard of a host: which of N sharded bundles (or fetcher
//! processes) holds it. Part of the file format and of every script that
//! partitions a frontier the way robofilter does, so it is defined exactly.
//!
//! - The *host key* is the bundle host key ([`crate::url::url_host_key`]):
//!   the host lower-cased, `:port` kept unless it is empty, `:80` or `:443`,
//!   an IPv6 literal in brackets. `HTTP://WWW.Example.com:80/a` has the key
//!   `www.example.com`.
//! - Its hash is **XXH3-64** (the published xxHash3 64-bit variant) of the
//!   key's octets with **seed 0**, no terminator.
//! - The shard of a key among `N` shards is `hash mod N`, numbered from 0.
//!
//! Python's `xxhash.xxh3_64_intdigest(key) % n`, Java's
//! `LongHashFunction.xx3()` (read as unsigned) and `xxhsum -H3` all agree
//! with [`host_hash64`].

use crate::url::{NoHostKey, normalize_host, scheme_len, url_host_key};

/// The name of the host hash, as written in a shard index.
pub const HOST_HASH_NAME: &str = "xxh3-64";

/// The stable 64-bit hash of a bundle host key: XXH3-64 with seed 0.
///
/// ```
/// // The XXH3-64 test vector for the empty input.
/// assert_eq!(robofilter::host_hash64(b""), 0x2D06_8005_38D3_94C2);
/// ```
#[inline]
pub fn host_hash64(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

/// The shard (0-based) of a bundle host key among `shards` shards.
///
/// # Panics
///
/// If `shards` is 0.
#[inline]
pub fn shard_of_key(key: &[u8], shards: u32) -> u32 {
    assert!(shards > 0, "the number of shards must be at least 1");
    (host_hash64(key) % u64::from(shards)) as u32
}

/// The shard of `url`'s host among `shards` shards; `key` is scratch space
/// for the host key (left holding it).
///
/// ```
/// let mut key = Vec::new();
/// let a = robofilter::shard_of_url(b"https://WWW.Example.com:443/a", 8, &mut key)?;
/// let b = robofilter::shard_of_url(b"http://www.example.com/b?q", 8, &mut key)?;
/// assert_eq!(a, b);
/// assert_eq!(a, robofilter::shard_of_key(b"www.example.com", 8));
/// # Ok::<(), robofilter::NoHostKey>(())
/// ```
///
/// # Errors
///
/// As [`url_host_key`]: the URL has no host key.
///
/// # Panics
///
/// If `shards` is 0.
pub fn shard_of_url(
    url: &[u8],
    shards: u32,
    key: &mut Vec<u8>,
) -> Result<u32, NoHostKey> {
    url_host_key(url, key)?;
    Ok(shard_of_key(key, shards))
}

/// The shard of what a line names, as `robofilter shard` and the wheel's
/// `shard_of` read it: a URL or frontier line (the text up to the first
/// TAB, if it starts with `scheme://`: its host key) or a host name
/// (`Example.com`, `example.com:8080`: normalised as a bundle host key).
/// `None` if it names no host. `key` is scratch space.
///
/// ```
/// let mut key = Vec::new();
/// let url = robofilter::shard_of_line(b"https://www.example.com/a\tdepth=2", 8, &mut key);
/// let host = robofilter::shard_of_line(b"WWW.Example.com:443", 8, &mut key);
/// assert_eq!(url, host);
/// assert_eq!(robofilter::shard_of_line(b"not a host/", 8, &mut key), None);
/// ```
///
/// # Panics
///
/// If `shards` is 0.
pub fn shard_of_line(
    line: &[u8],
    shards: u32,
    key: &mut Vec<u8>,
) -> Option<u32> {
    let first = line.split(|&b| b == b'\t').next().unwrap_or_default();
    if scheme_len(first).is_some() {
        return shard_of_url(first, shards, key).ok();
    }
    let host = normalize_host(core::str::from_utf8(first).ok()?).ok()?;
    Some(shard_of_key(host.as_bytes(), shards))
}
