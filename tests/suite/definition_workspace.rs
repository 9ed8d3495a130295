//! Which agents get the built-in `workspace` server and which of its tools (SPEC §8.6,
//! FORMATS.md): every format's rules, denials, the allow-list mapping (`Read` →
//! `workspace__read`), read-only mode, the reserved name, and what `check` shows of it.

use crate::support;

use std::process::Command;

use mcp_agents::definition::{BuiltinServer, ChildTransport};
use serde_json::Value;

#[test]
fn every_format_gets_the_workspace_tools_its_file_asks_for() {
    let catalog = support::check_fixture("workspace");
    assert_eq!(catalog.agents().len(), 25);
    // The server is started only for agents that get one of its tools, as a built-in.
    for agent in catalog.agents() {
        let server = agent.mcp_servers.get("workspace");
        assert_eq!(
            server.is_some(),
            !agent.workspace_tools().is_empty(),
            "{}",
            agent.name
        );
        if let Some(server) = server {
            assert_eq!(
                server.transport,
                ChildTransport::Builtin(BuiltinServer::Workspace)
            );
        }
    }
}

#[test]
fn claude_names_map_onto_the_workspace_tools() {
    let catalog = support::load_fixture("workspace");
    let agent = catalog.get("claude-read-grep-glob").unwrap();
    for (tool, offered) in [
        ("read", true),
        ("grep", true),
        ("glob", true),
        ("list", false),
        ("edit", false),
        ("write", false),
    ] {
        let hints = BuiltinServer::Workspace.tool_hints(tool);
        assert_eq!(
            agent.offers_tool("workspace", tool, hints),
            offered,
            "{tool}"
        );
    }
    // The tools pass the lists under the name the model is offered, too.
    let allow = agent.tools.allow.as_ref().unwrap();
    let globs: Vec<&str> = allow.iter().map(|p| p.glob()).collect();
    assert_eq!(
        globs,
        ["workspace__read", "workspace__grep", "workspace__glob"]
    );
}

#[test]
fn check_shows_each_agents_workspace_tools_and_one_warning_for_what_is_missing() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(["check", "--json"])
        .arg(support::fixture_path("workspace"))
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "some files are rejected");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    each_agent_has_its_workspace_tools(&report);
    each_file_has_its_one_warning(&report);
    the_table_shows_the_workspace_tools();
}

fn each_agent_has_its_workspace_tools(report: &Value) {
    let agent = |name: &str| {
        report["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let tools = |name: &str| agent(name)["workspace_tools"].clone();
    let every = serde_json::json!(["read", "list", "glob", "grep", "edit", "write"]);
    let reads = serde_json::json!(["read", "list", "glob", "grep"]);
    assert_eq!(tools("claude-no-tools"), every);
    assert_eq!(
        tools("claude-read-grep-glob"),
        serde_json::json!(["read", "glob", "grep"])
    );
    assert_eq!(tools("codex"), every);
    assert_eq!(tools("codex-read-only"), reads);
    assert_eq!(tools("opencode-default"), every);
    assert_eq!(
        tools("opencode-read-off"),
        serde_json::json!(["list", "glob", "grep", "edit"])
    );
    assert_eq!(tools("canonical-plain"), serde_json::json!([]));
    assert_eq!(tools("canonical-named"), reads);
    // The built-in is not one of the definition's own servers.
    assert_eq!(
        agent("claude-ls-and-mcp")["mcp_servers"],
        serde_json::json!(["docs"])
    );
    assert_eq!(agent("codex")["mcp_servers"], serde_json::json!([]));
}

/// What the file says; readiness (`will_fail_at_spawn`) depends on the environment the
/// test runs in, and `suite::cli_check` covers it.
fn each_file_has_its_one_warning(report: &Value) {
    let warnings_for = |file: &str| -> Vec<String> {
        report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["file"] == file && w["effect"] != "will_fail_at_spawn")
            .map(|w| w["reason"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        warnings_for(".claude/agents/claude-missing.md"),
        [
            "runs without Bash, WebFetch: this runtime has no such tools (of Claude Code's tools \
          only Read, Grep, Glob, LS, Edit, MultiEdit and Write exist here, as the built-in \
          workspace server's)"
        ]
    );
    // Denying a tool that does not exist here is honoured by its absence: no warning.
    // (Its one warning is about `Read` denied and `Edit` kept.)
    assert_eq!(
        warnings_for(".claude/agents/claude-denied.md"),
        [
            "can change files but not read them: a file is changed only after this run has read \
          it, so without the read tool the agent can only create new files"
        ]
    );
    assert_eq!(
        warnings_for(".opencode/agents/opencode-read-off.md"),
        [
            "can change files but not read them: a file is changed only after this run has read \
          it, so without the read tool the agent can only create new files"
        ]
    );
}

fn the_table_shows_the_workspace_tools() {
    let table = Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("check")
        .arg(support::fixture_path("workspace"))
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let header = table.lines().next().unwrap();
    let column = header.find("WORKSPACE").unwrap();
    let row = |name: &str| {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap();
        line[column..].split("  ").next().unwrap().trim().to_owned()
    };
    assert_eq!(row("claude-missing"), "read, edit, write");
    assert_eq!(row("opencode-only-grep"), "grep");
    assert_eq!(row("canonical-plain"), "-");
    assert_eq!(row("codex-deny"), "read, list, glob, edit, write");
}
