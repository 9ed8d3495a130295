//! From a [`Draft`] to the definition: [`finalize`] applies the rules of SPEC §3.1–3.2 once
//! for every format, with the caveats a definition that loads carries.

use super::draft::{AskWritten, Draft, ModelChoice};
use super::fallbacks::{check_allowed, settle_fallbacks};
use super::model_provider::{
    ProviderFields, check_sampling, model_and_provider, model_note, provider_config,
    reasoning_wire_note,
};
use super::spec::{Ctx, Parsed};
use super::tool_notes::{
    no_tools_note, settle_workspace, unavailable_tools, unique, unknown_tools_note,
};
use crate::definition::{
    AgentDefinition, AskParent, Model, ProviderConfig, RunBudget, SourceFile, check_name,
};
use crate::limits::{ASK_TIMEOUT_DEFAULT, DEFAULT_MAX_TURNS};

/// Applies every shared rule and builds the definition. A rejection's reason begins with
/// the file's slips of field names, which are often its cause (and then a default model is
/// not what it lacks).
pub(super) fn finalize(
    mut draft: Draft,
    source: SourceFile,
    ctx: &mut Ctx<'_>,
) -> Result<Parsed, String> {
    let slips = std::mem::take(&mut draft.slips);
    build(draft, source, ctx).map_err(|reason| {
        if slips.is_empty() {
            reason
        } else {
            ctx.wants_default_model = false;
            format!("{} As written, {reason}", slips.join(" "))
        }
    })
}

fn build(draft: Draft, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let tools = ctx.spec.tools;
    let unknown = unique(&draft.unknown_tools);
    let (texts, model, provider) = checked_parts(&draft, ctx)?;
    let allow = ctx.options.allow_models.as_ref();
    check_allowed(&model, &provider, allow)?;
    let fallback_models = settle_fallbacks(
        &draft.fallback_models,
        &model,
        &provider,
        allow,
        &mut ctx.caveats,
    );
    let (name, description, instructions) = texts;
    let budget = effective_budget(draft.budget, ctx.options.budget, &mut ctx.caveats);
    let ask_parent = ask_parent(&draft.ask, &mut ctx.caveats);
    let mut definition = AgentDefinition {
        name,
        description,
        instructions,
        model,
        fallback_models,
        provider,
        max_turns: draft.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        max_output_tokens: draft.max_output_tokens,
        budget,
        output_schema: draft.output_schema,
        mcp_servers: draft.mcp_servers,
        skills: draft.skills,
        sandbox: draft.sandbox,
        tools: draft.tools,
        reasoning_effort: draft.reasoning_effort,
        temperature: draft.temperature,
        unavailable_tools: unavailable_tools(&unknown, tools),
        hand_only: draft.hand_only,
        ask_parent,
        source,
    };
    let unknown_tools = unknown_tools_note(&definition, &unknown, tools);
    let had_workspace = settle_workspace(&mut definition, &mut ctx.caveats);
    ctx.caveats.extend(unknown_tools);
    ctx.caveats
        .extend(no_tools_note(&definition, had_workspace, tools));
    ctx.caveats.extend(model_note(&definition, ctx.spec.models));
    ctx.caveats.extend(reasoning_wire_note(&definition));
    Ok(Parsed::Agent(Box::new(definition)))
}

/// Whether the agent may ask its parent (SPEC §4.5): `ask_parent` as written, else whether
/// its tool lists name its format's ask tool without denying it. A timeout for an agent
/// that may not ask is said to be ignored.
fn ask_parent(written: &AskWritten, caveats: &mut Vec<String>) -> Option<AskParent> {
    let granted = written.field.unwrap_or(written.listed && !written.denied);
    if !granted {
        if let Some(seconds) = written.timeout_s {
            caveats.push(format!(
                "`ask_timeout_s` is {seconds}, but this agent may not ask its parent (no \
                 `ask_parent: true`), so it is ignored"
            ));
        }
        return None;
    }
    let timeout = written.timeout_s.map_or(ASK_TIMEOUT_DEFAULT, |seconds| {
        std::time::Duration::from_secs(u64::from(seconds))
    });
    Some(AskParent { timeout })
}

