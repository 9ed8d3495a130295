//! The server going away takes everything with it, through the real binary: stdin or
//! stdout closed, SIGTERM, SIGKILL, children still starting, and what a child started in a
//! session of its own. No child process outlives its run or the server.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use serde_json::json;
use support::binary::RawServer;
use support::binary::{self, Generation};
use support::children::{
    assert_grandchild_ends_with_its_run, assert_no_process_left, processes_with,
    two_grandchildren_mid_call,
};
use support::{HttpServerUnderTest, ServerUnderTest, TestWorkspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_stops_every_run_and_child_within_the_bound() {
    let s = TestWorkspace::new()
        .marked("eof")
        .fixture_agent("sleeper", &[])
        .stdio()
        .await;
    let (mock, m, _ws, c) = s.into_parts();
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
    let HttpServerUnderTest {
        mock,
        marker: m,
        ws: _ws,
        process: mut server,
        url,
    } = TestWorkspace::new()
        .marked("term")
        .fixture_agent("sleeper", &[])
        .http(&[])
        .await;
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

#[derive(Debug, Clone, Copy)]
enum Stop {
    StdinEof,
    Signal(i32),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_still_starting_are_stopped_with_the_server() {
    for stop in [
        Stop::StdinEof,
        Stop::Signal(libc::SIGTERM),
        Stop::Signal(libc::SIGINT),
    ] {
        // Never answers server/discover: it is still starting when the server stops, well
        // within the 15 s startup bound.
        let s = TestWorkspace::new()
            .marked("starting")
            .fixture_agent("starting", &["--hang"])
            .stdio()
            .await;
        let ServerUnderTest {
            marker: m,
            c,
            ws: _ws,
            ..
        } = s;
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
    // Each child starts a grandchild that never reads its stdin: one stays in the child's
    // process group, one moves to a session of its own.
    let s = two_grandchildren_mid_call("sigkill", "session").await;
    let m = &s.marker;
    wait_for_processes(m, 4).await;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(s.pid.unwrap() as i32, libc::SIGKILL) };
    assert_no_process_left(m, 2).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_child_started_in_a_session_of_its_own_ends_with_its_run() {
    // The run is over, the server still serves: nothing of the run is left.
    assert_grandchild_ends_with_its_run("escaped", "escaper", "session").await;
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
