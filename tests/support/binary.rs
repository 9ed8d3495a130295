//! Driving the real `mcp-agents` binary the way Claude Code or Codex would: as a child
//! process over stdio, or over streamable HTTP, with the `rmcp` client, in either protocol
//! generation.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_agents::testkit::MockProvider;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, Implementation,
    InitializeRequestParams, ProgressNotificationParam, ProtocolVersion, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::run_kit::KEY;

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-agents");

/// The variable the test agents read their key from.
pub const KEY_VAR: &str = "MCP_AGENTS_TEST_KEY";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// 2026-07-28: `server/discover`, per-request `_meta`.
    Modern,
    /// 2025-11-25: `initialize`.
    Legacy,
}

pub const GENERATIONS: [Generation; 2] = [Generation::Modern, Generation::Legacy];

fn lifecycle(generation: Generation) -> ClientLifecycleMode {
    match generation {
        Generation::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Generation::Legacy => ClientLifecycleMode::Initialize,
    }
}

/// A client that records progress notifications.
#[derive(Clone, Default)]
pub struct TestClient {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// When each of `progress` arrived.
    pub progress_at: Arc<Mutex<Vec<std::time::Instant>>>,
    generation: Option<Generation>,
    /// The name it reports (`clientInfo`, or the request `_meta` under 2026-07-28).
    name: Option<&'static str>,
    /// It declares the MCP tasks extension (in every request's `_meta` under 2026-07-28, in
    /// `initialize` before), as interactive Claude Code does.
    tasks: bool,
}

/// The name the test client reports unless told otherwise: no client the server knows.
pub const TEST_CLIENT_NAME: &str = "mcp-agents-tests";

impl ClientHandler for TestClient {
    fn get_info(&self) -> InitializeRequestParams {
        let capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        let mut info = InitializeRequestParams::new(
            capabilities,
            Implementation::new(self.name.unwrap_or(TEST_CLIENT_NAME), "1.0.0"),
        );
        if self.generation == Some(Generation::Legacy) {
            info.protocol_version = ProtocolVersion::V_2025_11_25;
        }
        info
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        // Kept in the order the server sent them (`progress` counts up within a call): the
        // client may handle two notifications that arrive together on different tasks.
        let arrived = std::time::Instant::now();
        let mut progress = self.progress.lock().unwrap();
        let mut at = progress.len();
        while at > 0
            && progress[at - 1].progress_token == params.progress_token
            && progress[at - 1].progress > params.progress
        {
            at -= 1;
        }
        progress.insert(at, params);
        self.progress_at.lock().unwrap().insert(at, arrived);
    }
}

/// A connected client and what it needs to stay alive.
pub struct Connection {
    pub client: RunningService<RoleClient, TestClient>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub progress_at: Arc<Mutex<Vec<std::time::Instant>>>,
    /// The HTTP server process (stdio children belong to the transport).
    pub server: Option<tokio::process::Child>,
    pub pid: Option<u32>,
}

/// How the binary is started over stdio: the program, the variables taken out of its
/// environment, where its stderr goes.
struct Launch<'a> {
    program: &'a Path,
    removed: &'a [&'a str],
    stderr: Stdio,
}

impl Default for Launch<'_> {
    fn default() -> Self {
        Launch {
            program: Path::new(BIN),
            removed: &[],
            stderr: Stdio::inherit(),
        }
    }
}

/// Starts the binary on `workspace` over stdio.
pub async fn stdio(
    workspace: &Path,
    generation: Generation,
    extra_env: &[(&str, &str)],
) -> Connection {
    stdio_env(workspace, generation, extra_env, &[]).await
}

/// [`stdio`], with the variables `removed` taken out of the server's environment (a
/// provider key of the machine running the tests, say).
pub async fn stdio_env(
    workspace: &Path,
    generation: Generation,
    extra_env: &[(&str, &str)],
    removed: &[&str],
) -> Connection {
    let launch = Launch {
        removed,
        ..Launch::default()
    };
    launch_stdio(launch, workspace, generation, extra_env)
        .await
        .0
}

