//! The real binary as an MCP server, driven with the `rmcp` client over stdio and HTTP in
//! both protocol generations (2026-07-28 `server/discover`, 2025-11-25 `initialize`):
//! the three tools, their schemas, a spawn → wait round trip, and a clean stdout.

use crate::support;

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, GENERATIONS, Generation};
use support::{HttpServerUnderTest, ServerUnderTest, TestWorkspace};

async fn round_trip(connection: &binary::Connection, mock: &MockProvider, label: &str) {
    let tools = connection.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["spawn_agent", "send_input", "wait_agent"],
        "{label}"
    );
    let spawn = &tools[0];
    assert_eq!(
        spawn.input_schema["properties"]["name"]["enum"],
        json!(["chat-worker", "claude-worker", "skilled", "worker"]),
        "{label}"
    );
    let description = spawn.description.as_deref().unwrap();
    assert!(
        description.contains("- worker: Does test work over responses."),
        "{description}"
    );
    assert_eq!(
        tools[2].annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert!(tools[2].description.as_deref().unwrap().contains("60 s"));
    for tool in &tools {
        // Both generations get the output schemas, whose root is an object with the success
        // shape or the error shape.
        let schema = tool.output_schema.as_ref().unwrap_or_else(|| {
            panic!("{label}: {} has no output schema", tool.name);
        });
        assert_eq!(schema.get("type"), Some(&json!("object")), "{label}");
        assert_eq!(schema["anyOf"].as_array().map(Vec::len), Some(2), "{label}");
    }

    mock.push([Step::text(&format!("hello from {label}"))]);
    let id = connection.spawn("worker", "Say hello.").await;
    assert_eq!(id.len(), 32, "128-bit hex id");
    let result = connection.wait(&[&id], 20_000).await;
    assert_eq!(result["timed_out"], false, "{label}: {result}");
    let agent = &result["agents"][0];
    assert_eq!(agent["status"], "completed", "{label}: {agent}");
    assert_eq!(agent["result"], format!("hello from {label}"));
    assert_eq!(agent["name"], "worker");
    assert_eq!(agent["turns"], 1);
    let mut usage = agent["usage"].clone();
    let note = usage["cost_note"].take();
    assert!(
        note.as_str()
            .unwrap()
            .contains("no price is known for the model `mock-model`"),
        "{label}: {agent}"
    );
    usage.as_object_mut().unwrap().remove("cost_note");
    assert_eq!(
        usage,
        json!({"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 0,
               "cache_write_tokens": 0, "tool_calls": 0})
    );
    assert!(agent.get("activity").is_none(), "no activity once finished");
    let again = connection.wait(&[&id], 0).await;
    assert_eq!(
        again["agents"][0]["result"], agent["result"],
        "results are not consumed"
    );
    assert_eq!(
        again["agents"][0]["total_elapsed_ms"], agent["total_elapsed_ms"],
        "elapsed stops"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_both_generations() {
    let ws = TestWorkspace::new().standard_agents().written().await;
    for generation in GENERATIONS {
        let connection = binary::stdio(ws.path(), generation, &[]).await;
        let info = connection.client.peer_info().expect("server info");
        let server = info.server_info.as_ref().expect("serverInfo");
        assert_eq!(server.name, "mcp-agents");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
        let expected = match generation {
            Generation::Modern => "2026-07-28",
            Generation::Legacy => "2025-11-25",
        };
        assert_eq!(info.protocol_version.as_str(), expected);
        let instructions = info.instructions.as_deref().unwrap();
        assert!(instructions.contains("spawn_agent"));
        // Issue 16: a .claude/agents file is also Claude Code's own subagent; the parent
        // model is told when to prefer which.
        assert!(
            instructions.contains("your client's own subagents (the same .claude/agents file)")
                && instructions.contains("use your client's own subagent tool when"),
            "{instructions}"
        );
        round_trip(&connection, &ws.mock, &format!("stdio {generation:?}")).await;
        connection.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_both_generations() {
    let server = HttpServerUnderTest::start().await;
    for generation in GENERATIONS {
        let connection = server.connect(generation, None).await;
        round_trip(&connection, &server.mock, &format!("http {generation:?}")).await;
        connection.close().await;
    }
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_catalog_offers_no_tools() {
    let empty = tempfile::tempdir().unwrap();
    for generation in GENERATIONS {
        let connection = binary::stdio(empty.path(), generation, &[]).await;
        assert!(connection.tools().await.is_empty());
        connection.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_protocol_error() {
    let s = ServerUnderTest::stdio().await;
    let params = rmcp::model::CallToolRequestParams::new("close_agent");
    let err = s.client.call_tool(params).await.unwrap_err();
    assert!(err.to_string().contains("tool not found"), "{err}");
    s.close().await;
}

/// The binary on a workspace with one valid Claude agent (`ok`) and `extra` files in
/// `.claude/agents`, its stdio piped for raw JSON-RPC lines.
fn raw_server(extra: &[(&str, &str)]) -> (tempfile::TempDir, std::process::Child) {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let ok = "---\nname: ok\ndescription: d\nmodel: sonnet\n---\nBody.\n";
    for (file, text) in [("ok.md", ok)].iter().chain(extra) {
        std::fs::write(agents.join(file), text).unwrap();
    }
    let child = Command::new(binary::BIN)
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (ws, child)
}

/// The per-request `_meta` of a 2026-07-28 client.
fn raw_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// Raw JSON-RPC lines, as a minimal client would send them.
#[test]
fn stdout_carries_only_protocol_messages_and_warnings_go_to_stderr() {
    let (_ws, mut child) = raw_server(&[("bad.md", "no frontmatter")]);
    let meta = raw_meta();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        // A notification before the lifecycle is chosen must not end the session.
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = stdout.lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["id"], 1);
    assert!(
        first["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    let second: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 2);
    assert_eq!(second["result"]["tools"].as_array().unwrap().len(), 3);
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "stdin EOF ends the server cleanly");
    assert!(lines.next().is_none(), "nothing else on stdout");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("rejected: .claude/agents/bad.md: has no YAML frontmatter"),
        "{stderr}"
    );
}

/// SPEC §4: arguments that are not an object are `invalid_input`, not a JSON-RPC error,
/// although `rmcp` types them as an object (the transports mark them first).
#[test]
fn arguments_that_are_not_an_object_are_invalid_input_over_stdio() {
    let (_ws, mut child) = raw_server(&[]);
    let meta = raw_meta();
    let mut stdin = child.stdin.take().unwrap();
    let kinds = [
        (json!([]), "an array"),
        (json!("x"), "a string"),
        (json!(7), "a number"),
    ];
    for (i, (arguments, _)) in kinds.iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                          "params": {"_meta": meta, "name": "wait_agent", "arguments": arguments}});
        writeln!(stdin, "{call}").unwrap();
    }
    drop(stdin);
    // Calls are served concurrently: the answers come in any order.
    let mut answers: Vec<Value> = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers.len(), kinds.len());
    for ((_, kind), answer) in kinds.iter().zip(&answers) {
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], "invalid_input", "{answer}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("`arguments` must be a JSON object"),
            "{message}"
        );
        assert!(message.contains(kind), "{message}");
    }
    assert!(child.wait().unwrap().success());
}

/// A signal ends the stdio server although its client keeps stdin open and quiet (the
/// blocking read of stdin once kept the process alive until the next line).
#[test]
fn a_signal_ends_the_stdio_server_while_stdin_stays_open() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (_ws, mut child) = raw_server(&[]);
        let mut stdin = child.stdin.take().unwrap();
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                              "params": {"_meta": raw_meta()}});
        writeln!(stdin, "{discover}").unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], 1, "serving");
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(child.id() as i32, signal) };
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(8),
                "still running after signal {signal}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(status.success(), "{status:?}");
        drop(stdin);
    }
}
