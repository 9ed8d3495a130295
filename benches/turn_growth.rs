//! How the loop's own cost per turn grows with the history, and how fast it reacts to a
//! streamed reply (SPEC §6.1 "Cost per turn"; docs/performance.md).
//!
//! - Per-turn CPU at 10, 100 and 500 turns of history, on every wire API: encode the request
//!   body from the stored history (10 tools), read a streamed reply (a reasoning or thinking
//!   item, or on Chat Completions DeepSeek's `reasoning_content`, and a tool call, as
//!   server-sent events through the wire's reader), and append the reply and the tool result
//!   to the history. Thread CPU time, median of 300 turns per
//!   size; the ratio 500 ÷ 100 is what SPEC §6.1 bounds (≤ 6; linear would be ~5).
//! - A streamed reply's first event to the loop's reaction (the tool call it asks for
//!   starts): the real loop against the loopback mock, 5 runs of 100 turns per wire.
//!
//! Run: `cargo bench --bench turn_growth`. It prints a Markdown table.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_agents::definition::WireApi;
use mcp_agents::providers::format;
use mcp_agents::providers::{ApiKey, Conversation, ModelSettings, ProviderClient, ToolOutput};
use mcp_agents::providers::{Request, ToolList};
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
const SIZES: [usize; 3] = [10, 100, 500];
const SAMPLES: usize = 300;

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn spec() -> ToolSpec {
    ToolSpec {
        name: "t__echo".into(),
        description: "Echo the text back.".into(),
        input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }
}

/// The events of one streamed reply asking for one tool call, as the API sends them.
fn reply_events(wire: WireApi, i: usize) -> Vec<(String, String)> {
    match wire {
        WireApi::Responses => responses_events(i),
        WireApi::ChatCompletions => chat_events(i),
        WireApi::AnthropicMessages => messages_events(i),
    }
}

/// An event as the reader gets it: its type, and its data as text.
fn ev(v: Value) -> (String, String) {
    (v["type"].as_str().unwrap().to_owned(), v.to_string())
}

/// Responses: a reasoning item and a function call, each added and done.
fn responses_events(i: usize) -> Vec<(String, String)> {
    let reasoning = json!({"type": "reasoning", "id": format!("rs_{i}"), "summary": [],
        "encrypted_content": "gAAAA".repeat(40)});
    let call = json!({"type": "function_call", "id": format!("fc_{i}"),
        "call_id": format!("call_{i}"), "name": "t__echo",
        "arguments": "{\"text\": \"x\"}", "status": "completed"});
    let response = json!({"id": format!("resp_{i}"), "object": "response",
        "status": "completed", "output": [reasoning, call],
        "usage": {"input_tokens": 1000, "output_tokens": 50}});
    let mut started = response.clone();
    started["status"] = json!("in_progress");
    started["output"] = json!([]);
    vec![
        ev(json!({"type": "response.created", "sequence_number": 0, "response": started})),
        ev(json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning})),
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning})),
        ev(
            json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "function_call", "call_id": format!("call_{i}"), "name": "t__echo", "arguments": ""}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"text\": "}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "\"x\"}"}),
        ),
        ev(json!({"type": "response.output_item.done", "output_index": 1, "item": call})),
        ev(json!({"type": "response.completed", "response": response})),
    ]
}

/// Chat Completions: DeepSeek's `reasoning_content`, a call in pieces, the usage, `[DONE]`.
fn chat_events(i: usize) -> Vec<(String, String)> {
    let chunk = |delta: Value, finish: Value| {
        (
            "message".to_owned(),
            json!({"id": format!("chatcmpl-{i}"), "object": "chat.completion.chunk",
                "created": 1, "model": "m", "choices": [{"index": 0, "delta": delta,
                "logprobs": null, "finish_reason": finish}], "usage": null})
            .to_string(),
        )
    };
    vec![
        chunk(
            json!({"role": "assistant", "content": null, "reasoning_content": "hmm ".repeat(40)}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": format!("call_{i}"), "type": "function",
                "function": {"name": "t__echo", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"text\": "}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"x\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        (
            "message".to_owned(),
            json!({"id": format!("chatcmpl-{i}"), "object": "chat.completion.chunk",
                "created": 1, "model": "m", "choices": [],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}})
            .to_string(),
        ),
        ("message".to_owned(), "[DONE]".to_owned()),
    ]
}

