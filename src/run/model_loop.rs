//! The model loop of one run (SPEC §6), independent of MCP: it asks the provider for a
//! reply, runs the tools the reply asks for, and repeats until a reply asks for none.
//!
//! What the loop is given ([`RunContext`]):
//! - the provider client (with the key read for this run) and the system context;
//! - the tools, behind [`ToolBox`] (`crate::toolbox`), so tests can pass in-process tools
//!   and the child MCP layer can plug in its own;
//! - an [`Inbox`] of queued user input, delivered in order at each request boundary (after
//!   any pending tool results);
//! - an interrupt signal: a change of its value abandons the request or tool call in flight,
//!   answers every unanswered tool call with an "interrupted" result so the history stays
//!   valid, and carries on with the queued input;
//! - a cancellation token that ends the run the same way, without carrying on;
//! - the run's limits ([`RunLimits`]: `max_turns` and the budget, `budget`) and the
//!   agent's `output_schema`;
//! - a [`RunObserver`] for activity transitions, usage and tool calls.
//!
//! The tool calls of one reply run concurrently (`tool_round`). A reply without tool calls
//! ends the run; with `output_schema` its text must be JSON that satisfies the schema, and
//! an answer that does not gets one more turn with the errors (`answer`). A refusal ends
//! the run as a completed answer marked `refused`. A failure keeps the last assistant
//! text of the run as its partial result.
//!
//! A reply cut off by its output limit (SPEC §6.1 "Output length") goes on in a user turn
//! that asks the model to continue where it stopped, never by sending history that ends
//! with the assistant's turn; a tool call the limit cut off is answered with an error result
//! and never run.

use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::activity::Activity;
use super::answer::{Checked, check, invalid_output, repair_request};
use super::budget::out_of_tokens_result;
use super::fallback::Models;
use super::tool_round::{ArgumentSchemas, Round, RoundEnd, interrupted, run_round, until};
use crate::definition::CompiledSchema;
use crate::error::AgentError;
use crate::limits::OUTPUT_REPAIR_TURNS;
use crate::providers::{
    Conversation, ProviderClient, ProviderError, ProviderFailure, Reply, RequestEvents,
    RetryNotice, StopReason, ToolCall, ToolList, ToolOutput,
};
use crate::toolbox::{ToolBox, ToolSpec};

use super::budget::{RunLimits, Spent};
use super::observer::{Inbox, RunObserver, UsageDelta};
use super::outcome::{Answer, Failure, RunOutcome, partial_result};

/// Everything one run needs besides the conversation.
pub struct RunContext<'a> {
    pub provider: &'a ProviderClient,
    pub system: &'a str,
    pub tools: &'a dyn ToolBox,
    pub inbox: &'a dyn Inbox,
    pub observer: &'a dyn RunObserver,
    /// Bumped by the session on `send_input` with `interrupt: true`.
    pub interrupts: watch::Receiver<u64>,
    pub cancel: CancellationToken,
    pub limits: RunLimits,
    /// What this run spent before (a run that carries on after input arrived while it was
    /// closing); it counts against the limits.
    pub spent: Spent,
    /// The JSON Schema the final answer must satisfy.
    pub output_schema: Option<&'a CompiledSchema>,
}

/// The user turn that continues a reply the output limit cut off.
pub(super) fn continue_after_cut_off(limit: u32) -> String {
    format!(
        "Your reply was cut off: it reached the output limit of {limit} tokens. Continue \
         exactly where it stopped, without repeating anything already written."
    )
}

/// The `context_limit` of a conversation that a cut-off reply filled: the model wrote until
/// the context window was full (a small local model may, without a limit of its own), so the
/// next request could not fit; a narrower task would not have helped.
pub(super) fn reply_filled_the_window(quoted: &str, limit: u32) -> AgentError {
    AgentError::new(
        crate::error::ErrorCode::ContextLimit,
        format!(
            "{quoted}; the model's last reply ran on until it filled the context window (it \
             was cut off, and the conversation with it no longer fits). Give the agent a \
             `max_output_tokens` well below the model's context window (its reply limit is \
             {limit} tokens now), so that a reply ends before the window is full"
        ),
    )
}

/// Reports one request's retries and the start of its reply as activity.
struct TurnEvents<'a> {
    observer: &'a dyn RunObserver,
    limits: &'a RunLimits,
    waiting: Activity,
    provider: &'a ProviderClient,
    turn: u32,
    max_turns: u32,
}

