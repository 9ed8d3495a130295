//! A run's secrets never leave the server (SPEC §10; issue 23 item 2), through the real
//! binary: its provider key, however it is sent (`x-api-key`, `auth: bearer`, a gateway's
//! `ANTHROPIC_AUTH_TOKEN`), and the values its child servers take from the environment.
//! A provider that quotes the key back with the key across the point where its message is
//! cut (an HTTP error, a stream's `error` event, a `response.failed`, a 429 retried until
//! the retries run out) leaves no piece of it in the error; a model that repeats a secret
//! does not get it into `result`, `structured_result` or `partial_result`; a child that
//! logs its token does not get it onto the server's stderr.

use crate::support;

use mcp_agents::limits::PROVIDER_MESSAGE_CHARS;
use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, BIN, Connection, Generation, KEY_VAR};
use support::children;
use support::run_kit::KEY;

/// A child server's token, as the server's environment holds it.
const CHILD_TOKEN: &str = "ghp_child0token0abcdefghijklmnop";
const CHILD_TOKEN_VAR: &str = "MCP_AGENTS_TEST_CHILD_TOKEN";

/// Every run of 8 characters of `secret` that `text` shows.
fn pieces_of(secret: &str, text: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(8)
        .map(|w| w.iter().collect::<String>())
        .filter(|piece| text.contains(piece.as_str()))
        .collect()
}

fn assert_hidden(what: &str, text: &str) {
    for secret in [KEY, CHILD_TOKEN] {
        let shown = pieces_of(secret, text);
        assert!(
            shown.is_empty(),
            "{what} shows {shown:?} of a secret: {text}"
        );
    }
}

/// A provider message that quotes the key so that the 1,000-character cut falls inside
/// it: 14 of its characters before the cut, the rest after.
fn quoting_across_the_cut() -> String {
    format!(
        "{}{KEY} was refused by the gateway; check the key you configured",
        "x".repeat(PROVIDER_MESSAGE_CHARS - 14)
    )
}

/// The agents: each wire with its own header, a Messages agent sending the key as a bearer
/// token, and a Claude agent reaching a gateway with `ANTHROPIC_AUTH_TOKEN`; `echo` has a
/// child server whose env carries a token.
fn workspace(mock: &MockProvider) -> tempfile::TempDir {
    let ws = binary::workspace(mock);
    let write = |rel: &str, text: String| children::write(ws.path(), rel, &text);
    write(
        ".agents/agents/bearer-claude.md",
        format!(
            "---\nname: bearer-claude\ndescription: Messages with a bearer token.\nmodel: mock-model\n\
             model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: anthropic-messages\n\
             auth: bearer\nmax_turns: 5\n---\nWork.\n",
            mock.messages_base_url()
        ),
    );
    write(
        ".agents/agents/gateway-claude.md",
        format!(
            "---\nname: gateway-claude\ndescription: Claude through a gateway's token.\n\
             model: claude-sonnet-4-5\nmodel_provider: anthropic\nbase_url: {}\nmax_turns: 5\n---\nWork.\n",
            mock.messages_base_url()
        ),
    );
    write(
        ".agents/agents/echo.md",
        format!(
            "---\nname: echo\ndescription: Has a child with a token.\nmodel: mock-model\n\
             model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n\
             max_turns: 5\nmcp_servers:\n  fx:\n    command: {BIN}\n    args: [\"fixture-server\", \
             \"--say-env\", \"FIXTURE_TOKEN\"]\n    env: {{ FIXTURE_TOKEN: \"${{{CHILD_TOKEN_VAR}}}\" }}\n\
             ---\nWork.\n",
            mock.responses_base_url()
        ),
    );
    write(
        ".agents/agents/structured.md",
        format!(
            "---\nname: structured\ndescription: Answers in JSON.\nmodel: mock-model\n\
             model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n\
             max_turns: 5\noutput_schema:\n  type: object\n  properties:\n    key: {{type: string}}\n\
             ---\nWork.\n",
            mock.responses_base_url()
        ),
    );
    ws
}

async fn start(ws: &tempfile::TempDir) -> Connection {
    binary::stdio_env(
        ws.path(),
        Generation::Modern,
        &[
            ("ANTHROPIC_AUTH_TOKEN", KEY),
            (CHILD_TOKEN_VAR, CHILD_TOKEN),
        ],
        &["ANTHROPIC_API_KEY"],
    )
    .await
}

