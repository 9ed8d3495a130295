//! The [`Draft`] a format fills in, in canonical terms, and the extension fields every
//! format accepts (FORMATS.md, "Common to all formats"), read by [`read_common`].

use super::field_names as fields;
use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::Doc;
use super::secrets::{reject_literal_secrets, reject_secret_fields};
use super::servers::{Dialect, STANDARD, parse_servers};
use super::spec::Ctx;
use super::unknown_fields::note_near_misses;
use crate::definition::{
    ChildServerConfig, CompiledSchema, Model, ProviderKind, ReasoningEffort, RunBudget, Sandbox,
    ToolFilter,
};
use crate::limits::{
    ASK_TIMEOUT_RANGE, MAX_OUTPUT_TOKENS_RANGE, MAX_TURNS_RANGE, RUN_BUDGET_RANGE,
};

/// How the file chose its model.
#[derive(Debug, Default)]
pub(super) enum ModelChoice {
    #[default]
    Missing,
    /// "Use the parent's model": the server's default model is used.
    Parent,
    /// A name that names no model (Cursor's `fast`), written where the server has no default
    /// model to use instead: the rejection's reason, given once the file's other fields are
    /// checked too.
    Unnamed(String),
    Named(Model),
}

/// A definition in the making, in canonical terms.
#[derive(Debug, Default)]
pub(super) struct Draft {
    pub name: Option<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
    /// How to ask for the instructions when they are missing ("write them in the body…").
    pub instructions_hint: &'static str,
    pub model: ModelChoice,
    /// `model_provider` as written.
    pub provider: Option<String>,
    /// The provider when the file names a model but no provider (`None`: required).
    pub default_provider: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub wire_api: Option<String>,
    /// `auth` as written.
    pub auth: Option<String>,
    pub max_turns: Option<u32>,
    pub max_output_tokens: Option<u32>,
    /// The budget as the file writes it (the server's defaults are applied in `finalize`).
    pub budget: RunBudget,
    pub output_schema: Option<CompiledSchema>,
    pub mcp_servers: BTreeMap<String, ChildServerConfig>,
    pub skills: Vec<String>,
    pub sandbox: Sandbox,
    pub tools: ToolFilter,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub temperature: Option<f64>,
    /// Allow- and deny-list entries that name no tool here, as written; `finalize` makes
    /// them one warning.
    pub unknown_tools: Vec<String>,
    /// The file's setting that keeps the agent from the parent model, if any.
    pub hand_only: Option<&'static str>,
    /// What the file says about asking the parent (SPEC §4.5).
    pub ask: AskWritten,
    /// The models to fall back to, as the file names them (SPEC §5.1): `fallback_models`,
    /// and the later entries of a Copilot model list. `build` keeps those a run can use.
    pub fallback_models: Vec<FallbackWritten>,
    /// The notes on unknown fields that are slips of known ones (`modle`): they are caveats
    /// of a file that loads, and part of the reason when the file is rejected, since the slip
    /// is often why (`modle` leaves the file without a model).
    pub slips: Vec<String>,
}

/// One model a file names to fall back to (SPEC §5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FallbackWritten {
    /// As the file writes it, for the warnings.
    pub written: String,
    /// The provider it names (`openai` of `openai/gpt-5-mini`); `None` for a model on the
    /// file's own provider (a Copilot model list on a gateway).
    pub provider: Option<String>,
    /// The model id, as sent.
    pub model: String,
}

/// What a file says about asking its parent (SPEC §4.5): the canonical fields, and whether
/// its tool lists name its format's "ask the user" tool (`AskUserQuestion`). `build` makes
/// the definition's `ask_parent` of it.
#[derive(Debug, Default)]
pub(super) struct AskWritten {
    /// `ask_parent`, as written: it decides, whatever the tool lists say.
    pub field: Option<bool>,
    /// `ask_timeout_s`, in seconds.
    pub timeout_s: Option<u32>,
    /// An allow list (or a switch set to true) names the format's ask tool.
    pub listed: bool,
    /// A deny list (or a switch set to false) names it: a denial wins over a listing.
    pub denied: bool,
}

impl AskWritten {
    /// What a tool list entry that means "ask the user" does: `allow` lists it, else it is
    /// denied.
    pub(super) fn named(&mut self, allow: bool) {
        if allow {
            self.listed = true;
        } else {
            self.denied = true;
        }
    }
}

/// Format-specific spellings of the common fields.
pub(super) struct Spellings {
    pub max_turns: &'static [&'static str],
    pub reasoning_effort: &'static [&'static str],
    pub sandbox: &'static [&'static str],
    pub mcp_servers: &'static [&'static str],
    /// How the format writes one server entry.
    pub servers: &'static Dialect,
    /// The caveat for a `skills` table, when the format's own tool has one of another
    /// meaning (Codex's `[[skills.config]]`), which is then ignored.
    pub own_skills_table: Option<&'static str>,
}

