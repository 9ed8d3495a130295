//! Serving MCP on stdin/stdout.
//!
//! `rmcp` stops serving when a notification arrives before the client has chosen a
//! protocol generation (for example `notifications/cancelled` right after
//! `server/discover`). Such early notifications carry nothing this server needs, so stdin
//! is read through a small filter that drops them until the first request other than
//! `server/discover` or `ping` has gone through. The same filter marks `tools/call`
//! messages whose `arguments` is not an object ([`super::arguments`]). Everything else
//! passes byte for byte.

use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

use super::handler::AgentsServer;
use crate::sessions::manager::SessionManager;

/// Serves until stdin closes or the client goes away.
pub async fn serve(manager: Arc<SessionManager>) -> Result<(), String> {
    serve_on(manager, tokio::io::stdin(), tokio::io::stdout()).await
}

pub async fn serve_on<R, W>(manager: Arc<SessionManager>, input: R, output: W) -> Result<(), String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (filtered, filter_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(filter_early_notifications(input, filter_end));
    let service = AgentsServer::new(manager)
        .serve((filtered, output))
        .await
        .map_err(|e| format!("the MCP client did not start a session: {e}"))?;
    service
        .waiting()
        .await
        .map_err(|e| format!("the MCP session ended with an error: {e}"))?;
    Ok(())
}

/// Copies lines from `input` to `output`, dropping notifications until the lifecycle is
/// chosen.
async fn filter_early_notifications<R, W>(input: R, mut output: W)
where
    R: AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(input);
    let mut line = Vec::new();
    let mut chosen = false;
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !chosen {
            match classify(&line) {
                Message::EarlyNotification => {
                    tracing::debug!("dropped a notification sent before the lifecycle began");
                    continue;
                }
                Message::LifecycleChoosing => chosen = true,
                Message::Other => {}
            }
        }
        if let Some(marked) = super::arguments::mark_non_object_arguments(&line) {
            line = marked;
        }
        if output.write_all(&line).await.is_err() {
            break;
        }
    }
    let _ = output.shutdown().await;
}

enum Message {
    EarlyNotification,
    /// A request that chooses the protocol generation.
    LifecycleChoosing,
    Other,
}

fn classify(line: &[u8]) -> Message {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Message::Other;
    };
    let method = value.get("method").and_then(|m| m.as_str());
    match (method, value.get("id")) {
        (Some(_), None) => Message::EarlyNotification,
        (Some("server/discover" | "ping"), Some(_)) => Message::Other,
        (Some(_), Some(_)) => Message::LifecycleChoosing,
        _ => Message::Other,
    }
}
