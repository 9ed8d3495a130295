//! A run's secrets hidden from everything it leaves in its session (SPEC §10; issues 23
//! and 34): the activity it reports while it runs, the tools it used and the files it
//! changed (their names too), and how it ends (its answer, structured answer, error and
//! partial result). The secrets are its provider key and the values its child servers take
//! from the environment; a model or a child may echo any of them, and the session's records
//! go to the MCP client, `mcp-agents run` and progress notifications.

use crate::redact::Secrets;
use crate::run::{Activity, ModelAttempt, RunObserver, RunOutcome, ToolUse, UsageDelta};
use crate::toolbox::FileChange;

/// A run's observer that hides `secrets` from what it passes on.
pub(super) struct Hiding<'a> {
    pub observer: &'a dyn RunObserver,
    pub secrets: &'a Secrets,
}

impl RunObserver for Hiding<'_> {
    fn activity(&self, mut activity: Activity) {
        let hide = |text: &mut String| {
            if let std::borrow::Cow::Owned(hidden) = self.secrets.redact(text) {
                *text = hidden;
            }
        };
        hide(&mut activity.summary);
        for field in [&mut activity.tool, &mut activity.target]
            .into_iter()
            .flatten()
        {
            hide(field);
        }
        self.observer.activity(activity);
    }

    fn usage(&self, delta: UsageDelta) {
        self.observer.usage(delta);
    }

    fn tool_used(&self, tool: &str, event: ToolUse) {
        self.observer.tool_used(&self.secrets.redact(tool), event);
    }

    /// The model names the files it writes: a key it put in a name is hidden there too
    /// (the record lists the name as hidden; the file on disk keeps its name).
    fn file_changed(&self, change: &FileChange) {
        match self.secrets.redact(&change.path) {
            std::borrow::Cow::Borrowed(_) => self.observer.file_changed(change),
            std::borrow::Cow::Owned(path) => self.observer.file_changed(&FileChange {
                path,
                ..change.clone()
            }),
        }
    }

    fn parked(&self, waited: std::time::Duration) {
        self.observer.parked(waited);
    }

    /// The provider's refusal is quoted with the key hidden already; a child's secret the
    /// model sent is hidden here.
    fn model_left(&self, left: &ModelAttempt, next: &str) {
        let mut hidden = left.clone();
        hidden.error.message = self.secrets.redact(&left.error.message).into_owned();
        self.observer.model_left(&hidden, next);
    }

    fn before_request(&self) -> Result<(), crate::error::AgentError> {
        self.observer.before_request()
    }
}

/// `outcome` with `secrets` hidden from its texts. A partial result was cut by the run,
/// after its secrets were hidden ([`crate::run::partial_result`]); this catches every other
/// route, such as a child's startup error quoting its own token.
pub(super) fn hide_in_outcome(outcome: RunOutcome, secrets: &Secrets) -> RunOutcome {
    if secrets.is_empty() {
        return outcome;
    }
    let hide = |text: &mut String| {
        if let std::borrow::Cow::Owned(hidden) = secrets.redact(text) {
            *text = hidden;
        }
    };
    match outcome {
        RunOutcome::Completed(mut answer) => {
            hide(&mut answer.text);
            if let Some(structured) = &mut answer.structured {
                secrets.redact_json(structured);
            }
            RunOutcome::Completed(answer)
        }
        RunOutcome::Failed(mut failure) => {
            hide(&mut failure.error.message);
            if let Some(partial) = &mut failure.partial_result {
                hide(partial);
            }
            RunOutcome::Failed(failure)
        }
        RunOutcome::Cancelled { mut partial_result } => {
            if let Some(partial) = &mut partial_result {
                hide(partial);
            }
            RunOutcome::Cancelled { partial_result }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{AgentError, ErrorCode};
    use crate::run::{Answer, Failure};

    const KEY: &str = "sk-proj-abcdefghijklmnop";

    #[test]
    fn answers_errors_and_partial_results_lose_the_secrets() {
        let secrets = Secrets::new([KEY]);
        let answer = Answer {
            text: format!("the key: {KEY}"),
            refused: false,
            structured: Some(serde_json::json!({"key": KEY})),
        };
        let RunOutcome::Completed(answer) =
            hide_in_outcome(RunOutcome::Completed(answer), &secrets)
        else {
            panic!("still completed");
        };
        assert_eq!(answer.text, "the key: [redacted]");
        assert_eq!(
            answer.structured,
            Some(serde_json::json!({"key": "[redacted]"}))
        );
        let failure = Failure {
            error: AgentError::new(ErrorCode::ChildMcpStartupError, format!("env {KEY}")),
            partial_result: Some(format!("{KEY}!")),
        };
        let RunOutcome::Failed(failure) = hide_in_outcome(RunOutcome::Failed(failure), &secrets)
        else {
            panic!("still failed");
        };
        assert_eq!(failure.error.message, "env [redacted]");
        assert_eq!(failure.partial_result.as_deref(), Some("[redacted]!"));
    }
}
