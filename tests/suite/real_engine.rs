//! Our subagents end to end against a real model engine: llama.cpp's `llama-server` with
//! SmolLM2-135M (issue 25), through `mcp-agents run --json`, the way a user runs an agent.
//! Every test is `#[ignore]`: the engine is built once by `scripts/install-engine` (5 to 11
//! minutes, cached outside the clone), and `.ci/run` runs the module after installing it:
//!
//! ```sh
//! scripts/install-engine && cargo test --test all -- --ignored suite::real_engine
//! ```
//!
//! Without the engine every test fails, saying how to install it. One server serves the
//! whole module (`support::engine`: a free loopback port, `-t 1`, the tool-aware template,
//! an 8k context, killed with the test process); each test puts a recording proxy
//! (`support::recording_proxy`) between the binary and the server, so it checks the wire,
//! the statuses, the stop reasons, `tools_used` and the error codes, never the text of a
//! 135M model, which is mostly noise once it has a tool result.
//!
//! What the model is asked is shaped for it: it copies a tool call written out in its
//! template's own `<tool_call>` form at `temperature: 0`; after a tool result it writes
//! noise until its output limit, so every agent has a small `max_output_tokens` and
//! `max_turns: 2` (on Messages a reply at its limit is continued in a new turn; on Responses
//! llama.cpp never says a reply was cut off, so the run ends with the noise as its answer).

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::TempWorkspace;
use support::binary::{RunRecord, run_json};
use support::engine::{CONTEXT_TOKENS, ENGINE_KEY, Engine, engine};
use support::recording_proxy::{Exchange, RecordingProxy};

/// The variable the agents read the engine's key from.
const KEY_VAR: &str = "LLAMA_API_KEY";

/// The longest one run may take: a reader's first turn evaluates a 1.5k-token prompt at
/// 50–100 tokens/s on one thread, and a loaded machine makes that several times slower.
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// The file the readers read, and a line of it their tool result must carry.
const NOTES: &str = "Launch checklist\nThe launch code is 7-4-1.\n";
const NOTES_LINE: &str = "The launch code is 7-4-1.";

/// The task a reader gets: the call spelled out in the template's own form, which the model
/// copies (asked in prose, it writes Python instead).
const READ_TASK: &str = "Reply with exactly this and nothing else:\n<tool_call>\n\
    {\"name\": \"workspace__read\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>";

/// One wire API the engine serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Responses,
    Messages,
    Chat,
}

/// Every wire the tests run on.
const WIRES: [Wire; 3] = [Wire::Responses, Wire::Messages, Wire::Chat];

