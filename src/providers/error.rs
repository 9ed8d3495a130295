//! How a provider request fails, after any retries, and the error code each failure is.

use crate::error::{AgentError, ErrorCode};

/// How a request failed, after any retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderFailure {
    /// Connect or request timeout.
    Timeout,
    /// The history no longer fits the model's context window.
    ContextLimit,
    /// Refused, failed after retries, or answered with something unusable.
    Failed,
}

/// A provider failure with a message quoting the provider (never request headers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub failure: ProviderFailure,
    pub message: String,
}

impl ProviderError {
    pub fn failed(message: impl Into<String>) -> Self {
        ProviderError {
            failure: ProviderFailure::Failed,
            message: message.into(),
        }
    }
}

impl From<ProviderError> for AgentError {
    fn from(e: ProviderError) -> Self {
        let code = match e.failure {
            ProviderFailure::Timeout => ErrorCode::ProviderTimeout,
            ProviderFailure::ContextLimit => ErrorCode::ContextLimit,
            ProviderFailure::Failed => ErrorCode::ProviderError,
        };
        let message = match e.failure {
            ProviderFailure::ContextLimit => format!(
                "{}; the conversation no longer fits the model's context window. Spawn a \
                 fresh agent for a narrower task",
                e.message
            ),
            _ => e.message,
        };
        AgentError::new(code, message)
    }
}
