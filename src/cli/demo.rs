//! `mcp-agents demo`: the whole product offline, with no key and no network. The bundled
//! example workspace ([`EXAMPLE_WORKSPACE`]) is written to a temporary directory, and its
//! `reviewer` (a Claude Code file with `tools: Read, Grep, Glob`) reviews its `src/retry.py`
//! through the built-in `workspace` server, a real child MCP server. The model is a scripted
//! endpoint on loopback speaking the real Anthropic Messages wire format (the same mock the
//! tests use); the demo's copy of the reviewer gains four lines that point it there. The
//! agent runs through the same session manager as the server and `mcp-agents run`, with its
//! activity shown live, and the demo then shows what the workspace tools gave the model.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::terminal::{fit, stderr_columns};
use crate::child_mcp::SelfCommand;
use crate::discovery::{LoadOptions, Workspace, load_catalog};
use crate::sessions::SessionManager;
use crate::testkit::{MockProvider, Step};
use crate::toolbox::EnvLookup;

/// What to do after the demo: the first thing a user needs (issue 16): every folder agent
/// files are read from, and adding the server to Claude Code as README does, with the
/// default model for the agents that use their parent's (issue 39).
pub(super) fn next_step() -> String {
    let folders: Vec<&str> = crate::discovery::format_folders().collect();
    format!(
        "Next: in a repository with agent files ({}), `mcp-agents check` lists them and what \
         they need, and `claude mcp add --scope project agents -e \
         MCP_AGENTS_DEFAULT_MODEL=anthropic/claude-sonnet-5-5 -- mcp-agents` adds the server to \
         Claude Code, with the model for agents that use their parent's (Codex and other \
         clients: docs/clients.md; writing agents: docs/agents.md).",
        folders.join(", ")
    )
}

/// Before [`next_step`] when `mcp-agents` is not on PATH (the demo ran through `cargo run`):
/// the clients start it by that name (issue 28).
pub(super) const INSTALL_STEP: &str = "First, `cargo install --locked --path .` in this clone \
puts mcp-agents on your PATH, where MCP clients look for it (a release build: about ten \
minutes on two cores).";

/// The closing hint: how to install, when `mcp-agents` is not on `PATH`, then what to do.
fn closing_hint(path: Option<std::ffi::OsString>) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    match which::which_in("mcp-agents", path, cwd) {
        Ok(_) => next_step(),
        Err(_) => format!("{INSTALL_STEP}\n{}", next_step()),
    }
}

/// The variable the demo agent reads its key from; the demo supplies it itself.
const KEY_VAR: &str = "MCP_AGENTS_DEMO_KEY";
const KEY: &str = "demo-key-not-a-secret";

/// The example workspace (`examples/workspace`), bundled so the demo runs anywhere.
pub const EXAMPLE_WORKSPACE: &[(&str, &str)] = &[
    (
        ".agents/agents/local-explainer.md",
        include_str!("../../examples/workspace/.agents/agents/local-explainer.md"),
    ),
    (
        ".agents/agents/researcher.md",
        include_str!("../../examples/workspace/.agents/agents/researcher.md"),
    ),
    (
        ".agents/skills/citations/SKILL.md",
        include_str!("../../examples/workspace/.agents/skills/citations/SKILL.md"),
    ),
    (
        ".claude/agents/code-reviewer.md",
        include_str!("../../examples/workspace/.claude/agents/code-reviewer.md"),
    ),
    (
        ".claude/agents/reviewer.md",
        include_str!("../../examples/workspace/.claude/agents/reviewer.md"),
    ),
    (
        ".codex/agents/docs-writer.toml",
        include_str!("../../examples/workspace/.codex/agents/docs-writer.toml"),
    ),
    (
        ".opencode/agents/triager.md",
        include_str!("../../examples/workspace/.opencode/agents/triager.md"),
    ),
    (
        "src/retry.py",
        include_str!("../../examples/workspace/src/retry.py"),
    ),
];

/// The agent the demo runs, and the file it comes from.
pub(super) const AGENT: &str = "reviewer";
const AGENT_FILE: &str = ".claude/agents/reviewer.md";

/// The task the demo gives its agent.
pub(super) const TASK: &str = "Review the retry helper in src/ of this workspace.";

/// What the scripted model answers once it has read the file, in lines that fit an
/// 80-column terminal (the result is printed as the model wrote it).
pub const RESULT: &str = "src/retry.py:8: `backoff` waits twice as long as its docstring \
    promises:\n`base * 2 ** attempt` gives 1.0 s before the first retry (attempt 1), not \
    0.5 s,\nand reaches the 8 s cap one retry early. Use `base * 2 ** (attempt - 1)`.\n\
    src/retry.py: nothing tests the schedule; add a test that checks 0.5, 1.0, 2.0\n\
    and the cap.\n\n\
    verdict: request changes";