impl Wire {
    fn name(self) -> &'static str {
        match self {
            Wire::Responses => "responses",
            Wire::Messages => "messages",
            Wire::Chat => "chat",
        }
    }

    fn wire_api(self) -> &'static str {
        match self {
            Wire::Responses => "responses",
            Wire::Messages => "anthropic-messages",
            Wire::Chat => "chat-completions",
        }
    }

    /// The `base_url` for an endpoint at `origin`.
    fn base_url(self, origin: &str) -> String {
        match self {
            Wire::Responses | Wire::Chat => format!("{origin}/v1"),
            Wire::Messages => origin.to_owned(),
        }
    }

    /// The path a request of this wire goes to.
    fn path(self) -> &'static str {
        match self {
            Wire::Responses => "/v1/responses",
            Wire::Messages => "/v1/messages",
            Wire::Chat => "/v1/chat/completions",
        }
    }

    /// Why a streamed reply ended: Responses, the status of the response its last event
    /// carries (llama.cpp says `completed` even for a reply its limit cut off); Messages,
    /// `message_delta`'s `stop_reason`; Chat Completions, the `finish_reason` of the chunk
    /// that carries one.
    fn stop(self, exchange: &Exchange) -> Option<String> {
        let events = exchange.events();
        let found = match self {
            Wire::Responses => events
                .iter()
                .rev()
                .find(|e| {
                    e["type"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("response."))
                })
                .and_then(|e| e["response"]["status"].as_str()),
            Wire::Messages => events
                .iter()
                .find(|e| e["type"] == "message_delta")
                .and_then(|e| e["delta"]["stop_reason"].as_str()),
            Wire::Chat => events
                .iter()
                .find_map(|e| e["choices"][0]["finish_reason"].as_str()),
        };
        found.map(str::to_owned)
    }

    /// The tool calls a streamed reply made: `(id, name, arguments as streamed)`.
    fn calls(self, exchange: &Exchange) -> Vec<(String, String, String)> {
        let events = exchange.events();
        match self {
            Wire::Responses => events
                .iter()
                .filter(|e| {
                    e["type"] == "response.output_item.done" && e["item"]["type"] == "function_call"
                })
                .map(|e| {
                    let item = &e["item"];
                    (
                        text(&item["call_id"]),
                        text(&item["name"]),
                        text(&item["arguments"]),
                    )
                })
                .collect(),
            Wire::Messages => {
                let mut calls: Vec<(u64, (String, String, String))> = Vec::new();
                for e in &events {
                    let index = e["index"].as_u64().unwrap_or(0);
                    if e["type"] == "content_block_start"
                        && e["content_block"]["type"] == "tool_use"
                    {
                        let block = &e["content_block"];
                        calls.push((
                            index,
                            (text(&block["id"]), text(&block["name"]), String::new()),
                        ));
                    } else if e["delta"]["type"] == "input_json_delta"
                        && let Some((_, call)) = calls.iter_mut().find(|(i, _)| *i == index)
                    {
                        call.2
                            .push_str(e["delta"]["partial_json"].as_str().unwrap_or(""));
                    }
                }
                calls.into_iter().map(|(_, call)| call).collect()
            }
            Wire::Chat => {
                // Fragments of one call share its `index`; the first carries its id and name.
                let mut calls: Vec<(u64, (String, String, String))> = Vec::new();
                let fragments = events
                    .iter()
                    .flat_map(|e| {
                        e["choices"][0]["delta"]["tool_calls"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>();
                for fragment in &fragments {
                    let index = fragment["index"].as_u64().unwrap_or(0);
                    let function = &fragment["function"];
                    match calls.iter_mut().find(|(i, _)| *i == index) {
                        Some((_, call)) => call.2.push_str(&text(&function["arguments"])),
                        None => calls.push((
                            index,
                            (
                                text(&fragment["id"]),
                                text(&function["name"]),
                                text(&function["arguments"]),
                            ),
                        )),
                    }
                }
                calls.into_iter().map(|(_, call)| call).collect()
            }
        }
    }

    /// The tool calls a request sends back and their results:
    /// `(id, arguments as sent, result text, whether it is an error)`.
    fn answered_calls(self, request: &Value) -> Vec<(String, Value, String, bool)> {
        match self {
            Wire::Responses => {
                let input = request["input"].as_array().cloned().unwrap_or_default();
                input
                    .iter()
                    .filter(|i| i["type"] == "function_call")
                    .map(|call| {
                        let id = text(&call["call_id"]);
                        let output = input
                            .iter()
                            .find(|i| i["type"] == "function_call_output" && i["call_id"] == id)
                            .map(|o| text(&o["output"]))
                            .unwrap_or_default();
                        let error = output.starts_with("Error: ");
                        (id, call["arguments"].clone(), output, error)
                    })
                    .collect()
            }
            Wire::Messages => {
                let blocks: Vec<Value> = request["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                    .collect();
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|call| {
                        let id = text(&call["id"]);
                        let result = blocks
                            .iter()
                            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id);
                        let content = result.map(|r| text(&r["content"])).unwrap_or_default();
                        let error = result.is_some_and(|r| r["is_error"] == true);
                        (id, call["input"].clone(), content, error)
                    })
                    .collect()
            }
            Wire::Chat => {
                let messages = request["messages"].as_array().cloned().unwrap_or_default();
                messages
                    .iter()
                    .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
                    .map(|call| {
                        let id = text(&call["id"]);
                        let content = messages
                            .iter()
                            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
                            .map(|m| chat_text(&m["content"]))
                            .unwrap_or_default();
                        let error = content.starts_with("Error: ");
                        (id, call["function"]["arguments"].clone(), content, error)
                    })
                    .collect()
            }
        }
    }
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// A Chat Completions message's content: a string, or the text of its parts.
fn chat_text(content: &Value) -> String {
    match content.as_array() {
        Some(parts) => parts.iter().map(|p| text(&p["text"])).collect(),
        None => text(content),
    }
}

/// An agent definition at the proxy: `.agents/agents` (canonical) or `.claude/agents`
/// (a Claude Code file, with `tools: Read, Grep, Glob`).
struct Agent {
    name: String,
    path: String,
    text: String,
}

fn text_agent(name: &str, wire: Wire, origin: &str, extra: &str) -> Agent {
    Agent {
        name: name.to_owned(),
        path: format!(".agents/agents/{name}.md"),
        text: format!(
            "---\nname: {name}\ndescription: Answers in a few words.\nmodel: smollm2\n\
             model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: {}\n\
             temperature: 0\nmax_output_tokens: 64\nmax_turns: 2\n{extra}---\nYou are terse.\n",
            wire.base_url(origin),
            wire.wire_api()
        ),
    }
}

fn reader(name: &str, wire: Wire, origin: &str, max_output_tokens: u32) -> Agent {
    Agent {
        name: name.to_owned(),
        path: format!(".claude/agents/{name}.md"),
        text: format!(
            "---\nname: {name}\ndescription: Reads a file of the workspace.\nmodel: smollm2\n\
             model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: {}\n\
             temperature: 0\nmax_output_tokens: {max_output_tokens}\nmax_turns: 2\n\
             tools: Read, Grep, Glob\n---\nYou are a helpful assistant. Use the tools when \
             asked.\n",
            wire.base_url(origin),
            wire.wire_api()
        ),
    }
}

/// The engine, a proxy to it, and a workspace with `notes.txt` and `agents`.
struct Setup {
    engine: &'static Engine,
    proxy: RecordingProxy,
    ws: TempWorkspace,
}

impl Setup {
    async fn new() -> Setup {
        let engine = engine().await;
        let proxy = RecordingProxy::start(&engine.origin()).await;
        let ws = TempWorkspace::new();
        ws.write("notes.txt", NOTES);
        Setup { engine, proxy, ws }
    }

    fn origin(&self) -> String {
        self.proxy.origin().to_owned()
    }

    fn add(&self, agent: &Agent) {
        self.ws.write(&agent.path, &agent.text);
    }

    async fn run(&self, name: &str, task: &str) -> RunRecord {
        self.run_with_key(name, task, ENGINE_KEY).await
    }

    async fn run_with_key(&self, name: &str, task: &str, key: &str) -> RunRecord {
        let ran = run_json(self.ws.path(), name, task, &[(KEY_VAR, key)], RUN_LIMIT).await;
        self.engine.assert_alive();
        ran
    }

    /// Every request the proxy passed on, in order.
    fn exchanges(&self) -> Vec<Exchange> {
        self.proxy.exchanges()
    }

    /// What the test saw, for a failure's message.
    fn explain(&self, ran: &RunRecord) -> String {
        let statuses: Vec<(String, u16)> = self
            .exchanges()
            .iter()
            .map(|e| (e.path.clone(), e.status))
            .collect();
        format!(
            "record: {}\nexchanges: {statuses:?}\nstderr: {}\nengine log ({}):\n{}",
            ran.record,
            ran.stderr,
            self.engine.log.display(),
            self.engine.log_tail()
        )
    }
}

/// A canonical text agent completes in one turn on every wire: one request, answered 200
/// with a streamed reply that ends the turn, the usage counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_text_agent_completes_on_every_wire() {
    for wire in WIRES {
        let setup = Setup::new().await;
        let name = format!("text-{}", wire.name());
        setup.add(&text_agent(&name, wire, &setup.origin(), ""));
        let ran = setup.run(&name, "Say hello in five words.").await;
        let why = setup.explain(&ran);
        assert!(ran.success, "{wire:?}: {why}");
        assert_eq!(ran.record["status"], "completed", "{why}");
        assert_eq!(ran.record["turns"], 1, "{why}");
        assert_eq!(ran.record["tools_used"], json!([]), "{why}");
        assert!(
            ran.record["usage"]["input_tokens"].as_u64() > Some(0),
            "{why}"
        );
        assert!(
            ran.record["usage"]["output_tokens"].as_u64() > Some(0),
            "{why}"
        );
        let exchanges = setup.exchanges();
        assert_eq!(exchanges.len(), 1, "{why}");
        assert_eq!(exchanges[0].path, wire.path());
        assert_eq!(exchanges[0].status, 200, "{why}");
        let stop = wire.stop(&exchanges[0]);
        let ended = match wire {
            Wire::Responses => stop.as_deref() == Some("completed"),
            Wire::Messages => stop.as_deref() == Some("end_turn"),
            Wire::Chat => stop.as_deref() == Some("stop"),
        };
        assert!(ended, "{wire:?} stopped with {stop:?}: {why}");
    }
}

/// A Claude Code file with `tools: Read, Grep, Glob` reads a file through the workspace
/// tools on every wire: the model's call (written in its template's form, turned into the
/// wire's tool call by the engine) runs, and its result, the file's lines, goes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_claude_code_reader_reads_a_file_through_the_workspace_tools_on_every_wire() {
    for wire in WIRES {
        let setup = Setup::new().await;
        let name = format!("reader-{}", wire.name());
        setup.add(&reader(&name, wire, &setup.origin(), 64));
        let ran = setup.run(&name, READ_TASK).await;
        let why = setup.explain(&ran);
        let read = &ran.record["tools_used"][0];
        assert_eq!(read["tool"], "workspace__read", "{wire:?}: {why}");
        // The first call succeeded (its result is checked on the wire below); the noise
        // after it may hold another call, with any arguments.
        assert!(read["errors"].as_u64() < read["calls"].as_u64(), "{why}");
        // After the tool result the model writes noise: on Messages to its limit, which is
        // continued until `max_turns`; on Responses the engine calls that `completed`.
        let status = ran.record["status"].as_str().unwrap_or_default();
        let code = ran.record["error"]["code"].as_str();
        assert!(
            status == "completed" || code == Some("turn_limit"),
            "{wire:?}: {why}"
        );
        let exchanges = setup.exchanges();
        assert!(exchanges.len() >= 2, "{why}");
        assert!(exchanges.iter().all(|e| e.status == 200), "{why}");
        let first = &exchanges[0];
        let tools: Vec<String> = first.request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            // Chat Completions nests a tool's name in its `function`.
            .map(|t| {
                text(
                    t.get("function")
                        .unwrap_or(t)
                        .get("name")
                        .unwrap_or(&Value::Null),
                )
            })
            .collect();
        assert_eq!(
            tools,
            ["workspace__glob", "workspace__grep", "workspace__read"],
            "the tools `Read, Grep, Glob` select, in a stable order: {why}"
        );
        let calls = wire.calls(first);
        assert_eq!(calls.len(), 1, "{calls:?}: {why}");
        let (id, called, arguments) = &calls[0];
        assert_eq!(called, "workspace__read");
        assert_eq!(
            serde_json::from_str::<Value>(arguments).ok(),
            Some(json!({"path": "notes.txt"})),
            "{why}"
        );
        let stop = wire.stop(first);
        let stopped_for_the_call = match wire {
            Wire::Responses => stop.as_deref() == Some("completed"),
            Wire::Messages => stop.as_deref() == Some("tool_use"),
            Wire::Chat => stop.as_deref() == Some("tool_calls"),
        };
        assert!(
            stopped_for_the_call,
            "{wire:?} stopped with {stop:?}: {why}"
        );
        let answered = wire.answered_calls(&exchanges[1].request);
        let (answered_id, sent, result, error) = &answered[0];
        assert_eq!(answered_id, id, "{why}");
        let as_received = match wire {
            Wire::Responses | Wire::Chat => json!(arguments),
            Wire::Messages => json!({"path": "notes.txt"}),
        };
        assert_eq!(sent, &as_received, "the call goes back as it came: {why}");
        assert!(!error && result.contains(NOTES_LINE), "{result}: {why}");
    }
}

