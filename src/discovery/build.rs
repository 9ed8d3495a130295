//! What all formats share: the [`Draft`] a format fills in, the extension fields every format
//! accepts (FORMATS.md, "Common to all formats"), and [`finalize`], which applies the rules of
//! SPEC §3.1–3.2 once for every format.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::Doc;
use super::options::{DefaultModel, LoadOptions};
use super::referenced::ReferencedFiles;
use super::secrets::{reject_literal_secrets, reject_secret_fields};
use super::servers::parse_servers;
use crate::definition::SkillRegistry;
use crate::definition::endpoint::{EndpointUse, check_endpoint};
use crate::definition::name::check_name;
use crate::definition::template::is_env_var_name;
use crate::definition::{
    AgentDefinition, ChildServerConfig, Format, Model, ModelOrigin, ProviderConfig, ProviderKind,
    ReasoningEffort, Sandbox, SourceFile, ToolFilter, ToolNaming, ToolPattern, WireApi,
};
use crate::limits::{DEFAULT_MAX_TURNS, MAX_OUTPUT_TOKENS_RANGE, MAX_TURNS_RANGE};

/// What one file turned out to be.
#[derive(Debug)]
pub enum Parsed {
    Agent(Box<AgentDefinition>),
    /// Valid, but not a subagent (OpenCode `mode: primary`, `disable: true`); the text says why.
    NotASubagent(String),
}

/// Everything a format module needs besides the file's text.
pub struct Ctx<'a> {
    pub options: &'a LoadOptions,
    pub referenced: &'a ReferencedFiles,
    pub skills: &'a SkillRegistry,
    /// Notes on what was accepted with a caveat; each becomes one warning if the file loads.
    pub caveats: Vec<String>,
}

/// How the file chose its model.
#[derive(Debug, Default)]
pub enum ModelChoice {
    #[default]
    Missing,
    /// "Use the parent's model": the server's default model is used.
    Parent,
    Named(Model),
}

/// A definition in the making, in canonical terms.
#[derive(Debug, Default)]
pub struct Draft {
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
    pub max_turns: Option<u32>,
    pub max_output_tokens: Option<u32>,
    pub mcp_servers: BTreeMap<String, ChildServerConfig>,
    pub skills: Vec<String>,
    pub sandbox: Sandbox,
    pub tools: ToolFilter,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub temperature: Option<f64>,
}

/// Format-specific spellings of the common fields.
pub struct Spellings {
    pub max_turns: &'static [&'static str],
    pub reasoning_effort: &'static [&'static str],
    pub sandbox: &'static [&'static str],
}

pub const CANONICAL_SPELLINGS: Spellings = Spellings {
    max_turns: &["max_turns", "maxTurns"],
    reasoning_effort: &["reasoning_effort", "reasoningEffort"],
    sandbox: &["sandbox"],
};

const NESTED_SECRET_ADVICE: &str = "keep credentials in environment variables: name the \
    provider's with `env_key`, and pass a child server's with a ${VAR} placeholder in `env` \
    or `headers`";

const TOP_LEVEL_SECRET_ADVICE: &str =
    "put the key in an environment variable and name that variable with `env_key`";

