//! A run's lifecycle (SPEC §5, §4.2): from the moment its session is running with a permit
//! to the step that makes the session terminal and gives the permit back.
//!
//! A run opens its tools, runs the model loop, closes the tools, and carries on in the same
//! permit when input arrived as they closed. When the parent stops it (`stop` asks and waits
//! for the record), the run ends where it is, its session becomes terminal with its
//! conversation, and only then are its children shut down, with a short grace. A bug (a
//! panic) still ends the session and frees its permit.
//!
//! The registry is reached only through [`RunHost`] (where tools come from, the run tasks,
//! retention), so this file does not know the manager, and its tests drive runs against a
//! stand-in. Each step has its own function, so later work has one place: a check before
//! every provider request (a server-wide spend cap) goes into the [`RunContext`] that
//! `one_pass` builds, from the host; a run that may ask its parent gets `ask_parent` next to
//! its tools there (`ask`), parks inside the pass, and the pass keeps the deadline its
//! waiting moved; a view of every session's transitions hears a run's end in `finish`,
//! which wakes the waiters.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ask::WithParent;
use super::hidden::{Hiding, hide_in_outcome};
use super::session::{RunSignals, Session, SessionState, Status, Totals};
use super::stop::terminal_status;
use crate::error::{AgentError, ErrorCode};
use crate::limits::{CHILD_SHUTDOWN_TIMEOUT, DEADLINE_SHUTDOWN_GRACE, STOP_SHUTDOWN_GRACE};
use crate::providers::{Conversation, ProviderClient};
use crate::run::{
    Activity, RunContext, RunLimits, RunObserver, RunOutcome, Spent, partial_result,
    run_model_loop, until,
};
use crate::toolbox::{RunTools, ToolsFactory};

/// What a run needs from the registry that holds its session.
pub(super) trait RunHost: Send + Sync + 'static {
    /// Opens a run's tools.
    fn tools(&self) -> &dyn ToolsFactory;
    /// The directory the tools serve.
    fn workspace(&self) -> &Path;
    /// The run tasks, which a shutdown waits for.
    fn tasks(&self) -> &TaskTracker;
    /// The recency of a session that is used now (SPEC §5 retention).
    fn next_recency(&self) -> u64;
    /// A session has just become terminal and given its permit back: the retention limit
    /// applies before its waiters wake.
    fn ended(&self);
}

/// Starts `session`'s run as a task of `host`; the session is running and holds its permit.
pub(super) fn start_run(host: Arc<dyn RunHost>, session: Arc<Session>, provider: ProviderClient) {
    let tasks = host.tasks().clone();
    tasks.spawn(async move {
        let run = AssertUnwindSafe(drive(host.as_ref(), &session, provider));
        if run.catch_unwind().await.is_err() {
            // A bug ended the run. The session still becomes terminal and gives its
            // permit back, or it would look busy forever and hold one of the 8 permits.
            // The panic's own message went to stderr through the panic hook; it is not
            // repeated here, because it can quote the text being handled.
            let failure = AgentError::new(
                ErrorCode::Internal,
                "a bug in mcp-agents stopped this run (a panic, reported on the server's \
                 stderr); its conversation is lost, so a resume starts afresh",
            );
            let state = session.lock();
            finish(
                host.as_ref(),
                &session,
                state,
                Status::Failed(failure.into()),
                None,
            );
        }
    });
}

/// Makes a terminal session (whose `state` the caller holds) running again for a new run,
/// in `permit`: the run's own signals, the last stop forgotten, the run counted.
pub(super) fn resume(
    state: &mut SessionState,
    permit: OwnedSemaphorePermit,
    shutdown: &CancellationToken,
    spawned_at: Instant,
) {
    state.status = Status::Running;
    state.permit = Some(permit);
    state.run = RunSignals::new(shutdown);
    state.stopping = None;
    state.runs += 1;
    state.ended_at = None;
    state.set_activity(Activity::starting(), spawned_at);
}

/// What a run holds from its start to its end.
struct Run {
    conversation: Conversation,
    interrupts: watch::Receiver<u64>,
    /// The session's totals before the run: what it spends counts from there.
    before: Totals,
    signals: RunSignals,
    limits: RunLimits,
    /// The answer of the run so far, when input that came as it closed carried it on.
    earlier_answer: Option<String>,
}

