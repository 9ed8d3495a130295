//! One session (SPEC §5): a frozen definition, its system context, its provider-native
//! conversation, its queue, its status and timing. A session is shared between the run that
//! drives it and the callers that look at it; every observable change bumps a `watch`
//! channel so waiters wake without polling.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::feed::{CallTiming, Feed};
use super::question::{Pending, Question};
use crate::definition::AgentDefinition;
use crate::error::AgentError;
use crate::limits::{ACTIVITY_HISTORY, RECORD_FILES_CHANGED};
use crate::providers::Conversation;
use crate::run::{
    Activity, Answer, Failure, Inbox, ModelAttempt, RunObserver, ToolUse, UsageDelta,
};
use crate::spend::{Price, ServerSpend, Tokens, Usd};
use crate::toolbox::FileChange;

/// Where a session stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Running,
    Completed(Answer),
    Failed(Failure),
}

impl Status {
    pub fn is_terminal(&self) -> bool {
        !matches!(self, Status::Running)
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed(_) => "completed",
            Status::Failed(_) => "failed",
        }
    }
}

/// Token and call counts over the session's life (all runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the input, what the provider read from and wrote to its prompt cache (SPEC §4.3).
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub tool_calls: u64,
    /// What the tokens cost at the model's price (SPEC §5.1 `usage.cost_usd`); `None` when
    /// the model has no price.
    pub cost: Option<Usd>,
}

/// One child tool the session called, over its life (SPEC §4.3 `tools_used`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUsage {
    /// The name the model calls it by (`github__search_issues`).
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
}

/// One file of the workspace the session's runs created or modified, over its life (SPEC
/// §4.3 `files_changed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChanged {
    /// Relative to the workspace, as the tool showed it.
    pub path: String,
    /// The first change created it.
    pub created: bool,
    /// Successful `edit` and `write` calls on it.
    pub changes: u64,
}

/// The current activity and when it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActivityState {
    pub activity: Activity,
    pub since: Instant,
}

/// One activity transition, numbered in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Transition {
    /// 1 for the session's first transition.
    pub seq: u64,
    pub activity: Activity,
    /// When it happened, counted from the spawn.
    pub at: Duration,
}

/// What `wait_agent` reports about a session at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub agent_id: String,
    pub name: String,
    /// The model id sent to the provider, and the provider's name (SPEC §4.1).
    pub model: String,
    pub provider: &'static str,
    pub status: Status,
    pub total_elapsed: Duration,
    pub totals: Totals,
    /// The tools called, in the order they were first called.
    pub tools_used: Vec<ToolUsage>,
    /// The files changed, in the order they were first changed (at most
    /// [`RECORD_FILES_CHANGED`]).
    pub files_changed: Vec<FileChanged>,
    /// Changes to files beyond the listed ones (each `edit` or `write` counted once).
    pub unlisted_changes: u64,
    /// Input still queued (a failed session keeps it for the next resume).
    pub queued: usize,
    /// The models the latest run left for a fallback, and why (SPEC §5.1); `model` is the
    /// one asked after them.
    pub model_attempts: Vec<ModelAttempt>,
    /// Present while running: the activity and how long it has lasted.
    pub activity: Option<(Activity, Duration)>,
    /// Present while the agent waits for its parent's answer (SPEC §4.5).
    pub question: Option<Question>,
    /// Counts activity transitions and status changes; a change means "tell the waiter".
    pub version: u64,
}

/// The first run of a session, as an MCP task reports it (SPEC §4.4): the task is the first
/// run, so once that run has ended its record stays the task's answer, whatever later runs
/// (resumed by `send_input`) do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstRun {
    /// The session now while its first run runs; the record the first run ended with once
    /// it has ended.
    pub record: Snapshot,
    /// When the session was spawned, by the wall clock.
    pub created: SystemTime,
    /// When what the record says last changed: its latest activity transition while the
    /// first run runs, the end of that run after.
    pub updated: SystemTime,
}

