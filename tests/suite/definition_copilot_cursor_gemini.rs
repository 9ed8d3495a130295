//! GitHub Copilot, Cursor and Gemini CLI definitions beyond the published corpus
//! (tests/fixtures/{copilot,cursor,gemini}, expectations inline): model lists and names,
//! hand-only agents, per-agent servers in each tool's spelling, placeholders, time limits,
//! what is refused and why; and a hand-only agent through the real server.

use crate::support;

use std::time::Duration;

use mcp_agents::definition::{
    ChildTransport, Effect, ModelOrigin, ProviderKind, ReasoningEffort, Sandbox, ToolHints,
    ValueSource,
};
use mcp_agents::discovery::LoadOptions;
use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::TestWorkspace;
use support::binary::{self, BIN, KEY_VAR};
use support::run_kit::KEY;

/// The variables each of a server's `env` (or `headers`) values reads, by key.
fn vars(values: &std::collections::BTreeMap<String, ValueSource>) -> Vec<(String, Vec<String>)> {
    values
        .iter()
        .map(|(key, value)| match value {
            ValueSource::Template(t) => (key.clone(), t.vars().map(str::to_owned).collect()),
            other => panic!("{key}: {other:?}"),
        })
        .collect()
}

fn owned(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect()))
        .collect()
}

const ANY: ToolHints = ToolHints {
    read_only: None,
    destructive: None,
};