/// How one pass (tools opened, the loop run, tools closed) ended.
enum Pass {
    /// With this outcome, the tools closed (or never opened).
    Ended(RunOutcome),
    /// The parent stopped the run: the tools close after the session is terminal.
    Stopped(RunOutcome, Box<dyn RunTools>),
}

/// One run, from opening tools to the terminal state; reopens and carries on if input
/// arrived while it was closing (the same run: its limits hold across).
async fn drive(host: &dyn RunHost, session: &Session, provider: ProviderClient) {
    let mut run = take_for_run(session);
    let secrets = provider.secrets();
    loop {
        let pass = one_pass(host, session, &provider, &mut run).await;
        let (outcome, stopped) = match pass {
            Pass::Ended(outcome) => (outcome, None),
            Pass::Stopped(outcome, tools) => (outcome, Some(tools)),
        };
        let outcome = with_earlier_answer(outcome, &mut run.earlier_answer);
        let outcome = hide_in_outcome(outcome, secrets);
        {
            // One guard from this check to the terminal state: input accepted in between
            // would otherwise be left queued on a finished session.
            let state = session.lock();
            if stopped.is_none()
                && let RunOutcome::Completed(answer) = &outcome
                && !state.queue.is_empty()
                && !run.signals.cancel.is_cancelled()
            {
                // Input queued while the run was closing: carry on in the same permit.
                run.earlier_answer = partial_result(&answer.text, secrets);
                continue;
            }
            let status = terminal_status(outcome, state.stopping.as_deref());
            finish(host, session, state, status, Some(run.conversation));
        }
        if let Some(tools) = stopped {
            // Stopped: terminal first (the permit free, the stop answered), then the
            // children, quickly.
            tools.shutdown(STOP_SHUTDOWN_GRACE).await;
        }
        return;
    }
}

/// Opens the tools, runs the model loop, and closes the tools unless the parent stopped
/// the run. A stop or a shutdown cancels through the loop, which answers any unanswered
/// tool call, so the history stays valid.
async fn one_pass(
    host: &dyn RunHost,
    session: &Session,
    provider: &ProviderClient,
    run: &mut Run,
) -> Pass {
    let tools = match open_tools(host, session, &run.limits, &run.signals).await {
        Ok(tools) => tools,
        Err(outcome) => return Pass::Ended(outcome),
    };
    let definition = &session.definition;
    let observer = Hiding {
        observer: session,
        secrets: provider.secrets(),
    };
    // An agent that may ask its parent gets `ask_parent` next to its child tools.
    let with_parent = definition
        .ask_parent
        .map(|ask| WithParent::new(tools.as_ref(), session, ask, provider.secrets()));
    let context = RunContext {
        provider,
        system: &session.system,
        tools: match &with_parent {
            Some(with_parent) => with_parent,
            None => tools.as_ref(),
        },
        inbox: session,
        observer: &observer,
        interrupts: run.interrupts.clone(),
        cancel: run.signals.cancel.clone(),
        limits: run.limits,
        spent: spent_since(&run.before, &session.lock().totals),
        output_schema: definition.output_schema.as_ref(),
    };
    let outcome = run_model_loop(&mut run.conversation, context).await;
    drop(with_parent);
    // The deadline moved by the time the run waited for its parent (SPEC §4.5).
    run.limits.parked = session.lock().parked;
    if run.signals.stopped.is_cancelled() {
        return Pass::Stopped(outcome, tools);
    }
    close_tools(session, tools, &run.limits, &run.signals).await;
    Pass::Ended(outcome)
}

/// What a run takes from its session as it starts: the conversation (a fresh one for the
/// first run), its interrupts, the totals before it, and its cancellation; its limits
/// count from now.
fn take_for_run(session: &Session) -> Run {
    let definition = &session.definition;
    let mut state = session.lock();
    let conversation = state
        .conversation
        .take()
        .unwrap_or_else(|| Conversation::new(definition.provider.wire_api));
    state.parked = Duration::ZERO;
    // Each run asks the definition's model first (SPEC §5.1).
    state.fallback_model = None;
    state.model_attempts.clear();
    Run {
        conversation,
        interrupts: state.interrupt.subscribe(),
        before: state.totals,
        signals: state.run.clone(),
        limits: RunLimits {
            max_turns: definition.max_turns,
            budget: definition.budget,
            started: Instant::now(),
            parked: Duration::ZERO,
        },
        earlier_answer: None,
    }
}

