//! From a [`Draft`] to the definition: [`finalize`] applies the rules of SPEC §3.1–3.2 once
//! for every format, with the caveats a definition that loads carries.

use super::draft::AskWritten;
use super::draft::Draft;
use super::model_provider::{
    ProviderFields, check_sampling, model_and_provider, model_note, provider_config,
};
use super::spec::{Ctx, Parsed};
use super::tool_notes::{
    no_tools_note, settle_workspace, unavailable_tools, unique, unknown_tools_note,
};
use crate::definition::{AgentDefinition, AskParent, RunBudget, SourceFile, check_name};
use crate::limits::{ASK_TIMEOUT_DEFAULT, DEFAULT_MAX_TURNS};

/// Applies every shared rule and builds the definition. A rejection's reason begins with
/// the file's slips of field names, which are often its cause.
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
            format!("{} As written, {reason}", slips.join(" "))
        }
    })
}

fn build(draft: Draft, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let tools = ctx.spec.tools;
    let unknown = unique(&draft.unknown_tools);
    let (name, description, instructions) = required_texts(&draft)?;
    let (model, kind) = model_and_provider(&draft, ctx)?;
    let provider = provider_config(
        kind,
        ProviderFields {
            base_url: draft.base_url,
            env_key: draft.env_key,
            wire_api: draft.wire_api,
            auth: draft.auth,
        },
        ctx.options,
    )?;
    check_sampling(draft.temperature, draft.reasoning_effort, provider.wire_api)?;
    let budget = effective_budget(draft.budget, ctx.options.budget, &mut ctx.caveats);
    let ask_parent = ask_parent(&draft.ask, &mut ctx.caveats);
    let mut definition = AgentDefinition {
        name,
        description,
        instructions,
        model,
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

/// The name (checked), the description and the instructions, each required and not blank.
fn required_texts(draft: &Draft) -> Result<(String, String, String), String> {
    let name = draft.name.clone().ok_or("`name` is required")?;
    check_name(&name).map_err(|e| format!("`name`: {e}"))?;
    let description = draft
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .ok_or("`description` is required and must not be empty")?;
    let instructions = draft
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .ok_or(draft.instructions_hint)?;
    Ok((name, description.to_owned(), instructions.to_owned()))
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
