//! Requests the real APIs refuse, through the real binary (SPEC §6.1, issue 24), against
//! mocks that refuse them in the APIs' words: thinking in the kind each Claude model takes
//! (a budget on Claude 4.5, never lost to a refused adaptive mode), an effort level a model
//! refuses lowered to the nearest one it takes (on Chat Completions too, in OpenAI's and
//! Gemini's words), blank text blocks the API returned never sent back, a failed tool's
//! empty result never sent empty, and what DeepSeek and Gemini add to a Chat Completions
//! reply sent back where they require it.

use crate::support;

use mcp_agents::providers::SILENT_FAILURE_TEXT;
use mcp_agents::testkit::{
    ChatServer, MockProvider, ModelRefuses, Recorded, RecordedOutcome, Step,
};
use serde_json::{Value, json};
use support::binary::{self, KEY_VAR, Ran};
use support::children::stdio_child;
use support::run_kit::{KEY, first_tool_result};

/// A canonical agent `name` for `model` on `wire` at the mock, with a fixture child `fx`
/// (marked `marker`) and `extra` frontmatter lines.
fn agent(mock: &MockProvider, name: &str, model: &str, wire: &str, extra: &str) -> String {
    let base = match wire {
        "responses" => mock.responses_base_url(),
        "chat-completions" => mock.chat_base_url(),
        _ => mock.messages_base_url(),
    };
    format!(
        "---\nname: {name}\ndescription: Thinks and calls tools.\nmodel: {model}\n\
         model_provider: custom\nbase_url: {base}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n\
         max_turns: 6\n{extra}\nmcp_servers:\n{}---\nUse your tools.\n",
        stdio_child("fx", &[], &format!("refusals-{name}"), "")
    )
}

/// Runs agent `name` (written as `definition`) with `mcp-agents run`.
async fn run(name: &str, definition: &str) -> Ran {
    let ws = tempfile::tempdir().unwrap();
    support::children::write(ws.path(), &format!(".agents/agents/{name}.md"), definition);
    binary::run_plain(ws.path(), name, "Go.").await
}

/// The model calls `fx__echo` once and then answers "Done.", through agent `name` for
/// `model` on `wire` with `extra` frontmatter lines, run with `mcp-agents run`, which must
/// succeed.
async fn run_echo_then_done(
    mock: &MockProvider,
    name: &str,
    model: &str,
    wire: &str,
    extra: &str,
) -> Ran {
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("Done."),
    ]);
    let ran = run(name, &agent(mock, name, model, wire, extra)).await;
    assert!(ran.success, "{model} on {wire}: {}", ran.stderr);
    ran
}

fn refused(request: &Recorded) -> Option<&str> {
    match &request.outcome {
        RecordedOutcome::Refused(_, message) => Some(message),
        RecordedOutcome::Scripted => None,
    }
}

/// Sonnet 4.5 refuses adaptive thinking and the effort parameter: the request asks for
/// thinking with a budget the effort stands for, once, and the model thinks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_4_5_thinks_with_a_budget_and_no_request_is_refused() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.refuse(ModelRefuses::AdaptiveThinking);
    mock.refuse(ModelRefuses::Effort);
    let ran = run_echo_then_done(
        &mock,
        "sonnet",
        "claude-sonnet-4-5-20250929",
        "anthropic-messages",
        "reasoning_effort: high",
    )
    .await;
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    assert_eq!(
        requests.iter().filter_map(refused).collect::<Vec<_>>(),
        Vec::<&str>::new(),
        "nothing refused"
    );
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(
        first["max_tokens"], 64_000,
        "Sonnet 4.5's documented maximum"
    );
    assert_eq!(
        first["thinking"],
        json!({"type": "enabled", "budget_tokens": 32_000}),
        "high effort: 80% of max_tokens, at most 32,000"
    );
    assert!(
        first.get("output_config").is_none(),
        "Sonnet 4.5 takes no effort parameter: {first}"
    );
    // The model thought, and its thinking went back first in its turn, as signed.
    let turn = &requests[1].body["messages"][1]["content"];
    assert_eq!(turn[0]["type"], "thinking", "{turn}");
    assert!(turn[0]["signature"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(ran.warnings("sonnet").is_empty(), "{}", ran.stderr);
}

/// A model the table does not know (a gateway's name for Opus 4.5, which takes an effort up
/// to `high`): `max` is refused with the levels it takes, and the request goes once more with
/// `high`, thinking still on. (The table's own models are never sent a level it knows they
/// refuse: `suite::provider_quirks`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_effort_level_is_lowered_to_the_nearest_the_refusal_lists() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.take_efforts(&["low", "medium", "high"]);
    let ran = run_echo_then_done(
        &mock,
        "opus",
        "corp-opus",
        "anthropic-messages",
        "reasoning_effort: max",
    )
    .await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "one refused, then the run");
    assert_eq!(
        refused(&requests[0]),
        Some(
            "This model does not support effort level 'max'. Supported levels: high, low, medium."
        )
    );
    for r in &requests[1..] {
        assert_eq!(r.body["output_config"], json!({"effort": "high"}));
        assert_eq!(r.body["thinking"]["type"], "adaptive");
    }
    let warnings = ran.warnings("opus");
    assert_eq!(warnings.len(), 1, "said once: {}", ran.stderr);
    assert!(
        warnings[0].contains("refused reasoning_effort max for corp-opus")
            && warnings[0].contains("use high from now on"),
        "{}",
        warnings[0]
    );
}

