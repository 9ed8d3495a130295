//! The server's status socket (SPEC §7.1): bound in this user's private directory, mode
//! `0600`, serving each watcher of the same uid the snapshot, then the changes, and
//! answering its stop requests; a peer of another uid (`SO_PEERCRED`) is closed without an
//! answer. The socket is removed when its [`StatusSocket`] is dropped, on every way out of
//! the server (the client gone, a signal, an error).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::place::{SOCKET_MODE, make_private_dir, own_uid, socket_dir, socket_path};
use super::report::{ServerInfo, StatusFeed, agent_json};
use crate::error::{AgentError, ErrorCode};
use crate::limits::{STATUS_CONNECTIONS, STATUS_REQUEST_BYTES, STATUS_WRITE_TIMEOUT};
use crate::sessions::{SessionManager, error_json};

/// A bound status socket; dropping it stops serving and removes the socket.
pub struct StatusSocket {
    path: PathBuf,
    /// The socket's inode, so that only this socket is removed, never one a later server
    /// of the same pid put there.
    inode: (u64, u64),
    stop: CancellationToken,
}

impl StatusSocket {
    /// Binds this server's socket and serves it in the background until dropped.
    pub fn start(manager: Arc<SessionManager>, info: ServerInfo) -> Result<StatusSocket, String> {
        let dir = socket_dir();
        make_private_dir(&dir)?;
        let path = socket_path(&dir, info.workspace(), std::process::id());
        // A socket of this pid is from a dead server whose pid came back.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)
            .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        let meta = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(SOCKET_MODE))
            .and_then(|()| std::fs::symlink_metadata(&path));
        let meta = match meta {
            Ok(meta) => meta,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(format!("cannot make {} private: {e}", path.display()));
            }
        };
        let stop = CancellationToken::new();
        tokio::spawn(accept(listener, manager, info, stop.clone()));
        Ok(StatusSocket {
            path,
            inode: (meta.dev(), meta.ino()),
            stop,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StatusSocket {
    fn drop(&mut self) {
        self.stop.cancel();
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.inode);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Accepts watchers, at most [`STATUS_CONNECTIONS`] at once, until `stop`.
async fn accept(
    listener: UnixListener,
    manager: Arc<SessionManager>,
    info: ServerInfo,
    stop: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(STATUS_CONNECTIONS));
    loop {
        let slot = tokio::select! {
            slot = open.clone().acquire_owned() => slot,
            () = stop.cancelled() => return,
        };
        let Ok(slot) = slot else { return };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::debug!("accepting a status connection failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if !same_user(&stream) {
            // Closed without a word: another user learns nothing, not even the protocol.
            continue;
        }
        let feed = StatusFeed::new(&manager, info.clone());
        let (manager, stop) = (manager.clone(), stop.clone());
        tokio::spawn(async move {
            serve_watcher(stream, feed, &manager, &stop).await;
            drop(slot);
        });
    }
}

/// Whether the peer runs as this process's uid (`SO_PEERCRED`).
fn same_user(stream: &UnixStream) -> bool {
    stream.peer_cred().is_ok_and(|cred| cred.uid() == own_uid())
}

/// One watcher: the snapshot, then each change and the answer to each request, until it
/// goes away, stops reading, sends a line too long, or the server stops.
async fn serve_watcher(
    stream: UnixStream,
    mut feed: StatusFeed,
    manager: &SessionManager,
    stop: &CancellationToken,
) {
    let (read, mut write) = stream.into_split();
    let mut requests = FramedRead::new(read, LinesCodec::new_with_max_length(STATUS_REQUEST_BYTES));
    if send(&mut write, &[feed.snapshot()]).await.is_err() {
        return;
    }
    loop {
        let lines = tokio::select! {
            () = stop.cancelled() => return,
            lines = feed.next() => lines,
            request = requests.next() => match request {
                Some(Ok(line)) => vec![answer(manager, &line).await],
                // Gone, unreadable, or a line past the bound.
                Some(Err(_)) | None => return,
            },
        };
        if send(&mut write, &lines).await.is_err() {
            return;
        }
    }
}

/// Writes `lines` as JSON lines, giving up after [`STATUS_WRITE_TIMEOUT`].
async fn send(write: &mut OwnedWriteHalf, lines: &[Value]) -> Result<(), ()> {
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend_from_slice(line.to_string().as_bytes());
        bytes.push(b'\n');
    }
    match tokio::time::timeout(STATUS_WRITE_TIMEOUT, write.write_all(&bytes)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}

/// The answer to one request line: `{"stop": "<agent_id>"}` stops that agent.
async fn answer(manager: &SessionManager, line: &str) -> Value {
    let target = serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|request| request.get("stop")?.as_str().map(str::to_owned));
    let Some(target) = target else {
        let error = AgentError::new(
            ErrorCode::InvalidInput,
            r#"the status socket takes one request, {"stop": "<agent_id>"}"#,
        );
        return json!({"type": "error", "error": error_json(&error)});
    };
    match manager.stop_from_watch(&target).await {
        Ok(_) => {
            let agent = manager
                .watched()
                .into_iter()
                .find(|w| w.snapshot.agent_id == target);
            let agent = agent.as_ref().map_or(Value::Null, agent_json);
            json!({"type": "stopped", "agent_id": target, "agent": agent})
        }
        Err(e) => json!({"type": "error", "agent_id": target, "error": error_json(&e)}),
    }
}
