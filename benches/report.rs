//! The performance report: every row of the table in docs/performance.md, measured in one
//! run on one machine, through the real binary where a user would meet the number.
//!
//! Run: `cargo bench --bench report` (about three minutes). It prints a Markdown table.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_agents::child_mcp::ChildServers;
use mcp_agents::child_mcp::{Launch, SelfCommand};
use mcp_agents::definition::WireApi;
use mcp_agents::discovery::{LoadOptions, Workspace, load_catalog};
use mcp_agents::limits::ServerLimits;
use mcp_agents::providers::Request;
use mcp_agents::providers::format;
use mcp_agents::providers::{Conversation, ModelSettings, RetryPolicy, ToolOutput};
use mcp_agents::sessions::{ManagerConfig, SessionManager};
use mcp_agents::sessions::{ReturnWhen, WaitEvent};
use mcp_agents::testkit::{MockProvider, Step};
use mcp_agents::toolbox::EnvLookup;
use mcp_agents::toolbox::ToolSpec;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const KEY: &str = "bench-key";
const KEY_VAR: &str = "MCP_AGENTS_BENCH_KEY";
const BIN: &str = env!("CARGO_BIN_EXE_mcp-agents");

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// `worker` (no tools) and `tooled` (the fixture child, 500 turns allowed) at the mock.
fn workspace(mock: &MockProvider) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let head = |name: &str, turns: u32| {
        format!(
            "---\nname: {name}\ndescription: Bench agent.\nmodel: mock-model\nmodel_provider: custom\n\
             base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\nmax_turns: {turns}\n",
            mock.responses_base_url()
        )
    };
    write(
        dir.path(),
        ".agents/agents/worker.md",
        &format!("{}---\nWork.\n", head("worker", 32)),
    );
    write(
        dir.path(),
        ".agents/agents/tooled.md",
        &format!(
            "{}mcp_servers:\n  fx:\n    command: {BIN}\n    args: [fixture-server]\n---\nWork.\n",
            head("tooled", TURNS_PER_RETAINED_SESSION)
        ),
    );
    dir
}

struct Stats(Vec<Duration>);

impl Stats {
    fn at(&self, p: f64) -> Duration {
        let mut v = self.0.clone();
        v.sort();
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }
}

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.0} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}

fn rss_kib(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

async fn stdio_client(ws: &Path) -> (rmcp::service::RunningService<rmcp::RoleClient, ()>, u32) {
    let mut command = tokio::process::Command::new(BIN);
    command.arg(ws).env(KEY_VAR, KEY);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    (
        ().serve_with_lifecycle(transport, modern()).await.unwrap(),
        pid,
    )
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    a: Value,
) -> Value {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(a)))
        .await
        .unwrap()
        .structured_content
        .unwrap()
}

async fn startup(ws: &Path) -> Stats {
    let mut samples = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let (client, _) = stdio_client(ws).await;
        let tools = client.list_all_tools().await.unwrap();
        samples.push(started.elapsed());
        assert_eq!(tools.len(), 3);
        let _ = client.cancel().await;
    }
    Stats(samples)
}

fn catalog_1000() -> Stats {
    let dir = tempfile::tempdir().unwrap();
    let body = "You review one change at a time and report bugs, most severe first.\n".repeat(4);
    for i in 0..250 {
        let g = i % 10;
        write(
            dir.path(),
            &format!(".agents/agents/g{g}/c{i}.md"),
            &format!(
                "---\nname: c{i}\ndescription: d\nmodel: m\nmodel_provider: openai\nmcp_servers:\n  docs: {{command: npx, args: [\"-y\", \"docs\"]}}\n---\n{body}"
            ),
        );
        write(
            dir.path(),
            &format!(".claude/agents/g{g}/l{i}.md"),
            &format!(
                "---\nname: l{i}\ndescription: Use when: reviewing {i}.\ntools: Read, mcp__gh__get\nmodel: sonnet\nmcpServers:\n  - gh: {{type: http, url: \"https://api.example.com/mcp\"}}\n---\n{body}"
            ),
        );
        write(
            dir.path(),
            &format!(".codex/agents/g{g}/x{i}.toml"),
            &format!(
                "name = \"x{i}\"\ndescription = \"d\"\nmodel = \"m\"\ndeveloper_instructions = \"\"\"\n{body}\"\"\"\n[mcp_servers.fs]\ncommand = \"npx\"\n"
            ),
        );
        write(
            dir.path(),
            &format!(".opencode/agents/g{g}/o{i}.md"),
            &format!(
                "---\ndescription: d\nmode: subagent\nmodel: anthropic/claude-haiku-5-5\ntools:\n  \"*\": false\n  gh_search: true\n---\n{body}"
            ),
        );
    }
    let workspace = Workspace::open(dir.path()).unwrap();
    let options = LoadOptions::default();
    let mut samples = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        let catalog = load_catalog(&workspace, &options);
        samples.push(started.elapsed());
        assert_eq!(catalog.agents().len(), 1000);
    }
    Stats(samples)
}