impl RequestEvents for TurnEvents<'_> {
    fn retrying(&self, notice: &RetryNotice) {
        let waiting = &self.waiting;
        let mut retrying = waiting.clone();
        // The operation now lasts through the pause and the next attempt's bound.
        retrying.timeout = waiting.timeout.map(|bound| bound + notice.delay);
        retrying.summary = if notice.requested {
            // The provider set the pause: say how long, and why, first.
            let why = if notice.rate_limited() {
                format!("rate limited by {}", self.provider.label())
            } else {
                format!("asked by {} after {}", self.provider.label(), notice.reason)
            };
            format!(
                "Waiting {}: {why} (retry {} of {}, turn {} of {})",
                seconds(notice.delay),
                notice.retry,
                notice.max_retries,
                self.turn,
                self.max_turns
            )
        } else {
            format!(
                "{} (retry {} of {} after {}, in {} ms)",
                waiting.summary,
                notice.retry,
                notice.max_retries,
                notice.reason,
                notice.delay.as_millis()
            )
        };
        self.observer.activity(self.limits.bounded(retrying));
    }

    fn time_left(&self) -> Option<Duration> {
        self.limits
            .deadline()
            .map(|deadline| deadline.saturating_duration_since(tokio::time::Instant::now()))
    }

    fn adjusting(&self, what: &str) {
        let mut again = self.waiting.clone();
        again.summary = format!("{} ({what})", self.waiting.summary);
        self.observer.activity(self.limits.bounded(again));
    }

    fn receiving(&self, left: Duration) {
        self.observer
            .activity(self.limits.bounded(Activity::receiving(
                self.provider.label(),
                self.provider.model(),
                self.turn,
                self.max_turns,
                left,
            )));
    }
}

