//! The command line, driven through the real binaries: workspace argument handling and
//! `check` (table, JSON, exit status, warnings on stderr).

use crate::support;

use std::process::{Command, Output};

fn mcp_agents(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(args)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .expect("run mcp-agents")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example_workspace() -> String {
    format!("{}/examples/workspace", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_example_workspace_has_four_agents_and_no_warnings() {
    let out = mcp_agents(&["check", &example_workspace()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no warnings");
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("SOURCE"),
        "{stdout}"
    );
    for (line, (name, file, format)) in lines[1..5].iter().zip([
        ("researcher", ".agents/agents/researcher.md", "canonical-md"),
        ("code-reviewer", ".claude/agents/code-reviewer.md", "claude"),
        ("docs-writer", ".codex/agents/docs-writer.toml", "codex"),
        ("triager", ".opencode/agents/triager.md", "opencode"),
    ]) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&cells[..3], &[name, file, format], "{line}");
    }
    assert!(
        lines[2].contains("claude-sonnet-5-5 (sonnet)"),
        "the model really used"
    );
    assert_eq!(lines[5], "4 agents, 1 skill, 0 warnings");
}

#[test]
fn json_output_is_one_object_with_agents_and_warnings() {
    let out = mcp_agents(&[
        "check",
        &support::fixture_path("precedence").display().to_string(),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "shadowed files are not rejections"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let agents = report["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 6);
    assert_eq!(agents[0]["name"], "order");
    assert_eq!(agents[0]["file"], ".agents/agents/Zeta.md");
    let warnings = report["warnings"].as_array().unwrap();
    assert!(!warnings.is_empty());
    for w in warnings {
        assert!(
            w["file"].as_str().unwrap().starts_with('.'),
            "workspace-relative: {w}"
        );
        assert!(w["reason"].is_string());
        assert_eq!(w["effect"], "shadowed");
    }
}

#[test]
fn rejected_definitions_exit_1_with_one_stderr_line_each() {
    let dir = support::fixture_path("names").display().to_string();
    let out = mcp_agents(&["check", &dir]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let catalog = support::load_fixture("names");
    assert_eq!(stderr.lines().count(), catalog.warnings().len());
    for line in stderr.lines() {
        assert!(line.starts_with("warning: ."), "{line}");
    }
    assert!(
        stderr.contains("warning: .agents/agents/n65.md: `name`: the name is 65 characters long")
    );
    assert!(text(&out.stdout).contains("files rejected"));
}

#[test]
fn default_model_comes_from_the_flag_or_the_environment() {
    let dir = support::fixture_path("default-model").display().to_string();
    let out = mcp_agents(&["check", &dir, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "inherit without a default is rejected"
    );

    let out = mcp_agents(&["check", &dir, "--json", "--default-model", "openai/gpt-5.4"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let inherit = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "claude-inherit")
        .unwrap()
        .clone();
    assert_eq!(inherit["model"], "gpt-5.4");
    assert_eq!(inherit["provider"], "openai");
    assert_eq!(inherit["model_origin"], "server-default");

    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(["check", &dir, "--json"])
        .env("MCP_AGENTS_DEFAULT_MODEL", "anthropic/claude-haiku-5-5")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["model"] == "claude-haiku-5-5")
    );
}

#[test]
fn a_bad_default_model_is_a_usage_error() {
    let out = mcp_agents(&["check", &example_workspace(), "--default-model", "gpt-5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("PROVIDER/MODEL"));
}

#[test]
fn a_missing_workspace_is_a_one_line_error_naming_it() {
    for args in [
        vec!["/no/such/workspace"],
        vec!["check", "/no/such/workspace"],
    ] {
        let out = mcp_agents(&args);
        assert_eq!(out.status.code(), Some(2));
        let stderr = text(&out.stderr);
        assert_eq!(
            stderr,
            "error: workspace /no/such/workspace does not exist\n"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_file_is_not_a_workspace() {
    let file = format!("{}/Cargo.toml", env!("CARGO_MANIFEST_DIR"));
    let out = mcp_agents(&["check", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("error: workspace {file} is not a directory\n")
    );
}

#[test]
fn an_empty_workspace_checks_clean_and_says_where_it_looked() {
    let ws = support::TempWorkspace::new();
    let out = mcp_agents(&["check", &ws.path().display().to_string()]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains(
        "no agents found (looked in .agents/agents, .claude/agents, .codex/agents, \
         .opencode/agents, .opencode/agent)"
    ));
}

#[test]
fn the_default_workspace_is_the_current_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("check")
        .current_dir(example_workspace())
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("4 agents"));
}

#[test]
fn modelcontextprotocol_agents_is_the_same_program() {
    let out = Command::new(env!("CARGO_BIN_EXE_modelcontextprotocol"))
        .args(["agents", "check", &example_workspace(), "--json"])
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["agents"].as_array().unwrap().len(), 4);
    let out = Command::new(env!("CARGO_BIN_EXE_modelcontextprotocol"))
        .args(["agents", "/no/such/workspace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn version_prints_the_crate_version() {
    let out = mcp_agents(&["--version"]);
    assert_eq!(
        text(&out.stdout).trim(),
        format!("mcp-agents {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_server_command_logs_each_warning_in_the_same_form() {
    let dir = support::fixture_path("precedence").display().to_string();
    let out = mcp_agents(&[&dir]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "warning: .claude/agents/shared.md: defines the agent `shared`, which \
             .agents/agents/shared.md already defines"
        ),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "stdout belongs to the MCP transport");

    let empty = support::TempWorkspace::new();
    let out = mcp_agents(&[&empty.path().display().to_string()]);
    assert!(
        text(&out.stderr).contains("warning: no agent definitions found in"),
        "{}",
        text(&out.stderr)
    );
}

/// JSON strings must be UTF-8; a path that is not is shown lossily instead of panicking.
#[cfg(unix)]
#[test]
fn json_output_survives_paths_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let parent = tempfile::tempdir().unwrap();
    let ws = parent
        .path()
        .join(std::ffi::OsStr::from_bytes(b"work\xffspace"));
    let agents = ws.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("ok.md"),
        "---\nname: ok\ndescription: d\nmodel: sonnet\n---\nDo.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join(std::ffi::OsStr::from_bytes(b"b\xffd.md")),
        "no frontmatter",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("check")
        .arg("--json")
        .arg(&ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["agents"][0]["name"], "ok");
    assert_eq!(
        report["warnings"][0]["file"],
        ".claude/agents/b\u{fffd}d.md"
    );
    assert!(
        report["workspace"]
            .as_str()
            .unwrap()
            .ends_with("work\u{fffd}space")
    );
}

#[test]
fn check_shows_the_effective_budgets_from_flags_and_environment() {
    let dir = support::fixture_path("budgets").display().to_string();
    let json = |out: &Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).expect("check --json prints JSON")
    };
    let agent = |report: &serde_json::Value, name: &str| {
        report["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {report}"))
    };
    // Flags.
    let out = mcp_agents(&[
        "check",
        &dir,
        "--json",
        "--max-tool-calls",
        "50",
        "--max-run-seconds",
        "600",
    ]);
    let report = json(&out);
    let defaults = agent(&report, "defaults");
    assert_eq!(
        (
            &defaults["max_tool_calls"],
            &defaults["max_run_tokens"],
            &defaults["max_run_seconds"]
        ),
        (
            &serde_json::json!(50),
            &serde_json::Value::Null,
            &serde_json::json!(600)
        )
    );
    assert_eq!(agent(&report, "raised")["max_run_seconds"], 600);
    assert_eq!(agent(&report, "budgets")["max_run_seconds"], 120);
    assert_eq!(
        agent(&report, "budgets")["output_schema"]["required"],
        serde_json::json!(["verdict", "findings"])
    );
    assert_eq!(
        agent(&report, "defaults")["output_schema"],
        serde_json::Value::Null
    );
    // The same from the environment, and the table's column.
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(["check", &dir])
        .env("MCP_AGENTS_MAX_RUN_TOKENS", "9000")
        .env("MCP_AGENTS_MAX_RUN_SECONDS", "100")
        .env_remove("MCP_AGENTS_MAX_TOOL_CALLS")
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    let table = text(&out.stdout);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in {table}"))
            .to_owned()
    };
    assert!(row("defaults").ends_with("9000 tokens, 100 s"), "{table}");
    assert!(
        row("budgets").ends_with("20 tool calls, 9000 tokens, 100 s"),
        "lowered to the server's: {table}"
    );
    assert!(text(&out.stderr).contains("above this server's limit of 9000"));
    // A server budget of 0 is refused before anything loads.
    let out = mcp_agents(&["check", &dir, "--max-run-seconds", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--max-run-seconds"),
        "{}",
        text(&out.stderr)
    );
}
