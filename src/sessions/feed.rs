//! Every session's changes, for whoever watches the whole server from outside (SPEC §7.1:
//! the status socket, `GET /status/events`): one bell every session rings as it changes,
//! the list of sessions with the tool calls each made and how long they took, the changes
//! since a watcher last looked, and the stop a watcher asks for.
//!
//! A watcher sleeps on the bell (no polling); when it rings, [`Changes::next`] compares each
//! session's change counter with the one last handed out, so several quick transitions of
//! one session come as its latest state, and an evicted session as forgotten.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::manager::SessionManager;
use super::session::{Session, Snapshot};
use crate::error::AgentError;
use crate::limits::TOOL_CALL_HISTORY;
use crate::run::{Activity, Phase};

/// What the record of an agent stopped from outside reads (SPEC §7.1).
pub const WATCH_STOP_MESSAGE: &str = "stopped from mcp-agents watch";

/// The bell every session of a manager rings with each change.
#[derive(Debug, Clone)]
pub(crate) struct Feed(Arc<watch::Sender<u64>>);

impl Default for Feed {
    fn default() -> Self {
        Feed(Arc::new(watch::channel(0).0))
    }
}

impl Feed {
    pub(crate) fn ring(&self) {
        self.0.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// One child tool call a session made: its name and when it ran; never its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallTiming {
    /// `server.tool`, as the activity names it.
    pub call: String,
    /// When it began, counted from the spawn.
    pub started: Duration,
    /// How long it took; `None` while it runs. Calls made at once end together, when the
    /// last of them answers (the run's next step).
    pub took: Option<Duration>,
    /// The calls of its round, this one included.
    pub at_once: usize,
}

/// Ends the calls still open at `now`, and opens the calls `next` begins, keeping at most
/// [`TOOL_CALL_HISTORY`].
pub(super) fn time_calls(
    calls: &mut VecDeque<CallTiming>,
    next: &Activity,
    now: Instant,
    spawned_at: Instant,
) {
    let at = now.saturating_duration_since(spawned_at);
    for call in calls.iter_mut().filter(|c| c.took.is_none()) {
        call.took = Some(at.saturating_sub(call.started));
    }
    if next.phase != Phase::ToolCall {
        return;
    }
    for name in &next.calls {
        if calls.len() == TOOL_CALL_HISTORY {
            calls.pop_front();
        }
        calls.push_back(CallTiming {
            call: name.clone(),
            started: at,
            took: None,
            at_once: next.calls.len(),
        });
    }
}

/// One session as a watcher sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    pub snapshot: Snapshot,
    /// Its latest tool calls, oldest first; a call its run's end cut short took until then.
    pub calls: Vec<CallTiming>,
}

/// What changed since a watcher last looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new session, or one that moved on: its state now.
    Agent(Box<Watched>),
    /// A session evicted (SPEC §5 retention): its id answers `unknown_agent` from now on.
    Forgotten(String),
}

/// A watcher's view of every session's changes.
pub struct Changes {
    manager: Arc<SessionManager>,
    bell: watch::Receiver<u64>,
    /// Each session handed out, with its change counter then.
    seen: HashMap<String, u64>,
}

impl SessionManager {
    /// Every retained session, in the order they were spawned.
    pub fn watched(&self) -> Vec<Watched> {
        let mut sessions: Vec<Arc<Session>> = self.registry().values().cloned().collect();
        sessions.sort_by(|a, b| (a.spawned_at, &a.id).cmp(&(b.spawned_at, &b.id)));
        sessions.iter().map(|s| watched(s)).collect()
    }

    /// A watcher of every session, which has seen nothing yet.
    pub fn changes(self: &Arc<Self>) -> Changes {
        Changes {
            manager: self.clone(),
            bell: self.feed.0.subscribe(),
            seen: HashMap::new(),
        }
    }