pub(super) const CANONICAL_SPELLINGS: Spellings = Spellings {
    max_turns: fields::MAX_TURNS,
    reasoning_effort: fields::REASONING_EFFORT,
    sandbox: fields::SANDBOX,
    mcp_servers: fields::MCP_SERVERS,
    servers: &STANDARD,
    own_skills_table: None,
};

const NESTED_SECRET_ADVICE: &str = "keep credentials in environment variables: name the \
    provider's with `env_key`, and pass a child server's with a ${VAR} placeholder in `env` \
    or `headers`";

const TOP_LEVEL_SECRET_ADVICE: &str =
    "put the key in an environment variable and name that variable with `env_key`";

/// Reads the fields every format accepts. `tools` and `disallowed_tools` are left to the
/// format, whose pattern syntax differs.
pub(super) fn read_common(
    doc: Doc<'_>,
    draft: &mut Draft,
    spellings: &Spellings,
    ctx: &mut Ctx<'_>,
) -> Result<(), String> {
    reject_secret_fields(doc, "", TOP_LEVEL_SECRET_ADVICE)?;

    draft.provider = doc.string(fields::MODEL_PROVIDER)?;
    draft.base_url = doc.string(fields::BASE_URL)?;
    draft.env_key = doc.string(fields::ENV_KEY)?;
    draft.wire_api = doc.string(fields::WIRE_API)?;
    draft.auth = doc.string(fields::AUTH)?;
    draft.max_turns = doc.integer(spellings.max_turns, MAX_TURNS_RANGE)?;
    draft.max_output_tokens = doc.integer(fields::MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS_RANGE)?;
    draft.budget = RunBudget {
        max_tool_calls: budget(doc, fields::MAX_TOOL_CALLS)?,
        max_run_tokens: budget(doc, fields::MAX_RUN_TOKENS)?,
        max_run_seconds: budget(doc, fields::MAX_RUN_SECONDS)?,
    };
    if let Some((field, value)) = doc.find(fields::OUTPUT_SCHEMA)? {
        draft.output_schema = Some(output_schema(field, value)?);
    }

    if let Some((field, value)) = doc.find(spellings.mcp_servers)? {
        draft.mcp_servers = parse_servers(
            field,
            value,
            ctx.referenced,
            spellings.servers,
            &mut ctx.caveats,
        )?;
    }
    match (doc.find(fields::SKILLS)?, spellings.own_skills_table) {
        (Some((_, Value::Object(_))), Some(ignored)) => ctx.caveats.push(ignored.to_owned()),
        (Some((field, value)), _) => read_skills(field, value, draft, ctx)?,
        (None, _) => {}
    }

    if let Some((field, value)) = doc.str(spellings.sandbox)? {
        draft.sandbox = parse_sandbox(field, value)?;
    }
    if let Some((field, value)) = doc.str(fields::ISOLATION)? {
        check_isolation(field, value)?;
    }
    if let Some((field, value)) = doc.str(spellings.reasoning_effort)? {
        draft.reasoning_effort = Some(ReasoningEffort::parse(value).ok_or_else(|| {
            format!("`{field}` is {value:?}; use none, minimal, low, medium, high, xhigh or max")
        })?);
    }
    draft.temperature = doc.number(fields::TEMPERATURE)?.map(|(_, t)| t);
    if let Some((field, value)) = doc.find(fields::FALLBACK_MODELS)? {
        draft.fallback_models = fallback_models(field, value)?;
    }
    draft.ask.field = doc.bool(fields::ASK_PARENT)?;
    draft.ask.timeout_s = doc
        .integer(fields::ASK_TIMEOUT, ASK_TIMEOUT_RANGE)
        .map_err(|e| format!("{e} (the seconds a question waits for the parent's answer)"))?;
    let before = ctx.caveats.len();
    let known_anywhere = ctx
        .formats
        .iter()
        .flat_map(|spec| spec.files.iter().map(|file| file.fields));
    note_near_misses(doc, ctx.file.fields, known_anywhere, &mut ctx.caveats);
    draft.slips = ctx.caveats[before..].to_vec();
    // Last, so that the messages about fields read above come first: a credential written
    // anywhere else in the file (a table this runtime ignores, a disabled server).
    reject_literal_secrets(doc.map(), "", NESTED_SECRET_ADVICE)
}

