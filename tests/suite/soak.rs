//! A soak test (ignored by default; `.ci/run` runs it for 20 s, `MCP_AGENTS_SOAK_SECS` sets
//! the length): thousands of spawn / send_input / interrupt / wait calls against a model
//! endpoint that answers with random faults, agents with real child processes, the whole
//! server stack in this process (MCP over an in-memory pipe). At the end every session must
//! be in a correct terminal state, and no task, file descriptor or child process may be left.
//!
//! The hardening cases of issues 14 and 23 that fit in one process run all along: every
//! tooled child starts a daemon (forked twice, `setsid`, every descriptor closed; it must be
//! gone when its run ends),
//! some tool results are over the 16 MiB a child's line may hold (they reach the model cut),
//! some provider failures carry a huge message (quoted in 1,000 characters), a second stdio
//! connection sends malformed lines (each answered), and children still starting when the
//! server stops are stopped with it.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_agents::discovery::{LoadOptions, Workspace, load_catalog};
use mcp_agents::limits::ServerLimits;
use mcp_agents::providers::RetryPolicy;
use mcp_agents::sessions::{ManagerConfig, SessionManager};
use mcp_agents::testkit::{MockProvider, Step};
use mcp_agents::toolbox::EnvLookup;
use rand::RngExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use support::binary::KEY_VAR;
use support::children::{self, agent, processes_with, stdio_child};
use support::run_kit::KEY;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A target: usually one of the 64 newest (retained) sessions, sometimes an old one.
fn pick<'a>(ids: &'a [String], rng: &mut impl rand::Rng) -> &'a String {
    let recent = ids.len().saturating_sub(64);
    if recent > 0 && rng.random_bool(0.1) {
        &ids[rng.random_range(0..recent)]
    } else {
        &ids[rng.random_range(recent..ids.len())]
    }
}

fn random_steps(rng: &mut impl rand::Rng) -> Vec<Step> {
    let fault = rng.random_range(0..10);
    let mut steps = match fault {
        0 => vec![Step::openai_error(500, "server_error", None, "transient")],
        1 => vec![
            Step::openai_error(429, "requests", Some("rate_limit_exceeded"), "slow down")
                .with_header("retry-after-ms", "20"),
        ],
        2 => vec![Step::Drop],
        3 => vec![Step::Raw {
            status: 200,
            headers: vec![],
            body: "{garbage".into(),
        }],
        4 => vec![Step::openai_error(
            400,
            "invalid_request_error",
            Some("context_length_exceeded"),
            "Your input exceeds the context window of this model.",
        )],
        // A failed response with a 100 KiB message: `provider_error`, quoted in 1,000
        // characters (`fault_isolation.rs` sends 20 MiB).
        8 if rng.random_bool(0.3) => vec![Step::json(
            200,
            json!({"status": "failed", "output": [],
                   "error": {"code": "invalid_prompt", "message": "m".repeat(100 << 10)}}),
        )],
        // A result over the 16 MiB a child's line may hold: cut, not a timeout.
        9 if rng.random_bool(0.02) => {
            vec![Step::tool_call("fx__huge", json!({"bytes": 17 << 20}))]
        }
        5 | 6 => vec![Step::tool_call("fx__echo", json!({"text": "soak"}))],
        7 => vec![Step::tool_call("fx__sleep", json!({"ms": 300}))],
        _ => vec![],
    };
    steps.push(Step::text("done").delayed(Duration::from_millis(rng.random_range(0..50))));
    steps
}

/// The soak's agents: `tooled`, whose child starts a daemon; `starting`, whose child never
/// answers server/discover (still starting when the server stops); `plain`, without tools.
fn soak_workspace(mock: &MockProvider, marker: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/tooled.md",
        &agent(
            mock,
            "tooled",
            &stdio_child("fx", &["--grandchild", "daemon"], marker, ""),
            "max_turns: 4",
        ),
    );
    children::write(
        ws.path(),
        ".agents/agents/starting.md",
        &agent(
            mock,
            "starting",
            &stdio_child("fx", &["--hang"], marker, ""),
            "",
        ),
    );
    children::write(
        ws.path(),
        ".agents/agents/plain.md",
        &agent(mock, "plain", "", "max_turns: 3").replace("mcp_servers:\n\n", ""),
    );
    ws
}

