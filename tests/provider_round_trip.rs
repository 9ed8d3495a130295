//! Both wire APIs run a multi-turn tool-calling conversation end to end against their mock:
//! reasoning and thinking go back unchanged, every tool call is answered in the provider's
//! native form, and tool errors reach the model as results.

mod support;

use mcp_agents::definition::WireApi;
use mcp_agents::mock::{MockProvider, RecordedOutcome, Step};
use mcp_agents::providers::Conversation;
use mcp_agents::sessions::run::{RunContext, RunOutcome, run_model_loop};
use serde_json::{Value, json};
use support::run_kit::{KEY, Queue, Recorder, TestTools, client};
use tokio_util::sync::CancellationToken;

async fn run(
    wire: WireApi,
    mock: &MockProvider,
    conversation: &mut Conversation,
    inbox: &Queue,
    tools: &TestTools,
    recorder: &Recorder,
) -> RunOutcome {
    let provider = client(wire, mock);
    let (_tx, rx) = tokio::sync::watch::channel(0u64);
    run_model_loop(
        conversation,
        RunContext {
            provider: &provider,
            system: "You test things.",
            tools,
            inbox,
            observer: recorder,
            interrupts: rx,
            cancel: CancellationToken::new(),
            max_turns: 32,
            turns_taken: 0,
        },
    )
    .await
}

fn all_scripted(mock: &MockProvider) {
    for r in mock.requests() {
        assert_eq!(
            r.outcome,
            RecordedOutcome::Scripted,
            "the mock refused {:#}",
            r.body
        );
    }
}

#[tokio::test]
async fn responses_tool_calls_then_text() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_call("test__echo", json!({"text": "hi"})).with_reasoning(),
        Step::tool_calls(vec![
            ("test__fail", json!({})),
            ("test__echo", json!({"text": "again"})),
        ])
        .with_reasoning(),
        Step::text("All done."),
    ]);
    let (tools, recorder, inbox) = (
        TestTools::new(),
        Recorder::default(),
        Queue::with(&["Do it."]),
    );
    let mut conversation = Conversation::new(WireApi::Responses);
    let outcome = run(
        WireApi::Responses,
        &mock,
        &mut conversation,
        &inbox,
        &tools,
        &recorder,
    )
    .await;

    assert_eq!(outcome, RunOutcome::Completed("All done.".into()));
    all_scripted(&mock);
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let first = &requests[0].body;
    assert_eq!(first["store"], false);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["instructions"], "You test things.");
    assert_eq!(first["tools"][0]["strict"], false);
    assert_eq!(first["tools"][0]["name"], "test__echo");
    assert_eq!(
        requests[0].headers["authorization"],
        format!("Bearer {KEY}")
    );

    let input = requests[2].body["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "reasoning",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(
        input[1]["encrypted_content"], "enc-1",
        "reasoning echoed unchanged"
    );
    assert_eq!(input[3]["output"], r#"echo: {"text":"hi"}"#);
    assert_eq!(input[7]["output"], "Error: the tool failed on purpose");
    assert_eq!(input[8]["call_id"], input[6]["call_id"]);
    assert_eq!(tools.called(), ["test__echo", "test__fail", "test__echo"]);

    let usage = recorder.total();
    assert_eq!((usage.turns, usage.tool_calls), (3, 3));
    assert_eq!((usage.input_tokens, usage.output_tokens), (300, 60));
    assert_eq!(
        conversation.items().len(),
        10,
        "the final message joins the history"
    );
}

#[tokio::test]
async fn messages_tool_calls_then_text() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_calls(vec![
            ("test__echo", json!({"text": "a"})),
            ("test__echo", json!({"text": "b"})),
        ])
        .with_reasoning(),
        Step::tool_call("test__fail", json!({})).with_reasoning(),
        Step::text("Finished."),
    ]);
    let (tools, recorder, inbox) = (TestTools::new(), Recorder::default(), Queue::with(&["Go."]));
    let mut conversation = Conversation::new(WireApi::AnthropicMessages);
    let outcome = run(
        WireApi::AnthropicMessages,
        &mock,
        &mut conversation,
        &inbox,
        &tools,
        &recorder,
    )
    .await;

    assert_eq!(outcome, RunOutcome::Completed("Finished.".into()));
    all_scripted(&mock);
    let requests = mock.requests();
    let headers = &requests[0].headers;
    assert_eq!(headers["x-api-key"], KEY);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(requests[0].body["system"], "You test things.");
    assert_eq!(requests[0].body["max_tokens"], 8192);
    assert_eq!(
        requests[0].body["tools"][0]["input_schema"]["type"],
        "object"
    );

    let messages = requests[2].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "Thinking 1.", "signature": "sig-1"})
    );
    let results: Vec<&Value> = messages[2]["content"].as_array().unwrap().iter().collect();
    assert_eq!(
        results.len(),
        2,
        "both parallel calls answered in one message"
    );
    assert!(results.iter().all(|r| r["type"] == "tool_result"));
    assert_eq!(messages[4]["content"][0]["is_error"], true);
    assert_eq!(recorder.total().tool_calls, 3);
}

#[tokio::test]
async fn a_paused_messages_turn_continues_with_the_same_content() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::text("First half, ").with_stop_reason("pause_turn"),
        Step::text("second half.").with_stop_reason("max_tokens"),
        Step::text(" The end."),
    ]);
    let (tools, recorder, inbox) = (
        TestTools::new(),
        Recorder::default(),
        Queue::with(&["Write."]),
    );
    let mut conversation = Conversation::new(WireApi::AnthropicMessages);
    let outcome = run(
        WireApi::AnthropicMessages,
        &mock,
        &mut conversation,
        &inbox,
        &tools,
        &recorder,
    )
    .await;
    assert_eq!(
        outcome,
        RunOutcome::Completed("First half, second half. The end.".into())
    );
    all_scripted(&mock);
    let last = &mock.requests()[2].body["messages"];
    assert_eq!(
        last.as_array().unwrap().len(),
        2,
        "the continuation joins the assistant turn"
    );
    assert_eq!(
        last[1]["content"],
        json!([{"type": "text", "text": "First half,"}, {"type": "text", "text": "second half."}]),
        "trailing whitespace is trimmed before asking the API to continue"
    );
    assert_eq!(recorder.total().turns, 3);
}

#[tokio::test]
async fn resuming_keeps_the_conversation() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("One."), Step::text("Two.")]);
    let (tools, recorder) = (TestTools::new(), Recorder::default());
    let mut conversation = Conversation::new(WireApi::Responses);
    let first = Queue::with(&["First task."]);
    run(
        WireApi::Responses,
        &mock,
        &mut conversation,
        &first,
        &tools,
        &recorder,
    )
    .await;
    let second = Queue::with(&["Follow-up."]);
    let outcome = run(
        WireApi::Responses,
        &mock,
        &mut conversation,
        &second,
        &tools,
        &recorder,
    )
    .await;
    assert_eq!(outcome, RunOutcome::Completed("Two.".into()));
    let input = &mock.requests()[1].body["input"];
    let texts: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["First task.", "One.", "Follow-up."]);
}
