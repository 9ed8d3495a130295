//! The binary on a real terminal (a pseudo-terminal of 80 columns and 24 rows, read through
//! a terminal emulator): `run`'s live status line, the lines it leaves and Ctrl-C, `check`
//! at 80 columns, and the bare server's hint.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use support::binary::KEY_VAR;
use support::children::{agent, stdio_child};
use support::pty::{COLS, Terminal, rows};
use support::run_kit::KEY;

/// An agent whose model has a long name, answering after two overloaded retries, and whose
/// child server writes to stderr while the line is shown.
fn long_runner_workspace(mock: &MockProvider) -> tempfile::TempDir {
    let model = "claude-sonnet-5-5-20261101-extended-thinking-preview-with-a-long-name";
    let overloaded = || {
        Step::openai_error(
            503,
            "server_error",
            None,
            "The server is overloaded right now; please try again later.",
        )
        .with_header("retry-after-ms", "700")
    };
    mock.push([
        overloaded(),
        overloaded(),
        Step::text("All done.").delayed(Duration::from_millis(900)),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let definition = agent(
        mock,
        "long-runner",
        &stdio_child(
            "fx",
            &["--say", "child log line from the fixture"],
            "pty",
            "",
        ),
        "",
    )
    .replace("model: mock-model", &format!("model: {model}"));
    support::children::write(ws.path(), ".agents/agents/long.md", &definition);
    ws
}

/// What the frames of `long-runner`'s run showed, each checked as it was drawn.
#[derive(Default)]
struct StatusFrames {
    frames: usize,
    /// A frame showed the retry.
    saw_retry: bool,
    /// The most status lines one frame showed.
    most: usize,
}

impl StatusFrames {
    /// At most one status line, never wrapped, never a phase's name.
    fn check(&mut self, screen: &vt100::Screen) {
        self.frames += 1;
        let all = rows(screen);
        let status: Vec<usize> = (0..all.len())
            .filter(|&r| all[r].contains("long-runner · "))
            .collect();
        self.most = self.most.max(status.len());
        assert!(
            status.len() <= 1,
            "a redraw left a stale status line:\n{}",
            all.join("\n")
        );
        for &r in &status {
            let r = u16::try_from(r).unwrap();
            assert!(
                !screen.row_wrapped(r),
                "the status line (row {r}) wrapped:\n{}",
                all.join("\n")
            );
        }
        for phase in ["provider_request", "child_mcp_startup", "tool_call"] {
            assert!(
                !all.iter().any(|row| row.contains(phase)),
                "the live line shows the phase name {phase}:\n{}",
                all.join("\n")
            );
        }
        self.saw_retry |= all
            .iter()
            .any(|row| row.contains("long-runner · ") && row.contains("after HTTP 503"));
    }
}

/// A model with a long name, answering after two overloaded retries, and a child server
/// that writes to stderr while the line is shown: each of them used to leave stale lines.
#[test]
fn the_status_line_stays_one_line_at_80_columns() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockProvider::start(KEY)).unwrap();
    let ws = long_runner_workspace(&mock);

    let mut term = Terminal::start(&["run", "long-runner", "Do it."], ws.path());
    let mut seen = StatusFrames::default();
    let code = term.finish(|screen| seen.check(screen));
    assert_eq!(code, 0, "{}", term.screen.screen().contents());
    assert!(seen.saw_retry, "a frame showed the retry, cut to the width");
    assert_eq!(seen.most, 1, "the line was shown");
    assert!(seen.frames > 3, "{} frames", seen.frames);

    let end = rows(term.screen.screen());
    assert!(
        !end.iter().any(|row| row.contains("long-runner · ")),
        "the line is cleared at the end:\n{}",
        end.join("\n")
    );
    let text = end.join("\n");
    assert!(
        text.contains("[fx] child log line from the fixture"),
        "{text}"
    );
    assert!(text.contains("All done."), "{text}");
    assert!(
        text.contains("mcp-agents: long-runner completed in"),
        "{text}"
    );
    drop(mock);
}