async fn spawn_latency(mock: &MockProvider, ws: &Path) -> Stats {
    let (client, _) = stdio_client(ws).await;
    let mut samples = Vec::new();
    for i in 0..1200 {
        mock.push([Step::text("ok")]);
        let started = Instant::now();
        let spawned = call(
            &client,
            "spawn_agent",
            json!({"name": "worker", "task": "t"}),
        )
        .await;
        if i >= 200 {
            samples.push(started.elapsed());
        }
        call(
            &client,
            "wait_agent",
            json!({"targets": [spawned["agent_id"]], "timeout_ms": 10000}),
        )
        .await;
    }
    let _ = client.cancel().await;
    Stats(samples)
}

async fn wake_up(mock: &MockProvider, ws: &Path) -> Stats {
    let catalog = load_catalog(&Workspace::open(ws).unwrap(), &LoadOptions::default());
    let env: EnvLookup = Arc::new(|var| (var == KEY_VAR).then(|| KEY.to_owned()));
    let manager = SessionManager::new(
        Arc::new(catalog),
        ManagerConfig {
            env: env.clone(),
            tools: Arc::new(ChildServers::new(env).with_self_command(SelfCommand::new(BIN, &[]))),
            retry: RetryPolicy::none(),
            limits: ServerLimits::default(),
            spend: Arc::default(),
        },
    );
    let mut samples = Vec::new();
    for _ in 0..500 {
        mock.push([Step::text("ok").delayed(Duration::from_millis(3))]);
        let spawned = tokio::time::Instant::now();
        let accepted = manager.spawn("worker", "t").unwrap();
        let mut waiter = manager
            .wait(
                &[accepted.agent_id],
                Duration::from_secs(10),
                ReturnWhen::All,
            )
            .unwrap();
        let agents = loop {
            if let WaitEvent::Finished { agents, .. } = waiter.next().await {
                break agents;
            }
        };
        let returned = tokio::time::Instant::now();
        samples.push(returned.saturating_duration_since(spawned + agents[0].total_elapsed));
    }
    Stats(samples)
}

fn loop_overhead() -> Stats {
    let mut conversation = Conversation::new(WireApi::Responses);
    conversation.push_user_texts(&["Go.".into()]);
    for i in 0..50 {
        let reply = format(WireApi::Responses).parse("bench", &mcp_agents::redact::Secrets::default(), json!({"status": "completed", "output": [
            {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "gAAAA".repeat(40)},
            {"type": "function_call", "id": "fc", "call_id": format!("c{i}"), "name": "t__echo", "arguments": "{}"}],
            "usage": {"input_tokens": 1, "output_tokens": 1}})).unwrap_or_else(|_| panic!());
        conversation.push_reply(&reply);
        conversation.push_tool_outputs(&[ToolOutput::text(
            format!("c{i}"),
            "lorem ipsum ".repeat(20),
            false,
        )]);
    }
    let tools = vec![
        ToolSpec {
            name: "t__echo".into(),
            description: "Echo.".into(),
            input_schema: json!({"type": "object"})
        };
        10
    ];
    let settings = ModelSettings {
        model: "m".into(),
        temperature: None,
        reasoning_effort: None,
        strict_output_schema: None,
        output_limit_as_max_tokens: false,
    };
    let tools = format(WireApi::Responses).encode_tools(&tools).unwrap();
    let learned = Default::default();
    let reply = serde_json::to_vec(&json!({"status": "completed", "output": [{"type": "function_call", "call_id": "z", "name": "t__echo", "arguments": "{}"}], "usage": {}})).unwrap();
    let mut samples = Vec::new();
    for _ in 0..2000 {
        let mut next = conversation.clone();
        let started = Instant::now();
        let body = format(WireApi::Responses)
            .encode(&Request {
                settings: &settings,
                system: "sys",
                history: next.history(),
                tools: &tools,
                max_output_tokens: 32_000,
                learned: &learned,
                prompt_cache_key: Some("mcp-agents-0123456789abcdef"),
            })
            .unwrap();
        let parsed = format(WireApi::Responses)
            .parse(
                "bench",
                &mcp_agents::redact::Secrets::default(),
                serde_json::from_slice(&reply).unwrap(),
            )
            .unwrap_or_else(|_| panic!());
        next.push_reply(&parsed);
        next.push_tool_outputs(&[ToolOutput::text("z", "r", false)]);
        samples.push(started.elapsed());
        assert!(!body.is_empty());
    }
    Stats(samples)
}

