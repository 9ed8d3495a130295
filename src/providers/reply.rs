//! What a request gives and takes in typed form: the model's settings, the reply (its raw
//! items for the history, plus the text, tool calls, usage and stop reason the loop reads),
//! and the tool outputs that answer it.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::definition::ReasoningEffort;
use crate::toolbox::ToolImage;

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

/// Tokens the provider reported for one request (SPEC §4.3 `usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every input token, cached or not.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the input, how many the provider read from its prompt cache (Messages
    /// `cache_read_input_tokens`, Responses `input_tokens_details.cached_tokens`).
    pub cache_read_tokens: u64,
    /// Of the input, how many it wrote to its prompt cache (Messages
    /// `cache_creation_input_tokens`, Responses `input_tokens_details.cache_write_tokens`).
    pub cache_write_tokens: u64,
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
    /// The model declined to answer (Responses `refusal` content, Messages stop reason
    /// `refusal`); the reply's text is what it said, never an empty answer (SPEC §4.3).
    Refused,
}

impl StopReason {
    /// How a reply that ended normally stopped, from what it holds: a refusal first, then
    /// the output limit, then tool use when it calls tools.
    pub(super) fn of(refused: bool, cut_off: bool, calls_tools: bool) -> StopReason {
        if refused {
            StopReason::Refused
        } else if cut_off {
            StopReason::CutOff
        } else if calls_tools {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        }
    }
}

/// One reply, in typed form plus the raw items that go into the history.
#[derive(Debug, Clone)]
pub struct Reply {
    /// What to append to the history, exactly as the provider sent it (Responses output
    /// items without their server ids; Messages content blocks).
    pub items: Vec<Box<RawValue>>,
    /// The reply's text: Responses, the `final_answer` message's when phases are present,
    /// else every output text part joined with a blank line; Messages, its text blocks in
    /// order. For a refusal, the refusal's text.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
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
    /// Images after the text (both APIs take images in tool results).
    pub images: Vec<ToolImage>,
    pub is_error: bool,
}

/// What a failed tool's result says when the tool said nothing: Messages refuses an error
/// result without content ("content cannot be empty if `is_error` is true").
pub const SILENT_FAILURE_TEXT: &str = "The tool failed without saying why.";

impl ToolOutput {
    /// The text the model is given: the tool's, or for a failure with no text,
    /// [`SILENT_FAILURE_TEXT`].
    pub fn text_for_model(&self) -> std::borrow::Cow<'_, str> {
        if self.is_error && self.content.trim().is_empty() {
            std::borrow::Cow::Borrowed(SILENT_FAILURE_TEXT)
        } else {
            std::borrow::Cow::Borrowed(self.content.as_str())
        }
    }

    /// An answer of text only.
    pub fn text(call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        ToolOutput {
            call_id: call_id.into(),
            content: content.into(),
            images: Vec::new(),
            is_error,
        }
    }
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
    /// Chat Completions: the output limit goes as `max_tokens` from the first request, for
    /// an endpoint known to ignore `max_completion_tokens` without a word (DeepSeek's).
    pub output_limit_as_max_tokens: bool,
}
