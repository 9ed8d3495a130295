//! The provider mocks' event streams are the real thing: the official Python SDKs'
//! streaming clients (PyPI `openai` `responses.stream` and `chat.completions.stream`,
//! `anthropic` `messages.stream`,
//! installed by `scripts/install-interop`) read them and assemble the reply the mock would
//! have sent whole: reasoning and thinking with their signatures, text, tool calls with
//! their arguments, usage and stop reason; a reply cut off by the output limit; a trickled
//! reply. (The Anthropic SDK drops the `ping` every Messages stream carries before it
//! reaches the application.)

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::interop;
use support::run_kit::KEY;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Wire {
    Responses,
    Messages,
    Chat,
}

/// What the SDK read from a mock playing `step`.
async fn sdk_reads(wire: Wire, step: Step) -> Value {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([step]);
    let (name, base) = match wire {
        Wire::Responses => ("responses", mock.responses_base_url()),
        Wire::Messages => ("messages", mock.messages_base_url()),
        Wire::Chat => ("chat", mock.chat_base_url()),
    };
    let read = interop::last_json_line(
        tokio::process::Command::new(interop::python())
            .arg(interop::script("sdk_stream.py"))
            .args([name, &base, KEY]),
        Duration::from_secs(120),
        &format!("{wire:?}: the SDK refused the stream"),
    )
    .await;
    for r in mock.requests() {
        assert_eq!(r.body["stream"], true, "the SDK asked for a stream");
    }
    read
}

/// The names of the events the SDK read, in order.
fn events_of(read: &Value) -> Vec<&str> {
    let events = read["events"].as_array().unwrap();
    events.iter().map(|e| e.as_str().unwrap()).collect()
}

/// The reply a non-streamed request gets from a fresh mock playing `step`.
async fn whole(wire: Wire, step: Step) -> Value {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([step]);
    let client = mcp_agents::net::loopback_client();
    let request = match wire {
        Wire::Responses => client
            .post(format!("{}/responses", mock.responses_base_url()))
            .bearer_auth(KEY)
            .json(&json!({"model": "mock-model", "store": false,
                "include": ["reasoning.encrypted_content"],
                "input": [{"role": "user", "content": "Hello."}]})),
        Wire::Messages => client
            .post(format!("{}/v1/messages", mock.messages_base_url()))
            .header("x-api-key", KEY)
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "mock-model", "max_tokens": 1000,
                "messages": [{"role": "user", "content": "Hello."}]})),
        Wire::Chat => client
            .post(format!("{}/chat/completions", mock.chat_base_url()))
            .bearer_auth(KEY)
            .json(&json!({"model": "mock-model",
                "messages": [{"role": "user", "content": "Hello."}]})),
    };
    without_nulls(request.send().await.unwrap().json().await.unwrap())
}

/// `value` with every null field left out (the SDK's dump leaves them out).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

fn rich_reply() -> Step {
    let step = Step::tool_calls(vec![
        ("docs__search", json!({"query": "streaming", "limit": 3})),
        (
            "docs__open",
            json!({"path": "src/ünïcødé.md", "lines": [1, 20]}),
        ),
    ])
    .with_reasoning();
    match step {
        Step::Reply(mut r) => {
            r.text = Some("Let me look in two places.".into());
            r.stream.delta_chars = 5;
            Step::Reply(r)
        }
        other => other,
    }
}

#[tokio::test]
async fn the_openai_sdk_assembles_the_responses_mocks_stream() {
    let read = sdk_reads(Wire::Responses, rich_reply()).await;
    let expected = whole(Wire::Responses, rich_reply()).await;
    let final_ = &read["final"];
    assert_eq!(final_["status"], "completed");
    assert_eq!(final_["id"], expected["id"]);
    assert_eq!(
        final_["output"], expected["output"],
        "the SDK's assembled output is the whole reply's"
    );
    assert_eq!(final_["usage"], expected["usage"]);
    let events = events_of(&read);
    assert_eq!(events.first(), Some(&"response.created"));
    assert_eq!(events.last(), Some(&"response.completed"));
    assert!(events.contains(&"response.function_call_arguments.delta"));
    assert!(events.contains(&"response.output_text.delta"));
}