/// [`stdio`] with the server's stderr going to `stderr`; a piped stderr is returned, for
/// the test to read or (a client that ignores it) to hold unread.
pub async fn stdio_with_stderr(
    workspace: &Path,
    generation: Generation,
    extra_env: &[(&str, &str)],
    stderr: Stdio,
) -> (Connection, Option<tokio::process::ChildStderr>) {
    let launch = Launch {
        stderr,
        ..Launch::default()
    };
    launch_stdio(launch, workspace, generation, extra_env).await
}

/// [`stdio`] with `program` as the server: a copy of the binary elsewhere.
pub async fn stdio_of(program: &Path, workspace: &Path, generation: Generation) -> Connection {
    let launch = Launch {
        program,
        ..Launch::default()
    };
    launch_stdio(launch, workspace, generation, &[]).await.0
}

async fn launch_stdio(
    launch: Launch<'_>,
    workspace: &Path,
    generation: Generation,
    extra_env: &[(&str, &str)],
) -> (Connection, Option<tokio::process::ChildStderr>) {
    let mut command = tokio::process::Command::new(launch.program);
    command
        .arg(workspace)
        .env(KEY_VAR, KEY)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        // The user's default logging (our warnings, rmcp's own lines off), as a client that
        // starts the server sees it.
        .env_remove("RUST_LOG");
    for var in launch.removed {
        command.env_remove(var);
    }
    for (k, v) in extra_env {
        command.env(k, v);
    }
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(launch.stderr)
        .spawn()
        .expect("start mcp-agents");
    let pid = transport.id();
    (open_session(transport, generation, pid, None).await, stderr)
}

/// Starts the binary on `workspace` over stdio, as a client that names itself `name`.
pub async fn stdio_as(workspace: &Path, generation: Generation, name: &'static str) -> Connection {
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg(workspace)
        .env(KEY_VAR, KEY)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .env_remove("RUST_LOG");
    let transport = TokioChildProcess::new(command).expect("start mcp-agents");
    let pid = transport.id();
    open_session(transport, generation, pid, Some(name)).await
}

/// Starts the binary on `workspace` over stdio, with `extra_env`, as a client that declares
/// the MCP tasks extension.
pub async fn stdio_declaring_tasks(
    workspace: &Path,
    generation: Generation,
    extra_env: &[(&str, &str)],
) -> Connection {
    let command = server_command(workspace, extra_env);
    let transport = TokioChildProcess::new(command).expect("start mcp-agents");
    let pid = transport.id();
    let handler = TestClient {
        tasks: true,
        ..TestClient::default()
    };
    open_session_with(transport, generation, pid, handler).await
}

/// The command that serves `workspace` over stdio: the test key set, the machine's default
/// model, tasks setting and `RUST_LOG` removed, then `extra_env` set.
pub fn server_command(workspace: &Path, extra_env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg(workspace)
        .env(KEY_VAR, KEY)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .env_remove("MCP_AGENTS_MCP_TASKS")
        .env_remove("RUST_LOG")
        .envs(extra_env.iter().copied());
    command
}

/// Connects to the HTTP server at `url` as a client that declares the MCP tasks extension.
pub async fn connect_http_declaring_tasks(url: &str, generation: Generation) -> Connection {
    mcp_agents::net::install_tls();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let handler = TestClient {
        tasks: true,
        ..TestClient::default()
    };
    open_session_with(transport, generation, None, handler).await
}

/// Connects to the HTTP server at `url` as a client that names itself `name`.
pub async fn connect_http_as(url: &str, generation: Generation, name: &'static str) -> Connection {
    mcp_agents::net::install_tls();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    open_session(transport, generation, None, Some(name)).await
}

/// Starts an MCP session of `generation` over `transport`, within 20 s, as a client named
/// `name` (else [`TEST_CLIENT_NAME`]).
async fn open_session<T, E, A>(
    transport: T,
    generation: Generation,
    pid: Option<u32>,
    name: Option<&'static str>,
) -> Connection
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let handler = TestClient {
        name,
        ..TestClient::default()
    };
    open_session_with(transport, generation, pid, handler).await
}

