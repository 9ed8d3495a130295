//! The documentation stays true: its JSON and TOML blocks parse, every error code has a
//! troubleshooting entry, and every command it shows exists.

use std::path::Path;

use mcp_agents::clients::{
    KNOWN_CLIENTS, UNKNOWN_CLIENT, UNKNOWN_CLIENT_SOURCE, UNKNOWN_CLIENT_TIMEOUT,
};
use mcp_agents::error::ErrorCode;

fn doc(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(name),
    )
    .unwrap()
}

/// The fenced blocks of `language` in `text`.
fn blocks<'a>(text: &'a str, language: &str) -> Vec<&'a str> {
    let fence = format!("```{language}\n");
    text.split(&fence)
        .skip(1)
        .map(|rest| &rest[..rest.find("```").unwrap()])
        .collect()
}

#[test]
fn json_and_toml_blocks_parse() {
    let mut checked = 0;
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for block in blocks(&text, "json") {
            serde_json::from_str::<serde_json::Value>(&block.replace('…', ""))
                .unwrap_or_else(|e| panic!("{}: {e}\n{block}", path.display()));
            checked += 1;
        }
        for block in blocks(&text, "toml") {
            toml::from_str::<toml::Table>(block)
                .unwrap_or_else(|e| panic!("{}: {e}\n{block}", path.display()));
            checked += 1;
        }
    }
    assert!(checked >= 7, "only {checked} blocks found");
}

/// docs/clients.md's table of clients is `src/clients.rs`'s, row for row: the names as
/// the clients report them, the releases checked, their timeouts, the advice per transport
/// and the sources.
#[test]
fn the_clients_table_is_the_one_the_server_advises_from() {
    let clients = doc("clients.md");
    let table = clients
        .split("<!-- clients table: generated from src/clients.rs; tests/suite/docs.rs checks it -->\n")
        .nth(1)
        .and_then(|rest| rest.split("<!-- end of clients table -->").next())
        .expect("docs/clients.md has the table between its markers");
    let rows: Vec<&str> = table.lines().skip(2).collect();
    let mut expected: Vec<String> = KNOWN_CLIENTS
        .iter()
        .map(|c| {
            format!(
                "| {} (`{}`) | {} | {} | {} | {} | {} |",
                c.product,
                c.name,
                c.version,
                c.timeout,
                c.stdio.timeout_ms,
                c.http.timeout_ms,
                c.source
            )
        })
        .collect();
    expected.push(format!(
        "| any other client | — | {UNKNOWN_CLIENT_TIMEOUT} | {0} | {0} | {UNKNOWN_CLIENT_SOURCE} |",
        UNKNOWN_CLIENT.timeout_ms
    ));
    assert_eq!(rows, expected);
}

#[test]
fn every_error_code_is_explained() {
    let troubleshooting = doc("troubleshooting.md");
    for code in ErrorCode::ALL {
        assert!(
            troubleshooting.contains(&format!("| `{}` |", code.as_str())),
            "{code} has no row in troubleshooting.md"
        );
    }
}

#[test]
fn documented_commands_exist() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for command in ["check", "run", "demo", "workspace-tools"] {
        assert!(
            help.contains(&format!("  {command} ")),
            "{command} missing from --help"
        );
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
                .unwrap();
        let documented = [readme, doc("agents.md"), doc("clients.md")]
            .iter()
            .any(|text| text.contains(&format!("mcp-agents {command}")));
        assert!(documented, "`mcp-agents {command}` is not documented");
    }
    for option in ["--http", "--auth-token-env", "--default-model"] {
        assert!(help.contains(option), "{option} missing from --help");
        let documented = ["clients.md", "agents.md"]
            .iter()
            .any(|d| doc(d).contains(option));
        assert!(documented, "{option} is not documented");
    }
}

/// The definitions (Markdown blocks) of the docs/agents.md section headed `heading`.
fn section_examples(heading: &str) -> Vec<String> {
    let agents = doc("agents.md");
    let start = agents.find(heading).expect("the section exists");
    let rest = &agents[start..];
    let section = &rest[..rest[3..].find("\n## ").map_or(rest.len(), |end| end + 3)];
    blocks(section, "markdown")
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The definitions of docs/agents.md's "Local models and gateways" section.
fn gateway_examples() -> Vec<String> {
    section_examples("## Local models and gateways")
}

/// The definitions of docs/agents.md's "Chat Completions endpoints" section.
fn chat_examples() -> Vec<String> {
    section_examples("## Chat Completions endpoints")
}

/// docs/agents.md's llama.cpp example on the Chat Completions wire (also run on the real
/// server by `suite::real_engine`).
pub(super) fn llama_cpp_chat_example() -> String {
    chat_examples()
        .into_iter()
        .find(|e| e.contains("\nname: llama-local\n"))
        .expect("docs/agents.md has the llama.cpp Chat Completions example")
}

/// The value of the frontmatter line `key: value` of a definition.
fn field(example: &str, key: &str) -> String {
    example
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("{key} in {example}"))
        .trim()
        .to_owned()
}

