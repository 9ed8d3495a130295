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
    for command in ["check", "run", "demo", "workspace-tools", "status", "watch"] {
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
    for option in [
        "--http",
        "--auth-token-env",
        "--default-model",
        "--mcp-tasks",
    ] {
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

/// The catalog of `ws` with no default model; fails on any warning.
fn loaded_without_warnings(ws: &crate::support::TempWorkspace) -> mcp_agents::definition::Catalog {
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    catalog
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
    let catalog = loaded_without_warnings(&ws);
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
    let catalog = loaded_without_warnings(&ws);
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

/// How a command the docs show is checked.
enum Checked {
    /// Run here, with the result shown.
    Ran,
    /// Not run by the suite, for this reason.
    Elsewhere(&'static str),
}

/// Commands the suite does not run, by how they start, and where they are checked instead.
const NOT_RUN_HERE: &[(&str, &str)] = &[
    (
        "cargo install ",
        "a release build of several minutes: checked on a fresh clone and timed in \
         docs/performance.md",
    ),
    ("scripts/test", "the test suite itself"),
    (
        "scripts/install-engine",
        "builds llama.cpp's server (minutes when cold): .ci/run runs it before \
         suite::real_engine",
    ),
    (
        "cargo test ",
        "the test suite itself: .ci/run runs these ignored tests",
    ),
    (
        "scripts/try-real-clients",
        "needs Claude Code and Codex (800 MB, not open source): run by hand, results in \
         docs/interop.md and docs/clients.md",
    ),
    (
        "claude ",
        "Claude Code is not installed for the suite: scripts/try-real-clients runs these",
    ),
    (
        "codex ",
        "Codex is not installed for the suite: scripts/try-real-clients runs these",
    ),
];

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The commands of `text`'s fenced `sh` blocks, each with the `# ` lines that follow it in
/// its block (what it prints), continuation lines joined and trailing comments removed.
fn shell_commands(text: &str) -> Vec<(String, Vec<String>)> {
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    for block in blocks(text, "sh") {
        let mut pending = String::new();
        for line in block.lines() {
            let trimmed = line.trim();
            if let Some(output) = trimmed.strip_prefix("# ") {
                if line.starts_with('#')
                    && let Some(last) = commands.last_mut()
                {
                    last.1.push(output.to_owned());
                }
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            // A comment after the command (`cmd   # what it does`), outside quotes.
            let mut code = trimmed;
            let mut quoted = false;
            for (i, c) in trimmed.char_indices() {
                match c {
                    '"' => quoted = !quoted,
                    '#' if !quoted && trimmed[..i].ends_with(' ') => {
                        code = trimmed[..i].trim_end();
                        break;
                    }
                    _ => {}
                }
            }
            if let Some(head) = code.strip_suffix('\\') {
                pending.push_str(head);
                continue;
            }
            pending.push_str(code);
            commands.push((std::mem::take(&mut pending), Vec::new()));
        }
    }
    commands
}

/// Runs `command` as the docs show it, in bash with the binary on `PATH`: `cargo run --`
/// is the binary, `/path/to/repo` the example workspace, and `--http` servers listen on a
/// free loopback port until they say where they serve (compared with the block's `# ` lines,
/// the port aside); everything else must succeed.
fn run_documented(command: &str, output: &[String], env: &mut Vec<(String, String)>) -> Checked {
    if let Some((_, why)) = NOT_RUN_HERE
        .iter()
        .find(|(start, _)| command.starts_with(start))
    {
        return Checked::Elsewhere(why);
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bash = |script: &str| {
        let mut c = std::process::Command::new("bash");
        c.arg("-c")
            .arg(script)
            .current_dir(root)
            .env("PATH", &path)
            .env_remove("RUST_LOG")
            .envs(env.iter().map(|(k, v)| (k, v)));
        c
    };
    if let Some(assignment) = command.strip_prefix("export ") {
        let (name, value) = assignment.split_once('=').unwrap();
        let out = bash(&format!("printf %s {value}")).output().unwrap();
        assert!(out.status.success(), "{command}");
        let value = String::from_utf8(out.stdout).unwrap();
        assert!(!value.is_empty(), "{command} gave nothing");
        env.push((name.to_owned(), value));
        return Checked::Ran;
    }
    assert!(
        command.starts_with("mcp-agents") || command.starts_with("cargo run -- "),
        "docs show a command the suite neither runs nor knows where it is checked: {command}"
    );
    let port = free_port().to_string();
    let script = command
        .replacen("cargo run -- ", "mcp-agents ", 1)
        .replace("/path/to/repo", &format!("{root}/examples/workspace"))
        // No test listens beyond loopback.
        .replace("0.0.0.0:8765", &format!("127.0.0.1:{port}"))
        .replace(":8765", &format!(":{port}"));
    if !script.contains(" --http ") {
        let out = bash(&script).output().unwrap();
        assert!(
            out.status.success(),
            "{command}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return Checked::Ran;
    }
    // A server: it says where it serves, then runs until it is stopped.
    use std::io::BufRead;
    let mut child = bash(&format!("exec {script}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let said = stderr
        .lines()
        .map_while(Result::ok)
        .find(|line| line.contains("serving MCP at"));
    child.kill().unwrap();
    child.wait().unwrap();
    let said = said.unwrap_or_else(|| panic!("{command} never said where it serves"));
    assert_eq!(
        said,
        format!("mcp-agents: serving MCP at http://127.0.0.1:{port}/mcp"),
        "{command}"
    );
    for expected in output {
        assert_eq!(*expected, said.replace(&port, "8765"), "{command}");
    }
    Checked::Ran
}

/// Issue 28, point 7: every command the README and docs show in a shell block, and the
/// README's `cargo run --` commands in its text, is run here as written (placeholders
/// aside), or named with where it is checked instead.
#[test]
fn every_command_the_docs_show_runs_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut documents = vec![("README.md".to_owned(), readme.clone())];
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        documents.push((name, std::fs::read_to_string(&path).unwrap()));
    }
    let mut ran = Vec::new();
    let mut elsewhere = Vec::new();
    for (name, text) in &documents {
        let mut env = Vec::new();
        let mut commands = shell_commands(text);
        if name == "README.md" {
            // The set-up text names `cargo run -- check examples/workspace` in passing.
            for span in text.split('`').skip(1).step_by(2) {
                if span.starts_with("cargo run -- ") {
                    commands.push((span.to_owned(), Vec::new()));
                }
            }
        }
        for (command, output) in commands {
            match run_documented(&command, &output, &mut env) {
                Checked::Ran => ran.push(format!("{name}: {command}")),
                Checked::Elsewhere(why) => elsewhere.push(format!("{name}: {command} ({why})")),
            }
        }
    }
    eprintln!("ran:\n  {}", ran.join("\n  "));
    eprintln!("checked elsewhere:\n  {}", elsewhere.join("\n  "));
    for expected in [
        "README.md: cargo run -- demo",
        "README.md: cargo run -- check examples/workspace",
        "docs/clients.md: mcp-agents check /path/to/repo",
        "docs/clients.md: mcp-agents /path/to/repo --http 127.0.0.1:8765",
        "docs/clients.md: mcp-agents /path/to/repo --http 0.0.0.0:8765 --auth-token-env MCP_AGENTS_TOKEN",
    ] {
        assert!(
            ran.iter().any(|r| r == expected),
            "{expected} was not run: {ran:?}"
        );
    }
    assert!(
        elsewhere
            .iter()
            .any(|e| e.starts_with("README.md: cargo install --locked --path .")),
        "{elsewhere:?}"
    );
}

/// Issue 39, point 10: README and docs/clients.md tell a new Claude Code user about its first
/// start: the "New MCP server found" question with "Continue without using this MCP server"
/// preselected, and auto mode asking before every call unless the settings allow the server;
/// the settings line they give is JSON that allows the tools of the server README adds.
#[test]
fn readme_and_clients_say_what_claude_codes_first_start_asks() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let clients = doc("clients.md");
    for text in [&readme, &clients] {
        // Prose is wrapped: words are compared across line breaks.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for words in [
            "New MCP server found in this project: agents",
            "Continue without using this MCP server",
            "auto mode",
            "No, exit",
        ] {
            assert!(text.contains(words), "{words:?} missing");
        }
    }
    // The server README adds is named `agents`, so `mcp__agents` allows its tools.
    assert!(readme.contains("claude mcp add --scope project agents "));
    let allows = |text: &str| {
        blocks(text, "json").iter().any(|block| {
            serde_json::from_str::<serde_json::Value>(block).is_ok_and(|v| {
                v["permissions"]["allow"]
                    .as_array()
                    .is_some_and(|a| a.contains(&serde_json::json!("mcp__agents")))
            })
        })
    };
    assert!(allows(&readme), "README gives the settings line");
    assert!(allows(&clients), "docs/clients.md gives the settings line");
}