/// Four agents at once, on every wire and both ways of sending the key (Messages takes a
/// bearer token too): all complete, each in one 200 exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn four_agents_run_at_once() {
    let setup = Setup::new().await;
    let origin = setup.origin();
    let agents = [
        text_agent("text-responses", Wire::Responses, &origin, ""),
        text_agent("text-messages", Wire::Messages, &origin, ""),
        text_agent("text-chat", Wire::Chat, &origin, ""),
        text_agent(
            "text-messages-bearer",
            Wire::Messages,
            &origin,
            "auth: bearer\n",
        ),
    ];
    for agent in &agents {
        setup.add(agent);
    }
    let runs = agents
        .iter()
        .map(|agent| setup.run(&agent.name, "Name three colours."));
    let ran = futures_util::future::join_all(runs).await;
    for (agent, ran) in agents.iter().zip(&ran) {
        let why = setup.explain(ran);
        assert!(ran.success, "{}: {why}", agent.name);
        assert_eq!(ran.record["status"], "completed", "{why}");
        assert_eq!(ran.record["name"], agent.name.as_str());
    }
    let exchanges = setup.exchanges();
    assert_eq!(exchanges.len(), 4, "one request each");
    assert!(exchanges.iter().all(|e| e.status == 200));
    let mut keys: Vec<(&str, bool, bool)> = exchanges
        .iter()
        .map(|e| {
            let bearer = e.headers.get("authorization").and_then(|v| v.to_str().ok())
                == Some(format!("Bearer {ENGINE_KEY}").as_str());
            (e.path.as_str(), bearer, e.headers.contains_key("x-api-key"))
        })
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("/v1/chat/completions", true, false),
            ("/v1/messages", false, true),
            ("/v1/messages", true, false),
            ("/v1/responses", true, false)
        ],
        "Messages' own header and a bearer token are both taken"
    );
}

