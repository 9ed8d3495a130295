//! The server's model allow-list through the real binary (SPEC §5.1 `--allow-models`, env
//! `MCP_AGENTS_ALLOW_MODELS`): a definition whose model is outside is rejected at load, with
//! the reason in `check` and in `spawn_agent`'s refusal; a gateway's model is matched as
//! written; a fallback outside is dropped with a warning.

use crate::support;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::TempWorkspace;
use support::binary::{self, Generation, KEY_VAR};
use support::cli::{mcp_agents, text};
use support::run_kit::KEY;

/// The patterns every test here runs with: Anthropic's Claude Haiku models and OpenAI's
/// gpt-5-mini. A gateway's `anthropic/claude-haiku-4-5` is inside only as written.
const ALLOWED: &str = "anthropic/claude-haiku-*,openai/gpt-5-mini";

/// A workspace with `pricey` (OpenAI's gpt-5, outside the list) and `gateway` (a gateway's
/// `anthropic/claude-haiku-4-5`, inside as written, with one fallback inside and one
/// outside), both pointing at `mock`.
fn workspace(mock: &MockProvider) -> TempWorkspace {
    let ws = TempWorkspace::new();
    ws.write(
        ".agents/agents/pricey.md",
        format!(
            "---\nname: pricey\ndescription: Uses an expensive model.\nmodel: gpt-5\n\
             model_provider: openai\nbase_url: {}\nenv_key: {KEY_VAR}\n---\nYou answer.\n",
            mock.responses_base_url()
        ),
    );
    ws.write(
        ".agents/agents/gateway.md",
        format!(
            "---\nname: gateway\ndescription: Goes through a gateway.\n\
             model: anthropic/claude-haiku-4-5\nfallback_models: [custom/anthropic/claude-haiku-4-6, \
             custom/openai/gpt-5]\nmodel_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\n\
             wire_api: chat-completions\n---\nYou answer.\n",
            mock.chat_base_url()
        ),
    );
    ws
}

fn check_json(ws: &TempWorkspace, args: &[&str]) -> (Option<i32>, Value) {
    let dir = ws.path().display().to_string();
    let mut all = vec!["check", dir.as_str(), "--json"];
    all.extend_from_slice(args);
    let out = mcp_agents(&all);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    (out.status.code(), report)
}

fn warning_about<'a>(report: &'a Value, file: &str) -> Vec<&'a str> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["file"] == file)
        .map(|w| w["reason"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_rejects_a_model_outside_the_list_and_keeps_a_gateway_model_as_written() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&mock);

    // Without a list, both load.
    let (status, report) = check_json(&ws, &[]);
    assert_eq!(status, Some(0), "{report}");
    assert_eq!(report["agents"].as_array().unwrap().len(), 2);

    let (status, report) = check_json(&ws, &["--allow-models", ALLOWED]);
    assert_eq!(status, Some(1), "a rejected definition: {report}");
    let agents: Vec<&str> = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["gateway"]);
    let pricey = warning_about(&report, ".agents/agents/pricey.md");
    assert_eq!(pricey.len(), 1, "{report}");
    assert!(
        pricey[0].contains("`openai/gpt-5` is not among the models this server allows")
            && pricey[0].contains(ALLOWED),
        "{}",
        pricey[0]
    );
    // The gateway's fallback outside the list is dropped, the one inside kept.
    let gateway = &report["agents"][0];
    assert_eq!(gateway["model"], "anthropic/claude-haiku-4-5");
    assert_eq!(
        gateway["fallback_models"],
        json!(["anthropic/claude-haiku-4-6"])
    );
    let dropped = warning_about(&report, ".agents/agents/gateway.md");
    assert!(
        dropped
            .iter()
            .any(|w| w.contains("`custom/openai/gpt-5` is dropped")
                && w.contains("`custom/openai/gpt-5` is not among")),
        "{dropped:?}"
    );

    // The variable says the same as the flag.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(["check", &ws.path().display().to_string(), "--json"])
        .env("MCP_AGENTS_ALLOW_MODELS", ALLOWED)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let from_env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_env["agents"], report["agents"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_agent_refuses_a_rejected_model_with_the_reason_and_runs_the_gateway_model() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&mock);
    let conn = binary::stdio(
        ws.path(),
        Generation::Modern,
        &[("MCP_AGENTS_ALLOW_MODELS", ALLOWED)],
    )
    .await;
    let (code, message) = conn
        .err("spawn_agent", json!({"name": "pricey", "task": "Answer."}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(
        message.contains("pricey.md") && message.contains("`openai/gpt-5` is not among"),
        "{message}"
    );

    mock.push([Step::text("Haiku here.")]);
    let record = conn.run_to_end("gateway", "Answer.").await;
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["model"], "anthropic/claude-haiku-4-5");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "anthropic/claude-haiku-4-5");
    conn.close().await;
}

#[test]
fn a_pattern_without_a_provider_is_refused_on_the_command_line() {
    let ws = TempWorkspace::new();
    let dir = ws.path().display().to_string();
    let out = mcp_agents(&["check", &dir, "--allow-models", "gpt-5*"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("\"gpt-5*\" is not a model pattern") && stderr.contains("PROVIDER/MODEL"),
        "{stderr}"
    );
}