/// The texts, the model and the provider, each checked; a file with several problems gets
/// them all in one reason ("2 problems: (1) …; (2) …"), so that fixing one does not only
/// reveal the next. The provider's checks need the model's provider, so they follow it.
fn checked_parts(
    draft: &Draft,
    ctx: &mut Ctx<'_>,
) -> Result<(Texts, Model, ProviderConfig), String> {
    let mut problems = Vec::new();
    let texts = required_texts(draft).map_err(|e| problems.extend(e)).ok();
    let parent = matches!(draft.model, ModelChoice::Parent | ModelChoice::Unnamed(_));
    let model_and_provider = model_and_provider(draft, ctx)
        .and_then(|(model, kind)| {
            let provider = provider_config(
                kind,
                ProviderFields {
                    base_url: draft.base_url.clone(),
                    env_key: draft.env_key.clone(),
                    wire_api: draft.wire_api.clone(),
                    auth: draft.auth.clone(),
                },
                ctx.options,
            )?;
            check_sampling(draft.temperature, draft.reasoning_effort, provider.wire_api)?;
            Ok((model, provider))
        })
        .map_err(|e| problems.push(e))
        .ok();
    match (texts, model_and_provider) {
        (Some(texts), Some((model, provider))) => Ok((texts, model, provider)),
        _ => {
            // The model's is the one problem, and a default model fixes it.
            ctx.wants_default_model =
                parent && problems.len() == 1 && ctx.options.default_model.is_none();
            Err(one_reason(problems))
        }
    }
}

/// The name, the description and the instructions.
type Texts = (String, String, String);

/// A file's problems as one reason: the one, or each numbered.
fn one_reason(problems: Vec<String>) -> String {
    match problems.as_slice() {
        [one] => one.clone(),
        all => {
            let numbered: Vec<String> = all
                .iter()
                .enumerate()
                .map(|(i, problem)| format!("({}) {problem}", i + 1))
                .collect();
            format!("{} problems: {}", all.len(), numbered.join("; "))
        }
    }
}

/// The name (checked), the description and the instructions, each required and not blank;
/// every one missing is named.
fn required_texts(draft: &Draft) -> Result<Texts, Vec<String>> {
    let mut problems = Vec::new();
    let name = match draft.name.clone() {
        None => {
            problems.push("`name` is required".to_owned());
            None
        }
        Some(name) => match check_name(&name) {
            Ok(()) => Some(name),
            Err(e) => {
                problems.push(format!("`name`: {e}"));
                None
            }
        },
    };
    let text = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let description = text(&draft.description);
    if description.is_none() {
        problems.push("`description` is required and must not be empty".to_owned());
    }
    let instructions = text(&draft.instructions);
    if instructions.is_none() {
        problems.push(draft.instructions_hint.to_owned());
    }
    match (name, description, instructions) {
        (Some(name), Some(description), Some(instructions)) => {
            Ok((name, description, instructions))
        }
        _ => Err(problems),
    }
}

/// The budget a definition runs with: the server's default where the file sets none; a
/// file's value above the server's is lowered to it, with a caveat (a definition may lower
/// the server's budget, never raise it).
fn effective_budget(written: RunBudget, server: RunBudget, caveats: &mut Vec<String>) -> RunBudget {
    let mut pick = |field: &str, written: Option<u32>, server: Option<u32>| match (written, server)
    {
        (Some(asked), Some(bound)) if asked > bound => {
            caveats.push(format!(
                "`{field}` is {asked}, above this server's limit of {bound} (set with \
                 --{} or {}); {bound} is used",
                field.replace('_', "-"),
                super::draft::budget_env_var(field)
            ));
            Some(bound)
        }
        (Some(asked), _) => Some(asked),
        (None, bound) => bound,
    };
    RunBudget {
        max_tool_calls: pick(
            "max_tool_calls",
            written.max_tool_calls,
            server.max_tool_calls,
        ),
        max_run_tokens: pick(
            "max_run_tokens",
            written.max_run_tokens,
            server.max_run_tokens,
        ),
        max_run_seconds: pick(
            "max_run_seconds",
            written.max_run_seconds,
            server.max_run_seconds,
        ),
    }
}
