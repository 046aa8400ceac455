//! The peer adapters, included by path as another crate's tests would
//! include them (see src/peers.rs): every peer on one small robots.txt.

#[allow(dead_code)]
#[path = "../src/peers.rs"]
mod peers;

use peers::{Peer, path_query};

const ROBOTS: &[u8] =
    b"User-agent: *\nDisallow: /private\nAllow: /private/open\n\n\
User-agent: FooBot\nDisallow: /\n";

#[test]
fn every_peer_decides_the_same_plain_cases() {
    let cases = [
        ("ExampleBot", "https://example.com/", true),
        ("ExampleBot", "https://example.com/private/x?q=1", false),
        ("ExampleBot", "https://example.com/private/open/y", true),
        ("FooBot", "https://example.com/anything", false),
    ];
    for peer in Peer::ALL {
        for (agent, url, want) in cases {
            assert_eq!(
                peer.allowed(ROBOTS, agent, url),
                Ok(want),
                "{} {agent} {url}",
                peer.label()
            );
        }
    }
}

#[test]
fn a_path_is_google_s_path_and_query() {
    assert_eq!(path_query("https://example.com"), "/");
    assert_eq!(path_query("https://example.com/a/b?c=d#e"), "/a/b?c=d");
    assert_eq!(path_query("https://example.com?q"), "/?q");
}
