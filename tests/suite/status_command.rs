//! `mcp-agents status [DIR] [--json]` through the binary against the mock provider (SPEC
//! §7.1): the server of a workspace and each of its agents, one human line each or the
//! snapshots as JSON; no server running is exit 0 with one line, or `[]`.

use crate::support;

use std::os::unix::fs::MetadataExt;

use serde_json::{Value, json};

use mcp_agents::testkit::{MockProvider, Step};
use support::binary::{self, Generation};
use support::children::{agent, stdio_child, tagged_marker, write};
use support::run_kit::KEY;
use support::status as st;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_lists_the_server_and_each_agent_as_json_and_as_lines() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("All clear.\nNothing else.")]);
    mock.push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let ws = tempfile::tempdir().unwrap();
    let fx = stdio_child("fx", &[], &tagged_marker("status-cmd"), "");
    write(
        ws.path(),
        ".agents/agents/finder.md",
        &agent(&mock, "finder", &fx, ""),
    );
    let runtime = st::runtime_dir();
    let c = binary::stdio(ws.path(), Generation::Modern, &st::env(runtime.path())).await;
    let done = c.run_to_end("finder", "Check it.").await;
    let running = c.spawn("finder", "Sleep on it.").await;
    c.wait_for_phase(&running, "tool_call").await;

    let snapshots = st::snapshots(ws.path(), runtime.path()).await;
    assert_eq!(snapshots.len(), 1, "{snapshots:?}");
    let server = &snapshots[0]["server"];
    assert_eq!(server["pid"], c.pid.unwrap());
    let canonical = ws.path().canonicalize().unwrap();
    assert_eq!(server["workspace"], canonical.to_str().unwrap());
    assert_eq!(
        server["agents"],
        json!({"running": 1, "completed": 1, "failed": 0})
    );
    assert_eq!(server["usage"]["tool_calls"], 1);
    let agents = snapshots[0]["agents"].as_array().unwrap();
    let ids: Vec<&Value> = agents.iter().map(|a| &a["agent_id"]).collect();
    assert_eq!(ids, [&done["agent_id"], &json!(running)], "spawn order");
    assert_eq!(agents[0]["status"], "completed");
    assert_eq!(agents[0]["result"], "All clear.");
    assert_eq!(agents[0]["turns"], done["turns"]);
    assert_eq!(agents[1]["activity"]["phase"], "tool_call");
    let line = agents[1]["line"].as_str().unwrap();
    assert!(
        line.starts_with(&format!("finder {}: running ", &running[..8]))
            && line.contains("Calling fx.sleep"),
        "{line}"
    );

    let human = st::status(ws.path(), runtime.path(), false).await;
    assert_eq!(human.code, Some(0), "{}", human.stderr);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", human.stdout);
    assert!(
        lines[0].starts_with(&format!(
            "mcp-agents server {} (stdio): 1 running, 1 completed, 0 failed",
            c.pid.unwrap()
        )),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with(&format!(
        "  finder {}: completed in ",
        &done["agent_id"].as_str().unwrap()[..8]
    )));
    assert!(
        lines[1].ends_with(": All clear."),
        "the first line only: {}",
        lines[1]
    );
    assert!(lines[2].starts_with(&format!("  finder {}: running ", &running[..8])));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_running_is_exit_0_with_one_line_or_an_empty_list() {
    let ws = tempfile::tempdir().unwrap();
    let runtime = st::runtime_dir();
    let human = st::status(ws.path(), runtime.path(), false).await;
    assert_eq!(human.code, Some(0), "{}", human.stderr);
    let canonical = ws.path().canonicalize().unwrap();
    assert_eq!(
        human.stdout,
        format!(
            "no mcp-agents server is running for {}\n",
            canonical.display()
        )
    );
    assert_eq!(
        st::snapshots(ws.path(), runtime.path()).await,
        Vec::<Value>::new()
    );
    let missing = st::status(&ws.path().join("nope"), runtime.path(), false).await;
    assert_eq!(missing.code, Some(2), "a usage error: {}", missing.stderr);
    assert!(
        missing.stderr.contains("does not exist"),
        "{}",
        missing.stderr
    );
}

/// Codex starts its servers with a reduced environment (no `XDG_RUNTIME_DIR`): the server
/// then uses the temp directory, and `status` from a shell that has the variable finds it
/// there all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_without_the_runtime_dir_is_found_from_a_shell_with_it() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = st::workspace(&mock);
    let temp = st::runtime_dir();
    let shell_runtime = st::runtime_dir();
    let temp_dir = temp.path().to_str().unwrap();
    let c = binary::stdio(
        ws.path(),
        Generation::Modern,
        &[("TMPDIR", temp_dir), ("XDG_RUNTIME_DIR", "")],
    )
    .await;
    let pid = c.pid.unwrap();
    let uid = std::fs::metadata(temp.path()).unwrap().uid();
    let dir = temp.path().join(format!("mcp-agents-{uid}"));
    for _ in 0..1000 {
        if dir.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let out = tokio::process::Command::new(binary::BIN)
        .args(["status", "--json"])
        .arg(ws.path())
        .env("TMPDIR", temp_dir)
        .env("XDG_RUNTIME_DIR", shell_runtime.path())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snapshots: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(snapshots[0]["server"]["pid"], pid, "{snapshots}");
    c.close().await;
}
