//! How a provider request fails, after any retries, and the error code each failure is.

use super::models::EffortLevels;
use super::unsupported::OptionalParam;
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
    /// A 400 naming an optional parameter the model does not take; the client sends the
    /// request again without it (SPEC §6.1), so this reaches a caller only when that, too,
    /// was refused.
    Unsupported(OptionalParam),
    /// A 400 refusing the effort level sent, with the levels it lists (none when it lists
    /// none); the client sends the request again once with the nearest level the model
    /// takes (SPEC §6.1).
    EffortLevel(EffortLevels),
    /// A 400 refusing any effort but `none` with function tools (OpenAI's reasoning models
    /// on Chat Completions); the client sends the request again with `none` (SPEC §6.1).
    ReasoningWithTools,
    /// A 400 asking for `reasoning_content` back on every assistant message (DeepSeek's
    /// thinking mode); the client sends the request again with it (SPEC §6.2).
    ReasoningEcho,
    /// The model itself could not answer, where another model of the same provider may:
    /// what a run's `fallback_models` are tried on (SPEC §5.1).
    Unavailable(Unavailable),
}

/// Why a model could not answer, of the failures a fallback model may mend (SPEC §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// Rate limited after every retry, or asked to wait longer than a request may.
    RateLimited,
    /// A quota or billing refusal (`insufficient_quota`, `billing_error`), never retried.
    Quota,
    /// Overloaded after every retry (HTTP 529 `overloaded_error`, HTTP 503).
    Overloaded,
    /// The provider does not know the model, or has retired it.
    UnknownModel,
}

impl Unavailable {
    /// What a record's `model_attempts` says of it: "rate limited", "out of quota"…
    pub fn as_str(self) -> &'static str {
        match self {
            Unavailable::RateLimited => "rate limited",
            Unavailable::Quota => "out of quota or credit",
            Unavailable::Overloaded => "overloaded",
            Unavailable::UnknownModel => "unknown or retired model",
        }
    }
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

    /// The failure as a caller sees it once nothing is left to retry: a refused parameter
    /// that could not be left out is a plain failure.
    pub fn settled(self) -> Self {
        match self.failure {
            ProviderFailure::Unsupported(_)
            | ProviderFailure::EffortLevel(_)
            | ProviderFailure::ReasoningWithTools
            | ProviderFailure::ReasoningEcho => ProviderError {
                failure: ProviderFailure::Failed,
                ..self
            },
            _ => self,
        }
    }
}

impl From<ProviderError> for AgentError {
    fn from(e: ProviderError) -> Self {
        let code = match e.failure {
            ProviderFailure::Timeout => ErrorCode::ProviderTimeout,
            ProviderFailure::ContextLimit => ErrorCode::ContextLimit,
            ProviderFailure::Failed
            | ProviderFailure::Unsupported(_)
            | ProviderFailure::EffortLevel(_)
            | ProviderFailure::ReasoningWithTools
            | ProviderFailure::ReasoningEcho
            | ProviderFailure::Unavailable(_) => ErrorCode::ProviderError,
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
