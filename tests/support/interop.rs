//! Where the third-party servers and clients installed by `scripts/install-interop` are.

use std::path::PathBuf;

/// The interop directory; fails the test with instructions when it is not installed.
pub fn dir() -> PathBuf {
    let dir = std::env::var_os("MCP_AGENTS_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/interop"));
    assert!(
        dir.join("venv/bin/python").exists() && dir.join("node/node_modules").exists(),
        "the interoperability dependencies are not installed in {}; run the test suite with \
         scripts/test, which installs them",
        dir.display()
    );
    dir
}

pub fn python() -> PathBuf {
    dir().join("venv/bin/python")
}

pub fn venv_bin(name: &str) -> PathBuf {
    dir().join("venv/bin").join(name)
}

pub fn node_bin(name: &str) -> PathBuf {
    dir().join("node/node_modules/.bin").join(name)
}

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

/// Runs `command` (an SDK's script, killed when dropped) to its end within `limit`; fails
/// with its output unless it succeeded, saying it was `what`. The JSON of its last line.
pub async fn last_json_line(
    command: &mut tokio::process::Command,
    limit: std::time::Duration,
    what: &str,
) -> serde_json::Value {
    let output = tokio::time::timeout(limit, command.kill_on_drop(true).output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what}:\n{stderr}\n{stdout}");
    let last = stdout.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{what}: {e}: {stdout}"))
}
