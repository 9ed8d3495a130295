//! Both wire APIs run a multi-turn tool-calling conversation end to end against their mock:
//! reasoning and thinking go back unchanged, every tool call is answered in the provider's
//! native form, and tool errors reach the model as results.

use crate::support;

use mcp_agents::definition::WireApi;
use mcp_agents::providers::Conversation;
use mcp_agents::run::{RunContext, RunLimits, RunOutcome, Spent, run_model_loop};
use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::run_kit::{KEY, Queue, Recorder, TestTools, assert_all_scripted, client};
use tokio_util::sync::CancellationToken;

/// One conversation against a mock that plays a script, with in-process tools and a
/// recorder of usage and activity.
struct Talk {
    wire: WireApi,
    mock: MockProvider,
    tools: TestTools,
    recorder: Recorder,
    conversation: Conversation,
}

impl Talk {
    async fn new(wire: WireApi, script: impl IntoIterator<Item = Step>) -> Talk {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push(script);
        Talk {
            wire,
            mock,
            tools: TestTools::new(),
            recorder: Recorder::default(),
            conversation: Conversation::new(wire),
        }
    }

    /// One run that starts with `task`.
    async fn run(&mut self, task: &str) -> RunOutcome {
        let provider = client(self.wire, &self.mock);
        let (_tx, rx) = tokio::sync::watch::channel(0u64);
        run_model_loop(
            &mut self.conversation,
            RunContext {
                provider: &provider,
                system: "You test things.",
                tools: &self.tools,
                inbox: &Queue::with(&[task]),
                observer: &self.recorder,
                interrupts: rx,
                cancel: CancellationToken::new(),
                limits: RunLimits::turns(32),
                spent: Spent::default(),
                output_schema: None,
            },
        )
        .await
    }
}

#[tokio::test]
async fn responses_tool_calls_then_text() {
    let mut talk = Talk::new(
        WireApi::Responses,
        [
            Step::tool_call("test__echo", json!({"text": "hi"})).with_reasoning(),
            Step::tool_calls(vec![
                ("test__fail", json!({})),
                ("test__echo", json!({"text": "again"})),
            ])
            .with_reasoning(),
            Step::text("All done."),
        ],
    )
    .await;
    let outcome = talk.run("Do it.").await;

    assert_eq!(outcome, RunOutcome::Completed("All done.".into()));
    assert_all_scripted(&talk.mock);
    let requests = talk.mock.requests();
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
    assert_eq!(
        talk.tools.called(),
        ["test__echo", "test__fail", "test__echo"]
    );

    let usage = talk.recorder.total();
    assert_eq!((usage.turns, usage.tool_calls), (3, 3));
    assert_eq!((usage.input_tokens, usage.output_tokens), (300, 60));
    assert_eq!(
        talk.conversation.items().len(),
        10,
        "the final message joins the history"
    );
}

#[tokio::test]
async fn messages_tool_calls_then_text() {
    let mut talk = Talk::new(
        WireApi::AnthropicMessages,
        [
            Step::tool_calls(vec![
                ("test__echo", json!({"text": "a"})),
                ("test__echo", json!({"text": "b"})),
            ])
            .with_reasoning(),
            Step::tool_call("test__fail", json!({})).with_reasoning(),
            Step::text("Finished."),
        ],
    )
    .await;
    let outcome = talk.run("Go.").await;

    assert_eq!(outcome, RunOutcome::Completed("Finished.".into()));
    assert_all_scripted(&talk.mock);
    let requests = talk.mock.requests();
    let headers = &requests[0].headers;
    assert_eq!(headers["x-api-key"], KEY);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(
        requests[0].body["system"],
        json!([{"type": "text", "text": "You test things.", "cache_control": {"type": "ephemeral"}}]),
        "the system context is a cache breakpoint"
    );
    // Streamed, with the output limit of a model the default table does not know.
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[0].body["max_tokens"], 32_000);
    assert_eq!(
        requests[0].body["tools"][0]["input_schema"]["type"],
        "object"
    );

    let messages = requests[2].body["messages"].as_array().unwrap().clone();
    let roles = support::each_str(&requests[2].body["messages"], "role");
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
    assert_eq!(talk.recorder.total().tool_calls, 3);
}

#[tokio::test]
async fn a_paused_messages_turn_continues_with_the_same_content() {
    let mut talk = Talk::new(
        WireApi::AnthropicMessages,
        [
            Step::text("First half, ").with_stop_reason("pause_turn"),
            Step::text("second half."),
        ],
    )
    .await;
    let outcome = talk.run("Write.").await;
    assert_eq!(
        outcome,
        RunOutcome::Completed("First half, second half.".into())
    );
    assert_all_scripted(&talk.mock);
    let last = &talk.mock.requests()[1].body["messages"];
    assert_eq!(
        last.as_array().unwrap().len(),
        2,
        "after pause_turn the paused turn is sent back as it is"
    );
    assert_eq!(
        last[1]["content"],
        json!([{"type": "text", "text": "First half,", "cache_control": {"type": "ephemeral"}}]),
        "trailing whitespace is trimmed before asking the API to go on (the newest block is \
         the cache breakpoint)"
    );
    assert_eq!(talk.recorder.total().turns, 2);
}

#[tokio::test]
async fn resuming_keeps_the_conversation() {
    let mut talk = Talk::new(WireApi::Responses, [Step::text("One."), Step::text("Two.")]).await;
    talk.run("First task.").await;
    let outcome = talk.run("Follow-up.").await;
    assert_eq!(outcome, RunOutcome::Completed("Two.".into()));
    let input = &talk.mock.requests()[1].body["input"];
    let texts: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["First task.", "One.", "Follow-up."]);
}
