//! What a provider's error answer says, read apart from what it means (`classify`): the
//! error's fields in every shape servers send them ([`error_details`]), whether a stream's
//! event carries an error, the provider's request id, a proxy's page as text, and the delay
//! the provider asks for before a retry ([`requested_delay`]).

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::limits::PROVIDER_REQUEST_ID_CHARS;

/// The request id a provider's answer carries: Anthropic's `request-id`, OpenAI's
/// `x-request-id`. Only a short, printable value is taken: it goes into error messages.
pub(super) fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id"]
        .iter()
        .filter_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .find(|id| is_request_id(id))
        .map(str::to_owned)
}

/// The `request_id` an Anthropic error body carries (the header's value, repeated).
pub(super) fn body_request_id(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let id = value["request_id"].as_str()?.trim();
    is_request_id(id).then(|| id.to_owned())
}

fn is_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= PROVIDER_REQUEST_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// The parts of an error body the APIs share: `{"error": {"message", "type", "code"}}`, or
/// the flat `{"type": "error", "code", "message"}` of a Responses stream `error` event, or
/// the flat `{"object": "error", "message", "type", "code"}` of older vLLM; Gemini's
/// endpoint wraps the first in a one-element array (`[{"error": {"code": 400, "message",
/// "status": "INVALID_ARGUMENT"}}]`), whose `status` stands for the type.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ErrorDetails {
    pub message: Option<String>,
    pub kind: Option<String>,
    pub code: Option<String>,
    /// The request field the error is about (OpenAI's `param`).
    pub param: Option<String>,
}

pub fn error_details(body: &str) -> ErrorDetails {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ErrorDetails::default();
    };
    details_of(&value)
}

