//! A stand-in for the registry's side of a run, for the unit tests of the run lifecycle
//! (`lifecycle`) and of questions to the parent (`ask`): in-process tools whose calls it
//! logs, a host that counts what the registry would do, and a session of an agent with one
//! child server, running in the one permit there is, against the Responses mock.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::lifecycle::{RunHost, start_run};
use super::session::{RunSignals, Session, Snapshot, Status};
use crate::definition::{AskParent, ChildServerConfig, ChildTransport, RunBudget, WireApi};
use crate::error::AgentError;
use crate::providers::{ApiKey, ProviderClient, RetryPolicy};
use crate::run::{Failure, Phase};
use crate::testkit::{MockProvider, Step, mock_definition};
use crate::toolbox::{
    BoxFuture, RunTools, ToolBox, ToolDescriptor, ToolResult, ToolSpec, ToolsFactory,
};

pub(super) const KEY: &str = "sk-test-lifecycle-0123456789";

/// What the in-process tools saw, shared by the factory, each opened set and the test.
#[derive(Default)]
pub(super) struct Log {
    pub(super) opened: AtomicUsize,
    /// A tool call began.
    pub(super) called: Notify,
    /// A shutdown began.
    pub(super) closing: Notify,
    /// While the test holds it, a shutdown waits (a child slow to exit).
    pub(super) hold: tokio::sync::Mutex<()>,
    /// Each shutdown's bound, and whether it has ended.
    pub(super) shutdowns: Mutex<Vec<(Duration, bool)>>,
    /// `test__echo` calls that answered.
    pub(super) echoed: AtomicUsize,
}

impl Log {
    pub(super) fn shutdowns(&self) -> Vec<(Duration, bool)> {
        self.shutdowns.lock().unwrap().clone()
    }
}

/// Two tools: `test__wait`, whose call never answers (a stop, a shutdown or the deadline
/// ends it), and `test__echo`, which answers at once.
pub(super) struct Tools {
    pub(super) descriptors: Vec<ToolDescriptor>,
    pub(super) log: Arc<Log>,
}

impl ToolBox for Tools {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.descriptors
    }

    fn call(&self, index: usize, _: serde_json::Value) -> BoxFuture<'_, ToolResult> {
        if self.descriptors[index].tool == "echo" {
            self.log.echoed.fetch_add(1, Ordering::SeqCst);
            return Box::pin(std::future::ready(ToolResult::text("echoed", false)));
        }
        self.log.called.notify_one();
        Box::pin(std::future::pending())
    }
}

impl RunTools for Tools {
    fn shutdown(self: Box<Self>, bound: Duration) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let log = self.log;
            let index = {
                let mut shutdowns = log.shutdowns.lock().unwrap();
                shutdowns.push((bound, false));
                shutdowns.len() - 1
            };
            log.closing.notify_one();
            drop(log.hold.lock().await);
            log.shutdowns.lock().unwrap()[index].1 = true;
        })
    }
}

#[derive(Clone, Copy)]
pub(super) enum Open {
    Now,
    Never,
    Panics,
}

/// The child tool `test__{tool}`.
fn descriptor(tool: &str) -> ToolDescriptor {
    let spec = ToolSpec {
        name: format!("test__{tool}"),
        description: "A test tool.".into(),
        input_schema: json!({"type": "object", "properties": {}}),
    };
    ToolDescriptor {
        original_schema: spec.input_schema.clone(),
        spec,
        server: "test".into(),
        tool: tool.into(),
        timeout: Duration::from_secs(60),
        parks: false,
    }
}

/// The registry's side of a run, counted.
pub(super) struct Host {
    pub(super) open: Open,
    pub(super) log: Arc<Log>,
    pub(super) tasks: TaskTracker,
    pub(super) recency: AtomicU64,
    pub(super) ended: AtomicUsize,
}

impl ToolsFactory for Host {
    fn open<'a>(
        &'a self,
        _: &'a crate::definition::AgentDefinition,
        _: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>> {
        match self.open {
            Open::Panics => Box::pin(async { panic!("a bug while opening tools") }),
            Open::Never => Box::pin(std::future::pending()),
            Open::Now => Box::pin(async {
                self.log.opened.fetch_add(1, Ordering::SeqCst);
                let tools: Box<dyn RunTools> = Box::new(Tools {
                    descriptors: vec![descriptor("wait"), descriptor("echo")],
                    log: self.log.clone(),
                });
                Ok(tools)
            }),
        }
    }
}

impl RunHost for Host {
    fn tools(&self) -> &dyn ToolsFactory {
        self
    }

    fn workspace(&self) -> &Path {
        Path::new(".")
    }

    fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    fn next_recency(&self) -> u64 {
        self.recency.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn ended(&self) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }
}

/// A session of an agent with one child server, running in the one permit there is.
pub(super) struct Harness {
    pub(super) mock: MockProvider,
    pub(super) host: Arc<Host>,
    pub(super) permits: Arc<Semaphore>,
    pub(super) shutdown: CancellationToken,
    pub(super) session: Arc<Session>,
}

impl Harness {
    pub(super) async fn new(open: Open, max_run_seconds: Option<u32>, steps: Vec<Step>) -> Harness {
        Self::build(open, max_run_seconds, None, steps).await
    }

    /// A session of an agent that may ask its parent, a question waiting `ask_timeout`.
    pub(super) async fn asking(
        ask_timeout: Duration,
        max_run_seconds: Option<u32>,
        steps: Vec<Step>,
    ) -> Harness {
        let ask = AskParent {
            timeout: ask_timeout,
        };
        Self::build(Open::Now, max_run_seconds, Some(ask), steps).await
    }

    async fn build(
        open: Open,
        max_run_seconds: Option<u32>,
        ask_parent: Option<AskParent>,
        steps: Vec<Step>,
    ) -> Harness {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push(steps);
        let url = url::Url::parse(&mock.base_url(WireApi::Responses)).unwrap();
        let mut definition = mock_definition(WireApi::Responses, url);
        definition.ask_parent = ask_parent;
        definition.budget = RunBudget {
            max_run_seconds,
            ..RunBudget::default()
        };
        let child = ChildTransport::Http {
            url: url::Url::parse("http://127.0.0.1:9/mcp").unwrap(),
            headers: Default::default(),
        };
        let child = ChildServerConfig::new(child);
        definition.mcp_servers.insert("test".into(), child);
        let session = Arc::new(Session::new(
            "a".repeat(32),
            Arc::new(definition),
            "You test things.".into(),
            "The task.".into(),
            1,
        ));
        let log = Arc::new(Log::default());
        let host = Arc::new(Host {
            open,
            log,
            tasks: TaskTracker::new(),
            recency: AtomicU64::new(1),
            ended: AtomicUsize::new(0),
        });
        let h = Harness {
            mock,
            host,
            permits: Arc::new(Semaphore::new(1)),
            shutdown: CancellationToken::new(),
            session,
        };
        let permit = h.permits.clone().try_acquire_owned().unwrap();
        let mut state = h.session.lock();
        state.permit = Some(permit);
        state.run = RunSignals::new(&h.shutdown);
        drop(state);
        h
    }

    pub(super) fn log(&self) -> &Log {
        &self.host.log
    }

    pub(super) fn start(&self) {
        let provider = ProviderClient::new(&self.session.definition, ApiKey::for_tests(KEY))
            .with_retry_policy(RetryPolicy::none());
        start_run(self.host.clone(), self.session.clone(), provider);
    }

    /// The record once the session waits for an answer to a question.
    pub(super) async fn asked(&self) -> Snapshot {
        let mut changes = self.session.subscribe();
        loop {
            let snapshot = self.session.snapshot();
            if snapshot.question.is_some() {
                return snapshot;
            }
            changes.changed().await.unwrap();
        }
    }

    /// The record once the session is terminal.
    pub(super) async fn terminal(&self) -> Snapshot {
        let mut changes = self.session.subscribe();
        let terminal = async {
            loop {
                let snapshot = self.session.snapshot();
                if snapshot.status.is_terminal() {
                    return snapshot;
                }
                changes.changed().await.unwrap();
            }
        };
        let limit = Duration::from_secs(3600);
        tokio::time::timeout(limit, terminal).await.unwrap()
    }

    /// Waits until every run task has ended (its children closed).
    pub(super) async fn tasks_ended(&self) {
        self.host.tasks.close();
        self.host.tasks.wait().await;
        self.host.tasks.reopen();
    }

    /// The phases the session went through, each once in a row.
    pub(super) fn phases(&self) -> Vec<Phase> {
        let (transitions, _) = self.session.transitions_after(0);
        let mut phases: Vec<Phase> = transitions.iter().map(|t| t.activity.phase).collect();
        phases.dedup();
        phases
    }

    pub(super) fn ended(&self) -> usize {
        self.host.ended.load(Ordering::SeqCst)
    }

    pub(super) fn last_request(&self) -> String {
        self.mock.requests().last().unwrap().body.to_string()
    }
}

pub(super) fn failure(status: &Status) -> &Failure {
    match status {
        Status::Failed(failure) => failure,
        other => panic!("not failed: {other:?}"),
    }
}