/// A task longer than the engine's context is `context_limit` on every wire, asked once:
/// llama.cpp answers `400 exceed_context_size_error`, in OpenAI's error shape on Messages
/// too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_task_longer_than_the_context_is_context_limit_on_every_wire() {
    // About 2.5 tokens a word: well past the context.
    let task = "The quick brown fox jumps over the lazy dog. ".repeat(CONTEXT_TOKENS / 4);
    for wire in WIRES {
        let setup = Setup::new().await;
        let name = format!("text-{}", wire.name());
        setup.add(&text_agent(&name, wire, &setup.origin(), ""));
        let ran = setup.run(&name, &task).await;
        let why = setup.explain(&ran);
        assert!(!ran.success, "{why}");
        assert_eq!(ran.record["error"]["code"], "context_limit", "{why}");
        let exchanges = setup.exchanges();
        assert_eq!(exchanges.len(), 1, "never retried: {why}");
        assert_eq!(exchanges[0].status, 400, "{why}");
        let error = exchanges[0].json();
        assert_eq!(error["error"]["type"], "exceed_context_size_error", "{why}");
        assert_eq!(error["error"]["n_ctx"], CONTEXT_TOKENS, "{why}");
        let message = ran.record["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("exceeds the available context size"),
            "{message}"
        );
    }
}

