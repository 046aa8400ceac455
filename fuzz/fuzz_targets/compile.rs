//! Compiles a fuzzed robots.txt (sometimes under tiny DFA budgets), loads
//! the rules file, and checks that the compiled engine (`decide`) gives
//! the direct matcher's verdict (`explain`) on fuzzed URLs.
//!
//! Input: one flags octet (bit 0: google dialect; bits 1-3: budget), the
//! robots.txt up to the first 0xFF octet, then URLs separated by `\n`.
//!
//! Every budget is small (at most 256 DFA states per group): a run then
//! costs about a millisecond whatever the input, so the fuzzer reaches
//! millions of runs, and over-budget groups (split parts, the direct
//! engine) are exercised often. The default budgets are covered by
//! `tests/pathological.rs` and by `tools/corpus/sweep` on the real corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;
use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules};

/// Agents asked for: a named one, `*` itself and an unnamed one (which
/// gets the `*` fallback unless the file names it).
const AGENTS: [&str; 3] = ["FooBot", "*", "robofilter-fuzz"];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let (robots, urls) = match rest.iter().position(|&b| b == 0xFF) {
        Some(k) => (&rest[..k], &rest[k + 1..]),
        None => (rest, &b""[..]),
    };
    let dialect =
        if flags & 1 == 0 { Dialect::Rfc9309 } else { Dialect::Google };
    let mut config = Config::new().dialect(dialect);
    config = match (flags >> 1) & 7 {
        0 | 1 => config.dfa_state_limit(256),
        2 => config.dfa_state_limit(1),
        3 => config.dfa_state_limit(4),
        4 => config.dfa_byte_limit(0),
        5 => config.dfa_byte_limit(512),
        6 => config.dfa_state_limit(16).dfa_byte_limit(2048),
        _ => config.dfa_work_limit(64),
    };
    let compiled = Compiler::with_config(config).compile(robots);
    if !robofilter::InputKind::of(robots).is_text() {
        // Compressed or compiled input is refused, never read as text.
        assert!(compiled.is_err_and(|e| e.not_text().is_some()));
        return;
    }
    let bytes = compiled.expect("a small robots.txt compiles");
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules =
        Rules::from_bytes(bytes.as_bytes()).expect("compiled rules load");
    assert_eq!(rules.dialect(), dialect);
    let _ = rules.groups().count();
    for agent in AGENTS {
        let matcher = rules.matcher(agent).expect("compiled for all agents");
        for url in urls.split(|&b| b == b'\n').take(16) {
            let verdict = matcher.decide(url);
            let explained = matcher.explain(url);
            assert_eq!(
                verdict,
                explained.verdict(),
                "agent {agent}, url {:?}, reason {:?}",
                String::from_utf8_lossy(url),
                explained.reason(),
            );
        }
    }
});
