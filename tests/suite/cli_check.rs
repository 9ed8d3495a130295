//! The command line, driven through the real binaries: workspace argument handling and
//! `check` (table, JSON, exit status, warnings on stderr).

use crate::support;

use std::process::{Command, Output};

/// Variables of the machine running the tests that change what `check` shows.
const CHANGES_CHECK: &[&str] = &[
    "MCP_AGENTS_DEFAULT_MODEL",
    "RUST_LOG",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
];

fn mcp_agents(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
    command.args(args);
    for var in CHANGES_CHECK {
        command.env_remove(var);
    }
    command.output().expect("run mcp-agents")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example_workspace() -> String {
    format!("{}/examples/workspace", env!("CARGO_MANIFEST_DIR"))
}

/// The variables the example workspace's agents read.
const EXAMPLE_VARS: &[&str] = &[
    "OLLAMA_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
];

/// A `PATH` holding stand-ins for the example's child commands (`uvx`, `npx`), and nothing
/// else, so the result does not depend on what the machine has installed.
fn commands_dir() -> tempfile::TempDir {
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
fn check_example(set: &[&str], commands: bool, json: bool) -> Output {
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

/// SPEC §2 readiness: with nothing set and no commands installed, every agent says what it
/// needs (a warning with effect `will_fail_at_spawn`, `needs` in JSON), and the exit status
/// stays 0.
#[test]
fn check_reports_what_each_run_would_miss_without_failing() {
    let out = check_example(&[], false, false);
    assert!(out.status.success(), "readiness never fails check");
    let stderr = text(&out.stderr);
    for expected in [
        "warning: .agents/agents/local-explainer.md: agent `local-explainer` would fail when it \
         runs: OLLAMA_API_KEY (its provider key) is not set",
        "warning: .agents/agents/researcher.md: agent `researcher` would fail when it runs: \
         OPENAI_API_KEY (its provider key) is not set; the command `uvx` (mcp_servers.fetch) is \
         not found on PATH",
        "warning: .claude/agents/code-reviewer.md: agent `code-reviewer` would fail when it \
         runs: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (its provider key) is not set; \
         GITHUB_TOKEN (mcp_servers.github header Authorization) is not set",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    assert!(
        text(&out.stdout).contains("6 agents (6 not ready to run), 1 skill, 6 warnings"),
        "{}",
        text(&out.stdout)
    );

    let out = check_example(&["OPENAI_API_KEY"], false, true);
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let researcher = support::agent_named(&report, "researcher").clone();
    assert_eq!(
        researcher["needs"],
        serde_json::json!([{"kind": "command", "name": "uvx", "for": "mcp_servers.fetch"}]),
        "the key is set now; the command is still missing"
    );
    let reviewer = support::agent_named(&report, "code-reviewer").clone();
    assert_eq!(
        reviewer["needs"][0],
        serde_json::json!({"kind": "env", "name": "ANTHROPIC_API_KEY", "or": "ANTHROPIC_AUTH_TOKEN", "for": "its provider key"})
    );
    let effects: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["effect"].as_str().unwrap())
        .collect();
    // The Codex docs-writer, on the built-in workspace tools (issue 39), needs only its key.
    assert_eq!(effects, ["will_fail_at_spawn"; 5]);
    assert!(report["warnings"][0]["agent"].is_string());

    // The local engine's placeholder key is all its agent needs.
    let out = check_example(&["OLLAMA_API_KEY"], false, false);
    assert!(
        !text(&out.stderr).contains("local-explainer"),
        "{}",
        text(&out.stderr)
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

/// `check` shows each agent's wire API: a custom provider's always, a built-in provider's
/// when the definition chose another than its own; `--json` has `wire_api` for every agent;
/// `--default-model gemini/…` gives the parent's model on Gemini's endpoint.
#[test]
fn check_shows_the_wire_each_agent_speaks() {
    let ws = tempfile::tempdir().unwrap();
    let write = |name: &str, fields: &str| {
        let path = ws.path().join(format!(".agents/agents/{name}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            format!("---\nname: {name}\ndescription: d\n{fields}\n---\nDo.\n"),
        )
        .unwrap();
    };
    write(
        "local",
        "model: qwen3\nmodel_provider: custom\nbase_url: http://127.0.0.1:8080/v1\n\
         env_key: LLAMA_KEY\nwire_api: chat-completions",
    );
    write(
        "openai-chat",
        "model: gpt-4.1\nmodel_provider: openai\nwire_api: chat",
    );
    write(
        "gemini",
        "model: gemini-3-flash-preview\nmodel_provider: gemini",
    );
    write("plain", "model: gpt-5.4\nmodel_provider: openai");
    std::fs::create_dir_all(ws.path().join(".claude/agents")).unwrap();
    std::fs::write(
        ws.path().join(".claude/agents/parent.md"),
        "---\nname: parent\ndescription: d\nmodel: inherit\n---\nDo.\n",
    )
    .unwrap();
    let dir = ws.path().display().to_string();
    let args = [
        "check",
        &dir,
        "--default-model",
        "gemini/gemini-3-pro-preview",
    ];
    let out = mcp_agents(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {table}"))
            .to_owned()
    };
    assert!(
        row("local").contains("custom (127.0.0.1:8080, chat-completions)"),
        "{}",
        row("local")
    );
    assert!(
        row("openai-chat").contains("openai (chat-completions)"),
        "{}",
        row("openai-chat")
    );
    assert!(
        row("gemini").contains(" gemini ") && row("gemini").contains("GEMINI_API_KEY (bearer)"),
        "{}",
        row("gemini")
    );
    assert!(!row("plain").contains("responses"), "{}", row("plain"));
    assert!(
        row("parent").contains("gemini-3-pro-preview (server default)"),
        "{}",
        row("parent")
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let report: serde_json::Value = serde_json::from_slice(&mcp_agents(&json_args).stdout).unwrap();
    for (name, wire, provider) in [
        ("local", "chat-completions", "custom"),
        ("openai-chat", "chat-completions", "openai"),
        ("gemini", "chat-completions", "gemini"),
        ("plain", "responses", "openai"),
        ("parent", "chat-completions", "gemini"),
    ] {
        let agent = support::agent_named(&report, name);
        assert_eq!(
            (agent["wire_api"].as_str(), agent["provider"].as_str()),
            (Some(wire), Some(provider)),
            "{name}"
        );
    }
    let gemini = support::agent_named(&report, "gemini");
    assert_eq!(
        gemini["base_url"],
        "https://generativelanguage.googleapis.com/v1beta/openai"
    );
}

/// Issue 28, point 4: the mistakes that used to pass silently are each warned, with the name
/// meant: a transposed field name (also when it is why the file is rejected), a model that
/// is neither a Claude alias nor a Claude id, a model of the other provider's family, and a
/// tool allow list that leaves an agent with no tools at all.
#[test]
fn the_mistakes_users_really_make_are_warned_with_the_name_meant() {
    let ws = support::TempWorkspace::new();
    let agent = |name: &str, field: &str| {
        format!("---\nname: {name}\ndescription: d\n{field}\n---\nDo it.\n")
    };
    ws.write(".claude/agents/a.md", agent("a", "modle: sonnet"));
    ws.write(".claude/agents/b.md", agent("b", "model: sonet"));
    ws.write(".claude/agents/c.md", agent("c", "model: gpt-5.4"));
    ws.write(
        ".claude/agents/d.md",
        agent("d", "model: sonnet\ntools: [\"workspace__serach\"]"),
    );
    ws.write(
        ".claude/agents/e.md",
        agent("e", "model: sonnet\ntools: [Raed]"),
    );
    ws.write(
        ".agents/agents/f.md",
        agent(
            "f",
            "model: claude-sonnet-5-5\nmodel_provider: openai\ntools: [github__search]",
        ),
    );
    let dir = ws.path().display().to_string();
    let out = mcp_agents(&["check", &dir]);
    assert_eq!(out.status.code(), Some(1), "a.md is rejected");
    let stderr = text(&out.stderr);
    let line = |file: &str| -> String {
        stderr
            .lines()
            .filter(|l| l.contains(file) && !l.contains("would fail when it runs"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        line("/a.md"),
        "rejected: .claude/agents/a.md: `modle` is not a field this runtime reads, so it is \
         ignored; did you mean `model`? As written, the definition uses its parent's model \
         (`model: inherit` or no model), which this server cannot see; name a model in the \
         file, or start the server with --default-model PROVIDER/MODEL (or set \
         MCP_AGENTS_DEFAULT_MODEL)"
    );
    assert_eq!(
        line("/b.md"),
        "warning: .claude/agents/b.md: `model: sonet` is neither one of Claude Code's aliases \
         (sonnet, opus, haiku, fable) nor a Claude model id (`claude-…`), so it goes to the \
         Anthropic API as written; did you mean `sonnet`?"
    );
    assert_eq!(
        line("/c.md"),
        "warning: .claude/agents/c.md: `gpt-5.4` is an OpenAI model, but this agent's provider \
         is anthropic (a Claude Code file's provider when it sets no `model_provider`), which \
         will not know it; set `model_provider: openai` for an OpenAI model, or name a Claude \
         model"
    );
    assert_eq!(
        line("/d.md"),
        "warning: .claude/agents/d.md: the tool allow list leaves this agent with no tools at \
         all: `workspace__serach` names no tool it has: it could have Read, LS, Glob, Grep, Edit, Write"
    );
    assert!(
        line("/e.md")
            .starts_with("warning: .claude/agents/e.md: runs without Raed (did you mean `Read`?)"),
        "{}",
        line("/e.md")
    );
    let f = line("/f.md");
    assert!(
        f.contains("`claude-sonnet-5-5` is a Claude model, but this agent's provider is openai")
            && f.contains(
                "the tool allow list leaves this agent with no tools at all: `github__search` \
                 names no tool it has: the file configures no child server named `github`"
            ),
        "{f}"
    );

    // With a default model the slip is a warning of its own, and the file loads.
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
    for var in CHANGES_CHECK {
        command.env_remove(var);
    }
    let out = command
        .args(["check", &dir, "--default-model", "sonnet"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(text(&out.stderr).contains(
        "warning: .claude/agents/a.md: `modle` is not a field this runtime reads, so it is \
         ignored; did you mean `model`?\n"
    ));
}

/// Issue 28, point 2: with stdout not a terminal (or with `--wide`), `check` prints the whole
/// table whatever its width; `--wide` does not go with `--json`.
#[test]
fn check_prints_the_whole_table_to_a_pipe_and_with_wide() {
    for args in [&["check"][..], &["check", "--wide"]] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
        for var in CHANGES_CHECK.iter().chain(EXAMPLE_VARS) {
            command.env_remove(var);
        }
        let out = command
            .args(args)
            .arg(example_workspace())
            .env("COLUMNS", "40")
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        let header = stdout.lines().next().unwrap();
        assert!(
            header.starts_with("NAME ") && header.ends_with("BUDGET"),
            "{stdout}"
        );
        assert!(header.len() > 150, "the whole table: {header}");
    }
    let out = mcp_agents(&["check", "--wide", "--json", &example_workspace()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}
