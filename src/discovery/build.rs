//! What all formats share: the [`Draft`] a format fills in, the extension fields every format
//! accepts (FORMATS.md, "Common to all formats"), and [`finalize`], which applies the rules of
//! SPEC §3.1–3.2 once for every format.

use super::field_names as fields;
use std::collections::BTreeMap;

use serde_json::Value;

use super::aliases::{CLAUDE_ALIASES, resolve_alias};
use super::fields::Doc;
use super::options::{DefaultModel, LoadOptions};
use super::referenced::ReferencedFiles;
use super::secrets::{reject_literal_secrets, reject_secret_fields};
use super::servers::{Dialect, STANDARD, parse_servers};
use super::unknown_fields::note_near_misses;
use crate::definition::PARENT_MODEL_REJECTION;
use crate::definition::SkillRegistry;
use crate::definition::check_name;
use crate::definition::closest;
use crate::definition::is_env_var_name;
use crate::definition::{
    AgentDefinition, AuthHeader, BuiltinServer, ChildServerConfig, CompiledSchema, EndpointSource,
    Format, Model, ModelOrigin, ProviderConfig, ProviderKind, ReasoningEffort, RunBudget, Sandbox,
    SourceFile, ToolFilter, ToolNaming, ToolPattern, WireApi,
};
use crate::definition::{EndpointUse, check_endpoint};
use crate::limits::{
    DEFAULT_MAX_TURNS, MAX_OUTPUT_TOKENS_RANGE, MAX_TURNS_RANGE, RUN_BUDGET_RANGE,
};

/// What one file turned out to be.
#[derive(Debug)]
pub(super) enum Parsed {
    Agent(Box<AgentDefinition>),
    /// Valid, but not a subagent (OpenCode `mode: primary`, `disable: true`); the text says why.
    NotASubagent(String),
}

/// Everything a format module needs besides the file's text.
pub(super) struct Ctx<'a> {
    pub options: &'a LoadOptions,
    pub referenced: &'a ReferencedFiles,
    pub skills: &'a SkillRegistry,
    /// Notes on what was accepted with a caveat; each becomes one warning if the file loads.
    pub caveats: Vec<String>,
}

/// How the file chose its model.
#[derive(Debug, Default)]
pub(super) enum ModelChoice {
    #[default]
    Missing,
    /// "Use the parent's model": the server's default model is used.
    Parent,
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
    /// The budget as the file writes it (the server's defaults are applied in [`finalize`]).
    pub budget: RunBudget,
    pub output_schema: Option<CompiledSchema>,
    pub mcp_servers: BTreeMap<String, ChildServerConfig>,
    pub skills: Vec<String>,
    pub sandbox: Sandbox,
    pub tools: ToolFilter,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub temperature: Option<f64>,
    /// Allow- and deny-list entries that name no tool here, as written; [`finalize`] makes
    /// them one warning.
    pub unknown_tools: Vec<String>,
    /// The file's setting that keeps the agent from the parent model, if any.
    pub hand_only: Option<&'static str>,
    /// The notes on unknown fields that are slips of known ones (`modle`): they are caveats
    /// of a file that loads, and part of the reason when the file is rejected, since the slip
    /// is often why (`modle` leaves the file without a model).
    pub slips: Vec<String>,
}

/// Format-specific spellings of the common fields.
pub(super) struct Spellings {
    pub max_turns: &'static [&'static str],
    pub reasoning_effort: &'static [&'static str],
    pub sandbox: &'static [&'static str],
    pub mcp_servers: &'static [&'static str],
    /// How the format writes one server entry.
    pub servers: &'static Dialect,
}

