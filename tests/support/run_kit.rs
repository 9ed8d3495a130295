//! Helpers for driving providers and the model loop against the mock endpoints.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use mcp_agents::definition::{AgentDefinition, WireApi};
use mcp_agents::providers::{ApiKey, ProviderClient, RetryPolicy};
use mcp_agents::run::Activity;
use mcp_agents::run::{Inbox, RunObserver, ToolUse, UsageDelta};
use mcp_agents::toolbox::{BoxFuture, ToolBox, ToolDescriptor, ToolResult, ToolSpec};
use serde_json::{Value, json};

/// The key the mocks accept.
pub const KEY: &str = "sk-test-SECRET-0123456789";

/// A custom-provider definition pointing at a mock.
pub fn definition(wire: WireApi, base_url: &str) -> AgentDefinition {
    mcp_agents::testkit::mock_definition(wire, url::Url::parse(base_url).unwrap())
}

/// A client for `wire` at the mock, with quick retries.
pub fn client(wire: WireApi, mock: &mcp_agents::testkit::MockProvider) -> ProviderClient {
    let base = mock.base_url(wire);
    ProviderClient::new(&definition(wire, &base), ApiKey::for_tests(KEY)).with_retry_policy(
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            max_requested_delay: mcp_agents::limits::PROVIDER_MAX_REQUESTED_DELAY,
        },
    )
}

/// Records every activity, sums usage and counts tool calls.
#[derive(Default)]
pub struct Recorder {
    pub activities: Mutex<Vec<Activity>>,
    pub usage: Mutex<Usage>,
    /// `(tool, event)` in the order reported.
    pub tools: Mutex<Vec<(String, ToolUse)>>,
}

/// What a [`Recorder`] summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub tool_calls: u32,
}

impl Recorder {
    pub fn summaries(&self) -> Vec<String> {
        self.activities
            .lock()
            .unwrap()
            .iter()
            .map(|a| a.summary.clone())
            .collect()
    }

    pub fn total(&self) -> Usage {
        *self.usage.lock().unwrap()
    }
}

impl RunObserver for Recorder {
    fn activity(&self, activity: Activity) {
        self.activities.lock().unwrap().push(activity);
    }

    fn usage(&self, d: UsageDelta) {
        let mut u = self.usage.lock().unwrap();
        u.turns += d.turns;
        u.input_tokens += d.input_tokens;
        u.output_tokens += d.output_tokens;
        u.cache_read_tokens += d.cache_read_tokens;
        u.cache_write_tokens += d.cache_write_tokens;
    }

    fn tool_used(&self, tool: &str, event: ToolUse) {
        if event == ToolUse::Called {
            self.usage.lock().unwrap().tool_calls += 1;
        }
        self.tools.lock().unwrap().push((tool.to_owned(), event));
    }

    // The loop tests' tools change no files.
    fn file_changed(&self, _: &mcp_agents::toolbox::FileChange) {}

    fn parked(&self, _: std::time::Duration) {}

    // The loop tests' definitions name no fallback models.
    fn model_left(&self, _: &mcp_agents::run::ModelAttempt, _: &str) {}

    fn before_request(&self) -> Result<(), mcp_agents::error::AgentError> {
        Ok(())
    }
}

/// A simple queue of user input.
#[derive(Default)]
pub struct Queue(pub Mutex<VecDeque<String>>);

impl Queue {
    pub fn with(items: &[&str]) -> Self {
        Queue(Mutex::new(items.iter().map(|s| s.to_string()).collect()))
    }

    pub fn push(&self, item: &str) {
        self.0.lock().unwrap().push_back(item.to_owned());
    }
}

impl Inbox for Queue {
    fn take_all(&self) -> Vec<String> {
        self.0.lock().unwrap().drain(..).collect()
    }

    fn is_empty(&self) -> bool {
        self.0.lock().unwrap().is_empty()
    }
}

/// In-process tools: `echo` returns its arguments, `fail` reports an error, `slow` sleeps
/// for `slow_for`, `sleep_forever` never returns. Every call is logged.
pub struct TestTools {
    descriptors: Vec<ToolDescriptor>,
    pub calls: Mutex<Vec<(String, Value)>>,
    pub slow_for: Duration,
}

impl TestTools {
    pub fn new() -> Self {
        let tool = |name: &str, timeout: u64| ToolDescriptor {
            spec: ToolSpec {
                name: format!("test__{name}"),
                description: format!("The {name} tool."),
                input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            },
            original_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            server: "test".into(),
            tool: name.into(),
            timeout: Duration::from_secs(timeout),
            parks: false,
        };
        TestTools {
            descriptors: vec![
                tool("echo", 60),
                tool("fail", 60),
                tool("slow", 60),
                tool("sleep_forever", 60),
            ],
            calls: Mutex::new(Vec::new()),
            slow_for: Duration::from_secs(5),
        }
    }

    pub fn called(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

impl ToolBox for TestTools {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.descriptors
    }

    fn call(&self, index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        let name = self.descriptors[index].spec.name.as_str();
        self.calls
            .lock()
            .unwrap()
            .push((name.to_owned(), arguments.clone()));
        Box::pin(async move {
            match name {
                "test__echo" => ToolResult::text(format!("echo: {arguments}"), false),
                "test__fail" => ToolResult::text("the tool failed on purpose", true),
                "test__slow" => {
                    tokio::time::sleep(self.slow_for).await;
                    ToolResult::text("slow done", false)
                }
                _ => {
                    std::future::pending::<()>().await;
                    unreachable!()
                }
            }
        })
    }
}

/// The tool results of a request body, in order: Responses `function_call_output` texts,
/// Chat Completions `tool` messages.
pub fn function_outputs(body: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut outputs = Vec::new();
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] == "function_call_output" {
            outputs.push(text(&item["output"]));
        }
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            outputs.push(text(&message["content"]));
        }
    }
    outputs
}

