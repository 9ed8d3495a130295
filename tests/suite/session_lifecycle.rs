//! The session lifecycle edges of SPEC §4.2 and §5 that need a changing environment or
//! small limits, so they drive the session manager in process: a failed session keeps its
//! queued input and a resume delivers it first; a resume reads the key again and needs a
//! permit; `interrupt` on a finished agent resumes it; running sessions are never evicted;
//! retained histories are bounded in bytes; a run that panics still ends its session and
//! gives its permit back; the spawn's task is not queued input.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_agents::child_mcp::ChildServers;
use mcp_agents::definition::AgentDefinition;
use mcp_agents::discovery::{LoadOptions, Workspace, load_catalog};
use mcp_agents::error::AgentError;
use mcp_agents::error::ErrorCode;
use mcp_agents::limits::ServerLimits;
use mcp_agents::providers::RetryPolicy;
use mcp_agents::run::Failure;
use mcp_agents::sessions::{ManagerConfig, SessionManager};
use mcp_agents::sessions::{ReturnWhen, WaitEvent};
use mcp_agents::sessions::{Snapshot, Status};
use mcp_agents::testkit::{MockProvider, Step};
use mcp_agents::toolbox::{BoxFuture, EnvLookup, RunTools, ToolsFactory};
use support::binary::{self, KEY_VAR};
use support::children;
use support::run_kit::{KEY, requests_reach};

/// A manager over the test workspace whose provider key can be taken away and given back.
struct Setup {
    mock: MockProvider,
    _workspace: tempfile::TempDir,
    key: Arc<Mutex<Option<String>>>,
    manager: Arc<SessionManager>,
}

async fn setup(limits: ServerLimits) -> Setup {
    setup_with(limits, |env| Arc::new(children::child_servers(env))).await
}

async fn setup_with(
    limits: ServerLimits,
    tools: impl FnOnce(EnvLookup) -> Arc<dyn ToolsFactory>,
) -> Setup {
    let mock = MockProvider::start(KEY).await.unwrap();
    let workspace = binary::workspace(&mock);
    let catalog = load_catalog(
        &Workspace::open(workspace.path()).unwrap(),
        &LoadOptions::default(),
    );
    let key = Arc::new(Mutex::new(Some(KEY.to_owned())));
    let lookup = key.clone();
    let env: EnvLookup = Arc::new(move |var| {
        (var == KEY_VAR)
            .then(|| lookup.lock().unwrap().clone())
            .flatten()
    });
    let manager = SessionManager::new(
        Arc::new(catalog),
        ManagerConfig {
            env: env.clone(),
            tools: tools(env),
            retry: RetryPolicy::default(),
            limits,
            spend: Arc::default(),
        },
    );
    Setup {
        mock,
        _workspace: workspace,
        key,
        manager,
    }
}

async fn finished(manager: &SessionManager, id: &str) -> Snapshot {
    let mut waiter = manager
        .wait(&[id.to_owned()], Duration::from_secs(20), ReturnWhen::All)
        .unwrap();
    loop {
        if let WaitEvent::Finished { timed_out, agents } = waiter.next().await {
            assert!(!timed_out, "{id} did not finish");
            return agents.into_iter().next().unwrap();
        }
    }
}

