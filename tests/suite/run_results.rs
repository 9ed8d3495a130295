//! What a parent reads back, through the real binary (SPEC §4.1, §4.3): the model and
//! provider really used, the tools the agent really called, the work a failed run leaves
//! (`partial_result`), refusals, the ids still held when one is unknown, and progress from
//! the first moment of a wait.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use serde_json::{Value, json};
use support::builders::FixtureAgent;
use support::{ServerUnderTest, TestWorkspace};

/// A server over a workspace with the standard mock agents (`worker`, `claude-worker`,
/// `chat-worker`) plus `agents`.
async fn start(agents: Vec<FixtureAgent>) -> ServerUnderTest {
    let mut ws = TestWorkspace::new().standard_agents();
    for agent in agents {
        ws = ws.with(agent);
    }
    ws.stdio().await
}

/// Spawns `worker` with `task`, its model never answering; its id once it waits for it.
async fn worker_waiting_for_its_model(s: &ServerUnderTest, task: &str) -> String {
    s.mock.push([Step::Hang]);
    let id = s.spawn("worker", task).await;
    s.wait_for_phase(&id, "provider_request").await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_results_and_records_name_the_model_and_provider_sent() {
    let s = start(Vec::new()).await;
    let (mock, c) = (&s.mock, &s.c);
    for (name, text) in [
        ("worker", "one"),
        ("claude-worker", "two"),
        ("chat-worker", "three"),
    ] {
        mock.push([Step::text(text)]);
        let spawned = c
            .ok("spawn_agent", json!({"name": name, "task": "Go."}))
            .await;
        assert_eq!(spawned["model"], "mock-model", "{spawned}");
        assert_eq!(spawned["provider"], "custom", "{spawned}");
        let id = spawned["agent_id"].as_str().unwrap();
        let record = c.wait(&[id], 30_000).await["agents"][0].clone();
        assert_eq!(record["status"], "completed", "{record}");
        assert_eq!(
            (&record["model"], &record["provider"]),
            (&json!("mock-model"), &json!("custom"))
        );
        assert_eq!(record["tools_used"], json!([]), "no tool was called");
        // The id in the record is the one the provider really got.
        let sent = mock.requests().last().unwrap().body["model"].clone();
        assert_eq!(sent, record["model"]);
    }
    // A running record carries them too.
    mock.push([Step::Hang]);
    let id = c.spawn("worker", "hang").await;
    let running = c.wait(&[&id], 0).await["agents"][0].clone();
    assert_eq!(running["status"], "running");
    assert_eq!(running["model"], "mock-model");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_used_counts_the_calls_made_and_their_errors() {
    let s = start(vec![FixtureAgent::named("caller").logging_calls()]).await;
    let (mock, c) = (&s.mock, &s.c);
    mock.push([
        Step::tool_calls(vec![
            ("fx__echo", json!({"text": "a"})),
            ("fx__fail", json!({})),
            ("fx__nonexistent", json!({})),
            ("fx__echo", json!({"wrong": "arguments"})),
        ]),
        Step::tool_calls(vec![("fx__echo", json!({"text": "b"}))]),
        Step::text("I searched twice."),
    ]);
    let record = c.run_to_end("caller", "Do the task.").await;
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(
        record["tools_used"],
        json!([
            {"tool": "fx__echo", "calls": 2, "errors": 0},
            {"tool": "fx__fail", "calls": 1, "errors": 1}
        ]),
        "calls that never reached the child (unknown tool, arguments its schema rejects) are \
         not calls"
    );
    assert_eq!(record["usage"]["tool_calls"], 3);
    let mut received = s.calls_logged();
    received.sort();
    assert_eq!(
        received,
        ["echo", "echo", "fail"],
        "the child saw exactly the calls counted"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_keeps_its_last_assistant_text_as_partial_result() {
    let long = format!("{}é tail", "x".repeat(70 * 1024));
    let s = start(vec![
        FixtureAgent::named("short").lines("max_turns: 2"),
        FixtureAgent::named("chatty").lines("max_turns: 5"),
    ])
    .await;
    let (mock, c) = (&s.mock, &s.c);

    // turn_limit: the last text of the run, not the first.
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "1"})).with_text("Found A so far."),
        Step::tool_call("fx__echo", json!({"text": "2"})).with_text("Found A and B."),
    ]);
    let record = c.run_to_end("short", "Do the task.").await;
    assert_eq!(record["error"]["code"], "turn_limit", "{record}");
    assert_eq!(record["partial_result"], "Found A and B.");

    // provider_error after work was done, with text over the 64 KiB cap.
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "1"})).with_text(&long),
        Step::openai_error(400, "invalid_request_error", None, "bad request"),
    ]);
    let record = c.run_to_end("chatty", "Do the task.").await;
    assert_eq!(record["error"]["code"], "provider_error", "{record}");
    let partial = record["partial_result"].as_str().unwrap();
    assert!(partial.len() <= 64 * 1024 && partial.len() > 64 * 1024 - 4);
    assert!(long.starts_with(partial), "cut at a character boundary");

    // A run that failed before any text has none.
    mock.push([Step::openai_error(
        400,
        "invalid_request_error",
        None,
        "bad",
    )]);
    let record = c.run_to_end("worker", "Do the task.").await;
    assert_eq!(record["status"], "failed");
    assert!(record.get("partial_result").is_none(), "{record}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_carried_on_by_input_that_then_fails_keeps_the_answer_before_it() {
    // The child takes 2 s to exit, so the run is still closing when the input comes.
    let closing = FixtureAgent::named("closing").args(&["--linger-ms", "2000"]);
    let s = start(vec![closing]).await;
    let (mock, c) = (&s.mock, &s.c);
    mock.push([
        Step::text("Answer one, the real work."),
        Step::openai_error(400, "invalid_request_error", None, "bad request"),
    ]);
    let id = c.spawn("closing", "Do the task.").await;
    c.wait_for_phase(&id, "child_mcp_shutdown").await;
    c.ok(
        "send_input",
        json!({"target": id, "message": "And one more thing."}),
    )
    .await;
    let done = c.wait(&[&id], 60_000).await;
    let record = &done["agents"][0];
    assert_eq!(record["error"]["code"], "provider_error", "{record}");
    assert_eq!(
        mock.requests().len(),
        2,
        "the input carried the same run on"
    );
    assert_eq!(record["partial_result"], "Answer one, the real work.");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_completes_with_the_refusal_as_result_on_every_wire() {
    let s = start(Vec::new()).await;
    let (mock, c) = (&s.mock, &s.c);
    for name in ["worker", "claude-worker", "chat-worker"] {
        mock.push([Step::refusal("I can't help with that request.")]);
        let id = c.spawn(name, "Do something it refuses.").await;
        let record = c.wait(&[&id], 30_000).await["agents"][0].clone();
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(
            record["result"], "I can't help with that request.",
            "{name}"
        );
        assert_eq!(record["refused"], true, "{name}");
        // The conversation stays valid: the agent can be asked again.
        mock.push([Step::text("Here is something else.")]);
        c.ok(
            "send_input",
            json!({"target": id, "message": "Then something else."}),
        )
        .await;
        let again = c.wait(&[&id], 30_000).await["agents"][0].clone();
        assert_eq!(
            again["result"], "Here is something else.",
            "{name}: {again}"
        );
        assert!(again.get("refused").is_none(), "{name}: {again}");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_id_is_answered_with_the_ids_still_held() {
    let s = start(Vec::new()).await;
    let (mock, c) = (&s.mock, &s.c);
    mock.push(vec![Step::text("done"); 18]);
    let mut ids = Vec::new();
    for i in 0..18 {
        let name = if i % 2 == 0 {
            "worker"
        } else {
            "claude-worker"
        };
        let id = c.spawn(name, "quick").await;
        c.wait(&[&id], 30_000).await;
        ids.push((id, name));
    }
    // Waiting on each in turn makes the order of recency the order of `ids`.
    for (id, _) in &ids {
        c.wait(&[id], 0).await;
    }
    let (code, message) = c
        .err("wait_agent", json!({"targets": ["00000000feedface"]}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(message.contains("00000000feedface"), "{message}");
    assert!(
        message.contains("the 16 most recently used of the 18 agents"),
        "{message}"
    );
    let positions: Vec<Option<usize>> = ids
        .iter()
        .map(|(id, name)| message.find(&format!("{id} ({name})")))
        .collect();
    assert!(
        positions[..2].iter().all(Option::is_none),
        "the two least recent are left out: {message}"
    );
    let listed: Vec<usize> = positions[2..].iter().map(|p| p.unwrap()).collect();
    assert!(
        listed.windows(2).all(|w| w[0] > w[1]),
        "most recent first: {message}"
    );
    // send_input says the same.
    let to_nobody = json!({"target": "00000000feedface", "message": "hi"});
    let (code, message) = c.err("send_input", to_nobody).await;
    assert_eq!(code, "unknown_agent");
    assert!(message.contains(&ids[17].0), "{message}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_on_an_agent_waiting_for_its_model_is_told_at_once() {
    let s = start(Vec::new()).await;
    let c = &s.c;
    let id = worker_waiting_for_its_model(&s, "single request").await;
    let called = Instant::now();
    let waited = c.wait(&[&id], 1_000).await;
    assert_eq!(waited["timed_out"], true);
    let progress = c.progress.lock().unwrap().clone();
    let at = c.progress_at.lock().unwrap().clone();
    assert_eq!(
        progress.len(),
        1,
        "one notification: the current activity, no timer ticks: {progress:?}"
    );
    assert_eq!(
        progress[0].message.as_deref(),
        Some(format!("worker {}: Waiting for mock-model (turn 1 of 5)", &id[..8]).as_str())
    );
    let after = at[0].duration_since(called);
    assert!(
        after < Duration::from_millis(100),
        "the first notification came {after:?} after the call"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_ends_while_others_run_is_a_notification() {
    let s = start(Vec::new()).await;
    let (mock, c) = (&s.mock, &s.c);
    let slow = worker_waiting_for_its_model(&s, "hang").await;
    mock.push([Step::text("quick").delayed(Duration::from_millis(300))]);
    let quick = c.spawn("claude-worker", "finish").await;
    let waited = c.wait(&[&slow, &quick], 3_000).await;
    assert_eq!(waited["timed_out"], true);
    assert_eq!(waited["agents"][1]["status"], "completed");
    let messages: Vec<String> = c
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.message.clone().unwrap())
        .collect();
    assert!(
        messages.contains(&format!("claude-worker {}: completed", &quick[..8])),
        "{messages:?}"
    );
    assert!(
        messages[0].starts_with(&format!("worker {}: Waiting", &slow[..8])),
        "the current activity of each running target comes first: {messages:?}"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_output_schemas_describe_every_record_and_name_the_new_fields() {
    let s = start(vec![FixtureAgent::named("caller").lines("max_turns: 1")]).await;
    let (mock, c) = (&s.mock, &s.c);
    let tools = c.tools().await;
    let schema_of = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let schema = Value::Object(tool.output_schema.clone().unwrap().as_ref().clone());
        (tool.description.clone().unwrap_or_default(), schema)
    };
    let (wait_description, wait_schema) = schema_of("wait_agent");
    for field in ["partial_result", "tools_used", "refused"] {
        assert!(
            wait_description.contains(field),
            "{field}: {wait_description}"
        );
    }
    let (_, spawn_schema) = schema_of("spawn_agent");
    let wait_check = jsonschema::validator_for(&wait_schema).unwrap();
    let spawn_check = jsonschema::validator_for(&spawn_schema).unwrap();

    mock.push([
        Step::text("plain"),
        Step::refusal("no"),
        Step::tool_call("fx__echo", json!({"text": "x"})).with_text("partial work"),
        Step::Hang,
    ]);
    let mut ids = Vec::new();
    for name in ["worker", "worker", "caller", "claude-worker"] {
        let spawned = c
            .ok("spawn_agent", json!({"name": name, "task": "Go."}))
            .await;
        assert!(spawn_check.is_valid(&spawned), "{spawned}");
        ids.push(spawned["agent_id"].as_str().unwrap().to_owned());
        if ids.len() < 4 {
            c.wait(&[ids.last().unwrap()], 30_000).await;
        }
    }
    let targets: Vec<&str> = ids.iter().map(String::as_str).collect();
    let all = c.wait(&targets, 0).await;
    let statuses = support::each_str(&all["agents"], "status");
    assert_eq!(
        statuses,
        ["completed", "completed", "failed", "running"],
        "{all}"
    );
    assert_eq!(all["agents"][1]["refused"], true);
    assert_eq!(all["agents"][2]["partial_result"], "partial work");
    let errors: Vec<String> = wait_check
        .iter_errors(&all)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{all}");
    s.close().await;
}
