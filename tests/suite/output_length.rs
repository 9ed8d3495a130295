//! The output limit (SPEC §3.1 `max_output_tokens`, §6.1 "Output length"): the limit sent
//! (the definition's, else the model's default), a refusal that names the model's maximum
//! retried once with it, a reply cut off by the limit continued with a user turn (the
//! Messages mock refuses prefill, as Claude 4.6+ does), and a tool call cut off by the
//! limit never run.

use crate::support;

use mcp_agents::definition::WireApi;
use mcp_agents::error::ErrorCode;
use mcp_agents::providers::{ApiKey, Conversation, ProviderClient, RetryPolicy};
use mcp_agents::run::{Failure, RunContext, RunLimits, RunOutcome, Spent, run_model_loop};
use mcp_agents::testkit::{MockProvider, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::run_kit::{KEY, Queue, Recorder, TestTools, assert_all_scripted, definition};
use tokio_util::sync::CancellationToken;

use WireApi::{AnthropicMessages as Messages, ChatCompletions as Chat, Responses};

const WIRES: [WireApi; 3] = [Responses, Messages, Chat];

fn base(wire: WireApi, mock: &MockProvider) -> String {
    mock.base_url(wire)
}

/// A client for a definition of `model` (and `limit`, if set) at the mock.
fn client_for(
    wire: WireApi,
    mock: &MockProvider,
    model: &str,
    limit: Option<u32>,
) -> ProviderClient {
    let mut d = definition(wire, &base(wire, mock));
    d.model.id = model.to_owned();
    d.max_output_tokens = limit;
    ProviderClient::new(&d, ApiKey::for_tests(KEY)).with_retry_policy(RetryPolicy::none())
}

fn limit_field(wire: WireApi) -> &'static str {
    match wire {
        Responses => "max_output_tokens",
        Messages => "max_tokens",
        Chat => "max_completion_tokens",
    }
}

async fn run(
    wire: WireApi,
    mock: &MockProvider,
    provider: &ProviderClient,
    tools: &TestTools,
) -> (RunOutcome, Conversation) {
    let _ = mock;
    let mut conversation = Conversation::new(wire);
    let (_tx, rx) = tokio::sync::watch::channel(0u64);
    let outcome = run_model_loop(
        &mut conversation,
        RunContext {
            provider,
            system: "sys",
            tools,
            inbox: &Queue::with(&["Write it all."]),
            observer: &Recorder::default(),
            interrupts: rx,
            cancel: CancellationToken::new(),
            limits: RunLimits::turns(32),
            spent: Spent::default(),
            output_schema: None,
        },
    )
    .await;
    (outcome, conversation)
}

/// The text of the last user turn of a request body.
fn last_user_text(wire: WireApi, body: &Value) -> String {
    match wire {
        Responses => body["input"].as_array().unwrap().last().unwrap()["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        Chat => {
            let last = body["messages"].as_array().unwrap().last().unwrap();
            assert_eq!(last["role"], "user", "a user turn, never prefill");
            last["content"].as_str().unwrap_or("").to_owned()
        }
        Messages => {
            let last = body["messages"].as_array().unwrap().last().unwrap();
            assert_eq!(
                last["role"], "user",
                "the conversation ends with the user's turn"
            );
            last["content"].as_array().unwrap().last().unwrap()["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        }
    }
}

#[tokio::test]
async fn the_limit_is_the_definitions_else_the_models_default() {
    for wire in WIRES {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([Step::text("a"), Step::text("b"), Step::text("c")]);
        let tools = TestTools::new();
        for (model, limit, sent) in [
            ("claude-opus-4-6", None, 128_000),
            ("a-model-nobody-knows", None, 32_000),
            ("gpt-5.4", Some(2_048), 2_048),
        ] {
            let provider = client_for(wire, &mock, model, limit);
            run(wire, &mock, &provider, &tools).await;
            let body = mock.requests().last().unwrap().body.clone();
            assert_eq!(body[limit_field(wire)], sent, "{wire:?} {model}");
        }
    }
}

#[tokio::test]
async fn a_refusal_that_names_the_models_maximum_is_retried_once_with_it() {
    let refusals = [
        (
            Messages,
            Step::anthropic_error(
                400,
                "invalid_request_error",
                "max_tokens: 64000 > 8192, which is the maximum allowed number of output tokens for claude-3-5-haiku-20241022",
            ),
        ),
        (
            Responses,
            Step::openai_error(
                400,
                "invalid_request_error",
                Some("integer_above_max_value"),
                "Invalid 'max_output_tokens': integer above maximum value. Expected a value <= 8192, but got 64000 instead.",
            ),
        ),
        (
            Chat,
            Step::json(
                400,
                json!({"error": {"message": "max_completion_tokens is too large: 64000. This model supports at most 8192 completion tokens, whereas you provided 64000.",
                    "type": "invalid_request_error", "param": "max_completion_tokens", "code": null}}),
            ),
        ),
    ];
    for (wire, refusal) in refusals {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            refusal.clone(),
            Step::tool_call("test__echo", json!({"text": "x"})),
            Step::text("done"),
        ]);
        let provider = client_for(wire, &mock, "m", Some(64_000));
        let (outcome, _) = run(wire, &mock, &provider, &TestTools::new()).await;
        assert_eq!(outcome, RunOutcome::Completed("done".into()), "{wire:?}");
        let sent: Vec<Value> = mock
            .requests()
            .iter()
            .map(|r| r.body[limit_field(wire)].clone())
            .collect();
        assert_eq!(
            sent,
            [json!(64_000), json!(8_192), json!(8_192)],
            "{wire:?}: retried with the maximum, which the later requests keep"
        );
        assert_eq!(provider.max_output_tokens(), 8_192);

        // Once: a second refusal is the run's error.
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([refusal.clone(), refusal, Step::text("never")]);
        let provider = client_for(wire, &mock, "m", Some(64_000));
        match run(wire, &mock, &provider, &TestTools::new()).await.0 {
            RunOutcome::Failed(Failure { error: e, .. }) => {
                assert_eq!(e.code, ErrorCode::ProviderError)
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(mock.requests().len(), 2, "{wire:?}");
    }
}

#[tokio::test]
async fn a_reply_cut_off_by_the_limit_continues_with_a_user_turn_never_prefill() {
    for wire in WIRES {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            Step::text("The first half, ").cut_off(),
            Step::text("and the second half.").with_reasoning(),
        ]);
        let provider = client_for(wire, &mock, "m", Some(1_000));
        let (outcome, _) = run(wire, &mock, &provider, &TestTools::new()).await;
        assert_eq!(
            outcome,
            RunOutcome::Completed("The first half, and the second half.".into()),
            "{wire:?}"
        );
        assert_all_scripted(&mock);
        let requests = mock.requests();
        assert_eq!(requests.len(), 2);
        let asked = last_user_text(wire, &requests[1].body);
        assert!(
            asked.contains("reached the output limit of 1000 tokens")
                && asked.contains("Continue exactly where it stopped"),
            "{wire:?}: {asked}"
        );
        if wire != Responses {
            let roles: Vec<&str> = requests[1].body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .filter(|role| *role != "system")
                .collect();
            assert_eq!(roles, ["user", "assistant", "user"], "{wire:?}");
        }
    }
}

