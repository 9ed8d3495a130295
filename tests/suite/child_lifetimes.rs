//! A child lives as long as its run (SPEC §8.2), through the real binary: no child outlives
//! a failure, an interrupt or the server; a finished session holds none and a resume
//! reconnects; a dropped connection ends its child.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::Step;
use serde_json::json;
use support::ServerUnderTest;
use support::binary::{self};
use support::children::{self, assert_no_process_left, call_outputs, tagged_marker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_failure_interruption_or_the_server() {
    let s = ServerUnderTest::fixture_agent("worker", &[]).await;
    let (mock, m, _ws, c) = s.into_parts();
    // Failure: the provider refuses while the child runs.
    mock.push([Step::openai_error(400, "invalid_request_error", None, "no")]);
    assert_eq!(
        c.run_to_end("worker", "Use the tools.").await["status"],
        "failed"
    );
    assert_no_process_left(&m, 6).await;
    // The server going away mid-call.
    mock.push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let id = c.spawn("worker", "sleep").await;
    c.wait_for_phase(&id, "tool_call").await;
    assert!(
        !children::processes_with(&m).is_empty(),
        "the child runs during the call"
    );
    c.close().await;
    assert_no_process_left(&m, 8).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_session_holds_no_child_and_a_resume_reconnects() {
    let s = ServerUnderTest::fixture_agent("again", &[]).await;
    s.mock.push([
        Step::tool_call("fx__echo", json!({"text": "first"})),
        Step::text("first done"),
        Step::tool_call("fx__echo", json!({"text": "second"})),
        Step::text("second done"),
    ]);
    let id = s.spawn("again", "Go.").await;
    assert_eq!(s.wait_one(&id, 30_000).await["result"], "first done");
    assert_no_process_left(&s.marker, 6).await;
    s.ok("send_input", json!({"target": id, "message": "Once more."}))
        .await;
    let record = s.wait_one(&id, 30_000).await;
    assert_eq!(record["result"], "second done", "{record}");
    assert_eq!(
        call_outputs(&s.mock),
        ["echo: first", "echo: second"],
        "one conversation, two runs"
    );
    s.close_once_children_gone(6).await;
}

/// A connection dropped without `shutdown` (a run that panicked drops its tools) still ends
/// its child and the child's own children, as `npx` servers have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_dropped_without_shutdown_ends_its_child() {
    let m = tagged_marker("m");
    let launch = mcp_agents::child_mcp::Launch::Stdio {
        command: "/bin/sh".to_owned(),
        args: vec![
            "-c".to_owned(),
            format!("sleep 300 & exec {} fixture-server", binary::BIN),
        ],
        env: [("MCP_AGENTS_TEST_MARKER".to_owned(), m.clone())].into(),
        cwd: std::env::temp_dir(),
        shim: Some(mcp_agents::child_mcp::SelfCommand::new(binary::BIN, &[])),
    };
    let (connection, tools) =
        mcp_agents::child_mcp::connect_child("fx", &launch, Duration::from_secs(15))
            .await
            .unwrap();
    assert!(!tools.is_empty());
    assert_eq!(
        children::processes_with(&m).len(),
        2,
        "the child and its grandchild run"
    );
    drop(connection);
    assert_no_process_left(&m, 6).await;
}
