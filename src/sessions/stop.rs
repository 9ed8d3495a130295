//! The stop handoff (SPEC §4.2 `stop`): asking a running session's run to stop, waiting for
//! the record it ends with, and the terminal status a cancelled run gives its session. The
//! run's side of the handoff (terminal first, then its children closed) is `lifecycle`'s.

use super::session::{Session, SessionState, Snapshot, Status, short_id};
use crate::error::{AgentError, ErrorCode};
use crate::limits::{STOP_HANDOFF_BOUND, STOP_REASON_BYTES};
use crate::run::{Failure, RunOutcome};

/// Tells a running session's run to stop (SPEC §4.2 `stop`), its record's error to read
/// `message` (the parent's words through [`stopped_message`], or a watcher's), unless a stop
/// is under way already; returns the number of the run to wait for ([`until_stopped`]).
pub(super) fn request_stop(state: &mut SessionState, message: String) -> u64 {
    if state.stopping.is_none() {
        state.stopping = Some(message);
        state.run.stopped.cancel();
        state.run.cancel.cancel();
    }
    state.runs
}

/// Waits until `session`'s run number `run`, which is being stopped, has ended (at most
/// [`STOP_HANDOFF_BOUND`]; the run answers its cancellation at once), and returns the
/// record it ended with.
pub(super) async fn until_stopped(session: &Session, run: u64) -> Result<Snapshot, AgentError> {
    let mut changes = session.subscribe();
    let stopped = tokio::time::timeout(STOP_HANDOFF_BOUND, async {
        loop {
            if let Some((ended, record)) = &session.lock().stop_record
                && *ended == run
            {
                return record.clone();
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    })
    .await;
    stopped.map_err(|_| {
        AgentError::new(
            ErrorCode::Internal,
            format!(
                "agent {} was told to stop but its run did not end within {} ms (a bug); it \
                 stops as soon as it can, and wait_agent shows when it has",
                short_id(&session.id),
                STOP_HANDOFF_BOUND.as_millis()
            ),
        )
    })
}

/// The terminal status a run's outcome gives its session; a cancelled run was stopped by
/// the parent or a watcher (`stopping`, with the record's message) or by the server shutting
/// down.
pub(super) fn terminal_status(outcome: RunOutcome, stopping: Option<&str>) -> Status {
    match outcome {
        RunOutcome::Completed(answer) => Status::Completed(answer),
        RunOutcome::Failed(failure) => Status::Failed(failure),
        RunOutcome::Cancelled { partial_result } => {
            let error = match stopping {
                Some(message) => AgentError::new(ErrorCode::Cancelled, message),
                None => AgentError::new(
                    ErrorCode::Internal,
                    "the run was cancelled because the server is shutting down (not a bug)",
                ),
            };
            Status::Failed(Failure {
                error,
                partial_result,
            })
        }
    }
}

/// The message of a run the parent stopped (SPEC §4.2, §11 `cancelled`), from its reason
/// (trimmed; none or empty says only who stopped it).
pub(super) fn stopped_message(reason: Option<&str>) -> String {
    // Kept, and shown in every later record: cut to a bound (SPEC §12).
    let reason = crate::text::shorten(reason.map(str::trim).unwrap_or_default(), STOP_REASON_BYTES);
    if reason.is_empty() {
        "stopped by the parent".to_owned()
    } else {
        format!("stopped by the parent: {reason}")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::time::Instant;

    use super::*;
    use crate::definition::WireApi;
    use crate::testkit::mock_definition;

    fn session() -> Session {
        let url = url::Url::parse("http://127.0.0.1:9/v1").unwrap();
        let definition = Arc::new(mock_definition(WireApi::Responses, url));
        Session::new("a".repeat(32), definition, String::new(), "t".into(), 1)
    }

    #[tokio::test]
    async fn a_stop_keeps_its_first_reason_trimmed_and_cancels_the_run() {
        let s = session();
        let signals = s.lock().run.clone();
        assert_eq!(
            request_stop(&mut s.lock(), stopped_message(Some("  enough  "))),
            1
        );
        assert_eq!(
            request_stop(&mut s.lock(), stopped_message(Some("other"))),
            1
        );
        assert_eq!(
            s.lock().stopping.as_deref(),
            Some("stopped by the parent: enough")
        );
        assert!(signals.cancel.is_cancelled() && signals.stopped.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_never_handed_off_gives_up_at_its_bound_and_an_old_record_does_not_answer() {
        let s = session();
        let record = s.snapshot();
        {
            let mut state = s.lock();
            state.stopping = Some(String::new());
            state.stop_record = Some((1, record.clone()));
            state.runs = 2;
        }
        let asked = Instant::now();
        let error = until_stopped(&s, 2).await.unwrap_err();
        assert_eq!(asked.elapsed(), STOP_HANDOFF_BOUND);
        assert_eq!(error.code, ErrorCode::Internal);
        assert!(error.message.contains("did not end within 1000 ms"));
        assert_eq!(until_stopped(&s, 1).await.unwrap(), record);
    }

    #[tokio::test]
    async fn the_record_a_run_ends_with_answers_the_stop_waiting_for_it() {
        let s = Arc::new(session());
        let run = request_stop(&mut s.lock(), stopped_message(None));
        let waiting = tokio::spawn({
            let s = s.clone();
            async move { until_stopped(&s, run).await }
        });
        tokio::task::yield_now().await;
        let record = s.snapshot();
        s.lock().stop_record = Some((run, record.clone()));
        s.notify();
        assert_eq!(waiting.await.unwrap().unwrap(), record);
    }

    #[test]
    fn a_cancelled_run_says_who_cancelled_it() {
        let cancelled = || RunOutcome::Cancelled {
            partial_result: Some("so far".into()),
        };
        let message = |stopping| match terminal_status(cancelled(), stopping) {
            Status::Failed(f) => (f.error.code, f.error.message, f.partial_result),
            other => panic!("{other:?}"),
        };
        let so_far = Some("so far".to_owned());
        let by_parent = (
            ErrorCode::Cancelled,
            "stopped by the parent".to_owned(),
            so_far,
        );
        let (plain, why) = (stopped_message(Some("")), stopped_message(Some(" why ")));
        assert_eq!(message(Some(plain.as_str())), by_parent);
        assert_eq!(message(Some(why.as_str())).1, "stopped by the parent: why");
        let watched = message(Some("stopped from mcp-agents watch"));
        assert_eq!(watched.1, "stopped from mcp-agents watch");
        assert_eq!(message(None).0, ErrorCode::Internal);
        let answer = RunOutcome::Completed("Done.".into());
        assert_eq!(
            terminal_status(answer, Some("late")),
            Status::Completed("Done.".into())
        );
    }
}