/// A pause as activity shows it: "90 s", "1.5 s".
fn seconds(delay: Duration) -> String {
    if delay < Duration::from_secs(10) {
        let tenths = delay.as_millis().div_ceil(100);
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else {
        format!("{} s", delay.as_millis().div_ceil(1000))
    }
}

/// Runs the loop until a final reply, a failure, or cancellation. `conversation` keeps
/// everything that happened, whatever the outcome.
///
/// Each turn is four steps: [`Run::ask`] the provider (the budgets checked and queued input
/// delivered first), [`Run::settle`] the reply into the history and the totals, then either
/// [`Run::run_tools`] it asked for or [`Run::close_turn`] on its stop reason.
pub async fn run_model_loop(conversation: &mut Conversation, ctx: RunContext<'_>) -> RunOutcome {
    let tools: Vec<ToolSpec> = ctx.tools.tools().iter().map(|t| t.spec.clone()).collect();
    let schemas = ArgumentSchemas::new(tools.len());
    // Encoded once for the run, in the API's form and a stable order (SPEC §6.1).
    let specs = match ctx.provider.prepare_tools(&tools) {
        Ok(prepared) => prepared,
        Err(e) => return RunOutcome::Failed(crate::error::AgentError::from(e).into()),
    };
    let mut run = Run {
        conversation,
        specs,
        schemas,
        answer: String::new(),
        last_text: String::new(),
        repairs_left: OUTPUT_REPAIR_TURNS,
        cut_off: false,
        models: Models::default(),
        ctx,
    };
    loop {
        let reply = match run.ask().await {
            Flow::Next(reply) => reply,
            Flow::Again => continue,
            Flow::End(outcome) => return outcome,
        };
        let reply = match run.settle(reply) {
            Flow::Next(reply) => reply,
            Flow::Again => continue,
            Flow::End(outcome) => return outcome,
        };
        let flow = if reply.tool_calls.is_empty() {
            run.close_turn(reply.stop)
        } else {
            run.run_tools(&reply.tool_calls).await
        };
        match flow {
            Flow::Next(()) | Flow::Again => {}
            Flow::End(outcome) => return outcome,
        }
    }
}

/// What a step of the loop leads to.
enum Flow<T> {
    /// The step's result, for the next step of the same turn.
    Next(T),
    /// A new turn, now.
    Again,
    /// The run is over.
    End(RunOutcome),
}

/// One run in progress: its context, the prepared tools and what it has said so far.
struct Run<'c, 'a> {
    conversation: &'c mut Conversation,
    ctx: RunContext<'a>,
    specs: ToolList,
    schemas: ArgumentSchemas,
    /// The text of the replies since the last tool round: one reply, or several when the
    /// provider paused mid-answer and continued.
    answer: String,
    /// The run's last assistant message, for a failure's partial result.
    last_text: String,
    repairs_left: u32,
    /// Whether the last reply was cut off by an output limit (the provider's, or the end of
    /// the context window on a local engine).
    cut_off: bool,
    /// The model asked now: the agent's own, or a fallback (SPEC §5.1).
    models: Models,
}

impl Run<'_, '_> {
    fn fail(&self, error: AgentError) -> RunOutcome {
        RunOutcome::Failed(Failure::with_partial(
            error,
            &self.last_text,
            self.ctx.provider.secrets(),
        ))
    }

    /// The run was cancelled: it ends here, keeping its last text.
    fn cancelled(&self) -> RunOutcome {
        RunOutcome::Cancelled {
            partial_result: partial_result(&self.last_text, self.ctx.provider.secrets()),
        }
    }

    /// Checks the budgets, delivers queued input and asks the provider for the next reply,
    /// under the run's deadline, its cancellation and interrupts.
    async fn ask(&mut self) -> Flow<Reply> {
        // A cancelled run takes no input: what is queued stays queued (SPEC §4.2 `stop`).
        if self.ctx.cancel.is_cancelled() {
            return Flow::End(self.cancelled());
        }
        let ctx = &mut self.ctx;
        // The limits come before taking input: input that no request will carry stays
        // queued, and the failed record counts it.
        let refused = ctx.limits.before_request(&ctx.spent);
        if let Some(error) = refused.or_else(|| ctx.observer.before_request().err()) {
            return Flow::End(RunOutcome::Failed(Failure::with_partial(
                error,
                &self.last_text,
                ctx.provider.secrets(),
            )));
        }
        // Input queued so far goes out now, so interrupts that came with it are answered.
        ctx.interrupts.borrow_and_update();
        let queued = ctx.inbox.take_all();
        if !queued.is_empty() {
            self.conversation.push_user_texts(&queued);
            self.answer.clear();
        }
        ctx.spent.turns += 1;
        let turn = ctx.spent.turns;
        ctx.observer.usage(UsageDelta {
            turns: 1,
            ..UsageDelta::default()
        });
        loop {
            let reply = match self.request(turn).await {
                Flow::Next(reply) => reply,
                Flow::Again => return Flow::Again,
                Flow::End(outcome) => return Flow::End(outcome),
            };
            match reply {
                Ok(reply) => {
                    self.models.replied();
                    return Flow::Next(reply);
                }
                // The same request to the next fallback model, in the same turn.
                Err(e)
                    if self
                        .models
                        .fall_back(self.ctx.provider, &e, self.ctx.observer) => {}
                Err(e) => return Flow::End(self.provider_failed(e)),
            }
        }
    }

    /// Sends turn `turn`'s request to the model the run asks now, under the run's deadline,
    /// its cancellation and interrupts: the provider's answer, or how the run goes on
    /// without one.
    async fn request(&mut self, turn: u32) -> Flow<Result<Reply, ProviderError>> {
        let ctx = &mut self.ctx;
        let provider = self.models.current(ctx.provider);
        let max_turns = ctx.limits.max_turns;
        let waiting =
            Activity::provider_request(provider.label(), provider.model(), turn, max_turns);
        ctx.observer.activity(ctx.limits.bounded(waiting.clone()));
        let events = TurnEvents {
            observer: ctx.observer,
            limits: &ctx.limits,
            waiting,
            provider,
            turn,
            max_turns,
        };
        let secrets = ctx.provider.secrets();
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => Flow::End(RunOutcome::Cancelled {
                partial_result: partial_result(&self.last_text, secrets),
            }),
            () = until(ctx.limits.deadline()) => {
                let error = ctx.limits.out_of_time("the model request in flight was cancelled");
                Flow::End(RunOutcome::Failed(Failure::with_partial(
                    error,
                    &self.last_text,
                    secrets,
                )))
            }
            () = interrupted(&mut ctx.interrupts) => Flow::Again,
            reply = provider.complete_with(ctx.system, self.conversation, &self.specs, &events) => {
                Flow::Next(reply)
            }
        }
    }

    /// The run ends on a provider failure. A conversation that stopped fitting right after
    /// a cut-off reply was filled by that reply (the prompt before it fitted): the failure
    /// says so and points at the output limit, not at the task.
    fn provider_failed(&self, e: ProviderError) -> RunOutcome {
        let error = if self.cut_off && e.failure == ProviderFailure::ContextLimit {
            let provider = self.models.current(self.ctx.provider);
            reply_filled_the_window(&e.message, provider.max_output_tokens())
        } else {
            e.into()
        };
        self.fail(error)
    }

    /// Counts the reply's usage, keeps its items and text, and checks the token budget.
    fn settle(&mut self, mut reply: Reply) -> Flow<Reply> {
        let ctx = &mut self.ctx;
        ctx.observer.usage(UsageDelta {
            input_tokens: reply.usage.input_tokens,
            output_tokens: reply.usage.output_tokens,
            cache_read_tokens: reply.usage.cache_read_tokens,
            cache_write_tokens: reply.usage.cache_write_tokens,
            ..UsageDelta::default()
        });
        ctx.spent.tokens = ctx
            .spent
            .tokens
            .saturating_add(reply.usage.input_tokens)
            .saturating_add(reply.usage.output_tokens);
        self.cut_off = reply.stop == StopReason::CutOff;
        self.conversation
            .push_reply_items(std::mem::take(&mut reply.items));
        self.answer.push_str(&reply.text);
        if !reply.text.is_empty() {
            self.last_text.clone_from(&self.answer);
        }
        let Some(error) = ctx.limits.after_reply(&ctx.spent) else {
            return Flow::Next(reply);
        };
        // The reply's calls are answered, not run, so the history stays valid.
        let max = ctx.limits.budget.max_run_tokens.unwrap_or_default();
        let outputs: Vec<ToolOutput> = reply
            .tool_calls
            .iter()
            .map(|call| ToolOutput::text(call.call_id.clone(), out_of_tokens_result(max), true))
            .collect();
        if !outputs.is_empty() {
            self.conversation.push_tool_outputs(&outputs);
        }
        Flow::End(self.fail(error))
    }

    /// Runs the calls of one reply and answers each of them in the history.
    async fn run_tools(&mut self, calls: &[ToolCall]) -> Flow<()> {
        self.answer.clear();
        let ctx = &mut self.ctx;
        let round = Round {
            tools: ctx.tools,
            observer: ctx.observer,
            limits: &ctx.limits,
            output_limit: ctx.provider.max_output_tokens(),
            cancel: &ctx.cancel,
        };
        let done = run_round(
            &round,
            calls,
            &mut self.schemas,
            &mut ctx.spent,
            &mut ctx.interrupts,
        )
        .await;
        // Time spent waiting for the parent is not the run's (SPEC §4.5).
        if !done.parked.is_zero() {
            ctx.limits.parked += done.parked;
            ctx.observer.parked(done.parked);
        }
        // Every call gets its result, so the history stays valid whatever happened.
        self.conversation.push_tool_outputs(&done.outputs);
        let error = match done.end {
            RoundEnd::Finished | RoundEnd::Interrupted => return Flow::Next(()),
            RoundEnd::Cancelled => return Flow::End(self.cancelled()),
            RoundEnd::OutOfTime => ctx
                .limits
                .out_of_time("the tool calls in flight were cancelled"),
            RoundEnd::OutOfCalls(refused) => ctx.limits.out_of_calls(&ctx.spent, refused),
        };
        Flow::End(self.fail(error))
    }

    /// A reply that asked for no tool: the run goes on (a pause, a cut-off reply, input
    /// that arrived meanwhile, an answer to repair) or ends with its answer.
    fn close_turn(&mut self, stop: StopReason) -> Flow<()> {
        match stop {
            // The provider paused a long turn: the history as it is lets it go on.
            StopReason::Paused => Flow::Again,
            StopReason::CutOff => {
                let limit = self.ctx.provider.max_output_tokens();
                self.conversation
                    .push_user_texts(&[continue_after_cut_off(limit)]);
                Flow::Again
            }
            // The model declined: what it said is the result, marked as a refusal; no
            // output schema applies (SPEC §4.3).
            StopReason::Refused => Flow::End(RunOutcome::Completed(Answer {
                text: std::mem::take(&mut self.answer),
                refused: true,
                structured: None,
            })),
            // Input that arrived during the last request continues the run; the next
            // request takes it.
            StopReason::EndTurn | StopReason::ToolUse if !self.ctx.inbox.is_empty() => Flow::Again,
            StopReason::EndTurn | StopReason::ToolUse => self.final_answer(),
        }
    }

    /// The final answer, held against the output schema if there is one: valid, repaired
    /// in one more turn, or failed.
    fn final_answer(&mut self) -> Flow<()> {
        let Some(schema) = self.ctx.output_schema else {
            return Flow::End(RunOutcome::Completed(
                std::mem::take(&mut self.answer).into(),
            ));
        };
        match check(schema, &self.answer) {
            Checked::Valid(value) => Flow::End(RunOutcome::Completed(Answer {
                text: std::mem::take(&mut self.answer),
                refused: false,
                structured: Some(value),
            })),
            Checked::Invalid { masked, .. } if self.repairs_left == 0 => {
                Flow::End(RunOutcome::Failed(Failure::with_partial(
                    invalid_output(&masked),
                    &self.answer,
                    self.ctx.provider.secrets(),
                )))
            }
            Checked::Invalid { for_model, .. } => {
                self.repairs_left -= 1;
                self.conversation
                    .push_user_texts(&[repair_request(&for_model)]);
                self.answer.clear();
                Flow::Again
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_are_shown_in_tenths_below_ten_seconds_then_whole_seconds() {
        assert_eq!(seconds(Duration::from_millis(700)), "0.7 s");
        assert_eq!(seconds(Duration::from_millis(1_501)), "1.6 s");
        assert_eq!(seconds(Duration::from_secs(90)), "90 s");
        assert_eq!(seconds(Duration::from_millis(119_200)), "120 s");
    }
}