#[test]
fn the_gateway_examples_load_as_written_and_send_a_bearer_token() {
    let examples = gateway_examples();
    assert_eq!(
        examples.len(),
        5,
        "Ollama twice, llama.cpp's server, a gateway, OpenRouter"
    );
    let ws = crate::support::TempWorkspace::new();
    for (i, example) in examples.iter().enumerate() {
        ws.write(&format!(".agents/agents/example-{i}.md"), example);
    }
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "local-coder",
            "local-reviewer",
            "llama-helper",
            "gateway-writer",
            "openrouter-researcher"
        ]
    );
    for agent in catalog.agents() {
        let choice = agent.provider.key_choice(|_| true);
        assert_eq!(
            choice.auth,
            mcp_agents::definition::AuthHeader::Bearer,
            "{}",
            agent.name
        );
    }
}

/// Each example, pointed at a loopback endpoint that takes only `Authorization: Bearer`
/// (its `base_url` replaced, nothing else), completes a run through the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_examples_complete_against_a_bearer_only_endpoint() {
    use crate::support::binary::{self, Generation};
    use crate::support::run_kit::KEY;
    use mcp_agents::testkit::{MockAuth, MockProvider, Step};

    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_auth(MockAuth::BearerOnly);
    let ws = crate::support::TempWorkspace::new();
    let mut names = Vec::new();
    let mut vars = Vec::new();
    for (i, example) in gateway_examples().iter().enumerate() {
        let field = |key: &str| field(example, key);
        let base = if field("wire_api:") == "responses" {
            mock.responses_base_url()
        } else {
            mock.messages_base_url()
        };
        let rewritten = example.replace(&field("base_url:"), &base);
        ws.write(&format!(".agents/agents/example-{i}.md"), rewritten);
        names.push(field("name:"));
        vars.push(field("env_key:"));
    }
    let env: Vec<(&str, &str)> = vars.iter().map(|v| (v.as_str(), KEY)).collect();
    let conn = binary::stdio(ws.path(), Generation::Modern, &env).await;
    for name in &names {
        mock.push([Step::text("Done.")]);
        let id = conn.spawn(name, "Go.").await;
        let record = conn.wait(&[&id], 20_000).await["agents"][0].clone();
        assert_eq!(record["status"], "completed", "{name}: {record}");
    }
    assert_eq!(mock.requests().len(), names.len());
    assert_eq!(mock.refusals(), 0);
    conn.close().await;
}

/// docs/agents.md's llama.cpp example (also run on the real server by
/// `suite::real_engine`).
pub(super) fn llama_cpp_example() -> String {
    gateway_examples()
        .into_iter()
        .find(|e| e.contains("\nname: llama-helper\n"))
        .expect("docs/agents.md has the llama.cpp example")
}

/// The llama.cpp example, its `base_url` pointed at a mock that plays llama.cpp's server
/// (nothing else changed), completes a run through the binary, its key sent as a bearer
/// token and its `temperature` and `max_output_tokens` as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llama_cpp_example_completes_against_a_mock_of_llama_cpp() {
    use crate::support::binary::run_json;
    use crate::support::run_kit::KEY;
    use mcp_agents::testkit::{MockEngine, MockProvider, Step};

    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::LlamaCpp);
    mock.push([Step::text("Hello there, how are you?")]);
    let example = llama_cpp_example();
    let base = example
        .lines()
        .find_map(|l| l.strip_prefix("base_url:"))
        .unwrap()
        .trim()
        .to_owned();
    let ws = crate::support::TempWorkspace::new();
    ws.write(
        ".agents/agents/example.md",
        example.replace(&base, &mock.responses_base_url()),
    );
    let ran = run_json(
        ws.path(),
        "llama-helper",
        "Say hello in five words.",
        &[("LLAMA_API_KEY", KEY)],
        std::time::Duration::from_secs(60),
    )
    .await;
    assert!(ran.success, "{}\n{}", ran.record, ran.stderr);
    assert_eq!(ran.record["result"], "Hello there, how are you?");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers["authorization"],
        format!("Bearer {KEY}").as_str()
    );
    assert_eq!(requests[0].body["max_output_tokens"], 1024);
    assert_eq!(requests[0].body["temperature"], 0.0);
    assert_eq!(requests[0].body["model"], "smollm2");
}

