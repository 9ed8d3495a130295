//! `mcp-agents check` and the other one-shot commands, run through the real binary: the
//! variables of the machine that would change what they show taken out, and the bundled
//! example workspace in a prepared environment.

use std::process::{Command, Output};

/// Variables of the machine running the tests that change what `check` shows.
pub const CHANGES_CHECK: &[&str] = &[
    "MCP_AGENTS_DEFAULT_MODEL",
    "MCP_AGENTS_ALLOW_MODELS",
    "RUST_LOG",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
];

/// Runs the binary with `args`, without the variables that change what `check` shows.
pub fn mcp_agents(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
    command.args(args);
    for var in CHANGES_CHECK {
        command.env_remove(var);
    }
    command.output().expect("run mcp-agents")
}

/// Bytes a command printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The bundled example workspace (`examples/workspace`).
pub fn example_workspace() -> String {
    format!("{}/examples/workspace", env!("CARGO_MANIFEST_DIR"))
}

/// The variables the example workspace's agents read.
pub const EXAMPLE_VARS: &[&str] = &[
    "OLLAMA_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
];

/// A `PATH` holding stand-ins for the example's child commands (`uvx`, `npx`), and nothing
/// else, so the result does not depend on what the machine has installed.
pub fn commands_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for name in ["uvx", "npx"] {
        let path = dir.path().join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// `check` of the example workspace in a prepared environment: `set` variables set, the
/// stand-in commands on PATH when `commands` holds.
pub fn check_example(set: &[&str], commands: bool, json: bool) -> Output {
    let bin = commands_dir();
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
    command.arg("check").arg(example_workspace());
    if json {
        command.arg("--json");
    }
    for var in CHANGES_CHECK.iter().chain(EXAMPLE_VARS) {
        command.env_remove(var);
    }
    for var in set {
        command.env(var, "placeholder-value");
    }
    let path = if commands {
        bin.path().to_owned()
    } else {
        "/nonexistent".into()
    };
    command.env("PATH", path);
    command.output().expect("run mcp-agents")
}
