//! The session manager (SPEC §5): every session of the process, the eight run permits, the
//! queue and retention limits, and the public calls on them. A run's own lifecycle (one
//! tokio task each, from its start to its session's terminal state) is `lifecycle`'s; the
//! manager is its [`RunHost`].
//!
//! Locking: the registry lock guards the map of sessions; each session has its own lock.
//! The registry lock is never held while taking a session lock for long, and no lock is held
//! across an `.await`. A run's permit lives in its session's state, so a session becomes
//! terminal and gives its permit back in one step: nobody can see a terminal session whose
//! permit is still taken.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ask::answer_pending;
use super::feed::Feed;
use super::lifecycle::{RunHost, resume, start_run};
use super::question::{ParentAnswer, Question};
use super::refusals::{
    at_capacity, no_agent_named, no_question, queue_full, require_text, unknown_ids,
};
use super::session::{
    FirstRun, RunSignals, Session, SessionState, Snapshot, Status, new_agent_id, short_id,
};
use super::setup::RunSetup;
use super::stop::{request_stop, stopped_message, until_stopped};
use super::wait::{ReturnWhen, Waiter};
use crate::definition::AgentDefinition;
use crate::definition::Catalog;
use crate::error::AgentError;
use crate::limits::ServerLimits;
use crate::providers::{Conversation, RetryPolicy};
use crate::spend::{Price, ServerSpend};
use crate::toolbox::{EnvLookup, ToolsFactory};

/// How the manager reaches the outside world.
pub struct ManagerConfig {
    pub env: EnvLookup,
    pub tools: Arc<dyn ToolsFactory>,
    pub retry: RetryPolicy,
    pub limits: ServerLimits,
    /// The server's spend, its caps and the prices of its models (SPEC §5.1).
    pub spend: Arc<ServerSpend>,
}

/// What `spawn_agent` and `send_input` return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub agent_id: String,
    pub name: String,
    /// The model id sent to the provider, and the provider's name (SPEC §4.1).
    pub model: String,
    pub provider: &'static str,
    /// Messages queued after this call (for `send_input`).
    pub queued: usize,
    /// The input resumed a finished session (for `send_input`).
    pub resumed: bool,
    /// The question this `send_input` answered (SPEC §4.5): its message went to the agent
    /// as the answer, not into the queue.
    pub answered: Option<String>,
}

impl Accepted {
    fn new(agent_id: String, definition: &AgentDefinition, queued: usize) -> Self {
        Accepted {
            agent_id,
            name: definition.name.clone(),
            model: definition.model.id.clone(),
            provider: definition.provider.kind.as_str(),
            queued,
            resumed: false,
            answered: None,
        }
    }
}

pub struct SessionManager {
    catalog: Arc<Catalog>,
    setup: RunSetup,
    tools: Arc<dyn ToolsFactory>,
    limits: ServerLimits,
    spend: Arc<ServerSpend>,
    permits: Arc<Semaphore>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    recency: AtomicU64,
    /// Cancels every run (server shutdown).
    shutdown: CancellationToken,
    runs: TaskTracker,
    /// Rung by every session's changes, for watchers of the whole server (`feed`).
    pub(super) feed: Feed,
}

