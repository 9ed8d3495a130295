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
//! - a [`RunObserver`] for activity transitions and usage.
//!
//! Tool calls of one reply run one after another, in the order the model gave them, each
//! bounded by its server's call timeout.
//!
//! A reply cut off by its output limit (SPEC §6.1 "Output length") goes on in a user turn
//! that asks the model to continue where it stopped, never by sending history that ends
//! with the assistant's turn; a tool call the limit cut off is answered with an error result
//! and never run.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::activity::Activity;
use crate::error::{AgentError, ErrorCode};
use crate::providers::{
    CallArguments, Conversation, ProviderClient, RequestEvents, RetryNotice, StopReason, ToolCall,
    ToolOutput,
};
use crate::toolbox::{ToolBox, ToolSpec};
use std::time::Duration;

/// Queued user input.
pub trait Inbox: Send + Sync {
    /// Everything queued, oldest first; the inbox is empty afterwards.
    fn take_all(&self) -> Vec<String>;
    fn is_empty(&self) -> bool;
}

/// What a run adds to its session's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageDelta {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the input, what the provider read from and wrote to its prompt cache.
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub tool_calls: u32,
}

/// Where a run reports what it is doing.
pub trait RunObserver: Send + Sync {
    fn activity(&self, activity: Activity);
    fn usage(&self, delta: UsageDelta);
}

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
    pub max_turns: u32,
    /// Model requests this run made before (a run that carries on after input arrived while
    /// it was closing); they count against `max_turns`.
    pub turns_taken: u32,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// The final reply's text.
    Completed(String),
    Failed(AgentError),
    /// Cancelled through the token; the conversation is valid and can be resumed.
    Cancelled,
}

/// What a tool call that never finished tells the model.
pub const INTERRUPTED_RESULT: &str =
    "interrupted: new input arrived before this tool call finished, so it was cancelled";

/// The user turn that continues a reply the output limit cut off.
pub fn continue_after_cut_off(limit: u32) -> String {
    format!(
        "Your reply was cut off: it reached the output limit of {limit} tokens. Continue \
         exactly where it stopped, without repeating anything already written."
    )
}

/// What a tool call the output limit cut off tells the model.
pub fn cut_off_result(name: &str, limit: u32) -> String {
    format!(
        "this call to `{name}` was cut off: the reply reached the output limit of {limit} \
         tokens before the call's arguments were complete, so it was not run. Call it again \
         if you still need it (with shorter arguments if they were long)."
    )
}

