//! Clients nobody here wrote (installed by `scripts/install-interop`): the Python SDK's
//! client (`mcp` 2.x) and the TypeScript SDK's (`@modelcontextprotocol/client` 2.x) drive
//! the binary over stdio and HTTP, in both protocol generations, calling all three tools,
//! receiving progress notifications and seeing an error result; and they drive the
//! built-in workspace server, checking its structured results against its output schemas.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, BIN, KEY_VAR};
use support::interop;
use support::run_kit::KEY;

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

/// Runs the client script of `sdk` (`scripts`: the Python one, the TypeScript one) with
/// `config`; returns the JSON report it prints last.
async fn drive(sdk: Sdk, scripts: (&str, &str), config: Value) -> Value {
    let mut command = match sdk {
        Sdk::Python => {
            let mut c = tokio::process::Command::new(interop::python());
            c.arg(interop::script(scripts.0));
            c
        }
        Sdk::TypeScript => {
            // ESM resolves packages from the script's own folder, so the client runs from a
            // copy next to the installed node_modules.
            let copy = interop::dir().join("node").join(scripts.1);
            std::fs::copy(interop::script(scripts.1), &copy).unwrap();
            let mut c = tokio::process::Command::new("node");
            c.arg(copy);
            c
        }
    };
    interop::last_json_line(
        command.arg(config.to_string()),
        Duration::from_secs(60),
        &format!("{sdk:?} client failed"),
    )
    .await
}

fn check(report: &Value, label: &str, modern: bool) {
    assert_eq!(
        report["tools"],
        json!(["spawn_agent", "send_input", "wait_agent"]),
        "{label}"
    );
    assert_eq!(
        report["protocol_version"],
        if modern { "2026-07-28" } else { "2025-11-25" },
        "{label}: the negotiated version"
    );
    assert_eq!(report["spawn"]["status"], "running", "{label}");
    let agent = &report["wait"]["agents"][0];
    assert_eq!(agent["status"], "completed", "{label}: {report}");
    assert_eq!(agent["result"], "first answer", "{label}");
    let progress = report["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "{label}: no progress notification");
    for p in progress {
        assert!(
            p["message"].as_str().unwrap().starts_with("worker "),
            "{label}: {p}"
        );
    }
    assert_eq!(report["send_input"]["status"], "running", "{label}");
    assert_eq!(
        report["wait_again"]["agents"][0]["result"], "second answer",
        "{label}"
    );
    assert_eq!(report["error"]["is_error"], true, "{label}");
    assert_eq!(
        report["error"]["structured"]["error"]["code"], "invalid_input",
        "{label}"
    );
    let text: Value = serde_json::from_str(report["error"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, report["error"]["structured"], "{label}");
}

fn script_steps() -> Vec<Step> {
    vec![
        Step::openai_error(500, "server_error", None, "transient")
            .delayed(Duration::from_millis(300)),
        Step::text("first answer").delayed(Duration::from_millis(200)),
        Step::text("second answer"),
    ]
}

async fn all_combinations(sdk: Sdk) -> Vec<String> {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (_server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let mut seen = Vec::new();
    for transport in ["stdio", "http"] {
        for (mode, modern) in [("2026-07-28", true), ("legacy", false)] {
            mock.push(script_steps());
            let config = json!({
                "transport": transport,
                "mode": mode,
                "command": BIN,
                "args": [ws.path()],
                "env": {KEY_VAR: KEY, "PATH": std::env::var("PATH").unwrap_or_default()},
                "url": url,
            });
            let label = format!("{sdk:?} {transport} {mode}");
            let report = drive(sdk, ("py_client.py", "ts_client.mjs"), config).await;
            check(&report, &label, modern);
            seen.push(format!(
                "{label}: {} progress notification(s), e.g. {:?}",
                report["progress"].as_array().unwrap().len(),
                report["progress"][0]["message"]
            ));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_works_in_every_combination() {
    for line in all_combinations(Sdk::Python).await {
        eprintln!("{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_works_in_every_combination() {
    for line in all_combinations(Sdk::TypeScript).await {
        eprintln!("{line}");
    }
}

/// The workspace server's answers as a third-party client receives them: each SDK checks
/// structured content against the tool's output schema and fails the call otherwise.
async fn workspace_tools(sdk: Sdk) {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/lib.rs"),
        "pub fn limit() -> u32 {\n    8\n}\n",
    )
    .unwrap();
    std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
    let calls = json!([
        ["read", {"path": "src/lib.rs", "limit": 2}],
        ["list", {"path": "src"}],
        ["glob", {"pattern": "*.rs"}],
        ["grep", {"pattern": "limit", "context": 1}],
        ["grep", {"pattern": "fn", "output_mode": "count"}],
        ["read", {"path": "../outside.txt"}],
    ]);
    let config = json!({
        "command": BIN,
        "args": ["workspace-tools", ws.path()],
        "env": {"PATH": std::env::var("PATH").unwrap_or_default()},
        "calls": calls,
    });
    let report = drive(sdk, ("workspace_client.py", "workspace_client.mjs"), config).await;
    assert_eq!(
        report["protocol_version"], "2026-07-28",
        "{sdk:?}: {report}"
    );
    for tool in ["read", "list", "glob", "grep"] {
        assert_eq!(
            report["tools"][tool],
            json!({"read_only": true, "has_output_schema": true}),
            "{sdk:?} {tool}"
        );
    }
    let calls = report["calls"].as_array().unwrap();
    for call in &calls[..5] {
        assert_eq!(call["is_error"], false, "{sdk:?}: {call}");
        assert!(call["structured"].is_object(), "{sdk:?}: {call}");
    }
    assert_eq!(
        calls[0]["text"],
        "     1\tpub fn limit() -> u32 {\n     2\t    8\n[lines 1-2 shown; more lines follow; continue with offset 3]\n"
    );
    assert_eq!(calls[0]["structured"]["next_offset"], 3);
    assert_eq!(calls[2]["structured"]["files"], json!(["src/lib.rs"]));
    assert_eq!(calls[4]["text"], "src/lib.rs:1\n");
    assert_eq!(calls[5]["is_error"], true, "{sdk:?}");
    assert!(
        calls[5]["text"]
            .as_str()
            .unwrap()
            .contains("climbs out of the workspace"),
        "{sdk:?}: {}",
        calls[5]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_accepts_the_workspace_tools() {
    workspace_tools(Sdk::Python).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_accepts_the_workspace_tools() {
    workspace_tools(Sdk::TypeScript).await;
}
