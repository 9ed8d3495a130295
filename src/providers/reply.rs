//! What a request gives and takes in typed form: the model's settings, the reply (its raw
//! items for the history, plus the text, tool calls, usage and stop reason the loop reads),
//! and the tool outputs that answer it.

use serde_json::Value;

use crate::definition::ReasoningEffort;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `call_id` (Responses) or `tool_use.id` (Messages): what the result must name.
    pub call_id: String,
    pub name: String,
    /// The arguments object, or why they could not be read (a Responses call carries them
    /// as a JSON string, which may be malformed).
    pub arguments: Result<Value, String>,
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
    /// It paused or ran out of output tokens mid-answer (Messages `pause_turn`,
    /// `max_tokens`); sending the history back as it is lets it continue.
    Continue,
}

/// One reply, in typed form plus the raw items that go into the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// What to append to the history, exactly as the provider sent it (Responses output
    /// items without their server ids; Messages content blocks).
    pub items: Vec<Value>,
    /// The reply's text, concatenated.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
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
}
