//! Reading a provider key from the environment variable a definition names (SPEC §3.2).
//! The key lives only in an [`ApiKey`], which neither `Debug` nor any error ever shows.

use std::fmt;

use crate::definition::template::is_showable_var_name;
use crate::error::{AgentError, ErrorCode};

/// A provider credential. Deliberately not `Display`; `Debug` prints a placeholder.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Reads `var` through `lookup`; unset or empty (after trimming) is `missing_credential`,
    /// naming the variable and never a value.
    pub fn lookup(
        var: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ApiKey, AgentError> {
        match lookup(var) {
            Some(value) if value.trim().chars().any(char::is_control) => Err(missing(
                var,
                "holds characters an HTTP header cannot carry, such as a line break \
                 (the value is not shown)",
            )),
            Some(value) if !value.trim().is_empty() => Ok(ApiKey(value.trim().to_owned())),
            Some(_) => Err(missing(var, "is empty")),
            None => Err(missing(var, "is not set")),
        }
    }

    /// `text` with every occurrence of the key replaced: a provider or gateway may quote the
    /// request's credentials back in an error.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "[redacted]")
    }

    /// The key, for building request headers only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// For tests, which run against loopback mocks.
    #[cfg(any(test, feature = "testkit"))]
    pub fn for_tests(value: &str) -> ApiKey {
        ApiKey(value.to_owned())
    }
}

fn missing(var: &str, what: &str) -> AgentError {
    // An `env_key` holding a pasted key that happens to be a valid name is not repeated.
    let named = if is_showable_var_name(var) {
        format!("the environment variable {var} (this agent's env_key)")
    } else {
        "the environment variable this agent's env_key names (not shown: it looks like it \
         could be a key itself)"
            .to_owned()
    };
    AgentError::new(
        ErrorCode::MissingCredential,
        format!(
            "{named} {what}; set it in the environment mcp-agents runs in, then spawn or \
             resume the agent again"
        ),
    )
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_empty_names_the_variable_only() {
        let err = ApiKey::lookup("OPENROUTER_API_KEY", |_| None).unwrap_err();
        assert_eq!(err.code, ErrorCode::MissingCredential);
        assert!(err.message.contains("OPENROUTER_API_KEY") && err.message.contains("not set"));
        let err = ApiKey::lookup("K", |_| Some("  ".into())).unwrap_err();
        assert!(err.message.contains("is empty"));
    }

    #[test]
    fn a_key_no_header_can_carry_is_refused_without_showing_it() {
        let err = ApiKey::lookup("K", |_| Some("sk-live\nX".into())).unwrap_err();
        let pasted = "d15286d9647c0aa1f228d15286d9647c";
        let unset = ApiKey::lookup(pasted, |_| None).unwrap_err();
        assert!(!unset.message.contains(pasted), "{}", unset.message);
        assert_eq!(err.code, ErrorCode::MissingCredential);
        assert!(err.message.contains("cannot carry"), "{}", err.message);
        assert!(!err.message.contains("sk-live"));
        // Surrounding whitespace (a pasted line end) is trimmed, not refused.
        let key = ApiKey::lookup("K", |_| Some("sk-live-1\r\n".into())).unwrap();
        assert_eq!(key.expose(), "sk-live-1");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::lookup("K", |_| Some("sk-live-123".into())).unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.expose(), "sk-live-123");
    }
}