/// A manager over `ws` with real child servers and quick retries.
fn soak_manager(ws: &std::path::Path) -> Arc<SessionManager> {
    let catalog = load_catalog(&Workspace::open(ws).unwrap(), &LoadOptions::default());
    let env: EnvLookup = Arc::new(|var| {
        if var == KEY_VAR {
            Some(KEY.to_owned())
        } else {
            std::env::var(var).ok()
        }
    });
    SessionManager::new(
        Arc::new(catalog),
        ManagerConfig {
            env: env.clone(),
            tools: Arc::new(children::child_servers(env)),
            retry: RetryPolicy {
                max_retries: 2,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(50),
                max_requested_delay: Duration::from_secs(1),
            },
            limits: ServerLimits::default(),
            spend: Arc::default(),
        },
    )
}

type Serving = tokio::task::JoinHandle<Result<(), String>>;
type Half = tokio::io::DuplexStream;

/// A new in-memory pipe of `capacity` bytes with `manager` served on one end; the other.
fn served_pipe(manager: &Arc<SessionManager>, capacity: usize) -> (Serving, Half) {
    let (server_end, client_end) = tokio::io::duplex(capacity);
    let (read, write) = tokio::io::split(server_end);
    let serving =
        mcp_agents::server::serve_stdio_on(manager.clone(), Default::default(), read, write);
    (tokio::spawn(serving), client_end)
}

/// The server stack in this process: an `rmcp` client over one in-memory pipe, and a second
/// connection to the same manager spoken to in raw lines.
struct Stack {
    manager: Arc<SessionManager>,
    client: RunningService<RoleClient, ()>,
    server: Serving,
    raw_write: tokio::io::WriteHalf<Half>,
    raw_answers: Lines<BufReader<tokio::io::ReadHalf<Half>>>,
    raw_serving: Serving,
}

impl Stack {
    async fn start(manager: Arc<SessionManager>) -> Stack {
        let (raw_serving, raw_client) = served_pipe(&manager, 1 << 16);
        let (raw_read, raw_write) = tokio::io::split(raw_client);
        let (server, client_end) = served_pipe(&manager, 1 << 20);
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let client = ().serve_with_lifecycle(client_end, lifecycle).await.unwrap();
        Stack {
            manager,
            client,
            server,
            raw_write,
            raw_answers: BufReader::new(raw_read).lines(),
            raw_serving,
        }
    }

    /// Calls `name`: whether it answered with an error, and its structured answer.
    async fn call(&self, name: &'static str, args: Value) -> (bool, Value) {
        let arguments = args.as_object().cloned().unwrap_or_default();
        let result = self
            .client
            .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
            .await
            .unwrap();
        (
            result.is_error == Some(true),
            result.structured_content.unwrap_or(Value::Null),
        )
    }

    /// Sends a malformed line on the raw connection; it must be answered with its error.
    async fn malformed_line(&mut self, rng: &mut impl rand::Rng) {
        let lines: [(&[u8], i64); 4] = [
            (b"not json\n", -32700),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"c":"\ud800"}}"#,
                -32700,
            ),
            (b"{\"jsonrpc\":\"2.0\",\"id\":9,\"x\":1e309}\n", -32700),
            (b"{\"jsonrpc\":\"2.0\",\"id\":9}\n", -32600),
        ];
        let (line, code) = lines[rng.random_range(0..lines.len())];
        self.raw_write.write_all(line).await.unwrap();
        if !line.ends_with(b"\n") {
            self.raw_write.write_all(b"\n").await.unwrap();
        }
        let answer = tokio::time::timeout(Duration::from_secs(10), self.raw_answers.next_line())
            .await
            .expect("a malformed line is answered")
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }

    /// Closes both connections, then the manager (what is still starting is stopped).
    async fn close(self) {
        let _ = self.client.cancel().await;
        let _ = self.server.await;
        // Both halves: the pipe closes when neither is left.
        drop((self.raw_write, self.raw_answers));
        let _ = self.raw_serving.await;
        self.manager.shutdown(Duration::from_secs(6)).await;
    }
}

