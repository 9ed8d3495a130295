//! Model names as GitHub Copilot, Cursor and the Gemini CLI write them, translated to the
//! provider and model id this runtime sends (docs/agents.md, "Model names in Copilot,
//! Cursor and Gemini CLI files"). Those tools name models their own way (`Claude Sonnet 4.5
//! (copilot)`, `claude-sonnet-4.5`, `claude-4.5-sonnet`, `GPT-5 mini`); a rewrite happens
//! only through the rows of [`CLAUDE_MODELS`] and the OpenAI and Gemini spelling rules below,
//! never by guessing an id, and a name none of them covers is refused naming the field.
//!
//! Gemini models go to the built-in `gemini` provider: Google's OpenAI-compatible Chat
//! Completions endpoint (SPEC §6.2).

use super::aliases::resolve_alias;
use super::draft::{Draft, ModelChoice};
use super::spec::Ctx;
use crate::definition::{Model, ModelOrigin, ProviderKind};

/// One row of the Claude table: a (tier, version) as the other tools write it, Anthropic's
/// id for it, and the day Anthropic retired that model, when it has.
struct ClaudeModel {
    tier: &'static str,
    version: &'static str,
    id: &'static str,
    retired: Option<&'static str>,
}

const fn row(
    tier: &'static str,
    version: &'static str,
    id: &'static str,
    retired: Option<&'static str>,
) -> ClaudeModel {
    ClaudeModel {
        tier,
        version,
        id,
        retired,
    }
}

/// Claude models by (tier, version). Sources (docs/agents.md lists them with their
/// commits): Anthropic's model catalog and SDK model list for the ids and retirements;
/// GitHub's Copilot model table and CLI reference, and Cursor's subagent docs, for the names
/// those tools write. Every row is a unit test.
const CLAUDE_MODELS: &[ClaudeModel] = &[
    row("sonnet", "5.5", "claude-sonnet-5-5", None),
    row("opus", "5.5", "claude-opus-5-5", None),
    row("haiku", "5.5", "claude-haiku-5-5", None),
    row("fable", "5.2", "claude-fable-5-2", None),
    row("mythos", "5.2", "claude-mythos-5-2", None),
    row("fable", "5.1", "claude-fable-5-1", None),
    row("mythos", "5.1", "claude-mythos-5-1", None),
    row("sonnet", "5", "claude-sonnet-5", None),
    row("opus", "5", "claude-opus-5", None),
    row("fable", "5", "claude-fable-5", None),
    row("mythos", "5", "claude-mythos-5", None),
    row("opus", "4.8", "claude-opus-4-8", None),
    row("opus", "4.7", "claude-opus-4-7", None),
    row("opus", "4.6", "claude-opus-4-6", None),
    row("sonnet", "4.6", "claude-sonnet-4-6", None),
    row("opus", "4.5", "claude-opus-4-5", None),
    row("sonnet", "4.5", "claude-sonnet-4-5", Some("2026-11-30")),
    row("haiku", "4.5", "claude-haiku-4-5", None),
    row("opus", "4.1", "claude-opus-4-1", Some("2026-08-05")),
    row("opus", "4", "claude-opus-4-0", Some("2026-06-15")),
    row("sonnet", "4", "claude-sonnet-4-0", Some("2026-06-15")),
    row(
        "sonnet",
        "3.7",
        "claude-3-7-sonnet-20250219",
        Some("2026-02-19"),
    ),
    row(
        "sonnet",
        "3.5",
        "claude-3-5-sonnet-20241022",
        Some("2025-10-28"),
    ),
    row(
        "haiku",
        "3.5",
        "claude-3-5-haiku-20241022",
        Some("2026-02-19"),
    ),
];

const CLAUDE_TIERS: &[&str] = &["opus", "sonnet", "haiku", "fable", "mythos"];

/// Copilot's display names of Gemini models whose Google id differs from the name.
const GEMINI_DISPLAY_NAMES: &[(&str, &str)] = &[
    ("gemini-3.1-pro", "gemini-3.1-pro-preview"),
    ("gemini-3-flash", "gemini-3-flash-preview"),
];

