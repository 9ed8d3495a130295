//! Workspaces for the built-in workspace tools, and a look at the process table for their
//! servers.

use std::path::Path;
use std::time::Duration;

use super::children::live_processes;

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
