//! The session manager (SPEC §5): every session of the process, the eight run permits, the
//! queue and retention limits, and the runs themselves (one tokio task each).
//!
//! Locking: the registry lock guards the map of sessions; each session has its own lock.
//! The registry lock is never held while taking a session lock for long, and no lock is held
//! across an `.await`. A run's permit lives in its session's state, so a session becomes
//! terminal and gives its permit back in one step: nobody can see a terminal session whose
//! permit is still taken.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::hidden::{Hiding, hide_in_outcome};
use super::session::{
    RunSignals, Session, SessionState, Snapshot, Status, Totals, new_agent_id, short_id,
};
use super::wait::{ReturnWhen, Waiter};
use crate::definition::AgentDefinition;
use crate::definition::Catalog;
use crate::error::{AgentError, ErrorCode};
use crate::limits::{
    CHILD_SHUTDOWN_TIMEOUT, DEADLINE_SHUTDOWN_GRACE, STOP_HANDOFF_BOUND, STOP_REASON_BYTES,
    STOP_SHUTDOWN_GRACE, ServerLimits, UNKNOWN_AGENT_IDS_LISTED,
};
use crate::providers::{Conversation, Credential, ProviderClient, RetryPolicy};
use crate::run::{
    Activity, Failure, RunContext, RunLimits, RunObserver, RunOutcome, Spent, partial_result,
    run_model_loop, schema_instructions, until,
};
use crate::toolbox::{EnvLookup, RunTools, ToolsFactory};

/// The rule for every text the tools take (a task, a message, a name, an id): it must hold
/// more than whitespace. The tools' argument checks and `mcp-agents run` both come here.
pub fn require_text(field: &str, text: &str) -> Result<(), AgentError> {
    if text.trim().is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidInput,
            format!("`{field}` must not be empty"),
        ));
    }
    Ok(())
}

/// How the manager reaches the outside world.
pub struct ManagerConfig {
    pub env: EnvLookup,
    pub tools: Arc<dyn ToolsFactory>,
    pub retry: RetryPolicy,
    pub limits: ServerLimits,
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
}

pub struct SessionManager {
    catalog: Arc<Catalog>,
    /// The variables holding the credentials the catalog's agents are configured with,
    /// each once (the catalog does not change; their values are read per run).
    secret_vars: Vec<String>,
    config: ManagerConfig,
    permits: Arc<Semaphore>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    recency: AtomicU64,
    /// Cancels every run (server shutdown).
    shutdown: CancellationToken,
    runs: TaskTracker,
}

