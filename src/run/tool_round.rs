//! One round of tool calls: the calls of one reply (SPEC §6 step 3).
//!
//! Each call is first answered without calling anything when it cannot be made: the tool is
//! unknown, its arguments are unreadable or cut off, they fail the child's own `inputSchema`
//! (compiled once per run, [`ArgumentSchemas`]), or the budget of tool calls is used up.
//! The calls that can be made then run concurrently, each bounded by its server's call
//! timeout, and their results are put back in the order of the calls. An interrupt, server
//! shutdown or the run's deadline cancels every call still in flight; each gets a result
//! that says so, so the history stays valid.
//!
//! A call that parks (the runtime's `ask_parent`, SPEC §4.5) waits on the parent, not on a
//! tool: it is made once the round's other calls have all answered, one at a time, so no
//! child call and no call timeout runs while the run waits, and the time it waits is not
//! the run's (its deadline moves by it). An interrupt or a stop still ends it.

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::activity::Activity;
use super::budget::{RunLimits, Spent, out_of_calls_result, out_of_time_result};
use super::observer::{RunObserver, ToolUse};
use crate::definition::CompiledSchema;
use crate::definition::describe_violations;
use crate::providers::{CallArguments, ToolCall, ToolOutput};
use crate::toolbox::{ToolBox, ToolDescriptor, ToolResult};

/// What a tool call that never finished tells the model.
pub const INTERRUPTED_RESULT: &str =
    "interrupted: new input arrived before this tool call finished, so it was cancelled";

/// What a tool call that never finished because the run was stopped (the parent's `stop`,
/// or the server shutting down) tells the model, when the conversation is resumed.
pub const STOPPED_RESULT: &str =
    "cancelled: the run was stopped before this tool call finished, so it was cancelled";

/// What a tool call the output limit cut off tells the model.
pub(super) fn cut_off_result(name: &str, limit: u32) -> String {
    format!(
        "this call to `{name}` was cut off: the reply reached the output limit of {limit} \
         tokens before the call's arguments were complete, so it was not run. Call it again \
         if you still need it (with shorter arguments if they were long)."
    )
}

/// The child tools' input schemas, each compiled the first time the run calls the tool.
/// A schema that does not compile validates nothing: the child stays the judge.
pub(super) struct ArgumentSchemas {
    compiled: Vec<Option<Option<CompiledSchema>>>,
}

impl ArgumentSchemas {
    pub(super) fn new(tools: usize) -> Self {
        ArgumentSchemas {
            compiled: vec![None; tools],
        }
    }

    fn get(&mut self, index: usize, descriptor: &ToolDescriptor) -> Option<&CompiledSchema> {
        let slot = self.compiled.get_mut(index)?;
        slot.get_or_insert_with(
            || match CompiledSchema::compile(&descriptor.original_schema) {
                Ok(compiled) => Some(compiled),
                Err(e) => {
                    tracing::debug!(
                        "{}: the input schema of {} does not compile ({e}); its arguments are \
                         not checked before calls",
                        descriptor.server,
                        descriptor.tool
                    );
                    None
                }
            },
        )
        .as_ref()
    }
}

/// What a round needs from its run.
pub(super) struct Round<'a> {
    pub tools: &'a dyn ToolBox,
    pub observer: &'a dyn RunObserver,
    pub limits: &'a RunLimits,
    /// The reply's output limit, for the message about a call it cut off.
    pub output_limit: u32,
    pub cancel: &'a CancellationToken,
}

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoundEnd {
    /// Every call has its result.
    Finished,
    /// New input arrived: the calls in flight were cancelled; the run goes on.
    Interrupted,
    /// The run was stopped (the parent's `stop`, or the server is stopping).
    Cancelled,
    /// `max_run_seconds` passed: the calls in flight were cancelled.
    OutOfTime,
    /// Every call was answered, but this many were not made: the budget of tool calls ran
    /// out.
    OutOfCalls(usize),
}

/// A call to make: which tool, with what.
struct Planned {
    slot: usize,
    index: usize,
    arguments: Value,
}

/// What a round did: one output per call, in their order, how it ended, and how long it
/// waited for the parent (calls that park).
pub(super) struct RoundDone {
    pub outputs: Vec<ToolOutput>,
    pub end: RoundEnd,
    pub parked: Duration,
}

