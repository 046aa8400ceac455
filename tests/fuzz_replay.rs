//! Replays `data/fuzz/` (minimised fuzz findings and regression inputs)
//! with the checks of the fuzz target each file's name starts with.

use robofilter::{
    AlignedBytes, Bundle, Compiler, Config, Dialect, MatchPath, Rules,
};

/// The compile target: flags octet (bit 0: google; bits 1-3: budget), the
/// robots.txt up to 0xFF, URLs separated by `\n`; `decide` must equal the
/// direct matcher's verdict.
fn compile(data: &[u8]) {
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
    let bytes = Compiler::with_config(config).compile(robots).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    for agent in ["FooBot", "*", "robofilter-fuzz"] {
        let m = rules.matcher(agent).unwrap();
        for url in urls.split(|&b| b == b'\n').take(16) {
            assert_eq!(m.decide(url), m.explain(url).verdict(), "{agent}");
        }
    }
}

/// The load target: arbitrary bytes as a rules file and as a bundle; when
/// they load, every accessor runs without panicking.
fn load(data: &[u8]) {
    let bytes = AlignedBytes::from(data);
    if let Ok(rules) = Rules::from_bytes(bytes.as_bytes()) {
        let _ = rules.groups().count();
        let _ = rules.agents().count();
        for agent in ["FooBot", "googlebot"] {
            if let Ok(m) = rules.matcher(agent) {
                let _ = m.decide(b"http://x/a?b");
                let _ = m.explain(b"http://x/");
            }
        }
    }
    if let Ok(bundle) = Bundle::from_bytes(bytes.as_bytes()) {
        let _ = bundle.hosts().count();
        for m in 0..bundle.member_len() {
            let _ = bundle.member(m);
        }
    }
}

fn replay(name: &str, data: &[u8]) {
    match name.split('-').next() {
        Some("parse") => {
            for d in [Dialect::Google, Dialect::Rfc9309] {
                let parsed = Compiler::with_config(Config::new().dialect(d))
                    .parse(data);
                for g in parsed.groups() {
                    for r in g.rules() {
                        assert!((1..=parsed.line_len()).contains(&r.line()));
                    }
                }
            }
        }
        Some("compile") => compile(data),
        Some("load") => load(data),
        Some("path") => {
            assert_eq!(
                MatchPath::from_url(data).to_vec(),
                crate::oracle::extract_path(data)
            );
            let mut out = Vec::new();
            let ok = robofilter::url_authority(data, &mut out);
            assert_eq!(ok, !out.is_empty());
        }
        _ => panic!("data/fuzz/{name}: no target named by its prefix"),
    }
}

#[test]
fn fuzz_findings_replay() {
    let dir = crate::util::data_dir().join("fuzz");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    assert!(!names.is_empty(), "data/fuzz/ has no inputs");
    for name in &names {
        let data = std::fs::read(dir.join(name)).unwrap();
        replay(name, &data);
    }
    // The damaged golden file must not load.
    let flipped = std::fs::read(dir.join("load-golden-flipped")).unwrap();
    assert!(
        Rules::from_bytes(AlignedBytes::from(&flipped[..]).as_bytes())
            .is_err()
    );
}
