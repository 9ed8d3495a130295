//! A definition's model and provider (SPEC §3.2): the model as named or the server's
//! default, the provider's fields with their defaults and checks, `temperature` and the
//! reasoning effort against the wire's rules, and the note on a model its provider will
//! likely not know.

use super::aliases::{CLAUDE_ALIASES, resolve_alias};
use super::draft::{Draft, ModelChoice};
use super::options::{DefaultModel, LoadOptions};
use super::spec::{Ctx, ModelNames};
use crate::definition::{
    AgentDefinition, AuthHeader, EndpointSource, EndpointUse, Model, ModelOrigin,
    PARENT_MODEL_REJECTION, ProviderConfig, ProviderKind, ReasoningEffort, WireApi, check_endpoint,
    closest, is_env_var_name,
};
use url::Url;

/// The model and its provider: as named (the provider written, else the format's default),
/// or the server's default model for a definition that defers to its parent's.
pub(super) fn model_and_provider(
    draft: &Draft,
    ctx: &Ctx<'_>,
) -> Result<(Model, ProviderKind), String> {
    let explicit_kind = draft
        .provider
        .as_deref()
        .map(|p| {
            ProviderKind::parse(p).ok_or_else(|| {
                format!(
                    "`model_provider` is {p:?}; use openai, anthropic, gemini, or custom with \
                     base_url, env_key and wire_api"
                )
            })
        })
        .transpose()?;
    match &draft.model {
        ModelChoice::Missing => Err("`model` is required".to_owned()),
        ModelChoice::Unnamed(reason) => Err(reason.clone()),
        ModelChoice::Named(model) => {
            let kind = explicit_kind.or(draft.default_provider).ok_or(
                "`model_provider` is required (openai, anthropic, gemini, or custom with base_url, \
                 env_key and wire_api)",
            )?;
            Ok((model.clone(), kind))
        }
        ModelChoice::Parent => {
            let DefaultModel { provider, model } = ctx
                .options
                .default_model
                .as_ref()
                .ok_or(PARENT_MODEL_REJECTION)?;
            // `--default-model sonnet`: the alias resolves as it does in a Claude file.
            let id = match resolve_alias(model, &ctx.options.env) {
                Some(resolved) if *provider == ProviderKind::Anthropic => resolved?.id,
                _ => model.clone(),
            };
            let model = Model {
                id,
                origin: ModelOrigin::ServerDefault,
            };
            Ok((model, explicit_kind.unwrap_or(*provider)))
        }
    }
}

/// `temperature` and the reasoning effort against what the wire API takes (its row of
/// rules).
pub(super) fn check_sampling(
    temperature: Option<f64>,
    effort: Option<ReasoningEffort>,
    wire: WireApi,
) -> Result<(), String> {
    let rules = wire.rules();
    if let Some(t) = temperature {
        let max = rules.max_temperature;
        if !(0.0..=max).contains(&t) {
            return Err(format!(
                "`temperature` is {t}; the {} API accepts 0 to {max}",
                wire.as_str()
            ));
        }
    }
    let Some(effort) = effort else {
        return Ok(());
    };
    if !rules.efforts.contains(&effort) {
        let names: Vec<_> = rules.efforts.iter().map(|e| e.as_str()).collect();
        return Err(format!(
            "reasoning effort {:?} is not accepted by the {} API; use {}",
            effort.as_str(),
            wire.as_str(),
            names.join(", ")
        ));
    }
    if rules.effort_fixes_temperature && temperature.is_some_and(|t| t != 1.0) {
        return Err(format!(
            "`temperature` cannot be combined with a reasoning effort on the {} API: the \
             effort turns thinking on, and with thinking the API takes only temperature 1; \
             remove one of the two",
            wire.as_str()
        ));
    }
    Ok(())
}

/// The provider fields as a file wrote them.
pub(super) struct ProviderFields {
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub wire_api: Option<String>,
    pub auth: Option<String>,
}

