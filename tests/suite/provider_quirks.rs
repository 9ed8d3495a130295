//! What a provider takes beyond its wire format, through the real binary against mocks that
//! answer in that provider's words (issue 36, items 6 to 10): DeepSeek's thinking mode gets
//! `reasoning_content` on every assistant turn of a tool loop, empty where the reply did not
//! think; Gemini gets tool names that start with a letter or an underscore, and the calls by
//! them reach the tools by their own names; an effort the model table knows a model refuses
//! is lowered before the first request; a model behind a gateway's name that refuses both
//! adaptive thinking and the effort still thinks with a budget; the Claude 5 family asks for
//! its documented 128K output tokens.

use crate::support;

use mcp_agents::testkit::{
    ChatServer, MockProvider, ModelRefuses, Recorded, RecordedOutcome, Step,
};
use serde_json::{Value, json};
use support::binary::{self, KEY_VAR, Ran};
use support::children::stdio_child;
use support::run_kit::{KEY, first_tool_result};

/// A canonical agent `name` for `model` on `wire` at the mock, with a fixture child named
/// `server` and `extra` frontmatter lines.
fn agent(
    mock: &MockProvider,
    name: &str,
    model: &str,
    wire: &str,
    server: &str,
    extra: &str,
) -> String {
    let base = match wire {
        "chat-completions" => mock.chat_base_url(),
        _ => mock.messages_base_url(),
    };
    format!(
        "---\nname: {name}\ndescription: Calls tools.\nmodel: {model}\n\
         model_provider: custom\nbase_url: {base}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n\
         max_turns: 6\n{extra}\nmcp_servers:\n{}---\nUse your tools.\n",
        stdio_child(server, &[], &format!("quirks-{name}"), "")
    )
}

/// Runs agent `name` (written as `definition`) with `mcp-agents run`.
async fn run(name: &str, definition: &str) -> Ran {
    let ws = tempfile::tempdir().unwrap();
    support::children::write(ws.path(), &format!(".agents/agents/{name}.md"), definition);
    binary::run_plain(ws.path(), name, "Go.").await
}

fn refused(request: &Recorded) -> Option<&str> {
    match &request.outcome {
        RecordedOutcome::Refused(_, message) => Some(message),
        RecordedOutcome::Scripted => None,
    }
}

fn refusals(mock: &MockProvider) -> Vec<String> {
    mock.requests()
        .iter()
        .filter_map(|r| refused(r).map(str::to_owned))
        .collect()
}

fn assistant_messages(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .cloned()
        .collect()
}

/// DeepSeek in thinking mode refuses a tool loop whose assistant message lacks
/// `reasoning_content`, even one whose reply did not think; every assistant message goes
/// with it, empty where there was none, and the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepseek_thinking_mode_gets_reasoning_content_on_every_assistant_turn() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_chat_server(ChatServer::DeepSeek);
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})).with_reasoning(),
        // A turn that calls a tool without thinking first.
        Step::tool_call("fx__echo", json!({"text": "y"})),
        Step::text("Done.").with_reasoning(),
    ]);
    let definition = agent(
        &mock,
        "deep",
        "deepseek-v4-flash",
        "chat-completions",
        "fx",
        "",
    );
    let ran = run("deep", &definition).await;
    assert_eq!(refusals(&mock), Vec::<String>::new(), "{}", ran.stderr);
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let turn = assistant_messages(&requests[2].body);
    assert_eq!(turn.len(), 2);
    assert!(
        turn[0]["reasoning_content"]
            .as_str()
            .is_some_and(|r| r.starts_with("Thinking ")),
        "the reasoning it sent, as sent: {}",
        turn[0]
    );
    assert_eq!(
        turn[1]["reasoning_content"], "",
        "empty where there was none"
    );
}

/// DeepSeek in thinking mode from the first request (`deepseek-reasoner`) whose first reply
/// calls a tool without thinking: nothing of the conversation shows thinking mode, so the
/// refusal teaches it, and the request goes again once with `reasoning_content` on every
/// assistant message, for the rest of the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepseek_refusing_a_turn_without_reasoning_content_is_answered_with_it() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.think_from_the_start();
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::tool_call("fx__echo", json!({"text": "y"})),
        Step::text("Done."),
    ]);
    let definition = agent(
        &mock,
        "reasoner",
        "deepseek-reasoner",
        "chat-completions",
        "fx",
        "",
    );
    let ran = run("reasoner", &definition).await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    let refused = refusals(&mock);
    assert_eq!(refused.len(), 1, "refused once, then learned: {refused:?}");
    assert!(refused[0].contains("must be passed back"), "{refused:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "one refused, then the run's three");
    let last = assistant_messages(&requests[3].body);
    assert_eq!(last.len(), 2);
    for turn in &last {
        assert_eq!(turn["reasoning_content"], "", "{turn}");
    }
}

/// The same history to OpenAI's Chat Completions, which never sent reasoning: no
/// `reasoning_content` is added (OpenAI refuses a field it does not know).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_thinks_gets_no_reasoning_content() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("Done."),
    ]);
    let definition = agent(&mock, "plain", "gpt-4.1", "chat-completions", "fx", "");
    let ran = run("plain", &definition).await;
    assert!(ran.success, "{}", ran.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for message in assistant_messages(&requests[1].body) {
        assert!(message.get("reasoning_content").is_none(), "{message}");
    }
}

