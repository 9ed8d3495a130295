//! Reading a provider key from the environment when a run starts (SPEC §3.2), and the header
//! that carries it. The key lives only in an [`ApiKey`], which neither `Debug` nor any error
//! ever shows; the client hides it from every text through its run's `Secrets`.

use std::fmt;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::definition::is_showable_var_name;
use crate::definition::{AuthHeader, ProviderConfig};
use crate::error::{AgentError, ErrorCode};

/// A provider credential. Deliberately not `Display`; `Debug` prints a placeholder.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Reads `var` through `lookup`: unset, empty (after trimming) or holding characters no
    /// header can carry is a [`KeyProblem`].
    pub fn read(var: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<ApiKey, KeyProblem> {
        match lookup(var) {
            Some(value) if value.trim().chars().any(char::is_control) => Err(KeyProblem::Unusable),
            Some(value) if !value.trim().is_empty() => Ok(ApiKey(value.trim().to_owned())),
            Some(_) => Err(KeyProblem::Empty),
            None => Err(KeyProblem::Unset),
        }
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

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Why a variable gave no usable key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProblem {
    Unset,
    Empty,
    /// Holds a line break or another character an HTTP header cannot carry.
    Unusable,
}

/// The key of one run and the header that carries it.
#[derive(Debug, Clone)]
pub struct Credential {
    pub key: ApiKey,
    pub auth: AuthHeader,
}

impl Credential {
    /// Reads the key `provider` uses now ([`ProviderConfig::key_choice`]: its `env_key`, or
    /// `ANTHROPIC_AUTH_TOKEN` in its place) through `lookup`.
    pub fn resolve(
        provider: &ProviderConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Credential, MissingCredential> {
        let choice =
            provider.key_choice(|var| lookup(var).is_some_and(|value| !value.trim().is_empty()));
        match ApiKey::read(&choice.var, &lookup) {
            Ok(key) => Ok(Credential {
                key,
                auth: choice.auth,
            }),
            Err(problem) => Err(MissingCredential {
                var: choice.var,
                problem,
                alternative: choice.alternative,
            }),
        }
    }
}

/// Who is told what to do about a missing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The server: the variable has to reach the MCP client's configuration.
    McpClient,
    /// `mcp-agents run`: the variable has to be set in the shell.
    Terminal,
}

/// A run's key could not be read (`missing_credential`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingCredential {
    pub var: String,
    pub problem: KeyProblem,
    /// The variable that would also have done (`ANTHROPIC_AUTH_TOKEN`).
    pub alternative: Option<&'static str>,
}

impl MissingCredential {
    /// The error, naming the variable (never a value) and what to do for `audience`.
    pub fn to_error(&self, audience: Audience) -> AgentError {
        // An `env_key` holding a pasted key that happens to be a valid name is not repeated.
        let showable = is_showable_var_name(&self.var);
        let named = if showable {
            format!("the environment variable {} (this agent's key)", self.var)
        } else {
            "the environment variable this agent's env_key names (not shown: it looks like it \
             could be a key itself)"
                .to_owned()
        };
        let what = match self.problem {
            KeyProblem::Unset => "is not set",
            KeyProblem::Empty => "is empty",
            KeyProblem::Unusable => {
                "holds characters an HTTP header cannot carry, such as a line break (the value \
                 is not shown)"
            }
        };
        let also = match self.alternative {
            Some(other) if self.problem != KeyProblem::Unusable => format!(
                ", and neither is {other} (a gateway's token, which would be sent as a bearer \
                 token)"
            ),
            _ => String::new(),
        };
        let var = if showable { self.var.as_str() } else { "it" };
        let advice = match audience {
            Audience::McpClient => crate::clients::pass_variable_advice(var),
            Audience::Terminal => {
                if showable {
                    format!("set it in this shell (export {var}=…) and run the command again")
                } else {
                    "set it in this shell and run the command again".to_owned()
                }
            }
        };
        AgentError::new(
            ErrorCode::MissingCredential,
            format!("{named} {what}{also}; {advice}"),
        )
    }
}

/// The headers every wire sends: `content-type: application/json` and the key's
/// ([`insert_auth_header`]).
pub(super) fn json_headers(key: &ApiKey, auth: AuthHeader) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    insert_auth_header(&mut headers, key, auth);
    headers
}

