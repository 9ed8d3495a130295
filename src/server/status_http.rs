//! `GET /status` and `GET /status/events` (SPEC §7.1): what the status socket says, over
//! HTTP, behind the same bearer-token and Origin checks as `/mcp` (the router's layer), each
//! stream holding one of the server's connections like any other request.
//!
//! `/status` is the snapshot; `/status/events` is server-sent events, the snapshot first,
//! then each change, each event named by its `type` with the JSON line as its data.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures_util::{Stream, StreamExt, stream};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::sessions::SessionManager;
use crate::status::{ServerInfo, StatusFeed};

#[derive(Clone)]
struct Status {
    manager: Arc<SessionManager>,
    info: ServerInfo,
    /// Ends the event streams when the server stops.
    shutdown: CancellationToken,
}

/// The two routes, answering for `manager` as `info` says.
pub(super) fn routes(
    manager: Arc<SessionManager>,
    info: ServerInfo,
    shutdown: CancellationToken,
) -> Router {
    Router::new()
        .route("/status", get(snapshot))
        .route("/status/events", get(events))
        .with_state(Status {
            manager,
            info,
            shutdown,
        })
}

async fn snapshot(State(status): State<Status>) -> Json<Value> {
    Json(StatusFeed::new(&status.manager, status.info).snapshot())
}

async fn events(
    State(status): State<Status>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut feed = StatusFeed::new(&status.manager, status.info);
    let first = stream::iter([feed.snapshot()]);
    let changes = stream::unfold(feed, |mut feed| async move {
        let lines = feed.next().await;
        Some((stream::iter(lines), feed))
    })
    .flatten();
    let events = first
        .chain(changes)
        .map(|line| {
            let name = line["type"].as_str().unwrap_or("message").to_owned();
            Ok(Event::default().event(name).data(line.to_string()))
        })
        .take_until(status.shutdown.cancelled_owned());
    Sse::new(events).keep_alive(KeepAlive::default())
}