/// Messages: a thinking block with its signature, and a tool use.
fn messages_events(i: usize) -> Vec<(String, String)> {
    vec![
        ev(
            json!({"type": "message_start", "message": {"id": format!("msg_{i}"), "type": "message",
            "role": "assistant", "model": "m", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
        ),
        ev(json!({"type": "ping"})),
        ev(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}})),
        ev(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm ".repeat(40)}})),
        ev(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig".repeat(40)}})),
        ev(json!({"type": "content_block_stop", "index": 0})),
        ev(
            json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "t__echo", "input": {}}}),
        ),
        ev(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{\"text\": \"x\"}"}})),
        ev(json!({"type": "content_block_stop", "index": 1})),
        ev(
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 50}}),
        ),
        ev(json!({"type": "message_stop"})),
    ]
}

/// One turn of the client's own work: encode, read the streamed reply, append.
fn turn(
    wire: WireApi,
    conversation: &mut Conversation,
    events: &[(String, String)],
    tools: &ToolList,
) -> usize {
    let format = format(wire);
    let settings = ModelSettings {
        model: "m".into(),
        temperature: None,
        reasoning_effort: None,
        strict_output_schema: None,
        output_limit_as_max_tokens: false,
    };
    let body = format
        .encode(&Request {
            settings: &settings,
            system: "You are a benchmark.",
            history: conversation.history(),
            tools,
            max_output_tokens: 32_000,
            learned: &Default::default(),
            prompt_cache_key: Some("mcp-agents-0123456789abcdef"),
        })
        .unwrap();
    let mut reader = format.stream("p", &mcp_agents::redact::Secrets::default());
    let mut reply = None;
    for (name, data) in events {
        if let Some(r) = reader
            .event(name, data)
            .unwrap_or_else(|_| panic!("a valid event"))
        {
            reply = Some(r);
        }
    }
    let mut reply = reply.expect("a complete reply");
    let call_id = reply.tool_calls[0].call_id.clone();
    conversation.push_reply_items(std::mem::take(&mut reply.items));
    conversation.push_tool_outputs(&[ToolOutput::text(
        call_id,
        format!("result: {}", "lorem ipsum ".repeat(20)),
        false,
    )]);
    body.len()
}