/// The ways a provider's message reaches the error, on `wire` ("responses" or "messages").
fn failures(wire: &str) -> Vec<(&'static str, Step)> {
    let message = quoting_across_the_cut();
    let error_event = match wire {
        "responses" => json!({"type": "error", "sequence_number": 1, "code": "invalid_prompt",
                              "message": message, "param": null}),
        _ => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
    };
    let mut steps = vec![
        (
            "an HTTP 400",
            match wire {
                "responses" => Step::openai_error(400, "invalid_request_error", None, &message),
                _ => Step::anthropic_error(400, "invalid_request_error", &message),
            },
        ),
        ("an `error` event", Step::events(&[("error", error_event)])),
    ];
    if wire == "responses" {
        let failed = json!({"type": "response.failed", "sequence_number": 1, "response": {
            "id": "resp_1", "object": "response", "status": "failed", "output": [],
            "error": {"code": "invalid_prompt", "message": message}}});
        steps.push((
            "a `response.failed`",
            Step::events(&[("response.failed", failed)]),
        ));
    }
    steps
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_quoted_across_the_cut_leaves_no_piece_in_the_error() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&mock);
    let c = start(&ws).await;
    for (agent, wire) in [
        ("worker", "responses"),
        ("claude-worker", "messages"),
        ("bearer-claude", "messages"),
        ("gateway-claude", "messages"),
    ] {
        for (route, step) in failures(wire) {
            mock.push([step]);
            let record = c.run_to_end(agent, "Go.").await;
            assert_eq!(record["status"], "failed", "{agent}, {route}: {record}");
            let message = record["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("[redacted]"),
                "{agent}, {route}: {message}"
            );
            assert_hidden(&format!("{agent}, {route}"), &record.to_string());
        }
    }
    // A 429 retried until the retries run out (the provider asks for a short wait).
    let limited = |wire: &str| {
        let message = quoting_across_the_cut();
        match wire {
            "responses" => {
                Step::openai_error(429, "requests", Some("rate_limit_exceeded"), &message)
            }
            _ => Step::anthropic_error(429, "rate_limit_error", &message),
        }
        .with_header("retry-after-ms", "5")
    };
    for (agent, wire) in [("worker", "responses"), ("gateway-claude", "messages")] {
        mock.push((0..5).map(|_| limited(wire)));
        let id = c.spawn(agent, "Go.").await;
        let done = c.wait(&[&id], 60_000).await;
        let record = &done["agents"][0];
        assert_eq!(record["status"], "failed", "{agent}: {record}");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(message.contains("after 5 attempts"), "{agent}: {message}");
        assert_hidden(&format!("{agent}, retried 429s"), &done.to_string());
    }
    // The gateway agent really sent the token as a bearer token.
    let sent = mock.requests().last().unwrap().headers.clone();
    assert_eq!(sent["authorization"], format!("Bearer {KEY}"));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_the_model_repeats_reach_no_result() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&mock);
    let c = start(&ws).await;
    // `result`, for each header the key travels in.
    for agent in ["worker", "claude-worker", "bearer-claude", "gateway-claude"] {
        mock.push([Step::text(&format!(
            "Your key is {KEY}, and the token {CHILD_TOKEN}."
        ))]);
        let record = c.run_to_end(agent, "What is my key?").await;
        assert_eq!(record["status"], "completed", "{agent}: {record}");
        assert_eq!(
            record["result"], "Your key is [redacted], and the token [redacted].",
            "{agent}"
        );
    }
    // A child's token, which the model read from a tool, in the answer of the agent that
    // has the child.
    mock.push([Step::text(&format!("The child's token is {CHILD_TOKEN}"))]);
    let record = c.run_to_end("echo", "Go.").await;
    assert_eq!(
        record["result"], "The child's token is [redacted]",
        "{record}"
    );
    // `structured_result`.
    mock.push([Step::text(&json!({"key": KEY}).to_string())]);
    let record = c.run_to_end("structured", "Go.").await;
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["structured_result"], json!({"key": "[redacted]"}));
    assert_hidden("structured", &record.to_string());
    // `partial_result`: text before a failure.
    mock.push([
        Step::tool_call("nothing__here", json!({})).with_text(&format!("So far: {KEY}")),
        Step::openai_error(400, "invalid_request_error", None, "refused"),
    ]);
    let record = c.run_to_end("worker", "Go.").await;
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["partial_result"], "So far: [redacted]");
    assert_hidden("partial", &record.to_string());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_token_it_logs_never_reaches_the_servers_stderr() {
    use tokio::io::AsyncReadExt;
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&mock);
    let (c, stderr) = binary::stdio_with_stderr(
        ws.path(),
        Generation::Modern,
        &[(CHILD_TOKEN_VAR, CHILD_TOKEN), ("RUST_LOG", "debug")],
        std::process::Stdio::piped(),
    )
    .await;
    let mut stderr = stderr.unwrap();
    mock.push([Step::text("done")]);
    let record = c.run_to_end("echo", "Go.").await;
    assert_eq!(record["status"], "completed", "{record}");
    c.close().await;
    let mut seen = String::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stderr.read_to_string(&mut seen),
    )
    .await;
    assert!(
        seen.contains("FIXTURE_TOKEN=[redacted]"),
        "the child's line, hidden: {seen}"
    );
    assert_hidden("stderr", &seen);
}