#[tokio::test]
async fn the_messages_mock_refuses_prefill_as_claude_does() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (status, body) = {
        let response = mcp_agents::net::loopback_client()
            .post(format!("{}/v1/messages", mock.messages_base_url()))
            .header("x-api-key", KEY)
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "m", "max_tokens": 100, "messages": [
                {"role": "user", "content": "Write."},
                {"role": "assistant", "content": [{"type": "text", "text": "The answer is"}]}]}))
            .send()
            .await
            .unwrap();
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    };
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not support assistant message prefill"),
        "{body}"
    );
}

#[tokio::test]
async fn a_tool_call_cut_off_by_the_limit_is_never_run() {
    for wire in WIRES {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            Step::tool_calls(vec![
                ("test__echo", json!({"text": "complete"})),
                (
                    "test__echo",
                    json!({"text": "this one was still being written"}),
                ),
            ])
            .cut_off(),
            Step::text("Understood."),
        ]);
        let provider = client_for(wire, &mock, "m", Some(500));
        let tools = TestTools::new();
        let (outcome, conversation) = run(wire, &mock, &provider, &tools).await;
        assert_eq!(
            outcome,
            RunOutcome::Completed("Understood.".into()),
            "{wire:?}"
        );
        assert_all_scripted(&mock);
        let calls = tools.calls.lock().unwrap().clone();
        assert_eq!(
            calls,
            [("test__echo".to_owned(), json!({"text": "complete"}))],
            "{wire:?}: only the complete call ran; the cut one never reached the tool"
        );
        let results: Vec<String> = conversation
            .items()
            .iter()
            .filter_map(|i| match wire {
                Responses => (i["type"] == "function_call_output")
                    .then(|| i["output"].as_str().unwrap().to_owned()),
                Messages => (i["type"] == "tool_result")
                    .then(|| format!("{} {}", i["is_error"], i["content"].as_str().unwrap())),
                Chat => (i["role"] == "tool").then(|| i["content"].as_str().unwrap().to_owned()),
            })
            .collect();
        assert_eq!(results.len(), 2, "{wire:?}: both calls are answered");
        assert!(
            results[1].contains("was cut off: the reply reached the output limit of 500 tokens")
                && results[1].contains("so it was not run"),
            "{wire:?}: {}",
            results[1]
        );
        if wire == Messages {
            assert!(results[1].starts_with("true "), "an error result");
        } else {
            assert!(results[1].starts_with("Error: "), "an error result");
        }
    }
}

/// A Chat Completions server that does not know `max_completion_tokens` (vLLM before 0.6.4,
/// Azure before 2024-08-01, proxies) gets the same limit as `max_tokens`, from then on.
#[tokio::test]
async fn a_chat_server_that_refuses_max_completion_tokens_gets_max_tokens() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.refuse(mcp_agents::testkit::ModelRefuses::CompletionTokens);
    mock.push([
        Step::tool_call("test__echo", json!({"text": "x"})),
        Step::text("done"),
    ]);
    let provider = client_for(Chat, &mock, "m", Some(2_000));
    let (outcome, _) = run(Chat, &mock, &provider, &TestTools::new()).await;
    assert_eq!(outcome, RunOutcome::Completed("done".into()));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "one refusal, then two requests");
    assert!(matches!(
        requests[0].outcome,
        RecordedOutcome::Refused(400, _)
    ));
    assert_eq!(requests[0].body["max_completion_tokens"], 2_000);
    for r in &requests[1..] {
        assert_eq!(r.outcome, RecordedOutcome::Scripted);
        assert_eq!(r.body["max_tokens"], 2_000, "{:#}", r.body);
        assert!(r.body.get("max_completion_tokens").is_none());
    }
}