/// Issue 28, point 8: each finished tool call stays on screen as one line above the status
/// line (its name, as the activity says it), in order, before the result.
#[test]
fn finished_tool_calls_stay_on_screen_above_the_status_line() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockProvider::start(KEY)).unwrap();
    mock.push([
        Step::tool_call("fx__echo", serde_json::json!({"text": "one"})),
        Step::tool_calls(vec![
            ("fx__echo", serde_json::json!({"text": "two"})),
            ("fx__sleep", serde_json::json!({"ms": 300})),
        ]),
        Step::text("All done.").delayed(Duration::from_millis(300)),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let definition = agent(
        &mock,
        "caller",
        &stdio_child("fx", &[], "pty-calls", ""),
        "",
    );
    support::children::write(ws.path(), ".agents/agents/caller.md", &definition);
    let mut term = Terminal::start(&["run", "caller", "Call them."], ws.path());
    let code = term.finish(|_| {});
    let end = rows(term.screen.screen());
    let text = end.join("\n");
    assert_eq!(code, 0, "{text}");
    let called: Vec<&String> = end.iter().filter(|r| r.contains("called ")).collect();
    assert_eq!(called.len(), 3, "{text}");
    assert!(called[0].starts_with("  called fx.echo ("), "{text}");
    assert!(!called[0].contains("at once"), "{text}");
    assert!(
        called[1].starts_with("  called fx.echo (") && called[1].ends_with(", 2 at once)"),
        "{text}"
    );
    assert!(
        called[2].starts_with("  called fx.sleep (") && called[2].ends_with(", 2 at once)"),
        "{text}"
    );
    for row in &called {
        assert!(
            !row.contains("one") && !row.contains("two"),
            "names only: {row}"
        );
    }
    let last_call = end.iter().rposition(|r| r.contains("called ")).unwrap();
    let result = end.iter().position(|r| r == "All done.").unwrap();
    assert!(last_call < result, "{text}");
    assert!(!end.iter().any(|r| r.contains("caller · ")), "{text}");
    drop(mock);
}

/// Issue 28, point 8: Ctrl-C on a terminal stops the agent and prints its partial result,
/// and the status line leaves nothing behind (the terminal's `^C` echo used to wrap past
/// the line, which then stayed on screen as `…0.9 s^`).
#[test]
fn ctrl_c_on_a_terminal_leaves_no_line_behind_and_prints_the_partial_result() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockProvider::start(KEY)).unwrap();
    mock.push([
        Step::tool_call("fx__sleep", serde_json::json!({"ms": 60_000}))
            .with_text("Half way there."),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let definition = agent(
        &mock,
        "sleeper",
        &stdio_child("fx", &[], "pty-ctrl-c", ""),
        "",
    );
    support::children::write(ws.path(), ".agents/agents/s.md", &definition);
    let mut term = Terminal::start(&["run", "sleeper", "Sleep."], ws.path());
    term.until(
        |_| {},
        |screen| screen.contents().contains("Calling fx.sleep"),
    );
    // Let the elapsed time grow on the line, as a user reading it would.
    std::thread::sleep(Duration::from_millis(400));
    term.type_keys(b"\x03");
    let code = term.finish(|_| {});
    let end = rows(term.screen.screen());
    let text = end.join("\n");
    assert_eq!(code, 130, "{text}");
    assert!(
        !end.iter()
            .any(|r| r.contains("sleeper · ") || r.trim_end().ends_with(" s^")),
        "a piece of the status line was left:\n{text}"
    );
    assert!(end.iter().any(|r| r == "Half way there."), "{text}");
    assert!(
        end.iter()
            .any(|r| r == "error: cancelled: interrupted from the terminal (Ctrl-C)"),
        "{text}"
    );
    assert!(text.contains("mcp-agents: interrupted;"), "{text}");
    drop(mock);
}

/// Issue 28, point 2: at 80 columns `check` shows one block per agent, and no line of its
/// report wraps (the table was 215 columns wide).
#[test]
fn check_fits_80_columns_with_one_block_per_agent() {
    let workspace = format!("{}/examples/workspace", env!("CARGO_MANIFEST_DIR"));
    let mut term = Terminal::start_in(
        &["check", &workspace],
        std::path::Path::new("/"),
        200,
        |c| {
            for var in [
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_BASE_URL",
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "OLLAMA_API_KEY",
                "GITHUB_TOKEN",
                "RUST_LOG",
            ] {
                c.env_remove(var);
            }
        },
    );
    let code = term.finish(|_| {});
    assert_eq!(code, 0, "{}", term.screen.screen().contents());
    let screen = term.screen.screen();
    let all: Vec<String> = screen.rows(0, COLS).collect();
    let first = all
        .iter()
        .position(|row| row == "local-explainer")
        .unwrap_or_else(|| panic!("one block per agent:\n{}", all.join("\n")));
    let report: Vec<&String> = all[first..].iter().filter(|r| !r.is_empty()).collect();
    for (i, row) in all.iter().enumerate().skip(first) {
        let r = u16::try_from(i).unwrap();
        assert!(
            !screen.row_wrapped(r),
            "row {r} wrapped:\n{}",
            all.join("\n")
        );
        assert!(row.chars().count() <= usize::from(COLS));
    }
    for name in [
        "local-explainer",
        "researcher",
        "code-reviewer",
        "reviewer",
        "docs-writer",
        "triager",
    ] {
        assert!(report.iter().any(|row| *row == name), "{name}");
    }
    assert!(
        report.contains(&&"  source     .claude/agents/reviewer.md (claude)".to_owned()),
        "{}",
        all.join("\n")
    );
    assert!(report.contains(&&"  workspace  read, glob, grep".to_owned()));
    assert!(report.contains(&&"  model      claude-sonnet-5-5 (sonnet)".to_owned()));
    assert!(
        report.contains(&&"6 agents (6 not ready to run), 1 skill, 6 warnings".to_owned()),
        "{}",
        all.join("\n")
    );
}

/// SPEC §2: started by hand, the stdio server says it waits for a client and how to try it.
#[test]
fn the_bare_server_on_a_terminal_says_what_it_waits_for() {
    let ws = tempfile::tempdir().unwrap();
    let mut term = Terminal::start(&[], ws.path());
    term.until(
        |_| {},
        |screen| screen.contents().contains("mcp-agents demo"),
    );
    let text = term.screen.screen().contents();
    assert!(
        text.contains("waits for an MCP client on standard input"),
        "{text}"
    );
    assert!(text.contains("mcp-agents run"), "{text}");
    term.child.kill().unwrap();
    let _ = term.child.wait();
}

/// Issue 35, point 3 (SPEC §4.5): the agent of `run` asks; its question is shown on the
/// terminal with its options, the line typed is the answer, and the answer reaches the
/// model as the tool's result.
#[test]
fn a_question_is_put_to_the_person_and_the_typed_line_answers_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockProvider::start(KEY)).unwrap();
    mock.push([
        Step::tool_call(
            "ask_parent",
            serde_json::json!({"question": "Which file should I fix?", "options": ["a.py", "b.py"]}),
        ),
        Step::text("Fixed b.py."),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let definition = format!(
        "---\nname: asker\ndescription: Asks.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\nask_parent: true\n---\nAsk.\n",
        mock.responses_base_url()
    );
    support::children::write(ws.path(), ".agents/agents/asker.md", &definition);
    let mut term = Terminal::start(&["run", "asker", "Fix the bug."], ws.path());
    term.until(
        |_| {},
        |screen| {
            screen
                .contents()
                .contains("(an empty line lets the agent decide)>")
        },
    );
    let asked = term.screen.screen().contents();
    assert!(
        asked.contains("asker asks: Which file should I fix?"),
        "{asked}"
    );
    assert!(asked.contains("options: a.py | b.py"), "{asked}");
    term.type_keys(b"b.py, please\r");
    let code = term.finish(|_| {});
    let text = rows(term.screen.screen()).join("\n");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("Fixed b.py."), "{text}");
    let body = mock.requests().last().unwrap().body.to_string();
    assert!(body.contains(r#""output":"b.py, please""#), "{body}");
    drop(mock);
}
