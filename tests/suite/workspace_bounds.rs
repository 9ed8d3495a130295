//! The bounds of the built-in workspace server that hold for any request and any file
//! (issue 34, items 8, 10 and 13), through a real `mcp-agents workspace-tools DIR`: a
//! request larger than it reads is answered at once with why, a `read` stops after a bounded
//! scan and says where, and one run's writes are bounded in bytes and in files created.

use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::workspace::{Tools, serve, write};

/// Far longer than any answer here takes; a request dropped without an answer never ends.
const ANSWER_BOUND: Duration = Duration::from_secs(20);

/// A call's answer as text: a tool result's text, or a JSON-RPC error's message (marked).
async fn answer(tools: &Tools, tool: &str, arguments: Value) -> (bool, String) {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap());
    let started = Instant::now();
    let result = tokio::time::timeout(ANSWER_BOUND, tools.client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool}: no answer in {ANSWER_BOUND:?}"));
    eprintln!("{tool} answered in {} ms", started.elapsed().as_millis());
    match result {
        Ok(result) => (
            result.is_error == Some(true),
            result.content[0].as_text().unwrap().text.clone(),
        ),
        Err(ServiceError::McpError(e)) => (true, format!("JSON-RPC error: {}", e.message)),
        Err(other) => panic!("{tool}: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_of_any_size_is_answered_at_once() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    let tools = serve(dir).await;
    // Just under the 16 MiB a file may have, and twice as long as JSON: written.
    let quotes = "\"".repeat(9 * 1024 * 1024);
    let (failed, text) = answer(
        &tools,
        "write",
        json!({"path": "quotes.txt", "content": quotes}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(
        std::fs::metadata(dir.join("quotes.txt")).unwrap().len(),
        9 * 1024 * 1024
    );
    // Over the cap for a file, under what the server reads: the write's own refusal.
    let (failed, text) = answer(
        &tools,
        "write",
        json!({"path": "big.txt", "content": "x".repeat(17 * 1024 * 1024)}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        text,
        "`content` is 17825792 bytes; `write` writes files of at most 16 MiB"
    );
    // Past what the server reads in one message: read through, answered with why.
    let (failed, text) = answer(
        &tools,
        "write",
        json!({"path": "huge.txt", "content": "\u{1}".repeat(8 * 1024 * 1024)}),
    )
    .await;
    assert!(failed);
    assert!(
        text.contains("more than the 32 MiB the workspace server reads in one request")
            && text.contains("files of at most 16 MiB"),
        "{text}"
    );
    assert!(!dir.join("big.txt").exists() && !dir.join("huge.txt").exists());
    // And the server reads on: the next call is answered.
    let (failed, text) = answer(&tools, "list", json!({})).await;
    assert!(!failed && text.contains("quotes.txt"), "{text}");
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_past_a_line_of_a_tebibyte_stops_and_says_where() {
    let ws = tempfile::tempdir().unwrap();
    let text: String = (1..=1000).map(|i| format!("line {i:>4}\n")).collect();
    write(ws.path(), "sparse.log", &text);
    // Line 1001 is 1 TiB of NUL bytes: a hole, read as zeros.
    std::fs::File::options()
        .write(true)
        .open(ws.path().join("sparse.log"))
        .unwrap()
        .set_len(text.len() as u64 + (1 << 40))
        .unwrap();
    let tools = serve(ws.path()).await;
    let (failed, answered) = answer(&tools, "read", json!({"path": "sparse.log"})).await;
    assert!(!failed, "{answered}");
    assert!(
        answered.starts_with("     1\tline    1\n")
            && answered.contains("  1000\tline 1000\n")
            && !answered.contains("  1001\t"),
        "{}",
        &answered[answered.len().saturating_sub(500)..]
    );
    assert!(
        answered.ends_with(
            "[`read` scans at most the first 256 MiB of a file: it stopped there, inside line \
             1001, so lines 1001 and after cannot be shown]\n"
        ),
        "{}",
        &answered[answered.len().saturating_sub(500)..]
    );
    // Asked for lines past it: a refusal that says where the scan stopped.
    let (failed, answered) = answer(
        &tools,
        "read",
        json!({"path": "sparse.log", "offset": 1002}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        answered,
        "`sparse.log`: `read` scans at most the first 256 MiB of a file, and it stopped there \
         inside line 1001, before line 1002"
    );
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_writes_at_most_256_mib_and_creates_at_most_1000_files() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    let tools = serve(dir).await;
    // 16 writes of 16 MiB: 256 MiB, the most one run writes; the 17th is refused.
    let content = "y".repeat(16 * 1024 * 1024);
    for i in 0..16 {
        let (failed, text) = answer(
            &tools,
            "write",
            json!({"path": "data.bin", "content": content}),
        )
        .await;
        assert!(!failed, "write {i}: {text}");
    }
    let (failed, text) = answer(&tools, "write", json!({"path": "more.txt", "content": "z"})).await;
    assert!(failed);
    assert_eq!(
        text,
        "`more.txt` was not changed: this run has written 268435456 bytes with `edit` and \
         `write`, and one run writes at most 256 MiB (this change adds 1 byte); a run that \
         needs more is too large for one agent: finish here and say what is left"
    );
    assert!(!dir.join("more.txt").exists());
    let _ = tools.client.cancel().await;

    // A new run: 1,000 new files, then no more (replacing one it made is still a change).
    let tools = serve(dir).await;
    let mut created = 0;
    for batch in 0..50 {
        let calls = (0..20).map(|i| {
            let path = format!("gen/{batch:02}/f{i:02}.txt");
            answer(&tools, "write", json!({"path": path, "content": "x\n"}))
        });
        for (failed, text) in futures_util::future::join_all(calls).await {
            assert!(!failed, "{text}");
            created += 1;
        }
    }
    assert_eq!(created, 1000);
    let (failed, text) = answer(
        &tools,
        "write",
        json!({"path": "gen/one-more.txt", "content": "x\n"}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        text,
        "`gen/one-more.txt` was not created: this run has created 1000 files with `write`, the \
         most one run creates; a run that needs more is too large for one agent: finish here \
         and say what is left"
    );
    let (failed, text) = answer(
        &tools,
        "write",
        json!({"path": "gen/00/f00.txt", "content": "changed\n"}),
    )
    .await;
    assert!(!failed, "{text}");
    let _ = tools.client.cancel().await;
}