pub(crate) struct SessionState {
    pub status: Status,
    /// The conversation, while no run holds it.
    pub conversation: Option<Conversation>,
    /// What the next request delivers: the spawn's task first, until a request carries
    /// it, then the input `send_input` queued.
    pub queue: VecDeque<String>,
    /// The spawn's task is still at the front of `queue`. It is not queued input in the
    /// sense of SPEC §4.2: it counts neither in `queued` nor against the 16.
    pub task_pending: bool,
    /// Bumped by `send_input` with `interrupt: true`; the run watches it.
    pub interrupt: watch::Sender<u64>,
    pub totals: Totals,
    pub tools_used: Vec<ToolUsage>,
    pub files_changed: Vec<FileChanged>,
    pub unlisted_changes: u64,
    pub activity: Option<ActivityState>,
    /// The latest transitions (at most [`ACTIVITY_HISTORY`]), so a waiter that wakes after
    /// several quick ones still reports each.
    pub transitions: VecDeque<Transition>,
    /// The latest child tool calls with how long each took, for the watch's detail (SPEC
    /// §7.1; names only, never arguments).
    pub calls: VecDeque<CallTiming>,
    pub ended_at: Option<Instant>,
    /// Larger is more recently used (SPEC §5 retention).
    pub recency: u64,
    /// The run permit, held while running; dropped in the same step the session becomes
    /// terminal.
    pub permit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// The current run's cancellation, set in the same step the session becomes running.
    pub run: RunSignals,
    /// The parent or a watcher stopped the current run (SPEC §4.2 `stop`, §7.1), and the
    /// message its record's error will read; cleared when the session runs again.
    pub stopping: Option<String>,
    /// Runs started so far (the spawn's is 1, each resume adds one).
    pub runs: u64,
    /// The record of the last stopped run as it became terminal, and which run it was: what
    /// its `stop` answers, even when input resumed the session before the stop could look.
    pub stop_record: Option<(u64, Snapshot)>,
    /// The record the first run ended with, kept as it was (SPEC §4.4: an MCP task answers
    /// with it after a resume).
    pub first_run_end: Option<Snapshot>,
    /// The question the run waits on (SPEC §4.5), taken by the first answer.
    pub question: Option<Pending>,
    /// Questions asked so far, over the session's life: the next one's id follows.
    pub questions_asked: u64,
    /// How long the current run has waited for its parent's answers: its deadline moves by
    /// it (SPEC §4.5).
    pub parked: Duration,
    /// The fallback model the latest run asks since its own could not answer (SPEC §5.1);
    /// `None` while it is the definition's.
    pub fallback_model: Option<String>,
    /// The models the latest run left, and why.
    pub model_attempts: Vec<ModelAttempt>,
}

/// How the current run is told to end.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunSignals {
    /// Ends the run where it is (a child of the server's shutdown token): the model loop
    /// abandons its request or tool calls, a startup is dropped.
    pub cancel: CancellationToken,
    /// The parent stopped it: a shutdown of its children that has begun is cut short too.
    pub stopped: CancellationToken,
}

impl RunSignals {
    /// The signals of a new run, cancelled with the server's `shutdown`.
    pub(crate) fn new(shutdown: &CancellationToken) -> Self {
        RunSignals {
            cancel: shutdown.child_token(),
            stopped: CancellationToken::new(),
        }
    }
}

impl SessionState {
    /// Makes `activity` current and records the transition.
    pub(crate) fn set_activity(&mut self, activity: Activity, spawned_at: Instant) {
        let now = Instant::now();
        let seq = self.transitions.back().map_or(1, |t| t.seq + 1);
        if self.transitions.len() == ACTIVITY_HISTORY {
            self.transitions.pop_front();
        }
        self.transitions.push_back(Transition {
            seq,
            activity: activity.clone(),
            at: now.saturating_duration_since(spawned_at),
        });
        super::feed::time_calls(&mut self.calls, &activity, now, spawned_at);
        self.activity = Some(ActivityState {
            activity,
            since: now,
        });
    }

    /// The input `send_input` queued that no request has carried yet.
    pub(crate) fn queued_inputs(&self) -> usize {
        self.queue
            .len()
            .saturating_sub(usize::from(self.task_pending))
    }
}

pub(crate) struct Session {
    pub id: String,
    pub definition: Arc<AgentDefinition>,
    /// Instructions plus preloaded skills.
    pub system: String,
    pub spawned_at: Instant,
    /// [`Self::spawned_at`] by the wall clock, for what reports dates (an MCP task's).
    created: SystemTime,
    state: Mutex<SessionState>,
    changes: watch::Sender<u64>,
    /// Rung with every change, for whoever watches every session (SPEC §7.1).
    feed: Feed,
    /// The server's spend, which each reply adds to and each request asks (SPEC §5.1).
    spend: Arc<ServerSpend>,
    /// The model's price, found at the spawn; `None`: the model has no price.
    price: Option<Price>,
}

