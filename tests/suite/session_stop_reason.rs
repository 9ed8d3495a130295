//! A stop's reason is kept within a bound (issue 34 item 9), through the real binary: the
//! reason is the one text of the parent's a record shows again (in `error.message`, in
//! every later answer about the agent), so a long one is cut, with "…", to
//! `STOP_REASON_BYTES`. Before, a 15 MiB reason was kept whole and every answer about the
//! agent carried it twice (31.5 MB).

use crate::support;

use mcp_agents::limits::STOP_REASON_BYTES;
use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Generation};
use support::run_kit::KEY;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_stop_reason_is_kept_cut_to_its_bound() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    mock.push([Step::Hang]);
    let id = c.spawn("worker", "Take your time.").await;
    c.wait_for_phase(&id, "provider_request").await;
    // 2 MiB of reason, in two-byte characters so a cut could fall inside one.
    let reason = format!("wrong file: {}", "é".repeat(1024 * 1024));
    let stopped = c
        .call(
            "send_input",
            json!({"target": id, "stop": true, "message": reason}),
        )
        .await;
    let record = stopped.structured_content.clone().unwrap();
    assert_eq!(record["status"], "failed", "{record}");
    let message = record["error"]["message"].as_str().unwrap();
    let kept = message
        .strip_prefix("stopped by the parent: ")
        .unwrap_or_else(|| panic!("{}", &message[..200.min(message.len())]));
    assert!(
        kept.len() <= STOP_REASON_BYTES,
        "the reason is kept as {} bytes",
        kept.len()
    );
    assert!(kept.starts_with("wrong file: éé"), "{kept}");
    assert!(kept.ends_with('…'), "{kept}");
    // Every later answer about the agent stays small: the record, twice (structured and
    // its text copy), is a few KiB.
    for answer in [
        stopped,
        c.call("wait_agent", json!({"targets": [id]})).await,
    ] {
        let size = serde_json::to_string(&answer).unwrap().len();
        assert!(size < 16 * 1024, "an answer of {size} bytes");
    }
    c.close().await;
}
