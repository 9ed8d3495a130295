//! A question asked through a task (SPEC §4.4, §4.5), through the real binary with a client
//! that declares the tasks extension as interactive Claude Code does: the task turns
//! `input_required` with one elicitation request (a form with one string field, an `enum` of
//! the agent's options, the question as its message); `tasks/update` answers it (`accept`
//! with the value, or `decline`) and the task goes on to `completed`; the first answer wins
//! by either path (`send_input` or `tasks/update`), and an answer to anything not pending is
//! refused with -32602, leaving the question pending.

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use rmcp::model::{ErrorCode, UpdateTaskParams};
use serde_json::{Value, json};

use super::ask_parent::{QUESTION, asker, question_step};
use super::mcp_tasks::{TASKS_ON, code, get, spawn_task, until_ended};
use crate::support::binary::{self, Connection, GENERATIONS, Generation};
use crate::support::builders::{MockWorkspace, TestWorkspace};
use crate::support::children::call_outputs;

/// What the tool answers when the person declines (sessions/question.rs).
const DECLINED: &str = "The person declined to answer.";

/// An `asker` on Responses served over stdio with tasks on, to a declaring client.
async fn served(generation: Generation) -> (MockWorkspace, Connection) {
    let ws = TestWorkspace::new()
        .agent(".agents/agents/asker.md", |mock, _| {
            asker(mock, "responses", "")
        })
        .written()
        .await;
    let c = binary::stdio_declaring_tasks(ws.path(), generation, &[TASKS_ON]).await;
    (ws, c)
}