fn history(wire: WireApi, turns: usize, tools: &ToolList) -> Conversation {
    let mut conversation = Conversation::new(wire);
    conversation.push_user_texts(&["Go.".into()]);
    for i in 0..turns {
        turn(wire, &mut conversation, &reply_events(wire, i), tools);
    }
    conversation
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn at(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn growth(wire: WireApi) -> Vec<(usize, Duration, usize)> {
    // Encoded once, as a run does.
    let tools = format(wire).encode_tools(&vec![spec(); 10]).unwrap();
    let events = reply_events(wire, 999_999);
    SIZES
        .iter()
        .map(|&turns| {
            let base = history(wire, turns, &tools);
            let mut samples = Vec::with_capacity(SAMPLES);
            let mut body = 0;
            for _ in 0..SAMPLES {
                let mut next = base.clone();
                let started = thread_cpu();
                body = turn(wire, &mut next, &events, &tools);
                samples.push(thread_cpu() - started);
                drop(next);
            }
            (turns, median(samples), body)
        })
        .collect()
}

struct Echo(Vec<ToolDescriptor>, Mutex<Vec<Instant>>);

impl ToolBox for Echo {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.0
    }
    fn call(&self, _index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        self.1.lock().unwrap().push(Instant::now());
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

/// Notes when each reply began to arrive.
#[derive(Default)]
struct Began(Mutex<Vec<Instant>>);

impl RunObserver for Began {
    fn activity(&self, activity: Activity) {
        if activity.summary.starts_with("Receiving") {
            self.0.lock().unwrap().push(Instant::now());
        }
    }
    fn usage(&self, _: UsageDelta) {}
    fn tool_used(&self, _: &str, _: ToolUse) {}
    fn file_changed(&self, _: &mcp_agents::toolbox::FileChange) {}

    fn parked(&self, _: std::time::Duration) {}
    fn model_left(&self, _: &mcp_agents::run::ModelAttempt, _: &str) {}

    fn before_request(&self) -> Result<(), mcp_agents::error::AgentError> {
        Ok(())
    }
}

struct Once(Mutex<Option<String>>);
impl Inbox for Once {
    fn take_all(&self) -> Vec<String> {
        self.0.lock().unwrap().take().into_iter().collect()
    }
    fn is_empty(&self) -> bool {
        self.0.lock().unwrap().is_none()
    }
}

/// From the first event of each streamed reply to the start of the tool call it asks for.
fn reaction(rt: &tokio::runtime::Runtime, mock: &MockProvider, wire: WireApi) -> Vec<Duration> {
    let base = mock.base_url(wire);
    let provider = ProviderClient::new(
        &mcp_agents::testkit::mock_definition(wire, url::Url::parse(&base).unwrap()),
        ApiKey::for_tests(KEY),
    );
    let mut samples = Vec::new();
    for _ in 0..5 {
        let mut steps = vec![Step::tool_call("t__echo", json!({"text": "x"})).with_reasoning(); 99];
        steps.push(Step::text("done"));
        mock.push(steps);
        let tools = Echo(
            vec![ToolDescriptor {
                spec: spec(),
                original_schema: spec().input_schema,
                server: "t".into(),
                tool: "echo".into(),
                timeout: Duration::from_secs(60),
                parks: false,
            }],
            Mutex::new(Vec::new()),
        );
        let began = Began::default();
        let mut conversation = Conversation::new(wire);
        let (_tx, rx) = tokio::sync::watch::channel(0);
        let outcome = rt.block_on(run_model_loop(
            &mut conversation,
            RunContext {
                provider: &provider,
                system: "You are a benchmark.",
                tools: &tools,
                inbox: &Once(Mutex::new(Some("Go.".into()))),
                observer: &began,
                interrupts: rx,
                cancel: CancellationToken::new(),
                limits: RunLimits::turns(1000),
                spent: Spent::default(),
                output_schema: None,
            },
        ));
        assert_eq!(outcome, RunOutcome::Completed("done".into()));
        let starts = began.0.lock().unwrap().clone();
        let calls = tools.1.lock().unwrap().clone();
        samples.extend(starts.iter().zip(&calls).map(|(b, c)| c.duration_since(*b)));
    }
    samples
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn main() {
    println!("| wire | turns of history | request body | CPU per turn (median) |");
    println!("| --- | --- | --- | --- |");
    let mut ratios = Vec::new();
    for wire in WireApi::ALL {
        let rows = growth(wire);
        for (turns, cpu, body) in &rows {
            println!(
                "| {} | {turns} | {:.0} KiB | {} |",
                wire.as_str(),
                *body as f64 / 1024.0,
                us(*cpu)
            );
        }
        let ratio = rows[2].1.as_secs_f64() / rows[1].1.as_secs_f64();
        ratios.push((wire, ratio));
    }
    println!();
    for (wire, ratio) in ratios {
        println!(
            "{}: CPU per turn at 500 turns ÷ at 100 turns = {ratio:.2}",
            wire.as_str()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(MockProvider::start(KEY)).unwrap();
    mock.stop_recording();
    println!();
    println!("| wire | first event of a streamed reply to the tool call starting (500 turns) |");
    println!("| --- | --- |");
    for wire in WireApi::ALL {
        let samples = reaction(&rt, &mock, wire);
        println!(
            "| {} | p50 {}, p99 {} |",
            wire.as_str(),
            us(at(&samples, 0.5)),
            us(at(&samples, 0.99))
        );
    }
}
