//! Answers the parent's model can read (SPEC §4.3): Claude Code and Codex give their model
//! `structuredContent`, not the text block, and Codex shows an answer's first line; so every
//! success opens with `summary`: `wait_agent`'s the human lines its text opens with,
//! `spawn_agent`'s and `send_input`'s one line. Failures keep SPEC §4's `{"error": …}`.
//! (`support::binary::Connection::ok` checks the opening `summary` of every success in the
//! suite; these tests check what the lines say.)

use crate::support;

use mcp_agents::testkit::Step;
use serde_json::{Value, json};
use support::ServerUnderTest;

/// The first line of a result's text block.
fn first_line(result: &rmcp::model::CallToolResult) -> String {
    let text = &result.content[0].as_text().unwrap().text;
    text.lines().next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_and_send_input_answers_open_with_a_line_that_says_what_happened() {
    let s = ServerUnderTest::stdio().await;
    s.mock.push([Step::Hang, Step::Hang]);
    let spawned = s
        .call("spawn_agent", json!({"name": "worker", "task": "Hang."}))
        .await;
    let answer = spawned.structured_content.clone().unwrap();
    let id = answer["agent_id"].as_str().unwrap();
    let who = format!("worker {}", &id[..8]);
    assert_eq!(
        answer["summary"],
        format!("{who}: started in the background on mock-model (custom)")
    );
    // What a client that shows the first line of an answer shows.
    assert!(
        first_line(&spawned).starts_with(&format!("{{\"summary\":\"{who}: started")),
        "{}",
        first_line(&spawned)
    );

    let queued = s
        .ok("send_input", json!({"target": id, "message": "Also this."}))
        .await;
    assert_eq!(
        queued["summary"],
        format!("{who}: running; this message is queued for its next step (1 queued)")
    );
    let interrupted = s
        .ok(
            "send_input",
            json!({"target": id, "message": "Now this.", "interrupt": true}),
        )
        .await;
    assert!(
        interrupted["summary"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{who}: interrupting its current step; it goes on")),
        "{interrupted}"
    );
    let stopped = s
        .ok(
            "send_input",
            json!({"target": id, "stop": true, "message": "enough"}),
        )
        .await;
    let line = stopped["summary"].as_str().unwrap();
    assert!(
        line.starts_with(&format!("{who}: failed in "))
            && line.contains(", cancelled: stopped by the parent: enough"),
        "after a stop, the agent's own line: {line}"
    );
    assert_eq!(
        line,
        s.wait(&[id], 0).await["summary"],
        "as wait_agent shows it"
    );

    s.mock.push([Step::text("Resumed.")]);
    let resumed = s
        .ok("send_input", json!({"target": id, "message": "Go on."}))
        .await;
    assert_eq!(
        resumed["summary"],
        format!("{who}: resumed: a new run on its conversation, starting with this message")
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wait_answer_opens_with_its_human_lines_as_summary() {
    let s = ServerUnderTest::stdio().await;
    s.mock.push([Step::text("All good."), Step::Hang]);
    let done = s.run_to_end("worker", "Check.").await;
    let running = s.spawn("claude-worker", "Hang.").await;
    let finished = done["agent_id"].as_str().unwrap();
    let both = s
        .call(
            "wait_agent",
            json!({"targets": [finished, running], "timeout_ms": 0}),
        )
        .await;
    let answer: Value = both.structured_content.clone().unwrap();
    let summary = answer["summary"].as_str().unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{summary}");
    assert!(
        lines[0].starts_with(&format!("worker {}: completed in ", &finished[..8]))
            && lines[0].ends_with(" s: All good."),
        "{summary}"
    );
    assert!(
        lines[1].starts_with(&format!("claude-worker {}: running ", &running[..8])),
        "{summary}"
    );
    let text = &both.content[0].as_text().unwrap().text;
    assert!(
        text.starts_with(&format!("{summary}\n{{\"summary\":")),
        "{text}"
    );
    s.ok("send_input", json!({"target": running, "stop": true}))
        .await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_keeps_its_error_shape() {
    let s = ServerUnderTest::stdio().await;
    let refused = s
        .call("wait_agent", json!({"targets": ["0123456789abcdef"]}))
        .await;
    let answer = refused.structured_content.clone().unwrap();
    let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["error"],
        "SPEC §4: a failure is {{\"error\": …}}: {answer}"
    );
    assert!(
        first_line(&refused).starts_with("{\"error\":{\"code\":\"unknown_agent\",\"message\":"),
        "the code and the message's start come first: {}",
        first_line(&refused)
    );
    s.close().await;
}