/// Polls `tasks/get` for `id` until it is `status` (20 s at most); returns the task.
async fn until_status(c: &Connection, id: &str, status: &str) -> Value {
    let began = Instant::now();
    loop {
        let task = get(c, id).await;
        if task["status"] == status {
            return task;
        }
        assert!(began.elapsed() < Duration::from_secs(20), "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `tasks/update` for `id` with `responses` (an `inputResponses` object).
async fn update(c: &Connection, id: &str, responses: Value) -> Result<(), rmcp::ServiceError> {
    let responses = serde_json::from_value(responses).expect("inputResponses");
    let params = UpdateTaskParams::new(id.to_owned(), responses);
    c.client.peer().update_task(params).await.map(|_| ())
}

/// The one elicitation request an `input_required` task holds, with its key.
fn the_request(task: &Value) -> (String, Value) {
    let requests = task["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "one request: {task}");
    let (key, request) = requests.iter().next().unwrap();
    (key.clone(), request.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_makes_the_task_input_required_and_tasks_update_answers_it() {
    for generation in GENERATIONS {
        let (ws, c) = served(generation).await;
        ws.mock.push([question_step(), Step::text("Fixed a.py.")]);
        let id = spawn_task(&c, "asker", "Fix the bug.").await.task.task_id;

        let task = until_status(&c, &id, "input_required").await;
        assert!(
            task["statusMessage"]
                .as_str()
                .unwrap()
                .ends_with(&format!("asks: {QUESTION}")),
            "{generation:?}: {task}"
        );
        let (key, request) = the_request(&task);
        assert_eq!(request["method"], "elicitation/create", "{request}");
        let params = &request["params"];
        assert_eq!(params["mode"], "form");
        assert_eq!(params["message"], QUESTION);
        let schema = &params["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["answer"]), "{schema}");
        let field = &schema["properties"]["answer"];
        assert_eq!(field["type"], "string", "{schema}");
        assert_eq!(
            field["enum"],
            json!(["a.py", "b.py"]),
            "the agent's options"
        );

        let answer = json!({key.as_str(): {"action": "accept", "content": {"answer": "a.py"}}});
        update(&c, &id, answer.clone()).await.expect("tasks/update");
        let done = until_ended(&c, &id).await;
        assert_eq!(done["status"], "completed", "{generation:?}: {done}");
        let record = &done["result"]["structuredContent"]["agents"][0];
        assert_eq!(record["result"], "Fixed a.py.", "{record}");
        assert_eq!(
            call_outputs(&ws.mock),
            ["a.py"],
            "the answer is the tool's result"
        );

        let again = update(&c, &id, answer).await.unwrap_err();
        assert_eq!(code(again), ErrorCode::INVALID_PARAMS, "no longer pending");
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_without_options_asks_for_free_text_and_a_decline_lets_the_agent_decide() {
    let (ws, c) = served(Generation::Modern).await;
    let plain = Step::tool_call("ask_parent", json!({"question": QUESTION}));
    ws.mock.push([plain, Step::text("I assumed a.py.")]);
    let id = spawn_task(&c, "asker", "Fix the bug.").await.task.task_id;

    let task = until_status(&c, &id, "input_required").await;
    let (key, request) = the_request(&task);
    let field = &request["params"]["requestedSchema"]["properties"]["answer"];
    assert_eq!(field["type"], "string", "{field}");
    assert!(
        field.get("enum").is_none(),
        "no options, free text: {field}"
    );

    // A response to another key, or two responses, are refused and leave the question.
    let wrong = json!({"question-99": {"action": "accept", "content": {"answer": "x"}}});
    let refused = update(&c, &id, wrong).await.unwrap_err();
    assert_eq!(code(refused), ErrorCode::INVALID_PARAMS);
    let empty = json!({key.as_str(): {"action": "accept", "content": {"answer": "  "}}});
    let refused = update(&c, &id, empty).await.unwrap_err();
    assert_eq!(code(refused), ErrorCode::INVALID_PARAMS, "an empty accept");
    assert_eq!(get(&c, &id).await["status"], "input_required");

    update(&c, &id, json!({key.as_str(): {"action": "decline"}}))
        .await
        .expect("a decline is an answer");
    let done = until_ended(&c, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let outputs = call_outputs(&ws.mock);
    assert!(outputs[0].starts_with(DECLINED), "{outputs:?}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_answer_wins_by_either_path() {
    let (ws, c) = served(Generation::Modern).await;
    ws.mock.push([
        question_step(),
        question_step(),
        Step::text("Fixed both.").delayed(Duration::from_millis(300)),
    ]);
    let id = spawn_task(&c, "asker", "Fix the bug.").await.task.task_id;

    // The first question: send_input answers it, then tasks/update finds nothing pending.
    let (first_key, _) = the_request(&until_status(&c, &id, "input_required").await);
    let answered = c
        .ok("send_input", json!({"target": id, "message": "b.py"}))
        .await;
    assert_eq!(answered["answered_question"], QUESTION, "{answered}");
    let late = json!({first_key.as_str(): {"action": "accept", "content": {"answer": "a.py"}}});
    let refused = update(&c, &id, late).await.unwrap_err();
    assert_eq!(code(refused), ErrorCode::INVALID_PARAMS, "already answered");

    // The second question has a key of its own; tasks/update answers it first, and the
    // question has left the record when the update returns.
    let task = until_status(&c, &id, "input_required").await;
    let (second_key, _) = the_request(&task);
    assert_ne!(second_key, first_key, "a new key for every question");
    let answer = json!({second_key.as_str(): {"action": "accept", "content": {"answer": "a.py"}}});
    update(&c, &id, answer.clone()).await.expect("tasks/update");
    let waited = c
        .ok("wait_agent", json!({"targets": [id], "timeout_ms": 0}))
        .await;
    assert!(waited["agents"][0].get("question").is_none(), "{waited}");
    let refused = update(&c, &id, answer).await.unwrap_err();
    assert_eq!(code(refused), ErrorCode::INVALID_PARAMS, "already answered");

    let done = until_ended(&c, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let bodies: Vec<String> = ws
        .mock
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        bodies[1].contains("b.py"),
        "the first answer: {}",
        bodies[1]
    );
    assert!(
        bodies[2].contains("a.py"),
        "the second answer: {}",
        bodies[2]
    );
    c.close().await;
}
