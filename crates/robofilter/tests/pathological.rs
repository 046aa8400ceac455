//! Pathological robots.txt files (issue 4's list): each compiles within its
//! construction budgets to some engine, and every engine gives the naive
//! matcher's verdicts on random URLs. Nothing here is timed: the budgets
//! (states, steps, bytes) bound the work, and a blow-up would show as a
//! test that never ends rather than as a slow number.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules};

use crate::differential::Rng;
use crate::oracle::{OracleDialect, oracle_allowed};

/// Random URLs over the octets the patterns use.
fn urls(rng: &mut Rng, letters: &[u8], n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut url = b"http://x/".to_vec();
            for _ in 0..rng.below(40) {
                url.push(match rng.below(8) {
                    0 => b'/',
                    _ => letters[rng.below(letters.len())],
                });
            }
            if rng.one_in(5) {
                url.push(b'$');
            }
            url
        })
        .collect()
}

/// Compiles `robots` in both dialects and compares every URL's verdict
/// with the oracle's, for a named agent and the `*` fallback.
fn check(name: &str, robots: &[u8], urls: &[Vec<u8>]) {
    for (dialect, oracle) in [
        (Dialect::Google, OracleDialect::Google),
        (Dialect::Rfc9309, OracleDialect::Rfc9309),
    ] {
        let bytes = Compiler::with_config(Config::new().dialect(dialect))
            .compile(robots)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = AlignedBytes::from(&bytes[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let (states, _) = rules.dfa_budgets();
        let byte_limit = rules.dfa_byte_limit().expect("recorded");
        let mut engines = Vec::new();
        for g in rules.groups() {
            assert!(
                g.size() as u64 <= byte_limit,
                "{name}: group over budget"
            );
            assert!(
                g.part_len() <= 1 || g.state_len() <= 32 * states as usize,
                "{name}: split parts over budget"
            );
            engines.push(g.engine().as_str());
        }
        for agent in ["FooBot", "other"] {
            let m = rules.matcher(agent).unwrap();
            for url in urls {
                let want = oracle_allowed(robots, &[agent], url, oracle);
                assert_eq!(
                    m.decide(url).is_allow(),
                    want,
                    "{name} ({dialect}, engines {engines:?}), agent {agent}, \
                     url {}",
                    String::from_utf8_lossy(url)
                );
            }
        }
        println!("{name} ({dialect}): engines {engines:?}");
    }
}

#[test]
fn a_rule_of_a_thousand_stars() {
    let mut robots = b"User-agent: *\nDisallow: /".to_vec();
    robots.extend(std::iter::repeat_n(b'*', 1000));
    robots.extend_from_slice(b"x$\nAllow: /a\n");
    let mut rng = Rng::new(1);
    check("1000 stars", &robots, &urls(&mut rng, b"ax", 300));
}

#[test]
fn many_rules_of_four_stars_over_many_letters() {
    let letters = b"abcdefghijklmnopqrstuvwxyz";
    let mut rng = Rng::new(2);
    for count in [20, 50] {
        let mut robots = b"User-agent: FooBot\n".to_vec();
        for i in 0..count {
            let l =
                |k: usize| letters[(i * 7 + k * 3) % letters.len()] as char;
            let kind = if i % 3 == 0 { "Allow" } else { "Disallow" };
            robots.extend_from_slice(
                format!("{kind}: /*{}*{}*{}*{}$\n", l(0), l(1), l(2), l(3))
                    .as_bytes(),
            );
        }
        check(
            &format!("{count} rules /*a*b*c*d$"),
            &robots,
            &urls(&mut rng, letters, 150),
        );
    }
}

#[test]
fn a_thousand_rules_of_three_stars() {
    let letters = b"abcdefgh";
    let mut rng = Rng::new(3);
    let mut robots = b"User-agent: *\n".to_vec();
    for i in 0..1000 {
        let mut p = String::from("/");
        for _ in 0..3 {
            for _ in 0..1 + rng.below(2) {
                p.push(letters[rng.below(letters.len())] as char);
            }
            p.push('*');
        }
        p.push(letters[i % letters.len()] as char);
        let kind = if i % 2 == 0 { "Allow" } else { "Disallow" };
        robots.extend_from_slice(format!("{kind}: {p}\n").as_bytes());
    }
    check("1000 rules x 3 stars", &robots, &urls(&mut rng, letters, 60));
}

#[test]
fn sixteen_megabytes_of_random_octets() {
    let mut rng = Rng::new(4);
    let mut robots = Vec::with_capacity(16 << 20);
    // Random octets with enough line breaks and keys to form some groups.
    while robots.len() < 16 << 20 {
        match rng.below(4000) {
            0 => robots.extend_from_slice(b"\nuser-agent: *\n"),
            1 => robots.extend_from_slice(b"\ndisallow: /"),
            2 => robots.extend_from_slice(b"\nallow: /*"),
            _ => robots.push(rng.below(256) as u8),
        }
    }
    check("16 MB random", &robots, &urls(&mut rng, b"ab\xff%", 20));
}

#[test]
fn one_ten_megabyte_line() {
    let mut robots = b"User-agent: *\nDisallow: /a".to_vec();
    robots.extend(std::iter::repeat_n(b'b', 10 << 20));
    robots.extend_from_slice(b"\nDisallow: /c\n");
    let mut rng = Rng::new(5);
    check("10 MB line", &robots, &urls(&mut rng, b"abc", 50));
}

/// The corpus's largest files: the 33,269-rule file and the 2 MB file.
#[test]
fn the_largest_real_files() {
    let Some(shared) = crate::util::shared_dir() else {
        crate::util::skip(
            "pathological::the_largest_real_files",
            "../shared does not exist (no real data)",
        );
        return;
    };
    let tarball = shared.join("data/robots-latest.tar.gz");
    let names = ["latest/protegez-vous.ca.txt", "latest/paytm.com.txt"];
    let out = std::process::Command::new("tar")
        .arg("-xzOf")
        .arg(&tarball)
        .args(names)
        .output()
        .expect("tar runs");
    if !out.status.success() {
        crate::util::skip(
            "pathological::the_largest_real_files",
            &format!("{names:?} not in {}", tarball.display()),
        );
        return;
    }
    // `tar -O` concatenates the files; take them one at a time instead.
    for name in names {
        let one = std::process::Command::new("tar")
            .arg("-xzOf")
            .arg(&tarball)
            .arg(name)
            .output()
            .expect("tar runs");
        let body = one.stdout;
        let mut rng = Rng::new(6);
        let letters = b"abcdefghijklmnopqrstuvwxyz-_.?=";
        check(name, &body, &urls(&mut rng, letters, 40));
    }
}

/// A test that needs `../shared`, run with none, says so where the run's
/// output shows it: a line in the skips file.
#[test]
fn a_skip_is_recorded_in_the_skips_file() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let skips = tmp.join(format!("skips-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&skips);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "pathological::the_largest_real_files"])
        .env("ROBOFILTER_SHARED", tmp.join("no-such-shared-dir"))
        .env("ROBOFILTER_TEST_SKIPS", &skips)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&skips).unwrap_or_default();
    let _ = std::fs::remove_file(&skips);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.starts_with("pathological::the_largest_real_files: ")
            && text.contains("does not exist")
            && text.lines().count() == 1,
        "{text:?}"
    );
}
