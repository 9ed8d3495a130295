//! The event streams a provider's reply arrives in, read through the real binary
//! (SPEC §6.1 "Streaming"; issue 23 items 8 and 11, issue 24 item 8): one event of many MiB
//! arriving in network-sized pieces is read in linear time, a keep-alive comment with a
//! byte that is not UTF-8 is skipped without failing the reply, and a stream cut right
//! after its last event, before the blank line that closes it, completes the reply instead
//! of sending the (billed) request again.

use crate::support;

use mcp_agents::testkit::Step;
use support::binary;
use support::run_kit::KEY;
use support::{MockWorkspace, ServerUnderTest, TestWorkspace};

/// The test workspace's agent on each wire.
const AGENTS: [&str; 2] = ["worker", "claude-worker"];

/// Each agent of [`AGENTS`] answers with the reply `step` (given the agent's name) makes,
/// whose text is `result`, in one request (`retried` says what a second one would mean).
async fn each_agent_completes_in_one_request(
    step: impl Fn(&str) -> Step,
    result: impl Fn(&str) -> String,
    retried: &str,
) {
    let s = ServerUnderTest::stdio().await;
    for agent in AGENTS {
        let before = s.mock.requests().len();
        s.mock.push([step(agent)]);
        let record = s.run_to_end(agent, "Go.").await;
        assert_eq!(record["status"], "completed", "{agent}: {record}");
        assert_eq!(record["result"], result(agent));
        assert_eq!(s.mock.requests().len() - before, 1, "{agent}: {retried}");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_event_without_its_blank_line_completes_the_reply_once() {
    each_agent_completes_in_one_request(
        |agent| Step::text(&format!("{agent} done")).unclosed(),
        |agent| format!("{agent} done"),
        "the reply was complete; the request is not sent again",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_comment_with_a_stray_byte_does_not_fail_the_reply() {
    each_agent_completes_in_one_request(
        |_| Step::text("still fine").with_keep_alive(b"OPENROUTER PROCESSING \xff\xfe"),
        |_| "still fine".to_owned(),
        "not retried",
    )
    .await;
}

/// One text delta of 16 MiB, arriving 16 KiB at a time, through `mcp-agents run` (whose
/// stdout takes an answer of any size). The old parser re-read everything it held for each
/// piece it got (quadratic: 25 s of CPU for a 16 MiB line in a release build, and still
/// reading after 60 s in a debug one); the reply is now read as fast as it arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_of_16_mib_in_one_event_is_read_as_it_arrives() {
    let MockWorkspace { mock, ws, .. } = TestWorkspace::new().standard_agents().written().await;
    let answer = "x".repeat(16 * 1024 * 1024);
    mock.push([Step::text(&answer).in_pieces(16 * 1024)]);
    let run = tokio::process::Command::new(binary::BIN)
        .args(["run", "--workspace"])
        .arg(ws.path())
        .args(["claude-worker", "Write a lot."])
        .env(binary::KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the answer within 60 s")
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.stdout.len(),
        answer.len() + 1,
        "the answer and a newline"
    );
}
