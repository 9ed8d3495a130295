//! Helpers for driving providers and the model loop against the mock endpoints.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use mcp_agents::definition::{AgentDefinition, WireApi};
use mcp_agents::providers::{ApiKey, ProviderClient, RetryPolicy};
use mcp_agents::sessions::activity::Activity;
use mcp_agents::sessions::run::{Inbox, RunObserver, UsageDelta};
use mcp_agents::toolbox::{BoxFuture, ToolBox, ToolDescriptor, ToolResult, ToolSpec};
use serde_json::{Value, json};

/// The key the mocks accept.
pub const KEY: &str = "sk-test-SECRET-0123456789";

/// A custom-provider definition pointing at a mock.
pub fn definition(wire: WireApi, base_url: &str) -> AgentDefinition {
    mcp_agents::testkit::mock::definition(wire, url::Url::parse(base_url).unwrap())
}

/// A client for `wire` at the mock, with quick retries.
pub fn client(wire: WireApi, mock: &mcp_agents::testkit::mock::MockProvider) -> ProviderClient {
    let base = match wire {
        WireApi::Responses => mock.responses_base_url(),
        WireApi::AnthropicMessages => mock.messages_base_url(),
    };
    ProviderClient::new(&definition(wire, &base), ApiKey::for_tests(KEY)).with_retry_policy(
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            max_requested_delay: Duration::from_secs(60),
        },
    )
}

/// Records every activity and sums usage.
#[derive(Default)]
pub struct Recorder {
    pub activities: Mutex<Vec<Activity>>,
    pub usage: Mutex<UsageDelta>,
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

    pub fn total(&self) -> UsageDelta {
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
        u.tool_calls += d.tool_calls;
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
