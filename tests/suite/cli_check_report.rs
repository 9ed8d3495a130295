//! What `check` says of each agent, driven through the real binary: whether it is ready to
//! run and what it would miss, its effective budgets, the wire API it speaks, the mistakes
//! users really make (each warned with the name meant), and the whole table on a pipe.

use crate::support;

use std::process::{Command, Output};

use support::TempWorkspace;
use support::cli::{
    CHANGES_CHECK, EXAMPLE_VARS, check_example, example_workspace, mcp_agents, text,
};

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
    let effects = support::each_str(&report["warnings"], "effect");
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

/// A workspace with an agent on each kind of endpoint: a custom Chat Completions server
/// (`local`), OpenAI's with Chat Completions chosen (`openai-chat`), Gemini (`gemini`),
/// OpenAI's own wire (`plain`), and a Claude file that inherits the parent's model
/// (`parent`).
fn agents_on_every_wire() -> TempWorkspace {
    let ws = TempWorkspace::new();
    let write = |name: &str, fields: &str| {
        let text = format!("---\nname: {name}\ndescription: d\n{fields}\n---\nDo.\n");
        ws.write(&format!(".agents/agents/{name}.md"), text);
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
    ws.write(
        ".claude/agents/parent.md",
        "---\nname: parent\ndescription: d\nmodel: inherit\n---\nDo.\n",
    );
    ws
}

/// The row of agent `name` in `check`'s `table`.
fn row_of(table: &str, name: &str) -> String {
    table
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} in {table}"))
        .to_owned()
}

/// `check` shows each agent's wire API: a custom provider's always, a built-in provider's
/// when the definition chose another than its own; `--json` has `wire_api` for every agent;
/// `--default-model gemini/…` gives the parent's model on Gemini's endpoint.
#[test]
fn check_shows_the_wire_each_agent_speaks() {
    let ws = agents_on_every_wire();
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
    let row = |name: &str| row_of(&table, name);
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

/// A workspace of the mistakes of [`the_mistakes_users_really_make_are_warned_with_the_name_meant`],
/// one a file: `a.md` to `f.md`.
fn workspace_of_mistakes() -> TempWorkspace {
    let ws = TempWorkspace::new();
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
    ws
}

/// The lines of `stderr` about `file`, but for what a run would miss.
fn said_of(stderr: &str, file: &str) -> String {
    stderr
        .lines()
        .filter(|l| l.contains(file) && !l.contains("would fail when it runs"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Issue 28, point 4: the mistakes that used to pass silently are each warned, with the name
/// meant: a transposed field name (also when it is why the file is rejected), a model that
/// is neither a Claude alias nor a Claude id, a model of the other provider's family, and a
/// tool allow list that leaves an agent with no tools at all.
#[test]
fn the_mistakes_users_really_make_are_warned_with_the_name_meant() {
    let ws = workspace_of_mistakes();
    let dir = ws.path().display().to_string();
    let out = mcp_agents(&["check", &dir]);
    assert_eq!(out.status.code(), Some(1), "a.md is rejected");
    let stderr = text(&out.stderr);
    let line = |file: &str| said_of(&stderr, file);
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
    let out = mcp_agents(&["check", &dir, "--default-model", "sonnet"]);
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
