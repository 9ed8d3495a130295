//! Providers and models (SPEC §3.1–3.2, FORMATS.md): defaults per format, the custom
//! provider's three fields, literal secrets, Claude aliases, Codex provider tables and
//! OpenCode's `provider/model` ids, the Chat Completions wire (`chat-completions`, Codex's
//! `chat`) and the built-in `gemini` provider in every format.

use crate::support;

use mcp_agents::definition::{ModelOrigin, ProviderKind, ReasoningEffort, WireApi};

#[test]
fn provider_rules_hold_for_every_format() {
    support::check_fixture("providers");
}

fn provider(name: &str) -> (ProviderKind, String, String, WireApi, String) {
    let catalog = support::load_fixture("providers");
    let d = catalog
        .get(name)
        .unwrap_or_else(|| panic!("{name} not loaded"));
    (
        d.provider.kind,
        d.provider.base_url.to_string(),
        d.provider.env_key.clone(),
        d.provider.wire_api,
        d.model.id.clone(),
    )
}

#[test]
fn built_in_providers_fill_their_defaults() {
    assert_eq!(
        provider("openai-defaults"),
        (
            ProviderKind::OpenAi,
            "https://api.openai.com/v1".into(),
            "OPENAI_API_KEY".into(),
            WireApi::Responses,
            "gpt-5.4".into()
        )
    );
    assert_eq!(
        provider("anthropic-override"),
        (
            ProviderKind::Anthropic,
            "https://gateway.example.com/anthropic".into(),
            "GATEWAY_KEY".into(),
            WireApi::AnthropicMessages,
            "claude-sonnet-5-5".into()
        )
    );
    assert_eq!(
        provider("max-turns").0,
        ProviderKind::OpenAi,
        "TOML defaults to openai"
    );
    assert_eq!(provider("codex-defaults").0, ProviderKind::OpenAi);
    let (kind, url, _, wire, _) = provider("alias-sonnet");
    assert_eq!(
        (kind, url.as_str(), wire),
        (
            ProviderKind::Anthropic,
            "https://api.anthropic.com/",
            WireApi::AnthropicMessages
        )
    );
}

#[test]
fn custom_providers_come_from_the_file() {
    assert_eq!(
        provider("research"),
        (
            ProviderKind::Custom,
            "https://openrouter.ai/api/v1".into(),
            "OPENROUTER_API_KEY".into(),
            WireApi::Responses,
            "openai/gpt-5.6-luna".into()
        )
    );
    assert_eq!(
        provider("codex-ollama"),
        (
            ProviderKind::Custom,
            "http://localhost:11434/v1".into(),
            "LOCAL_LLM_KEY".into(),
            WireApi::Responses,
            "qwen3-coder".into()
        )
    );
    assert_eq!(
        provider("openrouter-split").4,
        "anthropic/claude-sonnet-5-5"
    );
    assert_eq!(provider("openrouter-split").0, ProviderKind::Custom);
    assert_eq!(provider("anthropic-split").0, ProviderKind::Anthropic);
    assert_eq!(provider("anthropic-split").4, "claude-haiku-5-5");
}