/// Gemini refuses a function name that starts with a digit, in Google's words: a child named
/// `7zip` gives `7zip__echo`, sent as `_7zip__echo`; the model's call by that name reaches
/// the tool, and the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_gets_tool_names_that_start_with_a_letter_and_calls_find_their_tools() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_chat_server(ChatServer::Gemini);
    mock.push([
        Step::tool_call("_7zip__echo", json!({"text": "packed"})),
        Step::text("Done."),
    ]);
    let definition = agent(
        &mock,
        "gem",
        "gemini-3-flash-preview",
        "chat-completions",
        "7zip",
        "",
    );
    let ran = run("gem", &definition).await;
    assert_eq!(refusals(&mock), Vec::<String>::new(), "{}", ran.stderr);
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"_7zip__echo"), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')),
        "{names:?}"
    );
    assert_eq!(
        first_tool_result("chat-completions", &requests[1].body),
        "echo: packed",
        "the call reached 7zip's echo"
    );
    // The history keeps the name the model used.
    let turn = assistant_messages(&requests[1].body);
    assert_eq!(turn[0]["tool_calls"][0]["function"]["name"], "_7zip__echo");
}

/// Efforts the model table knows a model refuses (Opus 4.5 `max`, Opus 4.6 `xhigh`) are
/// lowered to the nearest level it takes before the first request: no request is refused,
/// and one warning says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_effort_the_table_knows_is_refused_is_lowered_before_the_first_request() {
    for (model, effort, takes, thinking) in [
        (
            "claude-opus-4-5",
            "max",
            &["low", "medium", "high"][..],
            "enabled",
        ),
        (
            "claude-opus-4-6",
            "xhigh",
            &["low", "medium", "high", "max"][..],
            "adaptive",
        ),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        if thinking == "enabled" {
            mock.refuse(ModelRefuses::AdaptiveThinking);
        }
        mock.take_efforts(takes);
        mock.push([
            Step::tool_call("fx__echo", json!({"text": "x"})),
            Step::text("Done."),
        ]);
        let extra = format!("reasoning_effort: {effort}");
        let ran = run(
            "opus",
            &agent(&mock, "opus", model, "anthropic-messages", "fx", &extra),
        )
        .await;
        assert_eq!(
            refusals(&mock),
            Vec::<String>::new(),
            "{model}: {}",
            ran.stderr
        );
        assert!(ran.success, "{model}: {}", ran.stderr);
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{model}");
        for r in &requests {
            assert_eq!(
                r.body["output_config"],
                json!({"effort": "high"}),
                "{model}"
            );
            assert_eq!(r.body["thinking"]["type"], thinking, "{model}");
        }
        let warnings = ran.warnings("opus");
        assert_eq!(warnings.len(), 1, "{model}: said once: {}", ran.stderr);
        assert!(
            warnings[0].contains(&format!("{model} does not take reasoning_effort {effort}"))
                && warnings[0].contains("use high instead"),
            "{}",
            warnings[0]
        );
    }
}

/// A model behind a gateway's name that the table cannot know, which refuses adaptive
/// thinking and the effort parameter (as Claude 4.5 does): after the two refusals it thinks
/// with a budget the effort stands for, and only the effort parameter is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_alias_refusing_adaptive_thinking_and_effort_keeps_a_thinking_budget() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.refuse(ModelRefuses::AdaptiveThinking);
    mock.refuse(ModelRefuses::Effort);
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("Done."),
    ]);
    let definition = agent(
        &mock,
        "alias",
        "corp-sonnet",
        "anthropic-messages",
        "fx",
        "reasoning_effort: high",
    );
    let ran = run("alias", &definition).await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(
        refusals(&mock),
        [
            "adaptive thinking is not supported on this model",
            "This model does not support the effort parameter."
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests[2..] {
        assert_eq!(
            r.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 25_600}),
            "high: 80% of the 32,000-token default"
        );
        assert!(r.body.get("output_config").is_none(), "{}", r.body);
    }
    // The model thought, and its thinking went back first in its turn.
    let turn = &requests[3].body["messages"][1]["content"];
    assert_eq!(turn[0]["type"], "thinking", "{turn}");
    let warnings = ran.warnings("alias");
    assert_eq!(warnings.len(), 2, "{}", ran.stderr);
    assert!(
        warnings[1].contains("refused reasoning effort for corp-sonnet")
            && warnings[1].contains("the thinking budget alone carries"),
        "{}",
        warnings[1]
    );
}

/// The Claude 5 family takes 128K output tokens (each model's page: "Max output: 128K
/// tokens"); without `max_output_tokens` that is what a request asks for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claude_5_family_asks_for_its_documented_128k_output_tokens() {
    for model in ["claude-sonnet-5-5", "claude-opus-5", "claude-haiku-5-5"] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([Step::text("Done.")]);
        let ran = run(
            "five",
            &agent(&mock, "five", model, "anthropic-messages", "fx", ""),
        )
        .await;
        assert!(ran.success, "{model}: {}", ran.stderr);
        assert_eq!(
            mock.requests()[0].body["max_tokens"],
            json!(128_000),
            "{model}"
        );
    }
}

/// A gateway's spelling of a Claude id (`anthropic/claude-opus-4.6`, as OpenRouter writes
/// it) asks for that model's maximum, not the smaller one of the `claude-opus-4` row its
/// dotted form starts with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_spelling_of_a_claude_id_asks_for_the_models_own_output_limit() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Done.")]);
    let definition = agent(
        &mock,
        "routed",
        "anthropic/claude-opus-4.6",
        "anthropic-messages",
        "fx",
        "",
    );
    let ran = run("routed", &definition).await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(mock.requests()[0].body["max_tokens"], json!(128_000));
}