#[test]
fn copilot_files_load_as_the_copilot_cli_reads_them() {
    let catalog = support::check_fixture("copilot");

    assert_eq!(
        catalog.get("hand-only").unwrap().hand_only,
        Some("disable-model-invocation: true")
    );
    assert_eq!(
        catalog.get("infer-off").unwrap().hand_only,
        Some("infer: false")
    );
    assert!(catalog.get("invocation-wins").unwrap().offered_to_model());
    let offered: Vec<&str> = catalog.offered().map(|a| a.name.as_str()).collect();
    assert!(!offered.contains(&"hand-only") && !offered.contains(&"infer-off"));

    // `models` wins over `model`; the first entry that can run is used, with its effort.
    let listed = catalog.get("models-list").unwrap();
    assert_eq!(listed.provider.kind, ProviderKind::OpenAi);
    assert_eq!(listed.model.id, "gpt-5-mini");
    assert_eq!(
        listed.model.origin,
        ModelOrigin::Translated {
            written: "GPT-5 mini".into()
        }
    );
    assert_eq!(listed.reasoning_effort, Some(ReasoningEffort::Low));
    let extras = catalog.get("extras").unwrap();
    assert_eq!(
        (extras.provider.kind, extras.model.id.as_str()),
        (ProviderKind::Anthropic, "claude-sonnet-4-0")
    );

    // `${{ secrets.X }}`, `${{ vars.X }}`, a bare `COPILOT_MCP_` name and `$X` all read
    // the variable from the server's environment.
    let secrets = catalog.get("secrets").unwrap();
    let files = &secrets.mcp_servers["files"];
    match &files.transport {
        ChildTransport::Stdio { command, env, .. } => {
            assert_eq!(command, "files-mcp");
            assert_eq!(
                vars(env),
                owned(&[
                    ("API_KEY", &["FILES_API_KEY"]),
                    ("HOME_DIR", &["HOME"]),
                    ("OLD_STYLE", &["COPILOT_MCP_FILES_TOKEN"]),
                    ("REGION", &["FILES_REGION"]),
                ])
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(files.enabled_tools, None, "`tools: [\"*\"]` is every tool");
    let tracker = &secrets.mcp_servers["tracker"];
    match &tracker.transport {
        ChildTransport::Http { headers, .. } => {
            assert_eq!(
                vars(headers),
                owned(&[("Authorization", &["TRACKER_TOKEN"])])
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        tracker.enabled_tools,
        Some(vec!["search".to_owned(), "get_issue".to_owned()])
    );
    // The agent's `tools` names `tracker/search` and `files/*`: `get_issue` is the
    // server's, but the agent's list leaves it out.
    assert!(secrets.offers_tool("tracker", "search", ANY));
    assert!(!secrets.offers_tool("tracker", "get_issue", ANY));
    assert!(secrets.offers_tool("files", "anything", ANY));
}

#[test]
fn cursor_files_load_as_cursor_reads_them() {
    let catalog = support::check_fixture("cursor");
    assert_eq!(catalog.get("readonly").unwrap().sandbox, Sandbox::ReadOnly);
    let unnamed = catalog.get("unnamed").unwrap();
    assert_eq!(
        (unnamed.provider.kind, unnamed.model.id.as_str()),
        (ProviderKind::Anthropic, "claude-sonnet-4-6")
    );
    assert_eq!(
        unnamed.model.origin,
        ModelOrigin::Translated {
            written: "claude-4.6-sonnet".into()
        }
    );
    // With its own provider fields, a file's model is that provider's id as written.
    let gateway = catalog.get("gateway").unwrap();
    assert_eq!(gateway.provider.kind, ProviderKind::Custom);
    assert_eq!(gateway.model.id, "composer-1");
    assert_eq!(gateway.model.origin, ModelOrigin::Explicit);
    assert_eq!(
        catalog.get("fast").unwrap().model.origin,
        ModelOrigin::ServerDefault
    );
}

#[test]
fn a_model_word_that_names_no_model_needs_the_servers_default() {
    let ws = support::TempWorkspace::new();
    ws.write(
        ".cursor/agents/fast.md",
        "---\nname: fast\ndescription: d\nmodel: fast\n---\nWork.\n",
    );
    let catalog = ws.load(&LoadOptions::default());
    assert!(catalog.get("fast").is_none());
    let warning = &catalog.warnings()[0];
    assert_eq!(warning.effect, Effect::Rejected);
    assert!(
        warning.reason.starts_with("`model: fast` names no model")
            && warning.reason.contains("--default-model PROVIDER/MODEL"),
        "{}",
        warning.reason
    );
}

#[test]
fn gemini_files_load_as_the_gemini_cli_reads_them() {
    let catalog = support::check_fixture("gemini");
    let timeout = catalog.get("timeout").unwrap();
    assert_eq!(timeout.budget.max_run_seconds, Some(300));
    assert_eq!((timeout.max_turns, timeout.temperature), (12, Some(0.3)));
    assert_eq!(
        catalog.get("timeout-over").unwrap().budget.max_run_seconds,
        Some(600)
    );

    let servers = catalog.get("servers").unwrap();
    let docs = &servers.mcp_servers["docs"];
    match &docs.transport {
        ChildTransport::Stdio { env, cwd, .. } => {
            assert_eq!(vars(env), owned(&[("DOCS_TOKEN", &["DOCS_TOKEN"])]));
            assert_eq!(cwd.as_deref(), Some(std::path::Path::new("tools")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        docs.enabled_tools,
        Some(vec!["search".to_owned(), "get_page".to_owned()])
    );
    assert_eq!(docs.disabled_tools, ["get_page"]);
    assert_eq!(docs.call_timeout, Duration::from_secs(60));
    let tracker = &servers.mcp_servers["tracker"];
    match &tracker.transport {
        ChildTransport::Http { url, headers } => {
            assert_eq!(url.as_str(), "https://tracker.example.com/mcp");
            assert_eq!(
                vars(headers),
                owned(&[("Authorization", &["TRACKER_TOKEN"])])
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(tracker.call_timeout, Duration::from_secs(5));
    // `tools: [read_file, mcp_docs_*, mcp_tracker_search]`
    assert!(servers.offers_tool("docs", "search", ANY));
    assert!(!servers.offers_tool("docs", "get_page", ANY), "excluded");
    assert!(servers.offers_tool("tracker", "search", ANY));
    assert!(!servers.offers_tool("tracker", "create", ANY));
}

/// A Copilot agent at the mock's Responses endpoint.
fn copilot_agent(mock: &MockProvider, extra: &str) -> String {
    format!(
        "---\ndescription: Cuts releases.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n{extra}\n---\nWork.\n",
        mock.responses_base_url()
    )
}

/// `disable-model-invocation: true`: the parent model is not offered the agent, and asking
/// for it by name says why; a person runs it with `mcp-agents run`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_only_agent_is_not_offered_to_the_parent_model_but_runs_by_hand() {
    let s = TestWorkspace::new()
        .agent(".github/agents/release.agent.md", |mock, _| {
            copilot_agent(mock, "disable-model-invocation: true")
        })
        .agent(".github/agents/helper.agent.md", |mock, _| {
            copilot_agent(mock, "")
        })
        .stdio()
        .await;
    let (mock, ws, conn) = (s.mock, s.ws, s.c);

    let tools = conn.tools().await;
    let spawn = tools.iter().find(|t| t.name == "spawn_agent").unwrap();
    let schema = serde_json::to_value(&spawn.input_schema).unwrap();
    assert_eq!(schema["properties"]["name"]["enum"], json!(["helper"]));
    let description = spawn.description.as_deref().unwrap_or_default();
    assert!(description.contains("- helper: "));
    assert!(!description.contains("- release:"), "{description}");

    let (code, message) = conn
        .err(
            "spawn_agent",
            json!({"name": "release", "task": "Cut 1.2."}),
        )
        .await;
    assert_eq!(code, "unknown_agent");
    assert_eq!(
        message,
        "the agent `release` is not offered to models: its file \
         (.github/agents/release.agent.md) sets `disable-model-invocation: true`, which says a \
         model must not pick it; a person can run it with `mcp-agents run release TASK`"
    );
    // A name that does not exist lists only what the model may start.
    let (code, message) = conn
        .err("spawn_agent", json!({"name": "nobody", "task": "x"}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert!(message.ends_with("the agents are: helper"), "{message}");
    conn.close().await;
    assert!(mock.requests().is_empty(), "nothing ran");

    mock.push([Step::text("Released.")]);
    let ran = binary::run_plain(ws.path(), "release", "Cut 1.2.").await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Released.\n");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_of_hand_only_agents_offers_no_tools() {
    let s = TestWorkspace::new()
        .agent(".github/agents/release.agent.md", |mock, _| {
            copilot_agent(mock, "infer: false")
        })
        .stdio()
        .await;
    let (_mock, ws, conn) = (s.mock, s.ws, s.c);
    assert!(conn.tools().await.is_empty());
    conn.close().await;

    let out = std::process::Command::new(BIN)
        .args(["check", "--json"])
        .arg(ws.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let agent = support::agent_named(&report, "release");
    assert_eq!(agent["offered_to_model"], false);
    assert_eq!(agent["hand_only"], "infer: false");
    let table = std::process::Command::new(BIN)
        .arg("check")
        .arg(ws.path())
        .env(KEY_VAR, KEY)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&table.stdout)
            .contains("1 agent (1 not offered to the parent model: `mcp-agents run` only)"),
        "{}",
        String::from_utf8_lossy(&table.stdout)
    );
}
