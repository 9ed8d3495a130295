//! The model loop's own cost per turn.
//!
//! - `loop_100_turns/*`: a whole run of 100 model requests (99 tool calls, then the final
//!   text) against the mock endpoint on loopback: loop, HTTP, JSON and the mock together.
//! - `client_side_turn/*`: what the loop itself does per turn, without network or mock:
//!   encode the request body for a 50-turn history, parse a whole (non-streamed) reply,
//!   append the reply and the tool result to the history. `turn_growth` measures the same
//!   work with a streamed reply at 10, 100 and 500 turns.
//!
//! Run: `cargo bench --bench loop_overhead`. Results go to docs/performance.md.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_agents::definition::WireApi;
use mcp_agents::providers::Request;
use mcp_agents::providers::format;
use mcp_agents::providers::{ApiKey, Conversation, ProviderClient, ToolOutput};
use mcp_agents::run::Activity;
use mcp_agents::run::{
    Inbox, RunContext, RunLimits, RunObserver, RunOutcome, Spent, ToolUse, UsageDelta,
    run_model_loop,
};
use mcp_agents::testkit::{MockProvider, Step};
use mcp_agents::toolbox::{BoxFuture, ToolBox, ToolDescriptor, ToolResult, ToolSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const KEY: &str = "bench-key";

struct Echo(Vec<ToolDescriptor>);

impl ToolBox for Echo {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.0
    }
    fn call(&self, _index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        Box::pin(async move {
            ToolResult {
                content: arguments.to_string(),
                images: Vec::new(),
                is_error: false,
                changed: None,
            }
        })
    }
}

fn echo_tools() -> Echo {
    Echo(vec![ToolDescriptor {
        spec: ToolSpec {
            name: "t__echo".into(),
            description: "Echo.".into(),
            input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        },
        // Validated before each call, as a child's schema is.
        original_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        server: "t".into(),
        tool: "echo".into(),
        timeout: Duration::from_secs(60),
        parks: false,
    }])
}

struct Quiet;
impl RunObserver for Quiet {
    fn activity(&self, _: Activity) {}
    fn usage(&self, _: UsageDelta) {}
    fn tool_used(&self, _: &str, _: ToolUse) {}
    fn file_changed(&self, _: &mcp_agents::toolbox::FileChange) {}

    fn parked(&self, _: std::time::Duration) {}
    fn model_left(&self, _: &mcp_agents::run::ModelAttempt, _: &str) {}

    fn before_request(&self) -> Result<(), mcp_agents::error::AgentError> {
        Ok(())
    }
}

struct Once(std::sync::Mutex<Option<String>>);
impl Inbox for Once {
    fn take_all(&self) -> Vec<String> {
        self.0.lock().unwrap().take().into_iter().collect()
    }

    fn is_empty(&self) -> bool {
        self.0.lock().unwrap().is_none()
    }
}

fn whole_runs(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(MockProvider::start(KEY)).unwrap();
    mock.stop_recording();
    let tools = echo_tools();
    let mut group = c.benchmark_group("loop_100_turns");
    group.sample_size(10);
    for wire in WireApi::ALL {
        let base = mock.base_url(wire);
        let provider = ProviderClient::new(
            &mcp_agents::testkit::mock_definition(wire, url::Url::parse(&base).unwrap()),
            ApiKey::for_tests(KEY),
        );
        group.bench_function(wire.as_str(), |b| {
            b.iter(|| {
                let mut steps = vec![Step::tool_call("t__echo", json!({"text": "x"})); 99];
                steps.push(Step::text("done"));
                mock.push(steps);
                let mut conversation = Conversation::new(wire);
                let inbox = Once(std::sync::Mutex::new(Some("Go.".into())));
                let (_tx, rx) = tokio::sync::watch::channel(0);
                let outcome = rt.block_on(run_model_loop(
                    &mut conversation,
                    RunContext {
                        provider: &provider,
                        system: "You are a benchmark.",
                        tools: &tools,
                        inbox: &inbox,
                        observer: &Quiet,
                        interrupts: rx,
                        cancel: CancellationToken::new(),
                        limits: RunLimits::turns(1000),
                        spent: Spent::default(),
                        output_schema: None,
                    },
                ));
                assert_eq!(outcome, RunOutcome::Completed("done".into()));
            })
        });
    }
    group.finish();
}

/// A 50-turn history: each turn a tool call and its result.
fn history(wire: WireApi) -> Conversation {
    let mut conversation = Conversation::new(wire);
    conversation.push_user_texts(&["Go.".into()]);
    for i in 0..50 {
        let reply = reply(wire, i);
        conversation.push_reply(&reply);
        conversation.push_tool_outputs(&[ToolOutput::text(
            reply.tool_calls[0].call_id.clone(),
            format!("result {i}: {}", "lorem ipsum ".repeat(20)),
            false,
        )]);
    }
    conversation
}

