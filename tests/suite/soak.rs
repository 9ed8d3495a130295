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
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use support::binary::KEY_VAR;
use support::children::{self, agent, processes_with, stdio_child};
use support::run_kit::KEY;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

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
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/tooled.md",
        &agent(
            &mock,
            "tooled",
            &stdio_child("fx", &["--grandchild", "daemon"], &marker, ""),
            "max_turns: 4",
        ),
    );
    // Never answers server/discover: still starting when the server stops.
    children::write(
        ws.path(),
        ".agents/agents/starting.md",
        &agent(
            &mock,
            "starting",
            &stdio_child("fx", &["--hang"], &marker, ""),
            "",
        ),
    );
    children::write(
        ws.path(),
        ".agents/agents/plain.md",
        &agent(&mock, "plain", "", "max_turns: 3").replace("mcp_servers:\n\n", ""),
    );

    let catalog = load_catalog(
        &Workspace::open(ws.path()).unwrap(),
        &LoadOptions::default(),
    );
    let env: EnvLookup = Arc::new(|var| {
        if var == KEY_VAR {
            Some(KEY.to_owned())
        } else {
            std::env::var(var).ok()
        }
    });
    let manager = SessionManager::new(
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
        },
    );
    // A second connection to the same manager, spoken to in raw lines.
    let (raw_server, raw_client) = tokio::io::duplex(1 << 16);
    let (raw_server_read, raw_server_write) = tokio::io::split(raw_server);
    let raw_serving = tokio::spawn(mcp_agents::server::serve_stdio_on(
        manager.clone(),
        raw_server_read,
        raw_server_write,
    ));
    let (raw_read, mut raw_write) = tokio::io::split(raw_client);
    let mut raw_answers = tokio::io::BufReader::new(raw_read).lines();
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = tokio::spawn(mcp_agents::server::serve_stdio_on(
        manager.clone(),
        server_read,
        server_write,
    ));
    let client = ()
        .serve_with_lifecycle(
            client_end,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let call = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            let result = client
                .call_tool(
                    CallToolRequestParams::new(name)
                        .with_arguments(args.as_object().cloned().unwrap_or_default()),
                )
                .await
                .unwrap();
            (
                result.is_error == Some(true),
                result.structured_content.unwrap_or(Value::Null),
            )
        }
    };

    // Warm up: eight runs at once fill the HTTP connection pools (kept-alive connections are
    // tasks on both ends), so what remains at the end is compared with a pool already full.
    let mut warm = Vec::new();
    for _ in 0..8 {
        mock.push([Step::text("warm").delayed(Duration::from_millis(100))]);
        warm.push(
            call("spawn_agent", json!({"name": "plain", "task": "warm up"}))
                .await
                .1["agent_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    call("wait_agent", json!({"targets": warm, "timeout_ms": 10000})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let baseline_tasks = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let baseline_fds = open_fds();
    let baseline_rss = rss_kib();

    let mut rng = rand::rng();
    let mut ids: Vec<String> = Vec::new();
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let allowed_refusals: HashSet<&str> =
        ["capacity_exceeded", "queue_full", "unknown_agent"].into();
    while Instant::now() < deadline {
        let action = rng.random_range(0..11);
        let (is_error, value) = match action {
            0..=3 => {
                mock.push(random_steps(&mut rng));
                let name = if rng.random_bool(0.5) {
                    "tooled"
                } else {
                    "plain"
                };
                let outcome = call("spawn_agent", json!({"name": name, "task": "soak"})).await;
                if !outcome.0 {
                    ids.push(outcome.1["agent_id"].as_str().unwrap().to_owned());
                }
                outcome
            }
            4..=6 if !ids.is_empty() => {
                mock.push(random_steps(&mut rng));
                let target = pick(&ids, &mut rng);
                call(
                    "send_input",
                    json!({"target": target, "message": "more", "interrupt": rng.random_bool(0.3)}),
                )
                .await
            }
            10 => {
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
                raw_write.write_all(line).await.unwrap();
                if !line.ends_with(b"\n") {
                    raw_write.write_all(b"\n").await.unwrap();
                }
                let answer = tokio::time::timeout(Duration::from_secs(10), raw_answers.next_line())
                    .await
                    .expect("a malformed line is answered")
                    .unwrap()
                    .unwrap();
                let answer: Value = serde_json::from_str(&answer).unwrap();
                assert_eq!(answer["error"]["code"], code, "{answer}");
                *counts.entry("malformed line").or_default() += 1;
                continue;
            }
            _ if !ids.is_empty() => {
                let mut targets: Vec<&String> = (0..rng.random_range(1..=4))
                    .map(|_| pick(&ids, &mut rng))
                    .collect();
                targets.sort();
                targets.dedup();
                call(
                    "wait_agent",
                    json!({"targets": targets, "timeout_ms": rng.random_range(0..50)}),
                )
                .await
            }
            _ => continue,
        };
        let label = if is_error {
            let code = value["error"]["code"].as_str().unwrap_or("none").to_owned();
            assert!(
                allowed_refusals.contains(code.as_str()),
                "unexpected refusal {value}"
            );
            Box::leak(code.into_boxed_str()) as &str
        } else {
            [
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
            ][action]
        };
        *counts.entry(label).or_default() += 1;
    }
    // Let everything finish; every retained session must end completed or failed with a run
    // error code, never stuck.
    mock.push(vec![Step::text("late"); 200]);
    // Every session the soak created that the server still holds: `send_input` resumes
    // old sessions at random, so a running one can be anywhere in `ids`, not only among
    // the newest (running sessions are never evicted). Held ones are at most 64 terminal
    // plus the running.
    let mut finished = Value::Null;
    for _ in 0..60 {
        let held: Vec<&String> = ids
            .iter()
            .filter(|id| manager.snapshot(id).is_ok())
            .collect();
        let (_, value) = call("wait_agent", json!({"targets": held, "timeout_ms": 1000})).await;
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
    assert_eq!(manager.running(), 0);
    assert_eq!(
        mock.refusals(),
        0,
        "every request was a valid conversation, interrupts included"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(manager.run_tasks(), 0, "every run task has ended");
    let tasks = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
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
    // Children still starting when the server stops are stopped with it.
    for _ in 0..2 {
        let (failed, _) = call("spawn_agent", json!({"name": "starting", "task": "t"})).await;
        assert!(!failed);
    }
    for _ in 0..400 {
        if processes_with(&marker).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(processes_with(&marker).len(), 2, "two children starting");
    let _ = client.cancel().await;
    let _ = server.await;
    // Both halves: the pipe closes when neither is left.
    drop((raw_write, raw_answers));
    let _ = raw_serving.await;
    manager.shutdown(Duration::from_secs(6)).await;
    for _ in 0..60 {
        if processes_with(&marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "children still starting outlived the shutdown: {:?}",
        processes_with(&marker)
    );
}
