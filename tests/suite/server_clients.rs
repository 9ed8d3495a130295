//! What the server tells each client, through the real binary (SPEC §4.1, §4.3): the
//! `wait_agent` description advises the longest wait the calling client takes, known by the
//! name it reports in `initialize` or in the 2026-07-28 request `_meta` (the recorded
//! messages of Claude Code 2.1.332 and Codex 0.171.0 among them), per transport;
//! `spawn_agent` marks the agents that lack tools their definition asks for or whose key is
//! unset; a name whose definition was rejected is explained, with the fix in the client's
//! own configuration when a default model is what it needs.

use crate::support;

use std::time::Duration;

use mcp_agents::clients::{self, Transport};
use mcp_agents::definition::PARENT_MODEL_REJECTION;
use mcp_agents::testkit::{MockProvider, Step};
use rmcp::model::Tool;
use serde_json::json;
use support::binary::{self, BIN, GENERATIONS, Generation, KEY_VAR, RawServer, TEST_CLIENT_NAME};
use support::children::{stdio_child, tagged_marker, write};
use support::run_kit::KEY;

fn description(tools: &[Tool], name: &str) -> String {
    tools
        .iter()
        .find(|t| t.name == name)
        .and_then(|t| t.description.as_deref())
        .unwrap_or_else(|| panic!("no {name}"))
        .to_owned()
}

/// What the description tells Codex, Claude Code on stdio and over HTTP, and a client the
/// server does not know.
const CODEX: &str = "Your client, Codex, aborts a tool call after 300 s whatever happens \
    meanwhile (unless its tool_timeout_sec says otherwise): keep timeout_ms at 280000 or less.";
const CLAUDE_CODE_STDIO: &str = "Your client, Claude Code, lets a tool call on stdio run for hours: timeout_ms up to \
     300000 is safe.";
const CLAUDE_CODE_HTTP: &str = "Your client, Claude Code, aborts a tool call over HTTP after \
    300 s without news, and a wait sends news only when an agent's activity changes: keep \
    timeout_ms at 280000 or less.";
const UNKNOWN: &str = "Many clients abort a tool call after 60 s, so keep timeout_ms at about \
    55000 or less unless you know your client allows longer calls.";

fn assert_advises(wait: &str, advice: &str, who: &str) {
    assert!(wait.ends_with(advice), "{who}: {wait}");
    assert!(
        wait.contains(
            "it returns as soon as the agents finish, so a long timeout_ms costs \
                       nothing when the work is quick"
        ),
        "{wait}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_description_advises_each_client_by_the_name_it_reports() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    for generation in GENERATIONS {
        for (client, advice) in [
            ("codex-mcp-client", CODEX),
            ("claude-code", CLAUDE_CODE_STDIO),
            (TEST_CLIENT_NAME, UNKNOWN),
        ] {
            let c = binary::stdio_as(ws.path(), generation, client).await;
            let wait = description(&c.tools().await, "wait_agent");
            assert_advises(
                &wait,
                advice,
                &format!("{client} over stdio, {generation:?}"),
            );
            c.close().await;
        }
    }
    // The same table, read for the transport: Claude Code's idle limit over HTTP.
    let (mut server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    for generation in GENERATIONS {
        for (client, advice) in [
            ("codex-mcp-client", CODEX),
            ("claude-code", CLAUDE_CODE_HTTP),
            (TEST_CLIENT_NAME, UNKNOWN),
        ] {
            let c = binary::connect_http_as(&url, generation, client).await;
            let wait = description(&c.tools().await, "wait_agent");
            assert_advises(
                &wait,
                advice,
                &format!("{client} over HTTP, {generation:?}"),
            );
            c.close().await;
        }
    }
    server.kill().await.unwrap();
    // The sentences come from the one table.
    assert_eq!(
        clients::wait_advice(clients::identify("claude-code"), Transport::Http),
        CLAUDE_CODE_HTTP
    );
}

/// The first messages Claude Code 2.1.332 and Codex 0.171.0 really sent (recorded with each
/// CLI against a probe server): Claude Code names itself only in the `_meta` of
/// `server/discover` and of every request after it, Codex in `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_clients_first_messages_get_their_advice() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".agents/agents/a.md",
        "---\nname: a\ndescription: An agent.\nmodel: m\nmodel_provider: openai\n---\nWork.\n",
    );
    let claude_meta = r#""_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "title": "Claude Code", "version": "2.1.332", "description": "Anthropic's agentic coding tool", "websiteUrl": "https://claude.com/claude-code"}, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}}}"#;
    let mut claude = RawServer::start(ws.path());
    claude
        .send(format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": \"server-discover-probe-1\", \"method\": \"server/discover\", \"params\": {{{claude_meta}}}}}\n"
        ).as_bytes())
        .await;
    let discovered = claude.answer(10).await;
    assert!(
        discovered["result"]["supportedVersions"].is_array(),
        "{discovered}"
    );
    claude
        .send(format!(
            "{{\"method\": \"tools/list\", \"jsonrpc\": \"2.0\", \"id\": 0, \"params\": {{{claude_meta}}}}}\n"
        ).as_bytes())
        .await;
    let listed = claude.answer(10).await;
    let wait = wait_description(&listed);
    assert_advises(&wait, CLAUDE_CODE_STDIO, "Claude Code 2.1.332");

    let mut codex = RawServer::start(ws.path());
    codex
        .send(br#"{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}, "url": {}}}, "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"}}}
"#)
        .await;
    codex.answer(10).await;
    codex
        .send(b"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\", \"params\": {\"_meta\": {\"progressToken\": 0}}}\n")
        .await;
    let listed = codex.answer(10).await;
    assert_advises(&wait_description(&listed), CODEX, "Codex 0.171.0");
}