pub(super) async fn run_demo(
    json: bool,
    itself: SelfCommand,
    cancel: CancellationToken,
) -> ExitCode {
    match prepare(itself).await {
        Ok((mock, workspace, manager)) => {
            // Wrapped at spaces on a terminal: the terminal would break words.
            let width = stderr_columns();
            eprintln!(
                "{}",
                fit(
                    &format!(
                        "mcp-agents demo: the example workspace's `{AGENT}` ({AGENT_FILE}, a \
                         Claude Code agent with `tools: Read, Grep, Glob`) reads its code \
                         through the built-in `workspace` MCP server; the model is scripted, \
                         at {} (Anthropic Messages wire format), so no key or network is \
                         needed",
                        mock.messages_base_url()
                    ),
                    width
                )
            );
            eprintln!("{}", fit(&format!("task: {TASK}"), width));
            let code = super::run::run_agent(manager, AGENT, TASK, json, cancel).await;
            if let Some(last) = mock.requests().last() {
                eprint!("{}", what_the_tools_gave(&last.body, width));
            }
            drop(workspace);
            drop(mock);
            if code == ExitCode::SUCCESS {
                eprintln!("{}", fit(&closing_hint(std::env::var_os("PATH")), width));
            }
            code
        }
        Err(message) => {
            eprintln!("error: the demo could not start: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn prepare(
    itself: SelfCommand,
) -> Result<(MockProvider, tempfile::TempDir, Arc<SessionManager>), String> {
    let mock = MockProvider::start_unchecked(KEY)
        .await
        .map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let pause = Duration::from_millis(500);
    mock.push([
        Step::tool_call("workspace__glob", json!({"pattern": "*.py", "path": "src"}))
            .with_reasoning()
            .delayed(pause),
        Step::tool_calls(vec![
            (
                "workspace__grep",
                json!({"pattern": "backoff", "path": "src"}),
            ),
            ("workspace__read", json!({"path": "src/retry.py"})),
        ])
        .delayed(pause),
        Step::text(RESULT).delayed(pause),
    ]);
    let workspace = tempfile::tempdir().map_err(|e| format!("cannot make a workspace: {e}"))?;
    for (rel, text) in EXAMPLE_WORKSPACE {
        let text = if *rel == AGENT_FILE {
            point_at(text, &mock.messages_base_url())
        } else {
            (*text).to_owned()
        };
        let path = workspace.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(workspace.path()))
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| format!("cannot write the example workspace: {e}"))?;
    }
    let opened = Workspace::open(workspace.path())?;
    let catalog = load_catalog(&opened, &LoadOptions::default());
    if let Some(warning) = catalog.warnings().first() {
        return Err(format!(
            "the example workspace did not load cleanly: {warning}"
        ));
    }
    let env: EnvLookup = Arc::new(|var| {
        if var == KEY_VAR {
            Some(KEY.to_owned())
        } else {
            std::env::var(var).ok()
        }
    });
    let manager = super::runtime::session_manager(catalog, env, itself, Arc::default());
    Ok((mock, workspace, manager))
}

/// The agent file with the canonical provider fields (accepted in every format) added at
/// the top of its frontmatter, pointing it at the scripted model.
fn point_at(agent: &str, base_url: &str) -> String {
    let body = agent.strip_prefix("---\n").unwrap_or(agent);
    format!(
        "---\nmodel_provider: custom\nbase_url: {base_url}\nenv_key: {KEY_VAR}\n\
         wire_api: anthropic-messages\n{body}"
    )
}

/// From the last request the model received: each workspace tool call, its arguments,
/// and the first lines of what it answered; on a terminal `width` columns wide, a line
/// longer than that is cut with `…` (it is code: wrapping would misalign it).
fn what_the_tools_gave(request: &Value, width: Option<usize>) -> String {
    let messages = request["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let blocks = || {
        messages
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
    };
    let mut out = String::from("mcp-agents demo: what the workspace tools gave the model:\n");
    for call in blocks().filter(|b| b["type"] == "tool_use") {
        let Some(result) =
            blocks().find(|b| b["type"] == "tool_result" && b["tool_use_id"] == call["id"])
        else {
            continue;
        };
        let text = match &result["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let lines: Vec<&str> = text.lines().collect();
        out.push_str(&format!(
            "  {} {} ({} line{}):\n",
            call["name"].as_str().unwrap_or("?"),
            call["input"],
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        ));
        for line in lines.iter().take(12) {
            out.push_str(&cut_to(&format!("    {line}"), width));
            out.push('\n');
        }
        if lines.len() > 12 {
            out.push_str("    …\n");
        }
    }
    out
}

/// `line` within `width` columns, tabs expanded to the next multiple of 8, cut with `…`;
/// as it is without a width.
fn cut_to(line: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return line.to_owned();
    };
    let mut shown = String::new();
    let mut column = 0;
    for c in line.chars() {
        let next = if c == '\t' {
            (column / 8 + 1) * 8
        } else {
            column + 1
        };
        if next > width.saturating_sub(1) {
            shown.push('…');
            return shown;
        }
        if c == '\t' {
            shown.push_str(&" ".repeat(next - column));
        } else {
            shown.push(c);
        }
        column = next;
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_agent_points_at_the_mock_and_keeps_its_file() {
        let text = point_at("---\nname: reviewer\n---\nBody.\n", "http://127.0.0.1:9");
        assert_eq!(
            text,
            "---\nmodel_provider: custom\nbase_url: http://127.0.0.1:9\nenv_key: \
             MCP_AGENTS_DEMO_KEY\nwire_api: anthropic-messages\nname: reviewer\n---\nBody.\n"
        );
    }

    #[test]
    fn long_lines_are_cut_to_the_terminal_with_tabs_expanded() {
        assert_eq!(cut_to("a\tb", None), "a\tb");
        assert_eq!(cut_to("a\tb", Some(80)), "a       b");
        assert_eq!(cut_to("abcdefghij", Some(6)), "abcde…");
        assert_eq!(cut_to("abcde", Some(6)), "abcde");
    }

    #[test]
    fn tool_results_are_paired_with_their_calls() {
        let request = json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "workspace__read", "input": {"path": "x"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "     1\tline one\n     2\ttwo"}
            ]}
        ]});
        assert_eq!(
            what_the_tools_gave(&request, None),
            "mcp-agents demo: what the workspace tools gave the model:\n  workspace__read \
             {\"path\":\"x\"} (2 lines):\n         1\tline one\n         2\ttwo\n"
        );
    }
}
