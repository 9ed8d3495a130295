//! The event streams a provider's reply arrives in, read through the real binary
//! (SPEC §6.1 "Streaming"; issue 23 items 8 and 11, issue 24 item 8): one event of many MiB
//! arriving in network-sized pieces is read in linear time, a keep-alive comment with a
//! byte that is not UTF-8 is skipped without failing the reply, and a stream cut right
//! after its last event, before the blank line that closes it, completes the reply instead
//! of sending the (billed) request again.

use crate::support;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Generation};
use support::run_kit::KEY;

/// The test workspace's agent on each wire.
const AGENTS: [&str; 2] = ["worker", "claude-worker"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_event_without_its_blank_line_completes_the_reply_once() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    for agent in AGENTS {
        let before = mock.requests().len();
        mock.push([Step::text(&format!("{agent} done")).unclosed()]);
        let record = c.run_to_end(agent, "Go.").await;
        assert_eq!(record["status"], "completed", "{agent}: {record}");
        assert_eq!(record["result"], format!("{agent} done"));
        assert_eq!(
            mock.requests().len() - before,
            1,
            "{agent}: the reply was complete; the request is not sent again"
        );
    }
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_comment_with_a_stray_byte_does_not_fail_the_reply() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    for agent in AGENTS {
        let before = mock.requests().len();
        mock.push([Step::text("still fine").with_keep_alive(b"OPENROUTER PROCESSING \xff\xfe")]);
        let record = c.run_to_end(agent, "Go.").await;
        assert_eq!(record["status"], "completed", "{agent}: {record}");
        assert_eq!(record["result"], "still fine");
        assert_eq!(mock.requests().len() - before, 1, "{agent}: not retried");
    }
    c.close().await;
}

/// One event of 16 MiB (a tool call's input, in one `input_json_delta`), arriving 16 KiB
/// at a time. The old parser re-read everything it held for each piece it got (quadratic:
/// 25 s of CPU for a 16 MiB line in a release build, many times more in a debug one); the
/// reply is now read as fast as it arrives, and the run goes on to its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_event_of_16_mib_is_read_as_it_arrives() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let blob = "x".repeat(16 * 1024 * 1024);
    mock.push([
        Step::tool_call("nothing__here", json!({"blob": blob})).in_pieces(16 * 1024),
        Step::text("read it all"),
    ]);
    let id = c.spawn("claude-worker", "Send a lot.").await;
    let started = std::time::Instant::now();
    let done = c.wait(&[&id], 60_000).await;
    let record = &done["agents"][0];
    assert_eq!(
        done["timed_out"], false,
        "still reading after {:?}: {record}",
        started.elapsed()
    );
    assert_eq!(record["status"], "completed", "{}", record["error"]);
    assert_eq!(record["result"], "read it all");
    // The tool call came whole: its 16 MiB went back in the next request.
    let sent = &mock.requests()[1].body;
    let echoed = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .find(|block| block["type"] == "tool_use")
        .unwrap();
    assert_eq!(
        echoed["input"]["blob"].as_str().map(str::len),
        Some(blob.len())
    );
    c.close().await;
}
