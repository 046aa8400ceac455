//! Parses arbitrary bytes as a robots.txt in both dialects: no panic, and
//! every line number, agent token and selection is consistent.

#![no_main]

use libfuzzer_sys::fuzz_target;
use robofilter::{Compiler, Config, Dialect};

fuzz_target!(|data: &[u8]| {
    for dialect in [Dialect::Rfc9309, Dialect::Google] {
        let compiler = Compiler::with_config(Config::new().dialect(dialect));
        let robots = compiler.parse(data);
        assert_eq!(robots.dialect(), dialect);
        let lines = 1..=robots.line_len();
        for group in robots.groups() {
            for agent in group.agents() {
                assert!(lines.contains(&agent.line()));
                let _ = (agent.value(), agent.token(), agent.is_global());
            }
            for rule in group.rules() {
                assert!(lines.contains(&rule.line()));
                let _ = (rule.kind(), rule.value(), rule.pattern());
            }
            let _ = group.is_global();
        }
        for sitemap in robots.sitemaps() {
            assert!(lines.contains(&sitemap.line()));
        }
        for delay in robots.crawl_delays() {
            assert!(lines.contains(&delay.line()));
            if let Some(g) = delay.group() {
                assert!(g < robots.groups().len());
            }
        }
        for diagnostic in robots.diagnostics() {
            assert!(lines.contains(&diagnostic.line()));
            let _ = diagnostic.to_string();
        }
        // Tokens: distinct, sorted, lower-cased.
        let tokens = robots.agent_tokens();
        assert!(tokens.windows(2).all(|w| w[0] < w[1]));
        assert!(tokens.iter().all(|t| !t.iter().any(u8::is_ascii_uppercase)));
        for token in tokens.iter().take(4) {
            let _ = robots.select(&[token]).rules().len();
        }
        let _ = robots.select(&["FooBot"]).source();
    }
});
