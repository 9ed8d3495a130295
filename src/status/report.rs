//! What the status endpoint says (SPEC §7.1; the protocol is in docs/tools.md): a snapshot
//! of the server and of every agent, then the changes as they happen. Each agent is its
//! `wait_agent` record with its human line and its latest tool calls, but never more of a
//! result than its first line (SPEC §7): no `structured_result`, no `partial_result`, the
//! error's message cut to its first line too, and the human line quoting only those. The socket and `GET /status/events` say
//! the same lines; `GET /status` is the snapshot.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::limits::STATUS_LINE_CHARS;
use crate::sessions::{
    Change, Changes, SessionManager, Snapshot, Status, Watched, snapshot_json, summary_line,
};
use crate::spend::ServerSpend;

/// The server a status endpoint speaks for.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pid: u32,
    workspace: PathBuf,
    /// `stdio` or `http`.
    transport: &'static str,
    /// The `/mcp` URL, once an HTTP server has bound it.
    url: Arc<OnceLock<String>>,
    started: SystemTime,
    /// The server's spend and caps (SPEC §5.1).
    spend: Arc<ServerSpend>,
}

impl ServerInfo {
    /// This process, serving `manager`'s workspace over `transport` (`stdio` or `http`).
    pub fn new(manager: &SessionManager, transport: &'static str) -> Self {
        ServerInfo {
            pid: std::process::id(),
            workspace: manager.workspace().to_owned(),
            transport,
            url: Arc::new(OnceLock::new()),
            started: SystemTime::now(),
            spend: manager.spend().clone(),
        }
    }

    /// The HTTP server's `/mcp` URL, once bound (set once; a second call changes nothing).
    pub fn set_url(&self, url: String) {
        let _ = self.url.set(url);
    }

    pub fn workspace(&self) -> &std::path::Path {
        &self.workspace
    }
}

/// One watcher's view of a server: its first picture, then its changes, as JSON lines.
pub struct StatusFeed {
    info: ServerInfo,
    changes: Changes,
    /// The `server` object last said, to say it again only when it changed.
    server: Value,
}

impl StatusFeed {
    pub fn new(manager: &Arc<SessionManager>, info: ServerInfo) -> Self {
        StatusFeed {
            info,
            changes: manager.changes(),
            server: Value::Null,
        }
    }

    /// `{"type": "snapshot", "server": {…}, "agents": [{…}, …]}`: everything now.
    pub fn snapshot(&mut self) -> Value {
        let agents = self.changes.everything();
        self.server = server_json(&self.info, agents);
        json!({
            "type": "snapshot",
            "server": self.server,
            "agents": agents.iter().map(agent_json).collect::<Vec<_>>(),
        })
    }

    /// Waits for the next changes: `{"type": "agent", "agent": {…}}` for each agent that
    /// appeared or moved on, `{"type": "forgotten", "agent_id": …}` for each evicted one,
    /// then `{"type": "server", "server": {…}}` when the server's totals changed.
    pub async fn next(&mut self) -> Vec<Value> {
        let mut lines: Vec<Value> = self
            .changes
            .next()
            .await
            .iter()
            .map(|change| match change {
                Change::Agent(w) => json!({"type": "agent", "agent": agent_json(w)}),
                Change::Forgotten(id) => json!({"type": "forgotten", "agent_id": id}),
            })
            .collect();
        let server = server_json(&self.info, self.changes.all());
        if server != self.server {
            lines.push(json!({"type": "server", "server": server}));
            self.server = server;
        }
        lines
    }
}

/// The server: who it is, what it holds, and its spend.
fn server_json(info: &ServerInfo, agents: &[Watched]) -> Value {
    let count = |status: &str| {
        agents
            .iter()
            .filter(|w| w.snapshot.status.as_str() == status)
            .count()
    };
    let sum = |of: fn(&Watched) -> u64| agents.iter().map(of).fold(0u64, u64::saturating_add);
    let started = info
        .started
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let mut server = json!({
        "pid": info.pid,
        "workspace": info.workspace.display().to_string(),
        "version": env!("CARGO_PKG_VERSION"),
        "transport": info.transport,
        "started_unix_ms": millis(started),
        "agents": {
            "running": count("running"),
            "completed": count("completed"),
            "failed": count("failed"),
        },
        "usage": {
            "input_tokens": sum(|w| w.snapshot.totals.input_tokens),
            "output_tokens": sum(|w| w.snapshot.totals.output_tokens),
            "tool_calls": sum(|w| w.snapshot.totals.tool_calls),
        },
    });
    if let Some(url) = info.url.get() {
        server["url"] = json!(url);
    }
    // The server's spend and caps (SPEC §5.1), as `wait_agent`'s `server_spend` says them.
    server["server_spend"] = info.spend.report();
    server
}

/// One agent: its record, cut as SPEC §7 asks, with its human line and tool calls.
pub fn agent_json(watched: &Watched) -> Value {
    let snapshot = first_lines_only(&watched.snapshot);
    let mut record = snapshot_json(&snapshot);
    record["line"] = json!(summary_line(&snapshot));
    record["calls"] = watched
        .calls
        .iter()
        .map(|call| {
            let mut value = json!({
                "call": call.call,
                "started_ms": millis(call.started),
                "at_once": call.at_once,
            });
            if let Some(took) = call.took {
                value["took_ms"] = json!(millis(took));
            }
            value
        })
        .collect();
    record
}

/// `snapshot` saying no more than the first line of its result or error: no structured
/// result, no partial result.
fn first_lines_only(snapshot: &Snapshot) -> Snapshot {
    let mut snapshot = snapshot.clone();
    match &mut snapshot.status {
        Status::Completed(answer) => {
            answer.text = first_line(&answer.text);
            answer.structured = None;
        }
        Status::Failed(failure) => {
            failure.error.message = first_line(&failure.error.message);
            failure.partial_result = None;
        }
        Status::Running => {}
    }
    snapshot
}

/// The first line of `text` that holds more than whitespace, trimmed and cut at
/// [`STATUS_LINE_CHARS`] characters with "…".
fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or_default();
    if line.chars().count() <= STATUS_LINE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(STATUS_LINE_CHARS).collect();
    cut.push('…');
    cut
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_line_of_a_text_is_said() {
        assert_eq!(
            first_line("\n  Found two.  \nSecret second line"),
            "Found two."
        );
        assert_eq!(first_line(" \n"), "");
        let long = "x".repeat(STATUS_LINE_CHARS + 5);
        assert_eq!(first_line(&long).chars().count(), STATUS_LINE_CHARS + 1);
    }
}
