//! The caller's agent: the product token RFC 9309 section 2.2.1 asks for
//! (docs/SEMANTICS.md section 4b).
//!
//! A robots.txt names crawlers by product token, `[A-Za-z_-]+`. A caller
//! that names its crawler by something else (`Googlebot/2.1`, a full
//! User-Agent header, an empty string) matches no group and silently gets
//! the `*` group. The rfc9309 dialect refuses such an agent
//! ([`Rules::matcher`](crate::Rules::matcher) fails); the google dialect
//! keeps the reference's verdicts, and front ends warn with the same
//! suggestion.

use crate::error::AgentError;

/// Checks that `agent` is a product token, `[A-Za-z_-]+`, or `*`.
///
/// `*` is accepted as the one exception: it asks for the `*` group, the
/// rules a crawler that no group names gets (which is also what the
/// lookup gives it, since no group is named `*` in the agent table).
///
/// # Errors
///
/// An [`AgentError`] whose message names the value and suggests the
/// product token it starts with.
///
/// ```
/// assert!(robofilter::check_product_token("Googlebot-Image").is_ok());
/// let err = robofilter::check_product_token("Googlebot/2.1").unwrap_err();
/// assert!(err.to_string().contains("did you mean 'Googlebot'?"));
/// assert!(robofilter::check_product_token("").is_err());
/// ```
pub fn check_product_token(agent: &str) -> Result<(), AgentError> {
    if agent == "*" {
        return Ok(());
    }
    let token = |b: &u8| b.is_ascii_alphabetic() || matches!(b, b'_' | b'-');
    let prefix = agent.bytes().take_while(token).count();
    if prefix == agent.len() && prefix > 0 {
        return Ok(());
    }
    Err(AgentError::not_product_token(agent, &agent[..prefix]))
}

#[cfg(test)]
mod tests {
    use super::check_product_token;

    #[test]
    fn product_tokens() {
        for ok in ["Googlebot", "a", "My_Bot-", "-_", "*"] {
            assert!(check_product_token(ok).is_ok(), "{ok:?}");
        }
        let cases = [
            ("Googlebot/2.1", Some("Googlebot")),
            ("Bot2", Some("Bot")),
            ("Mozilla/5.0 (compatible; Googlebot/2.1)", Some("Mozilla")),
            ("Foo Bar", Some("Foo")),
            ("", None),
            ("2bot", None),
            ("ünïcode", None),
            ("**", None),
            ("* ", None),
        ];
        for (agent, suggestion) in cases {
            let err = check_product_token(agent).unwrap_err();
            assert!(err.is_not_product_token());
            let text = err.to_string();
            match suggestion {
                Some(s) => assert!(
                    text.contains(&format!("did you mean '{s}'?")),
                    "{text}"
                ),
                None => assert!(!text.contains("did you mean"), "{text}"),
            }
        }
    }
}
