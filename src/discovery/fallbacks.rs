//! The models a definition falls back to (SPEC §5.1 `fallback_models`), and the server's
//! allow-list over its model and them.
//!
//! A run falls back only to a model of its own provider, through the same endpoint and wire
//! API, so the conversation it has sent (raw items of that wire) stays valid for the next
//! model; an entry on another provider is dropped with a caveat saying so, and so is one the
//! server's `--allow-models` leaves out.

use super::aliases::resolve_alias;
use super::draft::{Draft, FallbackWritten};
use super::model_table::{Translation, translate};
use super::spec::Ctx;
use crate::definition::{Model, ModelAllowList, ProviderConfig, ProviderKind};

/// A model that a list (Copilot's `model: [...]`, `models`) names after the one that runs,
/// as a fallback: on a file that names its provider, as written; else translated as the
/// model itself would be. `None` when it names no model this runtime can send.
pub(super) fn listed_fallback(
    field: &str,
    written: &str,
    draft: &Draft,
    ctx: &Ctx<'_>,
) -> Option<FallbackWritten> {
    let written = written.trim();
    let on = |provider: ProviderKind, model: String| FallbackWritten {
        written: written.to_owned(),
        provider: Some(provider.as_str().to_owned()),
        model,
    };
    if draft.provider.is_some() {
        return Some(FallbackWritten {
            written: written.to_owned(),
            provider: None,
            model: written.to_owned(),
        });
    }
    match translate(field, written).ok()? {
        Translation::Model { provider, id, .. } => Some(on(provider, id)),
        Translation::ClaudeAlias(alias) => {
            let resolved = resolve_alias(&alias, &ctx.options.env)?.ok()?;
            Some(on(ProviderKind::Anthropic, resolved.id))
        }
        Translation::Parent | Translation::NoModel => None,
    }
}

/// The definition's model against the server's allow-list: the rejection's reason when it
/// is outside.
pub(super) fn check_allowed(
    model: &Model,
    provider: &ProviderConfig,
    allow: Option<&ModelAllowList>,
) -> Result<(), String> {
    let kind = provider.kind.as_str();
    match allow {
        Some(allow) if !allow.allows(kind, &model.id) => Err(format!(
            "its model is refused: {}",
            allow.refusal(kind, &model.id)
        )),
        _ => Ok(()),
    }
}

/// The model ids a run of this definition may fall back to, in the order written: each on
/// the agent's provider, allowed, once, and not the model itself. Every entry left out is
/// a caveat.
pub(super) fn settle_fallbacks(
    written: &[FallbackWritten],
    model: &Model,
    provider: &ProviderConfig,
    allow: Option<&ModelAllowList>,
    caveats: &mut Vec<String>,
) -> Vec<String> {
    let kind = provider.kind.as_str();
    let mut kept: Vec<String> = Vec::new();
    for entry in written {
        let shown = &entry.written;
        let Some(id) = on_this_provider(entry, provider.kind) else {
            caveats.push(format!(
                "`fallback_models` entry `{shown}` is dropped: it is on another provider than \
                 the agent's model (`{kind}`, {} API). A run falls back only to a model on the \
                 same provider and wire, so that the conversation it has sent stays valid for \
                 the next model; define another agent for that provider instead",
                provider.wire_api.as_str()
            ));
            continue;
        };
        if id == model.id || kept.contains(&id) {
            caveats.push(format!(
                "`fallback_models` entry `{shown}` is {}; it is tried once",
                if id == model.id {
                    "the agent's model itself"
                } else {
                    "listed twice"
                }
            ));
            continue;
        }
        if let Some(allow) = allow
            && !allow.allows(kind, &id)
        {
            caveats.push(format!(
                "`fallback_models` entry `{shown}` is dropped: {}",
                allow.refusal(kind, &id)
            ));
            continue;
        }
        kept.push(id);
    }
    kept
}

/// The id `entry` names on the agent's provider `kind`, or `None` when it names another
/// provider. On a gateway (`custom`) an entry that does not begin with `custom/` is the
/// gateway's own model name as written (`anthropic/claude-sonnet-4.5` on OpenRouter).
fn on_this_provider(entry: &FallbackWritten, kind: ProviderKind) -> Option<String> {
    match entry.provider.as_deref() {
        None => Some(entry.model.clone()),
        Some(named) if named == kind.as_str() => Some(entry.model.clone()),
        Some(_) if kind == ProviderKind::Custom => Some(entry.written.clone()),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ModelOrigin, WireApi};

    fn entry(written: &str) -> FallbackWritten {
        let (provider, model) = written.split_once('/').unwrap();
        FallbackWritten {
            written: written.to_owned(),
            provider: Some(provider.to_owned()),
            model: model.to_owned(),
        }
    }

    fn on(kind: ProviderKind, wire: WireApi) -> ProviderConfig {
        ProviderConfig::new(kind, "https://example.com/v1".parse().unwrap(), "K", wire)
    }

    fn model(id: &str) -> Model {
        Model {
            id: id.to_owned(),
            origin: ModelOrigin::Explicit,
        }
    }

    #[test]
    fn only_the_agents_provider_is_kept_once_and_within_the_allow_list() {
        let openai = on(ProviderKind::OpenAi, WireApi::Responses);
        let allow: ModelAllowList = "openai/gpt-5*".parse().unwrap();
        let written = [
            entry("openai/gpt-5-mini"),
            entry("anthropic/claude-haiku-4-5"),
            entry("openai/gpt-5-mini"),
            entry("openai/gpt-5"),
            entry("openai/o3"),
            entry("openai/gpt-5-nano"),
        ];
        let mut caveats = Vec::new();
        let kept = settle_fallbacks(
            &written,
            &model("gpt-5"),
            &openai,
            Some(&allow),
            &mut caveats,
        );
        assert_eq!(kept, ["gpt-5-mini", "gpt-5-nano"]);
        assert_eq!(caveats.len(), 4, "{caveats:?}");
        assert!(caveats[0].contains("another provider") && caveats[0].contains("responses"));
        assert!(caveats[1].contains("listed twice"));
        assert!(caveats[2].contains("the agent's model itself"));
        assert!(caveats[3].contains("`openai/o3` is not among"));
    }

    #[test]
    fn a_gateway_takes_its_own_names_as_written() {
        let gateway = on(ProviderKind::Custom, WireApi::ChatCompletions);
        let mut caveats = Vec::new();
        let kept = settle_fallbacks(
            &[entry("custom/small"), entry("anthropic/claude-sonnet-4.5")],
            &model("big"),
            &gateway,
            None,
            &mut caveats,
        );
        assert_eq!(kept, ["small", "anthropic/claude-sonnet-4.5"]);
        assert!(caveats.is_empty());
    }

    #[test]
    fn a_model_outside_the_allow_list_is_refused_naming_the_list() {
        let allow: ModelAllowList = "anthropic/*".parse().unwrap();
        let openai = on(ProviderKind::OpenAi, WireApi::Responses);
        let refused = check_allowed(&model("gpt-5"), &openai, Some(&allow)).unwrap_err();
        assert!(refused.contains("`openai/gpt-5`") && refused.contains("anthropic/*"));
        assert!(check_allowed(&model("gpt-5"), &openai, None).is_ok());
    }
}
