//! What a session keeps for watchers from outside (SPEC §7.1): the bell every session of a
//! manager rings with each change, and its latest tool calls with how long each took
//! (names only, never arguments). `watchers` reads them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::limits::TOOL_CALL_HISTORY;
use crate::run::{Activity, Phase};

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

    /// A listener to the bell, woken by the next ring.
    pub(crate) fn listen(&self) -> watch::Receiver<u64> {
        self.0.subscribe()
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
