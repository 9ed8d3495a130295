//! How one attempt at a request failed, and the classification of every failure into
//! "retry", "retry once" (the reply had begun), "context limit" or "give up".
//!
//! Retried: connection errors, timeouts, unreadable bodies, 408, 409, 429, 5xx and 529
//! (unless the provider says `x-should-retry: false` or the quota is exhausted), and the
//! same failures when a stream reports them as an `error` event. The delay is the
//! provider's (`retry-after-ms`, `retry-after`, "try again in 2.5s") when it gives one, else
//! exponential backoff with jitter. A context-window overflow is never retried, and a 400
//! that names an optional parameter the model refuses is marked as such (`unsupported`), so
//! the client can send the request again without it.
//!
//! What a provider says is quoted in at most [`PROVIDER_MESSAGE_CHARS`] characters
//! ([`quoted`]), whatever the route (an HTTP error, a stream's `error` event, a response that
//! failed or stopped), and the provider's request id is added to the message when it sent
//! one ([`AttemptError::with_request_id`]). Every quote hides the run's secrets before it is
//! cut (a gateway may quote the request's key back), and whatever the cut left of one at its
//! end ([`Secrets::quote`]).

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use super::error::{ProviderError, ProviderFailure};
use super::unsupported;
use crate::limits::{
    PROVIDER_BODY_CHARS, PROVIDER_ERROR_LABEL_CHARS, PROVIDER_MESSAGE_CHARS,
    PROVIDER_REQUEST_ID_CHARS,
};
use crate::redact::Secrets;

/// How one attempt failed.
#[derive(Debug)]
pub enum AttemptError {
    /// Before the reply began, or said by the provider to be transient: the normal retry
    /// policy applies.
    Retryable {
        reason: String,
        /// The delay the provider asked for.
        after: Option<Duration>,
        timeout: bool,
        /// The message to report if this was the last attempt.
        message: String,
    },
    /// The reply had begun and then stalled, broke off, or ended without its last event.
    /// The provider bills that generation, so it is retried at most once (SPEC §6.1).
    BrokeOff {
        reason: String,
        timeout: bool,
        message: String,
    },
    Fatal(ProviderError),
}

impl AttemptError {
    pub fn retryable(reason: impl Into<String>, message: impl Into<String>) -> Self {
        AttemptError::Retryable {
            reason: reason.into(),
            after: None,
            timeout: false,
            message: message.into(),
        }
    }

    /// The same failure, its message naming the provider's request id (what its support
    /// asks for), when there is one.
    pub fn with_request_id(mut self, id: Option<&str>) -> Self {
        let Some(id) = id else {
            return self;
        };
        let message = match &mut self {
            AttemptError::Retryable { message, .. } | AttemptError::BrokeOff { message, .. } => {
                message
            }
            AttemptError::Fatal(e) => &mut e.message,
        };
        message.push_str(&format!(" (request id {id})"));
        self
    }
}

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

