//! `mcp-agents demo`: the whole product offline, with no key and no network. A scripted
//! model endpoint on loopback speaks the real Responses wire format (the same mock the tests
//! use); a demo agent in a temporary workspace points at it as a `custom` provider and has a
//! real child MCP server (this program's fixture server); the agent runs through the same
//! session manager as the server and `mcp-agents run`, with its activity shown live.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::discovery::{LoadOptions, Workspace, load_catalog};
use crate::sessions::manager::SessionManager;
use crate::testkit::mock::{MockProvider, Step};
use crate::toolbox::EnvLookup;

/// The variable the demo agent reads its key from; the demo supplies it itself.
const KEY_VAR: &str = "MCP_AGENTS_DEMO_KEY";
const KEY: &str = "demo-key-not-a-secret";

/// The task the demo gives its agent.
pub const TASK: &str = "Check that your MCP server works: call its echo tool with a greeting \
    and tell me what came back.";

/// The demo agent, as a canonical definition; `{base_url}` and `{command}` are filled in.
const AGENT: &str = "---
name: demo
description: Shows a subagent at work - it calls a tool of its own MCP server and reports back.
model: demo-model
model_provider: custom
base_url: {base_url}
env_key: MCP_AGENTS_DEMO_KEY
wire_api: responses
max_turns: 4
sandbox: read-only
mcp_servers:
  fixture:
    command: {command}
    args: [fixture-server]
tools: [\"fixture__echo\", \"fixture__print_env\"]
---
You check that your MCP server works. Call its echo tool once, then report what it answered
in one sentence.
";

pub async fn run_demo(json: bool, cancel: CancellationToken) -> ExitCode {
    match prepare().await {
        Ok((mock, workspace, manager)) => {
            eprintln!(
                "mcp-agents demo: a scripted model at {} (OpenAI Responses wire format), the \
                 agent `demo`, and its own MCP server (`mcp-agents fixture-server`); no key or \
                 network needed",
                mock.responses_base_url()
            );
            eprintln!("task: {TASK}");
            let code = super::run::run_agent(manager, "demo", TASK, json, cancel).await;
            drop(workspace);
            drop(mock);
            code
        }
        Err(message) => {
            eprintln!("error: the demo could not start: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn prepare() -> Result<(MockProvider, tempfile::TempDir, Arc<SessionManager>), String> {
    let mock = MockProvider::start_unchecked(KEY)
        .await
        .map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let pause = Duration::from_millis(700);
    mock.push([
        Step::tool_call("fixture__echo", json!({"text": "Hello from a subagent"}))
            .with_reasoning()
            .delayed(pause),
        Step::text("The MCP server works: its echo tool answered \"echo: Hello from a subagent\".")
            .delayed(pause),
    ]);
    let command =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let workspace = tempfile::tempdir().map_err(|e| format!("cannot make a workspace: {e}"))?;
    let definition = AGENT
        .replace("{base_url}", &mock.responses_base_url())
        .replace(
            "{command}",
            &serde_json::Value::String(command.display().to_string()).to_string(),
        );
    let path = workspace.path().join(".agents/agents/demo.md");
    std::fs::create_dir_all(path.parent().unwrap_or(workspace.path()))
        .and_then(|()| std::fs::write(&path, definition))
        .map_err(|e| format!("cannot write the demo agent: {e}"))?;
    let opened = Workspace::open(workspace.path())?;
    let catalog = load_catalog(&opened, &LoadOptions::default());
    if let Some(warning) = catalog.warnings().first() {
        return Err(format!("the demo agent did not load: {warning}"));
    }
    let env: EnvLookup = Arc::new(|var| {
        if var == KEY_VAR {
            Some(KEY.to_owned())
        } else {
            std::env::var(var).ok()
        }
    });
    let manager = super::runtime::session_manager(catalog, env);
    Ok((mock, workspace, manager))
}
