//! How a run ends ([`RunOutcome`]): a final [`Answer`] (its text, whether it was a refusal,
//! and the JSON that satisfied the agent's `output_schema`), or a [`Failure`] that keeps the
//! work the run did before it failed (`partial_result`, SPEC §4.3).

use serde_json::Value;

use crate::error::AgentError;
use crate::limits::PARTIAL_RESULT_BYTES;
use crate::redact::Secrets;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    Completed(Answer),
    Failed(Failure),
    /// Cancelled through the token (the parent stopped the run, or the server is
    /// stopping); the conversation is valid and can be resumed. Keeps the run's last
    /// assistant text, as a failure does.
    Cancelled {
        partial_result: Option<String>,
    },
}

/// A completed run's result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// The final reply's text; for a refusal, what the model said instead.
    pub text: String,
    /// The model declined to answer (SPEC §4.3 `refused`).
    pub refused: bool,
    /// With `output_schema`: the answer parsed as JSON, which satisfied it.
    pub structured: Option<Value>,
}

impl From<&str> for Answer {
    fn from(text: &str) -> Self {
        Answer {
            text: text.to_owned(),
            ..Answer::default()
        }
    }
}

impl From<String> for Answer {
    fn from(text: String) -> Self {
        Answer {
            text,
            ..Answer::default()
        }
    }
}

/// A failed run: the error, and the last assistant text it produced, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub error: AgentError,
    /// At most [`PARTIAL_RESULT_BYTES`], cut at a character boundary.
    pub partial_result: Option<String>,
}

impl Failure {
    /// `error`, keeping `text` (the run's last assistant message) as the partial result
    /// when there is any, with `secrets` hidden.
    pub fn with_partial(error: AgentError, text: &str, secrets: &Secrets) -> Self {
        Failure {
            error,
            partial_result: partial_result(text, secrets),
        }
    }
}

impl From<AgentError> for Failure {
    fn from(error: AgentError) -> Self {
        Failure {
            error,
            partial_result: None,
        }
    }
}

/// `text` with `secrets` hidden, then capped at [`PARTIAL_RESULT_BYTES`] on a character
/// boundary (what the cut left of a secret hidden too); `None` when it holds nothing but
/// whitespace.
pub fn partial_result(text: &str, secrets: &Secrets) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    Some(secrets.cut(text, PARTIAL_RESULT_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_results_are_capped_on_a_character_boundary() {
        let none = &Secrets::default();
        assert_eq!(partial_result("  \n", none), None);
        assert_eq!(
            partial_result("half done", none).as_deref(),
            Some("half done")
        );
        let long = format!("{}é", "x".repeat(PARTIAL_RESULT_BYTES - 1));
        let cut = partial_result(&long, none).unwrap();
        assert_eq!(
            cut.len(),
            PARTIAL_RESULT_BYTES - 1,
            "é would straddle the cap"
        );
        let exact = "y".repeat(PARTIAL_RESULT_BYTES + 10);
        assert_eq!(
            partial_result(&exact, none).unwrap().len(),
            PARTIAL_RESULT_BYTES
        );
    }

    #[test]
    fn partial_results_hide_the_runs_secrets_before_and_at_the_cut() {
        let key = "sk-live-0123456789abcdef";
        let secrets = Secrets::new([key]);
        // The key straddles the cap: redacted first, nothing of it is left.
        let text = format!("{}{key} and more", "x".repeat(PARTIAL_RESULT_BYTES - 10));
        let cut = partial_result(&text, &secrets).unwrap();
        assert!(cut.len() <= PARTIAL_RESULT_BYTES);
        assert!(!cut.contains("sk-live-"), "{}", &cut[cut.len() - 20..]);
        assert_eq!(
            partial_result(&format!("said {key}"), &secrets).as_deref(),
            Some("said [redacted]")
        );
    }
}