/// Names that look like Gemini models but are none: the Gemini CLI's aliases, which it
/// resolves per account, and names published in files that Google never served.
const GEMINI_NON_IDS: &[(&str, &str)] = &[
    (
        "pro",
        "a Gemini CLI alias, which the Gemini CLI resolves to a model per account",
    ),
    (
        "flash",
        "a Gemini CLI alias, which the Gemini CLI resolves to a model per account",
    ),
    (
        "flash-lite",
        "a Gemini CLI alias, which the Gemini CLI resolves to a model per account",
    ),
    (
        "gemini-pro",
        "not a Gemini model id: Google's ids carry a version, such as gemini-2.5-pro",
    ),
    (
        "gemini-flash",
        "not a Gemini model id: Google's ids carry a version, such as gemini-2.5-flash",
    ),
    (
        "gemini-3-pro",
        "Cursor's name for a Gemini model; Google's id is gemini-3-pro-preview",
    ),
];

/// Models only their own tool or vendor serves, by prefix, and why they cannot run here.
const ELSEWHERE_ONLY: &[(&str, &str)] = &[
    ("composer", "Cursor's own model, served only inside Cursor"),
    ("cheetah", "Cursor's own model, served only inside Cursor"),
    ("cursor-", "Cursor's own model, served only inside Cursor"),
    ("raptor", "a model served only inside GitHub Copilot"),
    ("mai-", "a model served only inside GitHub Copilot"),
    ("goldeneye", "a model served only inside GitHub Copilot"),
    ("grok", "an xAI model"),
    ("deepseek", "a DeepSeek model"),
    ("kimi", "a Moonshot model"),
    ("qwen", "an Alibaba model"),
];

/// Suffixes that make a name a variant (thinking, effort, speed) rather than one model.
const VARIANT_SUFFIXES: &[&str] = &[
    "-thinking",
    "-low",
    "-medium",
    "-high",
    "-xhigh",
    "-fast",
    "-max",
];

/// What a model name means here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Translation {
    /// No model, or `inherit`: the parent's, so the server's default.
    Parent,
    /// A word that names no model (Cursor's `fast`, `auto`): the server's default, with a
    /// caveat saying so.
    NoModel,
    /// One of Claude Code's aliases (`sonnet`), resolved as in a Claude file.
    ClaudeAlias(String),
    /// A model this runtime can send.
    Model {
        provider: ProviderKind,
        id: String,
        /// Whether `id` differs from what was written (beyond surrounding space).
        translated: bool,
        /// The day Anthropic retired it, for a row of the table that says so.
        retired: Option<&'static str>,
    },
}

/// Translates `written`, the value of `field`. The error is the whole refusal message.
pub(super) fn translate(field: &str, written: &str) -> Result<Translation, String> {
    let trimmed = written.trim();
    let lower = trimmed.to_ascii_lowercase();
    if lower.is_empty() || lower == "inherit" {
        return Ok(Translation::Parent);
    }
    if lower == "fast" || lower == "auto" {
        return Ok(Translation::NoModel);
    }
    if super::aliases::CLAUDE_ALIASES
        .iter()
        .any(|(alias, _, _)| *alias == lower)
    {
        return Ok(Translation::ClaudeAlias(lower));
    }
    let unserved = |why: &str| {
        format!(
            "`{field}: {trimmed}` names a model that no provider here serves ({why}); name a \
             Claude, OpenAI or Gemini model, or serve it through a gateway: model_provider: custom \
             with base_url, env_key and wire_api"
        )
    };
    let variant = || {
        format!(
            "`{field}: {trimmed}` names a variant (thinking, effort or speed) rather than one \
             model; name the model, and set `reasoning_effort`"
        )
    };
    let name = normalize(&lower).ok_or_else(variant)?;
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        return Err(unserved("not a model id"));
    }
    let model = |provider, id: String, retired| Translation::Model {
        provider,
        translated: id != trimmed,
        id,
        retired,
    };

    if let Some(found) = claude(&name) {
        return match found {
            Claude::Row(row) => Ok(model(
                ProviderKind::Anthropic,
                row.id.to_owned(),
                row.retired,
            )),
            Claude::AnthropicId => Ok(model(ProviderKind::Anthropic, name, None)),
            Claude::Variant => Err(variant()),
            Claude::Unknown => Err(format!(
                "`{field}: {trimmed}` names a Claude model that is not in this runtime's table \
                 (docs/agents.md, \"Model names in Copilot, Cursor and Gemini CLI files\"); \
                 write Anthropic's model id, such as claude-sonnet-4-6"
            )),
        };
    }
    if is_openai(&name) {
        if VARIANT_SUFFIXES.iter().any(|s| name.ends_with(s)) && !name.ends_with("-codex-max") {
            return Err(variant());
        }
        return Ok(model(ProviderKind::OpenAi, name, None));
    }
    if let Some((_, why)) = GEMINI_NON_IDS.iter().find(|(n, _)| *n == name) {
        return Err(unserved(why));
    }
    if let Some(id) = gemini_id(&name) {
        return Ok(model(ProviderKind::Gemini, id, None));
    }
    if let Some((_, why)) = ELSEWHERE_ONLY.iter().find(|(p, _)| name.starts_with(p)) {
        return Err(unserved(why));
    }
    Err(unserved(
        "not a Claude, OpenAI or Gemini model this runtime knows",
    ))
}