/// Reads the fields every format accepts. `tools` and `disallowed_tools` are left to the
/// format, whose pattern syntax differs.
pub fn read_common(
    doc: Doc<'_>,
    draft: &mut Draft,
    spellings: &Spellings,
    format: Format,
    ctx: &mut Ctx<'_>,
) -> Result<(), String> {
    reject_secret_fields(doc, "", TOP_LEVEL_SECRET_ADVICE)?;

    draft.provider = doc.string(&["model_provider", "modelProvider"])?;
    draft.base_url = doc.string(&["base_url", "baseUrl"])?;
    draft.env_key = doc.string(&["env_key", "envKey"])?;
    draft.wire_api = doc.string(&["wire_api", "wireApi"])?;
    draft.max_turns = doc.integer(spellings.max_turns, MAX_TURNS_RANGE)?;
    draft.max_output_tokens = doc.integer(
        &["max_output_tokens", "maxOutputTokens"],
        MAX_OUTPUT_TOKENS_RANGE,
    )?;

    if let Some((field, value)) = doc.find(&["mcp_servers", "mcpServers"])? {
        draft.mcp_servers = parse_servers(field, value, ctx.referenced, &mut ctx.caveats)?;
    }

    match doc.find(&["skills"])? {
        // Codex's own `[[skills.config]]` table enables skills by path; it is not a preload list.
        Some((_, Value::Object(_))) if format == Format::Codex => ctx.caveats.push(
            "`[skills]` (Codex skill enablement) is ignored; list skills to preload as \
             `skills = [\"name\"]`"
                .to_owned(),
        ),
        Some((field, value)) => {
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
                ctx.caveats.push(format!(
                    "`{field}` names skills that no skill root defines ({}); spawn_agent will \
                     fail with skill_not_found until they exist",
                    unknown.join(", ")
                ));
            }
        }
        None => {}
    }

    if let Some((field, value)) = doc.str(spellings.sandbox)? {
        draft.sandbox = parse_sandbox(field, value)?;
    }
    if let Some((field, value)) = doc.str(&["isolation"])? {
        check_isolation(field, value)?;
    }
    if let Some((field, value)) = doc.str(spellings.reasoning_effort)? {
        draft.reasoning_effort = Some(ReasoningEffort::parse(value).ok_or_else(|| {
            format!("`{field}` is {value:?}; use none, minimal, low, medium, high, xhigh or max")
        })?);
    }
    draft.temperature = doc.number(&["temperature"])?.map(|(_, t)| t);
    // Last, so that the messages about fields read above come first: a credential written
    // anywhere else in the file (a table this runtime ignores, a disabled server).
    reject_literal_secrets(doc.map(), "", NESTED_SECRET_ADVICE)
}

