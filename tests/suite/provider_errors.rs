//! Every error class the providers produce, played by the mocks and classified: context
//! overflow on every route and in every engine's words (never retried), transient failures retried with the provider's
//! delay or backoff, quota and other refusals not retried, timeouts, dropped connections and
//! malformed bodies. Time is paused, so delays and timeouts cost nothing.

use crate::support;

use std::time::Duration;

use mcp_agents::definition::WireApi;
use mcp_agents::error::{AgentError, ErrorCode};
use mcp_agents::providers::{Conversation, ProviderError, Reply, RetryNotice};
use mcp_agents::testkit::{ChatServer, MockProvider, MockWire, Step};
use serde_json::json;
use support::run_kit::{KEY, client};
use tokio::time::Instant;

use WireApi::{AnthropicMessages as Messages, ChatCompletions as Chat, Responses};
use mcp_agents::limits::PROVIDER_REPLY_BYTES;

struct Outcome {
    result: Result<Reply, ProviderError>,
    requests: usize,
    elapsed: Duration,
    retries: Vec<RetryNotice>,
}

impl Outcome {
    fn code(&self) -> Option<ErrorCode> {
        support::run_kit::error_code(&self.result)
    }

    /// Fails, showing the message, unless it contains `text`.
    fn assert_says(&self, text: &str) {
        let message = self.message();
        assert!(message.contains(text), "{message}");
    }

    /// Fails unless the request failed with a provider error after exactly one attempt.
    fn assert_refused_at_once(&self) {
        assert_eq!(
            (self.code(), self.requests),
            (Some(ErrorCode::ProviderError), 1),
            "{}",
            self.message()
        );
    }

    fn message(&self) -> String {
        match &self.result {
            Err(e) => AgentError::from(e.clone()).message,
            Ok(_) => String::new(),
        }
    }
}

async fn play(wire: WireApi, steps: Vec<Step>) -> Outcome {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push(steps);
    let provider = client(wire, &mock);
    let mut conversation = Conversation::new(wire);
    conversation.push_user_texts(&["Hello.".to_owned()]);
    let retries = std::sync::Mutex::new(Vec::new());
    let started = Instant::now();
    let result = provider
        .complete("system", &conversation, &[], &|n: &RetryNotice| {
            retries.lock().unwrap().push(n.clone())
        })
        .await;
    let outcome = Outcome {
        result,
        requests: mock.requests().len(),
        elapsed: started.elapsed(),
        retries: retries.into_inner().unwrap(),
    };
    assert!(
        !outcome.message().contains(KEY),
        "the key leaked: {}",
        outcome.message()
    );
    outcome
}

/// A 429 of `wire` asking for a wait of `retry_after`, then the text `then`.
fn rate_limited_then(wire: MockWire, retry_after: &str, then: &str) -> Vec<Step> {
    vec![Step::rate_limited(wire, retry_after), Step::text(then)]
}

const OVERFLOW: &str =
    "Your input exceeds the context window of this model. Please adjust your input and try again.";

/// OpenAI's context overflows on Responses: an error, a failed response, a gateway's error.
fn openai_overflows() -> Vec<(WireApi, Step)> {
    vec![
        (
            Responses,
            Step::openai_error(
                400,
                "invalid_request_error",
                Some("context_length_exceeded"),
                OVERFLOW,
            ),
        ),
        (
            Responses,
            Step::json(
                200,
                json!({"id": "resp_1", "object": "response", "status": "failed",
                "error": {"code": "context_length_exceeded", "message": OVERFLOW}, "output": [], "usage": null}),
            ),
        ),
        (
            Responses,
            Step::json(
                400,
                json!({"error": {"code": "invalid_prompt", "message": "This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens."}, "metadata": null}),
            ),
        ),
    ]
}

/// Anthropic's context overflows: a 413, a 400, and a reply stopped at the window.
fn anthropic_overflows() -> Vec<(WireApi, Step)> {
    vec![
        (
            Messages,
            Step::anthropic_error(
                413,
                "request_too_large",
                "prompt is too long: 208310 tokens > 200000 maximum",
            ),
        ),
        (
            Messages,
            Step::anthropic_error(
                400,
                "invalid_request_error",
                "prompt is too long: 208310 tokens > 200000 maximum",
            ),
        ),
        (
            Messages,
            Step::text("").with_stop_reason("model_context_window_exceeded"),
        ),
    ]
}