/// Lower-cased `written` without Copilot's ` (copilot)` and with spaces as `-`
/// (`Claude Sonnet 4.5 (copilot)` → `claude-sonnet-4.5`); `None` for another parenthesized
/// qualifier (`(fast mode)`, `(preview)`), which names a variant.
fn normalize(lower: &str) -> Option<String> {
    let bare = lower.strip_suffix("(copilot)").unwrap_or(lower).trim_end();
    if bare.contains('(') || bare.contains(')') {
        return None;
    }
    Some(bare.split_whitespace().collect::<Vec<_>>().join("-"))
}

enum Claude {
    Row(&'static ClaudeModel),
    /// Already Anthropic's id (`claude-sonnet-4-5`, `claude-3-5-haiku-20241022`).
    AnthropicId,
    Variant,
    Unknown,
}

fn is_version(token: &str) -> bool {
    let mut parts = token.split('.');
    let whole =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    match (parts.next(), parts.next(), parts.next()) {
        (major, None, None) => whole(major),
        (major, minor @ Some(_), None) => whole(major) && whole(minor),
        _ => false,
    }
}

fn is_number(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit())
}

/// A Claude name in any of the orders the tools write: Copilot's `claude-sonnet-4.5`
/// (display names normalize to it), Cursor's `claude-4.5-sonnet`, cursor-agent's
/// `sonnet-4.5`, and Anthropic's own ids, which pass as written. `None`: not Claude.
fn claude(name: &str) -> Option<Claude> {
    let lookup = |tier: &str, version: &str| {
        Some(
            CLAUDE_MODELS
                .iter()
                .find(|r| r.tier == tier && r.version == version)
                .map_or(Claude::Unknown, Claude::Row),
        )
    };
    let tokens: Vec<&str> = name.split('-').collect();
    let (first, rest) = match tokens.as_slice() {
        ["claude", first, rest @ ..] => (*first, rest),
        [tier, version] if CLAUDE_TIERS.contains(tier) && is_version(version) => {
            return lookup(tier, version);
        }
        [tier, version, ..] if CLAUDE_TIERS.contains(tier) && is_version(version) => {
            return Some(Claude::Variant);
        }
        _ => return None,
    };
    if CLAUDE_TIERS.contains(&first) {
        // `claude-sonnet-4.5`, `claude-sonnet-4` (Copilot), or Anthropic's
        // `claude-sonnet-4-5` / `claude-sonnet-4-5-20250929`.
        return match rest {
            [version] if is_version(version) => lookup(first, version),
            [] => Some(Claude::Unknown),
            numbers if numbers.iter().all(|t| is_number(t)) => Some(Claude::AnthropicId),
            _ => Some(Claude::Variant),
        };
    }
    if is_version(first) {
        // Cursor's `claude-4.5-sonnet`, or Anthropic's older `claude-3-5-sonnet-20241022`.
        return match rest {
            [tier] if CLAUDE_TIERS.contains(tier) => lookup(tier, first),
            [minor, tier, date]
                if is_number(minor) && CLAUDE_TIERS.contains(tier) && is_number(date) =>
            {
                Some(Claude::AnthropicId)
            }
            [tier, date] if CLAUDE_TIERS.contains(tier) && is_number(date) => {
                Some(Claude::AnthropicId)
            }
            [tier, ..] if CLAUDE_TIERS.contains(tier) => Some(Claude::Variant),
            _ => Some(Claude::Unknown),
        };
    }
    Some(Claude::Unknown)
}

/// OpenAI's ids, which the tools write as OpenAI does once case and spaces are normalized
/// (`GPT-5 mini` → `gpt-5-mini`): `gpt-…`, `o1…`, `o3…`, `o4…`, `codex-mini-latest`.
fn is_openai(name: &str) -> bool {
    let o_series = name
        .strip_prefix('o')
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit());
    name.starts_with("gpt-") || o_series || name == "codex-mini-latest"
}

