//! Watching a server from outside (SPEC §7.1) in tests: a private runtime directory for the
//! servers' status sockets, the sockets found there, a watcher speaking the socket's JSON
//! lines, and `mcp-agents status` run through the binary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use mcp_agents::testkit::MockProvider;

use super::binary::{BIN, KEY_VAR};
use super::children::{agent, stdio_child, tagged_marker, write};

/// A workspace with `worker` (the fixture child `fx`) and `plain` (no child), both on the
/// mock's Responses endpoint.
pub fn workspace(mock: &MockProvider) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let fx = stdio_child("fx", &[], &tagged_marker("status"), "");
    write(
        ws.path(),
        ".agents/agents/worker.md",
        &agent(mock, "worker", &fx, ""),
    );
    let plain = format!(
        "---\nname: plain\ndescription: No tools.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n---\nAnswer.\n",
        mock.responses_base_url()
    );
    write(ws.path(), ".agents/agents/plain.md", &plain);
    ws
}

/// A fresh `XDG_RUNTIME_DIR`, private as a real one is.
pub fn runtime_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// The variable pointing the server and the commands at `runtime`.
pub fn env(runtime: &Path) -> [(&'static str, &str); 1] {
    [("XDG_RUNTIME_DIR", runtime.to_str().unwrap())]
}

/// The status sockets in `runtime`'s `mcp-agents` directory.
pub fn sockets(runtime: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(runtime.join("mcp-agents")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .collect();
    found.sort();
    found
}

/// The socket of server `pid` in `runtime`, once it is there (10 s at most).
pub async fn socket_of(runtime: &Path, pid: u32) -> PathBuf {
    let suffix = format!("-{pid}.sock");
    for _ in 0..1000 {
        if let Some(found) = sockets(runtime)
            .into_iter()
            .find(|p| p.to_str().unwrap().ends_with(&suffix))
        {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no status socket for pid {pid}: {:?}", sockets(runtime));
}

/// Waits (10 s at most) until `path` is gone.
pub async fn until_removed(path: &Path) {
    for _ in 0..1000 {
        if !path.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} is still there", path.display());
}

/// A watcher on a status socket.
pub struct Watcher {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
    /// Every line read so far, as text.
    pub said: Vec<String>,
}

impl Watcher {
    pub async fn connect(path: &Path) -> Watcher {
        let (read, write) = UnixStream::connect(path).await.unwrap().into_split();
        Watcher {
            lines: BufReader::new(read).lines(),
            write,
            said: Vec::new(),
        }
    }

    /// The next line (10 s at most).
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line, not the end");
        self.said.push(line.clone());
        serde_json::from_str(&line).unwrap()
    }

    /// Reads lines until one satisfies `wanted`, and returns it.
    pub async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.next().await;
            if wanted(&line) {
                return line;
            }
        }
    }

    pub async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }
}

/// What `mcp-agents status` printed: its exit code, stdout and stderr.
pub struct StatusRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// `mcp-agents status WORKSPACE [--json]` with `XDG_RUNTIME_DIR` at `runtime`.
pub async fn status(workspace: &Path, runtime: &Path, json: bool) -> StatusRun {
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("status")
        .arg(workspace)
        .env("XDG_RUNTIME_DIR", runtime)
        .env_remove("RUST_LOG");
    if json {
        command.arg("--json");
    }
    let out = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .expect("status ends in time")
        .unwrap();
    StatusRun {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `status --json`'s list of snapshots.
pub async fn snapshots(workspace: &Path, runtime: &Path) -> Vec<Value> {
    let run = status(workspace, runtime, true).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    serde_json::from_str::<Value>(&run.stdout)
        .unwrap_or_else(|e| panic!("status --json: {e}: {}", run.stdout))
        .as_array()
        .unwrap()
        .clone()
}
