//! Fields other than providers: sandbox and isolation, Claude's permission modes and
//! ignored fields, Codex config keys, OpenCode modes, the output limit, and unknown fields
//! that look like typos of known ones (SPEC §3.1, FORMATS.md).

use crate::support;

use mcp_agents::definition::{ModelOrigin, ProviderKind, Sandbox, WireApi};

#[test]
fn field_rules_hold_for_every_format() {
    let catalog = support::check_fixture("fields");
    let sandbox = |name: &str| catalog.get(name).unwrap().sandbox;
    assert_eq!(sandbox("read-only"), Sandbox::ReadOnly);
    assert_eq!(sandbox("claude-plan"), Sandbox::ReadOnly);
    assert_eq!(sandbox("codex-read-only"), Sandbox::ReadOnly);
    assert_eq!(sandbox("claude-accept-edits"), Sandbox::Default);
    assert_eq!(catalog.get("claude-accept-edits").unwrap().max_turns, 7);
    let mode_all = catalog.get("mode-all").unwrap();
    assert_eq!((mode_all.max_turns, mode_all.temperature), (12, Some(0.2)));
    assert_eq!(
        catalog.get("prompt-field").unwrap().instructions,
        "Use the prompt field."
    );
}

#[test]
fn max_output_tokens_is_read_in_every_format() {
    let catalog = support::check_fixture("fields");
    let limit = |name: &str| catalog.get(name).unwrap().max_output_tokens;
    assert_eq!(limit("output-limit"), Some(4096));
    assert_eq!(limit("output-limit-toml"), Some(20_000));
    assert_eq!(limit("claude-output-limit"), Some(9000));
    assert_eq!(limit("codex-output-limit"), Some(3000));
    assert_eq!(limit("opencode-output-limit"), Some(5000));
    assert_eq!(
        limit("read-only"),
        None,
        "unset: the model's default applies"
    );
}

#[test]
fn the_server_default_model_fills_in_for_the_parents() {
    let catalog = support::check_fixture("default-model");
    for name in [
        "claude-inherit",
        "claude-missing",
        "codex-inherit",
        "opencode-inherit",
    ] {
        let d = catalog.get(name).unwrap();
        assert_eq!(d.model.id, "claude-sonnet-5-5", "{name}");
        assert_eq!(d.model.origin, ModelOrigin::ServerDefault, "{name}");
        assert_eq!(d.provider.kind, ProviderKind::Anthropic, "{name}");
    }
    let custom = catalog.get("claude-inherit-custom").unwrap();
    assert_eq!(custom.provider.kind, ProviderKind::Custom);
    assert_eq!(custom.provider.wire_api, WireApi::AnthropicMessages);
    assert_eq!(custom.model.id, "claude-sonnet-5-5");
}

/// SPEC §3.1: an unknown field a slip away from a known one is reported with the field it
/// resembles, in every format and in child server entries; the definition still loads.
#[test]
fn near_miss_fields_are_reported_in_every_format() {
    let catalog = support::check_fixture("near-miss");
    assert!(catalog.get("deny-typo").is_some(), "typos never reject");
}

/// The published definitions use many fields of their own tools; none is a typo.
#[test]
fn the_published_corpus_raises_no_near_miss_report() {
    let catalog = support::load_fixture("corpus");
    let slips: Vec<String> = catalog
        .warnings()
        .iter()
        .filter(|w| w.reason.contains("did you mean"))
        .map(ToString::to_string)
        .collect();
    assert!(slips.is_empty(), "{slips:#?}");
}