impl SessionManager {
    pub fn new(catalog: Arc<Catalog>, config: ManagerConfig) -> Arc<Self> {
        let mut secret_vars: Vec<String> = catalog
            .agents()
            .iter()
            .flat_map(|definition| definition.secret_vars())
            .map(str::to_owned)
            .collect();
        secret_vars.sort_unstable();
        secret_vars.dedup();
        Arc::new(SessionManager {
            permits: Arc::new(Semaphore::new(config.limits.concurrent_runs)),
            catalog,
            secret_vars,
            config,
            sessions: Mutex::new(HashMap::new()),
            recency: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
            runs: TaskTracker::new(),
        })
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn workspace(&self) -> &Path {
        self.catalog.workspace()
    }

    /// Starts a session and its first run; returns before any tool or provider work.
    pub fn spawn(self: &Arc<Self>, name: &str, task: &str) -> Result<Accepted, AgentError> {
        require_text("task", task)?;
        let definition = self.catalog.get(name).cloned().ok_or_else(|| {
            // A file that defines the name was rejected: say which and why, in the words
            // `mcp-agents run` uses (SPEC §4.1).
            if let Some(rejected) = self.catalog.rejection_of(name) {
                return AgentError::new(ErrorCode::UnknownAgent, rejected);
            }
            let names: Vec<&str> = self.catalog.offered().map(|a| a.name.as_str()).collect();
            let known = if names.is_empty() {
                "this workspace has no usable agents".to_owned()
            } else {
                format!("the agents are: {}", names.join(", "))
            };
            let rejected = if self.catalog.has_rejections() {
                "; some definition files were rejected (`mcp-agents check` says why)"
            } else {
                ""
            };
            AgentError::new(
                ErrorCode::UnknownAgent,
                format!("there is no agent named `{name}`; {known}{rejected}"),
            )
        })?;
        let system = self.system_context(&definition)?;
        let provider = self.provider_for(&definition)?;
        let permit = self.try_permit()?;

        let id = new_agent_id();
        let session = Arc::new(Session::new(
            id.clone(),
            definition.clone(),
            system,
            task.to_owned(),
            self.next_recency(),
        ));
        {
            let mut state = session.lock();
            state.permit = Some(permit);
            state.run = RunSignals::new(&self.shutdown);
        }
        self.registry().insert(id.clone(), session.clone());
        self.start_run(session, provider);
        Ok(Accepted {
            agent_id: id,
            name: definition.name.clone(),
            model: definition.model.id.clone(),
            provider: definition.provider.kind.as_str(),
            queued: 0,
        })
    }

    /// Queues input for a running session (interrupting it if asked), or resumes a
    /// terminal one with this input. Input for a session whose run the parent is stopping
    /// waits for the stop to finish (at most [`STOP_HANDOFF_BOUND`]), then resumes it.
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
        let provider = self.provider_for(&session.definition);
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
        if state.queued_inputs() >= self.config.limits.queued_inputs {
            return Err(AgentError::new(
                ErrorCode::QueueFull,
                format!(
                    "agent {} already has {} queued inputs, the most it holds; wait for it \
                     to take them (wait_agent) before sending more",
                    short_id(&session.id),
                    state.queued_inputs()
                ),
            ));
        }
        let mut resume = None;
        match state.status {
            Status::Running => {
                state.queue.push_back(message.to_owned());
                if interrupt {
                    state.interrupt.send_modify(|n| *n += 1);
                }
            }
            Status::Completed(_) | Status::Failed(_) => {
                let provider = provider?;
                let permit = self.try_permit()?;
                state.queue.push_back(message.to_owned());
                state.status = Status::Running;
                state.permit = Some(permit);
                state.run = RunSignals::new(&self.shutdown);
                state.stopping = None;
                state.runs += 1;
                state.ended_at = None;
                state.set_activity(Activity::starting(), session.spawned_at);
                resume = Some(provider);
            }
        }
        // Counted before a resumed run can take the input, so the answer does not race it.
        let accepted = Accepted {
            agent_id: session.id.clone(),
            name: session.definition.name.clone(),
            model: session.definition.model.id.clone(),
            provider: session.definition.provider.kind.as_str(),
            queued: state.queued_inputs(),
        };
        drop(state);
        drop(registry);
        if let Some(provider) = resume {
            self.start_run(session.clone(), provider);
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
        let session = self.get_one(target)?;
        let run = {
            let mut state = session.lock();
            state.recency = self.next_recency();
            if state.status.is_terminal() {
                drop(state);
                return Ok(session.snapshot());
            }
            if state.stopping.is_none() {
                // Kept, and shown in every later record: cut to a bound.
                let reason = reason.map(str::trim).unwrap_or_default();
                state.stopping = Some(crate::text::shorten(reason, STOP_REASON_BYTES));
                state.run.stopped.cancel();
                state.run.cancel.cancel();
            }
            state.runs
        };
        until_stopped(&session, run).await
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

    /// The variable holding `definition`'s key when it is unset or empty now (the one it
    /// would read first), for the marks of `spawn_agent`'s description (SPEC §4.1); `None`
    /// when the key is there. A variable name that looks like a key itself is not shown.
    pub fn missing_key(&self, definition: &AgentDefinition) -> Option<String> {
        let env = self.config.env.clone();
        let missing = Credential::resolve(&definition.provider, move |var| env(var)).err()?;
        Some(if crate::definition::is_showable_var_name(&missing.var) {
            missing.var
        } else {
            "its key variable".to_owned()
        })
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
        self.config.limits.concurrent_runs - self.permits.available_permits()
    }

    /// Run tasks alive now, including ones still shutting their children down.
    pub fn run_tasks(&self) -> usize {
        self.runs.len()
    }

    /// Sessions retained now (running and terminal).
    pub fn retained(&self) -> usize {
        self.registry().len()
    }

    fn registry(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next_recency(&self) -> u64 {
        self.recency.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The sessions for `ids`, or `unknown_agent` naming all that are missing.
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

    /// `unknown_agent` for `missing`, listing the ids still held (SPEC §4.3), so a parent
    /// that lost track of its agents can find them again. The caller holds the registry.
    fn unknown_agent(
        &self,
        registry: &HashMap<String, Arc<Session>>,
        missing: &[&str],
    ) -> AgentError {
        let mut held: Vec<(u64, &str, &str)> = registry
            .values()
            .map(|s| (s.lock().recency, s.id.as_str(), s.definition.name.as_str()))
            .collect();
        held.sort_by(|a, b| b.cmp(a));
        let listed: Vec<String> = held
            .iter()
            .take(UNKNOWN_AGENT_IDS_LISTED)
            .map(|(_, id, name)| format!("{id} ({name})"))
            .collect();
        let holding = match held.len() {
            0 => "no agents are held now".to_owned(),
            n if n > listed.len() => format!(
                "the {} most recently used of the {n} agents held now are: {}",
                listed.len(),
                listed.join(", ")
            ),
            _ => format!("the agents held now are: {}", listed.join(", ")),
        };
        AgentError::new(
            ErrorCode::UnknownAgent,
            format!(
                "no agent has the id {}; {holding}. Ids are valid until the server restarts, \
                 and a finished agent is forgotten once {} newer ones have finished (or sooner \
                 when the finished agents' histories together pass {} MiB)",
                missing.join(", "),
                self.config.limits.retained_terminal,
                self.config.limits.retained_history_bytes / (1024 * 1024)
            ),
        )
    }

    fn try_permit(&self) -> Result<OwnedSemaphorePermit, AgentError> {
        self.permits.clone().try_acquire_owned().map_err(|_| {
            AgentError::new(
                ErrorCode::CapacityExceeded,
                format!(
                    "{} agents are already running, the most this server runs at once; wait \
                     for one to finish (wait_agent) and try again",
                    self.config.limits.concurrent_runs
                ),
            )
        })
    }

    /// The client of a run of `definition`, with the key read now, hiding every secret
    /// of the workspace ([`Self::workspace_secrets`]); all of them are kept off stderr from
    /// now on.
    fn provider_for(&self, definition: &AgentDefinition) -> Result<ProviderClient, AgentError> {
        let env = self.config.env.clone();
        let client = ProviderClient::for_run(definition, move |var| env(var))?
            .with_retry_policy(self.config.retry.clone())
            .with_workspace(self.workspace(), definition)
            .hiding(self.workspace_secrets());
        crate::redact::hide_on_stderr(client.secrets());
        Ok(client)
    }

    /// The values, read now, of every credential the workspace's agents are configured with:
    /// their keys and their child servers' tokens. A run hides them all, not only its own:
    /// a model may have read another agent's token from a file or a tool.
    fn workspace_secrets(&self) -> Vec<String> {
        self.secret_vars
            .iter()
            .filter_map(|var| (self.config.env)(var))
            .collect()
    }

    /// Instructions, then each preloaded skill in the listed order (FORMATS.md §5).
    fn system_context(&self, definition: &AgentDefinition) -> Result<String, AgentError> {
        let mut system = definition.instructions.clone();
        for name in &definition.skills {
            let skill = self.catalog.skills().get(name).ok_or_else(|| {
                AgentError::new(
                    ErrorCode::SkillNotFound,
                    format!(
                        "agent `{}` preloads the skill `{name}`, which no skill root defines \
                         ({}); add it or remove it from the definition, then restart the server",
                        definition.name,
                        Catalog::skill_roots().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            system.push_str("\n\n");
            system.push_str(&skill.preload_text());
        }
        if let Some(schema) = &definition.output_schema {
            system.push_str("\n\n");
            system.push_str(&schema_instructions(schema));
        }
        Ok(system)
    }

    fn start_run(self: &Arc<Self>, session: Arc<Session>, provider: ProviderClient) {
        let manager = self.clone();
        self.runs.spawn(async move {
            let run = AssertUnwindSafe(manager.clone().drive(session.clone(), provider));
            if run.catch_unwind().await.is_err() {
                // A bug ended the run. The session still becomes terminal and gives its
                // permit back, or it would look busy forever and hold one of the 8 permits.
                // The panic's own message went to stderr through the panic hook; it is not
                // repeated here, because it can quote the text being handled.
                let failure = AgentError::new(
                    ErrorCode::Internal,
                    "a bug in mcp-agents stopped this run (a panic, reported on the server's \
                     stderr); its conversation is lost, so a resume starts afresh",
                );
                manager.finish(
                    &session,
                    session.lock(),
                    Status::Failed(failure.into()),
                    None,
                );
            }
        });
    }

    /// One run, from opening tools to the terminal state; reopens and carries on if input
    /// arrived while it was closing (the same run: its limits hold across). A run the
    /// parent stops hands its conversation back at once and becomes terminal, then shuts
    /// its children down with a short grace.
    async fn drive(self: Arc<Self>, session: Arc<Session>, provider: ProviderClient) {
        let (mut conversation, interrupts, before, signals) = take_for_run(&session);
        let definition = &session.definition;
        let limits = RunLimits {
            max_turns: definition.max_turns,
            budget: definition.budget,
            started: Instant::now(),
        };
        // The answer of the run so far, when input that came as it closed carried it on.
        let mut earlier_answer: Option<String> = None;
        let secrets = provider.secrets();
        let observer = Hiding {
            observer: session.as_ref(),
            secrets,
        };
        loop {
            let outcome = match self.open_tools(&session, &limits, &signals).await {
                Err(outcome) => outcome,
                Ok(tools) => {
                    // A stop or a shutdown cancels through the loop, which answers any
                    // unanswered tool call, so the history stays valid.
                    let context = RunContext {
                        provider: &provider,
                        system: &session.system,
                        tools: tools.as_ref(),
                        inbox: session.as_ref(),
                        observer: &observer,
                        interrupts: interrupts.clone(),
                        cancel: signals.cancel.clone(),
                        limits,
                        spent: spent_since(&before, &session.lock().totals),
                        output_schema: definition.output_schema.as_ref(),
                    };
                    let outcome = run_model_loop(&mut conversation, context).await;
                    if signals.stopped.is_cancelled() {
                        // Stopped: terminal first (the permit free, the stop answered),
                        // then the children, quickly.
                        let outcome = with_earlier_answer(outcome, &mut earlier_answer);
                        {
                            let state = session.lock();
                            let status = terminal_status(outcome, state.stopping.as_deref());
                            self.finish(&session, state, status, Some(conversation));
                        }
                        tools.shutdown(STOP_SHUTDOWN_GRACE).await;
                        return;
                    }
                    close_tools(&session, tools, &limits, &signals).await;
                    outcome
                }
            };
            let outcome =
                hide_in_outcome(with_earlier_answer(outcome, &mut earlier_answer), secrets);
            // One guard from this check to the terminal state: input accepted in between
            // would otherwise be left queued on a finished session.
            let state = session.lock();
            if let RunOutcome::Completed(answer) = &outcome
                && !state.queue.is_empty()
                && !signals.cancel.is_cancelled()
            {
                // Input queued while the run was closing: carry on in the same permit.
                earlier_answer = partial_result(&answer.text, secrets);
                continue;
            }
            let status = terminal_status(outcome, state.stopping.as_deref());
            self.finish(&session, state, status, Some(conversation));
            return;
        }
    }

    /// Starts the run's child servers, reported as activity. A stop or a shutdown during
    /// startup drops the startup, which kills the children already started (their guards),
    /// instead of waiting for it to finish; `max_run_seconds` bounds the startup the same
    /// way.
    async fn open_tools(
        &self,
        session: &Session,
        limits: &RunLimits,
        signals: &RunSignals,
    ) -> Result<Box<dyn RunTools>, RunOutcome> {
        let definition = &session.definition;
        if let Some(starting) = Activity::child_startup(definition) {
            session.activity(limits.bounded(starting));
        }
        tokio::select! {
            opened = self.config.tools.open(definition, self.workspace()) => {
                opened.map_err(|e| RunOutcome::Failed(e.into()))
            }
            () = signals.cancel.cancelled() => Err(RunOutcome::Cancelled { partial_result: None }),
            () = until(limits.deadline()) => Err(RunOutcome::Failed(
                limits.out_of_time("its MCP servers were still starting").into(),
            )),
        }
    }

    /// Makes `session` (whose `state` the caller holds) terminal: gives its permit back in
    /// the same step, then applies the retention limit, then wakes its waiters.
    fn finish(
        &self,
        session: &Session,
        mut state: MutexGuard<'_, SessionState>,
        status: Status,
        conversation: Option<Conversation>,
    ) {
        state.status = status;
        state.conversation = conversation;
        state.ended_at = Some(Instant::now());
        state.activity = None;
        state.recency = self.next_recency();
        state.permit = None;
        if state.stopping.is_some() {
            // What the stop answers, as of now: input may resume the session before the
            // stop's caller looks.
            let record = session.snapshot_of(&state, *session.subscribe().borrow());
            state.stop_record = Some((state.runs, record));
        }
        drop(state);
        // Evicting before waking the waiters: whoever sees this session finish also sees
        // the retention limit already applied.
        self.evict_excess();
        session.notify();
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
        let limits = &self.config.limits;
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

/// What a session did next with input sent to it.
enum Sent {
    Accepted(Accepted),
    /// Its run (this one) is being stopped: the input waits for that, then resumes it.
    Stopping(Arc<Session>, u64),
}

/// Waits until `session`'s run number `run`, which is being stopped, has ended (at most
/// [`STOP_HANDOFF_BOUND`]; the run answers its cancellation at once), and returns the
/// record it ended with.
async fn until_stopped(session: &Session, run: u64) -> Result<Snapshot, AgentError> {
    let mut changes = session.subscribe();
    let stopped = tokio::time::timeout(STOP_HANDOFF_BOUND, async {
        loop {
            if let Some((ended, record)) = &session.lock().stop_record
                && *ended == run
            {
                return record.clone();
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    })
    .await;
    stopped.map_err(|_| {
        AgentError::new(
            ErrorCode::Internal,
            format!(
                "agent {} was told to stop but its run did not end within {} ms (a bug); it \
                 stops as soon as it can, and wait_agent shows when it has",
                short_id(&session.id),
                STOP_HANDOFF_BOUND.as_millis()
            ),
        )
    })
}

/// What a run takes from its session as it starts: the conversation (a fresh one for the
/// first run), its interrupts, the totals before it, and its cancellation.
fn take_for_run(session: &Session) -> (Conversation, watch::Receiver<u64>, Totals, RunSignals) {
    let mut state = session.lock();
    let conversation = state
        .conversation
        .take()
        .unwrap_or_else(|| Conversation::new(session.definition.provider.wire_api));
    (
        conversation,
        state.interrupt.subscribe(),
        state.totals,
        state.run.clone(),
    )
}

/// A failure in a run that carried on after input keeps the answer before it.
fn with_earlier_answer(outcome: RunOutcome, earlier_answer: &mut Option<String>) -> RunOutcome {
    match outcome {
        RunOutcome::Failed(mut failure) if failure.partial_result.is_none() => {
            failure.partial_result = earlier_answer.take();
            RunOutcome::Failed(failure)
        }
        RunOutcome::Cancelled {
            partial_result: None,
        } => RunOutcome::Cancelled {
            partial_result: earlier_answer.take(),
        },
        other => other,
    }
}

/// Shuts a run's child servers down. Past `max_run_seconds` the children get a short grace,
/// not the whole shutdown bound, before they are killed: the run fails within a second of
/// its limit. A stop while they close kills what is left at once (dropping the shutdown
/// drops the connections, whose guards kill their process groups).
async fn close_tools(
    session: &Session,
    tools: Box<dyn RunTools>,
    limits: &RunLimits,
    signals: &RunSignals,
) {
    let bound = if limits.deadline().is_some_and(|d| Instant::now() >= d) {
        DEADLINE_SHUTDOWN_GRACE
    } else {
        CHILD_SHUTDOWN_TIMEOUT
    };
    if !session.definition.mcp_servers.is_empty() {
        let mut closing = Activity::child_shutdown();
        closing.timeout = Some(bound);
        session.activity(closing);
    }
    tokio::select! {
        () = tools.shutdown(bound) => {}
        () = signals.stopped.cancelled() => {}
    }
}

/// The terminal status a run's outcome gives its session; a cancelled run was stopped by
/// the parent (`stopping`, with its reason) or by the server shutting down.
fn terminal_status(outcome: RunOutcome, stopping: Option<&str>) -> Status {
    match outcome {
        RunOutcome::Completed(answer) => Status::Completed(answer),
        RunOutcome::Failed(failure) => Status::Failed(failure),
        RunOutcome::Cancelled { partial_result } => {
            let error = match stopping {
                Some(reason) => AgentError::new(ErrorCode::Cancelled, stopped_message(reason)),
                None => AgentError::new(
                    ErrorCode::Internal,
                    "the run was cancelled because the server is shutting down (not a bug)",
                ),
            };
            Status::Failed(Failure {
                error,
                partial_result,
            })
        }
    }
}

/// The message of a run the parent stopped (SPEC §4.2, §11 `cancelled`).
fn stopped_message(reason: &str) -> String {
    if reason.is_empty() {
        "stopped by the parent".to_owned()
    } else {
        format!("stopped by the parent: {reason}")
    }
}

/// What a run spent between two readings of its session's totals.
fn spent_since(before: &Totals, now: &Totals) -> Spent {
    let tokens = |t: &Totals| t.input_tokens.saturating_add(t.output_tokens);
    Spent {
        turns: now.turns.saturating_sub(before.turns),
        tool_calls: u32::try_from(now.tool_calls.saturating_sub(before.tool_calls))
            .unwrap_or(u32::MAX),
        tokens: tokens(now).saturating_sub(tokens(before)),
    }
}
