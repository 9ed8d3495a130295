//! Does memory go back to the system after retained sessions are evicted? Through the real
//! binary over stdio: 64 sessions each get 16 MiB of history (four runs, each a 4 MiB reply
//! to a task or a `send_input`), then 64 small sessions push them out of retention, and the
//! server's resident memory is read (`/proc/PID/status`) at each step.
//!
//! The allocator is the binary's, so the same command with `--features mimalloc` or
//! `--features jemalloc` measures those (docs/performance.md, "Memory after eviction"):
//!
//! ```text
//! CARGO_PROFILE_BENCH_LTO=false CARGO_PROFILE_BENCH_CODEGEN_UNITS=16 \
//!     cargo bench --bench retained_memory [--features mimalloc|jemalloc]
//! ```
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_agents::testkit::{BENCH_KEY_VAR, MockProvider, Step, bench_workspace};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};

const KEY: &str = "bench-key";
const KEY_VAR: &str = BENCH_KEY_VAR;
const BIN: &str = env!("CARGO_BIN_EXE_mcp-agents");
const SESSIONS: usize = 64;
const RUNS: usize = 4;
const REPLY_BYTES: usize = 4 * 1024 * 1024;
const BATCH: usize = 8;

/// Resident memory now and at its peak, in MiB.
fn rss(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The binary serving a workspace over stdio, and a client of it.
struct Server {
    client: RunningService<RoleClient, ()>,
    pid: u32,
}

impl Server {
    async fn start(workspace: &Path) -> Server {
        let mut command = tokio::process::Command::new(BIN);
        command.arg(workspace).env(KEY_VAR, KEY);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let pid = transport.id().unwrap();
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let client = ().serve_with_lifecycle(transport, lifecycle).await.unwrap();
        Server { client, pid }
    }

    /// Calls `name`; its structured answer.
    async fn call(&self, name: &'static str, args: Value) -> Value {
        let arguments = args.as_object().cloned().unwrap_or_default();
        self.client
            .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
            .await
            .unwrap()
            .structured_content
            .unwrap_or(Value::Null)
    }

    /// Waits for each of `ids` to complete. One id at a time: a record carries its 4 MiB
    /// result, and the client reads at most 16 MiB per message.
    async fn wait_all(&self, ids: &[String]) {
        for id in ids {
            let wait = json!({"targets": [id], "timeout_ms": 120_000});
            let done = self.call("wait_agent", wait).await;
            assert_eq!(done["timed_out"], false, "{done}");
            let agent = &done["agents"][0];
            assert_eq!(agent["status"], "completed", "{}", agent["error"]);
        }
    }

    /// Spawns a batch of agents, each answered with `reply`, and waits for them.
    async fn spawn_batch(&self, mock: &MockProvider, reply: &str) -> Vec<String> {
        let mut ids = Vec::new();
        mock.push(vec![Step::text(reply); BATCH]);
        for _ in 0..BATCH {
            let task = json!({"name": "worker", "task": "t"});
            let accepted = self.call("spawn_agent", task).await;
            ids.push(accepted["agent_id"].as_str().unwrap().to_owned());
        }
        self.wait_all(&ids).await;
        ids
    }
}

/// 64 sessions, each with [`RUNS`] replies of [`REPLY_BYTES`] in its history; their ids.
async fn fill_retention(server: &Server, mock: &MockProvider) -> Vec<String> {
    let reply = "x".repeat(REPLY_BYTES);
    let mut big = Vec::new();
    for _ in 0..SESSIONS / BATCH {
        let ids = server.spawn_batch(mock, &reply).await;
        for _ in 1..RUNS {
            mock.push(vec![Step::text(&reply); BATCH]);
            for id in &ids {
                let input = json!({"target": id, "message": "more"});
                server.call("send_input", input).await;
            }
            server.wait_all(&ids).await;
        }
        big.extend(ids);
    }
    big
}

fn allocator() -> &'static str {
    if cfg!(feature = "mimalloc") {
        "mimalloc"
    } else if cfg!(feature = "jemalloc") {
        "jemalloc"
    } else {
        "system (glibc)"
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.stop_recording();
    let ws = bench_workspace(&mock).unwrap();
    let server = Server::start(ws.path()).await;
    let pid = server.pid;
    let (idle, _) = rss(pid);
    let started = Instant::now();
    let big = fill_retention(&server, &mock).await;
    let (retained, peak) = rss(pid);
    // 64 small sessions finish: the 64 big ones are the least recently used, and go.
    for _ in 0..SESSIONS / BATCH {
        server.spawn_batch(&mock, "ok").await;
    }
    let wait = json!({"targets": [big[0]], "timeout_ms": 0});
    let gone = server.call("wait_agent", wait).await;
    assert_eq!(gone["error"]["code"], "unknown_agent", "{gone}");
    let (evicted, _) = rss(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (after_1s, _) = rss(pid);
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (after_12s, _) = rss(pid);
    let allocator = allocator();
    println!(
        "| {allocator} | {idle:.1} MiB | {retained:.1} MiB (peak {peak:.1}) | {evicted:.1} MiB | \
         {after_1s:.1} MiB | {after_12s:.1} MiB |"
    );
    eprintln!("({} s)", started.elapsed().as_secs());
    let _ = server.client.cancel().await;
}
