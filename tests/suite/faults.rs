//! Faults through the real binary: a provider that resets, talks garbage or hangs; children
//! that are killed, flood stdout or never list their tools; a workspace of hostile files; and
//! the client going away or a signal. Each ends with a clear error code for that session and
//! the server still serving the others; no child process outlives its run or the server.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Generation};
use support::children::{self, agent, assert_no_process_left, processes_with, stdio_child};
use support::run_kit::KEY;

fn marker(tag: &str) -> String {
    format!(
        "{tag}{}x{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_faults_fail_only_their_session() {
    // Separate mocks, so each session gets exactly its own faults.
    let resets = MockProvider::start(KEY).await.unwrap();
    let garbage = MockProvider::start(KEY).await.unwrap();
    let hangs = MockProvider::start(KEY).await.unwrap();
    let healthy = MockProvider::start(KEY).await.unwrap();
    resets.push(vec![Step::Drop; 5]);
    garbage.push(vec![
        Step::Raw {
            status: 200,
            headers: vec![],
            body: "\u{0}garbage{".into()
        };
        5
    ]);
    hangs.push([Step::Hang]);
    let ws = tempfile::tempdir().unwrap();
    for (name, mock) in [
        ("resets", &resets),
        ("garbage", &garbage),
        ("hangs", &hangs),
        ("healthy", &healthy),
    ] {
        let text = agent(mock, name, "", "").replace("mcp_servers:\n\n", "");
        children::write(ws.path(), &format!(".agents/agents/{name}.md"), &text);
    }
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let resets_id = c.spawn("resets", "t").await;
    let garbage_id = c.spawn("garbage", "t").await;
    let hangs_id = c.spawn("hangs", "t").await;
    for n in 0..5 {
        healthy.push([Step::text(&format!("fine {n}"))]);
        let id = c.spawn("healthy", "t").await;
        assert_eq!(
            c.wait(&[&id], 20_000).await["agents"][0]["result"],
            format!("fine {n}"),
            "the server keeps serving"
        );
    }
    let failed = c.wait(&[&resets_id, &garbage_id], 30_000).await;
    assert_eq!(failed["timed_out"], false, "{failed}");
    for (record, expected) in failed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["the connection to 127.0.0.1 failed", "not JSON"])
    {
        assert_eq!(record["error"]["code"], "provider_error", "{record}");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(expected) && message.contains("after 5 attempts"),
            "{message}"
        );
    }
    let hanging = c.wait(&[&hangs_id], 0).await["agents"][0].clone();
    assert_eq!(hanging["status"], "running");
    assert_eq!(hanging["activity"]["phase"], "provider_request");
    let remaining = hanging["activity"]["operation_timeout_remaining_ms"]
        .as_u64()
        .unwrap();
    assert!(
        remaining < 120_000 && remaining > 60_000,
        "the 120 s bound is counting down: {remaining}"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_faults_fail_or_inform_only_their_session() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (killed_m, flood_m, silent_m) = (marker("killed"), marker("flood"), marker("silent"));
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/killed.md",
        &agent(&mock, "killed", &stdio_child("fx", &[], &killed_m, ""), ""),
    );
    children::write(
        ws.path(),
        ".agents/agents/flood.md",
        &agent(
            &mock,
            "flood",
            &stdio_child(
                "fx",
                &["--garbage"],
                &flood_m,
                "      startup_timeout_sec: 3\n",
            ),
            "",
        ),
    );
    children::write(
        ws.path(),
        ".agents/agents/silent.md",
        &agent(
            &mock,
            "silent",
            &stdio_child(
                "fx",
                &["--hang-list"],
                &silent_m,
                "      startup_timeout_sec: 1\n",
            ),
            "",
        ),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;

    // A child killed from outside in the middle of a call: the model hears of it.
    mock.push([
        Step::tool_call("fx__sleep", json!({"ms": 60_000})),
        Step::text("noticed"),
    ]);
    let id = c.spawn("killed", "t").await;
    c.wait_for_phase(&id, "tool_call").await;
    let pids = processes_with(&killed_m);
    assert!(!pids.is_empty(), "the child runs during the call");
    for pid in &pids {
        // SAFETY: signalling a test child process.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    let record = c.wait(&[&id], 30_000).await["agents"][0].clone();
    assert_eq!(record["result"], "noticed", "{record}");
    let body = mock.requests().last().unwrap().body.to_string();
    assert!(
        body.contains("closed the connection during the call"),
        "{body}"
    );

    // 1 MiB of non-protocol bytes on stdout before the server speaks: skipped, and it works.
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "through the noise"})),
        Step::text("heard"),
    ]);
    let id = c.spawn("flood", "t").await;
    let record = c.wait(&[&id], 30_000).await["agents"][0].clone();
    assert_eq!(record["result"], "heard", "{record}");
    assert!(
        mock.requests()
            .last()
            .unwrap()
            .body
            .to_string()
            .contains("echo: through the noise")
    );

    for (name, expected) in [("silent", "MCP server fx did not list its tools within 1 s")] {
        let started = Instant::now();
        let id = c.spawn(name, "t").await;
        let record = c.wait(&[&id], 30_000).await["agents"][0].clone();
        assert_eq!(record["status"], "failed", "{name}: {record}");
        assert_eq!(
            record["error"]["code"], "child_mcp_startup_error",
            "{name}: {record}"
        );
        assert!(
            record["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(expected),
            "{name}: {record}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{name} took {:?}",
            started.elapsed()
        );
    }
    for m in [&killed_m, &flood_m, &silent_m] {
        assert_no_process_left(m, 6).await;
    }
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_of_hostile_files_still_serves_its_valid_agent() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    children::write(
        root,
        ".agents/agents/valid.md",
        &agent(&mock, "valid", "", "").replace("mcp_servers:\n\n", ""),
    );
    let mut huge = String::from("---\nname: huge\ndescription: d\n---\n");
    huge.push_str(&"x".repeat(2 * 1024 * 1024));
    children::write(root, ".agents/agents/huge.md", &huge);
    children::write(
        root,
        ".agents/agents/nested.md",
        &format!(
            "---\nname: nested\ndescription: {}x{}\n---\nb\n",
            "[".repeat(200_000),
            "]".repeat(200_000)
        ),
    );
    let mut laughs = String::from("---\na: &a [x,x,x,x,x,x,x,x,x]\n");
    for (prev, name) in ('a'..='h').zip('b'..='i') {
        laughs.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    laughs.push_str("name: laughs\ndescription: d\n---\nb\n");
    children::write(root, ".agents/agents/laughs.md", &laughs);
    children::write(
        root,
        ".claude/agents/binary.md",
        b"\xff\xfe\x00\x01"
            .iter()
            .map(|b| *b as char)
            .collect::<String>()
            .as_str(),
    );
    std::os::unix::fs::symlink("loop-a.md", root.join(".claude/agents/loop-b.md")).unwrap();
    std::os::unix::fs::symlink("loop-b.md", root.join(".claude/agents/loop-a.md")).unwrap();
    std::os::unix::fs::symlink("..", root.join(".claude/agents/up")).unwrap();
    std::os::unix::fs::symlink("/", root.join(".claude/agents/rootfs")).unwrap();

    let started = Instant::now();
    let c = binary::stdio(root, Generation::Modern, &[]).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "startup took {:?}",
        started.elapsed()
    );
    let tools = c.tools().await;
    assert_eq!(
        tools[0].input_schema["properties"]["name"]["enum"],
        json!(["valid"])
    );
    mock.push([Step::text("still fine")]);
    let id = c.spawn("valid", "t").await;
    assert_eq!(
        c.wait(&[&id], 20_000).await["agents"][0]["result"],
        "still fine"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_stops_every_run_and_child_within_the_bound() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("eof");
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/a.md",
        &agent(&mock, "sleeper", &stdio_child("fx", &[], &m, ""), ""),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    mock.push(vec![
        Step::tool_call("fx__sleep", json!({"ms": 120_000}));
        4
    ]);
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(c.spawn("sleeper", "t").await);
    }
    for _ in 0..400 {
        let snapshot = c
            .wait(&ids.iter().map(String::as_str).collect::<Vec<_>>(), 0)
            .await;
        if snapshot["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["activity"]["phase"] == "tool_call")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let children_before = processes_with(&m);
    assert_eq!(children_before.len(), 4, "four children mid-call");
    let server = c.pid.unwrap();
    let closed = Instant::now();
    c.close().await; // closes stdin
    assert_no_process_left(&m, 6).await;
    assert!(closed.elapsed() < Duration::from_secs(6));
    for _ in 0..120 {
        if !std::path::Path::new(&format!("/proc/{server}")).exists()
            || std::fs::read_to_string(format!("/proc/{server}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server did not exit after its client went away");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_http_server_and_its_children() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("term");
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/a.md",
        &agent(&mock, "sleeper", &stdio_child("fx", &[], &m, ""), ""),
    );
    let (mut server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let c = binary::connect_http(&url, Generation::Modern, None).await;
    mock.push(vec![
        Step::tool_call("fx__sleep", json!({"ms": 120_000}));
        2
    ]);
    let a = c.spawn("sleeper", "t").await;
    let b = c.spawn("sleeper", "t").await;
    for _ in 0..400 {
        if processes_with(&m).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(processes_with(&m).len(), 2, "both children run mid-call");
    // A long wait is in flight when the signal arrives; it must not hold the server open.
    let waiting = tokio::spawn(async move { c.wait(&[&a, &b], 300_000).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "the wait is in flight");
    let signalled = Instant::now();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(server.id().unwrap() as i32, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("exits")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        signalled.elapsed() < Duration::from_secs(8),
        "{:?}",
        signalled.elapsed()
    );
    assert_no_process_left(&m, 2).await;
    let answered = tokio::time::timeout(Duration::from_secs(5), waiting).await;
    assert!(
        answered.is_ok(),
        "the pending wait was answered or dropped, not left hanging"
    );
}

// ----- Hardening (issue 14): a client that does not read stderr, stopping during child
// startup, SIGKILL of the server, descendants that leave their group -----

/// A workspace with one agent `name` whose one stdio child `fx` is the fixture with
/// `args`, marked `marker`.
fn one_agent(mock: &MockProvider, name: &str, args: &[&str], marker: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        &format!(".agents/agents/{name}.md"),
        &agent(mock, name, &stdio_child("fx", args, marker, ""), ""),
    );
    ws
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

async fn wait_for_processes(marker: &str, count: usize) {
    for _ in 0..400 {
        if processes_with(marker).len() == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "expected {count} processes marked {marker}, found {:?}",
        processes_with(marker)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_stderr_is_still_answered() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("chatty");
    let ws = one_agent(&mock, "chatty", &["--stderr-bytes", "1048576"], &m);
    // Our stderr is a pipe this test never reads (64 KiB fill it).
    let (c, stderr) = binary::stdio_with_stderr(
        ws.path(),
        Generation::Modern,
        &[],
        std::process::Stdio::piped(),
    )
    .await;
    let _unread = stderr.expect("a piped stderr");
    mock.push(vec![Step::text("ok"); 3]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(c.spawn("chatty", "t").await);
    }
    let targets: Vec<&str> = ids.iter().map(String::as_str).collect();
    let done = tokio::time::timeout(Duration::from_secs(60), c.wait(&targets, 30_000))
        .await
        .expect("the server keeps answering while nobody reads its stderr");
    for record in done["agents"].as_array().unwrap() {
        assert_eq!(record["result"], "ok", "{record}");
    }
    tokio::time::timeout(Duration::from_secs(10), c.tools())
        .await
        .expect("still answering");
    // Closing stdin ends it: before the client's transport escalates to signals (3 s).
    let closed = Instant::now();
    tokio::time::timeout(Duration::from_secs(30), c.close())
        .await
        .expect("closes");
    assert!(
        closed.elapsed() < Duration::from_secs(5),
        "the server took {:?} to exit after stdin closed",
        closed.elapsed()
    );
    assert_no_process_left(&m, 5).await;
}

#[derive(Debug, Clone, Copy)]
enum Stop {
    StdinEof,
    Signal(i32),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_still_starting_are_stopped_with_the_server() {
    let mock = MockProvider::start(KEY).await.unwrap();
    for stop in [
        Stop::StdinEof,
        Stop::Signal(libc::SIGTERM),
        Stop::Signal(libc::SIGINT),
    ] {
        let m = marker("starting");
        // Never answers server/discover: it is still starting when the server stops, well
        // within the 15 s startup bound.
        let ws = one_agent(&mock, "starting", &["--hang"], &m);
        let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
        for _ in 0..3 {
            c.spawn("starting", "t").await;
        }
        wait_for_processes(&m, 3).await;
        let server = c.pid.unwrap();
        match stop {
            Stop::StdinEof => c.close().await,
            Stop::Signal(signal) => {
                // SAFETY: signalling our own child process.
                unsafe { libc::kill(server as i32, signal) };
                for _ in 0..200 {
                    if !alive(server) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                assert!(!alive(server), "{stop:?}: the server exits");
                c.close().await;
            }
        }
        assert_no_process_left(&m, 4).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_the_server_leaves_no_child_or_grandchild() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("sigkill");
    let ws = tempfile::tempdir().unwrap();
    // Each child starts a grandchild that never reads its stdin: one stays in the child's
    // process group, one moves to a session of its own.
    for kind in ["group", "session"] {
        children::write(
            ws.path(),
            &format!(".agents/agents/{kind}.md"),
            &agent(
                &mock,
                kind,
                &stdio_child("fx", &["--grandchild", kind], &m, ""),
                "",
            ),
        );
    }
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    mock.push(vec![Step::tool_call("fx__sleep", json!({"ms": 60_000})); 2]);
    let a = c.spawn("group", "t").await;
    let b = c.spawn("session", "t").await;
    c.wait_for_phase(&a, "tool_call").await;
    c.wait_for_phase(&b, "tool_call").await;
    wait_for_processes(&m, 4).await;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(c.pid.unwrap() as i32, libc::SIGKILL) };
    assert_no_process_left(&m, 2).await;
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_child_started_in_a_session_of_its_own_ends_with_its_run() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("escaped");
    let ws = one_agent(&mock, "escaper", &["--grandchild", "session"], &m);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("done"),
    ]);
    let id = c.spawn("escaper", "t").await;
    assert_eq!(c.wait(&[&id], 30_000).await["agents"][0]["result"], "done");
    // The run is over, the server still serves: nothing of the run is left.
    assert_no_process_left(&m, 6).await;
    c.close().await;
}

/// The server on an empty workspace, spoken to line by line: stdin and stdout piped, stderr
/// collected.
struct RawServer {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: Option<tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl RawServer {
    fn start(workspace: &std::path::Path) -> RawServer {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(binary::BIN)
            .arg(workspace)
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
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

    async fn send(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next answer, within `secs`.
    async fn answer(&mut self, secs: u64) -> serde_json::Value {
        let line = tokio::time::timeout(
            Duration::from_secs(secs),
            self.stdout.as_mut().unwrap().next_line(),
        )
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("an answer, not the end of stdout");
        serde_json::from_str(&line).unwrap()
    }

    /// Peak resident memory of the server, in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let pid = self.child.id().unwrap();
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_stdio_line_gets_an_answer_and_nothing_is_held_beyond_the_limit() {
    let ws = tempfile::tempdir().unwrap();
    let mut server = RawServer::start(ws.path());
    let deep = format!("{}1{}\n", "[".repeat(200), "]".repeat(200));
    let cases: Vec<(Vec<u8>, i64, serde_json::Value)> = vec![
        (b"not json at all\n".to_vec(), -32700, json!(null)),
        // A JavaScript client that cut a string inside an emoji.
        (
            br#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"\ud800"}}"#
                .iter()
                .chain(b"\n")
                .copied()
                .collect(),
            -32700,
            json!(11),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":\"n\",\"method\":\"tools/list\",\"params\":{\"x\":1e309}}\n"
                .to_vec(),
            -32700,
            json!("n"),
        ),
        (deep.into_bytes(), -32700, json!(null)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":5}\n".to_vec(), -32600, json!(5)),
    ];
    for (line, code, id) in cases {
        server.send(&line).await;
        let answer = server.answer(5).await;
        assert_eq!(answer["error"]["code"], code, "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
    }
    // 400 MiB without a newline: answered once it passes 16 MiB, never held.
    let chunk = vec![b'x'; 1024 * 1024];
    for n in 0..400 {
        server.send(&chunk).await;
        if n == 20 {
            let answer = server.answer(5).await;
            assert_eq!(answer["error"]["code"], -32700, "{answer}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("longer than the 16 MiB"),
                "{answer}"
            );
        }
    }
    server.send(b"\n").await;
    // Still serving, and the skipped line did not swallow the next one.
    server
        .send(
            b"{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
        )
        .await;
    let discovered = server.answer(5).await;
    assert_eq!(discovered["id"], "d", "{discovered}");
    assert!(
        discovered["result"]["supportedVersions"].is_array(),
        "{discovered}"
    );
    let peak = server.peak_rss_kib();
    assert!(
        peak < 150 * 1024,
        "the server's resident memory peaked at {peak} KiB for 400 MiB sent"
    );
    let warnings = server.stderr.lock().unwrap().clone();
    assert!(
        warnings.matches("was refused").count() >= 6,
        "a warning for each refused line: {warnings}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdout_stops_the_server_as_stdin_eof_does() {
    let ws = tempfile::tempdir().unwrap();
    let mut server = RawServer::start(ws.path());
    server
        .send(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
        )
        .await;
    server.answer(10).await;
    // The client closes our stdout and keeps stdin open.
    drop(server.stdout.take());
    let status = tokio::time::timeout(Duration::from_secs(10), server.child.wait())
        .await
        .expect("the server stops once its stdout is closed")
        .unwrap();
    assert!(status.success(), "{status:?}");
}

// ----- HTTP: stalled clients, legacy sessions, who may use an id (issue 14) -----

const TOKEN_VAR: &str = "MCP_AGENTS_TEST_BEARER";
const TOKEN: &str = "bearer-test-token-14";

fn open_fds_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// `host:port` of an `http://host:port/mcp` URL.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// Opens `count` connections that each send `prefix` and then nothing more.
async fn stalled_connections(url: &str, count: usize, prefix: &[u8]) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let mut held = Vec::new();
    for _ in 0..count {
        let mut stream = tokio::net::TcpStream::connect(authority(url))
            .await
            .unwrap();
        stream.write_all(prefix).await.unwrap();
        held.push(stream);
    }
    held
}

const HALF_HEADERS: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_stalled_http_connections_hold_under_300_descriptors() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let pid = server.id().unwrap();
    let before = open_fds_of(pid);
    let held = stalled_connections(&url, 500, HALF_HEADERS).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = open_fds_of(pid);
    assert!(
        during < 300,
        "the server holds {during} descriptors with 500 stalled connections ({before} before)"
    );
    drop(held);
}

/// Long: the bounds themselves (headers 10 s, body 30 s) with real time.
/// `cargo test --test all -- --ignored suite::faults::stalled_http_clients_are_cut_off_at_the_bounds`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "waits past the 30 s body bound; .ci/run runs it"]
async fn stalled_http_clients_are_cut_off_at_the_bounds() {
    use tokio::io::AsyncReadExt;
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let pid = server.id().unwrap();
    let started = Instant::now();
    let mut headers = stalled_connections(&url, 500, HALF_HEADERS).await;
    // Whole headers, then 10 of the 1,000 bytes of body they announce.
    let bodies = stalled_connections(
        &url,
        40,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
    )
    .await;
    // A legitimate client gets through once the stalled headers are cut (10 s), even with
    // 500 of them queued.
    let legit = tokio::time::timeout(
        Duration::from_secs(60),
        binary::connect_http(&url, Generation::Modern, None),
    )
    .await
    .expect("a legitimate client is served while stalled ones wait");
    assert!(!legit.tools().await.is_empty());
    legit.close().await;
    // Every stalled-header connection is closed by the server: after 10 s, not at once.
    for stream in &mut headers {
        let mut byte = [0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut byte)).await;
        assert!(read.is_ok(), "a stalled-header connection stayed open");
    }
    let headers_cut = started.elapsed();
    assert!(
        headers_cut >= Duration::from_secs(9),
        "cut too early: {headers_cut:?}"
    );
    // Every stalled body gets 408 and the connection closes, after 30 s.
    for mut stream in bodies {
        let mut answer = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "a stalled-body connection stayed open");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }
    assert!(
        started.elapsed() >= Duration::from_secs(29),
        "bodies cut too early: {:?}",
        started.elapsed()
    );
    assert!(
        open_fds_of(pid) < 40,
        "descriptors freed: {}",
        open_fds_of(pid)
    );
}

/// POSTs a legacy `initialize` (with `token` as a bearer token); returns the session id.
async fn legacy_session(url: &str, token: Option<&str>) -> String {
    let mut request = mcp_agents::net::loopback_client().post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The status of a notification sent in legacy session `id` (202 while it lives, 404 after).
async fn use_session(url: &str, id: &str, token: Option<&str>) -> u16 {
    let mut request = mcp_agents::net::loopback_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", id)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_http_sessions_are_capped_at_64_least_recently_used_first() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (_server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let mut ids = Vec::new();
    for _ in 0..64 {
        ids.push(legacy_session(&url, None).await);
    }
    // The oldest is used again; the second oldest is now the least recently used.
    assert_eq!(use_session(&url, &ids[0], None).await, 202);
    for _ in 0..10 {
        ids.push(legacy_session(&url, None).await);
    }
    assert_eq!(use_session(&url, &ids[0], None).await, 202, "used, kept");
    for id in &ids[1..11] {
        assert_eq!(
            use_session(&url, id, None).await,
            404,
            "closed for a newer one"
        );
    }
    for id in &ids[11..] {
        assert_eq!(use_session(&url, id, None).await, 202);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_ids_are_usable_by_any_holder_of_it_and_by_nobody_else() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (_server, url) = binary::start_http_server(
        ws.path(),
        &["--auth-token-env", TOKEN_VAR],
        &[(TOKEN_VAR, TOKEN)],
    )
    .await
    .unwrap();
    // One trust domain: a second client holding the token may wait on and steer an agent
    // the first spawned (docs/security.md).
    let first = binary::connect_http(&url, Generation::Modern, Some(TOKEN)).await;
    let second = binary::connect_http(&url, Generation::Legacy, Some(TOKEN)).await;
    mock.push([Step::text("first answer")]);
    let id = first.spawn("worker", "t").await;
    assert_eq!(
        second.wait(&[&id], 20_000).await["agents"][0]["result"],
        "first answer"
    );
    mock.push([Step::text("steered")]);
    second
        .ok("send_input", json!({"target": id, "message": "more"}))
        .await;
    assert_eq!(
        first.wait(&[&id], 20_000).await["agents"][0]["result"],
        "steered"
    );
    // Knowing an id is not enough without the token, for agents or legacy sessions.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "send_input", "arguments": {"target": id, "message": "hijack"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let refused = mcp_agents::net::loopback_client()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_input")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let session = legacy_session(&url, Some(TOKEN)).await;
    let delete = |token: Option<&'static str>| {
        let url = url.clone();
        let session = session.clone();
        async move {
            let mut request = mcp_agents::net::loopback_client()
                .delete(&url)
                .header("mcp-session-id", &session);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            request.send().await.unwrap().status().as_u16()
        }
    };
    assert_eq!(delete(None).await, 401);
    assert_eq!(delete(Some("wrong")).await, 401);
    assert_eq!(
        use_session(&url, &session, Some(TOKEN)).await,
        202,
        "still there"
    );
    assert!(matches!(delete(Some(TOKEN)).await, 200 | 202 | 204));
    assert_eq!(use_session(&url, &session, Some(TOKEN)).await, 404);
    first.close().await;
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_failed_response_message_is_quoted_in_1000_characters() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    mock.push([Step::json(
        200,
        json!({"id": "resp_1", "object": "response", "status": "failed", "output": [],
               "error": {"code": "invalid_prompt", "message": "m".repeat(20 * 1024 * 1024)}}),
    )]);
    let id = c.spawn("worker", "t").await;
    // A 20 MiB message would make the record too large for the client to read at all.
    let record = tokio::time::timeout(Duration::from_secs(60), c.wait(&[&id], 30_000))
        .await
        .expect("the record is answered")["agents"][0]
        .clone();
    assert_eq!(record["error"]["code"], "provider_error");
    let message = record["error"]["message"].as_str().unwrap();
    assert!(
        message.chars().count() < 1200 && message.contains("mmmm"),
        "{} characters",
        message.chars().count()
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_past_the_transport_limit_reach_the_model_cut_not_as_failures() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = marker("huge");
    let (_http_child, http_url) = children::http_fixture(&[]).await;
    let ws = tempfile::tempdir().unwrap();
    let servers = format!(
        "{}{}",
        stdio_child("local", &[], &m, ""),
        children::http_child("remote", &http_url)
    );
    children::write(
        ws.path(),
        ".agents/agents/big.md",
        &agent(&mock, "big", &servers, ""),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    for (tool, bytes) in [
        ("local__huge", 20usize << 20),
        ("local__huge", 100 << 20),
        ("remote__huge", 40 << 20),
    ] {
        mock.push([
            Step::tool_call(tool, json!({"bytes": bytes})),
            Step::text("read it"),
        ]);
        let started = Instant::now();
        let id = c.spawn("big", "t").await;
        let record = c.wait(&[&id], 60_000).await["agents"][0].clone();
        assert_eq!(record["result"], "read it", "{tool} {bytes}: {record}");
        assert!(
            started.elapsed() < Duration::from_secs(45),
            "{tool} {bytes}: took {:?}, as long as a timed-out call",
            started.elapsed()
        );
        let body = mock.requests().last().unwrap().body.clone();
        let output = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["type"] == "function_call_output")
            .unwrap()["output"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            output.contains("[output truncated"),
            "{tool} {bytes}: {}",
            &output[output.len().saturating_sub(300)..]
        );
        assert!(
            output.len() <= 1024 * 1024 + 1024,
            "{tool} {bytes}: {} bytes reached the model",
            output.len()
        );
        assert!(
            !output.contains("timed out") && !output.contains("closed the connection"),
            "{tool} {bytes}: {}",
            &output[output.len().saturating_sub(300)..]
        );
        if tool == "local__huge" {
            assert!(
                output.starts_with("xxxxxxxx"),
                "the start of the text is kept"
            );
        }
    }
    c.close().await;
}
