//! Reading the status sockets of a workspace (SPEC §7.1), for `mcp-agents status` and
//! `watch`: every live server's connection with its snapshot; a socket whose server is dead
//! or that refuses connections is stale, skipped and removed.

use std::path::Path;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio_util::codec::{FramedRead, LinesCodec};

use super::place::{SocketEntry, is_dead, socket_dirs, sockets_for};
use crate::limits::{STATUS_CONNECT_TIMEOUT, STATUS_LINE_BYTES};

/// One live server: its snapshot, then what it says next, and where to send a stop.
pub struct Connection {
    pub pid: u32,
    /// The first line: `{"type": "snapshot", "server", "agents"}`.
    pub snapshot: Value,
    pub lines: StatusLines,
    pub requests: StatusRequests,
}

/// What a server says after its snapshot.
pub struct StatusLines(FramedRead<OwnedReadHalf, LinesCodec>);

impl StatusLines {
    /// The next line as JSON; `None` once the server has gone (or said something that is
    /// not a line of the protocol).
    pub async fn next(&mut self) -> Option<Value> {
        let line = self.0.next().await?.ok()?;
        serde_json::from_str(&line).ok()
    }
}

/// Where requests go.
pub struct StatusRequests(OwnedWriteHalf);

impl StatusRequests {
    /// Asks the server to stop `agent_id`; its answer comes among the lines.
    pub async fn stop(&mut self, agent_id: &str) -> Result<(), String> {
        let mut line = json!({ "stop": agent_id }).to_string();
        line.push('\n');
        self.0
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("the server did not take the request: {e}"))
    }
}

/// What a look for the servers of a workspace found.
#[derive(Default)]
pub struct Found {
    /// The live servers, each connected with its snapshot read.
    pub connections: Vec<Connection>,
    /// Why a directory could not be looked in (one of another uid, say).
    pub problems: Vec<String>,
}

/// The live servers of the canonical `workspace` in every directory a server of this user
/// may use, leaving out the pids in `known` (already connected); the stale sockets found
/// on the way are removed.
pub async fn connect_all(workspace: &Path, known: &[u32]) -> Found {
    let mut found = Found::default();
    for dir in socket_dirs() {
        match connect_in(&dir, workspace, known).await {
            Ok(connections) => found.connections.extend(connections),
            Err(problem) => found.problems.push(problem),
        }
    }
    found.connections.sort_by_key(|c| c.pid);
    found
}

/// The live servers of `workspace` in `dir`, leaving out the pids in `known`.
async fn connect_in(
    dir: &Path,
    workspace: &Path,
    known: &[u32],
) -> Result<Vec<Connection>, String> {
    let mut connections = Vec::new();
    for entry in sockets_for(dir, workspace)? {
        if known.contains(&entry.pid) {
            continue;
        }
        match connect(&entry, workspace).await {
            Reached::Live(connection) => connections.push(*connection),
            Reached::Stale => {
                tracing::debug!("removing the stale status socket {}", entry.path.display());
                let _ = std::fs::remove_file(&entry.path);
            }
            Reached::Silent => {}
        }
    }
    Ok(connections)
}

/// What became of one socket.
enum Reached {
    Live(Box<Connection>),
    /// Its server is dead or it refuses connections: it may go.
    Stale,
    /// It said no snapshot for this workspace in time: left alone.
    Silent,
}

/// The connection to `entry` with its snapshot.
async fn connect(entry: &SocketEntry, workspace: &Path) -> Reached {
    if is_dead(entry.pid) {
        return Reached::Stale;
    }
    let opened = tokio::time::timeout(STATUS_CONNECT_TIMEOUT, async {
        let stream = match UnixStream::connect(&entry.path).await {
            Ok(stream) => stream,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
                ) =>
            {
                return Err(Reached::Stale);
            }
            Err(_) => return Err(Reached::Silent),
        };
        let (read, write) = stream.into_split();
        let mut lines = StatusLines(FramedRead::new(
            read,
            LinesCodec::new_with_max_length(STATUS_LINE_BYTES),
        ));
        let snapshot = lines.next().await.ok_or(Reached::Silent)?;
        Ok((snapshot, lines, StatusRequests(write)))
    })
    .await;
    let (snapshot, lines, requests) = match opened {
        Ok(Ok(opened)) => opened,
        Ok(Err(reached)) => return reached,
        Err(_) => return Reached::Silent,
    };
    let ours = snapshot["type"] == "snapshot"
        && snapshot["server"]["workspace"].as_str() == Some(&workspace.display().to_string());
    if !ours {
        return Reached::Silent;
    }
    Reached::Live(Box::new(Connection {
        pid: entry.pid,
        snapshot,
        lines,
        requests,
    }))
}
