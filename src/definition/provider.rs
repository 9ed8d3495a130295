//! Where a definition's model lives (SPEC §3.2): the provider kind, its endpoint, the
//! variable its key is read from, and the wire API it speaks.

use std::fmt;

use url::Url;

/// The three provider kinds of SPEC §3.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Custom,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "custom" => Some(ProviderKind::Custom),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
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
            ProviderKind::Custom => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The wire protocols this runtime speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireApi {
    Responses,
    AnthropicMessages,
}

impl WireApi {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "responses" => Some(WireApi::Responses),
            "anthropic-messages" => Some(WireApi::AnthropicMessages),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WireApi::Responses => "responses",
            WireApi::AnthropicMessages => "anthropic-messages",
        }
    }
}

/// Where and how to reach the model. The key itself is never stored: `env_key` names the
/// variable read when a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: Url,
    pub env_key: String,
    pub wire_api: WireApi,
}
