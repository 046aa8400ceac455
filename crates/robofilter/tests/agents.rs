//! The caller's agent (issue 11, part B item 11; docs/SEMANTICS.md section 4b):
//! rfc9309 refuses an agent that is not a product token, with a
//! suggestion; google keeps the reference's fallback to `*`.

use robofilter::{AlignedBytes, Compiler, Config, Dialect, Rules, Verdict};

const ROBOTS: &[u8] =
    b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /star\n";

fn rules(dialect: Dialect) -> AlignedBytes {
    let compiler = Compiler::with_config(Config::new().dialect(dialect));
    AlignedBytes::from(&compiler.compile(ROBOTS).unwrap()[..])
}

#[test]
fn rfc9309_refuses_an_agent_that_is_not_a_product_token() {
    let bytes = rules(Dialect::Rfc9309);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    for (agent, hint) in [
        ("Googlebot/2.1", Some("Googlebot")),
        ("Mozilla/5.0 (compatible; Googlebot/2.1)", Some("Mozilla")),
        ("", None),
        ("Bot2", Some("Bot")),
    ] {
        let err = rules.matcher(agent).unwrap_err();
        assert!(err.is_not_product_token(), "{agent:?}");
        let text = err.to_string();
        assert!(text.contains("is not a product token"), "{text}");
        if let Some(hint) = hint {
            assert!(
                text.contains(&format!("did you mean '{hint}'")),
                "{text}"
            );
        }
    }
    // A product token is fine, and decides by its own group.
    let m = rules.matcher("googlebot").unwrap();
    assert_eq!(m.decide(b"http://a.example/g"), Verdict::Disallow);
    // `*` asks for the `*` group.
    let star = rules.matcher("*").unwrap();
    assert_eq!(star.decide(b"http://a.example/star"), Verdict::Disallow);
    assert_eq!(star.decide(b"http://a.example/g"), Verdict::Allow);
}

#[test]
fn google_keeps_the_reference_fallback_for_such_agents() {
    let bytes = rules(Dialect::Google);
    let rules = Rules::from_bytes(bytes.as_bytes()).unwrap();
    // Not a token: the reference matches no group and falls back to `*`
    // (vectors A02, A04, A05, C04, C12).
    for agent in
        ["Googlebot/2.1", "", "Mozilla/5.0 (compatible; Googlebot/2.1)"]
    {
        let m = rules.matcher(agent).unwrap();
        assert_eq!(
            m.decide(b"http://a.example/g"),
            Verdict::Allow,
            "{agent:?}"
        );
        assert_eq!(m.decide(b"http://a.example/star"), Verdict::Disallow);
        assert!(robofilter::check_product_token(agent).is_err());
    }
}
