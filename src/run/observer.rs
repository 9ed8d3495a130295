//! What a run reads and reports outside itself: the queued user input it delivers
//! ([`Inbox`]) and where its activity, usage and tool calls go ([`RunObserver`]). The
//! session implements both; tests pass their own.

use std::time::Duration;

use super::activity::Activity;
use crate::error::AgentError;
use crate::toolbox::FileChange;

/// Queued user input.
pub trait Inbox: Send + Sync {
    /// Everything queued, oldest first; the inbox is empty afterwards.
    fn take_all(&self) -> Vec<String>;
    fn is_empty(&self) -> bool;
}

/// What a run adds to its session's counters after a model request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageDelta {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the input, what the provider read from and wrote to its prompt cache.
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// What happened to a child tool call, for `usage.tool_calls` and `tools_used` (SPEC §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolUse {
    /// The call was made: it went to the tool (a call answered without reaching the tool,
    /// unknown or with arguments its schema rejects, is not one).
    Called,
    /// A call that was made failed: the tool said so, it timed out, or it was cancelled.
    Failed,
}

/// A model a run left for its next fallback before its first reply (SPEC §5.1
/// `model_attempts`): which, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelAttempt {
    /// The model id as sent.
    pub model: String,
    /// Why it was left: the provider's refusal, as a failed run would report it.
    pub error: AgentError,
}

/// Where a run reports what it is doing.
pub trait RunObserver: Send + Sync {
    fn activity(&self, activity: Activity);
    fn usage(&self, delta: UsageDelta);
    /// A call to the tool the model knows as `tool` (`github__search_issues`).
    fn tool_used(&self, tool: &str, event: ToolUse);
    /// A tool call changed a file of the workspace (SPEC §4.3 `files_changed`). No default:
    /// an observer that wraps another must pass it on.
    fn file_changed(&self, change: &FileChange);
    /// The run waited this long for its parent's answer (SPEC §4.5), time its
    /// `max_run_seconds` does not count: whoever holds the run's limits moves its deadline
    /// by as much. No default, as for `file_changed`.
    fn parked(&self, waited: Duration);
    /// The run's model could not answer (`left`), and the run asks `next` from now on
    /// (SPEC §5.1). No default, as for `file_changed`.
    fn model_left(&self, left: &ModelAttempt, next: &str);

    /// Asked before each model request: an error (the server's spend cap reached, SPEC
    /// §5.1) ends the run there as a budget does, keeping its partial result. No default,
    /// as for `file_changed`.
    fn before_request(&self) -> Result<(), AgentError>;
}