impl SessionManager {
    pub fn new(catalog: Arc<Catalog>, config: ManagerConfig) -> Arc<Self> {
        let ManagerConfig {
            env,
            tools,
            retry,
            limits,
            spend,
        } = config;
        Arc::new(SessionManager {
            permits: Arc::new(Semaphore::new(limits.concurrent_runs)),
            setup: RunSetup::new(catalog.clone(), env, retry),
            catalog,
            tools,
            limits,
            spend,
            sessions: Mutex::new(HashMap::new()),
            recency: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
            runs: TaskTracker::new(),
            feed: Feed::default(),
        })
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn workspace(&self) -> &Path {
        self.catalog.workspace()
    }

    /// The server's spend and caps (SPEC §5.1).
    pub fn spend(&self) -> &Arc<ServerSpend> {
        &self.spend
    }

    /// Starts a session and its first run; returns before any tool or provider work.
    pub fn spawn(self: &Arc<Self>, name: &str, task: &str) -> Result<Accepted, AgentError> {
        require_text("task", task)?;
        let definition = self
            .catalog
            .get(name)
            .cloned()
            .ok_or_else(|| no_agent_named(&self.catalog, name))?;
        let system = self.setup.system_context(&definition)?;
        let provider = self.setup.provider_for(&definition)?;
        let price = self.admit(&definition)?;
        let permit = self.try_permit()?;

        let id = new_agent_id();
        let session = Arc::new(
            Session::new(
                id.clone(),
                definition.clone(),
                system,
                task.to_owned(),
                self.next_recency(),
            )
            .in_feed(&self.feed)
            .metered(&self.spend, price),
        );
        {
            let mut state = session.lock();
            state.permit = Some(permit);
            state.run = RunSignals::new(&self.shutdown);
        }
        self.registry().insert(id.clone(), session.clone());
        start_run(self.clone(), session, provider);
        Ok(Accepted::new(id, &definition, 0))
    }

    /// Queues input for a running session (interrupting it if asked), or resumes a
    /// terminal one with this input. Input for a session whose run the parent is stopping
    /// waits for the stop to finish (at most [`crate::limits::STOP_HANDOFF_BOUND`]), then
    /// resumes it.
    pub async fn send_input(
        self: &Arc<Self>,
        target: &str,
        message: &str,
        interrupt: bool,
    ) -> Result<Accepted, AgentError> {
        require_text("message", message)?;
        loop {
            match self.try_send_input(target, message, interrupt)? {
                Sent::Accepted(accepted) => return Ok(accepted),
                Sent::Stopping(session, run) => drop(until_stopped(&session, run).await?),
            }
        }
    }

    /// [`Self::send_input`] now, or the session whose stop is under way.
    fn try_send_input(
        self: &Arc<Self>,
        target: &str,
        message: &str,
        interrupt: bool,
    ) -> Result<Sent, AgentError> {
        let session = self.get_one(target)?;
        // Read the key before taking the locks; it is only used when resuming.
        let provider = self.setup.provider_for(&session.definition);
        // The registry is held while the state changes (registry, then session: the order
        // eviction takes them in), so a session cannot be evicted while it is resumed and
        // run on, unreachable, in the background.
        let registry = self.registry();
        if !registry
            .get(target)
            .is_some_and(|current| Arc::ptr_eq(current, &session))
        {
            return Err(self.unknown_agent(&registry, &[target]));
        }
        let mut state = session.lock();
        // Naming a session refreshes its recency, whether or not the input is accepted.
        state.recency = self.next_recency();
        if state.status == Status::Running && state.stopping.is_some() {
            let run = state.runs;
            drop(state);
            drop(registry);
            return Ok(Sent::Stopping(session, run));
        }
        let mut resumed = None;
        let mut answered = None;
        match state.status {
            Status::Running => {
                answered = deliver(&mut state, message, interrupt, &self.limits, &session.id)?;
            }
            Status::Completed(_) | Status::Failed(_) => {
                check_queue(&state, &self.limits, &session.id)?;
                let provider = provider?;
                self.admit(&session.definition)?;
                let permit = self.try_permit()?;
                state.queue.push_back(message.to_owned());
                resume(&mut state, permit, &self.shutdown, session.spawned_at);
                resumed = Some(provider);
            }
        }
        // Counted before a resumed run can take the input, so the answer does not race it.
        let accepted = Accepted {
            resumed: resumed.is_some(),
            answered,
            ..Accepted::new(
                session.id.clone(),
                &session.definition,
                state.queued_inputs(),
            )
        };
        drop(state);
        drop(registry);
        if let Some(provider) = resumed {
            start_run(self.clone(), session.clone(), provider);
            session.notify();
        }
        Ok(Sent::Accepted(accepted))
    }

    /// Stops a running session's run (SPEC §4.2 `stop`): the run is cancelled where it is,
    /// hands back its conversation and becomes `failed` with `cancelled` (its partial
    /// result and usage kept, its queued input still queued, its permit free), then shuts
    /// its children down with a short grace in the background. Returns the record once the
    /// session is terminal. A terminal session is left as it is, and not resumed.
    pub async fn stop(&self, target: &str, reason: Option<&str>) -> Result<Snapshot, AgentError> {
        self.stop_run(target, stopped_message(reason), None).await
    }

    /// [`Self::stop`], the record's error reading `message` (a watcher's stop).
    pub(super) async fn stop_with(
        &self,
        target: &str,
        message: String,
    ) -> Result<Snapshot, AgentError> {
        self.stop_run(target, message, None).await
    }

    /// Stops `target`'s first run as [`Self::stop`] does, if that run still runs (an MCP
    /// task's `tasks/cancel`, SPEC §4.4: the task is the first run, and a run resumed after
    /// it is not the task's to stop).
    pub async fn stop_first_run(&self, target: &str, reason: &str) -> Result<(), AgentError> {
        self.stop_run(target, stopped_message(Some(reason)), Some(1))
            .await
            .map(drop)
    }

    /// Stops `target`'s current run, or only run number `only` when given, its record's
    /// error reading `message`; the record it ended with, or the session's as it is when
    /// there was nothing to stop.
    async fn stop_run(
        &self,
        target: &str,
        message: String,
        only: Option<u64>,
    ) -> Result<Snapshot, AgentError> {
        let session = self.get_one(target)?;
        let run = {
            let mut state = session.lock();
            state.recency = self.next_recency();
            if state.status.is_terminal() || only.is_some_and(|run| run != state.runs) {
                drop(state);
                return Ok(session.snapshot());
            }
            request_stop(&mut state, message)
        };
        until_stopped(&session, run).await
    }

    /// What an MCP task sees of `id` (SPEC §4.4): its first run, live or as it ended.
    /// Polling it refreshes the session's recency, as a wait does, so a task whose client
    /// keeps asking is not the first to be forgotten.
    pub fn first_run(&self, id: &str) -> Result<FirstRun, AgentError> {
        let session = self.get_one(id)?;
        session.lock().recency = self.next_recency();
        Ok(session.first_run())
    }

    /// Answers the question `target`'s run waits on (SPEC §4.5), number `question` (the id
    /// its snapshot shows): the answer is the `ask_parent` call's result and the run goes
    /// on; [`ParentAnswer::Declined`] tells the agent to decide for itself. The first answer
    /// wins, by this path or `send_input`; the question leaves the record before this
    /// returns. Fails with `unknown_agent`, or `invalid_input` when that question is not
    /// pending (answered already, timed out, or the run ended). Returns the question.
    pub fn answer_question(
        &self,
        target: &str,
        question: u64,
        answer: ParentAnswer,
    ) -> Result<Question, AgentError> {
        let session = self.get_one(target)?;
        let mut state = session.lock();
        state.recency = self.next_recency();
        let answered = match state.status {
            Status::Running => answer_pending(&mut state, Some(question), answer),
            Status::Completed(_) | Status::Failed(_) => None,
        };
        drop(state);
        session.notify();
        answered.ok_or_else(|| no_question(short_id(&session.id), question))
    }

    /// Starts waiting for `targets`; fails at once with `unknown_agent` naming every
    /// unknown or evicted id. Naming a session refreshes its recency.
    pub fn wait(
        &self,
        targets: &[String],
        timeout: Duration,
        return_when: ReturnWhen,
    ) -> Result<Waiter, AgentError> {
        let sessions = self.get(targets)?;
        for session in &sessions {
            session.lock().recency = self.next_recency();
        }
        Ok(Waiter::new(
            sessions,
            Instant::now() + timeout,
            return_when,
            self.shutdown.clone(),
        ))
    }

    /// The variable holding `definition`'s key when it is unset or empty now, for the marks
    /// of `spawn_agent`'s description (SPEC §4.1); `None` when the key is there.
    pub fn missing_key(&self, definition: &AgentDefinition) -> Option<String> {
        self.setup.missing_key(definition)
    }

    /// One session's state now, without waiting or touching its recency.
    pub fn snapshot(&self, id: &str) -> Result<Snapshot, AgentError> {
        Ok(self.get_one(id)?.snapshot())
    }

    /// Starts stopping: every run is cancelled (its children then shut down) and every
    /// pending wait returns. Does not wait.
    pub fn begin_shutdown(&self) {
        self.shutdown.cancel();
        self.runs.close();
    }

    /// Cancels every run and waits for them to end (children shut down), at most `bound`.
    pub async fn shutdown(&self, bound: Duration) {
        self.begin_shutdown();
        let _ = tokio::time::timeout(bound, self.runs.wait()).await;
    }

    /// Runs executing now.
    pub fn running(&self) -> usize {
        self.limits.concurrent_runs - self.permits.available_permits()
    }

    /// Run tasks alive now, including ones still shutting their children down.
    pub fn run_tasks(&self) -> usize {
        self.runs.len()
    }

    /// Sessions retained now (running and terminal).
    pub fn retained(&self) -> usize {
        self.registry().len()
    }

    pub(super) fn registry(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The sessions `ids` name, in order, or `unknown_agent` naming every missing id.
    fn get(&self, ids: &[String]) -> Result<Vec<Arc<Session>>, AgentError> {
        let registry = self.registry();
        let found: Vec<Option<Arc<Session>>> = ids
            .iter()
            .map(|id| registry.get(id.as_str()).cloned())
            .collect();
        let missing: Vec<&str> = ids
            .iter()
            .zip(&found)
            .filter(|(_, session)| session.is_none())
            .map(|(id, _)| id.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(self.unknown_agent(&registry, &missing));
        }
        Ok(found.into_iter().flatten().collect())
    }

    fn get_one(&self, id: &str) -> Result<Arc<Session>, AgentError> {
        let registry = self.registry();
        let session = registry.get(id).cloned();
        session.ok_or_else(|| self.unknown_agent(&registry, &[id]))
    }

    /// `unknown_agent` for `missing`, listing the ids still held. The caller holds the
    /// registry.
    fn unknown_agent(
        &self,
        registry: &HashMap<String, Arc<Session>>,
        missing: &[&str],
    ) -> AgentError {
        let held = registry
            .values()
            .map(|s| (s.lock().recency, s.id.as_str(), s.definition.name.as_str()))
            .collect();
        unknown_ids(held, missing, &self.limits)
    }

    /// The server's spend allows a run of `definition` (SPEC §5.1); its model's price.
    fn admit(&self, definition: &AgentDefinition) -> Result<Option<Price>, AgentError> {
        let provider = definition.provider.kind.as_str();
        self.spend.admit(provider, &definition.model.id)
    }

    fn try_permit(&self) -> Result<OwnedSemaphorePermit, AgentError> {
        let permit = self.permits.clone().try_acquire_owned();
        permit.map_err(|_| at_capacity(&self.limits))
    }

    /// Drops the least recently used terminal sessions (ties: smallest agent_id first) while
    /// more are retained than the limit allows, or their histories together hold more bytes
    /// than the budget (SPEC §5). Running sessions are never evicted.
    fn evict_excess(&self) {
        let mut registry = self.registry();
        let mut terminal: Vec<(u64, String, usize)> = registry
            .values()
            .filter_map(|s| {
                let state = s.lock();
                state.status.is_terminal().then(|| {
                    let bytes = state.conversation.as_ref().map_or(0, Conversation::bytes);
                    (state.recency, s.id.clone(), bytes)
                })
            })
            .collect();
        let limits = &self.limits;
        let mut count = terminal.len();
        let mut bytes: usize = terminal.iter().map(|(_, _, b)| b).sum();
        if count <= limits.retained_terminal && bytes <= limits.retained_history_bytes {
            return;
        }
        terminal.sort();
        let mut evicted: Vec<Arc<Session>> = Vec::new();
        for (_, id, size) in terminal {
            if count <= limits.retained_terminal && bytes <= limits.retained_history_bytes {
                break;
            }
            evicted.extend(registry.remove(&id));
            count -= 1;
            bytes -= size;
        }
        drop(registry);
        // Their histories are freed here, outside the lock, and given back to the system.
        drop(evicted);
        crate::memory::freed();
    }
}

impl RunHost for SessionManager {
    fn tools(&self) -> &dyn ToolsFactory {
        self.tools.as_ref()
    }

    fn workspace(&self) -> &Path {
        self.catalog.workspace()
    }

    fn tasks(&self) -> &TaskTracker {
        &self.runs
    }

    fn next_recency(&self) -> u64 {
        self.recency.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn ended(&self) {
        self.evict_excess();
    }
}

/// `queue_full` when the session's queue holds as much input as the limit allows.
fn check_queue(state: &SessionState, limits: &ServerLimits, id: &str) -> Result<(), AgentError> {
    if state.queued_inputs() >= limits.queued_inputs {
        return Err(queue_full(short_id(id), state.queued_inputs()));
    }
    Ok(())
}

/// Input for a running session: the answer to its pending question (SPEC §4.5), which
/// takes it at once and is never queued, unless the input interrupts; otherwise queued, and
/// with `interrupt` the run's current step is cancelled (a pending question with it: its
/// call is answered as interrupted, and the input follows). Returns the question answered.
fn deliver(
    state: &mut SessionState,
    message: &str,
    interrupt: bool,
    limits: &ServerLimits,
    id: &str,
) -> Result<Option<String>, AgentError> {
    if !interrupt
        && let Some(question) = answer_pending(state, None, ParentAnswer::Text(message.to_owned()))
    {
        return Ok(Some(question.text));
    }
    check_queue(state, limits, id)?;
    state.queue.push_back(message.to_owned());
    if interrupt {
        state.question = None;
        state.interrupt.send_modify(|n| *n += 1);
    }
    Ok(None)
}

/// What a session did next with input sent to it.
enum Sent {
    Accepted(Accepted),
    /// Its run (this one) is being stopped: the input waits for that, then resumes it.
    Stopping(Arc<Session>, u64),
}