#[test]
fn the_chat_completions_wire_and_the_gemini_provider_load_in_every_format() {
    let chat = |url: &str, key: &str, model: &str| {
        (
            ProviderKind::Custom,
            url.to_owned(),
            key.to_owned(),
            WireApi::ChatCompletions,
            model.to_owned(),
        )
    };
    assert_eq!(
        provider("chat-wire"),
        chat("https://llm.example.com/v1", "KEY", "m"),
        "`chat`, Codex's old name"
    );
    assert_eq!(
        provider("chat-completions-wire"),
        chat(
            "https://api.deepseek.com/",
            "DEEPSEEK_API_KEY",
            "deepseek-v4-flash"
        )
    );
    assert_eq!(
        provider("codex-chat"),
        chat("https://llm.example.com/v1", "LEGACY_KEY", "m"),
        "a Codex [model_providers] table with wire_api = \"chat\""
    );
    let gemini = |key: &str, model: &str| {
        (
            ProviderKind::Gemini,
            "https://generativelanguage.googleapis.com/v1beta/openai".to_owned(),
            key.to_owned(),
            WireApi::ChatCompletions,
            model.to_owned(),
        )
    };
    assert_eq!(
        provider("gemini-built-in"),
        gemini("GEMINI_API_KEY", "gemini-3-flash-preview")
    );
    assert_eq!(
        provider("codex-gemini"),
        gemini("GEMINI_API_KEY", "gemini-3-pro-preview")
    );
    assert_eq!(
        provider("gemini-claude"),
        gemini("GEMINI_API_KEY", "gemini-3-flash-preview")
    );
    assert_eq!(
        provider("google-split"),
        gemini("GOOGLE_GENERATIVE_AI_API_KEY", "gemini-3-flash-preview"),
        "OpenCode's google, with the key OpenCode reads for it"
    );
    let catalog = support::load_fixture("providers");
    let key = catalog
        .get("gemini-built-in")
        .unwrap()
        .provider
        .key_choice(|_| true);
    assert_eq!(key.auth, mcp_agents::definition::AuthHeader::Bearer);
}

#[test]
fn opencode_models_are_split_even_with_a_model_provider() {
    assert_eq!(
        provider("provider-agrees"),
        (
            ProviderKind::OpenAi,
            "https://api.openai.com/v1".into(),
            "OPENAI_API_KEY".into(),
            WireApi::Responses,
            "gpt-5.4".into()
        )
    );
    let (kind, url, _, _, model) = provider("custom-explicit");
    assert_eq!(
        (kind, url.as_str(), model.as_str()),
        (
            ProviderKind::Custom,
            "https://openrouter.ai/api/v1",
            "openai/gpt-5.4"
        )
    );
    assert_eq!(provider("bare-id-explicit").4, "gpt-5.4");
}

#[test]
fn claude_aliases_resolve_and_say_how() {
    let catalog = support::load_fixture("providers");
    let sonnet = &catalog.get("alias-sonnet").unwrap().model;
    assert_eq!(sonnet.id, "claude-sonnet-5-5");
    assert_eq!(
        sonnet.origin,
        ModelOrigin::ClaudeAlias {
            alias: "sonnet".into(),
            env: None
        }
    );
    let opus = catalog.get("alias-opus").unwrap();
    assert_eq!(opus.model.id, "claude-opus-custom-pin");
    assert_eq!(
        opus.model.origin,
        ModelOrigin::ClaudeAlias {
            alias: "opus".into(),
            env: Some("ANTHROPIC_DEFAULT_OPUS_MODEL".into())
        }
    );
    assert_eq!(
        opus.reasoning_effort,
        Some(ReasoningEffort::Max),
        "`effort` maps"
    );
    assert_eq!(
        catalog.get("full-id").unwrap().model.origin,
        ModelOrigin::Explicit
    );
}

#[test]
fn alias_variables_are_held_to_the_same_rules_as_the_file() {
    let catalog = support::check_fixture("alias-env");
    assert_eq!(
        catalog.get("sonnet-pinned").unwrap().model.id,
        "claude-sonnet-4-5-20250929"
    );
}

#[test]
fn max_turns_defaults_to_32_and_reads_the_file() {
    let catalog = support::load_fixture("providers");
    assert_eq!(catalog.get("openai-defaults").unwrap().max_turns, 32);
    assert_eq!(catalog.get("max-turns").unwrap().max_turns, 1000);
}

#[test]
fn secrets_are_never_echoed() {
    let catalog = support::load_fixture("providers");
    support::assert_no_warning_quotes(&catalog, "DO-NOT-LEAK");
    support::assert_no_warning_quotes(&catalog, "sk-proj");
    for agent in catalog.agents() {
        assert!(!format!("{agent:?}").contains("DO-NOT-LEAK"));
    }
}