/// [`open_session`] with `handler` as the client.
async fn open_session_with<T, E, A>(
    transport: T,
    generation: Generation,
    pid: Option<u32>,
    mut handler: TestClient,
) -> Connection
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    handler.generation = Some(generation);
    let progress = handler.progress.clone();
    let progress_at = handler.progress_at.clone();
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        handler.serve_with_lifecycle(transport, lifecycle(generation)),
    )
    .await
    .expect("the server answers in time")
    .expect("the session starts");
    Connection {
        client,
        progress,
        progress_at,
        server: None,
        pid,
    }
}

/// Starts the HTTP server; returns the process and its `/mcp` URL, or the error it printed.
pub async fn start_http_server(
    workspace: &Path,
    extra_args: &[&str],
    extra_env: &[(&str, &str)],
) -> Result<(tokio::process::Child, String), String> {
    let mut command = tokio::process::Command::new(BIN);
    command.arg(workspace);
    if !extra_args.contains(&"--http") {
        command.args(["--http", "127.0.0.1:0"]);
    }
    command
        .args(extra_args)
        .env(KEY_VAR, KEY)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .envs(extra_env.iter().copied());
    let mut child = spawn_with_stderr(&mut command, Stdio::null(), Stdio::null());
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("mcp-agents: serving MCP at ") {
                return Some(url.to_owned());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        None
    })
    .await
    .ok()
    .flatten();
    match found {
        Some(url) => {
            // Keep draining stderr so the server never blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            Ok((child, url))
        }
        None => {
            let _ = child.wait().await;
            Err(seen)
        }
    }
}

pub async fn connect_http(url: &str, generation: Generation, token: Option<&str>) -> Connection {
    mcp_agents::net::install_tls(); // installs the TLS provider reqwest needs
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    open_session(transport, generation, None, None).await
}