fn details_of(value: &Value) -> ErrorDetails {
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
        // vLLM before 0.10.1: the error's fields at the top.
        _ if value["object"] == "error" => ErrorDetails {
            message: text(&value["message"]),
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

/// Error codes and types that say the input does not fit the context window: OpenAI's
/// `code` `context_length_exceeded`, and llama.cpp's server's `type`
/// `exceed_context_size_error` (its `code` is the HTTP status, 400).
const OVERFLOW_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size_error"];

/// Phrases providers and engines use when the input no longer fits, matched
/// case-insensitively after the codes. Each is specific to an overflow: "context length"
/// alone would also match a refusal of the output limit.
const OVERFLOW_PHRASES: &[&str] = &[
    // OpenAI, OpenRouter and compatible servers ("This model's maximum context length is
    // 16384 tokens. However, you requested …", also vLLM's older and current wording).
    "exceeds the context window",
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
    "prompt is too long",
    "exceed context limit",
    "input is too long for",
    // llama.cpp's server: "request (20034 tokens) exceeds the available context size (8192
    // tokens), try increasing it".
    "exceeds the available context size",
    // vLLM: "… However, the model's context length is only 4096 tokens, resulting in a
    // maximum input length of …", "The decoder prompt (length 8825) is longer than the
    // maximum model length of 8192.", "The prompt (total length 25938) is too long to fit
    // into the model (context length 4096)."
    "context length is only",
    "longer than the maximum model length",
    "too long to fit into the model",
    // Ollama: "the prompt is longer than the context length currently available to the
    // model; …", "the input length exceeds the context length" (and "input exceeds maximum
    // context length and cannot be truncated further", "input length (N tokens) exceeds the
    // model's maximum context length (M tokens)", which "maximum context length" above
    // catches).
    "longer than the context length",
    "exceeds the context length",
    // LM Studio: "Trying to keep the first 111490 tokens when context the overflows. However,
    // the model is loaded with context length of only 32768 tokens, …" (its typo), and its
    // MLX backend's "Context size has been exceeded".
    "context length of only",
    "when context the overflows",
    "context size has been exceeded",
    // Gemini: "The input token count (1196265) exceeds the maximum number of tokens allowed
    // (1048575)."
    "exceeds the maximum number of tokens allowed",
];

/// Whether an error's labels (its code, its type) or its message say the input does not
/// fit the context window.
pub(super) fn is_context_overflow(labels: &[Option<&str>], message: &str) -> bool {
    if labels
        .iter()
        .flatten()
        .any(|label| OVERFLOW_CODES.contains(label))
    {
        return true;
    }
    let lower = message.to_lowercase();
    OVERFLOW_PHRASES.iter().any(|p| lower.contains(p))
}

/// Classifies a non-2xx answer; `secrets` are hidden from every part of it quoted.
pub fn classify_status(
    provider: &str,
    secrets: &Secrets,
    status: StatusCode,
    headers: &HeaderMap,
    body: &str,
) -> AttemptError {
    let details = error_details(body);
    let shown = |label: &String| secrets.quote(label, PROVIDER_ERROR_LABEL_CHARS);
    let label = match (
        details.code.as_ref().and_then(shown),
        details.kind.as_ref().and_then(shown),
    ) {
        (Some(code), _) => format!("answered HTTP {} {code}", status.as_u16()),
        (None, Some(kind)) => format!("answered HTTP {} {kind}", status.as_u16()),
        (None, None) => format!("answered HTTP {}", status.as_u16()),
    };
    let reason = format!("HTTP {}", status.as_u16());
    let who = Who { provider, secrets };
    classify(who, &label, &reason, status, headers, &details, body)
}

/// Classifies an `error` event sent in the middle of a stream, as the HTTP status its kind
/// stands for would be (Messages `overloaded_error` as a 529, Responses
/// `rate_limit_exceeded` as a 429, …).
pub fn classify_error_event(provider: &str, secrets: &Secrets, event: &Value) -> AttemptError {
    let details = details_of(event);
    let kind = details.code.as_deref().or(details.kind.as_deref());
    // A gateway's code may be the HTTP status itself (LiteLLM: `"code": "500"`; vLLM and
    // llama.cpp send it as a number, `"code": 400`).
    let numeric = kind
        .and_then(|k| k.parse::<u16>().ok())
        .or_else(|| status_number(event))
        .filter(|s| (400..600).contains(s));
    let shown = kind.and_then(|kind| secrets.quote(kind, PROVIDER_ERROR_LABEL_CHARS));
    let status = match kind.unwrap_or("") {
        _ if numeric.is_some() => numeric.unwrap_or(400),
        "overloaded_error" => 529,
        "api_error" | "server_error" | "internal_error" => 500,
        "server_is_overloaded" | "slow_down" => 503,
        "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" => 429,
        "timeout_error" => 504,
        "request_too_large" => 413,
        "authentication_error" | "invalid_api_key" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "billing_error" => 402,
        // `invalid_request_error`, `context_length_exceeded` and anything unknown: the
        // request itself was refused, which another attempt would not change.
        _ => 400,
    };
    let label = format!(
        "sent an error event in its reply ({})",
        shown.as_deref().unwrap_or("no type")
    );
    let raw = event.to_string();
    classify(
        Who { provider, secrets },
        &label,
        shown.as_deref().unwrap_or("error event"),
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        &HeaderMap::new(),
        &details,
        &raw,
    )
}

/// Who answered, and the secrets a quote of what they said must hide.
#[derive(Clone, Copy)]
struct Who<'a> {
    provider: &'a str,
    secrets: &'a Secrets,
}

/// The HTTP status an error event carries as a number (`{"error": {"code": 400}}`).
fn status_number(event: &Value) -> Option<u16> {
    let code = &event["error"]["code"];
    code.as_u64().and_then(|c| u16::try_from(c).ok())
}

/// `label` says what was received ("answered HTTP 429 rate_limit_exceeded"), `reason` is
/// the short form a retry notice shows ("HTTP 429", "overloaded_error"); both are quoted
/// already.
fn classify(
    Who { provider, secrets }: Who<'_>,
    label: &str,
    reason: &str,
    status: StatusCode,
    headers: &HeaderMap,
    details: &ErrorDetails,
    body: &str,
) -> AttemptError {
    // The whole message (or body) is classified; a bounded part of it is quoted.
    let readable;
    let (message, quoted) = match &details.message {
        Some(message) => (
            message.as_str(),
            secrets.quote(message, PROVIDER_MESSAGE_CHARS),
        ),
        None => {
            // A proxy's page (a 413 from a load balancer, a 502 from a gateway) is quoted by
            // its text, not its markup.
            readable = readable_body(body);
            (
                readable.as_str(),
                secrets.quote(&readable, PROVIDER_BODY_CHARS),
            )
        }
    };
    let quoted = quoted.unwrap_or_else(|| "no error message".to_owned());
    let full = format!("{provider} {label}: {quoted}");

    if status.is_client_error()
        && is_context_overflow(&[details.code.as_deref(), details.kind.as_deref()], message)
    {
        return AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::ContextLimit,
            message: full,
        });
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        // Too large for whatever answered (the API's own 32 MB limit, or a proxy's), which
        // is not the model's context window unless the body says so.
        return AttemptError::Fatal(ProviderError::failed(format!(
            "{full}; the request was too large for {provider} or a proxy in front of it"
        )));
    }
    if status == StatusCode::BAD_REQUEST
        && let Some(refused) = unsupported::named_in(details.param.as_deref(), message)
    {
        let failure = match refused {
            unsupported::Refused::Param(param) => ProviderFailure::Unsupported(param),
            unsupported::Refused::EffortLevel(levels) => ProviderFailure::EffortLevel(levels),
        };
        return AttemptError::Fatal(ProviderError {
            failure,
            message: full,
        });
    }
    let quota = details.code.as_deref() == Some("insufficient_quota")
        || details.kind.as_deref() == Some("insufficient_quota")
        || details.kind.as_deref() == Some("billing_error");
    let should_retry = headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.eq_ignore_ascii_case("true"));
    let transient = matches!(status.as_u16(), 408 | 409 | 429 | 529) || status.is_server_error();
    if !quota && should_retry.unwrap_or(transient) {
        return AttemptError::Retryable {
            reason: reason.to_owned(),
            after: requested_delay(headers, message),
            timeout: false,
            message: full,
        };
    }
    AttemptError::Fatal(ProviderError::failed(full))
}

