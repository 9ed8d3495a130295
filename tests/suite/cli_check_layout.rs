//! Issue 39, points 4 and 7: `check` on the published Copilot, Cursor and Gemini CLI files
//! (tests/fixtures/corpus, unedited), as a new user runs it without a default model: the
//! rejections a default model fixes said once with their names, a file's problems all at
//! once, and at 80 columns the agents first, then the warnings under their files, wrapped,
//! then a short summary.

use crate::support;

use std::path::Path;

use crate::support::pty::{COLS, Terminal};
use support::binary::BIN;

/// The published Copilot, Cursor and Gemini CLI files, in their folders.
fn published_files() -> support::TempWorkspace {
    let ws = support::TempWorkspace::new();
    let corpus = support::fixture_path("corpus");
    for folder in [".github/agents", ".cursor/agents", ".gemini/agents"] {
        copy_tree(&corpus.join(folder), &ws.path().join(folder));
    }
    ws
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The agents these files declare that need only a default model.
const PARENT_MODEL: [&str; 11] = [
    "build-release",
    "go-sdk-tool-migrator",
    "octopus-deploy-release-notes-mcp",
    "test-specialist",
    "triage",
    "ci-doctor",
    "code-reviewer",
    "researcher",
    "architecture-checker",
    "code-writer",
    "architecture-visualizer",
];

/// Point 4, in a pipe: one line says what the 11 files that need only a default model need,
/// and names them; the Cursor `manager` (`model: fast`, no description) has both problems
/// in its one line.
#[test]
fn the_default_model_is_asked_for_once_and_a_files_problems_come_together() {
    let ws = published_files();
    let out = std::process::Command::new(BIN)
        .arg("check")
        .arg(ws.path())
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let asking: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("MCP_AGENTS_DEFAULT_MODEL"))
        .collect();
    assert_eq!(
        asking.len(),
        2,
        "the group's line and the manager's: {stderr}"
    );
    let group = asking
        .iter()
        .find(|l| l.starts_with("rejected: 11 agents use their parent's model"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        group.ends_with(&format!(
            "name a model in each file: {}",
            PARENT_MODEL.join(", ")
        )),
        "{group}"
    );
    let manager = asking
        .iter()
        .find(|l| l.starts_with("rejected: .cursor/agents/manager.md: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        manager.contains("2 problems: (1) `description` is required and must not be empty; (2) `model: fast` names no model"),
        "{manager}"
    );
}

/// Point 7: at 80 columns the agents come first, then the warnings under their file, every
/// line within the width (no word broken by the terminal), then the summary last.
#[test]
fn at_80_columns_warnings_follow_the_agents_under_their_files() {
    let ws = published_files();
    let mut term = Terminal::start_in(&["check", "."], ws.path(), 400, |c| {
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
        ] {
            c.env_remove(var);
        }
    });
    let code = term.finish(|_| {});
    assert_eq!(code, 1);
    let screen = term.screen.screen();
    let all: Vec<String> = screen.rows(0, COLS).collect();
    let text = all.join("\n");
    for (i, row) in all.iter().enumerate() {
        assert!(
            !screen.row_wrapped(u16::try_from(i).unwrap()),
            "row {i} wrapped:\n{text}"
        );
        assert!(row.chars().count() <= usize::from(COLS));
    }
    let at = |wanted: &str| {
        all.iter()
            .position(|r| r == wanted)
            .unwrap_or_else(|| panic!("no row {wanted:?}:\n{text}"))
    };
    let first_block = at("reviewer");
    let heading = at("Warnings, by file:");
    let manager = at(".cursor/agents/manager.md");
    assert!(first_block < heading && heading < manager, "{text}");
    assert!(
        all[manager + 1].starts_with("  rejected: 2 problems: (1) `description` is required"),
        "{text}"
    );
    // A file's warnings sit under it, once.
    assert_eq!(
        all.iter()
            .filter(|r| *r == ".github/agents/reviewer.agent.md")
            .count(),
        1,
        "{text}"
    );
    let group = all
        .iter()
        .position(|r| r.starts_with("rejected: 11 agents use their parent's model"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(group > manager, "{text}");
    let last: Vec<&String> = all.iter().filter(|r| !r.trim().is_empty()).collect();
    let summary = last
        .iter()
        .rposition(|r| r.starts_with("3 agents (3 not ready to run), 14 rejected files"))
        .unwrap_or_else(|| panic!("{text}"));
    // After the summary line come only its notes (what the not-ready agents need, what
    // edit/write never change): no block, no file and no warning.
    let notes = &last[summary + 1..];
    assert!(
        notes.len() <= 8
            && notes
                .iter()
                .all(|r| !r.starts_with(' ') || !r.contains("warning:"))
            && notes[0].starts_with("Agents not ready to run"),
        "the summary ends the report:\n{text}"
    );
}
