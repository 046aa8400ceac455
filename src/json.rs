//! JSON fields for the CLI's objects (`inspect --json`, `inspect --lint --json`): robots.txt text that may not be UTF-8.

use serde_json::{Map, Value, json};

/// Text as a JSON string under `key`, or base64 under `key_base64` when
/// it is not UTF-8 (the octets stay exact).
pub fn put_text(obj: &mut Map<String, Value>, key: &str, text: &[u8]) {
    use base64::Engine as _;
    match std::str::from_utf8(text) {
        Ok(s) => obj.insert(key.into(), json!(s)),
        Err(_) => {
            let b64 = base64::engine::general_purpose::STANDARD;
            obj.insert(format!("{key}_base64"), json!(b64.encode(text)))
        }
    };
}