/// A model that takes no `xhigh` and that the table does not know (a gateway's name for
/// gpt-5): OpenAI's refusal lists what it takes, and the run goes on with `high`, not
/// without an effort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_refusing_xhigh_runs_with_high() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.take_efforts(&["minimal", "low", "medium", "high"]);
    let ran = run_echo_then_done(
        &mock,
        "gpt",
        "corp-gpt",
        "responses",
        "reasoning_effort: xhigh",
    )
    .await;
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    assert_eq!(
        refused(&requests[0]),
        Some(
            "Unsupported value: 'xhigh' is not supported with the 'corp-gpt' model. Supported values are: 'minimal', 'low', 'medium', and 'high'."
        )
    );
    assert_eq!(requests.len(), 3);
    for r in &requests[1..] {
        assert_eq!(r.body["reasoning"], json!({"effort": "high"}));
    }
    assert_eq!(ran.warnings("gpt").len(), 1, "{}", ran.stderr);
}

/// The API returns an empty text block before a `tool_use` (and whitespace-only ones) and
/// refuses them back; they are not kept, and the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_text_blocks_from_the_api_are_not_sent_back() {
    for blank in ["", " \n "] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            Step::tool_call("fx__echo", json!({"text": "x"}))
                .with_text(blank)
                .with_reasoning(),
            Step::text("Done."),
        ]);
        let ran = run(
            "blank",
            &agent(&mock, "blank", "mock-model", "anthropic-messages", ""),
        )
        .await;
        assert!(ran.success, "{blank:?}: {}", ran.stderr);
        let requests = mock.requests();
        assert!(
            requests.iter().all(|r| refused(r).is_none()),
            "{blank:?}: {:?}",
            requests.iter().filter_map(refused).collect::<Vec<_>>()
        );
        let turn = requests[1].body["messages"][1]["content"].clone();
        let kinds = support::each_str(&turn, "type");
        assert_eq!(kinds, ["thinking", "tool_use"], "{turn}");
    }
}

/// A tool that fails without a word gives the model a short text, never an empty error
/// result (which Messages refuses).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_tool_with_no_content_still_tells_the_model_it_failed() {
    for wire in ["anthropic-messages", "responses", "chat-completions"] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            Step::tool_call("fx__fail_silently", json!({})),
            Step::text("It failed."),
        ]);
        let ran = run("silent", &agent(&mock, "silent", "mock-model", wire, "")).await;
        assert!(ran.success, "{wire}: {}", ran.stderr);
        let body = mock.requests()[1].body.clone();
        if wire == "anthropic-messages" {
            let block = &body["messages"][2]["content"][0];
            assert_eq!(block["is_error"], true, "{block}");
        }
        let result = first_tool_result(wire, &body);
        let text = result.as_str().unwrap();
        assert!(text.ends_with(SILENT_FAILURE_TEXT), "{wire}: {text:?}");
    }
}

