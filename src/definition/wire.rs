//! The wire APIs this runtime speaks, and one row of rules for each ([`WireRules`]): the
//! names a definition writes, the header its key goes in, the temperatures and reasoning
//! effort levels it takes, the keywords it refuses at the top of a tool's schema, and when a
//! request carries `prompt_cache_key`. Discovery checks a definition against the row, the
//! providers' client and tool shaping read it; only this file and the client's one switch
//! (`providers/formats.rs`) name a wire (`tests/suite/architecture.rs` holds that).

/// The wire protocols this runtime speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireApi {
    Responses,
    AnthropicMessages,
    /// OpenAI Chat Completions (SPEC §6.2).
    ChatCompletions,
}

/// What differs between the wires outside their own encoder and reader: one row per wire.
#[derive(Debug)]
pub struct WireRules {
    /// The `wire_api` value that names it.
    pub name: &'static str,
    /// Other names a `wire_api` may give it (`chat`, Codex's old name for Chat Completions).
    pub aliases: &'static [&'static str],
    /// The header its own endpoints take the key in.
    pub auth: AuthHeader,
    /// The highest `temperature` it accepts (the lowest is 0).
    pub max_temperature: f64,
    /// The reasoning effort levels its SDK's types allow (SPEC §6.1), in order.
    pub efforts: &'static [ReasoningEffort],
    /// Whether an effort turns thinking on, with which the API takes only temperature 1.
    pub effort_fixes_temperature: bool,
    /// The OpenAI model families that refuse to reason with function tools on this wire
    /// (any effort but `none`, their default included): their reasoning with tools needs
    /// the Responses API ([`WireRules::refuses_reasoning_with_tools`]).
    pub reasoning_refused_with_tools: &'static [&'static str],
    /// The keywords it refuses at the top level of a tool's input schema.
    pub schema_refuses: &'static [&'static str],
    /// Whether a request carries `prompt_cache_key`.
    pub cache_key: CacheKey,
    /// Whether some servers of it ignore `max_completion_tokens`, so that a request to them
    /// names its limit `max_tokens` (Chat Completions at DeepSeek).
    pub max_tokens_for_some_servers: bool,
    /// Whether a tool's name must start with a letter or an underscore (Gemini's function
    /// declarations, behind its Chat Completions endpoint): another is sent with `_` in front.
    pub tool_name_starts_with_letter: bool,
}

/// When a request carries `prompt_cache_key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKey {
    Always,
    /// The API caches by `cache_control` breakpoints instead.
    Never,
    /// Only to OpenAI's own endpoint: other servers of the API may refuse a field they do
    /// not know (Gemini's does).
    OpenAiOnly,
}

/// Every level (what the Responses and Chat Completions SDKs' `ReasoningEffort` takes).
const EVERY_EFFORT: &[ReasoningEffort] = &[
    ReasoningEffort::None,
    ReasoningEffort::Minimal,
    ReasoningEffort::Low,
    ReasoningEffort::Medium,
    ReasoningEffort::High,
    ReasoningEffort::XHigh,
    ReasoningEffort::Max,
];

/// Responses and Chat Completions refuse these at the top of `parameters`
/// (`invalid_function_parameters`; Chat Completions validates as Responses does, one backend).
const OPENAI_SCHEMA_REFUSES: &[&str] = &["allOf", "oneOf", "anyOf", "enum", "not"];

impl WireRules {
    pub const RESPONSES: WireRules = WireRules {
        name: "responses",
        aliases: &[],
        auth: AuthHeader::Bearer,
        max_temperature: 2.0,
        efforts: EVERY_EFFORT,
        effort_fixes_temperature: false,
        reasoning_refused_with_tools: &[],
        schema_refuses: OPENAI_SCHEMA_REFUSES,
        cache_key: CacheKey::Always,
        max_tokens_for_some_servers: false,
        tool_name_starts_with_letter: false,
    };

    pub const MESSAGES: WireRules = WireRules {
        name: "anthropic-messages",
        aliases: &[],
        auth: AuthHeader::XApiKey,
        max_temperature: 1.0,
        // `anthropic` `OutputConfigParam.effort`.
        efforts: &[
            ReasoningEffort::Low,
            ReasoningEffort::Medium,
            ReasoningEffort::High,
            ReasoningEffort::XHigh,
            ReasoningEffort::Max,
        ],
        // "temperature may only be set to 1 when thinking is enabled".
        effort_fixes_temperature: true,
        reasoning_refused_with_tools: &[],
        // "input_schema does not support oneOf, allOf, or anyOf at the top level".
        schema_refuses: &["allOf", "oneOf", "anyOf"],
        cache_key: CacheKey::Never,
        max_tokens_for_some_servers: false,
        tool_name_starts_with_letter: false,
    };