pub(super) fn details_of(value: &Value) -> ErrorDetails {
    if let Value::Array(items) = value
        && let [only] = items.as_slice()
    {
        return details_of(only);
    }
    let error = &value["error"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    // Identifiers, shown in labels and retry notices: kept whole for matching, and cut
    // (after the secrets are hidden) where they are quoted.
    let label = |v: &Value| {
        v.as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    match error {
        Value::Object(_) => ErrorDetails {
            message: text(&error["message"]),
            kind: label(&error["type"]).or_else(|| label(&error["status"])),
            code: label(&error["code"]),
            param: label(&error["param"]),
        },
        Value::String(message) => ErrorDetails {
            message: Some(message.clone()),
            ..ErrorDetails::default()
        },
        // vLLM before 0.10.1: the error's fields at the top; Mistral's the same, its
        // `message` a pydantic `{"detail": […]}` object (quoted as JSON).
        _ if value["object"] == "error" => ErrorDetails {
            message: text(&value["message"]).or_else(|| {
                (value["message"].is_object() || value["message"].is_array())
                    .then(|| value["message"].to_string())
            }),
            kind: label(&value["type"]),
            code: label(&value["code"]),
            param: label(&value["param"]),
        },
        // The flat event: its `type` is "error" itself, so only `code` says what it is.
        _ if value["type"] == "error" => ErrorDetails {
            message: text(&value["message"]),
            kind: None,
            code: label(&value["code"]),
            param: label(&value["param"]),
        },
        _ => ErrorDetails::default(),
    }
}

/// Whether an event's data carries an `error` as openai-python reads it: present and not
/// empty, null or false.
pub(super) fn carries_error(value: &Value) -> bool {
    match value.get("error") {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Object(fields)) => !fields.is_empty(),
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    }
}

/// A body with no error message, as text: an HTML page's title, or its text without tags;
/// anything else with its JSON escapes decoded, so that a key written `\u0073\u006b-…` or
/// with `\/` reads, and is hidden, as the key it is.
pub(super) fn readable_body(body: &str) -> String {
    let start = body.trim_start();
    let lower: String = start.chars().take(512).collect::<String>().to_lowercase();
    if !(lower.starts_with("<!doctype html")
        || lower.starts_with("<html")
        || lower.starts_with("<head")
        || lower.starts_with("<body"))
    {
        return crate::text::decode_json_escapes(body);
    }
    let lower_all = start.to_lowercase();
    if let (Some(open), Some(close)) = (lower_all.find("<title>"), lower_all.find("</title>"))
        && open + "<title>".len() <= close
        && let Some(title) = start.get(open + "<title>".len()..close)
        && !title.trim().is_empty()
    {
        return title.trim().to_owned();
    }
    let mut text = String::new();
    let mut in_tag = false;
    for c in start.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The delay a provider asks for: `retry-after-ms`, then `retry-after` (seconds, or an
/// HTTP-date: the time from now until then), then "try again in 1.5s / 28ms" in the
/// message; the official SDKs read the same headers in the same order.
pub fn requested_delay(headers: &HeaderMap, message: &str) -> Option<Duration> {
    requested_delay_at(headers, message, std::time::SystemTime::now())
}

/// [`requested_delay`], `now` being the time an HTTP-date is counted from.
fn requested_delay_at(
    headers: &HeaderMap,
    message: &str,
    now: std::time::SystemTime,
) -> Option<Duration> {
    let header = |name: &str| -> Option<f64> {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = header("retry-after-ms") {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    if let Some(s) = header("retry-after") {
        return Duration::try_from_secs_f64(s).ok();
    }
    let date = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v.trim()).ok());
    if let Some(date) = date {
        // A date already past asks for no wait.
        return Some(date.duration_since(now).unwrap_or(Duration::ZERO));
    }
    try_again_in(message)
}

/// Parses "try again in 11.054s", "in 28ms", "in 2 seconds".
fn try_again_in(message: &str) -> Option<Duration> {
    let lower = message.to_lowercase();
    let rest = &lower[lower.find("try again in")? + "try again in".len()..];
    let rest = rest.trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let number: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let seconds = if unit.starts_with("ms") {
        number / 1000.0
    } else if unit.starts_with('s') {
        number
    } else {
        return None;
    };
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn requested_delays_in_every_spelling() {
        assert_eq!(
            requested_delay(&headers(&[("retry-after-ms", "250")]), ""),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            requested_delay(&headers(&[("retry-after", "2")]), ""),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            requested_delay(&HeaderMap::new(), "Please try again in 11.054s. Visit …"),
            Some(Duration::from_millis(11054))
        );
        assert_eq!(
            requested_delay(&HeaderMap::new(), "try again in 28ms"),
            Some(Duration::from_millis(28))
        );
        assert_eq!(
            requested_delay(&HeaderMap::new(), "Try again in 3 seconds"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(requested_delay(&HeaderMap::new(), "try again later"), None);
        assert_eq!(
            requested_delay(&headers(&[("retry-after", "soon")]), ""),
            None
        );
    }

    #[test]
    fn an_http_date_is_the_time_until_then() {
        let now = httpdate::parse_http_date("Tue, 01 Dec 2026 17:00:00 GMT").unwrap();
        let at =
            |value: &'static str| requested_delay_at(&headers(&[("retry-after", value)]), "", now);
        assert_eq!(
            at("Tue, 01 Dec 2026 17:01:30 GMT"),
            Some(Duration::from_secs(90))
        );
        assert_eq!(at("Tue, 01 Dec 2026 16:59:00 GMT"), Some(Duration::ZERO));
        assert_eq!(at("tomorrow"), None);
    }

    /// A delay too long for a `Duration` is no delay at all, never a panic (found in review:
    /// `retry-after-ms: 1e30` used to panic the run task).
    #[test]
    fn absurd_delays_are_ignored() {
        for (name, value) in [
            ("retry-after-ms", "1e30"),
            ("retry-after", "1e30"),
            ("retry-after-ms", "-5"),
            ("retry-after", "inf"),
            ("retry-after", "NaN"),
        ] {
            assert_eq!(
                requested_delay(&headers(&[(name, value)]), ""),
                None,
                "{name}: {value}"
            );
        }
        let huge = format!("try again in {}s", "9".repeat(400));
        assert_eq!(requested_delay(&HeaderMap::new(), &huge), None);
    }
}
