//! Who holds the HTTP connection slots, and who gives one up (SPEC §10; issue 34 item 7).
//!
//! Every connection served is registered here with what it is doing: nothing (kept alive
//! between requests), receiving a request (its head or body still arriving), answering one,
//! and how much of its answers waits on its client. Two rules read it:
//!
//! - **A fresh client gets a slot.** When every one of the [`HTTP_CONNECTIONS`] slots is
//!   taken and another connection comes, one connection is chosen to close: an idle one
//!   first, the longest idle (closed as hyper closes a kept-alive connection at shutdown: at
//!   once, or after the request that has just begun on it); else the one that has waited
//!   longest on its client (a request still arriving, or an answer the client is not
//!   taking), closed at once; else the one busy the longest, closed at once. Another is
//!   chosen every [`HTTP_CROWD_CHECK`] until a slot is free.
//! - **Unread answers are bounded together.** The answers handed to connections and not yet
//!   taken whole by their clients are counted across all connections (a piece of an answer
//!   is held in memory until the client has taken all of it, whatever the kernel took of it
//!   meanwhile); past
//!   [`HTTP_UNREAD_ANSWERS_BYTES`], the answers whose clients have taken nothing of them for
//!   [`HTTP_PRESSED_WRITE_STALL`] are given up (their connections closed), the longest
//!   waiting first, until the rest fits. A client that keeps reading is never cut for it;
//!   each connection's own bound (`write_stall`) stands as before.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[cfg(doc)]
use crate::limits::{HTTP_CONNECTIONS, HTTP_CROWD_CHECK};
use crate::limits::{HTTP_PRESSED_WRITE_STALL, HTTP_UNREAD_ANSWERS_BYTES};

/// The connections being served.
#[derive(Default)]
pub(super) struct Crowd {
    open: Mutex<Vec<Arc<Tracked>>>,
    /// Answer bytes held for the clients (pieces handed to connections and not yet written
    /// whole), all together.
    unread: Arc<AtomicUsize>,
}

impl Crowd {
    fn open(&self) -> MutexGuard<'_, Vec<Arc<Tracked>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a connection just accepted: waiting on its client for a first request.
    pub(super) fn enter(&self) -> Arc<Tracked> {
        let tracked = Arc::new(Tracked {
            state: Mutex::new(Tracking {
                summary: State::accepted(Instant::now()),
                pieces: VecDeque::new(),
            }),
            unread: self.unread.clone(),
            cut: CancellationToken::new(),
            wind_down: CancellationToken::new(),
        });
        self.open().push(tracked.clone());
        tracked
    }

    /// Forgets a connection that has closed, with what it had not sent. An answer given up
    /// (or whose client went away) was freed in bulk: the memory goes back to the system
    /// soon ([`crate::memory::freed`]), as it does after sessions are evicted.
    pub(super) fn leave(&self, tracked: &Arc<Tracked>) {
        self.open().retain(|t| !Arc::ptr_eq(t, tracked));
        let held = {
            let mut state = tracked.state();
            state.pieces.clear();
            std::mem::take(&mut state.summary.held)
        };
        self.unread.fetch_sub(held, Ordering::Relaxed);
        if held > 0 {
            crate::memory::freed();
        }
    }

    /// Asks one more connection to close, for a client waiting for a slot; `false` when
    /// every connection is already closing.
    pub(super) fn make_room(&self) -> bool {
        let open = self.open();
        let states: Vec<State> = open.iter().map(|t| t.state().summary).collect();
        let Some((at, close)) = choose(&states) else {
            return false;
        };
        match close {
            Close::WhenIdle => open[at].close_when_idle(),
            Close::AtOnce => open[at].close_at_once(),
        }
        true
    }

    /// Gives up the answers nobody reads while the unread answers together pass their
    /// bound.
    pub(super) fn give_up_unread(&self, now: Instant) {
        let total = self.unread.load(Ordering::Relaxed);
        if total <= HTTP_UNREAD_ANSWERS_BYTES {
            return;
        }
        let open = self.open();
        let states: Vec<State> = open.iter().map(|t| t.state().summary).collect();
        for at in to_give_up(&states, total, now) {
            tracing::debug!(
                "an HTTP answer whose client took none of it was given up: the unread answers \
                 passed {} MiB",
                HTTP_UNREAD_ANSWERS_BYTES / (1024 * 1024)
            );
            open[at].close_at_once();
        }
    }
}

/// One connection as the crowd sees it, and how it is asked to close.
pub(super) struct Tracked {
    state: Mutex<Tracking>,
    unread: Arc<AtomicUsize>,
    /// Close now: the connection is dropped, whatever it was doing.
    pub(super) cut: CancellationToken,
    /// Close once idle (hyper's graceful shutdown of the connection).
    pub(super) wind_down: CancellationToken,
}

/// A connection's state, and the pieces of answers it holds.
struct Tracking {
    summary: State,
    /// Each piece handed to the connection and not yet written whole: its size and what is
    /// left of it to write.
    pieces: VecDeque<(usize, usize)>,
}

