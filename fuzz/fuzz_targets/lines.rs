//! A frontier chunk read line by line: `for_each_url_line`,
//! `next_url_line` and `url_line` (robofilter-scan's vector passes)
//! against a plain reference of frontier lines and of the path readings.
//!
//! The checks live in `lines_checks.rs`, which the default test run also
//! includes (`tests/main.rs`; `tests/fuzz_replay.rs` runs them) to replay
//! `data/fuzz/lines-*` and generated chunks.

#![no_main]

use libfuzzer_sys::fuzz_target;

mod lines_checks;
// Its path reference (the path target's other checks are not run here).
#[allow(dead_code)]
mod path_checks;

fuzz_target!(|data: &[u8]| lines_checks::check(data));
