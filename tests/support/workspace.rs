//! Workspaces for the built-in workspace tools, a client of a real `mcp-agents
//! workspace-tools DIR` (driven as a run drives it), and a look at the process table for
//! their servers.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;

use super::binary::{BIN, TestClient};
use super::children::live_processes;

/// A client of `mcp-agents workspace-tools DIR` and the tools it listed.
pub struct Tools {
    pub client: RunningService<RoleClient, TestClient>,
    pub listed: Vec<Tool>,
}

/// Starts `mcp-agents workspace-tools DIR` (cleared environment) and discovers it over
/// 2026-07-28.
pub async fn serve(dir: &Path) -> Tools {
    serve_with_env(dir, &[]).await
}

/// [`serve`] with the variables `env` set (a client's `TMPDIR`, say).
pub async fn serve_with_env(dir: &Path, env: &[(&str, &str)]) -> Tools {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("workspace-tools").arg(dir).env_clear();
    command.envs(env.iter().copied());
    let transport = TokioChildProcess::new(command).expect("start workspace-tools");
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        TestClient::default().serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await
    .expect("discover in time")
    .expect("2026-07-28 through server/discover");
    let listed = client.list_all_tools().await.expect("tools/list");
    Tools { client, listed }
}

impl Tools {
    /// One call, however it ends.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let params = CallToolRequestParams::new(tool.to_owned())
            .with_arguments(arguments.as_object().cloned().unwrap());
        self.client.call_tool(params).await.expect("tools/call")
    }

    /// A successful call's text; its structured content must satisfy the output schema.
    pub async fn text(&self, tool: &str, arguments: Value) -> (String, Value) {
        let result = self.call(tool, arguments.clone()).await;
        let text = result.content[0].as_text().unwrap().text.clone();
        assert_ne!(result.is_error, Some(true), "{tool} {arguments}: {text}");
        let structured = result.structured_content.expect("structured content");
        let schema = self
            .listed
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.output_schema.clone())
            .expect("an output schema");
        let validator = jsonschema::validator_for(&Value::Object((*schema).clone())).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{tool}: {errors:?}\n{structured}");
        (text, structured)
    }

    /// A refused call's text.
    pub async fn refusal(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments.clone()).await;
        let text = result.content[0].as_text().unwrap().text.clone();
        assert_eq!(result.is_error, Some(true), "{tool} {arguments}: {text}");
        text
    }
}

pub fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A small project: code, an ignored build folder and log, a hidden file, a link out.
pub fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dir = ws.path();
    write(
        dir,
        "src/main.rs",
        "fn main() {\n    let limit = 8;\n    run(limit);\n}\n",
    );
    write(
        dir,
        "src/run.rs",
        "pub fn run(limit: u32) {\n    // TODO: use the limit\n}\n",
    );
    write(dir, "README.md", "# Demo\nRun it with a limit.\n");
    write(dir, ".gitignore", "target/\n*.log\n");
    write(dir, "target/debug/gen.rs", "fn generated_limit() {}\n");
    write(dir, "run.log", "limit reached\n");
    write(dir, ".env", "LIMIT_TOKEN=hidden-value\n");
    write(outside.path(), "secret.txt", "outside-secret limit\n");
    std::os::unix::fs::symlink(outside.path(), dir.join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.join("secret-link")).unwrap();
    (ws, outside)
}

/// Pids of live `workspace-tools` processes serving `workspace`.
pub fn workspace_children(workspace: &Path) -> Vec<u32> {
    let workspace = workspace.canonicalize().unwrap();
    let workspace = workspace.to_str().unwrap().as_bytes();
    live_processes(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.contains(&b"workspace-tools".as_slice()) && args.contains(&workspace)
    })
}

/// Waits up to 10 s for every workspace server of `workspace` to be gone.
pub async fn assert_no_workspace_child(workspace: &Path) {
    for _ in 0..200 {
        if workspace_children(workspace).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "workspace children still running: {:?}",
        workspace_children(workspace)
    );
}
