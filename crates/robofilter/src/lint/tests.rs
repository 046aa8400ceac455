//! The lint's unit tests: each finding kind, look-alikes, diagnostics, the budget, and the prover's witnesses checked by `explain`.

use super::*;
use crate::compile::Compiler;

fn lint(robots: &str, dialect: Dialect) -> Vec<(u32, LintKind)> {
    let known = [
        "GPTBot",
        "ClaudeBot",
        "CCBot",
        "Google-Extended",
        "facebookexternalhit",
    ];
    let config = Config::new().dialect(dialect);
    let linter = Linter::new().known_agents(known);
    let found = linter.lint_robots_txt(robots.as_bytes(), &config);
    found.unwrap().iter().map(|f| (f.line(), f.kind())).collect()
}

fn both(robots: &str, want: &[(u32, LintKind)]) {
    for d in [Dialect::Rfc9309, Dialect::Google] {
        assert_eq!(lint(robots, d), want, "{d:?}\n{robots}");
    }
}

use LintKind::*;

#[test]
fn rules_that_never_decide() {
    // Shadowed by a longer Allow that matches wherever it does.
    both("user-agent: *\ndisallow: /a\nallow: /a*\n", &[(2, Shadowed)]);
    // Not shadowed: `/a` alone is decided by the Disallow.
    both("user-agent: *\ndisallow: /a\nallow: /a/\n", &[]);
    // Shadowed by a union: `/a$` and `/a*x`... no; `/a$` and `/a?*`
    // do not cover `/ab`; `/a$` with `/a*` (Allow, 3) does.
    both("user-agent: *\ndisallow: /a\nallow: /a$\n", &[]);
    both(
        "user-agent: *\ndisallow: /ab\nallow: /ab$\nallow: /ab*\n",
        &[(2, Shadowed)],
    );
    // Longer Disallows shadow a shorter one only together.
    both(
        "user-agent: *\nallow: /x\ndisallow: /x$\ndisallow: /x*\n",
        &[(2, Shadowed)],
    );
    // A duplicate, in both kinds.
    both(
        "user-agent: *\ndisallow: /a\ndisallow: /a\nallow: /b\nallow: /b\n",
        &[(3, Duplicate), (5, Duplicate)],
    );
    // A pair that cancels: the Allow decides, the Disallow never.
    both("user-agent: *\ndisallow: /p\nallow: /p\n", &[(2, Cancelled)]);
    both("user-agent: *\nallow: /p\ndisallow: /p\n", &[(3, Cancelled)]);
    // Equal precedence, same kind: the earlier line decides where both
    // match; `/*a` still decides `/ba`.
    both("user-agent: *\ndisallow: /a*\ndisallow: /*a\n", &[]);
    // `/a%` (3) is beaten by the earlier `/a*` (3) wherever it matches.
    both("user-agent: *\ndisallow: /a*\ndisallow: /a%\n", &[(3, Shadowed)]);
    // Patterns that match nothing.
    both("user-agent: *\ndisallow: admin\n", &[(2, MatchesNothing)]);
    both("user-agent: *\ndisallow: $\n", &[(2, MatchesNothing)]);
    // `/robots.txt` is always allowed in rfc9309 only.
    let robots = "user-agent: *\ndisallow: /robots.txt$\n";
    assert_eq!(lint(robots, Dialect::Rfc9309), [(2, MatchesNothing)]);
    assert_eq!(lint(robots, Dialect::Google), []);
    // `*` wildcards: `/*.php$` (7) is beaten by `/*.php` (6)? No:
    // shorter. `/*.php*` (7, Allow) covers `/*.php$` (7, Disallow).
    both(
        "user-agent: *\ndisallow: /*.php$\nallow: /*.php*\n",
        &[(2, Shadowed)],
    );
}

