//! The error codes of SPEC §11, and the error every failing operation carries: a code the
//! parent model can branch on and a message that says what happened and what to do next.

use std::fmt;

/// One code per failure class (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidInput,
    UnknownAgent,
    CapacityExceeded,
    QueueFull,
    MissingCredential,
    SkillNotFound,
    ChildMcpStartupError,
    ProviderError,
    ProviderTimeout,
    ContextLimit,
    TurnLimit,
    BudgetExceeded,
    /// The parent stopped the run (`send_input` with `stop`).
    Cancelled,
    InvalidOutput,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::InvalidInput,
        ErrorCode::UnknownAgent,
        ErrorCode::CapacityExceeded,
        ErrorCode::QueueFull,
        ErrorCode::MissingCredential,
        ErrorCode::SkillNotFound,
        ErrorCode::ChildMcpStartupError,
        ErrorCode::ProviderError,
        ErrorCode::ProviderTimeout,
        ErrorCode::ContextLimit,
        ErrorCode::TurnLimit,
        ErrorCode::BudgetExceeded,
        ErrorCode::Cancelled,
        ErrorCode::InvalidOutput,
        ErrorCode::Internal,
    ];

    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::UnknownAgent => "unknown_agent",
            ErrorCode::CapacityExceeded => "capacity_exceeded",
            ErrorCode::QueueFull => "queue_full",
            ErrorCode::MissingCredential => "missing_credential",
            ErrorCode::SkillNotFound => "skill_not_found",
            ErrorCode::ChildMcpStartupError => "child_mcp_startup_error",
            ErrorCode::ProviderError => "provider_error",
            ErrorCode::ProviderTimeout => "provider_timeout",
            ErrorCode::ContextLimit => "context_limit",
            ErrorCode::TurnLimit => "turn_limit",
            ErrorCode::BudgetExceeded => "budget_exceeded",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::InvalidOutput => "invalid_output",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure with its code. Messages never contain credentials, prompts or model text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AgentError {
    pub code: ErrorCode,
    pub message: String,
}

impl AgentError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AgentError {
            code,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_spec_strings() {
        let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "invalid_input",
                "unknown_agent",
                "capacity_exceeded",
                "queue_full",
                "missing_credential",
                "skill_not_found",
                "child_mcp_startup_error",
                "provider_error",
                "provider_timeout",
                "context_limit",
                "turn_limit",
                "budget_exceeded",
                "cancelled",
                "invalid_output",
                "internal"
            ]
        );
        let e = AgentError::new(ErrorCode::TurnLimit, "needed more than 3 requests");
        assert_eq!(e.to_string(), "turn_limit: needed more than 3 requests");
    }
}
