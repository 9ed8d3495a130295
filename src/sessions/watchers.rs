//! Every session's changes, for whoever watches the whole server from outside (SPEC §7.1:
//! the status socket, `GET /status/events`): the list of sessions with the tool calls each
//! made, the changes since a watcher last looked, and the stop a watcher asks for.
//!
//! A watcher sleeps on the manager's bell (`feed`; no polling); when it rings,
//! [`Changes::next`] compares each session's change counter with the one last handed out,
//! so several quick transitions of one session come as its latest state, and an evicted
//! session as forgotten.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::feed::CallTiming;
use super::manager::SessionManager;
use super::session::{Session, Snapshot};
use crate::error::AgentError;

/// What the record of an agent stopped from outside reads (SPEC §7.1).
pub const WATCH_STOP_MESSAGE: &str = "stopped from mcp-agents watch";

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
    /// Every session as of the last look.
    all: Vec<Watched>,
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
            bell: self.feed.listen(),
            seen: HashMap::new(),
            all: Vec::new(),
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
    pub fn everything(&mut self) -> &[Watched] {
        self.bell.borrow_and_update();
        self.all = self.manager.watched();
        self.seen = self
            .all
            .iter()
            .map(|w| (w.snapshot.agent_id.clone(), w.snapshot.version))
            .collect();
        &self.all
    }

    /// Every session as of the last look ([`Self::everything`] or [`Self::next`]).
    pub fn all(&self) -> &[Watched] {
        &self.all
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
        self.all = self.manager.watched();
        let mut changes = Vec::new();
        let mut seen = HashMap::with_capacity(self.all.len());
        for w in &self.all {
            let id = w.snapshot.agent_id.clone();
            let version = w.snapshot.version;
            if self.seen.get(&id) != Some(&version) {
                changes.push(Change::Agent(Box::new(w.clone())));
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
