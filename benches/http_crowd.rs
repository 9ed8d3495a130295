//! A crowd of HTTP connections against the real binary (issue 34 item 7): how long a fresh
//! client waits for its answer, and what the server's memory does, when every connection
//! slot is taken.
//!
//! 1. **Kept-alive connections.** 256 connections each ask for the tool list every 5 s and
//!    stay open in between, as a client's connection pool keeps them; then a fresh client
//!    asks for the tool list.
//! 2. **Unread answers.** An agent's record carries a 2 MB result (a ~4 MB answer: the
//!    record twice, structured and as text); 256 connections each ask for it and never read
//!    a byte (small receive buffers); then a fresh client asks for the tool list. The
//!    server's resident memory is read before, 15 s after they asked (every answer made,
//!    none yet at the 30 s a single unread answer may wait), at its peak (`VmHWM`, reset
//!    before they come), and once they have gone and 3 s have passed (what it kept).
//!
//! The binary is the package's, or the one `MCP_AGENTS_BENCH_BIN` names (to measure an
//! older build the same way). Command (docs/reliability.md, "A crowd of HTTP
//! connections"):
//!
//! ```text
//! cargo bench --profile dev --bench http_crowd      # the debug build the tests use
//! MCP_AGENTS_BENCH_BIN=/path/to/old/mcp-agents cargo bench --profile dev --bench http_crowd
//! ```
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_agents::limits::HTTP_CONNECTIONS;
use mcp_agents::testkit::{
    BENCH_KEY_VAR, MockProvider, Step, ask_for_tools, bench_workspace, mcp_request,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

const KEY: &str = "bench-key";
const KEY_VAR: &str = BENCH_KEY_VAR;
const RESULT_BYTES: usize = 2_000_000;
/// How long the fresh client is given before it counts as locked out.
const FRESH_BOUND: Duration = Duration::from_secs(60);

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

/// The JSON-RPC result in an answer (an event stream's `data:` line, or a JSON body).
fn result_of(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    for line in body.lines() {
        let line = line.strip_prefix("data:").unwrap_or(line).trim();
        if let Ok(value) = serde_json::from_str::<Value>(line)
            && value.get("result").is_some()
        {
            return value["result"].clone();
        }
    }
    Value::Null
}

/// One request on a fresh connection closed after it; the whole answer.
async fn ask(addr: &str, bytes: &[u8]) -> String {
    use tokio::io::AsyncReadExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// How long a fresh client waits for the tool list (`None`: not within [`FRESH_BOUND`]).
async fn fresh_client(addr: &str) -> Option<Duration> {
    let started = Instant::now();
    let answer = tokio::time::timeout(
        FRESH_BOUND,
        ask(addr, &mcp_request("tools/list", None, json!({}), false)),
    )
    .await
    .ok()?;
    assert!(answer.contains("spawn_agent"), "{answer}");
    Some(started.elapsed())
}

fn shown(wait: Option<Duration>) -> String {
    wait.map_or_else(
        || format!("no answer in {} s", FRESH_BOUND.as_secs()),
        |d| format!("{:.2} s", d.as_secs_f64()),
    )
}

/// 256 kept-alive connections, as a client's pool keeps them: each asks for the tool list,
/// then again every 5 s (within the 10 s the server gives a kept-alive connection's next
/// request), until it is closed. Returns once all have been answered once.
async fn busy_keep_alive(addr: &str) -> tokio::task::JoinSet<()> {
    let mut crowd = tokio::task::JoinSet::new();
    let (ready, mut readied) = tokio::sync::mpsc::channel(HTTP_CONNECTIONS);
    for _ in 0..HTTP_CONNECTIONS {
        let addr = addr.to_owned();
        let ready = ready.clone();
        crowd.spawn(async move {
            let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            let mut stream = tokio::io::BufReader::new(stream);
            let mut answered = ask_for_tools(&mut stream).await;
            let _ = ready.send(()).await;
            while answered {
                tokio::time::sleep(Duration::from_secs(5)).await;
                answered = ask_for_tools(&mut stream).await;
            }
        });
    }
    for _ in 0..HTTP_CONNECTIONS {
        readied.recv().await;
    }
    crowd
}

/// The server under test, over a workspace with one agent at `mock`.
struct Server {
    process: tokio::process::Child,
    pid: u32,
    addr: String,
    _workspace: tempfile::TempDir,
}

async fn start_server(bin: &str, mock: &MockProvider) -> Server {
    let ws = bench_workspace(mock).unwrap();
    let mut process = tokio::process::Command::new(bin)
        .arg(ws.path())
        .args(["--http", "127.0.0.1:0"])
        .env(KEY_VAR, KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = process.id().unwrap();
    let mut lines = tokio::io::BufReader::new(process.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("the server's URL");
        if let Some(url) = line.strip_prefix("mcp-agents: serving MCP at ") {
            break url.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    Server {
        process,
        pid,
        addr,
        _workspace: ws,
    }
}

/// Runs an agent whose result is [`RESULT_BYTES`] long; its id.
async fn big_record(addr: &str, mock: &MockProvider) -> String {
    mock.push([Step::text(&"y".repeat(RESULT_BYTES))]);
    let spawn = mcp_request(
        "tools/call",
        Some("spawn_agent"),
        json!({"name": "spawn_agent", "arguments": {"name": "worker", "task": "t"}}),
        false,
    );
    let spawned = result_of(&ask(addr, &spawn).await);
    let id = spawned["structuredContent"]["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let wait = mcp_request(
        "tools/call",
        Some("wait_agent"),
        json!({"name": "wait_agent", "arguments": {"targets": [id], "timeout_ms": 60_000}}),
        false,
    );
    let done = result_of(&ask(addr, &wait).await);
    assert_eq!(
        done["structuredContent"]["agents"][0]["status"],
        "completed"
    );
    id
}

/// 256 connections ask for agent `id`'s record and never read it; a fresh client comes 5 s
/// later. Prints the fresh client's wait and the memory 15 s in, at the peak and after.
async fn unread_answers(server: &Server, id: &str) {
    let (before, _) = rss(server.pid);
    // The peak from here on (Linux: writing 5 to `clear_refs` resets `VmHWM`).
    let _ = std::fs::write(format!("/proc/{}/clear_refs", server.pid), "5");
    let wait = mcp_request(
        "tools/call",
        Some("wait_agent"),
        json!({"name": "wait_agent", "arguments": {"targets": [id], "timeout_ms": 0}}),
        true,
    );
    let mut unread = Vec::new();
    for _ in 0..HTTP_CONNECTIONS {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stream = socket.connect(server.addr.parse().unwrap()).await.unwrap();
        stream.write_all(&wait).await.unwrap();
        unread.push(stream);
    }
    let asked = Instant::now();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let waited = fresh_client(&server.addr).await;
    // Well within the 30 s a single unread answer may wait, long after all are made.
    tokio::time::sleep(Duration::from_secs(15).saturating_sub(asked.elapsed())).await;
    let (holding, _) = rss(server.pid);
    println!(
        "{} connections holding an unread ~4 MB answer: a fresh client waited {}",
        unread.len(),
        shown(waited)
    );
    drop(unread);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (after, peak) = rss(server.pid);
    println!(
        "memory: {before:.1} MiB before, {holding:.1} MiB 15 s in, peak {peak:.1} MiB, \
         {after:.1} MiB 3 s after the crowd left"
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bin = std::env::var("MCP_AGENTS_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-agents").to_owned());
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.stop_recording();
    let mut server = start_server(&bin, &mock).await;
    println!("binary: {bin}");
    let (idle, _) = rss(server.pid);
    println!("idle: {idle:.1} MiB");

    // 1. Kept-alive connections, idle between requests.
    let crowd = busy_keep_alive(&server.addr).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let waited = fresh_client(&server.addr).await;
    println!(
        "{HTTP_CONNECTIONS} kept-alive connections asking every 5 s: a fresh client waited {}",
        shown(waited)
    );
    drop(crowd);
    tokio::time::sleep(Duration::from_secs(2)).await;

    // 2. Answers nobody reads.
    let id = big_record(&server.addr, &mock).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    unread_answers(&server, &id).await;
    let _ = server.process.kill().await;
}
