//! The provider reply parsers and error classification, on any body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::providers::http::{classify_status, error_details, requested_delay};
use mcp_agents::providers::{messages, responses};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = responses::parse_reply(value.clone());
        let _ = messages::parse_reply(value);
    }
    let text = String::from_utf8_lossy(data);
    let _ = error_details(&text);
    let headers = reqwest::header::HeaderMap::new();
    let _ = requested_delay(&headers, &text);
    for status in [400u16, 413, 429, 500, 529] {
        let _ = classify_status(
            "p",
            reqwest::StatusCode::from_u16(status).unwrap(),
            &headers,
            &text,
        );
    }
});
