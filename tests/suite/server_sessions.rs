//! Session behaviour through the real binary (SPEC §4–§5, §7): run permits, queue limits,
//! interrupts, resume, retention and eviction, snapshots with activity, progress
//! notifications, and the error codes of every refusal.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::binary::{self, Connection, Generation};
use support::run_kit::KEY;

async fn setup() -> (MockProvider, tempfile::TempDir, Connection) {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let connection = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    (mock, ws, connection)
}

async fn wait_until_requests(mock: &MockProvider, n: usize) {
    for _ in 0..400 {
        if mock.requests().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the mock saw {} requests, expected {n}",
        mock.requests().len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ninth_concurrent_run_is_refused_and_nothing_is_created() {
    let (mock, _ws, c) = setup().await;
    mock.push(vec![Step::Hang; 8]);
    let mut ids = Vec::new();
    for i in 0..8 {
        ids.push(c.spawn("worker", &format!("task {i}")).await);
    }
    let (code, message) = c
        .err("spawn_agent", json!({"name": "worker", "task": "ninth"}))
        .await;
    assert_eq!(code, "capacity_exceeded");
    assert!(
        message.contains("8 agents are already running"),
        "{message}"
    );
    let snapshot = c
        .wait(&ids.iter().map(String::as_str).collect::<Vec<_>>(), 0)
        .await;
    assert!(
        snapshot["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["status"] == "running"),
        "{snapshot}"
    );
    // Nothing was created for the ninth: no ninth model request, ever.
    wait_until_requests(&mock, 8).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mock.requests().len(), 8);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seventeenth_queued_input_is_refused() {
    let (mock, _ws, c) = setup().await;
    mock.push([Step::Hang]);
    let id = c.spawn("worker", "work").await;
    wait_until_requests(&mock, 1).await;
    for n in 1..=16 {
        let sent = c
            .ok(
                "send_input",
                json!({"target": id, "message": format!("note {n}")}),
            )
            .await;
        let summary = format!(
            "worker {}: running; this message is queued for its next step ({n} queued)",
            &id[..8]
        );
        assert_eq!(
            sent,
            json!({"summary": summary, "agent_id": id, "name": "worker", "status": "running",
                   "queued": n})
        );
    }
    let (code, _) = c
        .err(
            "send_input",
            json!({"target": id, "message": "one too many"}),
        )
        .await;
    assert_eq!(code, "queue_full");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_redirects_a_running_agent() {
    let (mock, _ws, c) = setup().await;
    mock.push([Step::Hang, Step::text("redirected")]);
    let id = c.spawn("worker", "Do the slow thing.").await;
    wait_until_requests(&mock, 1).await;
    let sent = c
        .ok(
            "send_input",
            json!({"target": id, "message": "Do the other thing.", "interrupt": true}),
        )
        .await;
    assert_eq!(sent["status"], "running");
    let done = c.wait(&[&id], 20_000).await;
    assert_eq!(done["agents"][0]["result"], "redirected", "{done}");
    assert_eq!(done["agents"][0]["turns"], 2);
    let last = &mock.requests()[1];
    assert_eq!(last.outcome, RecordedOutcome::Scripted);
    let texts: Vec<&str> = last.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Do the slow thing.", "Do the other thing."]);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_agent_resumes_on_the_same_conversation() {
    for agent in ["worker", "claude-worker", "chat-worker"] {
        let (mock, _ws, c) = setup().await;
        mock.push([Step::text("One."), Step::text("Two.")]);
        let id = c.spawn(agent, "First task.").await;
        assert_eq!(c.wait(&[&id], 20_000).await["agents"][0]["result"], "One.");
        let resumed = c
            .ok("send_input", json!({"target": id, "message": "Follow-up."}))
            .await;
        assert_eq!(resumed["status"], "running");
        let done = c.wait(&[&id], 20_000).await;
        let record = &done["agents"][0];
        assert_eq!(record["result"], "Two.");
        assert_eq!(record["turns"], 2, "turns count over the session's life");
        assert_eq!(record["usage"]["input_tokens"], 200);
        let body = mock.requests()[1].body.to_string();
        for earlier in ["First task.", "One.", "Follow-up."] {
            assert!(
                body.contains(earlier),
                "{agent}: the mock sees {earlier}: {body}"
            );
        }
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_least_recently_used_terminal_session_is_evicted() {
    let (mock, _ws, c) = setup().await;
    mock.push(vec![Step::text("done"); 66]);
    let mut ids = Vec::new();
    for i in 0..64 {
        let id = c.spawn("worker", &format!("task {i}")).await;
        assert_eq!(
            c.wait(&[&id], 20_000).await["agents"][0]["status"],
            "completed"
        );
        ids.push(id);
    }
    // Waiting on the oldest refreshes it, so the second oldest becomes the least recent.
    c.wait(&[&ids[0]], 0).await;
    let id = c.spawn("worker", "task 64").await;
    c.wait(&[&id], 20_000).await;
    let (code, message) = c
        .err("wait_agent", json!({"targets": [ids[1]], "timeout_ms": 0}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(message.contains(&ids[1]), "{message}");
    c.wait(&[&ids[0]], 0).await;
    c.wait(&[&ids[2]], 0).await;
    let (code, _) = c
        .err("send_input", json!({"target": ids[1], "message": "hello?"}))
        .await;
    assert_eq!(code, "unknown_agent");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_timeout_wait_is_a_snapshot_with_activity() {
    let (mock, _ws, c) = setup().await;
    mock.push([Step::Hang]);
    let id = c.spawn("worker", "work").await;
    wait_until_requests(&mock, 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let snapshot = c.wait(&[&id], 0).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(snapshot["timed_out"], true);
    let agent = &snapshot["agents"][0];
    assert_eq!(agent["status"], "running");
    let activity = &agent["activity"];
    assert_eq!(activity["phase"], "provider_request", "{agent}");
    assert_eq!(activity["summary"], "Waiting for mock-model (turn 1 of 5)");
    assert_eq!(activity["target"], "127.0.0.1");
    let elapsed = activity["activity_elapsed_ms"].as_u64().unwrap();
    let remaining = activity["operation_timeout_remaining_ms"].as_u64().unwrap();
    assert!(
        elapsed >= 40 && remaining <= 120_000 - elapsed,
        "{activity}"
    );
    assert!(agent["total_elapsed_ms"].as_u64().unwrap() >= elapsed);
    assert_eq!(agent["turns"], 1);
    assert!(
        !agent.to_string().contains("work\""),
        "no prompt text in a snapshot"
    );

    let bounded = std::time::Instant::now();
    let waited = c.wait(&[&id], 300).await;
    assert_eq!(waited["timed_out"], true);
    assert!(bounded.elapsed() >= Duration::from_millis(300));
    assert!(bounded.elapsed() < Duration::from_secs(5));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_send_progress_on_activity_transitions() {
    let (mock, _ws, c) = setup().await;
    mock.push([
        Step::openai_error(500, "server_error", None, "boom").delayed(Duration::from_millis(300)),
        Step::text("finally").delayed(Duration::from_millis(300)),
    ]);
    let id = c.spawn("claude-worker", "wait for me").await;
    let done = c.wait(&[&id], 20_000).await;
    assert_eq!(done["agents"][0]["status"], "completed", "{done}");
    let progress = c.progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "at least the retry transition");
    let short = &id[..8];
    for (n, p) in progress.iter().enumerate() {
        assert_eq!(p.progress, (n + 1) as f64, "progress increases by one");
        assert_eq!(p.total, None);
        let message = p.message.as_deref().unwrap();
        assert!(
            message.starts_with(&format!("claude-worker {short}: ")),
            "{message}"
        );
    }
    assert!(
        progress.iter().any(|p| p
            .message
            .as_deref()
            .unwrap()
            .contains("retry 1 of 4 after HTTP 500")),
        "{progress:?}"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_argument_is_invalid_input_naming_the_field() {
    let (_mock, _ws, c) = setup().await;
    let cases = [malformed_spawns(), malformed_inputs(), malformed_waits()].concat();
    for (tool, args, expected) in cases {
        let (code, message) = c.err(tool, args.clone()).await;
        assert_eq!(code, "invalid_input", "{tool} {args}");
        assert!(message.contains(expected), "{tool} {args}: {message}");
    }
    c.close().await;
}

/// A tool, malformed arguments for it, and what its refusal must say.
type Malformed = (&'static str, Value, &'static str);

fn malformed_spawns() -> Vec<Malformed> {
    vec![
        ("spawn_agent", json!({"task": "t"}), "`name` is required"),
        (
            "spawn_agent",
            json!({"name": "worker"}),
            "`task` is required",
        ),
        (
            "spawn_agent",
            json!({"name": "worker", "task": ""}),
            "`task` must not be empty",
        ),
        (
            "spawn_agent",
            json!({"name": 7, "task": "t"}),
            "`name` must be a string",
        ),
        (
            "spawn_agent",
            json!({"name": "worker", "task": ["t"]}),
            "`task` must be a string",
        ),
        (
            "spawn_agent",
            json!({"name": "worker", "task": "t", "model": "x"}),
            "unknown field `model`",
        ),
    ]
}

fn malformed_inputs() -> Vec<Malformed> {
    vec![
        (
            "send_input",
            json!({"message": "m"}),
            "`target` is required",
        ),
        (
            "send_input",
            json!({"target": "", "message": "m"}),
            "`target` must not be empty",
        ),
        (
            "send_input",
            json!({"target": "a", "message": " "}),
            "`message` must not be empty",
        ),
        (
            "send_input",
            json!({"target": "a", "message": "m", "interrupt": 1}),
            "`interrupt` must be true or false",
        ),
    ]
}

fn malformed_waits() -> Vec<Malformed> {
    vec![
        ("wait_agent", json!({}), "`targets` is required"),
        (
            "wait_agent",
            json!({"targets": "abc"}),
            "`targets` must be a list",
        ),
        ("wait_agent", json!({"targets": []}), "at least one"),
        (
            "wait_agent",
            json!({"targets": ["a", "a"]}),
            "lists a twice",
        ),
        (
            "wait_agent",
            json!({"targets": [3]}),
            "`targets[0]` must be a string",
        ),
        (
            "wait_agent",
            json!({"targets": ["a"], "timeout_ms": 300001}),
            "from 0 to 300000",
        ),
        (
            "wait_agent",
            json!({"targets": ["a"], "timeout_ms": -5}),
            "from 0 to 300000",
        ),
        (
            "wait_agent",
            json!({"targets": ["a"], "timeout_ms": "10"}),
            "`timeout_ms` must be an integer",
        ),
        (
            "wait_agent",
            json!({"targets": ["a"], "timeout_ms": 2.5}),
            "whole number",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_their_codes() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    std::fs::write(
        ws.path().join(".agents/agents/unkeyed.md"),
        format!(
            "---\nname: unkeyed\ndescription: d\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: MCP_AGENTS_TEST_UNSET_KEY\nwire_api: responses\n---\nBody.\n",
            mock.responses_base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        ws.path().join(".agents/agents/skill-less.md"),
        format!(
            "---\nname: skill-less\ndescription: d\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: {}\nwire_api: responses\nskills: [nowhere]\n---\nBody.\n",
            mock.responses_base_url(),
            binary::KEY_VAR
        ),
    )
    .unwrap();
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let (code, message) = c
        .err("spawn_agent", json!({"name": "nobody", "task": "t"}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(
        message.contains("there is no agent named `nobody`"),
        "{message}"
    );
    let (code, message) = c
        .err("spawn_agent", json!({"name": "unkeyed", "task": "t"}))
        .await;
    assert_eq!(code, "missing_credential");
    assert!(message.contains("MCP_AGENTS_TEST_UNSET_KEY"), "{message}");
    let (code, message) = c
        .err("spawn_agent", json!({"name": "skill-less", "task": "t"}))
        .await;
    assert_eq!(code, "skill_not_found");
    assert!(message.contains("`nowhere`"), "{message}");
    let (code, _) = c
        .err(
            "wait_agent",
            json!({"targets": ["0123456789abcdef0123456789abcdef"]}),
        )
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(
        mock.requests().is_empty(),
        "no refusal reached the provider"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preloaded_skills_join_the_system_context() {
    let (mock, _ws, c) = setup().await;
    mock.push([Step::text("styled")]);
    let id = c.spawn("skilled", "Write.").await;
    c.wait(&[&id], 20_000).await;
    let instructions = mock.requests()[0].body["instructions"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        instructions,
        "Base instructions.\n\n## Skill: style\n\nHouse style.\n\nUse short sentences."
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_reports_its_code_and_keeps_running_others() {
    let (mock, _ws, c) = setup().await;
    mock.set_context_limit(100_000);
    mock.push([Step::openai_error(
        400,
        "invalid_request_error",
        Some("context_length_exceeded"),
        "Your input exceeds the context window of this model.",
    )]);
    let id = c.spawn("worker", "too much").await;
    let failed = c.wait(&[&id], 20_000).await;
    let agent = &failed["agents"][0];
    assert_eq!(agent["status"], "failed");
    assert_eq!(agent["error"]["code"], "context_limit");
    assert!(
        agent["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Spawn a fresh agent")
    );
    mock.push([Step::text("still serving")]);
    let id = c.spawn("worker", "small").await;
    assert_eq!(
        c.wait(&[&id], 20_000).await["agents"][0]["result"],
        "still serving"
    );
    c.close().await;
}
