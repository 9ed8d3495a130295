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
    // The body's first line doubles as the value of every header the client reads.
    let mut headers = reqwest::header::HeaderMap::new();
    if let Ok(value) = reqwest::header::HeaderValue::from_str(text.lines().next().unwrap_or("")) {
        for name in ["retry-after-ms", "retry-after", "x-should-retry"] {
            headers.insert(name, value.clone());
        }
    }
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
