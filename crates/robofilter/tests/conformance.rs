//! The pinned conformance data, through the whole pipeline: compile ->
//! rules-file bytes -> load -> verdict, and through the direct matcher
//! (`explain`), which must agree.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules, Verdict};

use crate::util::{google_vectors, spec_cases};

/// Compiles `robots` for `agents` (merged, as google's multi-agent API
/// does when there are several) and decides `url` both ways.
pub fn decide(
    robots: &[u8],
    agents: &[&str],
    url: &[u8],
    dialect: Dialect,
) -> bool {
    let mut config = Config::new().dialect(dialect);
    let merged = agents.join(",");
    if agents.len() > 1 {
        // The multi-agent API merges every named group into one: compile
        // the merged selection under a synthetic name.
        let robots_txt = Compiler::with_config(config.clone()).parse(robots);
        let sel = robots_txt.select(agents);
        return direct_selection_allowed(&sel, url, dialect);
    }
    config = config.agent(agents[0]);
    let bytes = Compiler::with_config(config).compile(robots).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let m = rules.matcher(agents[0]).unwrap();
    let fast = m.decide(url);
    let slow = m.explain(url).verdict();
    assert_eq!(fast, slow, "dfa vs direct for {merged} {url:?}");
    fast == Verdict::Allow
}

/// For the multi-agent vectors: compile the selection's rules under one
/// agent name by rewriting the file (all named groups get the same token).
fn direct_selection_allowed(
    sel: &robofilter::Selection<'_>,
    url: &[u8],
    dialect: Dialect,
) -> bool {
    let mut body = b"user-agent: merged\n".to_vec();
    for r in sel.rules() {
        let key: &[u8] = match r.kind() {
            robofilter::RuleKind::Allow => b"allow: ",
            robofilter::RuleKind::Disallow => b"disallow: ",
        };
        body.extend_from_slice(key);
        body.extend_from_slice(r.value());
        body.push(b'\n');
    }
    decide(&body, &["merged"], url, dialect)
}

#[test]
fn google_behaviours_all_164() {
    let vectors = google_vectors();
    assert_eq!(vectors.len(), 164);
    let mut failed = Vec::new();
    for v in &vectors {
        let agents: Vec<&str> = if v.multi_agent {
            v.agent.split(',').collect()
        } else {
            vec![v.agent.as_str()]
        };
        let got =
            decide(&v.robots, &agents, v.url.as_bytes(), Dialect::Google);
        if got != v.allowed {
            failed.push(v.id.clone());
        }
    }
    assert!(failed.is_empty(), "failed vectors: {failed:?}");
}

#[test]
fn google_spec_tests_all_correctness_cases() {
    let cases = spec_cases();
    assert!(cases.len() > 100, "only {} cases loaded", cases.len());
    let mut failed = Vec::new();
    for c in &cases {
        let got = decide(
            &c.robots,
            &[c.agent.as_str()],
            c.url.as_bytes(),
            Dialect::Google,
        );
        if got != c.allowed {
            failed.push(format!("{}: {} {}", c.file, c.agent, c.url));
        }
    }
    assert!(failed.is_empty(), "failed spec cases: {failed:#?}");
}