/// `skills`: the skills to preload, each once. One whose `hooks` this runtime would not run
/// is refused; names no skill root defines are one caveat.
fn read_skills(
    field: &str,
    value: &Value,
    draft: &mut Draft,
    ctx: &mut Ctx<'_>,
) -> Result<(), String> {
    let mut unknown = Vec::new();
    for name in super::fields::string_list(field, value, true)? {
        if draft.skills.contains(&name) {
            continue;
        }
        match ctx.skills.get(&name) {
            None => unknown.push(name.clone()),
            Some(skill) if skill.hooks => {
                return Err(format!(
                    "`{field}` preloads the skill `{name}` ({}), whose `hooks` this \
                     runtime does not run; the agent would act without the policy \
                     they enforce. Remove the skill from `{field}`, or the hooks from \
                     the skill",
                    skill.path.display()
                ));
            }
            Some(_) => {}
        }
        draft.skills.push(name);
    }
    if !unknown.is_empty() {
        let guesses: Vec<String> = unknown
            .iter()
            .filter_map(|name| Some(format!("`{}`", ctx.skills.closest(name)?)))
            .collect();
        let guess = if guesses.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", guesses.join(", "))
        };
        ctx.caveats.push(format!(
            "`{field}` names skills that no skill root defines ({}){guess}; \
             spawn_agent will fail with skill_not_found until they exist",
            unknown.join(", ")
        ));
    }
    Ok(())
}

/// `fallback_models`: a list of `provider/model` (SPEC §5.1); which of them a run can use
/// is `build`'s to say, once the agent's provider is known.
fn fallback_models(field: &str, value: &Value) -> Result<Vec<FallbackWritten>, String> {
    super::fields::string_list(field, value, true)?
        .into_iter()
        .map(|written| {
            let (provider, model) = written
                .split_once('/')
                .filter(|(p, m)| !p.trim().is_empty() && !m.trim().is_empty())
                .ok_or_else(|| {
                    format!(
                        "`{field}` entry `{written}` names no provider: write provider/model \
                         (for example openai/gpt-5-mini, or custom/MODEL for the agent's own \
                         endpoint)"
                    )
                })?;
            Ok(FallbackWritten {
                provider: Some(provider.trim().to_owned()),
                model: model.trim().to_owned(),
                written: written.trim().to_owned(),
            })
        })
        .collect()
}

/// A run budget field: a positive whole number (SPEC §3.1).
fn budget(doc: Doc<'_>, names: &[&'static str]) -> Result<Option<u32>, String> {
    match doc.find(names)? {
        Some((name, Value::Number(n))) if n.as_f64().is_some_and(|f| f <= 0.0) => Err(format!(
            "`{name}` is {n}; a run budget must be a positive whole number (leave the \
                 field out for no limit)"
        )),
        _ => doc.integer(names, RUN_BUDGET_RANGE),
    }
}

/// `output_schema`: a JSON Schema object written inline (a YAML or TOML mapping) or as a
/// string of JSON; it must compile (SPEC §3.1).
fn output_schema(field: &str, value: &Value) -> Result<CompiledSchema, String> {
    let parsed;
    let schema = match value {
        Value::Object(_) => value,
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| {
                format!(
                    "`{field}` is a string that is not JSON (line {}, column {} of the string: \
                     {e}); write the schema as a mapping, or as a JSON string",
                    e.line(),
                    e.column()
                )
            })?;
            &parsed
        }
        other => {
            return Err(super::fields::wrong_type(
                field,
                "a JSON Schema object (a mapping, or a string of JSON)",
                other,
            ));
        }
    };
    if !schema.is_object() {
        return Err(format!(
            "`{field}` must be a JSON Schema object; the string holds {}",
            super::source::describe_type(schema)
        ));
    }
    CompiledSchema::compile(schema)
        .map_err(|e| format!("`{field}` is not a valid JSON Schema: {e}"))
}

/// The environment variable that sets the server's default for a budget field:
/// `MCP_AGENTS_MAX_RUN_SECONDS` for `max_run_seconds`.
pub(super) fn budget_env_var(field: &str) -> String {
    format!("MCP_AGENTS_{}", field.to_ascii_uppercase())
}

pub(super) fn parse_sandbox(field: &str, value: &str) -> Result<Sandbox, String> {
    match value {
        "default" => Ok(Sandbox::Default),
        "read-only" => Ok(Sandbox::ReadOnly),
        "workspace-write" | "danger-full-access" => Err(format!(
            "`{field}: {value}` is not supported: this runtime has no file-system sandbox to \
             grant; agents act only through their child MCP tools. Use `default` or `read-only`"
        )),
        other => Err(format!(
            "`{field}` is {other:?}; use `default` or `read-only`"
        )),
    }
}

fn check_isolation(field: &str, value: &str) -> Result<(), String> {
    match value {
        "none" => Ok(()),
        "worktree" | "container" => Err(format!(
            "`{field}: {value}` is not supported: this runtime has no isolation; \
             remove the field or set it to `none`"
        )),
        other => Err(format!("`{field}` is {other:?}; only `none` is supported")),
    }
}