/// Starts the run's child servers, reported as activity. A stop or a shutdown during
/// startup drops the startup, which kills the children already started (their guards),
/// instead of waiting for it to finish; `max_run_seconds` bounds the startup the same
/// way.
async fn open_tools(
    host: &dyn RunHost,
    session: &Session,
    limits: &RunLimits,
    signals: &RunSignals,
) -> Result<Box<dyn RunTools>, RunOutcome> {
    let definition = &session.definition;
    if let Some(starting) = Activity::child_startup(definition) {
        session.activity(limits.bounded(starting));
    }
    tokio::select! {
        opened = host.tools().open(definition, host.workspace()) => {
            opened.map_err(|e| RunOutcome::Failed(e.into()))
        }
        () = signals.cancel.cancelled() => Err(RunOutcome::Cancelled { partial_result: None }),
        () = until(limits.deadline()) => Err(RunOutcome::Failed(
            limits.out_of_time("its MCP servers were still starting").into(),
        )),
    }
}

/// Shuts a run's child servers down. Past `max_run_seconds` the children get a short grace,
/// not the whole shutdown bound, before they are killed: the run fails within a second of
/// its limit. A stop while they close kills what is left at once (dropping the shutdown
/// drops the connections, whose guards kill their process groups).
async fn close_tools(
    session: &Session,
    tools: Box<dyn RunTools>,
    limits: &RunLimits,
    signals: &RunSignals,
) {
    let bound = if limits.deadline().is_some_and(|d| Instant::now() >= d) {
        DEADLINE_SHUTDOWN_GRACE
    } else {
        CHILD_SHUTDOWN_TIMEOUT
    };
    if !session.definition.mcp_servers.is_empty() {
        let mut closing = Activity::child_shutdown();
        closing.timeout = Some(bound);
        session.activity(closing);
    }
    tokio::select! {
        () = tools.shutdown(bound) => {}
        () = signals.stopped.cancelled() => {}
    }
}

/// Makes `session` (whose `state` the caller holds) terminal: gives its permit back in
/// the same step, then applies the retention limit, then wakes its waiters.
fn finish(
    host: &dyn RunHost,
    session: &Session,
    mut state: MutexGuard<'_, SessionState>,
    status: Status,
    conversation: Option<Conversation>,
) {
    state.status = status;
    state.conversation = conversation;
    state.ended_at = Some(Instant::now());
    state.activity = None;
    state.question = None;
    state.recency = host.next_recency();
    state.permit = None;
    let first_run = state.first_run_end.is_none();
    if state.stopping.is_some() || first_run {
        // What the stop answers, and what an MCP task answers for good once its (first)
        // run has ended, as of now: input may resume the session before either looks.
        let record = session.snapshot_of(&state, *session.subscribe().borrow());
        if first_run {
            state.first_run_end = Some(record.clone());
        }
        if state.stopping.is_some() {
            state.stop_record = Some((state.runs, record));
        }
    }
    drop(state);
    // Evicting before waking the waiters: whoever sees this session finish also sees
    // the retention limit already applied.
    host.ended();
    session.notify();
}

/// A failure in a run that carried on after input keeps the answer before it.
fn with_earlier_answer(outcome: RunOutcome, earlier_answer: &mut Option<String>) -> RunOutcome {
    match outcome {
        RunOutcome::Failed(mut failure) if failure.partial_result.is_none() => {
            failure.partial_result = earlier_answer.take();
            RunOutcome::Failed(failure)
        }
        RunOutcome::Cancelled {
            partial_result: None,
        } => RunOutcome::Cancelled {
            partial_result: earlier_answer.take(),
        },
        other => other,
    }
}