pub fn parse_sandbox(field: &str, value: &str) -> Result<Sandbox, String> {
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

/// Reads allow/deny entries in the qualified syntax shared by the canonical, Claude and Codex
/// formats: `server__tool`, `server__*`, `*`, and Claude's `mcp__server`, `mcp__server__*`,
/// `mcp__server__tool`. Entries that name no child tool (Claude Code built-ins such as
/// `Read` or `Bash(git:*)`) select nothing and are returned separately.
pub fn qualified_patterns(entries: &[String]) -> (Vec<ToolPattern>, Vec<String>) {
    let mut patterns = Vec::new();
    let mut unknown = Vec::new();
    for entry in entries {
        let glob = match entry.strip_prefix("mcp__") {
            Some(rest) if rest.contains("__") || rest == "*" => Some(rest.to_owned()),
            Some(server) => Some(format!("{server}__*")),
            None if entry == "*" || entry.contains("__") => Some(entry.clone()),
            None => None,
        };
        match glob {
            Some(glob) => patterns.push(ToolPattern::new(glob, ToolNaming::Qualified)),
            None => unknown.push(entry.clone()),
        }
    }
    (patterns, unknown)
}

/// Reads `tools` / `disallowed_tools` in the qualified syntax into `draft.tools`, with one
/// caveat for entries that select nothing.
pub fn read_qualified_tool_lists(
    doc: Doc<'_>,
    draft: &mut Draft,
    allow_names: &[&'static str],
    deny_names: &[&'static str],
    comma_strings: bool,
    ctx: &mut Ctx<'_>,
) -> Result<(), String> {
    let mut ignored = Vec::new();
    if let Some((_, entries)) = doc.string_list(allow_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        add_allow_list(draft, patterns);
        ignored.extend(unknown);
    }
    if let Some((_, entries)) = doc.string_list(deny_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        draft.tools.deny.extend(patterns);
        ignored.extend(unknown);
    }
    note_ignored_tools(draft, &ignored, ctx);
    Ok(())
}

/// Adds an allow list written in `field`. The first one becomes the agent's allow list; a
/// second one (an OpenCode file with `permission` rules that allow only some tools and a
/// `tools` list) narrows it: a tool has to pass both.
pub fn add_allow_list(draft: &mut Draft, patterns: Vec<ToolPattern>) {
    match draft.tools.allow {
        None => draft.tools.allow = Some(patterns),
        Some(_) => draft.tools.also_allow.push(patterns),
    }
}

/// One caveat listing tool entries that select no child tool, and what that means.
pub fn note_ignored_tools(draft: &Draft, ignored: &[String], ctx: &mut Ctx<'_>) {
    if ignored.is_empty() {
        return;
    }
    let mut note = format!(
        "tool entries that name no child MCP tool select nothing here: {}",
        ignored.join(", ")
    );
    let empty_allow_list = draft.tools.allow.as_ref().is_some_and(Vec::is_empty)
        || draft.tools.also_allow.iter().any(Vec::is_empty);
    if empty_allow_list && !draft.mcp_servers.is_empty() {
        note.push_str(
            "; the allow list names no child tool, so this agent is offered none of its \
             child servers' tools",
        );
    }
    ctx.caveats.push(note);
}

/// The message for a definition that defers to its parent's model without a server default.
pub const PARENT_MODEL_HELP: &str = "the definition uses its parent's model (`model: inherit` \
    or no model), which this server cannot see; name a model in the file, or start the server \
    with --default-model PROVIDER/MODEL (or set MCP_AGENTS_DEFAULT_MODEL)";

/// Applies every shared rule and builds the definition.
pub fn finalize(draft: Draft, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let name = draft.name.ok_or("`name` is required")?;
    check_name(&name).map_err(|e| format!("`name`: {e}"))?;
    let description = draft
        .description
        .filter(|d| !d.trim().is_empty())
        .ok_or("`description` is required and must not be empty")?;
    let instructions = draft
        .instructions
        .map(|i| i.trim().to_owned())
        .filter(|i| !i.is_empty())
        .ok_or(draft.instructions_hint)?;

    let explicit_kind = draft
        .provider
        .as_deref()
        .map(|p| {
            ProviderKind::parse(p).ok_or_else(|| {
                format!(
                    "`model_provider` is {p:?}; use openai, anthropic, or custom with \
                     base_url, env_key and wire_api"
                )
            })
        })
        .transpose()?;
    let (model, kind) = match draft.model {
        ModelChoice::Missing => return Err("`model` is required".to_owned()),
        ModelChoice::Named(model) => {
            let kind = explicit_kind.or(draft.default_provider).ok_or(
                "`model_provider` is required (openai, anthropic, or custom with base_url, \
                 env_key and wire_api)",
            )?;
            (model, kind)
        }
        ModelChoice::Parent => {
            let DefaultModel { provider, model } = ctx
                .options
                .default_model
                .as_ref()
                .ok_or(PARENT_MODEL_HELP)?;
            let model = Model {
                id: model.clone(),
                origin: ModelOrigin::ServerDefault,
            };
            (model, explicit_kind.unwrap_or(*provider))
        }
    };
    let provider = provider_config(kind, draft.base_url, draft.env_key, draft.wire_api)?;

    if let Some(t) = draft.temperature {
        let max = match provider.wire_api {
            WireApi::Responses => 2.0,
            WireApi::AnthropicMessages => 1.0,
        };
        if !(0.0..=max).contains(&t) {
            return Err(format!(
                "`temperature` is {t}; the {} API accepts 0 to {max}",
                provider.wire_api.as_str()
            ));
        }
    }
    if let Some(effort) = draft.reasoning_effort {
        // What the SDKs' types allow: `openai` `Reasoning.effort`, `anthropic`
        // `OutputConfigParam.effort` (SPEC §6.1).
        let accepted: &[ReasoningEffort] = match provider.wire_api {
            WireApi::Responses => &[
                ReasoningEffort::None,
                ReasoningEffort::Minimal,
                ReasoningEffort::Low,
                ReasoningEffort::Medium,
                ReasoningEffort::High,
                ReasoningEffort::XHigh,
                ReasoningEffort::Max,
            ],
            WireApi::AnthropicMessages => &[
                ReasoningEffort::Low,
                ReasoningEffort::Medium,
                ReasoningEffort::High,
                ReasoningEffort::XHigh,
                ReasoningEffort::Max,
            ],
        };
        if !accepted.contains(&effort) {
            let names: Vec<_> = accepted.iter().map(|e| e.as_str()).collect();
            return Err(format!(
                "reasoning effort {:?} is not accepted by the {} API; use {}",
                effort.as_str(),
                provider.wire_api.as_str(),
                names.join(", ")
            ));
        }
        // Effort on Messages turns adaptive thinking on, and the API takes no temperature
        // but 1 with thinking ("temperature may only be set to 1 when thinking is enabled").
        if provider.wire_api == WireApi::AnthropicMessages
            && draft.temperature.is_some_and(|t| t != 1.0)
        {
            return Err(
                "`temperature` cannot be combined with a reasoning effort on the \
                 anthropic-messages API: the effort turns thinking on, and with thinking the \
                 API takes only temperature 1; remove one of the two"
                    .to_owned(),
            );
        }
    }

    Ok(Parsed::Agent(Box::new(AgentDefinition {
        name,
        description: description.trim().to_owned(),
        instructions,
        model,
        provider,
        max_turns: draft.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        max_output_tokens: draft.max_output_tokens,
        mcp_servers: draft.mcp_servers,
        skills: draft.skills,
        sandbox: draft.sandbox,
        tools: draft.tools,
        reasoning_effort: draft.reasoning_effort,
        temperature: draft.temperature,
        source,
    })))
}

/// Fills provider defaults and checks the three fields (SPEC §3.2).
fn provider_config(
    kind: ProviderKind,
    base_url: Option<String>,
    env_key: Option<String>,
    wire_api: Option<String>,
) -> Result<ProviderConfig, String> {
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
    let base_url = base_url.as_deref().or(default_url).unwrap_or_default();
    let base_url = check_endpoint(base_url, EndpointUse::ProviderBaseUrl)
        .map_err(|e| format!("`base_url` {e}"))?;
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
        None => default_wire.unwrap_or(WireApi::Responses),
        Some(w) => WireApi::parse(w).ok_or_else(|| match w {
            "chat" => "`wire_api: chat` (Chat Completions) is not implemented; use `responses` \
                       or `anthropic-messages`"
                .to_owned(),
            other => {
                format!("`wire_api` is {other:?}; use `responses` or `anthropic-messages`")
            }
        })?,
    };
    Ok(ProviderConfig {
        kind,
        base_url,
        env_key,
        wire_api,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::ChildTransport;

    fn draft_with_servers() -> Draft {
        let server = || {
            ChildServerConfig::new(ChildTransport::Stdio {
                command: "x".into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            })
        };
        Draft {
            mcp_servers: BTreeMap::from([("docs".into(), server()), ("tracker".into(), server())]),
            ..Draft::default()
        }
    }

    fn offered(draft: &Draft) -> Vec<String> {
        let mut out = vec![];
        for (server, config) in &draft.mcp_servers {
            for tool in ["read", "write", "search"] {
                let agent = draft.tools.permits(server, tool);
                if agent && config.permits(tool) {
                    out.push(format!("{server}__{tool}"));
                }
            }
        }
        out
    }

    #[test]
    fn a_second_allow_list_narrows_in_either_order_and_naming() {
        let opencode = || vec![ToolPattern::new("docs_*", ToolNaming::OpenCode)];
        let qualified = || {
            vec![
                ToolPattern::new("*__read", ToolNaming::Qualified),
                ToolPattern::new("tracker__search", ToolNaming::Qualified),
            ]
        };
        for (first, second) in [(opencode(), qualified()), (qualified(), opencode())] {
            let mut draft = draft_with_servers();
            add_allow_list(&mut draft, first);
            add_allow_list(&mut draft, second);
            assert_eq!(offered(&draft), ["docs__read"]);
            assert_eq!(draft.tools.also_allow.len(), 1);
        }
    }
}