pub(super) const CANONICAL_SPELLINGS: Spellings = Spellings {
    max_turns: fields::MAX_TURNS,
    reasoning_effort: fields::REASONING_EFFORT,
    sandbox: fields::SANDBOX,
    mcp_servers: fields::MCP_SERVERS,
    servers: &STANDARD,
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
    format: Format,
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

    match doc.find(fields::SKILLS)? {
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
        }
        None => {}
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
    let before = ctx.caveats.len();
    note_near_misses(doc, format, &mut ctx.caveats);
    draft.slips = ctx.caveats[before..].to_vec();
    // Last, so that the messages about fields read above come first: a credential written
    // anywhere else in the file (a table this runtime ignores, a disabled server).
    reject_literal_secrets(doc.map(), "", NESTED_SECRET_ADVICE)
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
                budget_env_var(field)
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

/// Reads allow/deny entries in the qualified syntax shared by the canonical, Claude and Codex
/// formats: `server__tool`, `server__*`, `*`, and Claude's `mcp__server`, `mcp__server__*`,
/// `mcp__server__tool`. Entries that name no child tool (Claude Code built-ins such as
/// `Read` or `Bash(git:*)`) select nothing and are returned separately.
pub(super) fn qualified_patterns(entries: &[String]) -> (Vec<ToolPattern>, Vec<String>) {
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

/// Reads `tools` / `disallowed_tools` in the qualified syntax into `draft.tools`; entries
/// that select nothing go to `draft.unknown_tools`.
pub(super) fn read_qualified_tool_lists(
    doc: Doc<'_>,
    draft: &mut Draft,
    allow_names: &[&'static str],
    deny_names: &[&'static str],
    comma_strings: bool,
) -> Result<(), String> {
    if let Some((_, entries)) = doc.string_list(allow_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        add_allow_list(draft, patterns);
        draft.unknown_tools.extend(unknown);
    }
    if let Some((_, entries)) = doc.string_list(deny_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        draft.tools.deny.extend(patterns);
        draft.unknown_tools.extend(unknown);
    }
    Ok(())
}

/// The pattern that selects the built-in workspace server's `tool` (`workspace__read`).
pub(super) fn workspace_pattern(tool: &str) -> ToolPattern {
    ToolPattern::new(
        format!("{}__{tool}", BuiltinServer::Workspace.name()),
        ToolNaming::Qualified,
    )
}

/// What one entry of a Copilot or Gemini CLI `tools` list names here.
pub(super) enum MappedTool {
    /// Workspace tools, by their names here (`read`, `grep`…).
    Workspace(Vec<&'static str>),
    /// Tools of servers the file defines.
    Child(Vec<ToolPattern>),
    /// A tool that does not exist here.
    Missing,
}

/// `tools` and `disallowed_tools` of a format whose entries `entry` maps (given the file's
/// own server names). `tools` absent, or with `*` anywhere, gives every tool (the six
/// workspace tools and the servers'); otherwise only what the list names, an entry that
/// names nothing here going to the "runs without" warning. A denied tool that does not
/// exist here is denied by its absence.
pub(super) fn read_mapped_tools(
    doc: Doc<'_>,
    draft: &mut Draft,
    entry: fn(&str, &[String]) -> MappedTool,
) -> Result<(), String> {
    let own_servers: Vec<String> = draft.mcp_servers.keys().cloned().collect();
    let mut workspace = true;
    if let Some((_, listed)) = doc.string_list(fields::TOOLS, true)?
        && !listed.iter().any(|t| t == "*")
    {
        workspace = false;
        let mut patterns = Vec::new();
        for text in listed {
            match entry(&text, &own_servers) {
                MappedTool::Workspace(tools) => {
                    workspace = true;
                    patterns.extend(tools.iter().map(|t| workspace_pattern(t)));
                }
                MappedTool::Child(child) => patterns.extend(child),
                MappedTool::Missing => draft.unknown_tools.push(text),
            }
        }
        add_allow_list(draft, patterns);
    }
    if let Some((_, denied)) = doc.string_list(fields::DISALLOWED_TOOLS, true)? {
        for text in denied {
            match entry(&text, &own_servers) {
                MappedTool::Workspace(tools) => draft
                    .tools
                    .deny
                    .extend(tools.iter().map(|t| workspace_pattern(t))),
                MappedTool::Child(child) => draft.tools.deny.extend(child),
                MappedTool::Missing => {}
            }
        }
    }
    if workspace {
        grant_workspace(draft);
    }
    Ok(())
}

/// Adds an allow list written in `field`. The first one becomes the agent's allow list; a
/// second one (an OpenCode file with `permission` rules that allow only some tools and a
/// `tools` list) narrows it: a tool has to pass both.
pub(super) fn add_allow_list(draft: &mut Draft, patterns: Vec<ToolPattern>) {
    match draft.tools.allow {
        None => draft.tools.allow = Some(patterns),
        Some(_) => draft.tools.also_allow.push(patterns),
    }
}

/// Gives the agent the built-in `workspace` server (SPEC §8.6), unless its file already
/// names it. Its tools then pass through the agent's lists like any child's.
pub(super) fn grant_workspace(draft: &mut Draft) {
    let workspace = BuiltinServer::Workspace;
    draft
        .mcp_servers
        .entry(workspace.name().to_owned())
        .or_insert_with(|| workspace.config());
}

/// The tool entries of `draft` that name no tool here, each once, in the order written.
fn unknown_tools(draft: &Draft) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for entry in &draft.unknown_tools {
        if !unique.contains(entry) {
            unique.push(entry.clone());
        }
    }
    unique
}

/// The tools a Claude Code, OpenCode, Copilot, Cursor or Gemini CLI file asks for that this
/// runtime does not give (its client's built-in tools without an equivalent here): the agent
/// runs without them. In the other formats an entry that names nothing is a mistake, not a
/// missing tool.
fn unavailable_tools(unknown: &[String], format: Format) -> Vec<String> {
    match format {
        Format::Claude | Format::OpenCode | Format::Copilot | Format::Cursor | Format::Gemini => {
            unknown.to_vec()
        }
        Format::CanonicalMarkdown | Format::CanonicalToml | Format::Codex => Vec::new(),
    }
}

/// The one warning about tool entries that name no tool here (`unique`), worded for the
/// format: a Claude Code or OpenCode file asks for built-in tools this runtime lacks, and
/// runs without them; in the other formats an entry that names nothing is a mistake.
fn unknown_tools_note(draft: &Draft, unique: &[String], format: Format) -> Option<String> {
    if unique.is_empty() {
        return None;
    }
    let spellings = workspace_tool_spellings(format);
    let listed = unique
        .iter()
        .map(
            |entry| match closest(entry, spellings.iter().map(String::as_str)) {
                Some(meant) => format!("{entry} (did you mean `{meant}`?)"),
                None => entry.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ");
    let mut note = match format {
        Format::Claude => format!(
            "runs without {listed}: this runtime has no such tools (of Claude Code's tools \
             only Read, Grep, Glob, LS, Edit, MultiEdit and Write exist here, as the built-in \
             workspace server's)"
        ),
        Format::OpenCode => format!(
            "runs without {listed}: this runtime has no such tools (of OpenCode's tools only \
             read, grep, glob, list, edit and write exist here, as the built-in workspace \
             server's)"
        ),
        Format::Copilot => format!(
            "runs without {listed}: this runtime has no such tools (of Copilot's tools only \
             read, search and edit exist here, as the built-in workspace server's read, list, \
             glob, grep, edit and write; MCP tools exist only for the servers this file \
             defines)"
        ),
        Format::Cursor => format!(
            "runs without {listed}: this runtime has no such tools (of the Claude Code tool \
             names a Cursor file can list only Read, Grep, Glob, LS, Edit, MultiEdit and Write \
             exist here, as the built-in workspace server's)"
        ),
        Format::Gemini => format!(
            "runs without {listed}: this runtime has no such tools (of Gemini CLI's tools \
             only read_file, read_many_files, list_directory, glob, grep_search, replace and \
             write_file exist here, as the built-in workspace server's; MCP tools exist only \
             for the servers this file defines)"
        ),
        Format::CanonicalMarkdown | Format::CanonicalToml | Format::Codex => {
            let mut note =
                format!("tool entries that name no child MCP tool select nothing here: {listed}");
            let workspace_like = draft.unknown_tools.iter().any(|entry| {
                let entry = entry.to_ascii_lowercase();
                BuiltinServer::Workspace.tools().contains(&entry.as_str()) || entry == "ls"
            });
            if workspace_like {
                note.push_str(
                    " (the built-in workspace tools are `workspace__read`, `workspace__list`, \
                     `workspace__glob` and `workspace__grep`, given by `mcp_servers: \
                     {workspace: {builtin: workspace}}`, and `workspace__edit` and \
                     `workspace__write` when `tools` names them too)",
                );
            }
            note
        }
    };
    let empty_allow_list = draft.tools.allow.as_ref().is_some_and(Vec::is_empty)
        || draft.tools.also_allow.iter().any(Vec::is_empty);
    if empty_allow_list {
        note.push_str(if draft.mcp_servers.is_empty() {
            "; with nothing else allowed, this agent has no tools at all"
        } else {
            "; the allow list names no child tool, so this agent is offered none of its \
             child servers' tools"
        });
    }
    Some(note)
}

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
    let unknown = unknown_tools(&draft);
    let unknown_tools = unknown_tools_note(&draft, &unknown, source.format);
    let unavailable_tools = unavailable_tools(&unknown, source.format);
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
        unavailable_tools,
        hand_only: draft.hand_only,
        source,
    };
    // A workspace server none of whose tools would be offered is not started at all.
    let workspace = BuiltinServer::Workspace.name();
    let had_workspace = definition
        .mcp_servers
        .get(workspace)
        .is_some_and(|c| c.builtin().is_some());
    if had_workspace && definition.workspace_tools().is_empty() {
        definition.mcp_servers.remove(workspace);
    }
    let tools = definition.workspace_tools();
    if !tools.contains(&"read") && tools.iter().any(|t| matches!(*t, "edit" | "write")) {
        ctx.caveats.push(
            "can change files but not read them: a file is changed only after this run has \
             read it, so without the read tool the agent can only create new files"
                .to_owned(),
        );
    }
    ctx.caveats.extend(unknown_tools);
    ctx.caveats
        .extend(no_tools_note(&definition, had_workspace));
    ctx.caveats.extend(model_note(&definition));
    Ok(Parsed::Agent(Box::new(definition)))
}

/// The workspace tools as `format` names them in a tool list, for "did you mean".
fn workspace_tool_spellings(format: Format) -> Vec<String> {
    let tools = BuiltinServer::Workspace.tools().iter();
    match format {
        // Claude Code's names of the same tools (`LS` is its `list`); a Cursor file lists
        // Claude Code's names.
        Format::Claude | Format::Cursor => tools
            .map(|tool| match *tool {
                "list" => "LS".to_owned(),
                tool => {
                    let mut chars = tool.chars();
                    chars
                        .next()
                        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                        .unwrap_or_default()
                }
            })
            .collect(),
        Format::OpenCode => tools.map(|tool| (*tool).to_owned()).collect(),
        // Copilot's aliases (`search` is grep, glob and list; `edit` is edit and write).
        Format::Copilot => ["read", "search", "edit"].map(str::to_owned).to_vec(),
        // The Gemini CLI's own tool names.
        Format::Gemini => [
            "read_file",
            "read_many_files",
            "list_directory",
            "glob",
            "grep_search",
            "replace",
            "write_file",
        ]
        .map(str::to_owned)
        .to_vec(),
        Format::CanonicalMarkdown | Format::CanonicalToml | Format::Codex => tools
            .map(|tool| format!("{}__{tool}", BuiltinServer::Workspace.name()))
            .collect(),
    }
}

/// Tool names shown as what an agent could have, at most.
const TOOLS_SHOWN: usize = 8;

/// When an allow list leaves the agent no tool at all although every list names something
/// (an empty list is [`unknown_tools_note`]'s): the entries, each with the name it is a slip
/// of, and what the agent could have instead. Child servers' tools are known only once they
/// start, so an entry that could name one of them counts as a tool.
fn no_tools_note(definition: &AgentDefinition, had_workspace: bool) -> Option<String> {
    let filter = &definition.tools;
    let lists: Vec<&Vec<ToolPattern>> = filter.allow.iter().chain(&filter.also_allow).collect();
    if lists.is_empty() || lists.iter().any(|list| list.is_empty()) {
        return None;
    }
    let children = || {
        definition
            .mcp_servers
            .iter()
            .filter(|(_, config)| config.builtin().is_none())
            .map(|(name, _)| name.as_str())
    };
    if !definition.workspace_tools().is_empty()
        || children().any(|server| filter.may_allow_server(server))
    {
        return None;
    }
    let mut could: Vec<String> = Vec::new();
    match definition.source.format {
        // The format's own names for the workspace tools, which it gets by naming them.
        Format::Claude | Format::OpenCode | Format::Copilot | Format::Cursor | Format::Gemini => {
            could.extend(workspace_tool_spellings(definition.source.format));
        }
        Format::CanonicalMarkdown | Format::CanonicalToml | Format::Codex if had_workspace => {
            could.extend(workspace_tool_spellings(definition.source.format));
        }
        Format::CanonicalMarkdown | Format::CanonicalToml | Format::Codex => {}
    }
    could.extend(children().map(|server| format!("{server}__*")));
    let mut entries: Vec<String> = Vec::new();
    let mut missing_servers: Vec<&str> = Vec::new();
    for pattern in lists.iter().flat_map(|list| list.iter()) {
        let glob = pattern.glob();
        let entry = match closest(glob, could.iter().map(String::as_str)) {
            Some(meant) => format!("`{glob}` (did you mean `{meant}`?)"),
            None => format!("`{glob}`"),
        };
        if !entries.contains(&entry) {
            entries.push(entry);
        }
        // The server a qualified entry names, when it names one outright.
        let server = match pattern.naming() {
            ToolNaming::Qualified => glob.split_once("__").map(|(server, _)| server),
            ToolNaming::OpenCode => None,
        };
        if let Some(server) = server.filter(|s| !s.is_empty() && !s.contains('*'))
            && !definition.mcp_servers.contains_key(server)
            && server != BuiltinServer::Workspace.name()
            && !missing_servers.contains(&server)
        {
            missing_servers.push(server);
        }
    }
    let mut note = format!(
        "the tool allow list leaves this agent with no tools at all: {} name{} no tool it has",
        entries.join(", "),
        if entries.len() == 1 { "s" } else { "" }
    );
    let mut why: Vec<String> = Vec::new();
    if !missing_servers.is_empty() {
        let names: Vec<String> = missing_servers.iter().map(|s| format!("`{s}`")).collect();
        why.push(format!(
            "the file configures no child server named {} (the MCP servers of the client \
             that runs the file are not this agent's)",
            names.join(" or ")
        ));
    }
    if !could.is_empty() {
        let more = could.len().saturating_sub(TOOLS_SHOWN);
        could.truncate(TOOLS_SHOWN);
        let mut have = format!("it could have {}", could.join(", "));
        if more > 0 {
            have.push_str(&format!(" and {more} more"));
        }
        why.push(have);
    }
    if !why.is_empty() {
        note.push_str(&format!(": {}", why.join("; ")));
    }
    Some(note)
}

/// A named model that the provider will likely not know: one of the other provider's family
/// (`gpt-5.4` sent to `anthropic`), or for `anthropic` neither a Claude model id nor a Claude
/// Code alias (`sonet`). Behind a gateway (an endpoint that is not the provider's own), the
/// name may be the gateway's, so the note says so.
fn model_note(definition: &AgentDefinition) -> Option<String> {
    if definition.model.origin != ModelOrigin::Explicit {
        return None;
    }
    let id = definition.model.id.as_str();
    let provider = &definition.provider;
    let family = ProviderKind::of_model(id);
    let claude_file = definition.source.format == Format::Claude;
    let aliases = || CLAUDE_ALIASES.iter().map(|(alias, _, _)| *alias);
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
        (ProviderKind::Anthropic, None) if claude_file => {
            let guess = closest(id, aliases())
                .map(|alias| format!("; did you mean `{alias}`?"))
                .unwrap_or_default();
            format!(
                "`model: {id}` is neither one of Claude Code's aliases ({}) nor a Claude \
                 model id (`claude-…`), so it goes to the Anthropic API as written{guess}",
                aliases().collect::<Vec<_>>().join(", ")
            )
        }
        (ProviderKind::Anthropic, None) => {
            let alias = CLAUDE_ALIASES.iter().find(|(alias, _, _)| *alias == id);
            match alias {
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

/// The model and its provider: as named (the provider written, else the format's default),
/// or the server's default model for a definition that defers to its parent's.
fn model_and_provider(draft: &Draft, ctx: &Ctx<'_>) -> Result<(Model, ProviderKind), String> {
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

/// `temperature` and the reasoning effort against what the wire API takes.
fn check_sampling(
    temperature: Option<f64>,
    effort: Option<ReasoningEffort>,
    wire: WireApi,
) -> Result<(), String> {
    if let Some(t) = temperature {
        let max = match wire {
            WireApi::Responses | WireApi::ChatCompletions => 2.0,
            WireApi::AnthropicMessages => 1.0,
        };
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
    // What the SDKs' types allow: `openai` `Reasoning.effort` and Chat Completions'
    // `reasoning_effort` (both `ReasoningEffort`), `anthropic` `OutputConfigParam.effort`
    // (SPEC §6.1).
    let accepted: &[ReasoningEffort] = match wire {
        WireApi::Responses | WireApi::ChatCompletions => &[
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
            wire.as_str(),
            names.join(", ")
        ));
    }
    // Effort on Messages turns adaptive thinking on, and the API takes no temperature
    // but 1 with thinking ("temperature may only be set to 1 when thinking is enabled").
    if wire == WireApi::AnthropicMessages && temperature.is_some_and(|t| t != 1.0) {
        return Err(
            "`temperature` cannot be combined with a reasoning effort on the \
             anthropic-messages API: the effort turns thinking on, and with thinking the \
             API takes only temperature 1; remove one of the two"
                .to_owned(),
        );
    }
    Ok(())
}

/// The provider fields as a file wrote them.
struct ProviderFields {
    base_url: Option<String>,
    env_key: Option<String>,
    wire_api: Option<String>,
    auth: Option<String>,
}

/// Fills provider defaults and checks the fields (SPEC §3.2). A built-in provider without
/// a `base_url` takes the server's `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` when set.
fn provider_config(
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
    let from_env = kind.base_url_var().and_then(|var| {
        let value = options.env.get(var).filter(|v| !v.trim().is_empty())?;
        Some((var, value))
    });
    let (base_url, base_url_source) = match (base_url, from_env) {
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
            check_endpoint(
                default_url.unwrap_or_default(),
                EndpointUse::ProviderBaseUrl,
            )
            .map_err(|e| format!("`base_url` {e}"))?,
            EndpointSource::BuiltIn,
        ),
    };
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
        None => default_wire.unwrap_or(WireApi::Responses),
        Some(w) => WireApi::parse(w).ok_or_else(|| {
            format!(
                "`wire_api` is {w:?}; use `responses`, `anthropic-messages` or \
                 `chat-completions` (alias `chat`)"
            )
        })?,
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
