//! The URL module against plain references: `MatchPath::parse` in both
//! dialects (google/robotstxt's `GetPathParamsQuery`, and the rfc9309
//! reading whose authority ends at `/ ? #`), and the bundle host key
//! (`url_host_key`, `url_authority`) with both reasons for none.
//!
//! The checks live in `path_checks.rs`, which the default test run also
//! includes (`tests/main.rs`; `tests/fuzz_replay.rs` runs them) to replay
//! `data/fuzz/path-*` and generated URLs.

#![no_main]

use libfuzzer_sys::fuzz_target;

mod path_checks;

fuzz_target!(|data: &[u8]| path_checks::check(data));
