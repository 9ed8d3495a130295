//! Issue 39, the first hour: what a new user reads in their first hour, through the binary.
//! What the parent model is told about what each agent can do, a reply that fills the
//! context window, Copilot's tool names, a Gemini file in a subfolder, the demo's output,
//! and Ctrl-C from the terminal.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use support::binary::{self, BIN};
use support::children::{self, agent};
use support::run_kit::KEY;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Point 11: Ctrl-C before the agent wrote any text says so, and names no parent: the
/// person at the terminal stopped it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_before_any_text_says_there_is_no_partial_result() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Too late.").delayed(Duration::from_secs(60))]);
    let ws = tempfile::tempdir().unwrap();
    children::write(ws.path(), ".agents/agents/s.md", &agent(&mock, "slow", "", ""));
    let child = tokio::process::Command::new(BIN)
        .args(["run", "slow", "Think."])
        .current_dir(ws.path())
        .env(binary::KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..400 {
        if !mock.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(mock.requests().len(), 1, "the model was asked before Ctrl-C");
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "error: cancelled: interrupted from the terminal (Ctrl-C); no partial result\n"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("by the parent"), "{stderr}");
    assert_eq!(text(&out.stdout), "", "no result, no partial result");
}