impl Session {
    pub(crate) fn new(
        id: String,
        definition: Arc<AgentDefinition>,
        system: String,
        task: String,
        recency: u64,
    ) -> Session {
        let now = Instant::now();
        let mut state = SessionState {
            status: Status::Running,
            conversation: None,
            queue: VecDeque::from([task]),
            task_pending: true,
            interrupt: watch::channel(0).0,
            totals: Totals::default(),
            tools_used: Vec::new(),
            files_changed: Vec::new(),
            unlisted_changes: 0,
            activity: None,
            transitions: VecDeque::new(),
            calls: VecDeque::new(),
            ended_at: None,
            recency,
            permit: None,
            run: RunSignals::default(),
            stopping: None,
            runs: 1,
            stop_record: None,
            first_run_end: None,
            question: None,
            questions_asked: 0,
            parked: Duration::ZERO,
            fallback_model: None,
            model_attempts: Vec::new(),
        };
        state.set_activity(Activity::starting(), now);
        Session {
            id,
            system,
            spawned_at: now,
            created: SystemTime::now(),
            state: Mutex::new(state),
            changes: watch::channel(0).0,
            feed: Feed::default(),
            spend: Arc::default(),
            price: None,
            definition,
        }
    }

    /// This session, its replies priced at `price` and counted in `spend`.
    pub(crate) fn metered(mut self, spend: &Arc<ServerSpend>, price: Option<Price>) -> Session {
        self.spend = spend.clone();
        self.lock().totals.cost = price.as_ref().map(|_| Usd::ZERO);
        self.price = price;
        self
    }

    /// This session, ringing `feed` with each of its changes.
    pub(crate) fn in_feed(mut self, feed: &Feed) -> Session {
        self.feed = feed.clone();
        self
    }

