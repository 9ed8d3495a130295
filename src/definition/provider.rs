//! Where a definition's model lives (SPEC §3.2): the provider kind, its endpoint and where
//! that came from, the variable its key is read from and how the key is sent, and the wire
//! API it speaks.

use std::fmt;

use url::Url;

use super::wire::{AuthHeader, WireApi};

/// The provider kinds of SPEC §3.2, and `gemini`: Google's OpenAI-compatible endpoint, built
/// in so that a definition (and the Gemini CLI format) can name it without its three fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Gemini,
    Custom,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "gemini" => Some(ProviderKind::Gemini),
            "custom" => Some(ProviderKind::Custom),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Custom => "custom",
        }
    }

    /// Built-in `(base_url, env_key, wire_api)` defaults; `custom` has none.
    pub fn defaults(self) -> Option<(&'static str, &'static str, WireApi)> {
        match self {
            ProviderKind::OpenAi => Some((
                "https://api.openai.com/v1",
                "OPENAI_API_KEY",
                WireApi::Responses,
            )),
            ProviderKind::Anthropic => Some((
                "https://api.anthropic.com",
                "ANTHROPIC_API_KEY",
                WireApi::AnthropicMessages,
            )),
            // Gemini's OpenAI-compatible endpoint (ai.google.dev/gemini-api/docs/openai): Chat
            // Completions only (its `/responses` answers 404), the key as a bearer token.
            ProviderKind::Gemini => {
                Some((GEMINI_BASE_URL, "GEMINI_API_KEY", WireApi::ChatCompletions))
            }
            ProviderKind::Custom => None,
        }
    }

    /// The built-in providers, for messages that list them.
    pub const BUILT_IN: [ProviderKind; 3] = [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
    ];
    /// The built-in provider whose naming `model` follows, when it plainly follows one: a
    /// Claude model (`claude-…`, also behind a gateway's prefix such as
    /// `anthropic/claude-…` or Bedrock's `us.anthropic.claude-…`) is Anthropic's; `gpt-…`,
    /// `chatgpt-…`, `codex-…` and the o-series (`o3`, `o4-mini`) are OpenAI's; `gemini-…`
    /// is Google's (the `gemini` provider). `None` for anything else (a local model, a
    /// gateway's own name, a typo).
    pub fn of_model(model: &str) -> Option<ProviderKind> {
        let model = model.trim().to_ascii_lowercase();
        let name = model.rsplit('/').next().unwrap_or(&model);
        let o_series = name.strip_prefix('o').is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_digit())
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        });
        if name.contains("claude") {
            Some(ProviderKind::Anthropic)
        } else if name.starts_with("gemini-") {
            Some(ProviderKind::Gemini)
        } else if ["gpt-", "chatgpt-", "codex-"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || o_series
        {
            Some(ProviderKind::OpenAi)
        } else {
            None
        }
    }

    /// The server's variable that replaces the built-in endpoint of a definition without a
    /// `base_url` (SPEC §3.2), as in Claude Code and the official SDKs.
    pub fn base_url_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_BASE_URL"),
            ProviderKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
            // Google's SDKs and Gemini CLI have no variable for this endpoint.
            ProviderKind::Gemini | ProviderKind::Custom => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Gemini's OpenAI-compatible endpoint.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta/openai";

/// Where a provider's endpoint came from, for `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointSource {
    /// The definition's own `base_url`.
    Definition,
    /// The server's environment variable (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`), read
    /// when the catalog loaded.
    Environment(String),
    /// The provider's built-in default.
    BuiltIn,
}

impl EndpointSource {
    /// `definition`, `default`, or the variable's name.
    pub fn label(&self) -> &str {
        match self {
            EndpointSource::Definition => "definition",
            EndpointSource::Environment(var) => var,
            EndpointSource::BuiltIn => "default",
        }
    }
}

/// Claude Code's variable for a gateway's token, sent as a bearer token. It is provider
/// `anthropic`'s key when the definition names no `env_key` and `ANTHROPIC_API_KEY` is not
/// set (SPEC §3.2).
pub const ANTHROPIC_AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";

/// Where and how to reach the model. The key itself is never stored: `env_key` names the
/// variable read when a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: Url,
    pub base_url_source: EndpointSource,
    pub env_key: String,
    /// Whether the definition named `env_key` itself (else it is the provider's default).
    pub env_key_explicit: bool,
    /// The definition's `auth`, when it sets one; else the header follows the key
    /// ([`ProviderConfig::key_choice`]).
    pub auth: Option<AuthHeader>,
    pub wire_api: WireApi,
}

/// The variable a run will read its key from and how it sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChoice {
    pub var: String,
    pub auth: AuthHeader,
    /// The variable that would also do, when neither is set (`ANTHROPIC_AUTH_TOKEN` beside
    /// `ANTHROPIC_API_KEY`), for messages.
    pub alternative: Option<&'static str>,
}

impl ProviderConfig {
    /// A provider whose fields all come from the definition, sending the wire's own header.
    pub fn new(kind: ProviderKind, base_url: Url, env_key: &str, wire_api: WireApi) -> Self {
        ProviderConfig {
            kind,
            base_url,
            base_url_source: EndpointSource::Definition,
            env_key: env_key.to_owned(),
            env_key_explicit: true,
            auth: None,
            wire_api,
        }
    }