/// Runs `calls`: each call is checked and planned, the planned ones run at once, then the
/// ones that park, one by one; the calls the end of the round left unanswered are answered
/// as interrupted or out of time.
pub(super) async fn run_round(
    round: &Round<'_>,
    calls: &[ToolCall],
    schemas: &mut ArgumentSchemas,
    spent: &mut Spent,
    interrupts: &mut watch::Receiver<u64>,
) -> RoundDone {
    let RoundPlan {
        mut outputs,
        made,
        planned,
        parking,
        refused,
    } = plan_round(round, calls, schemas, spent);
    announce(round, &made);
    let mut end = run_planned(round, calls, planned, &mut outputs, interrupts).await;
    let mut parked = Duration::ZERO;
    if end == RoundEnd::Finished {
        (end, parked) = run_parking(round, calls, parking, &mut outputs, interrupts).await;
    }
    let outputs = answer_unfinished(round, calls, outputs, &made, &end);
    let end = match end {
        RoundEnd::Finished if refused > 0 => RoundEnd::OutOfCalls(refused),
        other => other,
    };
    RoundDone {
        outputs,
        end,
        parked,
    }
}

/// What a round will do before anything runs.
struct RoundPlan<'t> {
    /// For each call: its output once known (refused calls have theirs already).
    outputs: Vec<Option<ToolOutput>>,
    /// For each call: the tool it goes to, when it is made.
    made: Vec<Option<&'t ToolDescriptor>>,
    planned: Vec<Planned>,
    /// The calls that park, made after the others.
    parking: Vec<Planned>,
    /// Calls the tool-call budget refused.
    refused: usize,
}

/// Checks every call of the round: planned, refused by the budget, or answered with what
/// is wrong with it.
fn plan_round<'t>(
    round: &Round<'t>,
    calls: &[ToolCall],
    schemas: &mut ArgumentSchemas,
    spent: &mut Spent,
) -> RoundPlan<'t> {
    let descriptors = round.tools.tools();
    let mut plan = RoundPlan {
        outputs: vec![None; calls.len()],
        made: vec![None; calls.len()],
        planned: Vec::new(),
        parking: Vec::new(),
        refused: 0,
    };
    for (slot, call) in calls.iter().enumerate() {
        match plan_call(round, call, schemas, spent) {
            Ok(Some((index, arguments))) => {
                let planned = Planned {
                    slot,
                    index,
                    arguments,
                };
                if descriptors[index].parks {
                    plan.parking.push(planned);
                } else {
                    plan.made[slot] = Some(&descriptors[index]);
                    plan.planned.push(planned);
                }
            }
            Ok(None) => {
                plan.refused += 1;
                let max = round.limits.budget.max_tool_calls.unwrap_or_default();
                plan.outputs[slot] = Some(answer(call, out_of_calls_result(max), true));
            }
            Err(text) => plan.outputs[slot] = Some(answer(call, text, true)),
        }
    }
    plan
}

/// Reports the calls about to start as one activity transition.
fn announce(round: &Round<'_>, made: &[Option<&ToolDescriptor>]) {
    let starting: Vec<&ToolDescriptor> = made.iter().flatten().copied().collect();
    if starting.is_empty() {
        return;
    }
    let names: Vec<(&str, &str)> = starting
        .iter()
        .map(|d| (d.server.as_str(), d.tool.as_str()))
        .collect();
    let bound = starting.iter().map(|d| d.timeout).max().unwrap_or_default();
    round
        .observer
        .activity(round.limits.bounded(Activity::tool_calls(&names, bound)));
}

/// Runs the planned calls at once, each within its tool's timeout, until they are all
/// answered or the round is cancelled, out of time or interrupted. Calls still in flight
/// then are dropped, which cancels them.
async fn run_planned(
    round: &Round<'_>,
    calls: &[ToolCall],
    planned: Vec<Planned>,
    outputs: &mut [Option<ToolOutput>],
    interrupts: &mut watch::Receiver<u64>,
) -> RoundEnd {
    let descriptors = round.tools.tools();
    let mut in_flight: FuturesUnordered<_> = planned
        .into_iter()
        .map(|p| {
            let descriptor = &descriptors[p.index];
            round
                .observer
                .tool_used(&descriptor.spec.name, ToolUse::Called);
            let call = round.tools.call(p.index, p.arguments);
            async move {
                let result = tokio::time::timeout(descriptor.timeout, call).await;
                (p.slot, descriptor, result)
            }
        })
        .collect();
    let deadline = round.limits.deadline();
    loop {
        tokio::select! {
            biased;
            () = round.cancel.cancelled() => return RoundEnd::Cancelled,
            () = until(deadline) => return RoundEnd::OutOfTime,
            () = interrupted(interrupts) => return RoundEnd::Interrupted,
            next = in_flight.next() => {
                let Some((slot, descriptor, result)) = next else { return RoundEnd::Finished };
                let call = &calls[slot];
                if let Ok(ToolResult { changed: Some(change), .. }) = &result {
                    round.observer.file_changed(change);
                }
                let output = match result {
                    Ok(result) => ToolOutput {
                        call_id: call.call_id.clone(),
                        content: result.content,
                        images: result.images,
                        is_error: result.is_error,
                    },
                    Err(_) => answer(
                        call,
                        format!(
                            "the call to {}.{} did not finish within {} s and was cancelled",
                            descriptor.server,
                            descriptor.tool,
                            descriptor.timeout.as_secs()
                        ),
                        true,
                    ),
                };
                if output.is_error {
                    round.observer.tool_used(&descriptor.spec.name, ToolUse::Failed);
                }
                outputs[slot] = Some(output);
            }
        }
    }
}

