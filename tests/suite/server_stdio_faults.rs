//! A stdio client that misbehaves (SPEC §10): lines that are not JSON-RPC messages, lines
//! past the 16 MiB limit, a client that never reads stderr. Every line gets an answer and
//! nothing is held beyond the limit.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use serde_json::json;
use support::TestWorkspace;
use support::binary::RawServer;
use support::binary::{self, Generation};
use support::children::assert_no_process_left;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_stderr_is_still_answered() {
    let (mock, m, ws) = TestWorkspace::new()
        .marked("chatty")
        .fixture_agent("chatty", &["--stderr-bytes", "1048576"])
        .written()
        .await
        .into_parts();
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
