//! Issue 39, the first hour: what a new user reads in their first hour, through the binary.
//! What the parent model is told about what each agent can do, a reply that fills the
//! context window, Copilot's tool names, a Gemini file in a subfolder, the demo's output,
//! and Ctrl-C from the terminal.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use support::binary::{self, BIN};
use support::children::{self, agent};
use support::run_kit::KEY;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Point 11: Ctrl-C before the agent wrote any text says so, and names no parent: the
/// person at the terminal stopped it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_before_any_text_says_there_is_no_partial_result() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Too late.").delayed(Duration::from_secs(60))]);
    let ws = tempfile::tempdir().unwrap();
    children::write(
        ws.path(),
        ".agents/agents/s.md",
        &agent(&mock, "slow", "", ""),
    );
    let child = tokio::process::Command::new(BIN)
        .args(["run", "slow", "Think."])
        .current_dir(ws.path())
        .env(binary::KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..400 {
        if !mock.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        mock.requests().len(),
        1,
        "the model was asked before Ctrl-C"
    );
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "error: cancelled: interrupted from the terminal (Ctrl-C); no partial result\n"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("by the parent"), "{stderr}");
    assert_eq!(text(&out.stdout), "", "no result, no partial result");
}

/// Point 2: docs/agents.md's llama.cpp Chat Completions example bounds a reply, as its
/// Responses one does: a small model writes until its window is full otherwise.
#[test]
fn the_docs_llama_cpp_chat_example_bounds_a_reply() {
    let example = super::docs::llama_cpp_chat_example();
    let ws = support::TempWorkspace::new();
    ws.write(".agents/agents/llama.md", &example);
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    let agent = catalog.get("llama-local").expect("the example loads");
    let limit = agent
        .max_output_tokens
        .expect("the example sets max_output_tokens");
    // The engine of the docs and of `suite::real_engine` has an 8k window.
    assert!(limit <= 2048, "{limit}");
}

/// Point 2: a reply that ran until it filled the context window (the prompt fitted, the
/// output ran to the end: llama.cpp stops it with `finish_reason: length`) leaves a
/// conversation the next request cannot fit. The failure says so and points at
/// `max_output_tokens`, not at a narrower task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_filled_the_window_points_at_max_output_tokens() {
    use mcp_agents::testkit::MockEngine;
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::LlamaCpp);
    mock.set_context_limit(4_000);
    mock.push([Step::text(&"ramble ".repeat(1_000)).cut_off()]);
    let example = super::docs::llama_cpp_chat_example();
    let unbounded: String = example
        .lines()
        .filter(|l| !l.starts_with("max_output_tokens:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let definition = unbounded
        .replace("http://127.0.0.1:8080/v1", &mock.chat_base_url())
        .replace("LLAMA_API_KEY", binary::KEY_VAR);
    let ws = support::TempWorkspace::new();
    ws.write(".agents/agents/llama.md", &definition);
    let ran = binary::run_json(
        ws.path(),
        "llama-local",
        "Explain Rust lifetimes.",
        &[(binary::KEY_VAR, KEY)],
        Duration::from_secs(60),
    )
    .await;
    assert!(!ran.success, "{}", ran.record);
    assert_eq!(
        ran.record["error"]["code"], "context_limit",
        "{}",
        ran.record
    );
    let message = ran.record["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exceeds the available context size")
            && message.contains("the model's last reply ran on until it filled the context window")
            && message.contains("`max_output_tokens`"),
        "{message}"
    );
    assert!(!message.contains("narrower task"), "{message}");
    assert_eq!(mock.requests().len(), 2, "the reply, then its continuation");
}

/// `mcp-agents check --json` of `workspace`, with the machine's keys and default model
/// removed: its report, and its stderr.
pub(super) fn check_json(
    workspace: &std::path::Path,
    env: &[(&str, &str)],
) -> (serde_json::Value, String) {
    let mut command = std::process::Command::new(BIN);
    command
        .arg("check")
        .arg(workspace)
        .arg("--json")
        .env_remove("RUST_LOG")
        .env_remove("MCP_AGENTS_DEFAULT_MODEL");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    (report, text(&out.stderr))
}

/// Point 5: a typical VS Code Copilot file reads the code it edits: `codebase` (VS Code's
/// semantic search, which gives the model the code it finds) is the reading tools here, so
/// `editFiles` can change existing files; only `runCommands` is missing.
#[test]
fn a_vs_code_copilot_file_with_codebase_reads_what_it_edits() {
    let ws = support::TempWorkspace::new();
    ws.write(
        ".github/agents/fixer.agent.md",
        "---\ndescription: Fix a failing test.\n\
         tools: ['codebase', 'search', 'editFiles', 'runCommands']\nmodel: GPT-5\n---\nFix it.\n",
    );
    let (report, _) = check_json(ws.path(), &[]);
    let agent = support::agent_named(&report, "fixer");
    assert_eq!(
        agent["workspace_tools"],
        serde_json::json!(["read", "list", "glob", "grep", "edit", "write"]),
        "{report:#}"
    );
    let reasons = support::loading_reasons(&report);
    assert_eq!(reasons.len(), 1, "{reasons:#?}");
    assert!(
        reasons[0].starts_with("runs without runCommands:"),
        "{reasons:#?}"
    );
}