/// A stdio child's start to its tools listed (`connect_child`: spawn, `server/discover`,
/// `tools/list`) and its stop, 20 times, started directly or under its shim (Linux).
async fn child_starts(ws: &Path, shim: Option<SelfCommand>) -> Stats {
    let mut samples = Vec::new();
    for _ in 0..20 {
        let launch = Launch::Stdio {
            command: BIN.to_owned(),
            args: vec!["fixture-server".into()],
            env: std::env::vars()
                .filter(|(k, _)| k == "PATH" || k == "HOME")
                .collect(),
            cwd: ws.to_owned(),
            shim: shim.clone(),
        };
        let started = Instant::now();
        let (connection, tools) =
            mcp_agents::child_mcp::connect_child("fx", &launch, Duration::from_secs(15))
                .await
                .unwrap();
        samples.push(started.elapsed());
        assert!(!tools.is_empty());
        connection.shutdown(Duration::from_secs(5)).await;
    }
    Stats(samples)
}

async fn child_round_trip(ws: &Path) -> Stats {
    let launch = Launch::Stdio {
        command: BIN.to_owned(),
        args: vec!["fixture-server".into()],
        env: std::env::vars()
            .filter(|(k, _)| k == "PATH" || k == "HOME")
            .collect(),
        cwd: ws.to_owned(),
        shim: Some(SelfCommand::new(BIN, &[])),
    };
    let (connection, _) =
        mcp_agents::child_mcp::connect_child("fx", &launch, Duration::from_secs(15))
            .await
            .unwrap();
    let mut samples = Vec::new();
    for i in 0..2200 {
        let started = Instant::now();
        let result = connection
            .call("echo", args(json!({"text": "ping"})))
            .await
            .unwrap();
        if i >= 200 {
            samples.push(started.elapsed());
        }
        assert_ne!(result.is_error, Some(true));
    }
    connection.shutdown(Duration::from_secs(5)).await;
    Stats(samples)
}

/// Turns of each of the 64 retained sessions the memory row measures.
const TURNS_PER_RETAINED_SESSION: u32 = 500;