#[tokio::test]
async fn the_anthropic_sdk_assembles_the_messages_mocks_stream() {
    let read = sdk_reads(Wire::Messages, rich_reply()).await;
    let expected = whole(Wire::Messages, rich_reply()).await;
    let final_ = &read["final"];
    assert_eq!(final_["content"], expected["content"]);
    assert_eq!(final_["stop_reason"], "tool_use");
    assert_eq!(final_["id"], expected["id"]);
    assert_eq!(
        final_["usage"]["output_tokens"],
        expected["usage"]["output_tokens"]
    );
    let events = events_of(&read);
    assert_eq!(events.first(), Some(&"message_start"));
    assert_eq!(events.last(), Some(&"message_stop"));
    // The SDK's own events for each kind of delta it assembled.
    for kind in [
        "thinking",
        "signature",
        "text",
        "input_json",
        "message_delta",
    ] {
        assert!(events.contains(&kind), "no {kind} event: {events:?}");
    }
}

#[tokio::test]
async fn both_sdks_read_a_cut_off_and_a_trickled_reply() {
    let cut = || Step::text("The answer begins, and then").cut_off();
    let read = sdk_reads(Wire::Responses, cut()).await;
    assert_eq!(read["final"]["status"], "incomplete");
    assert_eq!(
        read["final"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    assert_eq!(
        read["final"]["output"][0]["content"][0]["text"],
        "The answer begins, and then"
    );
    let read = sdk_reads(Wire::Messages, cut()).await;
    assert_eq!(read["final"]["stop_reason"], "max_tokens");
    assert_eq!(
        read["final"]["content"][0]["text"],
        "The answer begins, and then"
    );

    let text = "A reply that arrives a few characters at a time, as a slow model writes.";
    for wire in [Wire::Responses, Wire::Messages, Wire::Chat] {
        let read = sdk_reads(wire, Step::text(text).trickled(Duration::from_millis(20))).await;
        let got = match wire {
            Wire::Responses => &read["final"]["output"][0]["content"][0]["text"],
            Wire::Messages => &read["final"]["content"][0]["text"],
            Wire::Chat => &read["final"]["choices"][0]["message"]["content"],
        };
        assert_eq!(got, text, "{wire:?}");
        if wire == Wire::Messages {
            assert!(
                read["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e == "text"),
                "the SDK saw text deltas: {}",
                read["events"]
            );
        }
    }
}

#[tokio::test]
async fn both_sdks_read_a_refusal() {
    let refusal = || Step::refusal("I can't help with that.");
    let read = sdk_reads(Wire::Responses, refusal()).await;
    assert_eq!(read["final"]["status"], "completed");
    assert_eq!(
        read["final"]["output"][0]["content"][0],
        json!({"type": "refusal", "refusal": "I can't help with that."})
    );
    let events = read["events"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e == "response.refusal.delta")
            && events.iter().any(|e| e == "response.refusal.done"),
        "{events:?}"
    );
    let read = sdk_reads(Wire::Messages, refusal()).await;
    assert_eq!(read["final"]["stop_reason"], "refusal");
    assert_eq!(read["final"]["content"], json!([]), "{}", read["final"]);
    assert_eq!(
        read["final"]["stop_details"]["explanation"], "I can't help with that.",
        "{}",
        read["final"]
    );
}

/// `openai`'s `chat.completions.stream` reads the mock's Chat Completions stream (the data
/// lines, the indexed call fragments, the usage chunk, `[DONE]`) into the completion the mock
/// sends whole; a cut-off and a refused reply too.
#[tokio::test]
async fn the_openai_sdk_reads_a_chat_completions_stream() {
    let read = sdk_reads(Wire::Chat, rich_reply()).await;
    let whole = whole(Wire::Chat, rich_reply()).await;
    let (got, expected) = (&read["final"]["choices"][0], &whole["choices"][0]);
    assert_eq!(got["finish_reason"], "tool_calls");
    assert_eq!(got["message"]["content"], expected["message"]["content"]);
    let calls = |message: &Value| -> Vec<(Value, Value, Value)> {
        message["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].clone(),
                    c["function"]["name"].clone(),
                    c["function"]["arguments"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(calls(&got["message"]), calls(&expected["message"]));
    assert_eq!(calls(&got["message"]).len(), 2);
    assert_eq!(read["final"]["usage"], whole["usage"], "the usage chunk");
    let events = read["events"].as_array().unwrap();
    for kind in [
        "chunk",
        "content.delta",
        "tool_calls.function.arguments.delta",
    ] {
        assert!(events.iter().any(|e| e == kind), "no {kind}: {events:?}");
    }

    let read = sdk_reads(Wire::Chat, Step::text("The answer begins").cut_off()).await;
    assert_eq!(read["final"]["choices"][0]["finish_reason"], "length");
    assert_eq!(
        read["final"]["choices"][0]["message"]["content"],
        "The answer begins"
    );
    let read = sdk_reads(Wire::Chat, Step::refusal("I can't help with that.")).await;
    assert_eq!(
        read["final"]["choices"][0]["message"]["refusal"],
        "I can't help with that."
    );
}