/// What a provider said, as quoted in an error: `secrets` hidden, then at most
/// [`PROVIDER_MESSAGE_CHARS`] characters (SPEC §6.1 "Errors"). Every route quotes through
/// here or [`Secrets::quote`].
pub(super) fn quoted(secrets: &Secrets, message: &str) -> String {
    secrets
        .quote(message, PROVIDER_MESSAGE_CHARS)
        .unwrap_or_else(|| "no error message".to_owned())
}

/// A body with no error message, as text: an HTML page's title, or its text without tags;
/// anything else with its JSON escapes decoded, so that a key written `\u0073\u006b-…` or
/// with `\/` reads, and is hidden, as the key it is.
fn readable_body(body: &str) -> String {
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

/// The innermost cause of a transport error, which says what happened ("connection reset").
/// reqwest's messages name the URL, never headers, so they carry no key.
pub(super) fn innermost_cause(e: &dyn std::error::Error) -> String {
    let mut innermost = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        innermost = s.to_string();
        source = s.source();
    }
    innermost
}

/// The output limit a provider's refusal names as the model's maximum, when the refusal is
/// about the output limit: Messages "max_tokens: 200000 > 128000, which is the maximum
/// allowed number of output tokens for …", Responses "Invalid 'max_output_tokens': integer
/// above maximum value. Expected a value <= 128000, …", the Chat Completions wording
/// compatible servers use, "This model supports at most 16384 completion tokens" (of
/// `max_tokens` or `max_completion_tokens`), Volcengine's "The parameter
/// `max_completion_tokens` … expected a value <= 12288", and DeepSeek's "Invalid max_tokens
/// value, the valid range of max_tokens is [1, 8192]".
pub(super) fn named_output_maximum(message: &str) -> Option<u32> {
    let lower = message.to_lowercase();
    if !["max_tokens", "max_output_tokens", "max_completion_tokens"]
        .iter()
        .any(|name| lower.contains(name))
    {
        return None;
    }
    let number_after = |marker: &str| -> Option<u32> {
        let at = lower.find(marker)? + marker.len();
        let digits: String = lower[at..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    if let Some(at) = lower.find(", which is the maximum") {
        // "… > 128000, which is the maximum": the number just before the marker.
        let before = lower[..at].trim_end();
        let digits: String = before
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return digits.parse().ok();
    }
    number_after("expected a value <=")
        .or_else(|| number_after("supports at most"))
        .or_else(|| number_after("maximum value is"))
        .or_else(|| number_after("valid range of max_tokens is [1,"))
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn overflow_is_recognised_by_code_and_by_phrase() {
        assert!(is_context_overflow(&[Some("context_length_exceeded")], ""));
        assert!(is_context_overflow(
            &[None, Some("exceed_context_size_error")],
            ""
        ));
        assert!(is_context_overflow(
            &[None],
            "prompt is too long: 208310 tokens > 200000 maximum"
        ));
        assert!(is_context_overflow(
            &[None],
            "This endpoint's maximum context length is 32768 tokens."
        ));
        assert!(!is_context_overflow(
            &[None],
            "max_tokens: 21333 > 4096, which is the maximum allowed"
        ));
        assert!(!is_context_overflow(
            &[Some("invalid_request_error")],
            "Invalid 'max_output_tokens': integer above maximum value."
        ));
        assert!(is_context_overflow(
            &[None],
            "The input token count (1196265) exceeds the maximum number of tokens allowed \
             (1048575)."
        ));
    }

    /// The wordings other engines document (their sources are at [`OVERFLOW_PHRASES`]),
    /// each recognised from its message alone.
    #[test]
    fn every_documented_engine_wording_is_an_overflow() {
        let wordings = [
            // llama.cpp's server.
            "request (20034 tokens) exceeds the available context size (8192 tokens), try \
             increasing it",
            // vLLM, current and older releases.
            "You passed 9000 input tokens and requested 100 output tokens. However, the \
             model's context length is only 8192 tokens, resulting in a maximum input length \
             of 8092 tokens. Please reduce the length of the input prompt.",
            "This model's maximum context length is 131072 tokens. However, you requested \
             1024 output tokens and your prompt contains at least 130049 input tokens, for a \
             total of at least 131073 tokens. (parameter=input_tokens, value=130049)",
            "The decoder prompt (length 8825) is longer than the maximum model length of 8192.",
            "The prompt (total length 25938) is too long to fit into the model (context \
             length 4096).",
            // Ollama.
            "the prompt is longer than the context length currently available to the model; \
             shorten the prompt, adjust the context length in settings, or use a model with a \
             longer context length",
            "the input length exceeds the context length",
            "input exceeds maximum context length and cannot be truncated further",
            "input length (9000 tokens) exceeds the model's maximum context length (8192 \
             tokens)",
            // LM Studio.
            "Trying to keep the first 111490 tokens when context the overflows. However, the \
             model is loaded with context length of only 32768 tokens, which is not enough. \
             Try to load the model with a larger context length, or provide a shorter input.",
            "Context size has been exceeded.",
        ];
        for wording in wordings {
            assert!(is_context_overflow(&[None], wording), "{wording}");
        }
    }

    /// llama.cpp's 400, on both its Responses and its Messages endpoint (OpenAI's error
    /// shape on both), is a context limit, never retried.
    #[test]
    fn llama_cpps_overflow_is_a_context_limit() {
        let body = r#"{"error":{"code":400,"message":"request (20034 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":20034,"n_ctx":8192}}"#;
        match classify_status(
            "127.0.0.1",
            &Secrets::default(),
            StatusCode::BAD_REQUEST,
            &HeaderMap::new(),
            body,
        ) {
            AttemptError::Fatal(e) => {
                assert_eq!(e.failure, ProviderFailure::ContextLimit);
                assert_eq!(
                    e.message,
                    "127.0.0.1 answered HTTP 400 exceed_context_size_error: request (20034 \
                     tokens) exceeds the available context size (8192 tokens), try increasing it"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_error_bodies_of_chat_completions_servers_are_read() {
        let gemini = r#"[{"error": {"code": 400, "message": "Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none", "status": "INVALID_ARGUMENT"}}]"#;
        let details = error_details(gemini);
        assert_eq!(
            details.message.as_deref(),
            Some("Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none")
        );
        assert_eq!(details.kind.as_deref(), Some("INVALID_ARGUMENT"));
        assert_eq!(details.code, None, "a number is not a label");
        let flat = r#"{"object": "error", "message": "[{'type': 'extra_forbidden'}]", "type": "BadRequestError", "param": null, "code": 400}"#;
        assert_eq!(
            error_details(flat).message.as_deref(),
            Some("[{'type': 'extra_forbidden'}]")
        );
        // A mid-stream error whose code is the status as a number.
        let event = json!({"error": {"message": "busy", "type": "BadRequestError", "code": 503}});
        assert!(matches!(
            classify_error_event("vllm", &Secrets::default(), &event),
            AttemptError::Retryable { .. }
        ));
        let event = json!({"error": {"message": "bad", "type": "BadRequestError", "code": 400}});
        assert!(matches!(
            classify_error_event("vllm", &Secrets::default(), &event),
            AttemptError::Fatal(_)
        ));
    }

    #[test]
    fn statuses_are_classified() {
        let h = HeaderMap::new();
        let retry = |s: u16, body: &str| {
            matches!(
                classify_status(
                    "p",
                    &Secrets::default(),
                    StatusCode::from_u16(s).unwrap(),
                    &h,
                    body
                ),
                AttemptError::Retryable { .. }
            )
        };
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(retry(s, "{}"), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!retry(s, "{}"), "{s}");
        }
        let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        assert!(!retry(429, quota));
        let no = headers(&[("x-should-retry", "false")]);
        assert!(matches!(
            classify_status(
                "p",
                &Secrets::default(),
                StatusCode::SERVICE_UNAVAILABLE,
                &no,
                "{}"
            ),
            AttemptError::Fatal(_)
        ));
        match classify_status(
            "p",
            &Secrets::default(),
            StatusCode::PAYLOAD_TOO_LARGE,
            &h,
            "too big",
        ) {
            AttemptError::Fatal(e) => assert_eq!(e.failure, ProviderFailure::Failed),
            other => panic!("{other:?}"),
        }
        let overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
        match classify_status(
            "p",
            &Secrets::default(),
            StatusCode::PAYLOAD_TOO_LARGE,
            &h,
            overflow,
        ) {
            AttemptError::Fatal(e) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn error_events_are_classified_like_the_status_they_stand_for() {
        let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        match classify_error_event("anthropic", &Secrets::default(), &overloaded) {
            AttemptError::Retryable { message, .. } => assert_eq!(
                message,
                "anthropic sent an error event in its reply (overloaded_error): Overloaded"
            ),
            other => panic!("{other:?}"),
        }
        let flat = json!({"type": "error", "sequence_number": 2, "code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model.", "param": "input"});
        match classify_error_event("openai", &Secrets::default(), &flat) {
            AttemptError::Fatal(e) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
        let nested = json!({"type": "error", "error": {"type": "service_unavailable_error",
            "code": "server_is_overloaded", "message": "Our servers are currently overloaded."}});
        assert!(matches!(
            classify_error_event("openai", &Secrets::default(), &nested),
            AttemptError::Retryable { .. }
        ));
        let quota = json!({"type": "error", "code": "insufficient_quota", "message": "quota"});
        assert!(matches!(
            classify_error_event("openai", &Secrets::default(), &quota),
            AttemptError::Fatal(_)
        ));
        let unknown = json!({"type": "error", "code": "something_new", "message": "?"});
        assert!(matches!(
            classify_error_event("openai", &Secrets::default(), &unknown),
            AttemptError::Fatal(_)
        ));
    }

    #[test]
    fn the_output_maximum_a_refusal_names_is_read() {
        assert_eq!(
            named_output_maximum(
                "anthropic answered HTTP 400 invalid_request_error: max_tokens: 200000 > 128000, \
                 which is the maximum allowed number of output tokens for claude-opus-4-6"
            ),
            Some(128_000)
        );
        assert_eq!(
            named_output_maximum(
                "Invalid 'max_output_tokens': integer above maximum value. Expected a value <= \
                 100000, but got 128000 instead."
            ),
            Some(100_000)
        );
        assert_eq!(
            named_output_maximum(
                "max_tokens is too large: 32000. This model supports at most 16384 completion \
                 tokens, whereas you provided 32000."
            ),
            Some(16_384)
        );
        assert_eq!(
            named_output_maximum(
                "max_completion_tokens is too large: 999999. This model supports at most \
                 262144 completion tokens."
            ),
            Some(262_144)
        );
        assert_eq!(
            named_output_maximum(
                "The parameter `max_completion_tokens` specified in the request are not valid: \
                 integer above maximum value, expected a value <= 12288, but got 32000 instead."
            ),
            Some(12_288)
        );
        assert_eq!(
            named_output_maximum(
                "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"
            ),
            Some(8_192)
        );
        assert_eq!(named_output_maximum("Invalid value for 'model'."), None);
        assert_eq!(
            named_output_maximum("prompt is too long: 208310 tokens > 200000 maximum"),
            None,
            "not about the output limit"
        );
    }
}
