//! The command line, driven through the real binaries: workspace argument handling and
//! `check` (table, JSON, exit status, warnings on stderr).

use crate::support;

use std::process::Command;

use support::cli::{EXAMPLE_VARS, check_example, example_workspace, mcp_agents, text};

#[test]
fn the_example_workspace_has_six_agents_and_no_warnings() {
    let out = check_example(EXAMPLE_VARS, true, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no warnings");
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("SOURCE"),
        "{stdout}"
    );
    assert!(lines[0].contains(" SERVERS ") && lines[0].contains(" WORKSPACE "));
    // Name, file, format, and the workspace tools each agent gets (SPEC §8.6): the Claude
    // reviewer names Read, Grep and Glob; the Codex agent gets all four; the other Claude
    // file lists only GitHub's MCP tools, the OpenCode file starts from `"*": false`, and the
    // canonical file does not name the workspace server.
    for (line, (name, file, format, workspace)) in lines[1..7].iter().zip([
        (
            "local-explainer",
            ".agents/agents/local-explainer.md",
            "canonical-md",
            "-",
        ),
        (
            "researcher",
            ".agents/agents/researcher.md",
            "canonical-md",
            "-",
        ),
        (
            "code-reviewer",
            ".claude/agents/code-reviewer.md",
            "claude",
            "-",
        ),
        (
            "reviewer",
            ".claude/agents/reviewer.md",
            "claude",
            "read, glob, grep",
        ),
        (
            "docs-writer",
            ".codex/agents/docs-writer.toml",
            "codex",
            "read, list, glob, grep, edit, write",
        ),
        ("triager", ".opencode/agents/triager.md", "opencode", "-"),
    ]) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&cells[..3], &[name, file, format], "{line}");
        let column = lines[0].find("WORKSPACE").unwrap();
        let skills = lines[0].find("SKILLS").unwrap();
        assert_eq!(line[column..skills].trim(), workspace, "{line}");
    }
    assert!(
        lines[3].contains("claude-sonnet-5-5 (sonnet)"),
        "the model really used"
    );
    assert!(
        lines[1].contains("custom (localhost:11434, responses)")
            && lines[1].contains("OLLAMA_API_KEY (bearer)"),
        "the endpoint, the key's variable and its header: {}",
        lines[1]
    );
    assert!(
        lines[3].contains("ANTHROPIC_API_KEY (x-api-key)"),
        "{}",
        lines[3]
    );
    assert_eq!(lines[7], "6 agents, 1 skill, 0 warnings");
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
    assert_eq!(agents.len(), 8);
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
        // The fixture's agents read keys this test does not set: those are readiness's.
        let effect = w["effect"].as_str().unwrap();
        assert!(
            effect == "shadowed" || effect == "will_fail_at_spawn",
            "{w}"
        );
    }
    assert!(warnings.iter().any(|w| w["effect"] == "shadowed"));
}

#[test]
fn rejected_definitions_exit_1_with_one_stderr_line_each() {
    let dir = support::fixture_path("names").display().to_string();
    let out = mcp_agents(&["check", &dir]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let catalog = support::load_fixture("names");
    let definitions = stderr
        .lines()
        .filter(|l| !l.contains("would fail when it runs"));
    assert_eq!(definitions.count(), catalog.warnings().len());
    // Issue 28: a rejected file's line says so, and the summary counts the rejected files
    // apart from the warnings.
    let rejected = catalog
        .warnings()
        .iter()
        .filter(|w| w.effect == mcp_agents::definition::Effect::Rejected)
        .count();
    assert!(rejected > 1);
    for line in stderr.lines() {
        let word = if line.contains("would fail when it runs")
            || !catalog.warnings().iter().any(|w| {
                w.effect == mcp_agents::definition::Effect::Rejected && line.ends_with(&w.reason)
            }) {
            "warning: ."
        } else {
            "rejected: ."
        };
        assert!(line.starts_with(word), "{line}");
    }
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("rejected: "))
            .count(),
        rejected
    );
    assert!(
        stderr.contains("rejected: .agents/agents/n65.md: `name`: the name is 65 characters long")
    );
    let stdout = text(&out.stdout);
    let summary = stdout.lines().find(|l| l.contains(" skill")).unwrap();
    assert!(
        summary.contains(&format!(", {rejected} rejected files, ")),
        "{summary}"
    );
    let warnings = catalog.warnings().len() - rejected
        + stderr
            .lines()
            .filter(|l| l.contains("would fail when it runs"))
            .count();
    assert!(
        summary.ends_with(&format!(
            " {warnings} warning{}",
            if warnings == 1 { "" } else { "s" }
        )),
        "{summary}"
    );
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
    let inherit = support::agent_named(&report, "claude-inherit").clone();
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
    let canonical = ws.path().canonicalize().unwrap();
    assert!(
        text(&out.stdout).contains(&format!(
            "no agents found in {} (looked in .agents/agents, .claude/agents, .codex/agents, \
             .opencode/agents, .opencode/agent, .github/agents, .cursor/agents, \
             .gemini/agents)",
            canonical.display()
        )),
        "{}",
        text(&out.stdout)
    );
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
    assert!(text(&out.stdout).contains("6 agents"));
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
    assert_eq!(report["agents"].as_array().unwrap().len(), 6);
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

/// Issue 16: `--workspace` is accepted everywhere a workspace is (the positional stays), and
/// `--default-model` takes the aliases files take.
#[test]
fn every_command_takes_workspace_and_default_model_takes_aliases() {
    let out = mcp_agents(&["check", "--workspace", &example_workspace()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("6 agents"));
    let out = mcp_agents(&["check", &example_workspace(), "--workspace", "."]);
    assert_eq!(out.status.code(), Some(2), "both at once is a usage error");
    let out = mcp_agents(&["--workspace", "/no/such/workspace"]);
    assert_eq!(
        text(&out.stderr),
        "error: workspace /no/such/workspace does not exist\n",
        "the server takes it too"
    );

    let dir = support::fixture_path("default-model").display().to_string();
    for alias in ["sonnet", "anthropic/sonnet"] {
        let out = mcp_agents(&["check", &dir, "--json", "--default-model", alias]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let inherit = support::agent_named(&report, "claude-inherit").clone();
        assert_eq!(
            (inherit["provider"].as_str(), inherit["model"].as_str()),
            (Some("anthropic"), Some("claude-sonnet-5-5")),
            "{alias}"
        );
    }
}

/// From a subdirectory the workspace is still the current directory (the reference says
/// so); `check` says which directory that is, and where agents are.
#[test]
fn check_from_a_subdirectory_names_the_workspace_and_where_agents_are() {
    let sub = format!("{}/.agents", example_workspace());
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("check")
        .current_dir(&sub)
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let root = std::path::Path::new(&example_workspace())
        .canonicalize()
        .unwrap();
    assert!(
        stdout.contains(&format!("no agents found in {}/.agents (", root.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "{} has .agents/agents: the workspace is the directory given, or the current one; \
             run `mcp-agents check {}`",
            root.display(),
            root.display()
        )),
        "{stdout}"
    );
}