/// A wrong key is the engine's 401, quoted in a `provider_error`, asked once; the key
/// appears nowhere in what the run reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_wrong_key_is_the_engines_401_on_every_wire() {
    let wrong = "wrong-key-5cc0e7";
    for wire in WIRES {
        let setup = Setup::new().await;
        let name = format!("text-{}", wire.name());
        setup.add(&text_agent(&name, wire, &setup.origin(), ""));
        let ran = setup.run_with_key(&name, "Say hello.", wrong).await;
        let why = setup.explain(&ran);
        assert!(!ran.success, "{why}");
        assert_eq!(ran.record["error"]["code"], "provider_error", "{why}");
        let message = ran.record["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.ends_with("answered HTTP 401 authentication_error: Invalid API Key"),
            "{message}"
        );
        let exchanges = setup.exchanges();
        assert_eq!(exchanges.len(), 1, "not retried: {why}");
        assert_eq!(exchanges[0].status, 401);
        assert!(
            !ran.record.to_string().contains(wrong) && !ran.stderr.contains(wrong),
            "the key leaked: {why}"
        );
    }
}

/// docs/agents.md's two llama.cpp examples (Responses, and Chat Completions from issue 26),
/// as written but for their port, run on the engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn the_documented_llama_cpp_examples_run_on_the_engine() {
    for (example, path) in [
        (super::docs::llama_cpp_example(), "/v1/responses"),
        (
            super::docs::llama_cpp_chat_example(),
            "/v1/chat/completions",
        ),
    ] {
        let setup = Setup::new().await;
        let field = |key: &str| {
            example
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap()
                .trim()
                .to_owned()
        };
        let base = field("base_url:");
        let origin = base.trim_end_matches("/v1");
        setup.ws.write(
            ".agents/agents/example.md",
            example.replace(origin, &setup.origin()),
        );
        let name = field("name:");
        let ran = setup.run(&name, "Say hello in five words.").await;
        let why = setup.explain(&ran);
        assert!(ran.success, "{name}: {why}");
        assert_eq!(ran.record["status"], "completed", "{why}");
        let exchanges = setup.exchanges();
        assert_eq!(exchanges.len(), 1, "{why}");
        assert_eq!(exchanges[0].path, path, "{why}");
        assert_eq!(exchanges[0].status, 200, "{why}");
    }
}