/// In-process tools with the schemas and answers a test gives: each tool answers every call
/// with its `ToolResult`. The descriptor's original schema is the one given.
pub struct ScriptedTools {
    descriptors: Vec<ToolDescriptor>,
    answers: Vec<ToolResult>,
    pub calls: Mutex<Vec<(String, Value)>>,
}

impl ScriptedTools {
    pub fn new(tools: Vec<(&str, Value, ToolResult)>) -> Self {
        let mut descriptors = Vec::new();
        let mut answers = Vec::new();
        for (name, schema, answer) in tools {
            descriptors.push(ToolDescriptor {
                spec: ToolSpec {
                    name: name.to_owned(),
                    description: format!("The {name} tool."),
                    input_schema: schema.clone(),
                },
                original_schema: schema,
                server: "test".into(),
                tool: name.to_owned(),
                timeout: Duration::from_secs(60),
                parks: false,
            });
            answers.push(answer);
        }
        ScriptedTools {
            descriptors,
            answers,
            calls: Mutex::new(Vec::new()),
        }
    }
}

impl ToolBox for ScriptedTools {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.descriptors
    }

    fn call(&self, index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        let name = self.descriptors[index].spec.name.clone();
        self.calls.lock().unwrap().push((name, arguments));
        let answer = self.answers[index].clone();
        Box::pin(async move { answer })
    }
}

/// A conversation of one definition against a mock, run by the real model loop.
pub struct Loop {
    pub mock: mcp_agents::testkit::MockProvider,
    pub definition: AgentDefinition,
    pub conversation: mcp_agents::providers::Conversation,
    pub recorder: Recorder,
}

impl Loop {
    /// A fresh mock and a definition pointing at it, changed by `adjust`.
    pub async fn new(wire: WireApi, adjust: impl FnOnce(&mut AgentDefinition)) -> Loop {
        let mock = mcp_agents::testkit::MockProvider::start(KEY).await.unwrap();
        let base = mock.base_url(wire);
        let mut definition = definition(wire, &base);
        adjust(&mut definition);
        Loop {
            mock,
            definition,
            conversation: mcp_agents::providers::Conversation::new(wire),
            recorder: Recorder::default(),
        }
    }

    /// A client for this run (each run reads its key and makes its client afresh).
    pub fn client(&self) -> ProviderClient {
        ProviderClient::new(&self.definition, ApiKey::for_tests(KEY))
            .with_retry_policy(RetryPolicy::none())
    }

    /// One run that starts with `task`, with `system` as the system context.
    pub async fn run(
        &mut self,
        system: &str,
        task: &str,
        tools: &dyn ToolBox,
    ) -> mcp_agents::run::RunOutcome {
        let provider = self.client();
        let (_tx, rx) = tokio::sync::watch::channel(0u64);
        mcp_agents::run::run_model_loop(
            &mut self.conversation,
            mcp_agents::run::RunContext {
                provider: &provider,
                system,
                tools,
                inbox: &Queue::with(&[task]),
                observer: &self.recorder,
                interrupts: rx,
                cancel: tokio_util::sync::CancellationToken::new(),
                limits: mcp_agents::run::RunLimits::turns(64),
                spent: mcp_agents::run::Spent::default(),
                output_schema: None,
            },
        )
        .await
    }

    /// The request bodies the mock received, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.mock.requests().into_iter().map(|r| r.body).collect()
    }
}

/// Waits (4 s at most) until `mock` has received `n` requests.
pub async fn requests_reach(mock: &mcp_agents::testkit::MockProvider, n: usize) {
    for _ in 0..400 {
        if mock.requests().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the mock saw {} requests, not {n}", mock.requests().len());
}

/// Fails on any request `mock` refused, showing its body.
pub fn assert_all_scripted(mock: &mcp_agents::testkit::MockProvider) {
    for r in mock.requests() {
        assert_eq!(
            r.outcome,
            mcp_agents::testkit::RecordedOutcome::Scripted,
            "the mock refused {:#}",
            r.body
        );
    }
}

/// The error code of a provider's answer, if it failed.
pub fn error_code<T>(
    result: &Result<T, mcp_agents::providers::ProviderError>,
) -> Option<mcp_agents::error::ErrorCode> {
    let error = result.as_ref().err()?;
    Some(mcp_agents::error::AgentError::from(error.clone()).code)
}

/// The first tool result in the request `body` of `wire` (a `wire_api` value): the first
/// `function_call_output`'s output (Responses), the first `tool` message's content (Chat
/// Completions), or the content of the first block of the third message (Messages, whose
/// conversation is then the task, the call and its result).
pub fn first_tool_result(wire: &str, body: &Value) -> Value {
    let first = |list: &str, kind: &str, is: &str, text: &str| {
        body[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|item| item[kind] == is)
            .unwrap()[text]
            .clone()
    };
    match wire {
        "responses" => first("input", "type", "function_call_output", "output"),
        "chat-completions" => first("messages", "role", "tool", "content"),
        _ => body["messages"][2]["content"][0]["content"].clone(),
    }
}