/// Fills provider defaults and checks the fields (SPEC §3.2). A built-in provider without
/// a `base_url` takes the server's `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` when set.
pub(super) fn provider_config(
    kind: ProviderKind,
    fields: ProviderFields,
    options: &LoadOptions,
) -> Result<ProviderConfig, String> {
    let ProviderFields {
        base_url,
        env_key,
        wire_api,
        auth,
    } = fields;
    let defaults = kind.defaults();
    if defaults.is_none() {
        let missing: Vec<&str> = [
            ("base_url", base_url.is_none()),
            ("env_key", env_key.is_none()),
            ("wire_api", wire_api.is_none()),
        ]
        .into_iter()
        .filter_map(|(field, missing)| missing.then_some(field))
        .collect();
        if !missing.is_empty() {
            return Err(format!(
                "a custom provider needs base_url, env_key and wire_api; missing: {}",
                missing.join(", ")
            ));
        }
    }
    let (default_url, default_key, default_wire) = match defaults {
        Some((url, key, wire)) => (Some(url), Some(key), Some(wire)),
        None => (None, None, None),
    };
    let (base_url, base_url_source) = endpoint(kind, base_url, default_url, options)?;
    let env_key_explicit = env_key.is_some();
    let env_key = env_key
        .as_deref()
        .or(default_key)
        .unwrap_or_default()
        .to_owned();
    if !is_env_var_name(&env_key) {
        // Never echo it: people paste the key itself here.
        return Err(
            "`env_key` must be the name of an environment variable (letters, digits \
                    and `_`, not starting with a digit), not the key itself; the value is not \
                    shown"
                .to_owned(),
        );
    }
    let wire_api = match wire_api.as_deref() {
        // A custom provider without `wire_api` was refused above.
        None => default_wire
            .ok_or("a custom provider needs base_url, env_key and wire_api; missing: wire_api")?,
        Some(w) => WireApi::parse(w)
            .ok_or_else(|| format!("`wire_api` is {w:?}; use {}", WireApi::names()))?,
    };
    let auth = auth
        .map(|a| {
            // Never echoed: a key pasted here must not reach a log.
            AuthHeader::parse(a.trim()).ok_or(
                "`auth` must be `bearer` (Authorization: Bearer) or `x-api-key`; the value \
                 is not shown. The key itself goes in the variable `env_key` names",
            )
        })
        .transpose()?;
    Ok(ProviderConfig {
        kind,
        base_url,
        base_url_source,
        env_key,
        env_key_explicit,
        auth,
        wire_api,
    })
}

/// The provider's endpoint and where it came from: the file's `base_url`, else the server's
/// variable for the provider, else the provider's built-in one.
fn endpoint(
    kind: ProviderKind,
    written: Option<String>,
    built_in: Option<&str>,
    options: &LoadOptions,
) -> Result<(Url, EndpointSource), String> {
    let from_env = kind.base_url_var().and_then(|var| {
        let value = options.env.get(var).filter(|v| !v.trim().is_empty())?;
        Some((var, value))
    });
    Ok(match (written, from_env) {
        (Some(url), _) => (
            check_endpoint(&url, EndpointUse::ProviderBaseUrl)
                .map_err(|e| format!("`base_url` {e}"))?,
            EndpointSource::Definition,
        ),
        (None, Some((var, url))) => (
            check_endpoint(url, EndpointUse::ProviderBaseUrl).map_err(|e| {
                format!(
                    "the server's {var}, this agent's endpoint because it sets no `base_url`, \
                     {e}; fix or unset {var}, or give the agent its own `base_url`"
                )
            })?,
            EndpointSource::Environment(var.to_owned()),
        ),
        (None, None) => (
            check_endpoint(built_in.unwrap_or_default(), EndpointUse::ProviderBaseUrl)
                .map_err(|e| format!("`base_url` {e}"))?,
            EndpointSource::BuiltIn,
        ),
    })
}

