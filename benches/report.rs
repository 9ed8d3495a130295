//! Server latency and load, through the real binary and the `rmcp` client:
//!
//! 1. `spawn_agent` round trip over stdio (the model answers instantly; only the call is
//!    timed, then the bench waits, untimed, for the run to finish);
//! 2. wake-up latency: from a run's completion to the return of a pending wait (in process,
//!    through the session manager, without a transport);
//! 3. 8 running sessions and 100 concurrent clients taking `wait_agent` snapshots over HTTP.
//!
//! Run: `cargo bench --bench server_load`. Prints percentiles; results go to
//! docs/performance.md.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_agents::child_mcp::ChildServers;
use mcp_agents::discovery::{LoadOptions, Workspace, load_catalog};
use mcp_agents::mock::{MockProvider, Step};
use mcp_agents::providers::RetryPolicy;
use mcp_agents::sessions::manager::{Limits, ManagerConfig, SessionManager, WaitEvent};
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

fn workspace(mock: &MockProvider) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".agents/agents/worker.md");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!(
            "---\nname: worker\ndescription: Bench worker.\nmodel: mock-model\nmodel_provider: custom\n\
             base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n---\nWork.\n",
            mock.responses_base_url()
        ),
    )
    .unwrap();
    dir
}

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "{label:<58} n={:<6} p50={:>9.3?} p90={:>9.3?} p99={:>9.3?} max={:>9.3?}",
        samples.len(),
        at(0.50),
        at(0.90),
        at(0.99),
        at(1.0)
    );
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

async fn spawn_round_trips(mock: &MockProvider, ws: &std::path::Path) {
    let mut command = tokio::process::Command::new(BIN);
    command.arg(ws).env(KEY_VAR, KEY);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve_with_lifecycle(transport, modern()).await.unwrap();
    let mut samples = Vec::new();
    for i in 0..2200 {
        mock.push([Step::text("ok")]);
        let started = Instant::now();
        let result = client
            .call_tool(
                CallToolRequestParams::new("spawn_agent")
                    .with_arguments(args(json!({"name": "worker", "task": "t"}))),
            )
            .await
            .unwrap();
        let elapsed = started.elapsed();
        let id = result.structured_content.unwrap()["agent_id"]
            .as_str()
            .unwrap()
            .to_owned();
        if i >= 200 {
            samples.push(elapsed); // the first 200 warm the process up
        }
        let done = client
            .call_tool(
                CallToolRequestParams::new("wait_agent")
                    .with_arguments(args(json!({"targets": [id], "timeout_ms": 10000}))),
            )
            .await
            .unwrap();
        assert_eq!(
            done.structured_content.unwrap()["agents"][0]["status"],
            "completed"
        );
    }
    percentiles("spawn_agent round trip, stdio (2,000 calls)", samples);
    let _ = client.cancel().await;
}

async fn wake_up_latency(mock: &MockProvider, ws: &std::path::Path) {
    let catalog = load_catalog(&Workspace::open(ws).unwrap(), &LoadOptions::default());
    let env: mcp_agents::sessions::manager::EnvLookup =
        Arc::new(|var| (var == KEY_VAR).then(|| KEY.to_owned()));
    let manager = SessionManager::new(
        Arc::new(catalog),
        ManagerConfig {
            env: env.clone(),
            tools: Arc::new(ChildServers::new(env)),
            retry: RetryPolicy::none(),
            limits: Limits::default(),
        },
    );
    let mut samples = Vec::new();
    for _ in 0..1000 {
        mock.push([Step::text("ok").delayed(Duration::from_millis(3))]);
        let spawned = tokio::time::Instant::now();
        let accepted = manager.spawn("worker", "t").unwrap();
        let mut waiter = manager
            .wait(&[accepted.agent_id], Duration::from_secs(10))
            .unwrap();
        let agents = loop {
            if let WaitEvent::Finished { agents, .. } = waiter.next().await {
                break agents;
            }
        };
        let returned = tokio::time::Instant::now();
        // The run ended at spawn + total_elapsed (an estimate that errs towards a longer wake-up).
        let completed = spawned + agents[0].total_elapsed;
        samples.push(returned.saturating_duration_since(completed));
    }
    percentiles(
        "run completion -> pending wait returns (in process)",
        samples,
    );
}

async fn http_snapshots(mock: &MockProvider, ws: &std::path::Path) {
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
    mcp_agents::providers::http::shared_client();
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
        let r = setup
            .call_tool(
                CallToolRequestParams::new("spawn_agent")
                    .with_arguments(args(json!({"name": "worker", "task": "t"}))),
            )
            .await
            .unwrap();
        ids.push(
            r.structured_content.unwrap()["agent_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let client = connect().await;
        let ids = ids.clone();
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                let started = Instant::now();
                let r = client
                    .call_tool(
                        CallToolRequestParams::new("wait_agent")
                            .with_arguments(args(json!({"targets": ids, "timeout_ms": 0}))),
                    )
                    .await
                    .unwrap();
                samples.push(started.elapsed());
                assert_eq!(
                    r.structured_content.unwrap()["agents"]
                        .as_array()
                        .unwrap()
                        .len(),
                    8
                );
            }
            samples
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "wait_agent snapshots of 8 running sessions, 100 HTTP clients: {:.0} calls/s over {seconds:.1} s",
        all.len() as f64 / seconds
    );
    percentiles("wait_agent snapshot latency under that load", all);
    let _ = server.kill().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mock = MockProvider::start(KEY).await.unwrap();
        let ws = workspace(&mock);
        spawn_round_trips(&mock, ws.path()).await;
        wake_up_latency(&mock, ws.path()).await;
        http_snapshots(&mock, ws.path()).await;
    });
}
