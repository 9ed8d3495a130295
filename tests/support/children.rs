//! Workspaces whose agents use the fixture child server (`mcp-agents fixture-server`), and
//! a look at the process table to prove no child outlives its run.

use std::path::Path;

use mcp_agents::child_mcp::{ChildServers, SelfCommand};
use mcp_agents::testkit::{MockProvider, Step};
use mcp_agents::toolbox::EnvLookup;
use serde_json::json;

use super::binary::{self, BIN, KEY_VAR};
use super::builders::{ServerUnderTest, TestWorkspace};

/// A canonical agent named `name` at the mock's Responses endpoint with `servers` (YAML for
/// `mcp_servers`, indented by four spaces) and `extra` frontmatter lines.
pub fn agent(mock: &MockProvider, name: &str, servers: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Uses child tools.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n{extra}\nmcp_servers:\n{servers}\n---\n\
         Use your tools.\n",
        mock.responses_base_url()
    )
}

/// [`agent`] on the mock's Messages endpoint.
pub fn messages_agent(mock: &MockProvider, name: &str, servers: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Uses child tools.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: anthropic-messages\n{extra}\nmcp_servers:\n{servers}\n---\n\
         Use your tools.\n",
        mock.messages_base_url()
    )
}

/// The real child layer in this process, with the package's binary as "this program" (the
/// test harness is not it): the shims stdio children run under and the built-in servers.
pub fn child_servers(env: EnvLookup) -> ChildServers {
    ChildServers::new(env).with_self_command(SelfCommand::new(BIN, &[]))
}

/// [`agent`] on the mock's endpoint for `wire` (a `wire_api` value).
pub fn agent_on(wire: &str, mock: &MockProvider, name: &str, servers: &str, extra: &str) -> String {
    match wire {
        "responses" => agent(mock, name, servers, extra),
        "anthropic-messages" => messages_agent(mock, name, servers, extra),
        _ => agent(mock, name, servers, extra)
            .replace(&mock.responses_base_url(), &mock.chat_base_url())
            .replace("wire_api: responses", &format!("wire_api: {wire}")),
    }
}

/// The tool names a fixture started with `--call-log PATH` received, one per call.
pub fn calls_logged(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// YAML for a stdio fixture child named `name`, marked with `marker` in its environment.
pub fn stdio_child(name: &str, args: &[&str], marker: &str, extra: &str) -> String {
    let mut all = vec!["fixture-server"];
    all.extend_from_slice(args);
    format!(
        "    {name}:\n      command: {BIN}\n      args: {}\n      env: {{ MCP_AGENTS_TEST_MARKER: \"{marker}\" }}\n{extra}",
        serde_json::to_string(&all).unwrap()
    )
}

/// YAML for an HTTP child named `name` at `url`.
pub fn http_child(name: &str, url: &str) -> String {
    format!("    {name}:\n      url: {url}\n")
}

pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Pids of live processes whose environment contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let needle = format!("MCP_AGENTS_TEST_MARKER={marker}");
    live_processes(|pid| {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        environ.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
    })
}

/// Pids of live (not zombie) processes for which `wanted` holds.
pub fn live_processes(wanted: impl Fn(u32) -> bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true);
            !zombie && wanted(*pid)
        })
        .collect()
}

/// Waits up to `secs` for every process marked `marker` to be gone.
pub async fn assert_no_process_left(marker: &str, secs: u64) {
    for _ in 0..(secs * 20) {
        if processes_with(marker).is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "child processes still running: {:?}",
        processes_with(marker)
    );
}

/// Starts an HTTP fixture (optionally with more args); returns the process and its URL.
pub async fn http_fixture(args: &[&str]) -> (tokio::process::Child, String) {
    use std::process::Stdio;
    use tokio::io::AsyncBufReadExt;
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["fixture-server", "--http", "127.0.0.1:0"])
        .args(args);
    let mut child = binary::spawn_with_stderr(&mut command, Stdio::null(), Stdio::null());
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the fixture prints its URL");
        if let Some(url) = line.strip_prefix("fixture listening on ") {
            break url.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// A marker unique to this moment of this process, starting with `tag`, for the processes
/// of one test.
pub fn tagged_marker(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    format!("{tag}{}", nanos ^ u64::from(std::process::id()))
}

/// The names of the tools the provider was offered in request `n`.
pub fn offered_tools(mock: &MockProvider, n: usize) -> Vec<String> {
    mock.requests()[n].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The tool results of the last request (Responses `function_call_output` texts, Chat
/// Completions `tool` messages).
pub fn call_outputs(mock: &MockProvider) -> Vec<String> {
    super::run_kit::function_outputs(&mock.requests().last().unwrap().body)
}

/// Agent `name`, whose fixture child starts a grandchild of `kind` (`--grandchild KIND`:
/// `group`, `session` or `daemon`), runs one call to its end; the server still serves, and
/// nothing the run started is left.
pub async fn assert_grandchild_ends_with_its_run(tag: &str, name: &str, kind: &str) {
    let s = TestWorkspace::new()
        .marked(tag)
        .fixture_agent(name, &["--grandchild", kind])
        .stdio()
        .await;
    s.mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("done"),
    ]);
    let id = s.spawn(name, "t").await;
    assert_eq!(s.wait_one(&id, 30_000).await["result"], "done");
    assert_no_process_left(&s.marker, 6).await;
    s.close().await;
}

/// A server with two agents, `group` and `second`, each of whose fixture child starts a
/// grandchild of its kind (`--grandchild KIND`) and is then in a 60 s call.
pub async fn two_grandchildren_mid_call(tag: &str, second: &str) -> ServerUnderTest {
    let s = TestWorkspace::new()
        .marked(tag)
        .fixture_agent("group", &["--grandchild", "group"])
        .fixture_agent(second, &["--grandchild", second])
        .stdio()
        .await;
    s.mock
        .push(vec![Step::tool_call("fx__sleep", json!({"ms": 60_000})); 2]);
    let a = s.spawn("group", "t").await;
    let b = s.spawn(second, "t").await;
    s.wait_for_phase(&a, "tool_call").await;
    s.wait_for_phase(&b, "tool_call").await;
    s
}
