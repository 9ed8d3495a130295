//! A question an agent asked its parent (SPEC §4.5): what its session's record shows of it
//! ([`Question`]), the answers it can get ([`ParentAnswer`]), the one pending in a running
//! session ([`Pending`]), and what the `ask_parent` tool tells the model in each case.

use std::time::Duration;

use tokio::sync::oneshot;

/// A question, as the session's snapshot shows it while it waits for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Numbers the session's questions from 1, so that an answer meant for an earlier one
    /// is refused ([`crate::sessions::SessionManager::answer_question`]).
    pub id: u64,
    /// The question, trimmed, the run's secrets hidden.
    pub text: String,
    /// The answers the agent suggested, if any (at most [`crate::limits::ASK_OPTIONS`]).
    pub options: Vec<String>,
}

/// What the parent answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentAnswer {
    /// The answer: it becomes the tool's result as it is.
    Text(String),
    /// The person declined to answer (MCP tasks: an elicitation declined or cancelled): the
    /// agent is told to decide for itself.
    Declined,
}

/// The question a running session waits on, and where its answer goes: the first answer,
/// by any path, takes it.
pub(crate) struct Pending {
    pub question: Question,
    pub answer: oneshot::Sender<ParentAnswer>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("question", &self.question)
            .finish_non_exhaustive()
    }
}

/// What the tool answers the model for `answer`: the parent's text as it is.
pub(super) fn answer_for_model(answer: ParentAnswer) -> String {
    match answer {
        ParentAnswer::Text(text) => text,
        ParentAnswer::Declined => DECLINED.to_owned(),
    }
}

/// What the tool answers when the person declined.
pub(super) const DECLINED: &str = "The person declined to answer. Decide for yourself, and say \
    in your final answer what you assumed.";

/// What the tool answers when no answer came within `timeout`.
pub(super) fn unanswered(timeout: Duration) -> String {
    format!(
        "No answer came within {} s. Decide for yourself, and say in your final answer what \
         you assumed.",
        timeout.as_secs()
    )
}
