//! The MCP tasks extension on the wire, line by line over stdio (SPEC §4.4): what a client
//! speaking MCP 2026-07-28 as interactive Claude Code does (the extension declared in each
//! request's `_meta`) sends and gets back, and that a client that does not declare it gets
//! the same answers, byte for byte, from a server with `--mcp-tasks` as from one without.

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::TestWorkspace;
use support::binary;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The binary over stdio, spoken to one JSON-RPC line at a time.
struct Lines {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
}

impl Lines {
    /// Starts the binary on `workspace` with the test key and `env`.
    fn start(workspace: &Path, env: &[(&str, &str)]) -> Lines {
        let mut command = binary::server_command(workspace, env);
        let mut child = binary::spawn_with_stderr(&mut command, Stdio::piped(), Stdio::piped());
        drop(child.stderr.take());
        Lines {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            _child: child,
            next_id: 0,
        }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its answer line (notifications before it skipped).
    async fn request(&mut self, method: &str, params: Value) -> String {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
                .await
                .expect("an answer in time")
                .unwrap()
                .expect("an answer, not the end of stdout");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return line;
            }
        }
    }

    /// [`Self::request`], its answer parsed.
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        serde_json::from_str(&self.request(method, params).await).unwrap()
    }
}

/// The `_meta` a 2026-07-28 request carries; with `tasks`, declaring the extension.
fn meta(tasks: bool) -> Value {
    let capabilities = if tasks {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// `params` with `_meta` (a 2026-07-28 request).
fn with_meta(mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    params
}

/// An ISO 8601 date in UTC to the millisecond, as `createdAt` and `lastUpdatedAt` are.
fn is_iso(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.len() == 24 && text.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(text).is_ok()
}

/// Fails unless `task` is a `CreateTaskResult` for a new agent, field by field in the
/// order `rmcp` writes them.
fn assert_is_a_new_task(task: &Value) {
    let keys: Vec<&str> = task
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "resultType",
            "taskId",
            "status",
            "statusMessage",
            "createdAt",
            "lastUpdatedAt",
            "ttlMs",
            "pollIntervalMs"
        ],
        "{task}"
    );
    assert_eq!(task["resultType"], "task");
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttlMs"], Value::Null);
    assert_eq!(task["pollIntervalMs"], 1000);
    assert!(
        is_iso(&task["createdAt"]) && is_iso(&task["lastUpdatedAt"]),
        "{task}"
    );
}

/// Polls `tasks/get` for `id` (declaring the extension) until it is no longer `working`
/// (5 s at most); the last answer.
async fn until_ended(server: &mut Lines, id: &str) -> Value {
    for _ in 0..200 {
        let polled = server
            .ask("tasks/get", with_meta(json!({"taskId": id}), true))
            .await;
        if polled["result"]["status"] != "working" {
            return polled;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} still working after 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_declaring_the_extension_per_request_gets_a_task_and_polls_it() {
    let ws = TestWorkspace::new().standard_agents().written().await;
    let mut server = Lines::start(ws.path(), &[("MCP_AGENTS_MCP_TASKS", "1")]);
    let discovered = server
        .ask("server/discover", with_meta(json!({}), true))
        .await;
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"],
        json!({TASKS: {}}),
        "{discovered}"
    );

    ws.mock
        .push([Step::text("Done.").delayed(Duration::from_millis(500))]);
    let call = json!({"name": "spawn_agent", "arguments": {"name": "worker", "task": "Go."}});
    let created = server.ask("tools/call", with_meta(call, true)).await;
    let task = &created["result"];
    assert_is_a_new_task(task);
    let id = task["taskId"].as_str().unwrap().to_owned();

    // `tasks/get` must declare the extension too (rmcp checks, SPEC §4.4).
    let undeclared = server
        .ask("tasks/get", with_meta(json!({"taskId": id}), false))
        .await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");

    let polled = until_ended(&mut server, &id).await;
    let done = &polled["result"];
    assert_eq!(done["resultType"], "complete", "{polled}");
    assert_eq!(done["status"], "completed", "{polled}");
    assert_eq!(done["createdAt"], task["createdAt"]);
    let result = &done["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["isError"], false);
    let text = result["content"][0]["text"].as_str().unwrap();
    let line = format!("worker {}: completed in ", &id[..8]);
    assert!(
        text.starts_with(&line) && text.contains(" s: Done.\n{"),
        "{text}"
    );
    assert_eq!(
        result["structuredContent"]["summary"],
        done["statusMessage"]
    );

    let cancel = server
        .ask("tasks/cancel", with_meta(json!({"taskId": id}), true))
        .await;
    assert_eq!(
        cancel["result"],
        json!({"resultType": "complete"}),
        "{cancel}"
    );
}

/// A call script's answers, each after `_meta` (2026-07-28) or in a legacy session.
async fn transcript(
    ws: &Path,
    mock: &MockProvider,
    env: &[(&str, &str)],
    modern: bool,
) -> Vec<String> {
    mock.push([Step::text("Done.")]);
    mock.push([Step::text("More done.")]);
    let mut server = Lines::start(ws, env);
    let params = |p: Value| if modern { with_meta(p, false) } else { p };
    let mut answers = Vec::new();
    if modern {
        answers.push(server.request("server/discover", params(json!({}))).await);
    } else {
        let hello = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "codex", "version": "0.171.0"}});
        answers.push(server.request("initialize", hello).await);
        server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
    answers.push(server.request("tools/list", params(json!({}))).await);
    let call = |name: &str, arguments: Value| params(json!({"name": name, "arguments": arguments}));
    let spawned = server
        .request(
            "tools/call",
            call("spawn_agent", json!({"name": "worker", "task": "Go."})),
        )
        .await;
    let id =
        serde_json::from_str::<Value>(&spawned).unwrap()["result"]["structuredContent"]["agent_id"]
            .as_str()
            .unwrap()
            .to_owned();
    answers.push(spawned);
    let wait = call("wait_agent", json!({"targets": [id], "timeout_ms": 30_000}));
    answers.push(server.request("tools/call", wait.clone()).await);
    let more = call("send_input", json!({"target": id, "message": "More."}));
    answers.push(server.request("tools/call", more).await);
    answers.push(server.request("tools/call", wait).await);
    let stop = call("send_input", json!({"target": id, "stop": true}));
    answers.push(server.request("tools/call", stop).await);
    let unknown = call("wait_agent", json!({"targets": ["0123456789abcdef"]}));
    answers.push(server.request("tools/call", unknown).await);
    answers.iter().map(|a| mask(a, &id)).collect()
}

