//! The MCP tasks extension through the real binary (SPEC §4.4, `--mcp-tasks`), driven with
//! the `rmcp` client declaring the extension as interactive Claude Code does: `spawn_agent`
//! answered with a task, `tasks/get` from `working` to `completed` (a failed run with
//! `isError`), `tasks/cancel` and a stop by `send_input` to `cancelled`, the same agent
//! through `wait_agent` and `send_input`, on stdio (both protocol generations) and HTTP; and
//! what a client gets that does not declare it, or from a server without the flag.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, ErrorCode,
    GetTaskParams, UpdateTaskParams,
};
use serde_json::{Value, json};
use support::TestWorkspace;
use support::binary::{self, Connection, GENERATIONS, Generation};

/// The variable that turns the extension on, as `--mcp-tasks` does.
pub(super) const TASKS_ON: (&str, &str) = ("MCP_AGENTS_MCP_TASKS", "1");

/// The whole cancel, from the call to the answer (SPEC §4.2, §4.4: under 1 s).
const CANCEL_TAKES_LESS_THAN: Duration = Duration::from_secs(1);

/// `tools/call` once, however it is answered (a task or a result).
async fn call_once(c: &Connection, tool: &str, arguments: Value) -> CallToolResponse {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    c.client.call_tool_once(params).await.expect("tools/call")
}

/// Spawns `name` on `task` and expects a task; returns it.
pub(super) async fn spawn_task(c: &Connection, name: &str, task: &str) -> CreateTaskResult {
    match call_once(c, "spawn_agent", json!({"name": name, "task": task})).await {
        CallToolResponse::Task(created) => created,
        other => panic!("spawn_agent was not answered with a task: {other:?}"),
    }
}

/// `tasks/get` for `id`, as the JSON the server sent (fields flattened).
pub(super) async fn get(c: &Connection, id: &str) -> Value {
    let got = c.client.peer().get_task(GetTaskParams::new(id)).await;
    serde_json::to_value(got.expect("tasks/get")).unwrap()
}