/// A named model that the provider will likely not know: one of the other provider's family
/// (`gpt-5.4` sent to `anthropic`), or for `anthropic` neither a Claude model id nor a Claude
/// Code alias (`sonet`). Behind a gateway (an endpoint that is not the provider's own), the
/// name may be the gateway's, so the note says so. `models` is how the file's format names
/// models.
pub(super) fn model_note(definition: &AgentDefinition, models: ModelNames) -> Option<String> {
    if definition.model.origin != ModelOrigin::Explicit {
        return None;
    }
    let id = definition.model.id.as_str();
    let provider = &definition.provider;
    let family = ProviderKind::of_model(id);
    let claude_file = models == ModelNames::ClaudeAliases;
    let mut note = match (provider.kind, family) {
        (ProviderKind::Anthropic, Some(ProviderKind::OpenAi)) => format!(
            "`{id}` is an OpenAI model, but this agent's provider is anthropic{}, which will \
             not know it; set `model_provider: openai` for an OpenAI model, or name a Claude \
             model",
            if claude_file {
                " (a Claude Code file's provider when it sets no `model_provider`)"
            } else {
                ""
            }
        ),
        (ProviderKind::OpenAi, Some(ProviderKind::Anthropic)) => format!(
            "`{id}` is a Claude model, but this agent's provider is openai, which will not \
             know it; set `model_provider: anthropic` for a Claude model, or name an OpenAI \
             model"
        ),
        // Any other family mismatch between built-in providers (a Gemini model sent to
        // anthropic, a Claude model to gemini).
        (kind, Some(family)) if kind != ProviderKind::Custom && kind != family => format!(
            "`{id}` is a model of {}, but this agent's provider is {}, which will not know it; \
             set `model_provider: {}`, or name a model of {}",
            family.as_str(),
            kind.as_str(),
            family.as_str(),
            kind.as_str()
        ),
        (ProviderKind::Anthropic, None) => not_a_claude_model(id, claude_file),
        _ => return None,
    };
    if provider.base_url_source != EndpointSource::BuiltIn {
        let host = provider.base_url.host_str().unwrap_or("its endpoint");
        note.push_str(&format!(
            " (if the gateway at {host} knows the model by this name, ignore this)"
        ));
    }
    Some(note)
}

/// A model whose reasoning OpenAI refuses with function tools on the agent's wire (gpt-5.4,
/// gpt-5.6 on Chat Completions): its requests will send `reasoning_effort: none`, as the
/// refusal asks, so the model will not reason; the Responses wire lets it.
pub(super) fn reasoning_wire_note(definition: &AgentDefinition) -> Option<String> {
    let id = definition.model.id.as_str();
    let rules = definition.provider.wire_api.rules();
    if !rules.refuses_reasoning_with_tools(id) {
        return None;
    }
    let effort = definition
        .reasoning_effort
        .map(|e| format!(" (its `reasoning_effort: {}` included)", e.as_str()))
        .unwrap_or_default();
    Some(format!(
        "`{id}` does not reason with function tools on `wire_api: {}`: OpenAI refuses any \
         effort but `none` there{effort}, so this agent's requests will send \
         `reasoning_effort: none` and the model will not reason; set `wire_api: responses` \
         for its reasoning",
        rules.name
    ))
}

/// The note on a model id sent to `anthropic` that is no Claude model id: in a Claude Code
/// file, with the alias it may be a slip of; elsewhere, naming the id an alias stands for.
fn not_a_claude_model(id: &str, claude_file: bool) -> String {
    let aliases = || CLAUDE_ALIASES.iter().map(|(alias, _, _)| *alias);
    if claude_file {
        let guess = closest(id, aliases())
            .map(|alias| format!("; did you mean `{alias}`?"))
            .unwrap_or_default();
        return format!(
            "`model: {id}` is neither one of Claude Code's aliases ({}) nor a Claude \
             model id (`claude-…`), so it goes to the Anthropic API as written{guess}",
            aliases().collect::<Vec<_>>().join(", ")
        );
    }
    match CLAUDE_ALIASES.iter().find(|(alias, _, _)| *alias == id) {
        Some((alias, _, builtin)) => format!(
            "`{alias}` is a Claude Code alias, which only `.claude/agents` files \
             resolve; here it goes to the Anthropic API as written: name the model \
             id (`{builtin}`)"
        ),
        None => format!(
            "`{id}` is not a Claude model id (`claude-…`), so the Anthropic API will \
             likely not know it"
        ),
    }
}