#[test]
fn index_html_aliases_count() {
    // The Allow decides `/a/` by its alias (`/a/$`, 4 octets) though
    // `/a/index.html` itself is beaten by a longer Disallow.
    both(
        "user-agent: *\nallow: /a/index.html\ndisallow: /a/index.html*\n",
        &[],
    );
    // The alias (4) loses to `/a/**` (5) too: the Allow never decides.
    both(
        "user-agent: *\nallow: /a/index.html\n\
         disallow: /a/index.html*\ndisallow: /a/**\n",
        &[(2, Shadowed)],
    );
    // A Disallow `/a/$` is beaten by the alias (an Allow, as long).
    both(
        "user-agent: *\ndisallow: /a/$\nallow: /a/index.htm\n",
        &[(2, Shadowed)],
    );
}

#[test]
fn a_rule_is_reported_only_if_it_never_decides_in_any_group() {
    // google and rfc9309 both merge `a`'s groups: in a's group the
    // second `/x` repeats the first; b's group holds it alone.
    let robots = "user-agent: a\ndisallow: /x\n\nuser-agent: a\n\
                  user-agent: b\ndisallow: /x\n";
    both(robots, &[]);
    let robots = "user-agent: a\ndisallow: /x\n\nuser-agent: a\n\
                  disallow: /x\n";
    both(robots, &[(5, Duplicate)]);
    // The `*` group's rule is shadowed in its only group.
    let robots = "user-agent: a\nallow: /\n\nuser-agent: *\n\
                  disallow: /q\nallow: /q*\n";
    both(robots, &[(5, Shadowed)]);
}

#[test]
fn agents_and_groups() {
    // A group no crawler reaches (and its rule is not linted).
    both(
        "user-agent: 1bot\nuser-agent: \"x\"\ndisallow: /\n",
        &[(1, Unreachable)],
    );
    // One value without a token in a group that others reach.
    both("user-agent: 1bot\nuser-agent: a\ndisallow: /\n", &[(1, NoToken)]);
    // Look-alikes of known tokens, in every form.
    for v in [
        "GPT-Bot",
        "Claude-Bot",
        "claude_bot",
        "GTPBot",
        "CluadeBot",
        "facebokexternalhit",
        "Google Extended",
        "Mozilla/5.0 (compatible; GPTBot/1.0)",
    ] {
        both(&format!("user-agent: {v}\ndisallow: /\n"), &[(1, Lookalike)]);
    }
    // A quoted token is no token at all: the group is unreachable too.
    both(
        "user-agent: \"GPTBot\"\ndisallow: /\n",
        &[(1, Unreachable), (1, Lookalike)],
    );
    // The exact token, in any case, is never a look-alike; a version
    // after it is read as the token, a note.
    both("user-agent: gptbot\nuser-agent: CCBOT\ndisallow: /\n", &[]);
    both("user-agent: ccbot/2.0\ndisallow: /\n", &[(1, NotAToken)]);
    // Rules before any user-agent line are in no group.
    both("disallow: /a\nuser-agent: *\ndisallow: /b\n", &[(1, Unreachable)]);
}

