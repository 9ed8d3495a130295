//! The HTTP side shared by both wire APIs: the retry loop, and the classification of every
//! failure into "retry", "context limit" or "give up". The client itself is `net`'s.
//!
//! Retried: connection errors, timeouts, unreadable bodies, 408, 409, 429, 5xx and 529
//! (unless the provider says `x-should-retry: false` or the quota is exhausted). The delay is
//! the provider's (`retry-after-ms`, `retry-after`, "try again in 2.5s") when it gives one,
//! else exponential backoff with jitter. A context-window overflow is never retried.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use url::Url;

use super::error::{ProviderError, ProviderFailure};
use crate::limits::{
    PROVIDER_BODY_CHARS, PROVIDER_CONNECT_TIMEOUT, PROVIDER_MAX_REQUESTED_DELAY,
    PROVIDER_MESSAGE_CHARS, PROVIDER_REPLY_BYTES, PROVIDER_REQUEST_TIMEOUT, PROVIDER_RETRIES,
    PROVIDER_RETRY_BASE_DELAY, PROVIDER_RETRY_MAX_DELAY,
};

/// How many times, and how patiently, to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubled per retry.
    pub base_delay: Duration,
    /// Longest backoff delay.
    pub max_delay: Duration,
    /// Longest provider-requested delay honoured; a longer one ends the retries.
    pub max_requested_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: PROVIDER_RETRIES,
            base_delay: PROVIDER_RETRY_BASE_DELAY,
            max_delay: PROVIDER_RETRY_MAX_DELAY,
            max_requested_delay: PROVIDER_MAX_REQUESTED_DELAY,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Backoff before retry number `retry` (1-based): `base · 2^(retry-1)`, capped, minus up
    /// to a quarter at random so that many clients do not retry in step.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry.saturating_sub(1)).min(16));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(1.0 - 0.25 * rand::random::<f64>())
    }
}

/// What the retry loop tells its caller before waiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// 1 for the first retry.
    pub retry: u32,
    pub max_retries: u32,
    /// Short reason, such as "HTTP 429" or "timed out".
    pub reason: String,
    pub delay: Duration,
}

/// How one attempt failed.
#[derive(Debug)]
pub enum AttemptError {
    Retryable {
        reason: String,
        /// The delay the provider asked for.
        after: Option<Duration>,
        timeout: bool,
        /// The message to report if this was the last attempt.
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
}

/// POSTs `body` to `url`, parses a 2xx body with `parse`, and retries as the policy says.
#[allow(clippy::too_many_arguments)]
pub async fn post_with_retries<T>(
    client: &reqwest::Client,
    url: &Url,
    headers: HeaderMap,
    body: &Value,
    provider: &str,
    policy: &RetryPolicy,
    parse: fn(Value) -> Result<T, AttemptError>,
    on_retry: &(dyn Fn(&RetryNotice) + Send + Sync),
) -> Result<T, ProviderError> {
    // Encoded once; each attempt shares the bytes.
    let body = match serde_json::to_vec(body) {
        Ok(encoded) => bytes::Bytes::from(encoded),
        Err(e) => {
            return Err(ProviderError::failed(format!(
                "cannot encode the request: {e}"
            )));
        }
    };
    let mut retry = 0;
    loop {
        let attempt = attempt(client, url, &headers, &body, provider, parse).await;
        let (reason, after, timeout, message) = match attempt {
            Ok(value) => return Ok(value),
            Err(AttemptError::Fatal(e)) => return Err(e),
            Err(AttemptError::Retryable {
                reason,
                after,
                timeout,
                message,
            }) => (reason, after, timeout, message),
        };
        let give_up = |message: String| ProviderError {
            failure: if timeout {
                ProviderFailure::Timeout
            } else {
                ProviderFailure::Failed
            },
            message,
        };
        if retry >= policy.max_retries {
            let attempts = retry + 1;
            return Err(give_up(format!(
                "{message} (after {attempts} attempt{})",
                if attempts == 1 { "" } else { "s" }
            )));
        }
        if let Some(after) = after
            && after > policy.max_requested_delay
        {
            return Err(give_up(format!(
                "{message} ({provider} asked to wait {} s before retrying, longer than the \
                 {} s this server waits)",
                after.as_secs(),
                policy.max_requested_delay.as_secs()
            )));
        }
        retry += 1;
        let delay = after.unwrap_or_else(|| policy.backoff(retry));
        on_retry(&RetryNotice {
            retry,
            max_retries: policy.max_retries,
            reason,
            delay,
        });
        tokio::time::sleep(delay).await;
    }
}

async fn attempt<T>(
    client: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
    body: &bytes::Bytes,
    provider: &str,
    parse: fn(Value) -> Result<T, AttemptError>,
) -> Result<T, AttemptError> {
    // `headers` carries the content type.
    let response = client
        .post(url.clone())
        .headers(headers.clone())
        .body(body.clone())
        .send()
        .await
        .map_err(|e| transport_error(provider, &e))?;
    let status = response.status();
    let response_headers = response.headers().clone();
    let bytes = read_bounded(response, provider).await?;
    if !status.is_success() {
        return Err(classify_status(
            provider,
            status,
            &response_headers,
            &String::from_utf8_lossy(&bytes),
        ));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        AttemptError::retryable(
            "unreadable reply",
            format!("{provider} answered HTTP {status} with a body that is not JSON ({e})"),
        )
    })?;
    parse(value)
}