/// What a run spent between two readings of its session's totals.
fn spent_since(before: &Totals, now: &Totals) -> Spent {
    let tokens = |t: &Totals| t.input_tokens.saturating_add(t.output_tokens);
    Spent {
        turns: now.turns.saturating_sub(before.turns),
        tool_calls: u32::try_from(now.tool_calls.saturating_sub(before.tool_calls))
            .unwrap_or(u32::MAX),
        tokens: tokens(now).saturating_sub(tokens(before)),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use serde_json::json;

    use super::*;
    use crate::run::Phase;
    use crate::sessions::Snapshot;
    use crate::sessions::run_harness::{Harness, KEY, Open, failure};
    use crate::sessions::stop::{request_stop, stopped_message, until_stopped};
    use crate::testkit::Step;

    #[tokio::test(start_paused = true)]
    async fn a_completed_run_is_terminal_with_its_permit_back_and_retention_applied() {
        let h = Harness::new(Open::Now, None, vec![Step::text("Done.")]).await;
        h.start();
        let done = h.terminal().await;
        assert_eq!(done.status, Status::Completed("Done.".into()));
        // In the step it became terminal: its permit back, retention applied, its
        // conversation kept for a resume.
        assert_eq!(h.permits.available_permits(), 1);
        assert_eq!(h.ended(), 1);
        {
            let state = h.session.lock();
            assert!(state.permit.is_none() && state.activity.is_none());
            assert!(state.conversation.is_some());
            assert_eq!(state.recency, h.host.recency.load(Ordering::SeqCst));
            assert!(state.stop_record.is_none());
        }
        h.tasks_ended().await;
        assert_eq!(h.log().shutdowns(), [(CHILD_SHUTDOWN_TIMEOUT, true)]);
        use Phase::*;
        let phases = [Starting, ChildMcpStartup, ProviderRequest, ChildMcpShutdown];
        assert_eq!(h.phases(), phases);
        assert!(h.last_request().contains("The task."));
    }

    /// Starts a run that calls the tool, queues input during the call, and stops it.
    async fn stopped_during_a_tool_call(h: &Harness) -> Result<Snapshot, AgentError> {
        h.start();
        h.log().called.notified().await;
        h.session
            .lock()
            .queue
            .push_back("Queued before the stop.".into());
        let run = request_stop(&mut h.session.lock(), stopped_message(Some("  enough  ")));
        assert_eq!(run, 1);
        until_stopped(&h.session, run).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_is_answered_with_the_terminal_record_before_the_children_close() {
        let call = Step::tool_call("test__wait", json!({}));
        let h = Harness::new(Open::Now, None, vec![call]).await;
        let slow_to_exit = h.log().hold.lock().await;
        let record = stopped_during_a_tool_call(&h).await.unwrap();
        let error = &failure(&record.status).error;
        assert_eq!(error.code, ErrorCode::Cancelled);
        assert_eq!(error.message, "stopped by the parent: enough");
        assert_eq!(record.queued, 1, "the queued input waits for a resume");
        assert_eq!(h.permits.available_permits(), 1);
        assert!(h.log().shutdowns().iter().all(|(_, ended)| !ended));
        drop(slow_to_exit);
        h.tasks_ended().await;
        assert_eq!(h.log().shutdowns(), [(STOP_SHUTDOWN_GRACE, true)]);
        assert_eq!(h.ended(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_resume_after_a_stop_delivers_the_queued_input_on_the_whole_history() {
        let call = Step::tool_call("test__wait", json!({}));
        let h = Harness::new(Open::Now, None, vec![call, Step::text("Resumed.")]).await;
        let stopped = stopped_during_a_tool_call(&h).await.unwrap();
        let permit = h.permits.clone().try_acquire_owned().unwrap();
        let spawned_at = h.session.spawned_at;
        resume(&mut h.session.lock(), permit, &h.shutdown, spawned_at);
        h.start();
        let done = h.terminal().await;
        assert_eq!(done.status, Status::Completed("Resumed.".into()));
        let first = h.session.first_run();
        assert_eq!(
            first.record, stopped,
            "an MCP task answers its first run's end for good"
        );
        assert_eq!(first.updated, first.created + stopped.total_elapsed);
        assert_eq!(done.queued, 0);
        let state = h.session.lock();
        assert_eq!((state.runs, state.stopping.as_deref()), (2, None));
        drop(state);
        let body = h.last_request();
        let task = body.find("The task.").unwrap();
        assert!(body.contains("function_call_output"), "{body}");
        assert!(task < body.find("Queued before the stop.").unwrap());
        assert_eq!(h.permits.available_permits(), 1);
    }

    /// A run whose first answer comes with input arriving as its tools close, then `next`.
    async fn carried_on(next: Step) -> (Harness, Snapshot) {
        let h = Harness::new(Open::Now, None, vec![Step::text("First."), next]).await;
        let slow_to_exit = h.log().hold.lock().await;
        h.start();
        h.log().closing.notified().await;
        h.session.lock().queue.push_back("One more thing.".into());
        assert_eq!(h.permits.available_permits(), 0, "still running");
        drop(slow_to_exit);
        let done = h.terminal().await;
        assert_eq!(h.host.log.opened.load(Ordering::SeqCst), 2, "reopened");
        assert_eq!(h.ended(), 1, "one run, one end");
        assert!(h.last_request().contains("One more thing."));
        (h, done)
    }

    #[tokio::test(start_paused = true)]
    async fn input_that_arrives_as_the_tools_close_carries_the_run_on() {
        let (h, done) = carried_on(Step::text("Second.")).await;
        assert_eq!(done.status, Status::Completed("Second.".into()));
        let first = h.session.first_run().record;
        assert_eq!(first.status, done.status, "the same run, carried on");
        let refused = Step::openai_error(400, "invalid_request_error", None, "refused");
        let (_h, failed) = carried_on(refused).await;
        let failed = failure(&failed.status);
        assert_eq!(failed.error.code, ErrorCode::ProviderError);
        assert_eq!(failed.partial_result.as_deref(), Some("First."));
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_that_ends_as_a_stop_lands_still_has_its_secrets_hidden() {
        let echo = Step::text(&format!("The key is {KEY}."));
        let h = Harness::new(Open::Now, None, vec![echo]).await;
        // The stop is seen only after the loop has answered (it never saw the cancel).
        h.session.lock().run.stopped.cancel();
        h.start();
        let done = h.terminal().await;
        assert_eq!(
            done.status,
            Status::Completed("The key is [redacted].".into())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_panic_fails_the_session_and_gives_its_permit_back() {
        let h = Harness::new(Open::Panics, None, vec![]).await;
        h.start();
        let done = h.terminal().await;
        let error = &failure(&done.status).error;
        assert_eq!(error.code, ErrorCode::Internal);
        assert!(
            !error.message.contains("while opening"),
            "{}",
            error.message
        );
        assert_eq!((h.permits.available_permits(), h.ended()), (1, 1));
        assert!(h.session.lock().conversation.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn max_run_seconds_bounds_the_startup_and_shortens_the_closing() {
        let h = Harness::new(Open::Never, Some(2), vec![]).await;
        h.start();
        let done = h.terminal().await;
        let error = &failure(&done.status).error;
        assert_eq!(error.code, ErrorCode::BudgetExceeded);
        assert!(error.message.contains("were still starting"), "{error:?}");
        assert_eq!(done.total_elapsed, Duration::from_secs(2));
        let (transitions, _) = h.session.transitions_after(0);
        assert_eq!(
            transitions[1].activity.timeout,
            Some(Duration::from_secs(2))
        );

        let call = Step::tool_call("test__wait", json!({}));
        let h = Harness::new(Open::Now, Some(2), vec![call]).await;
        h.start();
        let done = h.terminal().await;
        assert_eq!(failure(&done.status).error.code, ErrorCode::BudgetExceeded);
        assert_eq!(h.log().shutdowns(), [(DEADLINE_SHUTDOWN_GRACE, true)]);
        let (transitions, _) = h.session.transitions_after(0);
        let closing = &transitions.last().unwrap().activity;
        assert_eq!(closing.phase, Phase::ChildMcpShutdown);
        assert_eq!(closing.timeout, Some(DEADLINE_SHUTDOWN_GRACE));
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_shutdown_is_no_stop_and_no_bug_of_the_run() {
        let call = Step::tool_call("test__wait", json!({}));
        let h = Harness::new(Open::Now, None, vec![call]).await;
        h.start();
        h.log().called.notified().await;
        h.shutdown.cancel();
        let done = h.terminal().await;
        let error = &failure(&done.status).error;
        assert_eq!(error.code, ErrorCode::Internal);
        assert!(error.message.contains("shutting down (not a bug)"));
        assert!(h.session.lock().stop_record.is_none());
        h.tasks_ended().await;
        assert_eq!(h.log().shutdowns(), [(CHILD_SHUTDOWN_TIMEOUT, true)]);
    }
}