    /// The state lock. A panic while holding it would be a bug in this module; the state
    /// is still consistent field by field, so poisoning is ignored rather than spreading.
    pub(crate) fn lock(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes everyone waiting on this session.
    pub(crate) fn notify(&self) {
        self.changes.send_modify(|v| *v += 1);
        self.feed.ring();
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The recorded transitions after `seq`, oldest first (the older ones beyond the
    /// history's bound are gone), and the newest sequence number.
    pub(crate) fn transitions_after(&self, seq: u64) -> (Vec<Transition>, u64) {
        let state = self.lock();
        let newest = state.transitions.back().map_or(0, |t| t.seq);
        let after = state
            .transitions
            .iter()
            .filter(|t| t.seq > seq)
            .cloned()
            .collect();
        (after, newest)
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        let version = *self.changes.borrow();
        let state = self.lock();
        self.snapshot_of(&state, version)
    }

    /// What an MCP task sees of this session: its first run ([`FirstRun`]).
    pub(crate) fn first_run(&self) -> FirstRun {
        let version = *self.changes.borrow();
        let state = self.lock();
        let wall = |at: Instant| self.created + at.saturating_duration_since(self.spawned_at);
        match &state.first_run_end {
            Some(record) => FirstRun {
                updated: self.created + record.total_elapsed,
                record: record.clone(),
                created: self.created,
            },
            None => FirstRun {
                updated: state
                    .activity
                    .as_ref()
                    .map_or(self.created, |a| wall(a.since)),
                record: self.snapshot_of(&state, version),
                created: self.created,
            },
        }
    }

    /// The snapshot of `state` (this session's, locked by the caller) at change `version`.
    pub(crate) fn snapshot_of(&self, state: &SessionState, version: u64) -> Snapshot {
        let now = Instant::now();
        let end = state.ended_at.unwrap_or(now);
        Snapshot {
            agent_id: self.id.clone(),
            name: self.definition.name.clone(),
            model: state
                .fallback_model
                .clone()
                .unwrap_or_else(|| self.definition.model.id.clone()),
            provider: self.definition.provider.kind.as_str(),
            status: state.status.clone(),
            total_elapsed: end.saturating_duration_since(self.spawned_at),
            totals: state.totals,
            tools_used: state.tools_used.clone(),
            files_changed: state.files_changed.clone(),
            unlisted_changes: state.unlisted_changes,
            queued: state.queued_inputs(),
            model_attempts: state.model_attempts.clone(),
            activity: match (&state.status, &state.activity) {
                (Status::Running, Some(a)) => {
                    Some((a.activity.clone(), now.saturating_duration_since(a.since)))
                }
                _ => None,
            },
            question: match (&state.status, &state.question) {
                (Status::Running, Some(pending)) => Some(pending.question.clone()),
                _ => None,
            },
            version,
        }
    }
}

impl Inbox for Session {
    /// Nothing once the parent has stopped the run: its input stays queued for a resume.
    fn take_all(&self) -> Vec<String> {
        let mut state = self.lock();
        if state.stopping.is_some() {
            return Vec::new();
        }
        state.task_pending = false;
        state.queue.drain(..).collect()
    }

    fn is_empty(&self) -> bool {
        let state = self.lock();
        state.stopping.is_some() || state.queue.is_empty()
    }
}

impl RunObserver for Session {
    fn activity(&self, activity: Activity) {
        self.lock().set_activity(activity, self.spawned_at);
        self.notify();
    }

    fn usage(&self, d: UsageDelta) {
        let mut state = self.lock();
        // A fallback model's replies at its own price (SPEC §5.1); a reply of a model
        // without one leaves the session without a cost, never with a part of it.
        let price = match &state.fallback_model {
            Some(model) => {
                let provider = self.definition.provider.kind.as_str();
                self.spend.prices().lookup(provider, model)
            }
            None => self.price.clone(),
        };
        // Saturating: token counts come from the provider.
        let t = &mut state.totals;
        t.turns = t.turns.saturating_add(d.turns);
        t.input_tokens = t.input_tokens.saturating_add(d.input_tokens);
        t.output_tokens = t.output_tokens.saturating_add(d.output_tokens);
        t.cache_read_tokens = t.cache_read_tokens.saturating_add(d.cache_read_tokens);
        t.cache_write_tokens = t.cache_write_tokens.saturating_add(d.cache_write_tokens);
        let tokens = Tokens {
            input: d.input_tokens,
            output: d.output_tokens,
            cache_read: d.cache_read_tokens,
            cache_write: d.cache_write_tokens,
        };
        let cost = price.as_ref().map(|price| price.cost(&tokens));
        t.cost = match (t.cost, cost) {
            (Some(total), Some(cost)) => Some(total.saturating_add(cost)),
            _ => None,
        };
        drop(state);
        self.spend.record(&tokens, cost);
    }

    fn tool_used(&self, tool: &str, event: ToolUse) {
        let mut state = self.lock();
        let index = match state.tools_used.iter().position(|u| u.tool == tool) {
            Some(index) => index,
            None => {
                state.tools_used.push(ToolUsage {
                    tool: tool.to_owned(),
                    calls: 0,
                    errors: 0,
                });
                state.tools_used.len() - 1
            }
        };
        match event {
            ToolUse::Called => {
                state.totals.tool_calls = state.totals.tool_calls.saturating_add(1);
                state.tools_used[index].calls += 1;
            }
            ToolUse::Failed => state.tools_used[index].errors += 1,
        }
    }

    fn file_changed(&self, change: &FileChange) {
        let mut state = self.lock();
        if let Some(file) = state
            .files_changed
            .iter_mut()
            .find(|f| f.path == change.path)
        {
            file.changes = file.changes.saturating_add(1);
        } else if state.files_changed.len() < RECORD_FILES_CHANGED {
            state.files_changed.push(FileChanged {
                path: change.path.clone(),
                created: change.created,
                changes: 1,
            });
        } else {
            // Past the listed files, changes are only counted: the list is what is kept, so
            // an unlisted path cannot be told from another.
            state.unlisted_changes = state.unlisted_changes.saturating_add(1);
        }
    }

    fn parked(&self, waited: Duration) {
        let mut state = self.lock();
        state.parked = state.parked.saturating_add(waited);
    }

    fn model_left(&self, left: &ModelAttempt, next: &str) {
        let mut state = self.lock();
        state.model_attempts.push(left.clone());
        state.fallback_model = Some(next.to_owned());
    }

    fn before_request(&self) -> Result<(), AgentError> {
        self.spend.check()
    }
}

/// A new agent id: 128 random bits as 32 hex digits (SPEC §5 asks for at least 96).
pub(super) fn new_agent_id() -> String {
    let mut bytes = [0u8; 16];
    rand::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first eight characters, for progress messages.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}
