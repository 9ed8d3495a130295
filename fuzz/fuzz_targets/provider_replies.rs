//! The provider reply readers and error classification, on any body: whole replies, the
//! events of a streamed one (the input's lines, each `event data`, and the input read as an
//! event stream by the SSE parser, in two pieces cut where its first byte says), and error
//! bodies with the headers the client reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::definition::WireApi;
use mcp_agents::providers::{
    SseParser, classify_error_event, classify_status, error_details, format, parse_message,
    parse_response, requested_delay,
};
use mcp_agents::redact::Secrets;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // A key the input may hold, whole, in part, or across any cut.
    let secrets = Secrets::new(["sk-fuzz-0123456789"]);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let _ = parse_response(value.clone(), &secrets);
        let _ = parse_message(value.clone(), &secrets);
        let _ = format(WireApi::ChatCompletions).parse("p", &secrets, value.clone());
        let _ = classify_error_event("p", &secrets, &value);
    }
    for api in WireApi::ALL {
        let mut stream = format(api).stream("p", &secrets);
        for line in text.lines() {
            let (event, data) = line.split_once(' ').unwrap_or(("message", line));
            if stream.event(event, data).is_err() {
                break;
            }
        }
    }
    let cut = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    let mut parser = SseParser::new(1 << 20);
    let mut stream = format(WireApi::Responses).stream("p", &secrets);
    for piece in [&data[..cut], &data[cut..]] {
        if parser.feed(piece).is_err() {
            break;
        }
        while let Some(event) = parser.next_event() {
            let _ = stream.event(&event.event, &event.data);
        }
    }
    parser.finish();
    while let Some(event) = parser.next_event() {
        let _ = stream.event(&event.event, &event.data);
    }
    let _ = error_details(&text);
    // The body's first line doubles as the value of every header the client reads.
    let mut headers = reqwest::header::HeaderMap::new();
    if let Ok(value) = reqwest::header::HeaderValue::from_str(text.lines().next().unwrap_or("")) {
        for name in ["retry-after-ms", "retry-after", "x-should-retry", "request-id"] {
            headers.insert(name, value.clone());
        }
    }
    let _ = requested_delay(&headers, &text);
    for status in [400u16, 413, 429, 500, 529] {
        let _ = classify_status(
            "p",
            &secrets,
            reqwest::StatusCode::from_u16(status).unwrap(),
            &headers,
            &text,
        );
    }
});