    /// Stops a running agent for a watcher (SPEC §7.1): as `send_input` with `stop` does,
    /// its record's error reading [`WATCH_STOP_MESSAGE`]. A terminal agent is left as it is.
    pub async fn stop_from_watch(&self, target: &str) -> Result<Snapshot, AgentError> {
        self.stop_with(target, WATCH_STOP_MESSAGE.to_owned()).await
    }
}

impl Changes {
    /// Every session now, each marked as handed out: what a watcher's first picture shows.
    pub fn everything(&mut self) -> Vec<Watched> {
        self.bell.borrow_and_update();
        let all = self.manager.watched();
        self.seen = all
            .iter()
            .map(|w| (w.snapshot.agent_id.clone(), w.snapshot.version))
            .collect();
        all
    }

    /// Waits until a session changes, then says what changed since the last call, in spawn
    /// order (the forgotten ones last).
    pub async fn next(&mut self) -> Vec<Change> {
        loop {
            if self.bell.changed().await.is_err() {
                // The manager holds the sender, and this holds the manager.
                std::future::pending::<()>().await;
            }
            let changes = self.since();
            if !changes.is_empty() {
                return changes;
            }
        }
    }

    /// The sessions that moved on, and the ones gone, since they were last handed out.
    fn since(&mut self) -> Vec<Change> {
        self.bell.borrow_and_update();
        let now = self.manager.watched();
        let mut changes = Vec::new();
        let mut seen = HashMap::with_capacity(now.len());
        for w in now {
            let id = w.snapshot.agent_id.clone();
            let version = w.snapshot.version;
            if self.seen.get(&id) != Some(&version) {
                changes.push(Change::Agent(Box::new(w)));
            }
            seen.insert(id, version);
        }
        let mut gone: Vec<String> = self
            .seen
            .keys()
            .filter(|id| !seen.contains_key(*id))
            .cloned()
            .collect();
        gone.sort();
        changes.extend(gone.into_iter().map(Change::Forgotten));
        self.seen = seen;
        changes
    }
}

/// `session`'s snapshot and tool calls, under one look at its state.
fn watched(session: &Session) -> Watched {
    let version = *session.subscribe().borrow();
    let state = session.lock();
    let snapshot = session.snapshot_of(&state, version);
    // A call its run's end cut short took until that end.
    let ended = state
        .ended_at
        .map(|end| end.saturating_duration_since(session.spawned_at));
    let calls = state
        .calls
        .iter()
        .map(|call| CallTiming {
            took: call
                .took
                .or_else(|| ended.map(|end| end.saturating_sub(call.started))),
            ..call.clone()
        })
        .collect();
    Watched { snapshot, calls }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_takes_until_the_next_step_and_the_history_is_bounded() {
        let spawned = Instant::now();
        let mut calls = VecDeque::new();
        let round = Activity::tool_calls(&[("gh", "search"), ("fx", "echo")], Duration::ZERO);
        time_calls(
            &mut calls,
            &round,
            spawned + Duration::from_secs(1),
            spawned,
        );
        assert_eq!(calls.len(), 2);
        assert!(calls.iter().all(|c| c.took.is_none() && c.at_once == 2));
        let asking = Activity::provider_request("openai", "m", 2, 32);
        time_calls(
            &mut calls,
            &asking,
            spawned + Duration::from_secs(3),
            spawned,
        );
        assert_eq!(calls[0].call, "gh.search");
        assert_eq!(calls[0].started, Duration::from_secs(1));
        assert_eq!(calls[1].took, Some(Duration::from_secs(2)));
        let one = Activity::tool_call("fx", "echo", Duration::ZERO);
        for _ in 0..TOOL_CALL_HISTORY {
            time_calls(&mut calls, &one, spawned + Duration::from_secs(4), spawned);
        }
        assert_eq!(calls.len(), TOOL_CALL_HISTORY);
        assert!(calls.iter().all(|c| c.call == "fx.echo"), "oldest dropped");
    }
}
