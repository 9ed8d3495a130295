//! What OpenAI's and DeepSeek's Chat Completions refuse that the wire's other servers take,
//! through the real binary against mocks that refuse it in their words (issue 36): OpenAI's
//! reasoning models refuse to reason with function tools there (gpt-5.4 an effort, gpt-5.6
//! its own default too), answered with `reasoning_effort: none` and a warning that the
//! model's reasoning needs the Responses wire, which `check` gives before any run; DeepSeek
//! refuses image parts, and each image then goes as a text note naming it, for the rest of
//! the run.

use crate::support;

use mcp_agents::testkit::{ChatServer, MockProvider, Recorded, RecordedOutcome, Step};
use serde_json::json;
use support::binary::{self, KEY_VAR, Ran};
use support::children::stdio_child;
use support::cli::{mcp_agents, text};
use support::run_kit::KEY;

/// A canonical Chat Completions agent `name` for `model` at the mock, with a fixture child
/// `fx` and `extra` frontmatter lines.
fn agent(mock: &MockProvider, name: &str, model: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Calls tools.\nmodel: {model}\n\
         model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\n\
         wire_api: chat-completions\nmax_turns: 6\n{extra}\nmcp_servers:\n{}---\n\
         Use your tools.\n",
        mock.chat_base_url(),
        stdio_child("fx", &[], &format!("chat-refusals-{name}"), "")
    )
}

/// Writes agent `name` as `definition` into a new workspace.
fn workspace(name: &str, definition: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    support::children::write(ws.path(), &format!(".agents/agents/{name}.md"), definition);
    ws
}

/// Runs agent `name` (written as `definition`) with `mcp-agents run`.
async fn run(name: &str, definition: &str) -> Ran {
    let ws = workspace(name, definition);
    binary::run_plain(ws.path(), name, "Go.").await
}

fn refused(request: &Recorded) -> Option<&str> {
    match &request.outcome {
        RecordedOutcome::Refused(_, message) => Some(message),
        RecordedOutcome::Scripted => None,
    }
}

/// gpt-5.4 refuses an effort with function tools, gpt-5.6 its own default too (so an agent
/// that sets no effort failed at once): each request after the one refusal sends
/// `reasoning_effort: none`, as the refusal says, and the warning (once) says the model's
/// reasoning with tools needs the Responses wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_refused_with_tools_is_answered_with_effort_none() {
    for (model, extra, refusal_ends) in [
        (
            "gpt-5.4",
            "reasoning_effort: high",
            "Please use /v1/responses instead.",
        ),
        (
            "gpt-5.6-terra",
            "",
            "To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
        ),
        (
            "gpt-5.6-luna",
            "reasoning_effort: medium",
            "set reasoning_effort to 'none'.",
        ),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push([
            Step::tool_call("fx__echo", json!({"text": "x"})),
            Step::text("Done."),
        ]);
        let ran = run("gpt", &agent(&mock, "gpt", model, extra)).await;
        assert!(ran.success, "{model}: {}", ran.stderr);
        assert_eq!(ran.stdout, "Done.\n");
        let requests = mock.requests();
        assert_eq!(requests.len(), 3, "{model}: one refused, then the run");
        let message = refused(&requests[0]).expect("the first is refused");
        assert!(message.ends_with(refusal_ends), "{model}: {message}");
        for r in &requests[1..] {
            assert_eq!(r.body["reasoning_effort"], "none", "{model}: {}", r.body);
            assert!(r.body["tools"].is_array());
        }
        let warnings: Vec<&str> = ran
            .warnings("gpt")
            .into_iter()
            .filter(|w| w.contains("refused"))
            .collect();
        assert_eq!(warnings.len(), 1, "{model}: {}", ran.stderr);
        assert!(
            warnings[0].contains(&format!(
                "refused {model}'s reasoning with function tools on Chat Completions"
            )) && warnings[0].contains("send reasoning_effort none from now on")
                && warnings[0].contains("set `wire_api: responses`"),
            "{model}: {}",
            warnings[0]
        );
    }
}

/// `check` warns, before any run, when a definition pairs such a model with
/// `chat-completions`; not on the Responses wire, nor for a model that reasons with tools
/// there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_warns_of_a_reasoning_model_on_chat_completions() {
    let mock = MockProvider::start(KEY).await.unwrap();
    for (model, wire, warned) in [
        ("gpt-5.6-sol", "chat-completions", true),
        ("openai/gpt-5.4", "chat-completions", true),
        ("gpt-5.6-sol", "responses", false),
        ("gpt-5-mini", "chat-completions", false),
    ] {
        let definition = agent(&mock, "gpt", model, "")
            .replace("wire_api: chat-completions", &format!("wire_api: {wire}"));
        let ws = workspace("gpt", &definition);
        let out = mcp_agents(&["check", &ws.path().display().to_string()]);
        let stderr = text(&out.stderr);
        let expected = format!(
            "`{model}` does not reason with function tools on `wire_api: chat-completions`"
        );
        assert_eq!(
            stderr.contains(&expected),
            warned,
            "{model} on {wire}: {stderr}"
        );
        if warned {
            assert!(stderr.contains("set `wire_api: responses`"), "{stderr}");
        }
    }
}

/// A child tool's image goes to DeepSeek, which takes text only and refuses the part in its
/// words: the request goes again once with each image replaced by a note naming it, one
/// warning says so, and the later images of the run go as notes at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_a_text_only_endpoint_refuses_go_as_notes_for_the_rest_of_the_run() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_chat_server(ChatServer::DeepSeek);
    mock.push([
        Step::tool_call("fx__picture", json!({})),
        Step::tool_call("fx__picture", json!({})),
        Step::text("Done."),
    ]);
    let ran = run("seer", &agent(&mock, "seer", "deepseek-chat", "")).await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    let refusals: Vec<&str> = requests.iter().filter_map(refused).collect();
    assert_eq!(refusals.len(), 1, "refused once: {refusals:?}");
    assert!(
        refusals[0].contains("unknown variant `image_url`, expected `text`"),
        "{}",
        refusals[0]
    );
    assert_eq!(
        requests.len(),
        4,
        "the refused one sent again, then the run"
    );
    for r in requests.iter().filter(|r| refused(r).is_none()) {
        assert!(!r.body.to_string().contains("image_url"), "{}", r.body);
    }
    let last = &requests[3].body["messages"];
    let notes: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.contains("[image 1: image/png,"))
        .collect();
    assert_eq!(notes.len(), 2, "each round's image named: {last}");
    assert!(
        notes[0].starts_with("The images from tool call ")
            && notes[0].contains("not shown: this endpoint takes text only]"),
        "{}",
        notes[0]
    );
    let warnings: Vec<&str> = ran
        .warnings("seer")
        .into_iter()
        .filter(|w| w.contains("refused image_url parts"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    assert!(
        warnings[0].contains("send a text note naming each image instead from now on"),
        "{}",
        warnings[0]
    );
}