/// Local engines' context overflows (issue 25), in the shapes they answer with.
fn local_engine_overflows() -> Vec<(WireApi, Step)> {
    vec![
        (
            Messages,
            Step::json(
                400,
                json!({"error": {"code": 400, "message": "request (20034 tokens) exceeds the available context size (8192 tokens), try increasing it",
                "type": "exceed_context_size_error", "n_prompt_tokens": 20034, "n_ctx": 8192}}),
            ),
        ),
        (
            Responses,
            Step::json(
                400,
                json!({"error": {"message": "You passed 9000 input tokens and requested 100 output tokens. However, the model's context length is only 8192 tokens, resulting in a maximum input length of 8092 tokens. Please reduce the length of the input prompt.",
                "type": "BadRequestError", "param": "input_tokens", "code": 400}}),
            ),
        ),
        (
            Messages,
            Step::json(
                400,
                json!({"error": {"message": "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length",
                "type": "invalid_request_error"}}),
            ),
        ),
        (
            Responses,
            Step::json(
                400,
                json!({"error": "Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input."}),
            ),
        ),
    ]
}

/// Chat Completions' context overflows: OpenAI's, DeepSeek's, Gemini's, and one mid-stream.
fn chat_overflows() -> Vec<(WireApi, Step)> {
    vec![
        (
            Chat,
            Step::openai_error(
                400,
                "invalid_request_error",
                Some("context_length_exceeded"),
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
            ),
        ),
        // DeepSeek: the code says nothing, the words do (evalstate/fast-agent#621, there
        // with 122942 in the messages: an input that fits, whose output limit is lowered to
        // the room left, suite::chat_endpoints); here it leaves too little room for a reply.
        (
            Chat,
            Step::openai_error(
                400,
                "invalid_request_error",
                Some("invalid_request_error"),
                "This model's maximum context length is 131072 tokens. However, you requested 139134 tokens (130942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
            ),
        ),
        // Gemini: a list, a numeric code.
        (
            Chat,
            Step::json(
                400,
                json!([{"error": {"code": 400, "status": "INVALID_ARGUMENT",
                    "message": "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."}}]),
            ),
        ),
        // Mid-stream, as vLLM and OpenAI send it.
        (
            Chat,
            Step::Raw {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                body: format!(
                    "data: {}\n\ndata: [DONE]\n\n",
                    json!({"error": {"message": "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.",
                        "type": "BadRequestError", "param": null, "code": 400}})
                ),
            },
        ),
    ]
}