/// Makes the calls that park, one at a time, each until it answers or an interrupt or a
/// stop ends the round (no deadline: the run's clock does not run meanwhile). Returns how
/// the round ended and how long it waited.
async fn run_parking(
    round: &Round<'_>,
    calls: &[ToolCall],
    parking: Vec<Planned>,
    outputs: &mut [Option<ToolOutput>],
    interrupts: &mut watch::Receiver<u64>,
) -> (RoundEnd, Duration) {
    let mut parked = Duration::ZERO;
    for p in parking {
        let began = Instant::now();
        let result = tokio::select! {
            biased;
            () = round.cancel.cancelled() => Err(RoundEnd::Cancelled),
            () = interrupted(interrupts) => Err(RoundEnd::Interrupted),
            result = round.tools.call(p.index, p.arguments) => Ok(result),
        };
        parked += began.elapsed();
        match result {
            Ok(result) => {
                outputs[p.slot] = Some(ToolOutput {
                    call_id: calls[p.slot].call_id.clone(),
                    content: result.content,
                    images: result.images,
                    is_error: result.is_error,
                });
            }
            Err(end) => return (end, parked),
        }
    }
    (RoundEnd::Finished, parked)
}

/// Every call's output: the ones the round answered, and for the calls it left unanswered
/// (made, then cut short by its end) a failed result saying why.
fn answer_unfinished(
    round: &Round<'_>,
    calls: &[ToolCall],
    outputs: Vec<Option<ToolOutput>>,
    made: &[Option<&ToolDescriptor>],
    end: &RoundEnd,
) -> Vec<ToolOutput> {
    let unfinished = match end {
        RoundEnd::OutOfTime => {
            out_of_time_result(round.limits.budget.max_run_seconds.unwrap_or_default())
        }
        RoundEnd::Cancelled => STOPPED_RESULT.to_owned(),
        _ => INTERRUPTED_RESULT.to_owned(),
    };
    calls
        .iter()
        .zip(outputs)
        .zip(made)
        .map(|((call, output), tool)| {
            output.unwrap_or_else(|| {
                if let Some(tool) = tool {
                    round.observer.tool_used(&tool.spec.name, ToolUse::Failed);
                }
                answer(call, unfinished.clone(), true)
            })
        })
        .collect()
}

/// The tool `call` names and its arguments, when the call can be made (`Ok(None)`: the
/// budget does not allow it); otherwise what to tell the model instead.
fn plan_call(
    round: &Round<'_>,
    call: &ToolCall,
    schemas: &mut ArgumentSchemas,
    spent: &mut Spent,
) -> Result<Option<(usize, Value)>, String> {
    let descriptors = round.tools.tools();
    let Some(index) = descriptors.iter().position(|t| t.spec.name == call.name) else {
        let names: Vec<&str> = descriptors.iter().map(|t| t.spec.name.as_str()).collect();
        let available = if names.is_empty() {
            "you have no tools".to_owned()
        } else {
            format!("the tools you have are: {}", names.join(", "))
        };
        return Err(format!(
            "there is no tool named `{}`; {available}",
            call.name
        ));
    };
    let arguments = match &call.arguments {
        CallArguments::Object(arguments) => arguments,
        CallArguments::Unreadable(why) => {
            return Err(format!(
                "could not read the arguments for `{}`: {why}",
                call.name
            ));
        }
        CallArguments::CutOff => return Err(cut_off_result(&call.name, round.output_limit)),
    };
    if let Some(schema) = schemas.get(index, &descriptors[index]) {
        let violations = schema.violations(arguments);
        if !violations.is_empty() {
            return Err(format!(
                "the arguments for `{}` do not match its input schema, so it was not called: {}",
                call.name,
                describe_violations(&violations)
            ));
        }
    }
    // A call that parks is no child tool call: the budget of tool calls does not count it.
    if descriptors[index].parks {
        return Ok(Some((index, arguments.clone())));
    }
    if round.limits.calls_left(spent) == Some(0) {
        return Ok(None);
    }
    spent.tool_calls = spent.tool_calls.saturating_add(1);
    Ok(Some((index, arguments.clone())))
}

fn answer(call: &ToolCall, content: String, is_error: bool) -> ToolOutput {
    ToolOutput::text(call.call_id.clone(), content, is_error)
}

/// Resolves at `deadline`; never without one.
pub async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Resolves when the interrupt value changes; never, once nobody can interrupt.
pub(super) async fn interrupted(interrupts: &mut watch::Receiver<u64>) {
    if interrupts.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}