/// Reports one request's retries and the start of its reply as activity.
struct TurnEvents<'a> {
    observer: &'a dyn RunObserver,
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
        self.observer.activity(retrying);
    }

    fn receiving(&self, left: Duration) {
        self.observer.activity(Activity::receiving(
            self.provider.label(),
            self.provider.model(),
            self.turn,
            self.max_turns,
            left,
        ));
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
        max_turns,
        turns_taken,
    } = ctx;
    let specs: Vec<ToolSpec> = tools.tools().iter().map(|t| t.spec.clone()).collect();
    // Encoded once for the run, in the API's form and a stable order (SPEC §6.1).
    let specs = match provider.prepare_tools(&specs) {
        Ok(prepared) => prepared,
        Err(e) => return RunOutcome::Failed(e.into()),
    };
    let mut turns = turns_taken;
    // The text of the replies since the last tool round: one reply, or several when the
    // provider paused mid-answer and continued.
    let mut answer = String::new();
    loop {
        // The limit comes before taking input: input that no request will carry stays
        // queued, and the failed record counts it.
        if turns >= max_turns {
            return RunOutcome::Failed(AgentError::new(
                ErrorCode::TurnLimit,
                format!(
                    "the run needed more than {max_turns} model requests (max_turns); raise \
                     max_turns in the definition or give the agent a smaller task"
                ),
            ));
        }
        // Input queued so far goes out now, so interrupts that came with it are answered.
        interrupts.borrow_and_update();
        let queued = inbox.take_all();
        if !queued.is_empty() {
            conversation.push_user_texts(&queued);
            answer.clear();
        }
        turns += 1;
        observer.usage(UsageDelta {
            turns: 1,
            ..UsageDelta::default()
        });
        let waiting =
            Activity::provider_request(provider.label(), provider.model(), turns, max_turns);
        observer.activity(waiting.clone());
        let events = TurnEvents {
            observer,
            waiting,
            provider,
            turn: turns,
            max_turns,
        };
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return RunOutcome::Cancelled,
            () = interrupted(&mut interrupts) => continue,
            reply = provider.complete_with(system, conversation, &specs, &events) => reply,
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(e) => return RunOutcome::Failed(e.into()),
        };
        observer.usage(UsageDelta {
            input_tokens: reply.usage.input_tokens,
            output_tokens: reply.usage.output_tokens,
            cache_read_tokens: reply.usage.cache_read_tokens,
            cache_write_tokens: reply.usage.cache_write_tokens,
            ..UsageDelta::default()
        });
        conversation.push_reply_items(std::mem::take(&mut reply.items));
        answer.push_str(&reply.text);
        match reply.stop {
            _ if !reply.tool_calls.is_empty() => {
                answer.clear();
                let mut outputs = Vec::with_capacity(reply.tool_calls.len());
                let mut stopped = None;
                for call in &reply.tool_calls {
                    if stopped.is_some() {
                        outputs.push(interrupted_output(call));
                        continue;
                    }
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => stopped = Some(Stop::Cancelled),
                        () = interrupted(&mut interrupts) => stopped = Some(Stop::Interrupted),
                        output = call_tool(tools, call, observer, provider) => {
                            outputs.push(output);
                            continue;
                        }
                    }
                    outputs.push(interrupted_output(call));
                }
                // Every call gets its result, so the history stays valid whatever happened.
                conversation.push_tool_outputs(&outputs);
                if stopped == Some(Stop::Cancelled) {
                    return RunOutcome::Cancelled;
                }
            }
            // The provider paused a long turn: the history as it is lets it go on.
            StopReason::Paused => continue,
            StopReason::CutOff => {
                conversation
                    .push_user_texts(&[continue_after_cut_off(provider.max_output_tokens())]);
            }
            // A refusal ends the run with what the model said (the record marks it).
            StopReason::EndTurn | StopReason::ToolUse | StopReason::Refused => {
                if inbox.is_empty() {
                    return RunOutcome::Completed(answer);
                }
                // Input that arrived during the last request continues the run; the next
                // request takes it.
            }
        }
    }
}

/// Why a round of tool calls stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Interrupted,
}

/// Resolves when the interrupt value changes; never, once nobody can interrupt.
async fn interrupted(interrupts: &mut watch::Receiver<u64>) {
    if interrupts.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn interrupted_output(call: &ToolCall) -> ToolOutput {
    ToolOutput::text(call.call_id.clone(), INTERRUPTED_RESULT, true)
}

/// Runs one call: unknown tools and unreadable arguments are answered without calling
/// anything; a call that outlives its bound is cancelled and reported.
async fn call_tool(
    tools: &dyn ToolBox,
    call: &ToolCall,
    observer: &dyn RunObserver,
    provider: &ProviderClient,
) -> ToolOutput {
    let answer =
        |content: String, is_error: bool| ToolOutput::text(call.call_id.clone(), content, is_error);
    let Some(index) = tools.tools().iter().position(|t| t.spec.name == call.name) else {
        let names: Vec<&str> = tools.tools().iter().map(|t| t.spec.name.as_str()).collect();
        let available = if names.is_empty() {
            "you have no tools".to_owned()
        } else {
            format!("the tools you have are: {}", names.join(", "))
        };
        return answer(
            format!("there is no tool named `{}`; {available}", call.name),
            true,
        );
    };
    let arguments = match &call.arguments {
        CallArguments::Object(arguments) => arguments.clone(),
        CallArguments::Unreadable(why) => {
            return answer(
                format!("could not read the arguments for `{}`: {why}", call.name),
                true,
            );
        }
        CallArguments::CutOff => {
            return answer(
                cut_off_result(&call.name, provider.max_output_tokens()),
                true,
            );
        }
    };
    let descriptor = &tools.tools()[index];
    observer.activity(Activity::tool_call(
        &descriptor.server,
        &descriptor.tool,
        descriptor.timeout,
    ));
    observer.usage(UsageDelta {
        tool_calls: 1,
        ..UsageDelta::default()
    });
    match tokio::time::timeout(descriptor.timeout, tools.call(index, arguments)).await {
        Ok(result) => ToolOutput {
            call_id: call.call_id.clone(),
            content: result.content,
            images: result.images,
            is_error: result.is_error,
        },
        Err(_) => answer(
            format!(
                "the call to {}.{} did not finish within {} s and was cancelled",
                descriptor.server,
                descriptor.tool,
                descriptor.timeout.as_secs()
            ),
            true,
        ),
    }
}