/// On Chat Completions too a refused effort level is lowered to the nearest one the refusal
/// lists: OpenAI's wording ("Unsupported value: 'reasoning_effort' does not support …") and
/// Gemini's ("Invalid reasoning_effort: … Valid values are: …").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_models_refusing_an_effort_level_run_with_the_nearest() {
    for (server, model, refusal) in [
        // Models the table does not know: it would lower `xhigh` before any request.
        (
            ChatServer::OpenAi,
            "corp-gpt",
            "Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        ),
        (
            ChatServer::Gemini,
            "corp-gemini",
            "Invalid reasoning_effort: xhigh. Valid values are: high, low, medium, minimal",
        ),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.set_chat_server(server);
        mock.take_efforts(&["minimal", "low", "medium", "high"]);
        let ran = run_echo_then_done(
            &mock,
            "chatty",
            model,
            "chat-completions",
            "reasoning_effort: xhigh",
        )
        .await;
        assert_eq!(ran.stdout, "Done.\n");
        let requests = mock.requests();
        assert_eq!(refused(&requests[0]), Some(refusal), "{server:?}");
        assert_eq!(requests.len(), 3, "{server:?}");
        for r in &requests[1..] {
            assert_eq!(r.body["reasoning_effort"], "high", "{server:?}");
        }
        let warnings = ran.warnings("chatty");
        assert_eq!(warnings.len(), 1, "{server:?}: {}", ran.stderr);
        assert!(
            warnings[0].contains("use high from now on"),
            "{}",
            warnings[0]
        );
    }
}

/// What a Chat Completions provider adds to a reply and requires back goes back, through the
/// real binary: DeepSeek's `reasoning_content` on a tool-call turn, Gemini 3's thought
/// signature on its call. Each mock refuses a history without it, in the provider's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_provider_extras_are_sent_back_where_the_provider_requires_them() {
    for (server, model) in [
        (ChatServer::DeepSeek, "deepseek-v4-flash"),
        (ChatServer::Gemini, "gemini-3-flash-preview"),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.set_chat_server(server);
        mock.push([
            Step::tool_call("fx__echo", json!({"text": "x"})).with_reasoning(),
            Step::tool_call("fx__echo", json!({"text": "y"})).with_reasoning(),
            Step::text("Done.").with_reasoning(),
        ]);
        let ran = run(
            "extra",
            &agent(&mock, "extra", model, "chat-completions", ""),
        )
        .await;
        assert!(ran.success, "{server:?}: {}", ran.stderr);
        assert_eq!(ran.stdout, "Done.\n");
        let requests = mock.requests();
        assert_eq!(requests.len(), 3, "{server:?}: nothing refused");
        assert_eq!(mock.refusals(), 0);
        let turn = requests[2].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .cloned()
            .collect::<Vec<Value>>();
        assert_eq!(turn.len(), 2, "{server:?}");
        for message in &turn {
            match server {
                ChatServer::DeepSeek => assert!(
                    message["reasoning_content"]
                        .as_str()
                        .is_some_and(|r| r.starts_with("Thinking ")),
                    "{message}"
                ),
                _ => assert!(
                    message["tool_calls"][0]["extra_content"]["google"]["thought_signature"]
                        .is_string(),
                    "{message}"
                ),
            }
        }
    }
}

/// A Chat Completions server that predates `max_completion_tokens` (vLLM before 0.6.4,
/// Azure before 2024-08-01, proxies) refuses it as unknown; through the binary the run goes
/// on with the limit as `max_tokens`, and one warning says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_server_without_max_completion_tokens_gets_max_tokens_with_a_warning() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.refuse(ModelRefuses::CompletionTokens);
    let ran = run_echo_then_done(
        &mock,
        "older",
        "mock-model",
        "chat-completions",
        "max_output_tokens: 4000",
    )
    .await;
    let requests = mock.requests();
    assert_eq!(
        refused(&requests[0]),
        Some("Unrecognized request argument supplied: max_completion_tokens")
    );
    assert_eq!(requests.len(), 3);
    for r in &requests[1..] {
        assert_eq!(r.body["max_tokens"], 4000);
    }
    let warnings = ran.warnings("older");
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    assert!(
        warnings[0].contains("refused max_completion_tokens for mock-model")
            && warnings[0].contains("send max_tokens instead from now on"),
        "{}",
        warnings[0]
    );
}
