//! Each published GitHub Copilot, Cursor and Gemini CLI definition (tests/fixtures/corpus,
//! unedited) alone in a workspace, where its tool reads it, as a user of that tool would
//! try it: `mcp-agents check --json` says which agent it becomes, on which model, with which
//! workspace tools and every warning; and each agent that loads runs through the real
//! server against the provider mocks, with its child servers started.
//!
//! In the shared corpus workspace (`discovery_corpus`) four of these files are shadowed by
//! earlier roots, so only this test loads them.

use crate::support;

use std::path::Path;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, BIN, Generation};
use support::run_kit::KEY;

/// What one file must become.
struct Alone {
    /// Below tests/fixtures/corpus, and where it goes in the workspace.
    file: &'static str,
    /// The agent's name, or `None` for a rejected file.
    agent: Option<&'static str>,
    /// `provider/model (origin)`, as `check --json` reports them.
    model: &'static str,
    workspace: &'static [&'static str],
    /// Every warning about the file (substrings), caveats and rejections alike.
    warnings: &'static [&'static str],
    /// More `check --json` fields: (key, JSON value).
    fields: &'static [(&'static str, &'static str)],
}

const DEFAULT: &str = "anthropic/claude-sonnet-5-5 (server-default)";
const ALL: &[&str] = &["read", "list", "glob", "grep", "edit", "write"];
/// What a read-only agent gets: the tools that read.
const READS: &[&str] = &["read", "list", "glob", "grep"];

