//! Loads arbitrary bytes as a rules file and as a bundle; whatever loads
//! must answer every query without panicking.
//!
//! Mutated files almost never pass the CRC-32 check, so each input is also
//! tried *repaired*: the length and checksum fields rewritten (for a
//! bundle, each in-bounds member's too), which takes the structure checks
//! and the lookups themselves under the fuzzer.

#![no_main]

use libfuzzer_sys::fuzz_target;
use robofilter::{AlignedBytes, Bundle, HostRules, Rules};

const AGENTS: [&str; 3] = ["FooBot", "googlebot", "*"];
const URLS: [&[u8]; 5] = [
    b"https://example.com/",
    b"http://example.com/a/b?c=d#e",
    b"/private/%7Efile.PDF",
    b"example.com?q",
    b"https://example.com/caf%C3%A9/index.html",
];

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Rewrites a container's length field (if `len_at`) and its CRC-32 over
/// `bytes[..covered]`, taken with the checksum field (at 24) zeroed.
fn repair(bytes: &mut [u8], covered: usize, set_len: bool) {
    if bytes.len() < 64 || covered < 64 || covered > bytes.len() {
        return;
    }
    if set_len {
        let len = bytes.len() as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
    }
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..covered]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
}

/// Repairs a rules file, or a bundle and the members its index points at.
fn repair_any(bytes: &mut [u8]) {
    if bytes.starts_with(b"ROBOBNDL") {
        let n = bytes.len();
        let (Some(index_len), Some(h), Some(m), Some(s)) = (
            u64_at(bytes, 32),
            u32_at(bytes, 40),
            u32_at(bytes, 44),
            u32_at(bytes, 48),
        ) else {
            return;
        };
        let table = 64 + 16 * h as usize + 4 * s as usize;
        for i in 0..(m as usize).min(64) {
            let (Some(off), Some(len)) = (
                u64_at(bytes, table + 16 * i),
                u64_at(bytes, table + 16 * i + 8),
            ) else {
                break;
            };
            let end = off.saturating_add(len);
            if end <= n as u64 {
                let member = &mut bytes[off as usize..end as usize];
                repair(member, member.len(), true);
            }
        }
        repair(bytes, index_len.min(n as u64) as usize, true);
    } else {
        let n = bytes.len();
        repair(bytes, n, true);
    }
}

fn exercise(rules: &Rules<'_>) {
    let _ = (rules.dialect(), rules.parse_limit(), rules.dfa_budgets());
    let _ = (rules.dfa_byte_limit(), rules.is_all_agents(), rules.fallback());
    for group in rules.groups() {
        let _ = (group.engine(), group.size(), group.over_budget());
        for rule in rules.group_rules(group.index()) {
            let _ = (rule.line(), rule.kind(), rule.value(), rule.pattern());
        }
    }
    let mut named = Vec::new();
    for agent in rules.agents().take(8) {
        let _ = (agent.group(), agent.source());
        named.push(String::from_utf8_lossy(agent.name()).into_owned());
    }
    for record in rules
        .sitemaps()
        .chain(rules.crawl_delays())
        .chain(rules.diagnostics())
        .take(64)
    {
        let _ = (record.line(), record.text(), record.agents());
    }
    let agents = AGENTS.iter().copied().chain(named.iter().map(|s| &s[..]));
    for agent in agents {
        let Ok(matcher) = rules.matcher(agent) else { continue };
        let _ = (matcher.source(), matcher.group());
        for url in URLS {
            // A damaged but loadable file may make the two engines disagree;
            // neither may panic.
            let _ = (matcher.decide(url), matcher.explain(url).verdict());
        }
    }
}

fn load(bytes: &[u8]) {
    if let Ok(rules) = Rules::from_bytes(bytes) {
        exercise(&rules);
    }
    if let Ok(bundle) = Bundle::from_bytes(bytes) {
        let _ = (bundle.dialect(), bundle.host_len());
        for host in bundle.hosts() {
            // In a damaged bundle, `find` may miss a host (the slots only
            // decide which host is found), but never panics.
            let _ = (host.status(), bundle.find(host.name()));
            if let HostRules::Member(m) = host.rules() {
                assert!(m < bundle.member_len());
            }
        }
        let _ = bundle.find(b"example.com");
        for m in 0..bundle.member_len() {
            let _ = bundle.member_size(m);
            if let Ok(rules) = bundle.member(m) {
                exercise(&rules);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    load(AlignedBytes::from(data).as_bytes());
    let mut repaired = data.to_vec();
    repair_any(&mut repaired);
    if repaired != data {
        load(AlignedBytes::from(&repaired[..]).as_bytes());
    }
});