/// Point 9: a Gemini CLI file in a subfolder of `.gemini/agents` is not loaded, as the
/// Gemini CLI does not load it, and `check` says so instead of skipping it without a word.
#[test]
fn a_gemini_file_in_a_subfolder_gets_a_note() {
    let ws = support::TempWorkspace::new();
    let file = "---\nname: x\ndescription: d\nmodel: gemini-2.5-flash\n---\nDo.\n";
    ws.write(".gemini/agents/team/x.md", file);
    ws.write(
        ".gemini/agents/team/y.md",
        file.replace("name: x", "name: y"),
    );
    ws.write(".gemini/agents/empty/notes.txt", "not a definition");
    let (report, stderr) = check_json(ws.path(), &[]);
    assert_eq!(report["agents"], serde_json::json!([]), "{report:#}");
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{report:#}");
    assert_eq!(warnings[0]["file"], ".gemini/agents/team");
    assert_eq!(warnings[0]["effect"], "skipped");
    assert_eq!(
        warnings[0]["reason"],
        "holds 2 definition files, which the Gemini CLI does not read: it reads only the \
         files directly in .gemini/agents, and so does this server; move them up to load them"
    );
    assert!(
        stderr.contains("warning: .gemini/agents/team: holds 2"),
        "{stderr}"
    );
}

/// Point 1: the parent is told what agents here can do. The server's instructions no longer
/// say agents here cannot edit files; `spawn_agent` marks the agents that edit files (a
/// Read+Edit fixer was unmarked), the one with no tool at all (it answers from its
/// instructions alone), and says that none runs shell commands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parent_is_told_which_agents_edit_files_and_which_have_no_tools() {
    use support::binary::Generation;
    let ws = support::TempWorkspace::new();
    let claude = |name: &str, tools: &str| {
        format!(
            "---\nname: {name}\ndescription: Does {name} work.\ntools: {tools}\nmodel: sonnet\n\
             ---\nWork.\n"
        )
    };
    ws.write(".claude/agents/fixer.md", claude("fixer", "Read, Edit"));
    ws.write(
        ".claude/agents/reader.md",
        claude("reader", "Read, Grep, Glob"),
    );
    ws.write(
        ".agents/agents/explainer.md",
        "---\nname: explainer\ndescription: Explains code pasted into the task.\n\
         model: claude-sonnet-5-5\nmodel_provider: anthropic\n---\nExplain.\n",
    );
    let c = binary::stdio_env(
        ws.path(),
        Generation::Legacy,
        &[("ANTHROPIC_API_KEY", KEY)],
        &["ANTHROPIC_AUTH_TOKEN"],
    )
    .await;
    let instructions = c
        .client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .expect("the server gives instructions");
    assert!(
        !instructions.contains("which agents here do not get"),
        "{instructions}"
    );
    assert!(
        instructions
            .contains("those marked \"edits files\" in spawn_agent's list also change files in it")
            && instructions.contains("none runs shell commands"),
        "{instructions}"
    );
    let tools = c.tools().await;
    let spawn = tools
        .iter()
        .find(|t| t.name == "spawn_agent")
        .and_then(|t| t.description.as_deref())
        .unwrap()
        .to_owned();
    let lines: Vec<&str> = spawn.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        [
            "- explainer: Explains code pasted into the task. (no tools: answers from its \
             instructions alone)",
            "- fixer: Does fixer work. (edits files)",
            "- reader: Does reader work.",
        ],
        "{spawn}"
    );
    assert!(
        spawn.contains("No agent here runs shell commands"),
        "{spawn}"
    );
    assert!(!spawn.contains("it cannot edit files"), "{spawn}");
    c.close().await;
}

/// Point 8: the demo on an 80-column terminal: no line is broken by the terminal ("P\nATH"),
/// and its "Next:" names every folder agent files are read from and adds the server to
/// Claude Code as README does, with the default model.
#[test]
fn the_demo_fits_the_terminal_and_names_every_agent_folder() {
    use crate::support::pty::{COLS, Terminal};
    let dir = tempfile::tempdir().unwrap();
    let mut term = Terminal::start_in(&["demo"], dir.path(), 200, |c| {
        c.env("PATH", "/nonexistent");
    });
    assert_eq!(term.finish(|_| {}), 0);
    let screen = term.screen.screen();
    let all: Vec<String> = screen.rows(0, COLS).collect();
    let text = all.join("\n");
    for i in 0..all.len() {
        assert!(
            !screen.row_wrapped(u16::try_from(i).unwrap()),
            "row {i} wrapped:\n{text}"
        );
    }
    let joined = all
        .iter()
        .map(|r| r.trim_end())
        .collect::<Vec<_>>()
        .join(" ");
    let next = &joined[joined.find("Next:").unwrap_or_else(|| panic!("{text}"))..];
    for folder in mcp_agents::discovery::agent_roots() {
        if folder == ".opencode/agent" {
            continue; // OpenCode's older spelling of `.opencode/agents`
        }
        assert!(next.contains(folder), "{folder} missing from: {next}");
    }
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let add = "claude mcp add --scope project agents -e MCP_AGENTS_DEFAULT_MODEL=anthropic/claude-sonnet-5-5 -- mcp-agents";
    assert!(readme.contains(add), "README gives {add}");
    assert!(next.contains(&format!("`{add}`")), "{next}");
    assert!(
        text.contains("First, `cargo install --locked --path .`"),
        "{text}"
    );
}