/// A Gemini model id (`gemini-2.5-flash`, `gemini-3.1-pro-preview`), from Copilot's
/// display names where Google's id differs.
fn gemini_id(name: &str) -> Option<String> {
    if let Some((_, id)) = GEMINI_DISPLAY_NAMES.iter().find(|(n, _)| *n == name) {
        return Some((*id).to_owned());
    }
    let rest = name.strip_prefix("gemini-")?;
    let mut tokens = rest.split('-');
    let version = tokens.next()?;
    let tail: Vec<&str> = tokens.collect();
    let ok = is_version(version)
        && !tail.is_empty()
        && tail
            .iter()
            .all(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'));
    ok.then(|| name.to_owned())
}

/// The model of a Copilot, Cursor or Gemini file whose `field` says `written` (absent:
/// `None`), as a [`ModelChoice`]; the provider it implies becomes the draft's default, and
/// what loading should say about it goes to the caveats. A file with `model_provider`
/// names its model as that provider spells it: the id is used as written.
pub(super) fn choose_model(
    field: &str,
    written: Option<&str>,
    draft: &mut Draft,
    ctx: &mut Ctx<'_>,
) -> Result<ModelChoice, String> {
    let Some(written) = written else {
        return Ok(ModelChoice::Parent);
    };
    let trimmed = written.trim();
    if draft.provider.is_some() {
        let lower = trimmed.to_ascii_lowercase();
        if lower.is_empty() || lower == "inherit" {
            return Ok(ModelChoice::Parent);
        }
        return Ok(ModelChoice::Named(Model {
            id: trimmed.to_owned(),
            origin: ModelOrigin::Explicit,
        }));
    }
    match translate(field, trimmed)? {
        Translation::Parent => Ok(ModelChoice::Parent),
        Translation::NoModel => {
            let Some(default) = &ctx.options.default_model else {
                return Ok(ModelChoice::Unnamed(format!(
                    "`{field}: {trimmed}` names no model (the tool picks one itself), and this \
                     server has no default model to use instead; name a model in the file, or \
                     start the server with --default-model PROVIDER/MODEL (or set \
                     MCP_AGENTS_DEFAULT_MODEL)"
                )));
            };
            ctx.caveats.push(format!(
                "`{field}: {trimmed}` names no model (the tool picks one itself); the server's \
                 default model, `{}/{}`, is used",
                default.provider, default.model
            ));
            Ok(ModelChoice::Parent)
        }
        Translation::ClaudeAlias(alias) => {
            let resolved = resolve_alias(&alias, &ctx.options.env)
                .ok_or_else(|| format!("`{field}: {trimmed}` is not a Claude Code alias"))??;
            draft.default_provider = Some(ProviderKind::Anthropic);
            Ok(ModelChoice::Named(Model {
                id: resolved.id,
                origin: ModelOrigin::ClaudeAlias {
                    alias: resolved.alias.to_owned(),
                    env: resolved.env.map(str::to_owned),
                },
            }))
        }
        Translation::Model {
            provider,
            id,
            translated,
            retired,
        } => {
            if let Some(day) = retired {
                ctx.caveats.push(format!(
                    "`{field}: {trimmed}` is {id}, which Anthropic retired on {day}; runs fail \
                     unless the endpoint still serves it (a gateway or a partner platform)"
                ));
            }
            draft.default_provider = Some(provider);
            Ok(ModelChoice::Named(Model {
                origin: if translated {
                    ModelOrigin::Translated {
                        written: trimmed.to_owned(),
                    }
                } else {
                    ModelOrigin::Explicit
                },
                id,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(written: &str) -> (ProviderKind, String, bool) {
        match translate("model", written) {
            Ok(Translation::Model {
                provider,
                id,
                translated,
                ..
            }) => (provider, id, translated),
            other => panic!("{written}: {other:?}"),
        }
    }

    #[test]
    fn every_claude_row_is_reached_from_each_tools_spelling() {
        for row in CLAUDE_MODELS {
            let tier = row.tier;
            let v = row.version;
            let display = format!(
                "Claude {}{} {v}",
                tier[..1].to_ascii_uppercase(),
                &tier[1..]
            );
            for written in [
                display.clone(),
                format!("{display} (copilot)"),
                format!("claude-{tier}-{v}"),
                format!("claude-{v}-{tier}"),
                format!("{tier}-{v}"),
            ] {
                let (provider, id, translated) = model(&written);
                assert_eq!(provider, ProviderKind::Anthropic, "{written}");
                assert_eq!(id, row.id, "{written}");
                assert_eq!(translated, written != row.id, "{written}");
            }
        }
    }

    #[test]
    fn the_issues_examples_translate() {
        assert_eq!(model("Claude Sonnet 4.5 (copilot)").1, "claude-sonnet-4-5");
        assert_eq!(model("claude-4.5-sonnet").1, "claude-sonnet-4-5");
        assert_eq!(model("claude-sonnet-4.6").1, "claude-sonnet-4-6");
        assert_eq!(model("claude-4-sonnet").1, "claude-sonnet-4-0");
        assert!(matches!(
            translate("model", "Claude Sonnet 4.5"),
            Ok(Translation::Model {
                retired: Some("2026-11-30"),
                ..
            })
        ));
    }

    #[test]
    fn provider_ids_pass_as_written() {
        for id in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-3-5-haiku-20241022",
            "claude-3-haiku-20240307",
            "gpt-5.5",
            "gpt-4.1",
            "o3-mini",
            "o4-mini",
            "codex-mini-latest",
            "gpt-5.1-codex-max",
        ] {
            let (provider, got, translated) = model(id);
            assert_eq!(got, id);
            assert!(!translated, "{id}");
            assert_ne!(provider, ProviderKind::Custom);
        }
    }

    #[test]
    fn openai_display_names_are_openai_ids() {
        for (written, id) in [
            ("GPT-5 (copilot)", "gpt-5"),
            ("GPT-5", "gpt-5"),
            ("GPT-5 mini", "gpt-5-mini"),
            ("GPT-5.4 mini", "gpt-5.4-mini"),
            ("GPT-5.3-Codex", "gpt-5.3-codex"),
            ("GPT-4o", "gpt-4o"),
            ("GPT-4.1", "gpt-4.1"),
        ] {
            assert_eq!(model(written), (ProviderKind::OpenAi, id.to_owned(), true));
        }
    }

    #[test]
    fn words_that_name_no_model_use_the_default() {
        for written in ["", "inherit", "Inherit"] {
            assert_eq!(translate("model", written), Ok(Translation::Parent));
        }
        for written in ["fast", "auto", "Auto"] {
            assert_eq!(translate("model", written), Ok(Translation::NoModel));
        }
        assert_eq!(
            translate("model", "sonnet"),
            Ok(Translation::ClaudeAlias("sonnet".into()))
        );
    }

    #[test]
    fn what_no_provider_here_serves_is_refused_naming_the_field() {
        for (written, why) in [
            ("composer-1", "Cursor's own model"),
            ("cheetah", "Cursor's own model"),
            ("grok-code-fast-1", "xAI"),
            ("Raptor mini", "GitHub Copilot"),
            ("gemini-pro", "not a Gemini model id"),
            ("flash", "Gemini CLI alias"),
            ("llama-3", "not a Claude, OpenAI or Gemini model"),
            (
                "GPT-4.1 | 'gpt-5' | 'Claude Sonnet 4.5'",
                "no provider here serves",
            ),
        ] {
            let err = translate("model", written).unwrap_err();
            assert!(err.starts_with(&format!("`model: {written}`")), "{err}");
            assert!(err.contains(why), "{written}: {err}");
            assert!(err.contains("model_provider: custom"), "{err}");
        }
    }

    #[test]
    fn variants_and_unknown_claude_versions_are_refused() {
        for written in [
            "claude-4.5-sonnet-thinking",
            "claude-4.5-opus-high-thinking",
            "sonnet-4.5-thinking",
            "Claude Opus 4.6 (fast mode) (preview)",
            "claude-opus-4.6-fast",
            "gpt-5.2-high",
        ] {
            let err = translate("model", written).unwrap_err();
            assert!(err.contains("names a variant"), "{written}: {err}");
        }
        let err = translate("model", "claude-sonnet-4.9").unwrap_err();
        assert!(err.contains("not in this runtime's table"), "{err}");
    }

    #[test]
    fn gemini_models_go_to_the_gemini_provider() {
        for (written, id) in [
            ("gemini-2.5-flash", "gemini-2.5-flash"),
            ("gemini-3.1-pro-preview", "gemini-3.1-pro-preview"),
            ("Gemini 2.5 Pro", "gemini-2.5-pro"),
            ("Gemini 3.1 Pro (copilot)", "gemini-3.1-pro-preview"),
            ("Gemini 3 Flash", "gemini-3-flash-preview"),
        ] {
            match translate("model", written) {
                Ok(Translation::Model {
                    provider, id: got, ..
                }) => {
                    assert_eq!(
                        (provider, got.as_str()),
                        (ProviderKind::Gemini, id),
                        "{written}"
                    );
                }
                other => panic!("{written}: {other:?}"),
            }
        }
        for written in ["gemini-pro", "flash-lite", "gemini-3-pro"] {
            assert!(translate("model", written).is_err(), "{written}");
        }
    }
}
