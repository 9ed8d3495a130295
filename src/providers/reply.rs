//! What a request gives and takes in typed form: the model's settings, the reply (its raw
//! items for the history, plus the text, tool calls, usage and stop reason the loop reads),
//! and the tool outputs that answer it.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::definition::ReasoningEffort;

/// What a tool call carries to run it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallArguments {
    /// The arguments object.
    Object(Value),
    /// Why they could not be read (a Responses call carries them as a JSON string, which
    /// may be malformed).
    Unreadable(String),
    /// The reply reached its output limit while the model was still writing this call, so
    /// its arguments are incomplete; it is never run (SPEC §6.1 "Output length").
    CutOff,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `call_id` (Responses) or `tool_use.id` (Messages): what the result must name.
    pub call_id: String,
    pub name: String,
    pub arguments: CallArguments,
}

/// Tokens the provider reported for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Done: the text is the answer.
    EndTurn,
    /// It asked for the tools in [`Reply::tool_calls`].
    ToolUse,
    /// The provider paused a long turn (Messages `pause_turn`); sending the history back as
    /// it is lets it go on.
    Paused,
    /// The reply reached the output limit (Messages `max_tokens`, Responses `incomplete`
    /// with `max_output_tokens`). Without tool calls the model is asked, in a user turn, to
    /// go on where it stopped; a call it was still writing is [`CallArguments::CutOff`].
    CutOff,
}

/// One reply, in typed form plus the raw items that go into the history.
#[derive(Debug, Clone)]
pub struct Reply {
    /// What to append to the history, exactly as the provider sent it (Responses output
    /// items without their server ids; Messages content blocks).
    pub items: Vec<Box<RawValue>>,
    /// The reply's text, concatenated.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
    /// The model declined to answer, and this is what it said (SPEC §4.3, §6.1 "Final
    /// text"): a Responses `refusal` content part, or the text of a Messages reply whose stop
    /// reason is `refusal`. The run completes with it as the result, marked `refused`.
    pub refusal: Option<String>,
}

impl Reply {
    /// The items as JSON values (for tests and diagnostics; the loop never parses them).
    pub fn item_values(&self) -> Vec<Value> {
        self.items
            .iter()
            .map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null))
            .collect()
    }
}

/// A tool's answer, as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// The model and its settings, as a request needs them.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub model: String,
    pub temperature: Option<f64>,
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The agent's `output_schema`, when it fits the Responses API's strict structured
    /// outputs: sent there as `text.format` (SPEC §6 step 4). Other wires ignore it.
    pub strict_output_schema: Option<Arc<Value>>,
}