/// Adds the header that carries `key`: `Authorization: Bearer KEY` or `x-api-key: KEY`,
/// marked sensitive so no debug output of the request shows it.
pub(super) fn insert_auth_header(headers: &mut HeaderMap, key: &ApiKey, auth: AuthHeader) {
    let (name, value) = match auth {
        AuthHeader::Bearer => (AUTHORIZATION, format!("Bearer {}", key.expose())),
        AuthHeader::XApiKey => (
            HeaderName::from_static("x-api-key"),
            key.expose().to_owned(),
        ),
    };
    if let Ok(mut value) = HeaderValue::from_str(&value) {
        value.set_sensitive(true);
        headers.insert(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ANTHROPIC_AUTH_TOKEN, ProviderKind, WireApi};
    use url::Url;

    fn custom(var: &str) -> ProviderConfig {
        ProviderConfig::new(
            ProviderKind::Custom,
            Url::parse("http://127.0.0.1:9/v1").unwrap(),
            var,
            WireApi::Responses,
        )
    }

    fn missing(var: &str, value: Option<&str>) -> MissingCredential {
        let value = value.map(str::to_owned);
        Credential::resolve(&custom(var), |_| value.clone()).unwrap_err()
    }

    #[test]
    fn missing_or_empty_names_the_variable_only() {
        let err = missing("OPENROUTER_API_KEY", None).to_error(Audience::McpClient);
        assert_eq!(err.code, ErrorCode::MissingCredential);
        assert!(err.message.contains("OPENROUTER_API_KEY") && err.message.contains("not set"));
        let err = missing("K", Some("  ")).to_error(Audience::McpClient);
        assert!(err.message.contains("is empty"));
    }

    #[test]
    fn the_message_says_how_the_variable_reaches_the_server_or_the_shell() {
        let gone = missing("OPENAI_API_KEY", None);
        let server = gone.to_error(Audience::McpClient).message;
        for part in [
            "`env`",
            "`env_vars`",
            "restart the client",
            "OPENAI_API_KEY",
        ] {
            assert!(server.contains(part), "{part} missing: {server}");
        }
        let terminal = gone.to_error(Audience::Terminal).message;
        assert!(
            terminal.ends_with(
                "set it in this shell (export OPENAI_API_KEY=…) and run the command again"
            ),
            "{terminal}"
        );
        assert!(!terminal.contains("spawn") && !terminal.contains("restart"));
    }

    #[test]
    fn the_anthropic_default_names_the_gateway_token_too() {
        let provider = ProviderConfig::built_in(ProviderKind::Anthropic).unwrap();
        let err = Credential::resolve(&provider, |_| None).unwrap_err();
        let message = err.to_error(Audience::McpClient).message;
        assert!(
            message.contains("ANTHROPIC_API_KEY (this agent's key) is not set, and neither is ANTHROPIC_AUTH_TOKEN"),
            "{message}"
        );
        let token = Credential::resolve(&provider, |var| {
            (var == ANTHROPIC_AUTH_TOKEN).then(|| "gw-token".to_owned())
        })
        .unwrap();
        assert_eq!(token.auth, AuthHeader::Bearer);
        assert_eq!(token.key.expose(), "gw-token");
    }

    #[test]
    fn a_key_no_header_can_carry_is_refused_without_showing_it() {
        let err = missing("K", Some("sk-live\nX")).to_error(Audience::McpClient);
        let pasted = "d15286d9647c0aa1f228d15286d9647c";
        let unset = missing(pasted, None).to_error(Audience::Terminal);
        assert!(!unset.message.contains(pasted), "{}", unset.message);
        assert_eq!(err.code, ErrorCode::MissingCredential);
        assert!(err.message.contains("cannot carry"), "{}", err.message);
        assert!(!err.message.contains("sk-live"));
        // Surrounding whitespace (a pasted line end) is trimmed, not refused.
        let key = ApiKey::read("K", |_| Some("sk-live-1\r\n".into())).unwrap();
        assert_eq!(key.expose(), "sk-live-1");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::read("K", |_| Some("sk-live-123".into())).unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.expose(), "sk-live-123");
    }

    #[test]
    fn each_header_carries_the_key_as_its_api_expects() {
        let key = ApiKey::for_tests("k-1");
        let mut headers = HeaderMap::new();
        insert_auth_header(&mut headers, &key, AuthHeader::Bearer);
        assert_eq!(headers["authorization"], "Bearer k-1");
        assert!(headers["authorization"].is_sensitive());
        let mut headers = HeaderMap::new();
        insert_auth_header(&mut headers, &key, AuthHeader::XApiKey);
        assert_eq!(headers["x-api-key"], "k-1");
        assert!(headers.get("authorization").is_none());
    }
}