impl std::ops::Deref for Tracking {
    type Target = State;
    fn deref(&self) -> &State {
        &self.summary
    }
}

impl std::ops::DerefMut for Tracking {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.summary
    }
}

impl Tracked {
    fn state(&self) -> MutexGuard<'_, Tracking> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes came from the client: with no request in progress, a new one is arriving.
    pub(super) fn read(&self) {
        let mut state = self.state();
        if state.requests == 0 && state.arriving.is_none() {
            state.arriving = Some(Instant::now());
        }
    }

    /// A request reached the server (its head read); `body_ended`: it has no more to come.
    /// The request counts until the guard, held by its answer, is dropped.
    pub(super) fn request_started(self: &Arc<Self>, body_ended: bool) -> RequestGuard {
        let now = Instant::now();
        let mut state = self.state();
        state.requests += 1;
        if state.requests == 1 {
            state.since = now;
        }
        state.arriving = if body_ended {
            None
        } else {
            Some(state.arriving.unwrap_or(now))
        };
        RequestGuard(self.clone())
    }

    /// The request's body has all arrived (or is no longer read).
    pub(super) fn body_arrived(&self) {
        self.state().arriving = None;
    }

    /// A piece of an answer, `bytes` long, was handed to the connection to write: it is
    /// held in memory until all of it is written.
    pub(super) fn handed(&self, bytes: usize) {
        let mut state = self.state();
        state.pieces.push_back((bytes, bytes));
        state.held += bytes;
        self.unread.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The client took `bytes`, counted against the pieces in the order they were handed
    /// (the framing around them is counted too, which frees a piece a little early).
    pub(super) fn wrote(&self, bytes: usize) {
        let mut state = self.state();
        let mut left = bytes;
        let mut freed = 0;
        while left > 0
            && let Some((size, unwritten)) = state.pieces.front_mut()
        {
            let taken = left.min(*unwritten);
            *unwritten -= taken;
            left -= taken;
            if *unwritten == 0 {
                freed += *size;
                state.pieces.pop_front();
            }
        }
        state.held -= freed.min(state.held);
        self.unread.fetch_sub(freed, Ordering::Relaxed);
    }

    /// A write has waited on the client since `since` (`None`: it is taking its answer).
    pub(super) fn waiting(&self, since: Option<Instant>) {
        self.state().waiting = since;
    }

    fn close_at_once(&self) {
        self.state().closing = true;
        self.cut.cancel();
    }

    fn close_when_idle(&self) {
        self.state().closing = true;
        self.wind_down.cancel();
    }
}

/// A request in progress on its connection; dropped with its answer.
pub(super) struct RequestGuard(Arc<Tracked>);

impl RequestGuard {
    pub(super) fn tracked(&self) -> &Tracked {
        &self.0
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.requests = state.requests.saturating_sub(1);
        if state.requests == 0 {
            state.since = Instant::now();
        }
    }
}

/// What a connection is doing, as the choices read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    /// Requests read and not yet answered to the end.
    requests: usize,
    /// Since when it has been idle (no request), or busy with its oldest request.
    since: Instant,
    /// Since when a request's head or body has been arriving, while it has not all come.
    arriving: Option<Instant>,
    /// Since when a write has waited on a client that is not taking its answer.
    waiting: Option<Instant>,
    /// Answer bytes held for the client: pieces handed to it and not yet written whole.
    held: usize,
    /// Already asked to close.
    closing: bool,
}

impl State {
    /// A connection just accepted waits on its client for its first request, as one whose
    /// request is arriving does: it is not idle (a kept-alive connection between requests).
    fn accepted(now: Instant) -> State {
        State {
            arriving: Some(now),
            ..State::idle(now)
        }
    }

    fn idle(now: Instant) -> State {
        State {
            requests: 0,
            since: now,
            arriving: None,
            waiting: None,
            held: 0,
            closing: false,
        }
    }

    /// How readily it gives its slot up, most readily first, and since when.
    fn rank(&self) -> (Tier, Instant) {
        let on_client = match (self.arriving, self.waiting) {
            (Some(a), Some(w)) => Some(a.min(w)),
            (a, w) => a.or(w),
        };
        match on_client {
            Some(since) => (Tier::WaitingOnClient, since),
            None if self.requests == 0 && self.held == 0 => (Tier::Idle, self.since),
            None => (Tier::Busy, self.since),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Idle,
    WaitingOnClient,
    Busy,
}

/// How a connection chosen to make room is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    /// Kept alive with nothing to do: hyper's graceful shutdown closes it at once (or after
    /// the request that just began).
    WhenIdle,
    AtOnce,
}

/// The connection to close for a fresh client: the lowest tier, the longest in it.
fn choose(states: &[State]) -> Option<(usize, Close)> {
    let (at, (tier, _)) = states
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.closing)
        .map(|(at, s)| (at, s.rank()))
        .min_by_key(|(_, rank)| *rank)?;
    let close = match tier {
        Tier::Idle => Close::WhenIdle,
        Tier::WaitingOnClient | Tier::Busy => Close::AtOnce,
    };
    Some((at, close))
}