impl Connection {
    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let params = CallToolRequestParams::new(tool.to_owned())
            .with_arguments(arguments.as_object().cloned().unwrap_or_default());
        self.client.call_tool(params).await.expect("tools/call")
    }

    /// Calls and expects success; returns `structuredContent`, checking the text copy: the
    /// JSON alone, or for `wait_agent` one human line per agent (`<name> <id>: <status>…`)
    /// and then the JSON (SPEC §4.3); and that the JSON opens with `summary` (for
    /// `wait_agent`, those lines).
    pub async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        assert_ne!(result.is_error, Some(true), "{tool} failed: {structured}");
        let text = result.content[0]
            .as_text()
            .expect("a text block")
            .text
            .clone();
        let (lines, json) = split_wait_text(&text);
        assert_eq!(serde_json::from_str::<Value>(json).unwrap(), structured);
        // Every answer opens with its `summary` (SPEC §4.3): what a client that shows the
        // first line of an answer shows.
        let first = structured.as_object().and_then(|o| o.keys().next());
        assert_eq!(first.map(String::as_str), Some("summary"), "{structured}");
        if tool == "wait_agent" {
            assert_eq!(
                structured["summary"],
                lines.join("\n"),
                "the text's lines: {text}"
            );
            let agents = structured["agents"].as_array().unwrap();
            assert_eq!(lines.len(), agents.len(), "one line per agent: {text}");
            for (line, agent) in lines.iter().zip(agents) {
                let id = agent["agent_id"].as_str().unwrap();
                let status = agent["status"].as_str().unwrap();
                let who = format!("{} {}", agent["name"].as_str().unwrap(), &id[..8]);
                // An agent waiting for an answer shows its question (SPEC §4.5).
                let opening = match agent["question"].as_str() {
                    Some(_) => format!("{who}: asks: "),
                    None => format!("{who}: {status} "),
                };
                assert!(line.starts_with(&opening), "{line:?} for {agent}");
            }
        } else {
            assert!(lines.is_empty(), "{tool}'s text is its JSON alone: {text}");
        }
        structured
    }

    /// Calls and expects a coded failure; returns `(code, message)`.
    pub async fn err(&self, tool: &str, arguments: Value) -> (String, String) {
        let result = self.call(tool, arguments).await;
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool} succeeded: {:?}",
            result.structured_content
        );
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        let text = result.content[0]
            .as_text()
            .expect("a text block")
            .text
            .clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
        let error = &structured["error"];
        (
            error["code"].as_str().unwrap().to_owned(),
            error["message"].as_str().unwrap().to_owned(),
        )
    }

    pub async fn spawn(&self, name: &str, task: &str) -> String {
        let value = self
            .ok(
                "spawn_agent",
                serde_json::json!({"name": name, "task": task}),
            )
            .await;
        assert_eq!(value["status"], "running");
        value["agent_id"].as_str().unwrap().to_owned()
    }

    /// Interrupts agent `id` with `message` (`send_input` with `interrupt: true`).
    pub async fn interrupt(&self, id: &str, message: &str) -> Value {
        self.ok(
            "send_input",
            serde_json::json!({"target": id, "message": message, "interrupt": true}),
        )
        .await
    }

    pub async fn wait(&self, targets: &[&str], timeout_ms: u64) -> Value {
        self.ok(
            "wait_agent",
            serde_json::json!({"targets": targets, "timeout_ms": timeout_ms}),
        )
        .await
    }

    /// Waits up to `timeout_ms` for the one agent `id` and returns its record, however
    /// the wait ended.
    pub async fn wait_one(&self, id: &str, timeout_ms: u64) -> Value {
        self.wait(&[id], timeout_ms).await["agents"][0].clone()
    }

    /// Spawns `name` with `task` and returns its record once it has ended (60 s at most).
    pub async fn run_to_end(&self, name: &str, task: &str) -> Value {
        let id = self.spawn(name, task).await;
        let done = self.wait(&[&id], 60_000).await;
        assert_eq!(done["timed_out"], false, "{done}");
        done["agents"][0].clone()
    }

    /// Polls `wait_agent` with a zero timeout until the agent's activity reaches `phase`
    /// (5 s at most) and returns that snapshot of the agent.
    pub async fn wait_for_phase(&self, id: &str, phase: &str) -> Value {
        for _ in 0..200 {
            let agent = self.wait(&[id], 0).await["agents"][0].clone();
            if agent["activity"]["phase"] == phase {
                return agent;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("agent {id} never reached the phase {phase}");
    }

    pub async fn close(self) {
        let _ = self.client.cancel().await;
        if let Some(mut server) = self.server {
            let _ = server.kill().await;
        }
    }
}

/// Starts `command` with `stdin` and `stdout` as given and stderr piped, to be killed when
/// dropped.
pub fn spawn_with_stderr(
    command: &mut tokio::process::Command,
    stdin: Stdio,
    stdout: Stdio,
) -> tokio::process::Child {
    command
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start mcp-agents")
}

/// Fails unless `record` (a `wait_agent` record) is of a failed run whose error has `code`;
/// the error's message.
pub fn failed_with(record: &Value, code: &str) -> String {
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["error"]["code"], code, "{record}");
    record["error"]["message"].as_str().unwrap().to_owned()
}

/// A tool result's text split into the human lines before its JSON, and the JSON (the last
/// line).
pub fn split_wait_text(text: &str) -> (Vec<&str>, &str) {
    match text.rsplit_once('\n') {
        Some((lines, json)) => (lines.lines().collect(), json),
        None => (Vec::new(), text),
    }
}

/// A workspace with one Responses agent (`worker`), one Messages agent (`claude-worker`) and
/// one Chat Completions agent (`chat-worker`) pointing at `mock`, and a `skilled` agent that
/// preloads a skill.
pub fn workspace(mock: &MockProvider) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_standard_agents(dir.path(), mock);
    dir
}

/// Writes [`workspace`]'s agents and skill into `dir`.
pub fn write_standard_agents(dir: &Path, mock: &MockProvider) {
    let write = |rel: &str, text: String| super::children::write(dir, rel, &text);
    for (name, wire, base) in [
        ("worker", "responses", mock.responses_base_url()),
        (
            "claude-worker",
            "anthropic-messages",
            mock.messages_base_url(),
        ),
        ("chat-worker", "chat-completions", mock.chat_base_url()),
    ] {
        write(
            &format!(".agents/agents/{name}.md"),
            format!(
                "---\nname: {name}\ndescription: Does test work over {wire}.\nmodel: mock-model\n\
                 model_provider: custom\nbase_url: {base}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n\
                 max_turns: 5\n---\nYou are the {name}.\n"
            ),
        );
    }
    write(
        ".agents/agents/skilled.md",
        format!(
            "---\nname: skilled\ndescription: Has a skill.\nmodel: mock-model\nmodel_provider: custom\n\
             base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\nskills: [style]\n---\nBase instructions.\n",
            mock.responses_base_url()
        ),
    );
    write(
        ".agents/skills/style/SKILL.md",
        "---\nname: style\ndescription: House style.\n---\nUse short sentences.\n".to_owned(),
    );
}

