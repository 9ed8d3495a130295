//! Clients nobody here wrote (installed by `scripts/install-interop`): the Python SDK's
//! client (`mcp` 2.x) and the TypeScript SDK's (`@modelcontextprotocol/client` 2.x) drive
//! the binary over stdio and HTTP, in both protocol generations, calling all three tools,
//! receiving progress notifications and seeing an error result.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::mock::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, BIN, KEY_VAR};
use support::interop;
use support::run_kit::KEY;

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

async fn drive(sdk: Sdk, config: Value) -> Value {
    let mut command = match sdk {
        Sdk::Python => {
            let mut c = tokio::process::Command::new(interop::python());
            c.arg(interop::script("py_client.py"));
            c
        }
        Sdk::TypeScript => {
            // ESM resolves packages from the script's own folder, so the client runs from a
            // copy next to the installed node_modules.
            let copy = interop::dir().join("node/ts_client.mjs");
            std::fs::copy(interop::script("ts_client.mjs"), &copy).unwrap();
            let mut c = tokio::process::Command::new("node");
            c.arg(copy);
            c
        }
    };
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        command.arg(config.to_string()).kill_on_drop(true).output(),
    )
    .await
    .expect("the client finishes")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{sdk:?} client failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{sdk:?}: {e}: {stdout}"))
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
            let report = drive(sdk, config).await;
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