    pub const CHAT_COMPLETIONS: WireRules = WireRules {
        name: "chat-completions",
        aliases: &["chat"],
        auth: AuthHeader::Bearer,
        max_temperature: 2.0,
        efforts: EVERY_EFFORT,
        effort_fixes_temperature: false,
        // "Function tools with reasoning_effort are not supported for gpt-5.4 in
        // /v1/chat/completions. Please use /v1/responses instead." (pipecat-ai/pipecat#4043;
        // gpt-5.2 too, livekit/agents#5088); gpt-5.6 and gpt-6 refuse their own default
        // effort: "… To use function tools, use /v1/responses or set reasoning_effort to
        // 'none'." (GoogleChromeLabs/webmcp-tools#417, can1357/oh-my-pi#11052).
        reasoning_refused_with_tools: &["gpt-5.2", "gpt-5.4", "gpt-5.6", "gpt-6"],
        schema_refuses: OPENAI_SCHEMA_REFUSES,
        cache_key: CacheKey::OpenAiOnly,
        max_tokens_for_some_servers: true,
        tool_name_starts_with_letter: true,
    };
}

impl WireRules {
    /// Whether `model` (a gateway's `vendor/model` by the part after the last `/`) is of a
    /// family that refuses to reason with function tools on this wire; its `-chat` models do
    /// not reason.
    pub fn refuses_reasoning_with_tools(&self, model: &str) -> bool {
        let id = model.rsplit('/').next().unwrap_or(model);
        !id.contains("-chat")
            && self
                .reasoning_refused_with_tools
                .iter()
                .any(|family| id.starts_with(family))
    }
}

impl WireApi {
    /// Every wire, in the order messages list them.
    pub const ALL: [WireApi; 3] = [
        WireApi::Responses,
        WireApi::AnthropicMessages,
        WireApi::ChatCompletions,
    ];

    /// The wire's row of rules.
    pub fn rules(self) -> &'static WireRules {
        match self {
            WireApi::Responses => &WireRules::RESPONSES,
            WireApi::AnthropicMessages => &WireRules::MESSAGES,
            WireApi::ChatCompletions => &WireRules::CHAT_COMPLETIONS,
        }
    }

    /// A `wire_api` value: a wire's name or one of its aliases.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|wire| {
            let rules = wire.rules();
            rules.name == s || rules.aliases.contains(&s)
        })
    }

    pub fn as_str(self) -> &'static str {
        self.rules().name
    }

    /// The names a `wire_api` may give, for messages: "`responses`, `anthropic-messages` or
    /// `chat-completions` (alias `chat`)".
    pub fn names() -> String {
        let names: Vec<String> = Self::ALL
            .iter()
            .map(|wire| {
                let rules = wire.rules();
                let mut name = format!("`{}`", rules.name);
                if !rules.aliases.is_empty() {
                    let aliases: Vec<String> =
                        rules.aliases.iter().map(|a| format!("`{a}`")).collect();
                    name.push_str(&format!(" (alias {})", aliases.join(", ")));
                }
                name
            })
            .collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// How the key is sent: the definition field `auth` (SPEC §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthHeader {
    /// `x-api-key: KEY`, the Messages API's own header.
    XApiKey,
    /// `Authorization: Bearer KEY`, the Responses and Chat Completions APIs', and what
    /// gateways and local engines often want on Messages too.
    Bearer,
}

impl AuthHeader {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "x-api-key" => Some(AuthHeader::XApiKey),
            "bearer" => Some(AuthHeader::Bearer),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AuthHeader::XApiKey => "x-api-key",
            AuthHeader::Bearer => "bearer",
        }
    }

    /// The header a wire API's own endpoints take.
    pub fn default_for(wire: WireApi) -> Self {
        wire.rules().auth
    }
}

/// Reasoning effort, as the union of what the wire APIs accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningEffort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    XHigh,
    Max,
}

impl ReasoningEffort {
    pub const ALL: [(&'static str, ReasoningEffort); 7] = [
        ("none", ReasoningEffort::None),
        ("minimal", ReasoningEffort::Minimal),
        ("low", ReasoningEffort::Low),
        ("medium", ReasoningEffort::Medium),
        ("high", ReasoningEffort::High),
        ("xhigh", ReasoningEffort::XHigh),
        ("max", ReasoningEffort::Max),
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, e)| *e)
    }

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("medium", |(n, _)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wire_is_found_by_its_names_and_only_by_them() {
        for wire in WireApi::ALL {
            assert_eq!(WireApi::parse(wire.as_str()), Some(wire));
            for alias in wire.rules().aliases {
                assert_eq!(WireApi::parse(alias), Some(wire));
            }
        }
        assert_eq!(WireApi::parse("chat"), Some(WireApi::ChatCompletions));
        assert_eq!(WireApi::parse("messages"), None);
        assert_eq!(
            WireApi::names(),
            "`responses`, `anthropic-messages` or `chat-completions` (alias `chat`)"
        );
    }

    #[test]
    fn every_effort_level_a_wire_takes_is_one_a_definition_can_write() {
        for wire in WireApi::ALL {
            for effort in wire.rules().efforts {
                assert_eq!(ReasoningEffort::parse(effort.as_str()), Some(*effort));
            }
        }
    }
}
