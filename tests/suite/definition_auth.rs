//! How a key is sent and where an agent's endpoint comes from (SPEC §3.1 `auth`, §3.2): the
//! `auth` field in every format, and the server's `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`
//! as the endpoint of built-in providers without a `base_url`.

use std::collections::HashMap;

use crate::support;

use mcp_agents::definition::{AuthHeader, EndpointSource, ProviderKind, WireApi};
use mcp_agents::discovery::LoadOptions;

#[test]
fn auth_rules_hold_for_every_format() {
    let catalog = support::check_fixture("auth");
    let bad = catalog
        .warnings()
        .iter()
        .find(|w| w.file.ends_with("bad-auth.md"))
        .unwrap();
    assert!(!bad.reason.contains("PASTEDKEY"), "{}", bad.reason);
}

#[test]
fn auth_is_read_in_every_format_that_takes_the_provider_fields() {
    let catalog = support::load_fixture("auth");
    let auth = |name: &str| catalog.get(name).unwrap().provider.auth;
    assert_eq!(auth("bearer-messages"), Some(AuthHeader::Bearer));
    assert_eq!(auth("x-api-key-responses"), Some(AuthHeader::XApiKey));
    assert_eq!(auth("gateway-bearer"), Some(AuthHeader::Bearer), "Claude");
    assert_eq!(
        auth("provider-auth"),
        Some(AuthHeader::Bearer),
        "Codex table"
    );
    assert_eq!(auth("ollama-cloud"), Some(AuthHeader::Bearer), "OpenCode");
    assert_eq!(auth("plain-sonnet"), None);

    let ollama = catalog.get("ollama-cloud").unwrap();
    assert_eq!(
        (ollama.provider.wire_api, ollama.model.id.as_str()),
        (WireApi::AnthropicMessages, "gpt-oss:120b")
    );
    // The header follows the definition whatever variables are set.
    let choice = ollama.provider.key_choice(|_| true);
    assert_eq!(
        (choice.var.as_str(), choice.auth),
        ("OLLAMA_API_KEY", AuthHeader::Bearer)
    );
}

#[test]
fn built_in_providers_without_a_base_url_take_the_servers_endpoint_variable() {
    let catalog = support::load_fixture("auth");
    let endpoint = |name: &str| {
        let p = &catalog.get(name).unwrap().provider;
        (p.base_url.to_string(), p.base_url_source.clone())
    };
    assert_eq!(
        endpoint("plain-sonnet"),
        (
            "https://llm-gateway.example.com/anthropic".to_owned(),
            EndpointSource::Environment("ANTHROPIC_BASE_URL".into())
        )
    );
    assert_eq!(
        endpoint("openai-from-env"),
        (
            "http://localhost:11434/v1".to_owned(),
            EndpointSource::Environment("OPENAI_BASE_URL".into())
        )
    );
    assert_eq!(
        endpoint("openai-own-url").1,
        EndpointSource::Definition,
        "a definition's own base_url wins"
    );
    assert_eq!(
        endpoint("gateway-bearer"),
        (
            "https://litellm.example.com/".to_owned(),
            EndpointSource::Definition
        )
    );
    assert_eq!(
        endpoint("bearer-messages").1,
        EndpointSource::Definition,
        "custom providers never read the variables"
    );
    // Without the variables, the built-in defaults.
    let plain = support::load_at(&support::fixture_path("auth"), &LoadOptions::default());
    let p = &plain.get("plain-sonnet").unwrap().provider;
    assert_eq!(
        (p.kind, p.base_url.as_str(), &p.base_url_source),
        (
            ProviderKind::Anthropic,
            "https://api.anthropic.com/",
            &EndpointSource::BuiltIn
        )
    );
}

#[test]
fn an_endpoint_variable_breaking_the_https_rule_rejects_the_agents_that_use_it() {
    let options = LoadOptions {
        env: HashMap::from([(
            "ANTHROPIC_BASE_URL".to_owned(),
            "http://gateway.corp.example:4000".to_owned(),
        )]),
        ..LoadOptions::default()
    };
    let catalog = support::load_at(&support::fixture_path("auth"), &options);
    assert!(catalog.get("plain-sonnet").is_none());
    assert!(
        catalog.get("gateway-bearer").is_some(),
        "has its own base_url"
    );
    assert!(catalog.get("openai-from-env").is_some(), "another provider");
    let warning = catalog
        .warnings()
        .iter()
        .find(|w| w.file.ends_with("plain-sonnet.md"))
        .unwrap();
    assert!(
        warning.reason.contains(
            "the server's ANTHROPIC_BASE_URL, this agent's endpoint because it sets no \
             `base_url`, uses http:// to gateway.corp.example"
        ),
        "{}",
        warning.reason
    );
}
