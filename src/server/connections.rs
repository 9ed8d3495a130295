//! The HTTP accept loop and each connection's life (SPEC §10): at most [`HTTP_CONNECTIONS`]
//! served at once, each under the header deadline and the write bound, each registered in
//! the [`Crowd`] with what it is doing, so that a fresh client never waits for a slot long
//! (one connection is chosen to close for it) and answers nobody reads stay bounded
//! together. Connections are HTTP/1.1: an HTTP/2 one would need its first bytes read before
//! any timeout applies.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::crowd::{Crowd, RequestGuard, Tracked};
use super::write_stall::WriteStall;
use crate::limits::{HTTP_CONNECTIONS, HTTP_CROWD_CHECK, HTTP_HEADER_TIMEOUT};

/// Accepts connections and serves each until `shutdown`; then lets the open ones finish
/// their requests (the caller bounds that).
pub(super) async fn serve(listener: TcpListener, router: Router, shutdown: CancellationToken) {
    let crowd = Arc::new(Crowd::default());
    let slots = Arc::new(Semaphore::new(HTTP_CONNECTIONS));
    let served = TaskTracker::new();
    served.spawn(give_up_unread_answers(crowd.clone(), shutdown.clone()));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, or a connection reset before it was taken: wait a
                // little rather than spin.
                tracing::debug!("accepting an HTTP connection failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(slot) = room_for(&slots, &crowd, &shutdown).await else {
            break;
        };
        let tracked = crowd.enter();
        served.spawn(serve_one(
            stream,
            router.clone(),
            Registered {
                crowd: crowd.clone(),
                tracked,
            },
            slot,
            shutdown.clone(),
        ));
    }
    served.close();
    served.wait().await;
}

/// A slot for the connection just accepted: a free one, or the one a connection chosen to
/// close gives up (another is chosen every [`HTTP_CROWD_CHECK`] until one is free).
/// `None` at shutdown.
async fn room_for(
    slots: &Arc<Semaphore>,
    crowd: &Crowd,
    shutdown: &CancellationToken,
) -> Option<OwnedSemaphorePermit> {
    loop {
        if let Ok(slot) = slots.clone().try_acquire_owned() {
            return Some(slot);
        }
        crowd.make_room();
        tokio::select! {
            slot = slots.clone().acquire_owned() => return slot.ok(),
            () = tokio::time::sleep(HTTP_CROWD_CHECK) => {}
            () = shutdown.cancelled() => return None,
        }
    }
}

/// Checks the unread answers against their bound every [`HTTP_CROWD_CHECK`], until
/// shutdown.
async fn give_up_unread_answers(crowd: Arc<Crowd>, shutdown: CancellationToken) {
    let mut ticks = tokio::time::interval(HTTP_CROWD_CHECK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = ticks.tick() => crowd.give_up_unread(tokio::time::Instant::now()),
            () = shutdown.cancelled() => return,
        }
    }
}

/// A connection in the crowd, which it leaves when dropped (closed however it closed).
struct Registered {
    crowd: Arc<Crowd>,
    tracked: Arc<Tracked>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.crowd.leave(&self.tracked);
    }
}

/// Serves one connection until it closes, is cut, or winds down (chosen to make room
/// while idle, or the server's shutdown: hyper finishes the request in progress).
async fn serve_one(
    stream: TcpStream,
    router: Router,
    registered: Registered,
    slot: OwnedSemaphorePermit,
    shutdown: CancellationToken,
) {
    let tracked = registered.tracked.clone();
    {
        let service = tracked_service(router, tracked.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HTTP_HEADER_TIMEOUT)
            .serve_connection(
                TokioIo::new(WriteStall::tracked(stream, tracked.clone())),
                service,
            );
        tokio::pin!(connection);
        let mut winding_down = false;
        loop {
            tokio::select! {
                _ = connection.as_mut() => break,
                // Dropping the connection closes it and frees what it held.
                () = tracked.cut.cancelled() => break,
                () = wind_down(&tracked, &shutdown), if !winding_down => {
                    connection.as_mut().graceful_shutdown();
                    winding_down = true;
                }
            }
        }
    }
    drop(registered);
    drop(slot);
}

/// Completes when the connection should close once idle.
async fn wind_down(tracked: &Tracked, shutdown: &CancellationToken) {
    tokio::select! {
        () = tracked.wind_down.cancelled() => {}
        () = shutdown.cancelled() => {}
    }
}

/// The router as one connection's service: each request is counted on the connection
/// from its head to the end of its answer, its body tells when it has all arrived, and
/// its answer's bytes are counted as they are handed over.
fn tracked_service(
    router: Router,
    tracked: Arc<Tracked>,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Answer>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Answer>, Infallible>> + Send,
> + Clone {
    let inner = hyper_util::service::TowerToHyperService::new(router);
    hyper::service::service_fn(move |request: Request<Incoming>| {
        let guard = tracked.request_started(request.body().is_end_stream());
        let arriving = tracked.clone();
        let request = request.map(|body| Arriving {
            body,
            tracked: arriving,
            done: false,
        });
        let call = hyper::service::Service::call(&inner, request);
        async move {
            let response = call.await?;
            Ok(response.map(|body| Answer {
                body,
                request: guard,
            }))
        }
    })
}

/// A request's body, which tells its connection when it has all arrived.
struct Arriving {
    body: Incoming,
    tracked: Arc<Tracked>,
    done: bool,
}

impl Arriving {
    fn finish(&mut self) {
        if !self.done {
            self.done = true;
            self.tracked.body_arrived();
        }
    }
}

impl Body for Arriving {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) || self.body.is_end_stream() {
            self.finish();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Arriving {
    /// A body no longer read is no longer waited for.
    fn drop(&mut self) {
        self.finish();
    }
}

/// An answer's body, which counts its bytes on its connection as hyper takes them to
/// write, and ends its request when it is dropped (written, or given up).
struct Answer {
    body: axum::body::Body,
    request: RequestGuard,
}

impl Body for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.request.tracked().handed(data.len());
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