fn wait_description(listed: &serde_json::Value) -> String {
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .find(|t| t["name"] == "wait_agent")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Five agents: three asking for tools this server does not have, one whose key is unset
/// (`gpt`), one that has all it asks for (`reader`).
fn marked_workspace(mock: &MockProvider) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let marker = tagged_marker("marks");
    write(
        ws.path(),
        ".claude/agents/fixer.md",
        "---\nname: fixer\ndescription: Fix a failing test\ntools: Read, Edit, Bash\nmodel: sonnet\n---\nFix it.\n",
    );
    write(
        ws.path(),
        ".claude/agents/auditor.md",
        "---\nname: auditor\ndescription: Audits\ntools: Read, Bash\nmodel: sonnet\n---\nAudit.\n",
    );
    write(
        ws.path(),
        ".claude/agents/reader.md",
        "---\nname: reader\ndescription: Reads code\ntools: Read, Grep\nmodel: sonnet\n---\nRead.\n",
    );
    write(
        ws.path(),
        ".claude/agents/deployer.md",
        &format!(
            "---\nname: deployer\ndescription: Deploys\ntools: Bash, WebFetch, mcp__fx__echo\nmodel: sonnet\n\
             mcpServers:\n{}---\nDeploy.\n",
            stdio_child("fx", &[], &marker, "")
                .replace("    fx:", "  fx:")
                .replace("\n      ", "\n    ")
        ),
    );
    write(
        ws.path(),
        ".agents/agents/gpt.md",
        &format!(
            "---\nname: gpt\ndescription: Uses GPT\nmodel: gpt-5.4\nmodel_provider: openai\n\
             base_url: {}\n---\nWork.\n",
            mock.responses_base_url()
        ),
    );
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_that_lack_their_tools_or_key_are_marked_and_their_spawn_says_so() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = marked_workspace(&mock);
    let messages = mock.messages_base_url();
    let c = binary::stdio_env(
        ws.path(),
        Generation::Modern,
        &[
            ("ANTHROPIC_BASE_URL", &messages),
            ("ANTHROPIC_API_KEY", KEY),
        ],
        &["OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
    )
    .await;
    let spawn = description(&c.tools().await, "spawn_agent");
    let lines: Vec<&str> = spawn.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        [
            "- gpt: Uses GPT (no tools: answers from its instructions alone) (needs OPENAI_API_KEY)",
            "- auditor: Audits (read-only here: no Bash)",
            "- deployer: Deploys (only fx tools) (runs here without Bash, WebFetch)",
            "- fixer: Fix a failing test (edits files) (runs here without Bash)",
            "- reader: Reads code",
        ],
        "{spawn}"
    );
    the_fixer_runs_with_what_its_note_says(&c, &mock).await;

    let reader = c
        .ok("spawn_agent", json!({"name": "reader", "task": "x"}))
        .await;
    assert!(reader.get("note").is_none(), "{reader}");
    let (code, _) = c
        .err("spawn_agent", json!({"name": "gpt", "task": "x"}))
        .await;
    assert_eq!(code, "missing_credential", "the mark was right");
    c.close().await;
    drop(mock);
}

/// `fixer`'s spawn carries its note, and its run is offered exactly the tools it says.
async fn the_fixer_runs_with_what_its_note_says(c: &binary::Connection, mock: &MockProvider) {
    mock.push([Step::text("Fixed parse.rs line 3; the tests were not run.")]);
    let spawned = c
        .ok(
            "spawn_agent",
            json!({"name": "fixer", "task": "Fix the test."}),
        )
        .await;
    assert_eq!(spawned["note"], "runs here without Bash");
    let id = spawned["agent_id"].as_str().unwrap();
    let done = c.wait(&[id], 30_000).await["agents"][0].clone();
    assert_eq!(done["status"], "completed", "{done}");
    let requests = mock.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["workspace__edit", "workspace__read"],
        "what the note says it runs with"
    );
}