/// Reads the body, refusing (without retrying) one larger than [`PROVIDER_REPLY_BYTES`].
async fn read_bounded(
    mut response: reqwest::Response,
    provider: &str,
) -> Result<bytes::Bytes, AttemptError> {
    let too_large = || {
        AttemptError::Fatal(ProviderError::failed(format!(
            "{provider} sent a reply larger than {} MiB, more than any model reply",
            PROVIDER_REPLY_BYTES / (1024 * 1024)
        )))
    };
    if response
        .content_length()
        .is_some_and(|n| n > PROVIDER_REPLY_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(provider, &e))?
    {
        if body.len() + chunk.len() > PROVIDER_REPLY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

fn transport_error(provider: &str, e: &reqwest::Error) -> AttemptError {
    // reqwest's messages name the URL, never headers, so they carry no key.
    let timeout = e.is_timeout();
    let what = if timeout {
        if e.is_connect() {
            format!(
                "could not connect to {provider} within {} s",
                PROVIDER_CONNECT_TIMEOUT.as_secs()
            )
        } else {
            format!(
                "{provider} did not answer within {} s",
                PROVIDER_REQUEST_TIMEOUT.as_secs()
            )
        }
    } else if e.is_connect() {
        format!("could not connect to {provider}: {}", source_chain(e))
    } else {
        format!("the connection to {provider} failed: {}", source_chain(e))
    };
    AttemptError::Retryable {
        reason: if timeout {
            "timed out"
        } else {
            "connection failed"
        }
        .to_owned(),
        after: None,
        timeout,
        message: what,
    }
}

/// The innermost cause of a transport error, which says what happened ("connection reset").
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut innermost = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        innermost = s.to_string();
        source = s.source();
    }
    innermost
}

/// The parts of an error body both APIs share: `{"error": {"message", "type", "code"}}`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ErrorDetails {
    pub message: Option<String>,
    pub kind: Option<String>,
    pub code: Option<String>,
}

pub fn error_details(body: &str) -> ErrorDetails {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ErrorDetails::default();
    };
    let error = &value["error"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    match error {
        Value::Object(_) => ErrorDetails {
            message: text(&error["message"]),
            kind: text(&error["type"]),
            code: text(&error["code"]),
        },
        Value::String(message) => ErrorDetails {
            message: Some(message.clone()),
            ..ErrorDetails::default()
        },
        _ => ErrorDetails::default(),
    }
}