/// The server on an empty workspace, spoken to line by line: stdin and stdout piped, stderr
/// collected.
pub struct RawServer {
    pub child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    pub stdout: Option<tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>>,
    /// Everything the server wrote to stderr so far.
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl RawServer {
    pub fn start(workspace: &std::path::Path) -> RawServer {
        use tokio::io::AsyncBufReadExt;
        let mut command = tokio::process::Command::new(BIN);
        command.arg(workspace).env_remove("RUST_LOG");
        let mut child = spawn_with_stderr(&mut command, Stdio::piped(), Stdio::piped());
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let seen = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut seen = seen.lock().unwrap();
                seen.push_str(&line);
                seen.push('\n');
            }
        });
        RawServer {
            stdin: child.stdin.take().unwrap(),
            stdout: Some(tokio::io::BufReader::new(child.stdout.take().unwrap()).lines()),
            child,
            stderr,
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next answer, within `secs`.
    pub async fn answer(&mut self, secs: u64) -> serde_json::Value {
        let line = tokio::time::timeout(
            std::time::Duration::from_secs(secs),
            self.stdout.as_mut().unwrap().next_line(),
        )
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("an answer, not the end of stdout");
        serde_json::from_str(&line).unwrap()
    }

    /// Peak resident memory of the server, in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let pid = self.child.id().unwrap();
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap()
    }
}

/// What `mcp-agents run NAME TASK` printed: whether it succeeded, its stdout and its stderr.
pub struct Ran {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The warning lines of stderr about the canonical agent file of `name`.
    pub fn warnings(&self, name: &str) -> Vec<&str> {
        let prefix = format!("warning: .agents/agents/{name}.md: ");
        self.stderr
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .collect()
    }
}

/// Runs agent `name` of `workspace` with `mcp-agents run --workspace WS NAME TASK`, the test
/// key set and the machine's `RUST_LOG` removed.
pub async fn run_plain(workspace: &Path, name: &str, task: &str) -> Ran {
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--workspace"])
        .arg(workspace)
        .args([name, task])
        .env(KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .output()
        .await
        .expect("mcp-agents run");
    Ran {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `command` (the machine's `RUST_LOG` removed) to its end and fails unless it
/// succeeded; its stdout, and its stderr as text.
pub async fn run_to_success(command: &mut tokio::process::Command) -> (Vec<u8>, String) {
    let out = command.env_remove("RUST_LOG").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (out.stdout, stderr)
}

/// What `mcp-agents run --json` did: its exit, the record it printed, its stderr.
pub struct RunRecord {
    pub success: bool,
    /// The `wait_agent` record of the run (`status`, `error`, `tools_used`, `usage`…).
    pub record: Value,
    pub stderr: String,
}

/// Runs agent `name` of `workspace` with `mcp-agents run --json`, `task` on its standard
/// input, the variables `env` set and the machine's `RUST_LOG` and default model removed;
/// gives up after `limit`.
pub async fn run_json(
    workspace: &Path,
    name: &str,
    task: &str,
    env: &[(&str, &str)],
    limit: Duration,
) -> RunRecord {
    use tokio::io::AsyncWriteExt;
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["run", "--workspace"])
        .arg(workspace)
        .args([name, "-", "--json"])
        .env_remove("RUST_LOG")
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .envs(env.iter().copied());
    let mut child = spawn_with_stderr(&mut command, Stdio::piped(), Stdio::piped());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(task.as_bytes())
        .await
        .expect("write the task");
    drop(stdin);
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("`mcp-agents run {name}` did not end within {limit:?}"))
        .expect("mcp-agents run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let record = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "`mcp-agents run {name} --json` printed no record ({e}): {}\nstderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    RunRecord {
        success: out.status.success(),
        record,
        stderr,
    }
}