#[test]
fn no_false_lookalikes_among_common_crawlers() {
    let known: Vec<&str> = include_str!("../../../../data/agents/ai.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let linter = Linter::new().known_agents(known.iter().copied());
    for token in [
        "Googlebot",
        "Googlebot-Image",
        "Googlebot-News",
        "Bingbot",
        "Slurp",
        "DuckDuckBot",
        "Baiduspider",
        "YandexBot",
        "YandexImages",
        "facebookexternalhit",
        "Twitterbot",
        "AhrefsBot",
        "SemrushBot",
        "MJ12bot",
        "DotBot",
        "Exabot",
        "ia_archiver",
        "AdsBot-Google",
        "Mediapartners-Google",
        "Storebot-Google",
        "Google-InspectionTool",
        "SeznamBot",
        "Qwantify",
        "rogerbot",
        "Sogou",
        "Yeti",
        "Applebot",
        "PetalBot",
        "BLEXBot",
        "DataForSeoBot",
        "Amazonbot",
        "Pinterestbot",
        // One edit from a known token, yet other crawlers (seen on
        // the corpus).
        "snapbot",
        "xspider",
        "vspider",
        "antibot",
        "nexabot",
        "getbot",
        "SemrushBot-SA",
        "askbot",
    ] {
        let t = token.as_bytes();
        assert_eq!(linter.lookalike(t, t), None, "{token}");
    }
    // Every known token is itself (whatever its case).
    for k in &known {
        let lower = k.to_ascii_lowercase();
        assert_eq!(linter.lookalike(lower.as_bytes(), lower.as_bytes()), None);
    }
    assert_eq!(linter.lookalike(b"GPT-Bot", b"GPT-Bot"), Some("GPTBot"));
    // Whole values, read as the token they start with: a generic word
    // of the list (`Spider`) is no reason to report them...
    let token = |v: &str| {
        let n = v
            .bytes()
            .take_while(|b| b.is_ascii_alphabetic() || b"-_".contains(b))
            .count();
        v[..n].to_string()
    };
    for v in [
        "Sogou web spider/4.0",
        "Mozilla/5.0 (compatible; Baiduspider/2.0; \
         +http://www.baidu.com/search/spider.html)",
        "Screaming Frog SEO Spider",
    ] {
        let t = token(v);
        assert_eq!(linter.lookalike(v.as_bytes(), t.as_bytes()), None);
    }
    // ... a distinctive token is.
    let v = "Mozilla/5.0 (compatible; Exabot/3.0)";
    let t = token(v);
    assert_eq!(linter.lookalike(v.as_bytes(), t.as_bytes()), Some("ExaBot"));
}

#[test]
fn swapped_neighbours() {
    assert!(swapped(b"gtpbot", b"gptbot"));
    assert!(swapped(b"gptbto", b"gptbot"));
    assert!(!swapped(b"gptbot", b"gptbot"));
    assert!(!swapped(b"getbot", b"gptbot"));
    assert!(!swapped(b"gptbo", b"gptbot"));
}

#[test]
fn one_edit_apart() {
    assert!(one_edit(b"gtpbot", b"gptbot"));
    assert!(one_edit(b"gptbo", b"gptbot"));
    assert!(one_edit(b"gptbott", b"gptbot"));
    assert!(one_edit(b"gqtbot", b"gptbot"));
    assert!(!one_edit(b"gptbot", b"gptbot"));
    assert!(!one_edit(b"tgpbot", b"gptbot"));
    assert!(!one_edit(b"gpt", b"gptbot"));
}

/// Every parser diagnostic's text maps to its kind, so a change of
/// the parser's wording fails here rather than mislabels findings.
#[test]
fn diagnostics_map_to_kinds() {
    let mut long = b"user-agent: *\ndisallow: /".to_vec();
    long.extend(std::iter::repeat_n(b'a', crate::parse::MAX_LINE_LEN));
    long.extend_from_slice(
        b"\n\xEF\xBB\xBFx\nfoo: bar\ncrawl-delay: 5\nnonsense line here\n\
          dissallow: /a\nuser-agent bot\nallow: /b\0c\n",
    );
    let robots = RobotsTxt::parse(&long, Dialect::Google);
    let mut got: Vec<Option<LintKind>> = robots
        .diagnostics()
        .iter()
        .map(|d| diagnostic(&d.kind().to_string()).map(|(k, _)| k))
        .collect();
    got.sort();
    let mut want = vec![
        Some(Cut),           // line truncated
        Some(NotUnderstood), // foo: bar
        None,                // crawl-delay
        Some(NotUnderstood), // nonsense line here
        Some(Lenient),       // dissallow
        Some(Lenient),       // missing colon
        Some(Cut),           // NUL
        Some(NotUnderstood), // "\u{feff}x": no separator
    ];
    want.sort();
    assert_eq!(got, want);
    let bom =
        RobotsTxt::parse(b"\xEF\xBB\xBFuser-agent: *\n", Dialect::Google);
    assert_eq!(diagnostic(&bom.diagnostics()[0].kind().to_string()), None);
    let outside = RobotsTxt::parse(b"allow: /\n", Dialect::Google);
    let text = outside.diagnostics()[0].kind().to_string();
    assert_eq!(diagnostic(&text).map(|d| d.0), Some(Unreachable));
    let mut big = b"user-agent: *\n".to_vec();
    big.resize(crate::parse::RFC9309_PARSE_LIMIT + 10, b'#');
    let cut = RobotsTxt::parse(&big, Dialect::Rfc9309);
    let text = cut.diagnostics().last().unwrap().kind().to_string();
    assert_eq!(diagnostic(&text).map(|d| d.0), Some(Cut));
}

#[test]
fn a_small_budget_says_undecided() {
    let robots = "user-agent: *\ndisallow: /*a*b*a*b\nallow: /*b*a*b*a*\n\
                  allow: /*a*b*a*b*\n";
    let linter = Linter::new().work_limit(30);
    let found =
        linter.lint_robots_txt(robots.as_bytes(), &Config::new()).unwrap();
    assert!(found.iter().all(|f| f.kind() == Undecided), "{found:?}");
    assert!(found.iter().any(|f| f.line() == 2), "{found:?}");
    // With the default budget it is proved: `/*a*b*a*b*` (Allow, 10)
    // covers `/*a*b*a*b` (9).
    let found = Linter::new()
        .lint_robots_txt(robots.as_bytes(), &Config::new())
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].line(), found[0].kind()), (2, Shadowed));
    assert_eq!(found[0].by(), [4]);
}

