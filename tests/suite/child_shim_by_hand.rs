//! `mcp-agents child-shim` run by hand (issue 34 item 12), the real binary under a real
//! shell: in a `set -m` pipeline the shim leads the pipeline's process group, which also
//! holds the pipeline's other commands. It kills what its child left (its own descendants),
//! and never a neighbour in its group. Before, it killed the `sleep` it was piped into.

use crate::support;

use support::binary::BIN;
use support::children::{assert_no_process_left, tagged_marker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shim_in_a_job_control_pipeline_kills_its_childs_leftovers_and_spares_its_neighbour() {
    let marker = tagged_marker("by-hand");
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    // The child leaves a grandchild behind, marked, and exits at once.
    std::fs::write(
        &spec,
        serde_json::json!({
            "command": "/bin/sh",
            "args": ["-c", "sleep 30 & exit 0"],
            "env": {"MCP_AGENTS_TEST_MARKER": marker},
        })
        .to_string(),
    )
    .unwrap();
    // The shim first in the pipeline: with job control its pid numbers the group, and the
    // `sleep` it is piped into is in that group without being its descendant.
    let script = r#"set -m
"$BIN" child-shim $$ 3<"$SPEC" | sleep 2
echo "neighbour: $?""#;
    let output = tokio::process::Command::new("bash")
        .args(["-c", script])
        .env("BIN", BIN)
        .env("SPEC", &spec)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("neighbour: 0"),
        "the sleep in the shim's group was killed: {stdout} {stderr}"
    );
    // What the child left is gone all the same.
    assert_no_process_left(&marker, 5).await;
}