/// Polls `tasks/get` for `id` until its status is no longer `working` (20 s at most).
pub(super) async fn until_ended(c: &Connection, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let task = get(c, id).await;
        if task["status"] != "working" {
            return task;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `mock` has received `count` requests (20 s at most).
async fn until_requested(mock: &mcp_agents::testkit::MockProvider, count: usize) {
    let started = Instant::now();
    while mock.requests().len() < count {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the run never asked"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The raw `wait_agent` answer for `id` right now, as JSON.
/// `wait_agent`'s answer for `id` now, without the server's spend: that goes on moving
/// after the run (SPEC §5.1), and a task's result is the run's end, kept as it was.
async fn wait_answer(c: &Connection, id: &str) -> Value {
    let result = c
        .call("wait_agent", json!({"targets": [id], "timeout_ms": 0}))
        .await;
    let mut answer = serde_json::to_value(result).unwrap();
    let structured = answer["structuredContent"].as_object_mut().unwrap();
    assert!(structured.remove("server_spend").is_some(), "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap();
    let (lines, json) = text.split_at(text.find("\n{").unwrap() + 1);
    let mut json: Value = serde_json::from_str(json).unwrap();
    json.as_object_mut().unwrap().remove("server_spend");
    answer["content"][0]["text"] = json!(format!("{lines}{json}"));
    answer
}

/// The JSON-RPC error code a failed request got.
pub(super) fn code(error: ServiceError) -> ErrorCode {
    match error {
        ServiceError::McpError(e) => e.code,
        other => panic!("not an MCP error: {other:?}"),
    }
}

/// The standard agents, served over stdio with the extension on, to a client of
/// `generation` that declares it.
async fn served(generation: Generation) -> (support::MockWorkspace, Connection) {
    let ws = TestWorkspace::new().standard_agents().written().await;
    let c = binary::stdio_declaring_tasks(ws.path(), generation, &[TASKS_ON]).await;
    (ws, c)
}

/// A spawned task's life: `working` with the agent's human line, then `completed` with
/// exactly what `wait_agent` on it returns; the agent stays an agent (a follow-up resumes
/// it), and the task keeps answering its first run's end.
async fn lifecycle(c: &Connection, mock: &mcp_agents::testkit::MockProvider, label: &str) {
    mock.push([Step::text("Fixed.").delayed(Duration::from_millis(600))]);
    let created = spawn_task(c, "worker", "Fix it.").await;
    let id = created.task.task_id.clone();
    assert_eq!(id.len(), 32, "{label}: the agent_id is the task id");
    let seed = serde_json::to_value(&created).unwrap();
    assert_eq!(seed["resultType"], "task", "{label}: {seed}");
    assert_eq!(seed["status"], "working", "{label}");
    assert_eq!(
        seed["ttlMs"],
        Value::Null,
        "{label}: a running agent is kept"
    );
    assert_eq!(seed["pollIntervalMs"], 1000, "{label}");
    let opening = format!("worker {}: running ", &id[..8]);
    assert!(
        seed["statusMessage"]
            .as_str()
            .unwrap()
            .starts_with(&opening),
        "{label}: {seed}"
    );
    let working = get(c, &id).await;
    assert_eq!(working["status"], "working", "{label}: {working}");
    assert_eq!(working["createdAt"], seed["createdAt"]);
    assert!(working.get("result").is_none());

    let done = until_ended(c, &id).await;
    assert_eq!(done["status"], "completed", "{label}: {done}");
    let wait = wait_answer(c, &id).await;
    assert_eq!(
        done["result"], wait,
        "{label}: the task's result is wait_agent's answer"
    );
    assert_eq!(done["result"]["isError"], false);
    assert_eq!(
        done["result"]["structuredContent"]["agents"][0]["result"],
        "Fixed."
    );
    let line = format!("worker {}: completed in ", &id[..8]);
    assert!(
        done["statusMessage"].as_str().unwrap().starts_with(&line),
        "{done}"
    );
    assert!(
        done["ttlMs"].is_u64(),
        "{label}: from its end on, kept by recency: {done}"
    );

    // The same agent through send_input and wait_agent: a follow-up resumes it; the task
    // is its first run and keeps answering that run's end.
    mock.push([Step::text("Also fixed the docs.")]);
    let resumed = c
        .ok(
            "send_input",
            json!({"target": id, "message": "The docs too."}),
        )
        .await;
    assert_eq!(resumed["status"], "running", "{label}");
    let second = c.wait_one(&id, 20_000).await;
    assert_eq!(
        second["result"], "Also fixed the docs.",
        "{label}: {second}"
    );
    let after = get(c, &id).await;
    assert_eq!(after["status"], "completed");
    assert_eq!(
        after["result"], done["result"],
        "{label}: still the first run's end"
    );
    assert_eq!(after["lastUpdatedAt"], done["lastUpdatedAt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declaring_client_gets_a_task_that_works_then_completes_with_the_wait_answer() {
    for generation in GENERATIONS {
        let (ws, c) = served(generation).await;
        lifecycle(&c, &ws.mock, &format!("stdio {generation:?}")).await;
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_work_over_http_with_the_flag() {
    let server = TestWorkspace::new()
        .standard_agents()
        .http(&["--mcp-tasks"])
        .await;
    for generation in GENERATIONS {
        let c = binary::connect_http_declaring_tasks(&server.url, generation).await;
        lifecycle(&c, &server.mock, &format!("http {generation:?}")).await;
        server.mock.push([Step::Hang]);
        let asked = server.mock.requests().len();
        let id = spawn_task(&c, "worker", "Hang.").await.task.task_id;
        // The hanging step must be taken by this run before it is cancelled: a cancel that
        // comes first leaves it queued for the next generation's run, which then hangs.
        until_requested(&server.mock, asked + 1).await;
        c.client
            .peer()
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .expect("tasks/cancel");
        assert_eq!(get(&c, &id).await["status"], "cancelled");
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_is_a_completed_task_with_is_error_and_its_partial_result() {
    let (ws, c) = served(Generation::Modern).await;
    ws.mock.push([
        Step::tool_call("nothing__here", json!({})).with_text("Half way there."),
        Step::openai_error(400, "invalid_request_error", None, "refused"),
    ]);
    let id = spawn_task(&c, "worker", "Try.").await.task.task_id;
    let done = until_ended(&c, &id).await;
    assert_eq!(
        done["status"], "completed",
        "a tool error, not a protocol one: {done}"
    );
    assert_eq!(done["result"]["isError"], true, "{done}");
    let record = &done["result"]["structuredContent"]["agents"][0];
    assert_eq!(record["status"], "failed");
    assert_eq!(record["error"]["code"], "provider_error", "{record}");
    assert_eq!(record["partial_result"], "Half way there.");
    // Apart from `isError`, the very answer wait_agent gives.
    let mut wait = wait_answer(&c, &id).await;
    wait["isError"] = json!(true);
    assert_eq!(done["result"], wait);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_stops_the_run_within_a_second_keeping_its_partial_work() {
    let ws = TestWorkspace::new()
        .marked("taskcancel")
        .fixture_agent("sleeper", &[])
        .written()
        .await;
    let c = binary::stdio_declaring_tasks(ws.path(), Generation::Modern, &[TASKS_ON]).await;
    ws.mock
        .push([Step::tool_call("fx__sleep", json!({"ms": 60_000})).with_text("Looking first.")]);
    let id = spawn_task(&c, "sleeper", "Look.").await.task.task_id;
    c.wait_for_phase(&id, "tool_call").await;

    let started = Instant::now();
    c.client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel");
    let took = started.elapsed();
    assert!(took < CANCEL_TAKES_LESS_THAN, "the cancel took {took:?}");
    eprintln!("tasks/cancel answered in {} ms", took.as_millis());
    let cancelled = get(&c, &id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let message = cancelled["statusMessage"].as_str().unwrap();
    assert!(
        message.contains("cancelled: stopped by the parent: its client cancelled the task")
            && message.ends_with("(its partial_result is kept)"),
        "{message}"
    );
    let record = c.wait_one(&id, 0).await;
    assert_eq!(record["error"]["code"], "cancelled");
    assert_eq!(record["partial_result"], "Looking first.");

    // The agent resumes like any stopped one; the task stays cancelled, and cancelling it
    // again does not touch the run that is not the task's.
    ws.mock.push([Step::Hang]);
    c.ok("send_input", json!({"target": id, "message": "Go on."}))
        .await;
    c.client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("a cancel of an ended task is acknowledged");
    assert_eq!(get(&c, &id).await["status"], "cancelled");
    assert_eq!(c.wait_one(&id, 0).await["status"], "running");
    c.ok("send_input", json!({"target": id, "stop": true}))
        .await;
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_by_send_input_cancels_the_task_too() {
    let (ws, c) = served(Generation::Legacy).await;
    ws.mock.push([Step::Hang]);
    let id = spawn_task(&c, "worker", "Hang.").await.task.task_id;
    let stopped = c
        .ok(
            "send_input",
            json!({"target": id, "stop": true, "message": "enough"}),
        )
        .await;
    assert_eq!(stopped["error"]["code"], "cancelled");
    let task = get(&c, &id).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    assert!(task.get("result").is_none());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tasks_and_answers_to_no_question_are_invalid_params() {
    let (ws, c) = served(Generation::Modern).await;
    let peer = c.client.peer();
    let unknown = "0123456789abcdef0123456789abcdef";
    let got = peer.get_task(GetTaskParams::new(unknown)).await;
    assert_eq!(code(got.unwrap_err()), ErrorCode::INVALID_PARAMS);
    let cancel = peer.cancel_task(CancelTaskParams::new(unknown)).await;
    assert_eq!(code(cancel.unwrap_err()), ErrorCode::INVALID_PARAMS);

    ws.mock.push([Step::Hang]);
    let id = spawn_task(&c, "worker", "Hang.").await.task.task_id;
    let answer = serde_json::from_value(json!({"q": {"action": "accept", "content": {}}}));
    let update = peer
        .update_task(UpdateTaskParams::new(id.clone(), answer.unwrap()))
        .await;
    assert_eq!(
        code(update.unwrap_err()),
        ErrorCode::INVALID_PARAMS,
        "SPEC §4.4: an answer to a question not pending is refused"
    );
    assert_eq!(get(&c, &id).await["status"], "working");
    c.ok("send_input", json!({"target": id, "stop": true}))
        .await;
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_or_the_declaration_spawn_answers_as_before() {
    // A server without the flag: a declaring client gets the plain answer, and no tasks.
    let ws = TestWorkspace::new().standard_agents().written().await;
    let c = binary::stdio_declaring_tasks(ws.path(), Generation::Modern, &[]).await;
    ws.mock.push([Step::Hang]);
    let plain = call_once(&c, "spawn_agent", json!({"name": "worker", "task": "Go."})).await;
    let CallToolResponse::Complete(plain) = plain else {
        panic!("a server without --mcp-tasks answered with a task: {plain:?}");
    };
    let id = plain.structured_content.unwrap()["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let got = c
        .client
        .peer()
        .get_task(GetTaskParams::new(id.clone()))
        .await;
    assert_eq!(code(got.unwrap_err()), ErrorCode::METHOD_NOT_FOUND);
    let info = c.client.peer_info().unwrap();
    assert!(!info.capabilities.supports_tasks());
    // The hanging step taken before the stop, or the next server's run would take it.
    until_requested(&ws.mock, 1).await;
    c.ok("send_input", json!({"target": id, "stop": true}))
        .await;
    c.close().await;

    // A server with the flag: a client that does not declare it gets the plain answer
    // (the usual `ok` checks hold), and `tasks/*` is refused as the extension says.
    let c = binary::stdio(ws.path(), Generation::Modern, &[TASKS_ON]).await;
    assert!(c.client.peer_info().unwrap().capabilities.supports_tasks());
    ws.mock.push([Step::text("Done.")]);
    let record = c.run_to_end("worker", "Go.").await;
    assert_eq!(record["result"], "Done.");
    let id = record["agent_id"].as_str().unwrap();
    let got = c.client.peer().get_task(GetTaskParams::new(id)).await;
    assert_eq!(
        code(got.unwrap_err()),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_spawn_is_the_same_error_answer_with_or_without_tasks() {
    let (_ws, c) = served(Generation::Modern).await;
    let refused = call_once(&c, "spawn_agent", json!({"name": "nobody", "task": "Go."})).await;
    let CallToolResponse::Complete(refused) = refused else {
        panic!("a refusal is no task: {refused:?}");
    };
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap()["error"]["code"],
        "unknown_agent"
    );
    c.close().await;
}