fn reply(wire: WireApi, i: usize) -> mcp_agents::providers::Reply {
    let body = match wire {
        WireApi::Responses => json!({
            "id": "resp", "object": "response", "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "gAAAA".repeat(40)},
                {"type": "function_call", "id": "fc", "call_id": format!("call_{i}"), "name": "t__echo",
                 "arguments": "{\"text\": \"x\"}", "status": "completed"}],
            "usage": {"input_tokens": 1000, "output_tokens": 50}
        }),
        WireApi::AnthropicMessages => json!({
            "id": "msg", "type": "message", "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm ".repeat(40), "signature": "sig".repeat(40)},
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "t__echo", "input": {"text": "x"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1000, "output_tokens": 50}
        }),
        WireApi::ChatCompletions => json!({
            "id": "chatcmpl", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "reasoning_content": "hmm ".repeat(40),
                "tool_calls": [{"id": format!("call_{i}"), "type": "function",
                    "function": {"name": "t__echo", "arguments": "{\"text\": \"x\"}"}}]}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
        }),
    };
    format(wire)
        .parse("bench", &mcp_agents::redact::Secrets::default(), body)
        .unwrap_or_else(|_| panic!("valid reply"))
}

fn client_side(c: &mut Criterion) {
    let specs: Vec<_> = (0..10)
        .map(|i| {
            let mut spec = echo_tools().0[0].spec.clone();
            spec.name = format!("t__echo_{i}");
            spec
        })
        .collect();
    let mut group = c.benchmark_group("client_side_turn");
    for wire in WireApi::ALL {
        let conversation = history(wire);
        let settings = mcp_agents::providers::ModelSettings {
            model: "m".into(),
            temperature: None,
            reasoning_effort: None,
            strict_output_schema: None,
            output_limit_as_max_tokens: false,
        };
        let raw_reply = match wire {
            WireApi::Responses => json!({"id": "r", "object": "response", "status": "completed",
                "output": [{"type": "function_call", "id": "fc", "call_id": "call_z", "name": "t__echo",
                            "arguments": "{}", "status": "completed"}], "usage": {}}),
            WireApi::AnthropicMessages => json!({"id": "m", "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_z", "name": "t__echo", "input": {}}],
                "stop_reason": "tool_use", "usage": {}}),
            WireApi::ChatCompletions => json!({"id": "c", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null, "tool_calls": [{"id": "call_z",
                    "type": "function", "function": {"name": "t__echo", "arguments": "{}"}}]}}],
                "usage": {}}),
        };
        let raw_bytes = serde_json::to_vec(&raw_reply).unwrap();
        // Encoded once, as a run does.
        let tools = format(wire).encode_tools(&specs).unwrap();
        group.bench_function(wire.as_str(), |b| {
            b.iter_batched(
                || conversation.clone(),
                |mut next| {
                    let bytes = format(wire)
                        .encode(&Request {
                            settings: &settings,
                            system: "sys",
                            history: conversation.history(),
                            tools: &tools,
                            max_output_tokens: 32_000,
                            learned: &Default::default(),
                            prompt_cache_key: Some("mcp-agents-0123456789abcdef"),
                        })
                        .unwrap();
                    let parsed: Value = serde_json::from_slice(&raw_bytes).unwrap();
                    let reply = format(wire)
                        .parse("bench", &mcp_agents::redact::Secrets::default(), parsed)
                        .unwrap_or_else(|_| panic!("valid"));
                    next.push_reply(&reply);
                    next.push_tool_outputs(&[ToolOutput {
                        call_id: "c".into(),
                        content: "r".into(),
                        images: Vec::new(),
                        is_error: false,
                    }]);
                    (bytes.len(), next)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

/// What checking a call's arguments against its tool's own schema costs (SPEC §6 step 3):
/// compiling a schema the size of a typical MCP tool's (once per tool per run), and
/// validating one call's arguments against it (every call).
fn argument_check(c: &mut Criterion) {
    use mcp_agents::definition::CompiledSchema;
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "repo": {"type": "string", "description": "Repository name"},
            "query": {"type": "string", "minLength": 1},
            "state": {"type": "string", "enum": ["open", "closed", "all"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "sort": {"type": "string", "enum": ["created", "updated", "comments"]},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
            "page": {"type": "integer", "minimum": 1}
        },
        "required": ["owner", "repo", "query"],
        "additionalProperties": false
    });
    let arguments = json!({"owner": "acme", "repo": "widgets", "query": "crash on start",
                           "state": "open", "labels": ["bug", "p1"], "per_page": 30});
    let mut group = c.benchmark_group("argument_check");
    group.bench_function("compile", |b| {
        b.iter(|| CompiledSchema::compile(std::hint::black_box(&schema)).unwrap())
    });
    let compiled = CompiledSchema::compile(&schema).unwrap();
    group.bench_function("validate", |b| {
        b.iter(|| compiled.violations(std::hint::black_box(&arguments)).len())
    });
    group.finish();
}

criterion_group!(benches, whole_runs, client_side, argument_check);
criterion_main!(benches);