#[test]
fn rules_files_lint_what_they_keep() {
    let robots = b"user-agent: 1bot\ndisallow: /hidden\n\n\
                   user-agent: GPT-Bot\ndisallow: /\n\n\
                   user-agent: *\ndisallow: /a\ndisallow: /a\nfoo: bar\n";
    let bytes = Compiler::new().compile(robots).unwrap();
    let bytes = AlignedBytes::from(&bytes[..]);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    let linter = Linter::new().known_agents(["GPTBot"]);
    let found: Vec<_> = linter
        .lint(&rules)
        .iter()
        .map(|f| (f.line(), f.kind(), f.agent().map(<[u8]>::to_vec)))
        .collect();
    assert_eq!(
        found,
        [
            (0, Lookalike, Some(b"gpt-bot".to_vec())),
            (2, Unreachable, None),
            (9, Duplicate, None),
            (10, NotUnderstood, None),
        ]
    );
}

/// SplitMix64, for the random files below.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// Every rule the prover says decides a path decides its witness, as
/// [`Matcher::explain`](crate::Matcher::explain) finds it, and no rule it
/// proves never decides is named by `explain` for any path made of up to
/// three pieces: on random files with escapes, index.html aliases and
/// `/robots.txt`, which the exhaustive test's alphabet leaves out.
#[test]
fn witnesses_and_proofs_agree_with_explain() {
    const PIECES: &[&str] = &[
        "a",
        "b",
        "/",
        "/",
        "*",
        "*",
        "$",
        "%2A",
        "%24",
        "%61",
        "%2f",
        "index.html",
        "robots.txt",
        "?",
        "%",
    ];
    // Paths: `/`, then up to three pieces (and an octet no pattern has).
    let mut pieces: Vec<&str> = PIECES.to_vec();
    pieces.push("x");
    pieces.sort_unstable();
    pieces.dedup();
    let mut paths: Vec<String> = vec!["/".to_string()];
    let mut last = paths.clone();
    for _ in 0..3 {
        let next: Vec<String> = last
            .iter()
            .flat_map(|p| pieces.iter().map(move |q| format!("{p}{q}")))
            .collect();
        paths.extend(next.iter().cloned());
        last = next;
    }
    let mut rng = Rng(7);
    let (mut checked, mut rewritten, mut never) = (0, 0, 0);
    for round in 0..400 {
        let dialect = [Dialect::Rfc9309, Dialect::Google][round % 2];
        let mut robots = String::new();
        for g in 0..1 + rng.below(3) {
            let agent = ["*", "a", "b"][rng.below(3)];
            robots.push_str(&format!("user-agent: {agent}\n"));
            for _ in 0..1 + rng.below(5) {
                let kind = ["allow", "disallow"][rng.below(2)];
                let mut p = String::from(["/", "*", ""][rng.below(3)]);
                for _ in 0..rng.below(4) {
                    p.push_str(PIECES[rng.below(PIECES.len())]);
                }
                robots.push_str(&format!("{kind}: {p}\n"));
            }
            if g % 2 == 1 {
                robots.push('\n');
            }
        }
        let config = Config::new().dialect(dialect);
        let bytes = Compiler::with_config(config).compile(robots.as_bytes());
        let bytes = AlignedBytes::from(&bytes.unwrap()[..]);
        let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
        let mut proofs = BTreeMap::new();
        let linter = Linter::new();
        let agents: Vec<_> = rules.agents().chain(rules.fallback()).collect();
        for a in &agents {
            if let Some(g) = a.group() {
                linter.prove_group(&rules, g, &mut proofs);
            }
        }
        for (line, p) in &proofs {
            let Some((g, path)) = &p.witness else { continue };
            let agent = agents.iter().find(|a| a.group() == Some(*g));
            let name = match agent.unwrap().name() {
                b"*" => "*".to_string(),
                n => String::from_utf8(n.to_vec()).unwrap(),
            };
            let m = rules.matcher(&name).unwrap();
            let url = [&b"http://x"[..], path].concat();
            let why = m.explain(&url);
            if why.path() != &path[..] {
                // An escape in the witness that the URL normalisation
                // rewrites (rfc9309): not a path of any URL.
                rewritten += 1;
                continue;
            }
            let decided = match why.reason() {
                crate::rules::Reason::Rule(r)
                | crate::rules::Reason::IndexHtml(r) => r.line(),
                _ => 0,
            };
            assert_eq!(
                decided,
                *line,
                "{dialect:?} witness {:?}\n{robots}",
                String::from_utf8_lossy(path)
            );
            checked += 1;
        }
        // No path is decided by a rule proved never to decide.
        let mut decided = BTreeSet::new();
        let mut groups = BTreeSet::new();
        for a in &agents {
            if a.group().is_none_or(|g| !groups.insert(g)) {
                continue;
            }
            let name = String::from_utf8(a.name().to_vec()).unwrap();
            let m = rules.matcher(&name).unwrap();
            for p in &paths {
                match m.explain(format!("http://x{p}").as_bytes()).reason() {
                    crate::rules::Reason::Rule(r)
                    | crate::rules::Reason::IndexHtml(r) => {
                        decided.insert(r.line());
                    }
                    _ => {}
                }
            }
        }
        for (line, p) in &proofs {
            if p.outcome == Outcome::Never {
                never += 1;
                assert!(
                    !decided.contains(line),
                    "{dialect:?} line {line}\n{robots}"
                );
            }
        }
    }
    assert!(never > 200, "{never}");
    assert!(checked > 1000, "{checked}");
    assert!(rewritten * 50 < checked, "{rewritten} of {checked}");
}

#[test]
fn content_usage_lines_that_say_nothing() {
    both(
        "content-usage: train-ai=n\nuser-agent: *\ncontent-usage: /a train-ai=n, search=y\n\
         content-usage: /b Train-AI=n\ncontent-usage: /c train-ai=n,\ndisallow: /x\n",
        &[(1, Unreachable), (4, NotUnderstood), (5, NotUnderstood)],
    );
}