#[tokio::test(start_paused = true)]
async fn context_overflow_from_every_route_is_context_limit_and_never_retried() {
    let mut cases = openai_overflows();
    cases.extend(anthropic_overflows());
    cases.extend(local_engine_overflows());
    cases.extend(chat_overflows());
    for (wire, step) in cases {
        let outcome = play(wire, vec![step.clone(), Step::text("never reached")]).await;
        assert_eq!(
            outcome.code(),
            Some(ErrorCode::ContextLimit),
            "{step:?}: {}",
            outcome.message()
        );
        assert_eq!(outcome.requests, 1, "not retried: {step:?}");
        assert!(
            outcome
                .message()
                .contains("Spawn a fresh agent for a narrower task")
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_mocks_own_context_window_is_classified_too() {
    for (wire, server) in [
        (Responses, ChatServer::OpenAi),
        (Messages, ChatServer::OpenAi),
        (Chat, ChatServer::OpenAi),
        (Chat, ChatServer::Gemini),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.set_chat_server(server);
        mock.set_context_limit(200);
        let provider = client(wire, &mock);
        let mut conversation = Conversation::new(wire);
        conversation.push_user_texts(&["x".repeat(500)]);
        let err = provider
            .complete("s", &conversation, &[], &|_| {})
            .await
            .unwrap_err();
        assert_eq!(
            AgentError::from(err).code,
            ErrorCode::ContextLimit,
            "{wire:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn rate_limits_are_retried_after_the_delay_the_provider_asks_for() {
    let openai_429 = Step::openai_error(
        429,
        "requests",
        Some("rate_limit_exceeded"),
        "Rate limit reached. Please try again in 1.5s.",
    );
    let outcome = play(Responses, vec![openai_429, Step::text("ok")]).await;
    assert!(outcome.result.is_ok(), "{}", outcome.message());
    assert_eq!(outcome.requests, 2);
    assert_eq!(outcome.retries[0].delay, Duration::from_millis(1500));
    assert!(outcome.elapsed >= Duration::from_millis(1500));

    let with_header = Step::openai_error(429, "requests", Some("rate_limit_exceeded"), "slow down")
        .with_header("retry-after", "2");
    let outcome = play(Responses, vec![with_header, Step::text("ok")]).await;
    assert_eq!(outcome.retries[0].delay, Duration::from_secs(2));
    assert_eq!(outcome.retries[0].reason, "HTTP 429");

    let anthropic_429 = Step::anthropic_error(
        429,
        "rate_limit_error",
        "This request would exceed your account's rate limit. Please try again later.",
    )
    .with_header("retry-after-ms", "750");
    let outcome = play(Messages, vec![anthropic_429, Step::text("ok")]).await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.retries[0].delay, Duration::from_millis(750));
}

/// A wait of minutes, in seconds or as an HTTP-date, is honoured (the SDKs wait 120 s or
/// any delay); one longer than a request may take ends the retries at once (issue 24).
#[tokio::test(start_paused = true)]
async fn long_and_dated_retry_afters_are_waited_for_up_to_the_request_ceiling() {
    let outcome = play(
        Responses,
        rate_limited_then(MockWire::Responses, "90", "ok"),
    )
    .await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    assert_eq!(outcome.retries[0].delay, Duration::from_secs(90));
    assert!(outcome.retries[0].requested && outcome.retries[0].rate_limited());
    assert!(outcome.elapsed >= Duration::from_secs(90));

    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(300));
    let outcome = play(Messages, rate_limited_then(MockWire::Messages, &date, "ok")).await;
    assert!(outcome.result.is_ok(), "{}", outcome.message());
    let waited = outcome.retries[0].delay;
    assert!(
        (Duration::from_secs(295)..=Duration::from_secs(300)).contains(&waited),
        "{waited:?}"
    );

    let outcome = play(
        Messages,
        rate_limited_then(MockWire::Messages, "1000", "no"),
    )
    .await;
    assert_eq!(outcome.requests, 1);
    outcome.assert_says(
        "asked to wait 1000 s before retrying, longer than the 900 s a request may take",
    );
}

#[tokio::test(start_paused = true)]
async fn overload_and_server_errors_are_retried_with_backoff() {
    let overloaded = Step::anthropic_error(529, "overloaded_error", "Overloaded")
        .with_header("x-should-retry", "true");
    let outcome = play(
        Messages,
        vec![overloaded.clone(), overloaded, Step::text("ok")],
    )
    .await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.requests, 3);
    assert_eq!(outcome.retries.len(), 2);
    assert!(
        outcome.retries[1].delay >= Duration::from_millis(150),
        "backoff doubles"
    );

    let server = Step::openai_error(500, "server_error", None, "The server had an error");
    let outcome = play(Responses, vec![server, Step::text("ok")]).await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.requests, 2);

    let busy = Step::json(
        200,
        json!({"status": "failed", "error": {"code": "server_is_overloaded", "message": "Our servers are currently overloaded."}}),
    );
    let outcome = play(Responses, vec![busy, Step::text("ok")]).await;
    assert!(
        outcome.result.is_ok(),
        "a transiently failed response is retried"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_are_capped() {
    let server = Step::openai_error(503, "server_error", None, "unavailable");
    let outcome = play(Responses, vec![server; 10]).await;
    assert_eq!(outcome.code(), Some(ErrorCode::ProviderError));
    assert_eq!(outcome.requests, 4, "1 attempt and 3 retries");
    assert!(outcome.message().contains("HTTP 503"));
    outcome.assert_says("after 4 attempts");
}

#[tokio::test(start_paused = true)]
async fn refusals_are_not_retried_and_quote_the_provider() {
    let quota = Step::openai_error(
        429,
        "insufficient_quota",
        Some("insufficient_quota"),
        "You exceeded your current quota, please check your plan and billing details.",
    );
    let outcome = play(Responses, vec![quota, Step::text("no")]).await;
    outcome.assert_refused_at_once();
    assert!(
        outcome
            .message()
            .contains("You exceeded your current quota")
    );

    let invalid = Step::openai_error(
        400,
        "invalid_request_error",
        None,
        "Invalid value for 'model'.",
    );
    let outcome = play(Responses, vec![invalid]).await;
    outcome.assert_refused_at_once();
    assert!(
        outcome
            .message()
            .contains("HTTP 400 invalid_request_error: Invalid value for 'model'.")
    );

    let auth = Step::anthropic_error(401, "authentication_error", "invalid x-api-key");
    let outcome = play(Messages, vec![auth]).await;
    outcome.assert_refused_at_once();

    let told_not_to =
        Step::openai_error(503, "server_error", None, "no").with_header("x-should-retry", "false");
    assert_eq!(play(Responses, vec![told_not_to]).await.requests, 1);

    let too_long = Step::anthropic_error(429, "rate_limit_error", "daily limit")
        .with_header("retry-after", "3600");
    let outcome = play(Messages, vec![too_long]).await;
    assert_eq!(outcome.requests, 1);
    outcome.assert_says("asked to wait 3600 s");
}

#[tokio::test(start_paused = true)]
async fn a_reply_slower_than_the_request_timeout_is_provider_timeout() {
    let outcome = play(
        Responses,
        vec![Step::Hang, Step::Hang, Step::Hang, Step::Hang],
    )
    .await;
    let timed_out = outcome.code() == Some(ErrorCode::ProviderTimeout);
    assert!(timed_out, "{}", outcome.message());
    assert_eq!(outcome.requests, 4);
    assert!(outcome.elapsed >= Duration::from_secs(4 * 120));
    assert!(outcome.message().contains("did not answer within 120 s"));

    let slow_then_fine = vec![
        Step::text("late").delayed(Duration::from_secs(130)),
        Step::text("ok"),
    ];
    let outcome = play(Messages, slow_then_fine).await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    assert_eq!(outcome.requests, 2);
}

#[tokio::test(start_paused = true)]
async fn dropped_connections_and_garbage_are_retried_then_reported() {
    let outcome = play(Responses, vec![Step::Drop, Step::text("ok")]).await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    assert_eq!(outcome.requests, 2);

    let outcome = play(Messages, vec![Step::Drop; 4]).await;
    assert_eq!(outcome.code(), Some(ErrorCode::ProviderError));
    outcome.assert_says("failed");

    let garbage = Step::Raw {
        status: 200,
        headers: vec![],
        body: "{not json".into(),
    };
    let outcome = play(Responses, vec![garbage.clone(), Step::text("ok")]).await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    let outcome = play(Messages, vec![garbage; 4]).await;
    assert_eq!(outcome.code(), Some(ErrorCode::ProviderError));
    outcome.assert_says("not JSON");

    let wrong_shape = Step::json(200, json!({"hello": "world"}));
    let outcome = play(Messages, vec![wrong_shape; 4]).await;
    outcome.assert_says("not a Messages API message");
}

/// A loopback port where nothing listens: bound, learnt, closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// How a request of `wire` to `definition`'s endpoint fails, with the default retries.
async fn failure_of(
    definition: &mcp_agents::definition::AgentDefinition,
    wire: WireApi,
) -> AgentError {
    let provider = mcp_agents::providers::ProviderClient::new(
        definition,
        mcp_agents::providers::ApiKey::for_tests(KEY),
    );
    let mut conversation = Conversation::new(wire);
    conversation.push_user_texts(&["x".into()]);
    let err = provider
        .complete("s", &conversation, &[], &|_| {})
        .await
        .unwrap_err();
    AgentError::from(err)
}

#[tokio::test(start_paused = true)]
async fn a_connection_refused_is_retried_then_reported() {
    let port = closed_port();
    let definition =
        support::run_kit::definition(Responses, &format!("http://127.0.0.1:{port}/v1"));
    let AgentError { code, message, .. } = failure_of(&definition, Responses).await;
    assert_eq!(code, ErrorCode::ProviderError);
    // Issue 28: the origin tried is named; an endpoint from the definition needs no hint.
    let origin = format!("could not connect to 127.0.0.1 at http://127.0.0.1:{port}: ");
    assert!(message.starts_with(&origin), "{message}");
    assert!(!message.contains("_BASE_URL"), "{message}");
    assert!(
        message.contains("after 5 attempts"),
        "the default policy: {message}"
    );
}

/// Issue 28, point 5: an `anthropic` agent that went to its provider's own endpoint because
/// the server has no `ANTHROPIC_BASE_URL` says so when it cannot connect (a gateway user
/// whose client did not pass the variable). The endpoint here is a closed loopback port
/// standing in for the public one, so no test reaches the network.
#[tokio::test(start_paused = true)]
async fn a_failure_to_reach_the_built_in_endpoint_says_the_base_url_variable_is_not_set() {
    let port = closed_port();
    let mut definition =
        support::run_kit::definition(Messages, &format!("http://127.0.0.1:{port}"));
    definition.provider.kind = mcp_agents::definition::ProviderKind::Anthropic;
    definition.provider.base_url_source = mcp_agents::definition::EndpointSource::BuiltIn;
    let message = failure_of(&definition, Messages).await.message;
    assert!(
        message.starts_with(&format!(
            "could not connect to anthropic at http://127.0.0.1:{port}: "
        )),
        "{message}"
    );
    assert!(
        message.contains(
            "; ANTHROPIC_BASE_URL is not set in this server's environment, so this is \
             anthropic's own endpoint; to reach a gateway, give the server ANTHROPIC_BASE_URL \
             (in Codex, list it in `env_vars`"
        ),
        "{message}"
    );
    assert!(message.ends_with("(after 5 attempts)"), "{message}");

    // The same endpoint taken from the server's variable: no hint.
    definition.provider.base_url_source =
        mcp_agents::definition::EndpointSource::Environment("ANTHROPIC_BASE_URL".into());
    let message = failure_of(&definition, Messages).await.message;
    assert!(
        message.starts_with("could not connect to anthropic at "),
        "{message}"
    );
    assert!(!message.contains("is not set"), "{message}");
}

#[tokio::test(start_paused = true)]
async fn huge_error_messages_are_quoted_in_part_and_huge_replies_refused() {
    let long = format!("{}{}", "Invalid value. ", "x".repeat(50_000));
    let invalid = Step::openai_error(400, "invalid_request_error", None, &long);
    let outcome = play(Responses, vec![invalid]).await;
    assert_eq!(outcome.code(), Some(ErrorCode::ProviderError));
    let message = outcome.message();
    assert!(message.contains("Invalid value. xxx"), "{message}");
    assert!(message.contains("xxx…"), "cut visibly: {message}");
    assert!(
        message.chars().count() < 1_200,
        "{} characters",
        message.len()
    );

    // A 2xx body past the cap is refused once, not retried, and not kept.
    let huge = Step::Raw {
        status: 200,
        headers: vec![],
        body: "x".repeat(PROVIDER_REPLY_BYTES + 1),
    };
    let outcome = play(Responses, vec![huge, Step::text("never")]).await;
    outcome.assert_refused_at_once();
    outcome.assert_says("larger than 32 MiB");
}

#[tokio::test(start_paused = true)]
async fn a_key_the_provider_quotes_back_is_redacted() {
    // Some gateways echo the request's Authorization header in their error.
    let quoting = Step::openai_error(
        404,
        "invalid_request_error",
        Some("model_not_found"),
        &format!("The model does not exist (auth=Bearer {KEY})"),
    );
    let outcome = play(Responses, vec![quoting]).await;
    assert_eq!(outcome.code(), Some(ErrorCode::ProviderError));
    outcome.assert_says("auth=Bearer [redacted]");
    // `play` also checks that the key is nowhere in the message.
}

/// Chat Completions errors are retried, or not, as on the other wires: OpenAI's 429 with its
/// `retry-after`, Gemini's quota 429 as a list, 5xx with backoff; a bad key, a refused
/// request and a body that is no reply at all are reported in the provider's words.
#[tokio::test(start_paused = true)]
async fn chat_completions_errors_are_classified_as_on_the_other_wires() {
    let outcome = play(
        Chat,
        vec![Step::rate_limited(MockWire::Chat, "3"), Step::text("ok")],
    )
    .await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    assert_eq!(outcome.retries[0].delay, Duration::from_secs(3));
    assert!(outcome.retries[0].rate_limited());

    let gemini_quota = Step::json(
        429,
        json!([{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "Resource has been exhausted (e.g. check quota)."}}]),
    );
    let outcome = play(Chat, vec![gemini_quota, Step::text("ok")]).await;
    assert_eq!(outcome.result.unwrap().text, "ok");
    assert_eq!(outcome.retries[0].reason, "HTTP 429");

    let server = Step::openai_error(503, "server_error", None, "unavailable");
    let outcome = play(Chat, vec![server; 10]).await;
    assert_eq!(outcome.requests, 4, "1 attempt and 3 retries");
    outcome.assert_says("after 4 attempts");

    let key = Step::openai_error(
        401,
        "invalid_request_error",
        Some("invalid_api_key"),
        "Incorrect API key provided.",
    );
    let outcome = play(Chat, vec![key, Step::text("no")]).await;
    outcome.assert_refused_at_once();
    outcome.assert_says("HTTP 401 invalid_api_key: Incorrect API key provided.");

    let gemini_refusal = Step::json(
        400,
        json!([{"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": "Request contains an invalid argument."}}]),
    );
    let outcome = play(Chat, vec![gemini_refusal]).await;
    assert_eq!(outcome.requests, 1);
    outcome.assert_says("HTTP 400 INVALID_ARGUMENT: Request contains an invalid argument.");

    let wrong_shape = Step::json(200, json!({"hello": "world"}));
    let outcome = play(Chat, vec![wrong_shape; 4]).await;
    outcome.assert_says("not a Chat Completions reply");
}
