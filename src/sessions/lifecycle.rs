//! A run's lifecycle (SPEC §5, §4.2): from the moment its session is running with a permit
//! to the step that makes the session terminal and gives the permit back.
//!
//! A run opens its tools, runs the model loop, closes the tools, and carries on in the same
//! permit when input arrived as they closed. A stop is a handoff: the run ends where it is,
//! its session becomes terminal with its conversation, the stop's caller gets that record,
//! and only then are the run's children shut down, with a short grace. A bug (a panic)
//! still ends the session and frees its permit.
//!
//! The registry is reached only through [`RunHost`] (where tools come from, the run tasks,
//! retention), so this file does not know the manager and its tests drive runs against a
//! stand-in. The steps are named so later work has one place each: a check before every
//! provider request (a server-wide spend cap) goes into the [`RunContext`] of `one_pass`,
//! from the host; a run that parks on a question to its parent parks inside that pass; a
//! view of every session's transitions hears a run's end where [`finish`] wakes the waiters.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::{Arc, MutexGuard};

use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::hidden::{Hiding, hide_in_outcome};
use super::session::{RunSignals, Session, SessionState, Snapshot, Status, Totals, short_id};
use crate::error::{AgentError, ErrorCode};
use crate::limits::{
    CHILD_SHUTDOWN_TIMEOUT, DEADLINE_SHUTDOWN_GRACE, STOP_HANDOFF_BOUND, STOP_SHUTDOWN_GRACE,
};
use crate::providers::{Conversation, ProviderClient};
use crate::run::{
    Activity, Failure, RunContext, RunLimits, RunObserver, RunOutcome, Spent, partial_result,
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

/// Tells a running session's run to stop (SPEC §4.2 `stop`) with `reason`, unless a stop is
/// under way already; returns the number of the run to wait for ([`until_stopped`]).
pub(super) fn request_stop(state: &mut SessionState, reason: Option<&str>) -> u64 {
    if state.stopping.is_none() {
        let reason = reason.map(str::trim).unwrap_or_default();
        state.stopping = Some(reason.to_owned());
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
        let outcome = if stopped.is_none() {
            hide_in_outcome(outcome, secrets)
        } else {
            outcome
        };
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
    let context = RunContext {
        provider,
        system: &session.system,
        tools: tools.as_ref(),
        inbox: session,
        observer: &observer,
        interrupts: run.interrupts.clone(),
        cancel: run.signals.cancel.clone(),
        limits: run.limits,
        spent: spent_since(&run.before, &session.lock().totals),
        output_schema: definition.output_schema.as_ref(),
    };
    let outcome = run_model_loop(&mut run.conversation, context).await;
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
    Run {
        conversation,
        interrupts: state.interrupt.subscribe(),
        before: state.totals,
        signals: state.run.clone(),
        limits: RunLimits {
            max_turns: definition.max_turns,
            budget: definition.budget,
            started: Instant::now(),
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
    state.recency = host.next_recency();
    state.permit = None;
    if state.stopping.is_some() {
        // What the stop answers, as of now: input may resume the session before the
        // stop's caller looks.
        let record = session.snapshot_of(&state, *session.subscribe().borrow());
        state.stop_record = Some((state.runs, record));
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

/// The terminal status a run's outcome gives its session; a cancelled run was stopped by
/// the parent (`stopping`, with its reason) or by the server shutting down.
fn terminal_status(outcome: RunOutcome, stopping: Option<&str>) -> Status {
    match outcome {
        RunOutcome::Completed(answer) => Status::Completed(answer),
        RunOutcome::Failed(failure) => Status::Failed(failure),
        RunOutcome::Cancelled { partial_result } => {
            let error = match stopping {
                Some(reason) => AgentError::new(ErrorCode::Cancelled, stopped_message(reason)),
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

/// The message of a run the parent stopped (SPEC §4.2, §11 `cancelled`).
fn stopped_message(reason: &str) -> String {
    if reason.is_empty() {
        "stopped by the parent".to_owned()
    } else {
        format!("stopped by the parent: {reason}")
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