/// The fields of a record that count time.
const TIME_FIELDS: [&str; 3] = [
    "total_elapsed_ms",
    "activity_elapsed_ms",
    "operation_timeout_remaining_ms",
];

/// `answer` with what differs from run to run masked: the agent's id, the time fields (as
/// JSON, or as JSON inside the text block) and the seconds of the human lines
/// (`completed in 0.1 s`).
fn mask(answer: &str, id: &str) -> String {
    let text = answer.replace(id, "<id>").replace(&id[..8], "<id8>");
    mask_numbers(&text, |before, after| {
        let time_field = TIME_FIELDS.iter().any(|field| {
            before.ends_with(&format!("{field}\":")) || before.ends_with(&format!("{field}\\\":"))
        });
        time_field || (before.ends_with(' ') && after.starts_with(" s"))
    })
}

/// `text` with every number (digits and dots) for which `masked(text before, text after)`
/// holds replaced by `#`.
fn mask_numbers(text: &str, masked: impl Fn(&str, &str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = text[at..]
        .find(|c: char| c.is_ascii_digit())
        .map(|i| at + i)
    {
        let end = text[start..]
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .map_or(text.len(), |i| start + i);
        out.push_str(&text[at..start]);
        if masked(&text[..start], &text[end..]) {
            out.push('#');
        } else {
            out.push_str(&text[start..end]);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

#[test]
fn the_mask_hides_ids_and_times_only() {
    let id = "0123456789abcdef0123456789abcdef";
    let line = format!(
        "{{\"summary\":\"worker 01234567: completed in 0.2 s: 3 fixes\",\"agent_id\":\"{id}\",\
         \"turns\":2,\"total_elapsed_ms\":215,\"text\":\"x \\\"activity_elapsed_ms\\\":7\"}}"
    );
    assert_eq!(
        mask(&line, id),
        "{\"summary\":\"worker <id8>: completed in # s: 3 fixes\",\"agent_id\":\"<id>\",\
         \"turns\":2,\"total_elapsed_ms\":#,\"text\":\"x \\\"activity_elapsed_ms\\\":#\"}"
    );
}

/// The parsed `result` of an answer line.
fn result_of(line: &str) -> Value {
    serde_json::from_str::<Value>(line).unwrap()["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_declare_it_gets_the_same_answers_byte_for_byte() {
    let ws = TestWorkspace::new().standard_agents().written().await;
    for modern in [true, false] {
        let era = if modern { "2026-07-28" } else { "2025-11-25" };
        let without = transcript(ws.path(), &ws.mock, &[], modern).await;
        let with = transcript(
            ws.path(),
            &ws.mock,
            &[("MCP_AGENTS_MCP_TASKS", "1")],
            modern,
        )
        .await;
        assert_eq!(without.len(), with.len());
        // Every tool's answer, the same bytes.
        for (without, with) in without[2..].iter().zip(&with[2..]) {
            assert_eq!(without, with, "{era}");
        }
        // What the server says of itself: the extension, one step more in the instructions.
        let (mut plain, mut tasks) = (result_of(&without[0]), result_of(&with[0]));
        let extensions = tasks["capabilities"]
            .as_object_mut()
            .unwrap()
            .remove("extensions");
        assert_eq!(extensions, Some(json!({TASKS: {}})), "{era}");
        let plain_text = plain
            .as_object_mut()
            .unwrap()
            .remove("instructions")
            .unwrap();
        let tasks_text = tasks
            .as_object_mut()
            .unwrap()
            .remove("instructions")
            .unwrap();
        let added = tasks_text
            .as_str()
            .unwrap()
            .strip_prefix(plain_text.as_str().unwrap());
        assert!(
            added.is_some_and(|step| step
                .starts_with("\n8. If your client runs spawn_agent as a background task")),
            "{era}: {tasks_text}"
        );
        assert_eq!(plain, tasks, "{era}: nothing else differs");
        // The tools: spawn_agent's description says what a task brings; nothing else differs.
        let (mut plain, mut tasks) = (result_of(&without[1]), result_of(&with[1]));
        let plain_spawn = plain["tools"][0]["description"].take();
        let tasks_spawn = tasks["tools"][0]["description"].take();
        assert_eq!(plain, tasks, "{era}");
        let note = " When your client runs this call as a background task";
        assert!(!plain_spawn.as_str().unwrap().contains(note));
        let (head, tail) = tasks_spawn.as_str().unwrap().split_once(note).unwrap();
        assert!(plain_spawn.as_str().unwrap().starts_with(head), "{era}");
        assert!(tail.ends_with(plain_spawn.as_str().unwrap().strip_prefix(head).unwrap()));
    }
}