/// The Chat Completions examples load as written, on that wire with a bearer key; the Gemini
/// one is the built-in `gemini` provider spelt out.
#[test]
fn the_chat_completions_examples_load_as_written() {
    use mcp_agents::definition::{AuthHeader, ProviderKind, WireApi};
    let examples = chat_examples();
    assert_eq!(examples.len(), 4, "Gemini, DeepSeek, vLLM, llama.cpp");
    let ws = crate::support::TempWorkspace::new();
    for (i, example) in examples.iter().enumerate() {
        ws.write(&format!(".agents/agents/example-{i}.md"), example);
    }
    ws.write(
        ".agents/agents/built-in.md",
        "---\nname: built-in\ndescription: d\nmodel: gemini-3-flash-preview\n\
         model_provider: gemini\n---\nDo.\n",
    );
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "built-in",
            "gemini-researcher",
            "deepseek-coder",
            "vllm-coder",
            "llama-local"
        ]
    );
    for agent in catalog.agents() {
        assert_eq!(
            agent.provider.wire_api,
            WireApi::ChatCompletions,
            "{}",
            agent.name
        );
        assert_eq!(agent.provider.key_choice(|_| true).auth, AuthHeader::Bearer);
    }
    let built_in = &catalog.get("built-in").unwrap().provider;
    let spelt_out = &catalog.get("gemini-researcher").unwrap().provider;
    assert_eq!(built_in.kind, ProviderKind::Gemini);
    assert_eq!(
        (&built_in.base_url, &built_in.env_key),
        (&spelt_out.base_url, &spelt_out.env_key)
    );
    assert_eq!(
        built_in.base_url.as_str(),
        "https://generativelanguage.googleapis.com/v1beta/openai"
    );
}

/// Each Chat Completions example, its `base_url` pointed at a loopback endpoint that speaks
/// that provider's Chat Completions (Gemini's, DeepSeek's, OpenAI's for the engines) and a
/// fixture child added, runs through the binary: a tool round whose reply carries what the
/// provider adds (and refuses a history without), then an answer; then a resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_completions_examples_complete_against_their_servers() {
    use crate::support::binary::{self, Generation};
    use crate::support::children::stdio_child;
    use crate::support::run_kit::KEY;
    use mcp_agents::testkit::{ChatServer, MockProvider, Step};
    use serde_json::json;

    for example in chat_examples() {
        let name = field(&example, "name:");
        let server = match name.as_str() {
            "gemini-researcher" => ChatServer::Gemini,
            "deepseek-coder" => ChatServer::DeepSeek,
            _ => ChatServer::OpenAi,
        };
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.set_chat_server(server);
        let child = stdio_child("fx", &[], &format!("docs-{name}"), "");
        let rewritten = example
            .replace(&field(&example, "base_url:"), &mock.chat_base_url())
            .replacen("\n---\n", &format!("\nmcp_servers:\n{child}---\n"), 1);
        let ws = crate::support::TempWorkspace::new();
        ws.write(".agents/agents/example.md", rewritten);
        let var = field(&example, "env_key:");
        let conn = binary::stdio(ws.path(), Generation::Modern, &[(var.as_str(), KEY)]).await;
        mock.push([
            Step::tool_call("fx__echo", json!({"text": "x"})).with_reasoning(),
            Step::text("Done.").with_reasoning(),
            Step::text("Again.").with_reasoning(),
        ]);
        let id = conn.spawn(&name, "Go.").await;
        let record = conn.wait(&[&id], 20_000).await["agents"][0].clone();
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(record["result"], "Done.", "{name}");
        conn.ok("send_input", json!({"target": id, "message": "Once more."}))
            .await;
        let record = conn.wait(&[&id], 20_000).await["agents"][0].clone();
        assert_eq!(record["result"], "Again.", "{name}: {record}");
        assert_eq!(mock.refusals(), 0, "{name}");
        assert_eq!(mock.requests().len(), 3, "{name}");
        conn.close().await;
    }
}
