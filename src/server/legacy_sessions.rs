//! Legacy (`initialize`) HTTP sessions, capped (SPEC §10): `rmcp`'s local session manager
//! keeps every session until it has been idle for 5 minutes, so a client that only ever
//! initializes could make it hold thousands. This wrapper keeps at most
//! [`HTTP_LEGACY_SESSIONS`]: a new session first closes the least recently used one. Every
//! request naming a session counts as a use. 2026-07-28 clients are stateless and never
//! reach it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

use crate::limits::HTTP_LEGACY_SESSIONS;

/// `rmcp`'s local sessions, at most `cap` of them.
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// The last use of each session this wrapper knows of.
    last_used: Mutex<HashMap<SessionId, u64>>,
    clock: AtomicU64,
}

impl Default for CappedSessions {
    fn default() -> Self {
        CappedSessions::with_cap(HTTP_LEGACY_SESSIONS)
    }
}

impl CappedSessions {
    pub(super) fn with_cap(cap: usize) -> Self {
        CappedSessions {
            inner: LocalSessionManager::default(),
            cap: cap.max(1),
            last_used: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
        }
    }

    fn last_used(&self) -> MutexGuard<'_, HashMap<SessionId, u64>> {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(last) = self.last_used().get_mut(id) {
            *last = now;
        }
    }

    /// Closes least recently used sessions until one more fits.
    async fn make_room(&self) {
        // Sessions `rmcp` closed itself (idle, or their client went away) are forgotten.
        let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        self.last_used().retain(|id, _| live.contains(id));
        loop {
            let oldest = {
                let last_used = self.last_used();
                if last_used.len() < self.cap {
                    return;
                }
                last_used
                    .iter()
                    .min_by_key(|(_, used)| **used)
                    .map(|(id, _)| id.clone())
            };
            let Some(oldest) = oldest else { return };
            self.last_used().remove(&oldest);
            tracing::debug!("closed the least recently used legacy HTTP session");
            let _ = self.inner.close_session(&oldest).await;
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        self.last_used().insert(id.clone(), now);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.last_used().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_least_recently_used_session_is_closed_for_a_new_one() {
        let sessions = CappedSessions::with_cap(3);
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(sessions.create_session().await.unwrap().0);
        }
        // The first is used again: the second is now the least recently used.
        sessions.touch(&ids[0]);
        let newest = sessions.create_session().await.unwrap().0;
        assert!(sessions.has_session(&ids[0]).await.unwrap());
        assert!(!sessions.has_session(&ids[1]).await.unwrap());
        assert!(sessions.has_session(&ids[2]).await.unwrap());
        assert!(sessions.has_session(&newest).await.unwrap());
        assert_eq!(sessions.inner.sessions.read().await.len(), 3);
    }
}