/// Phrases providers use when the input no longer fits (OpenAI, Anthropic, OpenRouter and
/// compatible servers). Matched case-insensitively; codes are checked first.
const OVERFLOW_PHRASES: &[&str] = &[
    "exceeds the context window",
    "maximum context length",
    "prompt is too long",
    "exceed context limit",
    "context length exceeded",
    "context_length_exceeded",
    "input is too long for",
];

/// Whether a code or message says the input does not fit the context window.
pub fn is_context_overflow(code: Option<&str>, message: &str) -> bool {
    if code == Some("context_length_exceeded") {
        return true;
    }
    let lower = message.to_lowercase();
    OVERFLOW_PHRASES.iter().any(|p| lower.contains(p))
}

/// Classifies a non-2xx answer.
pub fn classify_status(
    provider: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &str,
) -> AttemptError {
    let details = error_details(body);
    // The whole message (or body) is classified; a bounded part of it is quoted.
    let (message, quoted) = match &details.message {
        Some(message) => (message.as_str(), snippet(message, PROVIDER_MESSAGE_CHARS)),
        None => (body, snippet(body, PROVIDER_BODY_CHARS)),
    };
    let quoted = quoted.unwrap_or_else(|| "no error message".to_owned());
    let label = match (&details.code, &details.kind) {
        (Some(code), _) => format!("HTTP {} {code}", status.as_u16()),
        (None, Some(kind)) => format!("HTTP {} {kind}", status.as_u16()),
        (None, None) => format!("HTTP {}", status.as_u16()),
    };
    let full = format!("{provider} answered {label}: {quoted}");

    if status == StatusCode::PAYLOAD_TOO_LARGE
        || (status.is_client_error() && is_context_overflow(details.code.as_deref(), message))
    {
        return AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::ContextLimit,
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
            reason: format!("HTTP {}", status.as_u16()),
            after: requested_delay(headers, message),
            timeout: false,
            message: full,
        };
    }
    AttemptError::Fatal(ProviderError::failed(full))
}

/// The trimmed text, cut at `max` characters with "…" when longer; `None` when empty.
pub fn snippet(text: &str, max: usize) -> Option<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    let cut: String = trimmed.chars().take(max).collect();
    Some(if cut.len() < trimmed.len() {
        format!("{cut}…")
    } else {
        cut
    })
}

/// The delay a provider asks for: `retry-after-ms`, then `retry-after` (seconds), then
/// "try again in 1.5s / 28ms" in the message.
pub fn requested_delay(headers: &HeaderMap, message: &str) -> Option<Duration> {
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
        assert!(is_context_overflow(Some("context_length_exceeded"), ""));
        assert!(is_context_overflow(
            None,
            "prompt is too long: 208310 tokens > 200000 maximum"
        ));
        assert!(is_context_overflow(
            None,
            "This endpoint's maximum context length is 32768 tokens."
        ));
        assert!(!is_context_overflow(
            None,
            "max_tokens: 21333 > 4096, which is the maximum allowed"
        ));
    }

    #[test]
    fn statuses_are_classified() {
        let h = HeaderMap::new();
        let retry = |s: u16, body: &str| {
            matches!(
                classify_status("p", StatusCode::from_u16(s).unwrap(), &h, body),
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
            classify_status("p", StatusCode::SERVICE_UNAVAILABLE, &no, "{}"),
            AttemptError::Fatal(_)
        ));
        match classify_status("p", StatusCode::PAYLOAD_TOO_LARGE, &h, "too big") {
            AttemptError::Fatal(e) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default();
        for retry in 1..10 {
            let d = p.backoff(retry);
            let nominal = (p.base_delay * 2u32.pow(retry - 1)).min(p.max_delay);
            assert!(d <= nominal && d >= nominal.mul_f64(0.75), "{retry}: {d:?}");
        }
    }
}
