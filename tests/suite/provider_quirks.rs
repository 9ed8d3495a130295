//! What a provider takes beyond its wire format, through the real binary against mocks that
//! answer in that provider's words (issue 36, items 6 to 10): DeepSeek's thinking mode gets
//! `reasoning_content` on every assistant turn of a tool loop, empty where the reply did not
//! think; Gemini gets tool names that start with a letter or an underscore, and the calls by
//! them reach the tools by their own names; an effort the model table knows a model refuses
//! is lowered before the first request; a model behind a gateway's name that refuses both
//! adaptive thinking and the effort still thinks with a budget; the Claude 5 family asks for
//! its documented 128K output tokens.

use crate::support;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, KEY_VAR, Ran};
use support::children::stdio_child;
use support::run_kit::KEY;

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
