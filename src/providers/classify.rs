//! How one attempt at a request failed, and the classification of every failure into
//! "retry", "retry once" (the reply had begun), "context limit" or "give up".
//!
//! Retried: connection errors, timeouts, unreadable bodies, 408, 409, 429, 5xx and 529
//! (unless the provider says `x-should-retry: false` or the quota is exhausted), and the
//! same failures when a stream reports them as an `error` event. The delay is the
//! provider's (`retry-after-ms`, `retry-after`, "try again in 2.5s") when it gives one, else
//! exponential backoff with jitter (what the provider's answer says, its fields, request id
//! and delay, is read in `error_answer`). A context-window overflow (`overflow`) is never
//! retried; an output limit refused for the room the window leaves (`output_room`) is a
//! failure the client answers with that room as the limit, or an overflow when the room is
//! too small for a reply. A 400 or 422 that names an optional parameter the model refuses
//! is marked as such (`unsupported`), so the client can send the request again without it.
//!
//! What a provider says is quoted in at most [`PROVIDER_MESSAGE_CHARS`] characters
//! ([`quoted`]), whatever the route (an HTTP error, a stream's `error` event, a response that
//! failed or stopped), and the provider's request id is added to the message when it sent
//! one ([`AttemptError::with_request_id`]). Every quote hides the run's secrets before it is
//! cut (a gateway may quote the request's key back), and whatever the cut left of one at its
//! end ([`Secrets::quote`]).

use std::borrow::Cow;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::error::{ProviderError, ProviderFailure, Unavailable};
use super::error_answer::{
    ErrorDetails, details_of, error_details, readable_body, requested_delay,
};
use super::output_room::{context_room, number_after};
use super::overflow::is_context_overflow;
use super::unsupported;
use crate::limits::{PROVIDER_BODY_CHARS, PROVIDER_ERROR_LABEL_CHARS, PROVIDER_MESSAGE_CHARS};
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
        /// What the failure says of the model, if it is a rate limit or an overload: when
        /// it outlasts the retries, a fallback model may answer (SPEC §5.1).
        unavailable: Option<Unavailable>,
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
            unavailable: None,
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

/// The whole message (or body) of an error answer, which is classified, and the bounded
/// part of it that is quoted, secrets hidden.
fn message_of<'a>(
    secrets: &Secrets,
    details: &'a ErrorDetails,
    body: &str,
) -> (Cow<'a, str>, String) {
    let (message, quoted) = match &details.message {
        Some(message) => (
            Cow::Borrowed(message.as_str()),
            secrets.quote(message, PROVIDER_MESSAGE_CHARS),
        ),
        None => {
            // A proxy's page (a 413 from a load balancer, a 502 from a gateway) is quoted by
            // its text, not its markup.
            let readable = readable_body(body);
            let quoted = secrets.quote(&readable, PROVIDER_BODY_CHARS);
            (Cow::Owned(readable), quoted)
        }
    };
    (
        message,
        quoted.unwrap_or_else(|| "no error message".to_owned()),
    )
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
    let (message, quoted) = message_of(secrets, details, body);
    let message = message.as_ref();
    let full = format!("{provider} {label}: {quoted}");

    if status.is_client_error()
        && let Some(room) = context_room(message)
    {
        // The output limit, refused for the room the window leaves the input: the client asks
        // again with that room as the limit, unless there is too little for a reply.
        return AttemptError::Fatal(ProviderError {
            failure: if room.fits_a_reply() {
                ProviderFailure::Failed
            } else {
                ProviderFailure::ContextLimit
            },
            message: full,
        });
    }
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
    // A 422 is how pydantic servers refuse a field they do not know (Mistral's
    // `extra_forbidden`), as others do with a 400.
    if matches!(status.as_u16(), 400 | 422)
        && let Some(refused) = unsupported::named_in(details.param.as_deref(), message)
    {
        let failure = match refused {
            unsupported::Refused::Param(param) => ProviderFailure::Unsupported(param),
            unsupported::Refused::EffortLevel(levels) => ProviderFailure::EffortLevel(levels),
            unsupported::Refused::ReasoningWithTools => ProviderFailure::ReasoningWithTools,
            unsupported::Refused::ReasoningEcho => ProviderFailure::ReasoningEcho,
        };
        return AttemptError::Fatal(ProviderError {
            failure,
            message: full,
        });
    }
    let quota = details.code.as_deref() == Some("insufficient_quota")
        || details.kind.as_deref() == Some("insufficient_quota")
        || details.kind.as_deref() == Some("billing_error");
    if quota {
        // Never retried: the quota does not come back in seconds.
        return unavailable(Unavailable::Quota, full);
    }
    if names_an_unknown_model(status, details, message) {
        return unavailable(Unavailable::UnknownModel, full);
    }
    let should_retry = headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.eq_ignore_ascii_case("true"));
    let transient = matches!(status.as_u16(), 408 | 409 | 429 | 529) || status.is_server_error();
    if should_retry.unwrap_or(transient) {
        return AttemptError::Retryable {
            reason: reason.to_owned(),
            after: requested_delay(headers, message),
            timeout: false,
            message: full,
            unavailable: match status.as_u16() {
                429 => Some(Unavailable::RateLimited),
                503 | 529 => Some(Unavailable::Overloaded),
                _ => None,
            },
        };
    }
    AttemptError::Fatal(ProviderError::failed(full))
}