/// The connections whose unread answers to give up so that `total` fits its bound: those
/// whose clients took nothing for [`HTTP_PRESSED_WRITE_STALL`], the longest waiting first.
fn to_give_up(states: &[State], total: usize, now: Instant) -> Vec<usize> {
    let mut stalled: Vec<(Instant, usize)> = states
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.closing && s.held > 0)
        .filter_map(|(at, s)| {
            s.waiting
                .filter(|since| now.saturating_duration_since(*since) >= HTTP_PRESSED_WRITE_STALL)
                .map(|since| (since, at))
        })
        .collect();
    stalled.sort_unstable();
    let mut left = total;
    let mut chosen = Vec::new();
    for (_, at) in stalled {
        if left <= HTTP_UNREAD_ANSWERS_BYTES {
            break;
        }
        left = left.saturating_sub(states[at].held);
        chosen.push(at);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(base: Instant, secs: u64) -> Instant {
        base + Duration::from_secs(secs)
    }

    #[test]
    fn an_idle_connection_goes_first_then_one_waiting_on_its_client_then_the_oldest_busy() {
        let base = Instant::now();
        let busy = |since| State {
            requests: 1,
            ..State::idle(at(base, since))
        };
        let mut states = vec![
            busy(1),
            State {
                arriving: Some(at(base, 5)),
                ..busy(4)
            },
            State {
                waiting: Some(at(base, 3)),
                held: 10,
                ..busy(2)
            },
            State::idle(at(base, 8)),
            State::idle(at(base, 6)),
        ];
        assert_eq!(
            choose(&states),
            Some((4, Close::WhenIdle)),
            "the longest idle"
        );
        states[4].closing = true;
        assert_eq!(choose(&states), Some((3, Close::WhenIdle)));
        states[3].closing = true;
        assert_eq!(
            choose(&states),
            Some((2, Close::AtOnce)),
            "the longest waiting on its client"
        );
        states[2].closing = true;
        assert_eq!(choose(&states), Some((1, Close::AtOnce)));
        states[1].closing = true;
        assert_eq!(choose(&states), Some((0, Close::AtOnce)), "the oldest busy");
        states[0].closing = true;
        assert_eq!(choose(&states), None);
        // Done answering but with bytes still to write: not idle.
        let flushing = State {
            held: 5,
            ..State::idle(base)
        };
        assert_eq!(flushing.rank().0, Tier::Busy);
        // Just accepted, its first request not there yet: waiting on its client, so a
        // connection accepted for a fresh client is not closed for the next one before
        // older ones that wait on theirs.
        let older = State {
            arriving: Some(at(base, 1)),
            ..busy(0)
        };
        let fresh = State::accepted(at(base, 9));
        assert_eq!(fresh.rank(), (Tier::WaitingOnClient, at(base, 9)));
        assert_eq!(choose(&[fresh, older]), Some((1, Close::AtOnce)));
    }

    #[test]
    fn a_piece_of_an_answer_is_held_until_it_is_written_whole() {
        let crowd = Crowd::default();
        let tracked = crowd.enter();
        let held = || crowd.unread.load(Ordering::Relaxed);
        tracked.handed(100);
        tracked.handed(50);
        tracked.wrote(60);
        assert_eq!(held(), 150, "the first piece is not all written");
        tracked.wrote(40);
        assert_eq!(held(), 50);
        tracked.wrote(70);
        assert_eq!(
            held(),
            0,
            "more written than handed (framing) frees no more"
        );
        tracked.handed(30);
        crowd.leave(&tracked);
        assert_eq!(held(), 0, "a connection that closes holds nothing");
        assert!(crowd.open().is_empty());
    }

    #[test]
    fn unread_answers_are_given_up_the_longest_stalled_first_until_the_rest_fits() {
        let base = Instant::now();
        let now = at(base, 100);
        // Five answers of a third of the bound each: two must go.
        let piece = HTTP_UNREAD_ANSWERS_BYTES / 3;
        let unread = |held, since| State {
            requests: 1,
            waiting: Some(since),
            held,
            ..State::idle(base)
        };
        let states = vec![
            unread(piece, at(base, 50)),
            unread(piece, at(base, 10)),
            // Its client has taken nothing for less than the bound: it may be reading.
            unread(piece, now - HTTP_PRESSED_WRITE_STALL / 2),
            unread(piece, at(base, 30)),
            // Reading (not waiting): never given up.
            State {
                waiting: None,
                ..unread(piece, base)
            },
        ];
        let total = 5 * piece;
        assert_eq!(to_give_up(&states, total, now), [1, 3]);
        assert!(to_give_up(&states, HTTP_UNREAD_ANSWERS_BYTES, now).is_empty());
    }
}