/// Issue 25's second defect, on the engine: a Responses reply cut off at 20 tokens holds a
/// call whose arguments stop mid-way, marked `completed`. The call is answered with an error
/// saying it was cut off, never run, and goes back with `{}`: every request is answered 200
/// (the arguments as received got a 500, five times, and the run was lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_responses_call_cut_off_mid_arguments_is_answered_and_sent_back_as_an_empty_object() {
    let setup = Setup::new().await;
    setup.add(&reader("reader-cut", Wire::Responses, &setup.origin(), 20));
    let ran = setup.run("reader-cut", READ_TASK).await;
    let why = setup.explain(&ran);
    let exchanges = setup.exchanges();
    assert!(exchanges.len() >= 2, "{why}");
    assert!(
        exchanges.iter().all(|e| e.status == 200),
        "no request refused: {why}"
    );
    let calls = Wire::Responses.calls(&exchanges[0]);
    let (_, name, arguments) = &calls[0];
    assert_eq!(name, "workspace__read");
    assert!(
        serde_json::from_str::<Value>(arguments).is_err(),
        "the premise: at 20 tokens the engine cuts the call's arguments ({arguments}): {why}"
    );
    assert_eq!(
        Wire::Responses.stop(&exchanges[0]).as_deref(),
        Some("completed")
    );
    let answered = Wire::Responses.answered_calls(&exchanges[1].request);
    let (_, sent, result, error) = &answered[0];
    assert_eq!(sent, "{}", "{why}");
    assert!(*error, "{result}");
    assert!(
        result.contains("this call to `workspace__read` was cut off"),
        "{result}"
    );
    assert_eq!(ran.record["tools_used"], json!([]), "never run: {why}");
    assert_ne!(ran.record["error"]["code"], "provider_error", "{why}");
}

/// Issue 25's third defect, on the engine: at 28 tokens llama.cpp's Messages reply holds the
/// whole call (`{"path": "notes.txt"}`), closes the block, and says `max_tokens`. The call
/// runs (it used to be answered "was cut off … not run").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs llama.cpp's server: scripts/install-engine"]
async fn a_messages_call_whole_when_the_limit_stops_the_reply_runs() {
    let setup = Setup::new().await;
    setup.add(&reader("reader-limit", Wire::Messages, &setup.origin(), 28));
    let ran = setup.run("reader-limit", READ_TASK).await;
    let why = setup.explain(&ran);
    let exchanges = setup.exchanges();
    assert!(exchanges.len() >= 2, "{why}");
    assert!(exchanges.iter().all(|e| e.status == 200), "{why}");
    assert_eq!(
        Wire::Messages.stop(&exchanges[0]).as_deref(),
        Some("max_tokens"),
        "the premise: the limit stops the reply right after the call: {why}"
    );
    let calls = Wire::Messages.calls(&exchanges[0]);
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].2).ok(),
        Some(json!({"path": "notes.txt"})),
        "the premise: the call's JSON is whole: {why}"
    );
    let read = &ran.record["tools_used"][0];
    assert_eq!(read["tool"], "workspace__read", "{why}");
    assert!(read["errors"].as_u64() < read["calls"].as_u64(), "{why}");
    let answered = Wire::Messages.answered_calls(&exchanges[1].request);
    let (_, _, result, error) = &answered[0];
    assert!(!error && result.contains(NOTES_LINE), "{result}: {why}");
}