    /// A built-in provider as a definition that sets none of its fields gets it (before the
    /// server's `*_BASE_URL`); `None` for `custom`. For tests.
    #[cfg(any(test, feature = "testkit"))]
    pub fn built_in(kind: ProviderKind) -> Option<Self> {
        let (url, key, wire) = kind.defaults()?;
        Some(ProviderConfig {
            base_url_source: EndpointSource::BuiltIn,
            env_key_explicit: false,
            ..ProviderConfig::new(kind, Url::parse(url).ok()?, key, wire)
        })
    }

    /// Which variable a run reads its key from, given which variables hold a value now
    /// (`is_set`: set and not blank), and which header carries it. For provider `anthropic`
    /// without an `env_key` of its own, `ANTHROPIC_AUTH_TOKEN` is used when it is set and
    /// `ANTHROPIC_API_KEY` is not, sent as a bearer token, as Claude Code does; an `auth` the
    /// definition sets always wins.
    pub fn key_choice(&self, is_set: impl Fn(&str) -> bool) -> KeyChoice {
        let falls_back = self.kind == ProviderKind::Anthropic && !self.env_key_explicit;
        if falls_back && !is_set(&self.env_key) && is_set(ANTHROPIC_AUTH_TOKEN) {
            return KeyChoice {
                var: ANTHROPIC_AUTH_TOKEN.to_owned(),
                auth: self.auth.unwrap_or(AuthHeader::Bearer),
                alternative: None,
            };
        }
        KeyChoice {
            var: self.env_key.clone(),
            auth: self
                .auth
                .unwrap_or_else(|| AuthHeader::default_for(self.wire_api)),
            alternative: falls_back.then_some(ANTHROPIC_AUTH_TOKEN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_id_tells_its_family_when_it_plainly_has_one() {
        for (model, family) in [
            ("claude-sonnet-5-5", Some(ProviderKind::Anthropic)),
            ("anthropic/claude-opus-4-6", Some(ProviderKind::Anthropic)),
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some(ProviderKind::Anthropic),
            ),
            ("gpt-5.4", Some(ProviderKind::OpenAi)),
            ("openai/gpt-5.4-mini", Some(ProviderKind::OpenAi)),
            ("o3", Some(ProviderKind::OpenAi)),
            ("o4-mini", Some(ProviderKind::OpenAi)),
            ("codex-mini-latest", Some(ProviderKind::OpenAi)),
            ("sonet", None),
            ("sonnet", None),
            ("qwen3-coder", None),
            ("ollama", None),
            ("opus", None),
        ] {
            assert_eq!(ProviderKind::of_model(model), family, "{model}");
        }
    }

    fn anthropic(explicit: bool, auth: Option<AuthHeader>) -> ProviderConfig {
        ProviderConfig {
            env_key_explicit: explicit,
            auth,
            ..ProviderConfig::built_in(ProviderKind::Anthropic).unwrap()
        }
    }

    #[test]
    fn the_auth_token_is_the_fallback_of_the_default_anthropic_key_only() {
        let only_token = |var: &str| var == ANTHROPIC_AUTH_TOKEN;
        let both = |_: &str| true;
        let none = |_: &str| false;

        let choice = anthropic(false, None).key_choice(only_token);
        assert_eq!(
            (choice.var.as_str(), choice.auth),
            (ANTHROPIC_AUTH_TOKEN, AuthHeader::Bearer)
        );
        let choice = anthropic(false, None).key_choice(both);
        assert_eq!(
            (choice.var.as_str(), choice.auth),
            ("ANTHROPIC_API_KEY", AuthHeader::XApiKey),
            "the API key wins when both are set"
        );
        let choice = anthropic(false, None).key_choice(none);
        assert_eq!(choice.alternative, Some(ANTHROPIC_AUTH_TOKEN));
        // A definition's own env_key never falls back, even when it names the default.
        let choice = anthropic(true, None).key_choice(only_token);
        assert_eq!(
            (choice.var.as_str(), choice.alternative),
            ("ANTHROPIC_API_KEY", None)
        );
        // An explicit `auth` wins over the token's bearer.
        let choice = anthropic(false, Some(AuthHeader::XApiKey)).key_choice(only_token);
        assert_eq!(choice.auth, AuthHeader::XApiKey);
    }

    #[test]
    fn each_wire_has_its_own_default_header() {
        let mut config = anthropic(true, None);
        assert_eq!(config.key_choice(|_| true).auth, AuthHeader::XApiKey);
        config.auth = Some(AuthHeader::Bearer);
        assert_eq!(config.key_choice(|_| true).auth, AuthHeader::Bearer);
        let openai = ProviderConfig::new(
            ProviderKind::OpenAi,
            Url::parse("https://api.openai.com/v1").unwrap(),
            "OPENAI_API_KEY",
            WireApi::Responses,
        );
        assert_eq!(openai.key_choice(|_| false).auth, AuthHeader::Bearer);
        assert_eq!(openai.key_choice(|_| false).alternative, None);
    }
}
