//! Issue 39, point 3: every shipped example (`examples/workspace`) runs. Each agent runs
//! through `mcp-agents run`, as written, against stand-ins for what is outside this machine:
//! the provider mocks for the models (through `OPENAI_BASE_URL` and `ANTHROPIC_BASE_URL`, or
//! the local model's `base_url`), the project's fixture server (a real MCP 2026-07-28
//! server) for GitHub's remote server and for what `uvx` would start. Nothing else of a file
//! changes, so a child that could never start (the old `docs-writer`'s npm filesystem server,
//! which needs a `docs/` folder and speaks only the older protocol) fails here. And `check
//! --servers` reports a child that would fail at spawn in the readiness warnings' form.

use crate::support;

use std::path::Path;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{BIN, run_json};
use support::children::http_fixture;
use support::run_kit::KEY;

/// GitHub's remote MCP server, as the examples name it.
const GITHUB_MCP: &str = "https://api.githubcopilot.com/mcp/";
/// The local model's endpoint, as `local-explainer` names it.
const OLLAMA: &str = "http://localhost:11434/v1";

/// The example workspace, copied, with GitHub's server and the local model pointed at
/// `github` and `mock`, and a directory holding a `uvx` that starts the fixture server.
fn example_copy(github: &str, mock: &MockProvider) -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    for (rel, text) in mcp_agents::cli::EXAMPLE_WORKSPACE {
        let text = text
            .replace(GITHUB_MCP, github)
            .replace(OLLAMA, &mock.responses_base_url());
        support::children::write(ws.path(), rel, &text);
    }
    let bin = tempfile::tempdir().unwrap();
    let uvx = bin.path().join("uvx");
    std::fs::write(&uvx, format!("#!/bin/sh\nexec '{BIN}' fixture-server\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&uvx, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (ws, bin)
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_example_runs_against_the_mocks() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (_github, github_url) = http_fixture(&[]).await;
    let (ws, bin) = example_copy(&github_url, &mock);
    let path = path_with(bin.path());
    let env = [
        ("OPENAI_BASE_URL", mock.responses_base_url()),
        ("ANTHROPIC_BASE_URL", mock.messages_base_url()),
        ("OPENAI_API_KEY", KEY.to_owned()),
        ("ANTHROPIC_API_KEY", KEY.to_owned()),
        ("OLLAMA_API_KEY", KEY.to_owned()),
        ("GITHUB_TOKEN", "example-token".to_owned()),
        ("PATH", path),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let catalog = mcp_agents::discovery::load_catalog(
        &mcp_agents::discovery::Workspace::open(ws.path()).unwrap(),
        &mcp_agents::discovery::LoadOptions::default(),
    );
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    let names: Vec<String> = catalog.agents().iter().map(|a| a.name.clone()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for name in &names {
        let before = mock.requests().len();
        if name == "docs-writer" {
            // It writes documentation with the built-in workspace tools.
            mock.push([
                Step::tool_call(
                    "workspace__write",
                    json!({"path": "docs/retry.md", "content": "# Retries\n"}),
                ),
                Step::text("docs/retry.md: added."),
            ]);
        } else {
            mock.push([Step::text("Done.")]);
        }
        let ran = run_json(
            ws.path(),
            name,
            "A small task.",
            &env,
            Duration::from_secs(60),
        )
        .await;
        assert!(ran.success, "{name}: {}\n{}", ran.record, ran.stderr);
        assert_eq!(ran.record["status"], "completed", "{name}: {}", ran.record);
        assert!(mock.requests().len() > before, "{name} asked the model");
        if name == "docs-writer" {
            assert_eq!(
                ran.record["files_changed"],
                json!([{"path": "docs/retry.md", "created": true, "changes": 1}]),
                "{}",
                ran.record
            );
        }
    }
}

/// `check --servers` starts each child server as a run would: one that cannot speak MCP
/// 2026-07-28 (the fixture playing an older server, as the npm `server-filesystem` is) is
/// the agent's `will_fail_at_spawn` warning, with a `needs` entry naming the server; a good
/// one is not; without `--servers` nothing is started.
#[test]
fn check_servers_reports_what_would_fail_at_spawn() {
    let ws = support::TempWorkspace::new();
    let agent = |name: &str, args: &str| {
        format!(
            "---\nname: {name}\ndescription: d\nmodel: gpt-5.4\nmodel_provider: openai\n\
             mcp_servers:\n  files:\n    command: {BIN}\n    args: [\"fixture-server\"{args}]\n\
             ---\nDo.\n"
        )
    };
    ws.write(".agents/agents/old.md", agent("old", ", \"--legacy\""));
    ws.write(".agents/agents/good.md", agent("good", ""));
    let check = |extra: &[&str]| {
        let out = std::process::Command::new(BIN)
            .arg("check")
            .arg(ws.path())
            .args(extra)
            .env("OPENAI_API_KEY", KEY)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        (
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (report, _, stderr) = check(&["--servers", "--json"]);
    let old = support::agent_named(&report, "old");
    assert_eq!(old["needs"].as_array().unwrap().len(), 1, "{report:#}");
    let need = &old["needs"][0];
    assert_eq!(need["kind"], "server");
    assert_eq!(need["name"], "files");
    assert_eq!(need["for"], "mcp_servers.files");
    let error = need["error"].as_str().unwrap();
    assert!(
        error.starts_with("MCP server files does not support MCP 2026-07-28"),
        "{error}"
    );
    assert_eq!(support::agent_named(&report, "good")["needs"], json!([]));
    assert!(
        stderr.contains(&format!(
            "warning: .agents/agents/old.md: agent `old` would fail when it runs: {error}"
        )),
        "{stderr}"
    );
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{report:#}");
    assert_eq!(warnings[0]["effect"], "will_fail_at_spawn");
    // Without `--servers`, nothing is started, and the report says how to.
    let (_, table, stderr) = check(&["--wide"]);
    assert!(!stderr.contains("would fail"), "{stderr}");
    assert!(
        table.contains("`mcp-agents check --servers` starts each agent's MCP servers"),
        "{table}"
    );
}