fn unavailable(why: Unavailable, message: String) -> AttemptError {
    AttemptError::Fatal(ProviderError {
        failure: ProviderFailure::Unavailable(why),
        message,
    })
}

/// Whether a 404 (or a 400) says the provider does not serve the model: OpenAI's and Groq's
/// `model_not_found` ("The model `x` does not exist or you do not have access to it."),
/// Groq's `model_decommissioned`, Anthropic's 404 `not_found_error` "model: claude-x",
/// vLLM's 404 "The model `x` does not exist.", Gemini's 404 "models/x is not found",
/// DeepSeek's 400 "Model Not Exist", Mistral's 400 "Invalid model: x", OpenRouter's 400
/// "x is not a valid model ID". A 404 that does not name a model (a wrong `base_url`)
/// is not one: another model would fail the same way.
fn names_an_unknown_model(status: StatusCode, details: &ErrorDetails, message: &str) -> bool {
    let codes = [details.code.as_deref(), details.kind.as_deref()];
    if codes
        .iter()
        .flatten()
        .any(|c| matches!(*c, "model_not_found" | "model_decommissioned"))
    {
        return true;
    }
    let lower = message.to_lowercase();
    let refused_model = [
        "model not exist",
        "invalid model",
        "not a valid model",
        "has been decommissioned",
    ]
    .iter()
    .any(|phrase| lower.contains(phrase));
    match status.as_u16() {
        404 => {
            lower.starts_with("model:")
                || lower.contains("model")
                    && (lower.contains("does not exist")
                        || lower.contains("not found")
                        || lower.contains("retired"))
                || refused_model
        }
        400 => refused_model,
        _ => false,
    }
}