/// RSS of the server at idle, and after 64 retained sessions of 500 turns each.
async fn memory(mock: &MockProvider, ws: &Path) -> (u64, u64) {
    let (client, pid) = stdio_client(ws).await;
    client.list_all_tools().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = rss_kib(pid);
    // One at a time: the mock's script is shared, so each run gets exactly its turns.
    for n in 0..64 {
        let mut steps =
            vec![
                Step::tool_call("fx__echo", json!({"text": format!("turn of agent {n}")}));
                TURNS_PER_RETAINED_SESSION as usize - 1
            ];
        steps.push(Step::text("done"));
        mock.push(steps);
        let id = call(
            &client,
            "spawn_agent",
            json!({"name": "tooled", "task": "Run five hundred turns."}),
        )
        .await["agent_id"]
            .clone();
        let done = call(
            &client,
            "wait_agent",
            json!({"targets": [id], "timeout_ms": 300000}),
        )
        .await;
        let agent = &done["agents"][0];
        assert_eq!(agent["status"], "completed", "{agent}");
        assert_eq!(agent["turns"], TURNS_PER_RETAINED_SESSION);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let retained = rss_kib(pid);
    let _ = client.cancel().await;
    (idle, retained)
}

async fn http_snapshots(mock: &MockProvider, ws: &Path) -> (f64, Stats) {
    let mut server = tokio::process::Command::new(BIN)
        .arg(ws)
        .args(["--http", "127.0.0.1:0"])
        .env(KEY_VAR, KEY)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().unwrap();
        if let Some(url) = line.strip_prefix("mcp-agents: serving MCP at ") {
            break url.to_owned();
        }
    };
    mcp_agents::net::install_tls();
    let connect = || async {
        let transport = StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            StreamableHttpClientTransportConfig::with_uri(url.clone()),
        );
        ().serve_with_lifecycle(transport, modern()).await.unwrap()
    };
    let setup = connect().await;
    mock.push(vec![Step::Hang; 8]);
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(
            call(
                &setup,
                "spawn_agent",
                json!({"name": "worker", "task": "t"}),
            )
            .await["agent_id"]
                .clone(),
        );
    }
    let mut clients = Vec::new();
    for _ in 0..100 {
        clients.push(connect().await);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|client| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let r = call(
                        &client,
                        "wait_agent",
                        json!({"targets": ids, "timeout_ms": 0}),
                    )
                    .await;
                    samples.push(t.elapsed());
                    assert_eq!(r["agents"].as_array().unwrap().len(), 8);
                }
                samples
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let rate = all.len() as f64 / started.elapsed().as_secs_f64();
    let _ = server.kill().await;
    (rate, Stats(all))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.stop_recording();
        let ws = workspace(&mock);
        let startup = startup(ws.path()).await;
        let catalog = catalog_1000();
        let spawn = spawn_latency(&mock, ws.path()).await;
        let wake = wake_up(&mock, ws.path()).await;
        let turn = loop_overhead();
        let child = child_round_trip(ws.path()).await;
        let direct = child_starts(ws.path(), None).await;
        let shimmed = child_starts(ws.path(), Some(SelfCommand::new(BIN, &[]))).await;
        let (idle, retained) = memory(&mock, ws.path()).await;
        let (rate, snapshots) = http_snapshots(&mock, ws.path()).await;

        println!("| what | goal | measured |");
        println!("| --- | --- | --- |");
        println!("| startup to the first `tools/list` answer (stdio, 20 starts) | well under 1 s | p50 {}, max {} |", ms(startup.at(0.5)), ms(startup.at(1.0)));
        println!("| catalog load, 1,000 definitions in four formats (30 loads) | well under 100 ms | p50 {}, max {} |", ms(catalog.at(0.5)), ms(catalog.at(1.0)));
        println!("| `spawn_agent` round trip over stdio (1,000 calls) | p50 < 0.5 ms, p99 < 2 ms | p50 {}, p99 {} |", ms(spawn.at(0.5)), ms(spawn.at(0.99)));
        println!("| run completion to a pending wait's return (in process, 500 runs) | < 1 ms | p50 {}, p99 {} |", ms(wake.at(0.5)), ms(wake.at(0.99)));
        println!("| loop overhead per turn, 50-turn history, 10 tools (2,000 turns) | well under 1 ms of CPU | p50 {}, p99 {} |", ms(turn.at(0.5)), ms(turn.at(0.99)));
        println!("| child tool call round trip over stdio (2,000 calls) | — | p50 {}, p99 {} |", ms(child.at(0.5)), ms(child.at(0.99)));
        println!("| a stdio child's start to its tools listed, 20 starts: directly / under its shim | — | p50 {} / {}, max {} / {} |", ms(direct.at(0.5)), ms(shimmed.at(0.5)), ms(direct.at(1.0)), ms(shimmed.at(1.0)));
        println!("| server memory (RSS) at idle | — | {:.1} MiB |", idle as f64 / 1024.0);
        println!("| server memory with 64 retained sessions of {TURNS_PER_RETAINED_SESSION} turns each | < 64 MiB | {:.1} MiB |", retained as f64 / 1024.0);
        println!("| `wait_agent` snapshots, 8 running sessions, 100 HTTP clients (10 s) | no error, no stall | {rate:.0} calls/s; p50 {}, p99 {}, max {} |", ms(snapshots.at(0.5)), ms(snapshots.at(0.99)), ms(snapshots.at(1.0)));
    });
}