fn last_body(mock: &MockProvider) -> String {
    mock.requests().last().unwrap().body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_session_keeps_its_queue_and_a_resume_delivers_it_first() {
    let s = setup(ServerLimits::default()).await;
    s.mock.push([
        Step::openai_error(400, "invalid_request_error", None, "refused")
            .delayed(Duration::from_millis(300)),
    ]);
    let id = s.manager.spawn("worker", "First task.").unwrap().agent_id;
    requests_reach(&s.mock, 1).await;
    let queued = s
        .manager
        .send_input(&id, "Queued earlier.", false)
        .await
        .unwrap();
    assert_eq!(queued.queued, 1);

    let failed = finished(&s.manager, &id).await;
    assert!(
        matches!(&failed.status, Status::Failed(Failure { error: e, .. }) if e.code == ErrorCode::ProviderError)
    );
    assert_eq!(
        failed.queued, 1,
        "the failed run did not take the queued input"
    );

    s.mock.push([Step::text("Resumed.")]);
    let resumed = s.manager.send_input(&id, "Sent now.", false).await.unwrap();
    assert_eq!(resumed.queued, 2, "both inputs wait for the resumed run");
    let done = finished(&s.manager, &id).await;
    assert_eq!(done.status, Status::Completed("Resumed.".into()));
    assert_eq!(done.queued, 0);
    let body = last_body(&s.mock);
    let earlier = body
        .find("Queued earlier.")
        .expect("the queued input is sent");
    let now = body.find("Sent now.").expect("the new input is sent");
    assert!(earlier < now, "queued input comes first: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_reads_the_key_again_and_needs_a_permit() {
    let s = setup(ServerLimits {
        concurrent_runs: 1,
        ..ServerLimits::default()
    })
    .await;
    s.mock.push([Step::text("One.")]);
    let id = s.manager.spawn("worker", "First.").unwrap().agent_id;
    assert_eq!(
        finished(&s.manager, &id).await.status,
        Status::Completed("One.".into())
    );

    *s.key.lock().unwrap() = None;
    let refused = s
        .manager
        .send_input(&id, "Again.", false)
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::MissingCredential);
    assert!(refused.message.contains(KEY_VAR), "{}", refused.message);
    let unchanged = s.manager.snapshot(&id).unwrap();
    assert_eq!(unchanged.status, Status::Completed("One.".into()));
    assert_eq!(unchanged.queued, 0, "a refused resume queues nothing");

    *s.key.lock().unwrap() = Some(KEY.to_owned());
    s.mock.push([Step::Hang]);
    let other = s.manager.spawn("worker", "Hold the permit.").unwrap();
    let refused = s
        .manager
        .send_input(&id, "Again.", false)
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::CapacityExceeded);
    assert_eq!(s.manager.snapshot(&id).unwrap().queued, 0);
    assert_eq!(
        s.manager.snapshot(&other.agent_id).unwrap().status,
        Status::Running
    );
    s.manager.shutdown(Duration::from_secs(6)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_sent_to_a_finished_agent_resumes_it() {
    let s = setup(ServerLimits::default()).await;
    s.mock.push([Step::text("One."), Step::text("Two.")]);
    let id = s.manager.spawn("worker", "First.").unwrap().agent_id;
    finished(&s.manager, &id).await;
    let resumed = s
        .manager
        .send_input(&id, "Change of plan.", true)
        .await
        .unwrap();
    assert_eq!(resumed.queued, 1);
    let done = finished(&s.manager, &id).await;
    assert_eq!(done.status, Status::Completed("Two.".into()));
    assert!(last_body(&s.mock).contains("Change of plan."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_sessions_are_never_evicted() {
    let s = setup(ServerLimits {
        retained_terminal: 2,
        ..ServerLimits::default()
    })
    .await;
    s.mock.push([Step::Hang]);
    let running = s.manager.spawn("worker", "Keep going.").unwrap().agent_id;
    requests_reach(&s.mock, 1).await;
    s.mock.push(vec![Step::text("done"); 3]);
    let mut finished_ids = Vec::new();
    for i in 0..3 {
        let id = s
            .manager
            .spawn("worker", &format!("task {i}"))
            .unwrap()
            .agent_id;
        finished(&s.manager, &id).await;
        finished_ids.push(id);
    }
    // Two terminal sessions are kept; the oldest terminal one went, the running one stayed
    // although it is the oldest of all.
    assert_eq!(s.manager.retained(), 3);
    assert_eq!(
        s.manager.snapshot(&running).unwrap().status,
        Status::Running
    );
    let evicted = s.manager.snapshot(&finished_ids[0]).unwrap_err();
    assert_eq!(evicted.code, ErrorCode::UnknownAgent);
    assert!(s.manager.snapshot(&finished_ids[1]).is_ok());
    assert!(s.manager.snapshot(&finished_ids[2]).is_ok());
    s.manager.shutdown(Duration::from_secs(6)).await;
}

/// Tools whose first opening panics, as a bug would; later openings are the real children.
struct PanicsOnce {
    panicked: AtomicBool,
    real: ChildServers,
}

impl ToolsFactory for PanicsOnce {
    fn open<'a>(
        &'a self,
        definition: &'a AgentDefinition,
        workspace: &'a std::path::Path,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>> {
        if !self.panicked.swap(true, Ordering::SeqCst) {
            return Box::pin(async { panic!("a bug while opening tools") });
        }
        self.real.open(definition, workspace)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_panics_fails_its_session_and_gives_the_permit_back() {
    let s = setup_with(
        ServerLimits {
            concurrent_runs: 1,
            ..ServerLimits::default()
        },
        |env| {
            Arc::new(PanicsOnce {
                panicked: AtomicBool::new(false),
                real: children::child_servers(env),
            })
        },
    )
    .await;
    let broken = s.manager.spawn("worker", "First.").unwrap().agent_id;
    let done = finished(&s.manager, &broken).await;
    match done.status {
        Status::Failed(Failure { error: e, .. }) => {
            assert_eq!(e.code, ErrorCode::Internal);
            assert!(e.message.contains("a bug"), "{}", e.message);
            assert!(
                !e.message.contains("while opening tools"),
                "the panic's own text stays on stderr: {}",
                e.message
            );
        }
        other => panic!("{other:?}"),
    }
    // The only permit came back: the next agent runs to the end.
    s.mock.push([Step::text("Fine.")]);
    let next = s.manager.spawn("worker", "Second.").unwrap().agent_id;
    assert_eq!(
        finished(&s.manager, &next).await.status,
        Status::Completed("Fine.".into())
    );
    s.manager.shutdown(Duration::from_secs(6)).await;
}

/// Tools that open only when told to, and then fail as a child server would.
struct Gate(tokio::sync::Notify);

impl ToolsFactory for Gate {
    fn open<'a>(
        &'a self,
        _: &'a AgentDefinition,
        _: &'a std::path::Path,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>> {
        Box::pin(async {
            self.0.notified().await;
            Err(AgentError::new(
                ErrorCode::ChildMcpStartupError,
                "child MCP server `slow` did not start",
            ))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spawn_task_is_not_counted_as_queued_input() {
    let gate = Arc::new(Gate(tokio::sync::Notify::new()));
    let opened = gate.clone();
    let s = setup_with(ServerLimits::default(), move |_| opened).await;
    let id = s.manager.spawn("worker", "The task.").unwrap().agent_id;
    assert_eq!(s.manager.snapshot(&id).unwrap().queued, 0);
    // While the children start, all 16 places are free for send_input.
    for n in 1..=16 {
        let accepted = s
            .manager
            .send_input(&id, &format!("m{n}"), false)
            .await
            .unwrap();
        assert_eq!(accepted.queued, n);
    }
    let refused = s.manager.send_input(&id, "m17", false).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::QueueFull);
    assert!(
        refused.message.contains("16 queued inputs"),
        "{}",
        refused.message
    );
    gate.0.notify_one();
    let done = finished(&s.manager, &id).await;
    assert!(
        matches!(&done.status, Status::Failed(Failure { error: e, .. }) if e.code == ErrorCode::ChildMcpStartupError),
        "{:?}",
        done.status
    );
    assert_eq!(
        done.queued, 16,
        "the failed record counts the input, not the task"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retained_histories_are_bounded_in_bytes_least_recently_used_first() {
    // Each finished session holds a little over 3,000 bytes of history; 10,000 fit three.
    let s = setup(ServerLimits {
        retained_history_bytes: 10_000,
        ..ServerLimits::default()
    })
    .await;
    s.mock.push([Step::Hang]);
    let running = s.manager.spawn("worker", "Keep going.").unwrap().agent_id;
    // The hanging step must be the running session's before the others are scripted.
    requests_reach(&s.mock, 1).await;
    let long = "x".repeat(3_000);
    s.mock.push(vec![Step::text(&long); 5]);
    let mut ids = Vec::new();
    for i in 0..5 {
        let id = s
            .manager
            .spawn("worker", &format!("task {i}"))
            .unwrap()
            .agent_id;
        finished(&s.manager, &id).await;
        ids.push(id);
        if i == 2 {
            // Naming the oldest refreshes it: the next one to go is the second.
            s.manager
                .wait(&[ids[0].clone()], Duration::ZERO, ReturnWhen::All)
                .unwrap();
        }
    }
    let kept: Vec<bool> = ids
        .iter()
        .map(|id| s.manager.snapshot(id).is_ok())
        .collect();
    assert_eq!(
        kept,
        [true, false, false, true, true],
        "the least recently used went first, until the rest fit"
    );
    let evicted = s.manager.snapshot(&ids[1]).unwrap_err();
    assert_eq!(evicted.code, ErrorCode::UnknownAgent);
    assert!(evicted.message.contains("MiB"), "{}", evicted.message);
    assert_eq!(
        s.manager.snapshot(&running).unwrap().status,
        Status::Running,
        "a running session is never evicted"
    );
    s.manager.shutdown(Duration::from_secs(6)).await;
}

/// SPEC §4.2 `stop`: input sent while the stopped run is still handing its conversation
/// back waits for the handoff, then resumes on the whole history; nothing is lost or sent
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_sent_while_a_stop_is_under_way_resumes_after_it_on_the_whole_history() {
    let s = setup(ServerLimits::default()).await;
    s.mock.push([Step::Hang, Step::text("Resumed.")]);
    let id = s.manager.spawn("worker", "First task.").unwrap().agent_id;
    requests_reach(&s.mock, 1).await;
    // Polled in this order: the stop begins, then the input finds it under way.
    let (stopped, resumed) = tokio::join!(
        s.manager.stop(&id, Some("rethink")),
        s.manager.send_input(&id, "Now this instead.", false)
    );
    let stopped = stopped.unwrap();
    match &stopped.status {
        Status::Failed(failure) => {
            assert_eq!(failure.error.code, ErrorCode::Cancelled);
            assert_eq!(failure.error.message, "stopped by the parent: rethink");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(resumed.unwrap().queued, 1, "it resumed the stopped session");
    let done = finished(&s.manager, &id).await;
    assert_eq!(done.status, Status::Completed("Resumed.".into()));
    let texts: Vec<String> = s.mock.requests()[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["content"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts, ["First task.", "Now this instead."]);
    assert_eq!(s.manager.running(), 0);
}
