//! Child servers written with other SDKs (installed by `scripts/install-interop`): the
//! Python SDK's `mcp-server-time` and a small `mcp` 2.x server, over stdio and HTTP, must
//! work; the npm `server-everything`, which speaks only the older protocol, must be refused
//! with a clear `child_mcp_startup_error`; docs/agents.md's agent that changes files through
//! PyPI's `filesystem-mcp` runs as written and changes the file.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::binary::{self, Generation};
use support::children::{self, agent};
use support::interop;
use support::run_kit::KEY;

fn output(mock: &MockProvider) -> String {
    let input = mock.requests().last().unwrap().body["input"].clone();
    input
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().unwrap().to_owned())
        .unwrap()
}

async fn run(c: &binary::Connection, name: &str) -> Value {
    let id = c.spawn(name, "Use the tool.").await;
    c.wait(&[&id], 60_000).await["agents"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_servers_work_over_stdio_and_http() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut http_server = tokio::process::Command::new(interop::python())
        .arg(interop::script("py_server.py"))
        .args(["--http", &port.to_string()])
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ws = tempfile::tempdir().unwrap();
    let time = format!(
        "    time:\n      command: {}\n      args: [--local-timezone, Etc/UTC]\n",
        interop::venv_bin("mcp-server-time").display()
    );
    let py_stdio = format!(
        "    py:\n      command: {}\n      args: [{}]\n",
        interop::python().display(),
        interop::script("py_server.py").display()
    );
    children::write(
        ws.path(),
        ".agents/agents/time.md",
        &agent(&mock, "timer", &time, "sandbox: read-only"),
    );
    children::write(
        ws.path(),
        ".agents/agents/py.md",
        &agent(&mock, "py-stdio", &py_stdio, ""),
    );
    children::write(
        ws.path(),
        ".agents/agents/pyhttp.md",
        &agent(&mock, "py-http", &children::http_child("py", &url), ""),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;

    mock.push([
        Step::tool_call("time__get_current_time", json!({"timezone": "Etc/UTC"})),
        Step::text("it is now"),
    ]);
    let record = run(&c, "timer").await;
    assert_eq!(record["status"], "completed", "{record}");
    let time: Value = serde_json::from_str(&output(&mock)).expect("JSON time");
    assert_eq!(time["timezone"], "Etc/UTC");
    let first = mock.requests()[0].body.clone();
    let offered = support::each_str(&first["tools"], "name");
    assert_eq!(
        offered,
        ["time__convert_time", "time__get_current_time"],
        "both are read-only (tools are sent sorted by name)"
    );

    for name in ["py-stdio", "py-http"] {
        mock.push([
            Step::tool_call("py__shout", json!({"text": "quiet"})),
            Step::text("shouted"),
        ]);
        let record = run(&c, name).await;
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(output(&mock), "QUIET", "{name}");
    }
    assert!(
        mock.requests()
            .iter()
            .all(|r| r.outcome == RecordedOutcome::Scripted)
    );
    c.close().await;
    let _ = http_server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_everything_server_is_refused_with_what_it_offers() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    let everything = format!(
        "    everything:\n      command: {}\n      args: [stdio]\n",
        interop::node_bin("mcp-server-everything").display()
    );
    children::write(
        ws.path(),
        ".agents/agents/e.md",
        &agent(&mock, "everything", &everything, ""),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let record = run(&c, "everything").await;
    let message = binary::failed_with(&record, "child_mcp_startup_error");
    assert!(
        message.starts_with("MCP server everything does not support MCP 2026-07-28: server/discover failed (-32601 Method not found); it offers only 2025-11-25, through initialize"),
        "{message}"
    );
    assert!(mock.requests().is_empty());
    c.close().await;
}

/// The definition docs/agents.md shows under "Through a child server that writes files": the
/// first Markdown block of that section.
fn documented_fixer() -> String {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md"),
    )
    .unwrap();
    let section = doc
        .split("### Through a child server that writes files")
        .nth(1)
        .expect("docs/agents.md has the section");
    let block = section
        .split("```markdown\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section shows a definition");
    block.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_agent_changes_a_file_through_filesystem_mcp() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    children::write(ws.path(), "src/lib.rs", "pub fn answer() -> u32 { 41 }\n");
    children::write(ws.path(), ".agents/agents/fixer.md", &documented_fixer());
    // As the doc says: the command found on the server's PATH.
    let path = format!(
        "{}:{}",
        interop::venv_bin("filesystem-mcp")
            .parent()
            .unwrap()
            .display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let messages = mock.messages_base_url();
    let c = binary::stdio(
        ws.path(),
        Generation::Modern,
        &[
            ("PATH", &path),
            ("ANTHROPIC_BASE_URL", &messages),
            ("ANTHROPIC_API_KEY", KEY),
        ],
    )
    .await;
    mock.push([
        Step::tool_call("workspace__read", json!({"path": "src/lib.rs"})),
        Step::tool_call(
            "files__write_file",
            json!({"path": "src/lib.rs", "content": "pub fn answer() -> u32 { 42 }\n"}),
        ),
        Step::text("Changed 41 to 42 in src/lib.rs."),
    ]);
    let id = c
        .spawn("fixer", "The answer test fails: it wants 42.")
        .await;
    let record = c.wait(&[&id], 60_000).await["agents"][0].clone();
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 { 42 }\n",
        "the child changed the file"
    );
    assert_eq!(
        record["tools_used"],
        json!([{"tool": "workspace__read", "calls": 1, "errors": 0},
               {"tool": "files__write_file", "calls": 1, "errors": 0}])
    );
    let requests = mock.requests();
    let offered = support::each_str(&requests[0].body["tools"], "name");
    for tool in ["files__write_file", "files__read_file", "workspace__grep"] {
        assert!(offered.contains(&tool), "{tool} in {offered:?}");
    }
    // No mark: the agent asks for nothing it does not get.
    let spawn = c
        .tools()
        .await
        .into_iter()
        .find(|t| t.name == "spawn_agent")
        .unwrap();
    let description = spawn.description.unwrap();
    assert!(
        description
            .lines()
            .any(|l| l == "- fixer: Fix a failing test, editing the files it needs to"),
        "{description}"
    );
    c.close().await;
}
