//! What a local engine does that the official APIs do not, through the real binary against
//! a mock that plays the engine as recorded (`MockEngine::LlamaCpp`, llama.cpp's server;
//! issue 25): an overflow in its words is `context_limit`; a Responses call the output limit
//! cut off mid-arguments, in a reply the engine calls `completed`, is answered with an error
//! and goes back as `{}`, never as the broken JSON the engine refuses with a 500; a Messages
//! call whose JSON is whole when the limit stops the reply runs, one whose JSON stops
//! mid-way does not. `suite::real_engine` runs the same against the real server.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockEngine, MockProvider, Recorded, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::TempWorkspace;
use support::binary::{KEY_VAR, RunRecord, run_json};
use support::run_kit::KEY;

/// How long one run may take against the mock.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The two wires: the `wire_api` value and the mock's base URL for it.
fn endpoint(mock: &MockProvider, wire: &str) -> String {
    match wire {
        "responses" => mock.responses_base_url(),
        _ => mock.messages_base_url(),
    }
}

/// A Claude Code file that reads the workspace (`tools: Read, Grep, Glob`), at the mock.
fn reader(mock: &MockProvider, wire: &str, extra: &str) -> String {
    format!(
        "---\nname: reader\ndescription: Reads a file of the workspace.\nmodel: smollm2\n\
         model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n\
         tools: Read, Grep, Glob\n{extra}\n---\nYou read files when asked.\n",
        endpoint(mock, wire)
    )
}

/// A workspace with `notes.txt` and the reader agent.
fn reader_workspace(definition: &str) -> TempWorkspace {
    let ws = TempWorkspace::new();
    ws.write("notes.txt", "alpha\nbeta\n");
    ws.write(".claude/agents/reader.md", definition);
    ws
}

async fn run(ws: &TempWorkspace, name: &str, task: &str) -> RunRecord {
    run_json(ws.path(), name, task, &[(KEY_VAR, KEY)], RUN_LIMIT).await
}

fn refused(request: &Recorded) -> Option<(u16, &str)> {
    match &request.outcome {
        RecordedOutcome::Refused(status, message) => Some((*status, message)),
        RecordedOutcome::Scripted => None,
    }
}

/// llama.cpp's overflow (`400 exceed_context_size_error`, "request (N tokens) exceeds the
/// available context size (M tokens), try increasing it", in OpenAI's error shape on both
/// wires) is `context_limit`, asked once: it used to be `provider_error`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpps_context_overflow_is_context_limit_on_both_wires() {
    for wire in ["responses", "anthropic-messages"] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.play(MockEngine::LlamaCpp);
        mock.set_context_limit(4_000);
        let ws = TempWorkspace::new();
        ws.write(
            ".agents/agents/text.md",
            format!(
                "---\nname: text\ndescription: Answers.\nmodel: smollm2\nmodel_provider: custom\n\
                 base_url: {}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n---\nYou answer.\n",
                endpoint(&mock, wire)
            ),
        );
        let ran = run(&ws, "text", &"Summarise this. ".repeat(1_000)).await;
        assert!(!ran.success, "{wire}: {}", ran.record);
        let error = &ran.record["error"];
        assert_eq!(error["code"], "context_limit", "{wire}: {}", ran.record);
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("answered HTTP 400 exceed_context_size_error: request (")
                && message.contains("exceeds the available context size (1000 tokens)"),
            "{wire}: {message}"
        );
        let requests = mock.requests();
        assert_eq!(requests.len(), 1, "{wire}: never retried");
        assert_eq!(
            refused(&requests[0]).map(|(status, _)| status),
            Some(400),
            "{wire}"
        );
    }
}

/// llama.cpp marks a Responses reply its output limit cut off `completed`, and the call in
/// it, whose arguments stop mid-way (`{"path":"no`). The call is answered with an error that
/// says it was cut off, is never run, and goes back with `"arguments": "{}"`: sent back as
/// received, the engine answers 500 every time and the run was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_responses_call_cut_off_mid_arguments_goes_back_as_an_empty_object_unrun() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::LlamaCpp);
    mock.push([
        Step::tool_call("workspace__read", json!({"path": "notes.txt"})).cut_off(),
        Step::text("Done."),
    ]);
    let ws = reader_workspace(&reader(&mock, "responses", "max_output_tokens: 20"));
    let ran = run(&ws, "reader", "Read notes.txt.").await;
    assert!(ran.success, "{}\n{}", ran.record, ran.stderr);
    assert_eq!(ran.record["status"], "completed");
    assert_eq!(ran.record["result"], "Done.");
    assert_eq!(
        ran.record["tools_used"],
        json!([]),
        "the cut-off call is not run"
    );
    let requests = mock.requests();
    assert_eq!(
        requests.iter().filter_map(refused).collect::<Vec<_>>(),
        vec![],
        "the engine refused nothing"
    );
    assert_eq!(requests.len(), 2);
    let input = requests[1].body["input"].as_array().unwrap();
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["arguments"], "{}", "{call}");
    assert_eq!(call["name"], "workspace__read");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], call["call_id"]);
    let said = output["output"].as_str().unwrap();
    assert!(
        said.starts_with("Error: this call to `workspace__read` was cut off")
            && said.contains("output limit of 20 tokens")
            && said.contains("was not run"),
        "{said}"
    );
}

/// llama.cpp closes a Messages tool use block before it says `max_tokens`, whatever its
/// JSON: a call whose JSON is whole runs (it used to be answered "was cut off … not run"),
/// and a call whose JSON stops mid-way is still cut off and not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_messages_call_is_cut_off_only_when_its_json_is_unfinished() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::LlamaCpp);
    mock.push([
        Step::tool_call("workspace__read", json!({"path": "notes.txt"}))
            .with_stop_reason("max_tokens"),
        Step::text("Done."),
    ]);
    let definition = reader(&mock, "anthropic-messages", "max_output_tokens: 28");
    let ws = reader_workspace(&definition);
    let ran = run(&ws, "reader", "Read notes.txt.").await;
    assert!(ran.success, "{}\n{}", ran.record, ran.stderr);
    assert_eq!(
        ran.record["tools_used"],
        json!([{"tool": "workspace__read", "calls": 1, "errors": 0}]),
        "{}",
        ran.record
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{result}");
    assert!(result.get("is_error").is_none(), "{result}");
    assert!(
        result["content"].as_str().unwrap().contains("alpha"),
        "the file was read: {result}"
    );

    // The same call, its JSON cut in half before the block closed: not run.
    mock.push([
        Step::tool_call("workspace__read", json!({"path": "notes.txt"})).cut_off(),
        Step::text("Done."),
    ]);
    let ran = run(&ws, "reader", "Read notes.txt.").await;
    assert!(ran.success, "{}\n{}", ran.record, ran.stderr);
    assert_eq!(ran.record["tools_used"], json!([]), "{}", ran.record);
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let turn: &Value = &requests[3].body["messages"][1]["content"][0];
    assert_eq!(turn["type"], "tool_use");
    assert_eq!(turn["input"], json!({}), "{turn}");
    let result = &requests[3].body["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("was cut off: the reply reached the output limit of 28 tokens"),
        "{result}"
    );
    assert_eq!(mock.refusals(), 0);
}