/// `mcp-agents run`'s words for a name it cannot run, from its stderr.
fn run_words(ws: &std::path::Path, name: &str) -> String {
    let out = std::process::Command::new(BIN)
        .args(["run", "--workspace"])
        .arg(ws)
        .args([name, "hi"])
        .env_remove("MCP_AGENTS_DEFAULT_MODEL")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: unknown_agent: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    line.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_definition_is_explained_with_the_fix_in_the_clients_own_terms() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    // What Claude Code's `/agents` wizard writes.
    write(
        ws.path(),
        ".claude/agents/summarizer.md",
        "---\nname: summarizer\ndescription: Summarizes\nmodel: inherit\n---\nSummarize.\n",
    );
    write(
        ws.path(),
        ".agents/agents/broken.md",
        &format!(
            "---\nname: broken\ndescription: Writes\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: {KEY_VAR}\nwire_api: responses\nsandbox: workspace-write\n---\nWrite.\n",
            mock.responses_base_url()
        ),
    );
    let inherit = run_words(ws.path(), "summarizer");
    assert_eq!(
        inherit,
        format!(
            "the agent `summarizer` is defined in .claude/agents/summarizer.md, which was \
             rejected: {PARENT_MODEL_REJECTION}"
        )
    );
    let broken = run_words(ws.path(), "broken");
    assert!(
        broken.starts_with(
            "the agent `broken` is defined in .agents/agents/broken.md, which was rejected: "
        ),
        "{broken}"
    );

    for (client, generation, fix) in [
        (
            "claude-code",
            Generation::Modern,
            vec![
                "in Claude Code, add \"env\": {\"MCP_AGENTS_DEFAULT_MODEL\": \"anthropic/claude-sonnet-5-5\"} to this server's entry in .mcp.json",
            ],
        ),
        (
            "codex-mcp-client",
            Generation::Legacy,
            vec![
                "in Codex, add env = { MCP_AGENTS_DEFAULT_MODEL = \"openai/gpt-5.4\" } to this server's [mcp_servers.agents] table in ~/.codex/config.toml",
            ],
        ),
        (
            TEST_CLIENT_NAME,
            Generation::Modern,
            vec!["in Claude Code, add", "; in Codex, add env = {"],
        ),
    ] {
        let c = binary::stdio_as(ws.path(), generation, client).await;
        let words = RunWords {
            inherit: &inherit,
            broken: &broken,
        };
        assert_explained(&c, client, &fix, words).await;
        c.close().await;
    }
    // Settled as the message says, the agent runs.
    let names = offered_with_a_default_model(ws.path()).await;
    assert!(names.contains(&"summarizer".to_owned()), "{names:?}");
    tokio::time::sleep(Duration::from_millis(10)).await;
}

/// What `mcp-agents run` said about the two rejected agents.
struct RunWords<'a> {
    inherit: &'a str,
    broken: &'a str,
}

/// `client` is told why each rejected agent cannot run, with the fix in its own terms
/// (each of `fix`) when a default model is what it needs, and in `run`'s words.
async fn assert_explained(c: &binary::Connection, client: &str, fix: &[&str], run: RunWords<'_>) {
    let (code, message) = c
        .err("spawn_agent", json!({"name": "summarizer", "task": "x"}))
        .await;
    assert_eq!(code, "unknown_agent");
    let rest = message
        .strip_prefix(&format!("{}. To set it: ", run.inherit))
        .unwrap_or_else(|| panic!("{client}: {message}"));
    for part in fix {
        assert!(rest.contains(part), "{client}: {rest}");
    }
    let (code, message) = c
        .err("spawn_agent", json!({"name": "broken", "task": "x"}))
        .await;
    assert_eq!(code, "unknown_agent");
    assert_eq!(
        message, run.broken,
        "the same words as run, and no fix to invent"
    );
}

/// The agents `spawn_agent` offers with a default model set.
async fn offered_with_a_default_model(ws: &std::path::Path) -> Vec<String> {
    let c = binary::stdio(
        ws,
        Generation::Modern,
        &[("MCP_AGENTS_DEFAULT_MODEL", "openai/gpt-5.4")],
    )
    .await;
    let names: Vec<String> = c
        .tools()
        .await
        .into_iter()
        .filter(|t| t.name == "spawn_agent")
        .flat_map(|t| {
            t.input_schema["properties"]["name"]["enum"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    c.close().await;
    names
}