/// What a provider said, as quoted in an error: `secrets` hidden, then at most
/// [`PROVIDER_MESSAGE_CHARS`] characters (SPEC §6.1 "Errors"). Every route quotes through
/// here or [`Secrets::quote`].
pub(super) fn quoted(secrets: &Secrets, message: &str) -> String {
    secrets
        .quote(message, PROVIDER_MESSAGE_CHARS)
        .unwrap_or_else(|| "no error message".to_owned())
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
    if let Some(room) = context_room(message) {
        // vLLM, TGI: the room the window leaves the input (`output_room`).
        return room.fits_a_reply().then(|| room.left());
    }
    let lower = message.to_lowercase();
    if !["max_tokens", "max_output_tokens", "max_completion_tokens"]
        .iter()
        .any(|name| lower.contains(name))
    {
        return None;
    }
    let number_after = |marker: &str| number_after(&lower, marker);
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
    use reqwest::header::HeaderValue;
    use serde_json::json;

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
        let mut no = HeaderMap::new();
        no.insert("x-should-retry", HeaderValue::from_static("false"));
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

    /// A 422 naming a field the server refuses is read like the 400, whatever the wire's
    /// error shape: Mistral's pydantic `extra_forbidden` (its message an object), and an
    /// OpenAI-shaped refusal of `temperature` as a proxy might send it.
    #[test]
    fn a_422_refusing_a_field_is_read_like_a_400() {
        use super::super::unsupported::OptionalParam;
        let mistral = r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","max_completion_tokens"],"msg":"Extra inputs are not permitted","input":32000}]},"type":"invalid_request_error","param":null,"code":null}"#;
        let openai = r#"{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}"#;
        for (body, param) in [
            (mistral, OptionalParam::CompletionTokens),
            (openai, OptionalParam::Temperature),
        ] {
            match classify_status(
                "p",
                &Secrets::default(),
                StatusCode::UNPROCESSABLE_ENTITY,
                &HeaderMap::new(),
                body,
            ) {
                AttemptError::Fatal(e) => {
                    assert_eq!(e.failure, ProviderFailure::Unsupported(param), "{body}");
                    assert!(e.message.contains("answered HTTP 422"), "{}", e.message);
                }
                other => panic!("{other:?}"),
            }
        }
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

    /// What each failure says of the model, for its fallbacks (SPEC §5.1): the providers'
    /// own bodies.
    #[test]
    fn failures_a_fallback_mends_are_told_apart() {
        let failure = |status: u16, body: &str| match classify_status(
            "p",
            &Secrets::default(),
            StatusCode::from_u16(status).unwrap(),
            &HeaderMap::new(),
            body,
        ) {
            AttemptError::Fatal(e) => Some(e.failure),
            AttemptError::Retryable { unavailable, .. } => {
                unavailable.map(ProviderFailure::Unavailable)
            }
            AttemptError::BrokeOff { .. } => None,
        };
        let unknown = Some(ProviderFailure::Unavailable(Unavailable::UnknownModel));
        for (status, body) in [
            (
                404,
                r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
            ),
            (
                404,
                r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-opus-20240229"}}"#,
            ),
            (
                404,
                r#"{"object":"error","message":"The model `llama-9` does not exist.","type":"NotFoundError","param":null,"code":404}"#,
            ),
            (
                400,
                r#"{"error":{"message":"The model `mixtral-8x7b-32768` has been decommissioned and is no longer supported.","type":"invalid_request_error","code":"model_decommissioned"}}"#,
            ),
            (
                400,
                r#"{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
            ),
        ] {
            assert_eq!(failure(status, body), unknown, "{body}");
        }
        // A 404 naming no model is a wrong endpoint; a 400 about the request is ours.
        assert_eq!(
            failure(404, "<html><body>Not Found</body></html>"),
            Some(ProviderFailure::Failed)
        );
        assert_eq!(
            failure(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: Field required"}}"#
            ),
            Some(ProviderFailure::Failed)
        );
        let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        assert_eq!(
            failure(429, quota),
            Some(ProviderFailure::Unavailable(Unavailable::Quota))
        );
        let billing = r#"{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low"}}"#;
        assert_eq!(
            failure(402, billing),
            Some(ProviderFailure::Unavailable(Unavailable::Quota))
        );
        assert_eq!(
            failure(429, "{}"),
            Some(ProviderFailure::Unavailable(Unavailable::RateLimited))
        );
        for overloaded in [503, 529] {
            assert_eq!(
                failure(overloaded, "{}"),
                Some(ProviderFailure::Unavailable(Unavailable::Overloaded))
            );
        }
        assert_eq!(
            failure(500, "{}"),
            None,
            "retried, and not the model's doing"
        );
    }
}