const FILES: &[Alone] = &[
    Alone {
        file: ".github/agents/reviewer.agent.md",
        agent: Some("reviewer"),
        model: "anthropic/claude-sonnet-4-5 (translated)",
        workspace: READS,
        warnings: &[
            "`model: Claude Sonnet 4.5` is claude-sonnet-4-5, which Anthropic retired on \
             2026-11-30; runs fail unless the endpoint still serves it",
            "`model` lists 2 models; this runtime runs `Claude Sonnet 4.5` (anthropic \
             claude-sonnet-4-5) and takes the later ones (GPT-4o) as its fallback_models",
            // GPT-4o is OpenAI's: a run falls back only on its own provider (SPEC §5.1).
            "`fallback_models` entry `GPT-4o` is dropped: it is on another provider than the \
             agent's model (`anthropic`, anthropic-messages API)",
            // VS Code's `usages` (references to a symbol) is `grep` here (issue 39).
        ],
        fields: &[("model_written", "\"Claude Sonnet 4.5\"")],
    },
    Alone {
        file: ".github/agents/build-release.agent.md",
        agent: Some("build-release"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &["runs without execute: this runtime has no such tools"],
        fields: &[],
    },
    Alone {
        file: ".github/agents/test-specialist.agent.md",
        agent: Some("test-specialist"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &["runs without runTerminalCommand: this runtime has no such tools"],
        fields: &[],
    },
    Alone {
        file: ".github/agents/octopus-deploy-release-notes-mcp.agent.md",
        agent: Some("octopus-deploy-release-notes-mcp"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[],
        fields: &[("mcp_servers", "[\"octopus\"]")],
    },
    Alone {
        file: ".github/agents/go-sdk-tool-migrator.md",
        agent: Some("go-sdk-tool-migrator"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[],
        fields: &[],
    },
    Alone {
        file: ".github/agents/triage.agent.md",
        agent: Some("triage"),
        model: DEFAULT,
        workspace: &[],
        warnings: &[
            "runs without github/list_issues, github/issue_read, github/search_issues: this \
             runtime has no such tools",
        ],
        fields: &[("mcp_servers", "[\"mcp-datetime\"]")],
    },
    Alone {
        file: ".cursor/agents/ci-doctor.md",
        agent: Some("ci-doctor"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[],
        fields: &[("sandbox", "\"default\"")],
    },
    Alone {
        file: ".cursor/agents/researcher.md",
        agent: Some("researcher"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[],
        fields: &[],
    },
    Alone {
        file: ".cursor/agents/pm.md",
        agent: None,
        model: "",
        workspace: &[],
        warnings: &[
            "`model: composer-1` names a model that no provider here serves (Cursor's \
                     own model, served only inside Cursor)",
        ],
        fields: &[],
    },
    Alone {
        file: ".cursor/agents/manager.md",
        agent: None,
        model: "",
        workspace: &[],
        warnings: &["`description` is required and must not be empty"],
        fields: &[],
    },
    Alone {
        file: ".cursor/agents/castr/code-reviewer.md",
        agent: Some("code-reviewer"),
        model: "openai/gpt-5.5 (explicit)",
        workspace: READS,
        warnings: &[
            "runs without Shell, ReadLints, WebFetch, WebSearch: this runtime has no such tools",
        ],
        fields: &[("sandbox", "\"read-only\"")],
    },
    Alone {
        file: ".cursor/agents/peatopea/code-reviewer.md",
        agent: Some("code-reviewer"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[
            "`model: fast` names no model (the tool picks one itself); the server's \
                     default model, `anthropic/claude-sonnet-5-5`, is used",
        ],
        fields: &[],
    },
    Alone {
        file: ".gemini/agents/architecture-checker.md",
        agent: Some("architecture-checker"),
        model: DEFAULT,
        workspace: ALL,
        warnings: &[],
        fields: &[],
    },
    Alone {
        file: ".gemini/agents/git.md",
        agent: Some("git"),
        model: "gemini/gemini-2.5-flash (explicit)",
        workspace: &["read", "glob", "grep", "edit"],
        warnings: &["runs without Bash, TodoWrite: this runtime has no such tools"],
        fields: &[],
    },
    Alone {
        file: ".gemini/agents/code-writer.md",
        agent: Some("code-writer"),
        model: DEFAULT,
        workspace: &["read", "glob", "grep", "edit", "write"],
        warnings: &[
            "runs without run_shell_command: this runtime has no such tools (of Gemini CLI's \
             tools only",
        ],
        fields: &[],
    },
    Alone {
        file: ".gemini/agents/visualizer.md",
        agent: Some("architecture-visualizer"),
        model: DEFAULT,
        workspace: &["read", "list", "grep", "edit", "write"],
        warnings: &["runs without run_shell_command, activate_skill, \
             mcp_mermaid-guide_get_mermaid_style_guide: this runtime has no such tools"],
        fields: &[("max_turns", "30")],
    },
    Alone {
        file: ".gemini/agents/tech-writer.md",
        agent: None,
        model: "",
        workspace: &[],
        warnings: &[
            "`model: gemini-pro` names a model that no provider here serves (not a \
                     Gemini model id",
        ],
        fields: &[],
    },
    Alone {
        file: ".gemini/agents/code-reviewer.md",
        agent: Some("code-reviewer"),
        model: "anthropic/claude-sonnet-5-5 (alias)",
        workspace: &["read", "glob", "grep"],
        warnings: &["runs without Bash(git diff), Bash(git log): this runtime has no such tools"],
        fields: &[("max_turns", "10")],
    },
];

/// Variables of the machine running the tests that would change what loads or runs.
const PROVIDER_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "MCP_AGENTS_DEFAULT_MODEL",
];

/// A workspace holding `file` alone, at its place, and a README for the agent to read.
fn alone(file: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let target = ws.path().join(file);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(support::fixture_path("corpus").join(file), &target).unwrap();
    std::fs::write(ws.path().join("README.md"), "# A project\n\nIt builds.\n").unwrap();
    ws
}

fn check_json(workspace: &Path) -> Value {
    let mut command = std::process::Command::new(BIN);
    command.arg("check").arg(workspace).args([
        "--json",
        "--default-model",
        "anthropic/claude-sonnet-5-5",
    ]);
    for var in PROVIDER_VARS {
        command.env_remove(var);
    }
    let out = command.output().unwrap();
    serde_json::from_slice(&out.stdout).expect("check --json prints one JSON object")
}

#[test]
fn every_published_file_alone_loads_as_its_tool_would_have_it() {
    let mut problems = Vec::new();
    for case in FILES {
        let ws = alone(case.file);
        let report = check_json(ws.path());
        let found = report_problems(case, &report);
        problems.extend(found.into_iter().map(|p| format!("{}: {p}", case.file)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What `check --json`'s `report` on `case`'s file alone gets wrong.
fn report_problems(case: &Alone, report: &Value) -> Vec<String> {
    let agents = report["agents"].as_array().unwrap();
    // Readiness (a key not set here) is not loading; `needs` shows it.
    let warnings = crate::support::loading_reasons(report);
    let mut problems = Vec::new();
    for expected in case.warnings {
        if !warnings.iter().any(|w| w.contains(expected)) {
            problems.push(format!(
                "no warning containing {expected:?} in {warnings:#?}"
            ));
        }
    }
    for warning in &warnings {
        if !case.warnings.iter().any(|e| warning.contains(e)) {
            problems.push(format!("unexpected warning {warning:?}"));
        }
    }
    let Some(name) = case.agent else {
        if !agents.is_empty() {
            problems.push(format!("expected a rejection, loaded {agents:?}"));
        }
        let rejected = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["effect"] == "rejected");
        if !rejected {
            problems.push("not rejected".into());
        }
        return problems;
    };
    match agents.as_slice() {
        [agent] => problems.extend(agent_problems(case, name, agent)),
        _ => problems.push(format!("expected one agent, got {agents:?}")),
    }
    problems
}

/// What the one `agent` `case`'s file loaded as gets wrong.
fn agent_problems(case: &Alone, name: &str, agent: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let model = format!(
        "{}/{} ({})",
        agent["provider"].as_str().unwrap(),
        agent["model"].as_str().unwrap(),
        agent["model_origin"].as_str().unwrap()
    );
    let checks = [
        ("name", agent["name"] == name, agent["name"].to_string()),
        ("model", model == case.model, model.clone()),
        (
            "workspace_tools",
            agent["workspace_tools"] == json!(case.workspace),
            agent["workspace_tools"].to_string(),
        ),
        (
            "format",
            agent["format"] == case.file[1..].split('/').next().map_or("", format_of),
            agent["format"].to_string(),
        ),
        (
            "offered_to_model",
            agent["offered_to_model"] == true,
            agent["offered_to_model"].to_string(),
        ),
    ];
    for (what, ok, got) in checks {
        if !ok {
            problems.push(format!("{what} is {got}"));
        }
    }
    for (key, value) in case.fields {
        let want: Value = serde_json::from_str(value).unwrap();
        if agent[*key] != want {
            problems.push(format!("{key} is {}, expected {want}", agent[*key]));
        }
    }
    problems
}

fn format_of(folder: &str) -> &'static str {
    match folder {
        "github" => "copilot",
        "cursor" => "cursor",
        "gemini" => "gemini",
        _ => "?",
    }
}

/// A folder with `npx` and `uvx` stand-ins that start the fixture MCP server, whatever
/// package they are asked for: the published servers are real processes here, without the
/// network.
fn package_runners() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for runner in ["npx", "uvx"] {
        let path = dir.path().join(runner);
        std::fs::write(&path, format!("#!/bin/sh\nexec '{BIN}' fixture-server\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// Every file that loads alone also runs through the server, as Claude Code would start
/// it: `spawn_agent`, a workspace tool call where it has `read`, the answer through
/// `wait_agent`, against the mocks at `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, on the model
/// `check` showed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_published_file_that_loads_runs_against_the_mocks() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let runners = package_runners();
    let path = format!(
        "{}:{}",
        runners.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let messages = mock.messages_base_url();
    let responses = mock.responses_base_url();
    let env = [
        ("MCP_AGENTS_DEFAULT_MODEL", "anthropic/claude-sonnet-5-5"),
        ("ANTHROPIC_BASE_URL", messages.as_str()),
        ("ANTHROPIC_API_KEY", KEY),
        ("OPENAI_BASE_URL", responses.as_str()),
        ("OPENAI_API_KEY", KEY),
        ("OCTOPUS_API_KEY", "octopus-test-key"),
        ("OCTOPUS_SERVER_URL", "https://octopus.example.com"),
        ("PATH", path.as_str()),
    ];
    let mut ran = 0;
    for case in FILES {
        let Some(name) = case.agent else { continue };
        // The built-in `gemini` provider's endpoint is Google's, with no variable to move it
        // (Google's SDKs have none either): such a file's load is checked above, and the
        // Chat Completions wire it runs on by `suite::docs` and the chat tests.
        if case.model.starts_with("gemini/") {
            continue;
        }
        ran += 1;
        run_alone(&mock, case, name, &env).await;
    }
    let gemini = FILES
        .iter()
        .filter(|c| c.model.starts_with("gemini/"))
        .count();
    assert_eq!(gemini, 1, "one published file runs on the gemini provider");
    assert_eq!(
        ran + gemini,
        FILES.iter().filter(|c| c.agent.is_some()).count()
    );
}

/// Runs `case`'s agent `name` alone in a workspace through the server, with `env`: one
/// workspace read where it has `read`, then the answer; the model, the tools offered and
/// the tools used are checked against what `check` showed.
async fn run_alone(mock: &MockProvider, case: &Alone, name: &str, env: &[(&str, &str)]) {
    let ws = alone(case.file);
    let conn = binary::stdio_env(ws.path(), Generation::Modern, env, PROVIDER_VARS).await;
    let reads = case.workspace.contains(&"read");
    if reads {
        mock.push([Step::tool_call(
            "workspace__read",
            json!({"path": "README.md"}),
        )]);
    }
    mock.push([Step::text("Reviewed.")]);
    let before = mock.requests().len();
    let record = conn.run_to_end(name, "Review the project.").await;
    assert_eq!(record["status"], "completed", "{}: {record}", case.file);
    assert_eq!(record["result"], "Reviewed.", "{}", case.file);
    let model = case.model.split(['/', ' ']).nth(1).unwrap();
    assert_eq!(record["model"], model, "{}", case.file);

    let requests = mock.requests();
    let first = &requests[before];
    assert_eq!(first.body["model"], model, "{}", case.file);
    let mut offered: Vec<&str> = first.body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let mut expected: Vec<String> = case
        .workspace
        .iter()
        .map(|t| format!("workspace__{t}"))
        .collect();
    offered.sort_unstable();
    expected.sort_unstable();
    assert_eq!(offered, expected, "{}", case.file);
    if reads {
        let used = &record["tools_used"];
        assert!(
            used.to_string().contains("workspace__read"),
            "{}: {record}",
            case.file
        );
        assert!(
            requests[before + 1].body.to_string().contains("It builds."),
            "{}: the model was given the file",
            case.file
        );
    }
    conn.close().await;
}
