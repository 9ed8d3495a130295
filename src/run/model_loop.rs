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
use super::tool_round::{ArgumentSchemas, Round, RoundEnd, interrupted, run_round, until};
use crate::definition::CompiledSchema;
use crate::limits::OUTPUT_REPAIR_TURNS;
use crate::providers::{
    Conversation, ProviderClient, RequestEvents, RetryNotice, StopReason, ToolOutput,
};
use crate::toolbox::{ToolBox, ToolSpec};

use super::budget::{RunLimits, Spent};
use super::observer::{Inbox, RunObserver, UsageDelta};
use super::outcome::{Answer, Failure, RunOutcome};

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
        retrying.summary = format!(
            "{} (retry {} of {} after {}, in {} ms)",
            waiting.summary,
            notice.retry,
            notice.max_retries,
            notice.reason,
            notice.delay.as_millis()
        );
        self.observer.activity(self.limits.bounded(retrying));
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

/// Runs the loop until a final reply, a failure, or cancellation. `conversation` keeps
/// everything that happened, whatever the outcome.
pub async fn run_model_loop(conversation: &mut Conversation, ctx: RunContext<'_>) -> RunOutcome {
    let RunContext {
        provider,
        system,
        tools,
        inbox,
        observer,
        mut interrupts,
        cancel,
        limits,
        mut spent,
        output_schema,
    } = ctx;
    let specs: Vec<ToolSpec> = tools.tools().iter().map(|t| t.spec.clone()).collect();
    let mut schemas = ArgumentSchemas::new(specs.len());
    let deadline = limits.deadline();
    let max_turns = limits.max_turns;
    // Encoded once for the run, in the API's form and a stable order (SPEC §6.1).
    let specs = match provider.prepare_tools(&specs) {
        Ok(prepared) => prepared,
        Err(e) => return RunOutcome::Failed(crate::error::AgentError::from(e).into()),
    };
    // The text of the replies since the last tool round: one reply, or several when the
    // provider paused mid-answer and continued.
    let mut answer = String::new();
    // The run's last assistant message, for a failure's partial result.
    let mut last_text = String::new();
    let mut repairs_left = OUTPUT_REPAIR_TURNS;
    let fail = |error, last_text: &str| RunOutcome::Failed(Failure::with_partial(error, last_text));
    loop {
        // The limits come before taking input: input that no request will carry stays
        // queued, and the failed record counts it.
        if let Some(error) = limits.before_request(&spent) {
            return fail(error, &last_text);
        }
        // Input queued so far goes out now, so interrupts that came with it are answered.
        interrupts.borrow_and_update();
        let queued = inbox.take_all();
        if !queued.is_empty() {
            conversation.push_user_texts(&queued);
            answer.clear();
        }
        spent.turns += 1;
        let turn = spent.turns;
        observer.usage(UsageDelta {
            turns: 1,
            ..UsageDelta::default()
        });
        let waiting =
            Activity::provider_request(provider.label(), provider.model(), turn, max_turns);
        observer.activity(limits.bounded(waiting.clone()));
        let events = TurnEvents {
            observer,
            limits: &limits,
            waiting,
            provider,
            turn,
            max_turns,
        };
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return RunOutcome::Cancelled,
            () = until(deadline) => {
                return fail(limits.out_of_time("the model request in flight was cancelled"), &last_text);
            }
            () = interrupted(&mut interrupts) => continue,
            reply = provider.complete_with(system, conversation, &specs, &events) => reply,
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(e) => return fail(e.into(), &last_text),
        };
        observer.usage(UsageDelta {
            input_tokens: reply.usage.input_tokens,
            output_tokens: reply.usage.output_tokens,
            cache_read_tokens: reply.usage.cache_read_tokens,
            cache_write_tokens: reply.usage.cache_write_tokens,
            ..UsageDelta::default()
        });
        spent.tokens = spent
            .tokens
            .saturating_add(reply.usage.input_tokens)
            .saturating_add(reply.usage.output_tokens);
        conversation.push_reply_items(std::mem::take(&mut reply.items));
        answer.push_str(&reply.text);
        if !reply.text.is_empty() {
            last_text.clone_from(&answer);
        }
        if let Some(error) = limits.after_reply(&spent) {
            // The reply's calls are answered, not run, so the history stays valid.
            let max = limits.budget.max_run_tokens.unwrap_or_default();
            let outputs: Vec<ToolOutput> = reply
                .tool_calls
                .iter()
                .map(|call| ToolOutput::text(call.call_id.clone(), out_of_tokens_result(max), true))
                .collect();
            if !outputs.is_empty() {
                conversation.push_tool_outputs(&outputs);
            }
            return fail(error, &last_text);
        }
        match reply.stop {
            _ if !reply.tool_calls.is_empty() => {
                answer.clear();
                let round = Round {
                    tools,
                    observer,
                    limits: &limits,
                    output_limit: provider.max_output_tokens(),
                    cancel: &cancel,
                };
                let (outputs, end) = run_round(
                    &round,
                    &reply.tool_calls,
                    &mut schemas,
                    &mut spent,
                    &mut interrupts,
                )
                .await;
                // Every call gets its result, so the history stays valid whatever happened.
                conversation.push_tool_outputs(&outputs);
                match end {
                    RoundEnd::Finished | RoundEnd::Interrupted => {}
                    RoundEnd::Cancelled => return RunOutcome::Cancelled,
                    RoundEnd::OutOfTime => {
                        return fail(
                            limits.out_of_time("the tool calls in flight were cancelled"),
                            &last_text,
                        );
                    }
                    RoundEnd::OutOfCalls(refused) => {
                        return fail(limits.out_of_calls(&spent, refused), &last_text);
                    }
                }
            }
            // The provider paused a long turn: the history as it is lets it go on.
            StopReason::Paused => continue,
            StopReason::CutOff => {
                conversation
                    .push_user_texts(&[continue_after_cut_off(provider.max_output_tokens())]);
            }
            // The model declined: what it said is the result, marked as a refusal; no
            // output schema applies (SPEC §4.3).
            StopReason::Refused => {
                return RunOutcome::Completed(Answer {
                    text: answer,
                    refused: true,
                    structured: None,
                });
            }
            StopReason::EndTurn | StopReason::ToolUse => {
                if !inbox.is_empty() {
                    // Input that arrived during the last request continues the run; the
                    // next request takes it.
                    continue;
                }
                let Some(schema) = output_schema else {
                    return RunOutcome::Completed(answer.into());
                };
                match check(schema, &answer) {
                    Checked::Valid(value) => {
                        return RunOutcome::Completed(Answer {
                            text: answer,
                            refused: false,
                            structured: Some(value),
                        });
                    }
                    Checked::Invalid { masked, .. } if repairs_left == 0 => {
                        return fail(invalid_output(&masked), &answer);
                    }
                    Checked::Invalid { for_model, .. } => {
                        repairs_left -= 1;
                        conversation.push_user_texts(&[repair_request(&for_model)]);
                        answer.clear();
                    }
                }
            }
        }
    }
}