/// What the process holds after the warm-up, for the end to be compared with.
struct Baseline {
    tasks: usize,
    fds: usize,
    rss: u64,
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Eight runs at once fill the HTTP connection pools (kept-alive connections are tasks on
/// both ends), so what remains at the end is compared with a pool already full.
async fn warm_up(stack: &Stack, mock: &MockProvider) -> Baseline {
    let mut warm = Vec::new();
    for _ in 0..8 {
        mock.push([Step::text("warm").delayed(Duration::from_millis(100))]);
        let (_, spawned) = stack
            .call("spawn_agent", json!({"name": "plain", "task": "warm up"}))
            .await;
        warm.push(spawned["agent_id"].as_str().unwrap().to_owned());
    }
    let wait = json!({"targets": warm, "timeout_ms": 10000});
    stack.call("wait_agent", wait).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Baseline {
        tasks: alive_tasks(),
        fds: open_fds(),
        rss: rss_kib(),
    }
}

/// What the random calls did: the sessions they spawned, and each call counted by what it
/// was (or the code it was refused with).
#[derive(Default)]
struct Soaked {
    ids: Vec<String>,
    counts: HashMap<&'static str, u64>,
}

/// What a successful call of each action is counted as.
const ACTION_LABELS: [&str; 10] = [
    "spawn",
    "spawn",
    "spawn",
    "spawn",
    "send_input",
    "send_input",
    "send_input",
    "wait",
    "wait",
    "wait",
];

/// Random spawns, inputs (some interrupting), waits and malformed lines until `deadline`;
/// a refusal is only ever one of the expected ones.
async fn soak(stack: &mut Stack, mock: &MockProvider, deadline: Instant) -> Soaked {
    let mut rng = rand::rng();
    let mut soaked = Soaked::default();
    let allowed_refusals: HashSet<&str> =
        ["capacity_exceeded", "queue_full", "unknown_agent"].into();
    while Instant::now() < deadline {
        let action = rng.random_range(0..11);
        if action == 10 {
            stack.malformed_line(&mut rng).await;
            *soaked.counts.entry("malformed line").or_default() += 1;
            continue;
        }
        let Some((is_error, value)) =
            random_call(stack, mock, &mut rng, action, &mut soaked.ids).await
        else {
            continue;
        };
        let label = if is_error {
            let code = value["error"]["code"].as_str().unwrap_or("none").to_owned();
            assert!(
                allowed_refusals.contains(code.as_str()),
                "unexpected refusal {value}"
            );
            Box::leak(code.into_boxed_str()) as &str
        } else {
            ACTION_LABELS[action]
        };
        *soaked.counts.entry(label).or_default() += 1;
    }
    soaked
}

/// One call of `action` (0–3 spawn, 4–6 send_input, 7–9 wait), or none when there is no
/// session to name yet.
async fn random_call(
    stack: &Stack,
    mock: &MockProvider,
    rng: &mut impl rand::Rng,
    action: usize,
    ids: &mut Vec<String>,
) -> Option<(bool, Value)> {
    match action {
        0..=3 => {
            mock.push(random_steps(rng));
            let name = if rng.random_bool(0.5) {
                "tooled"
            } else {
                "plain"
            };
            let outcome = stack
                .call("spawn_agent", json!({"name": name, "task": "soak"}))
                .await;
            if !outcome.0 {
                ids.push(outcome.1["agent_id"].as_str().unwrap().to_owned());
            }
            Some(outcome)
        }
        4..=6 if !ids.is_empty() => {
            mock.push(random_steps(rng));
            let target = pick(ids, rng);
            let input =
                json!({"target": target, "message": "more", "interrupt": rng.random_bool(0.3)});
            Some(stack.call("send_input", input).await)
        }
        _ if !ids.is_empty() => {
            let mut targets: Vec<&String> = (0..rng.random_range(1..=4))
                .map(|_| pick(ids, rng))
                .collect();
            targets.sort();
            targets.dedup();
            let wait = json!({"targets": targets, "timeout_ms": rng.random_range(0..50)});
            Some(stack.call("wait_agent", wait).await)
        }
        _ => None,
    }
}

/// Lets everything finish; every retained session must end completed or failed with a run
/// error code, never stuck.
async fn every_session_ends_well(stack: &Stack, mock: &MockProvider, ids: &[String]) {
    mock.push(vec![Step::text("late"); 200]);
    // Every session the soak created that the server still holds: `send_input` resumes
    // old sessions at random, so a running one can be anywhere in `ids`, not only among
    // the newest (running sessions are never evicted). Held ones are at most 64 terminal
    // plus the running.
    let mut finished = Value::Null;
    for _ in 0..60 {
        let held: Vec<&String> = ids
            .iter()
            .filter(|id| stack.manager.snapshot(id).is_ok())
            .collect();
        let wait = json!({"targets": held, "timeout_ms": 1000});
        let (_, value) = stack.call("wait_agent", wait).await;
        if value["timed_out"] == false {
            finished = value;
            break;
        }
    }
    assert!(finished.is_object(), "sessions still running after 60 s");
    let run_codes: HashSet<&str> = [
        "provider_error",
        "context_limit",
        "turn_limit",
        "child_mcp_startup_error",
    ]
    .into();
    for record in finished["agents"].as_array().unwrap() {
        match record["status"].as_str().unwrap() {
            "completed" => assert!(record["result"].is_string()),
            "failed" => assert!(
                run_codes.contains(record["error"]["code"].as_str().unwrap()),
                "{record}"
            ),
            other => panic!("{other}: {record}"),
        }
        assert!(record.get("activity").is_none());
    }
}

/// No run, task, descriptor or memory is left beyond the warm-up's, and retention holds.
async fn nothing_is_left(manager: &SessionManager, mock: &MockProvider, baseline: &Baseline) {
    assert_eq!(manager.running(), 0);
    assert_eq!(
        mock.refusals(),
        0,
        "every request was a valid conversation, interrupts included"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(manager.run_tasks(), 0, "every run task has ended");
    let tasks = alive_tasks();
    let Baseline {
        tasks: baseline_tasks,
        fds: baseline_fds,
        rss: baseline_rss,
    } = *baseline;
    assert!(
        tasks <= baseline_tasks + 4,
        "tasks alive: {tasks}, {baseline_tasks} after the warm-up"
    );
    let fds = open_fds();
    assert!(
        fds <= baseline_fds + 8,
        "file descriptors open: {fds}, {baseline_fds} after the warm-up"
    );
    let rss = rss_kib();
    eprintln!("soak: resident memory {baseline_rss} KiB after the warm-up, {rss} KiB at the end");
    assert!(
        rss < baseline_rss + 64 * 1024,
        "memory grew from {baseline_rss} KiB to {rss} KiB"
    );
    assert!(
        manager.retained() <= 64,
        "retention holds: {}",
        manager.retained()
    );
}

/// Children still starting when the server stops are stopped with it.
async fn children_still_starting_stop_with_the_server(stack: Stack, marker: &str) {
    for _ in 0..2 {
        let spawn = json!({"name": "starting", "task": "t"});
        let (failed, _) = stack.call("spawn_agent", spawn).await;
        assert!(!failed);
    }
    for _ in 0..400 {
        if processes_with(marker).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(processes_with(marker).len(), 2, "two children starting");
    stack.close().await;
    for _ in 0..60 {
        if processes_with(marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "children still starting outlived the shutdown: {:?}",
        processes_with(marker)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long-running; .ci/run runs it with a short duration"]
async fn thousands_of_calls_with_random_faults_leave_nothing_behind() {
    let seconds: u64 = std::env::var("MCP_AGENTS_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.stop_recording();
    let marker = format!("soak{}", std::process::id());
    let ws = soak_workspace(&mock, &marker);
    let mut stack = Stack::start(soak_manager(ws.path())).await;
    let baseline = warm_up(&stack, &mock).await;

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let Soaked { ids, counts } = soak(&mut stack, &mock, deadline).await;
    every_session_ends_well(&stack, &mock, &ids).await;
    nothing_is_left(&stack.manager, &mock, &baseline).await;
    let total: u64 = counts.values().sum();
    eprintln!(
        "soak: {total} calls in {seconds} s: {counts:?}; {} sessions",
        ids.len()
    );
    assert!(
        total > 100 * seconds / 10,
        "the soak made too few calls: {total}"
    );

    assert!(
        processes_with(&marker).is_empty(),
        "child processes left: {:?}",
        processes_with(&marker)
    );
    children_still_starting_stop_with_the_server(stack, &marker).await;
}
