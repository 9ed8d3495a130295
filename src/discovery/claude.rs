//! Claude Code subagents (FORMATS.md §2): `.claude/agents/**/*.md`.

use super::field_names as fields;
use serde_json::Value;

use super::aliases::{is_claude_code_mode, resolve_alias};
use super::build::finalize;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, Spellings, read_common};
use super::fields::{Doc, string_list};
use super::source::{parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::{
    add_allow_list, every_tool_of, grant_workspace, qualified_patterns, workspace_pattern,
};
use super::vocabulary::{ToolMeaning, ToolName, Tools, Vocabulary};
use crate::definition::{
    Format, Model, ModelOrigin, ProviderKind, Sandbox, SourceFile, ToolPattern,
};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".claude/agents"],
    subfolders: Subfolders::Searched,
    skipped_prefix: None,
    files: &[FileSpec {
        extension: "md",
        format: Format::Claude,
        syntax: Syntax::Frontmatter,
        agent_name: AgentName::Field,
        fields: fields::CLAUDE,
        parse,
    }],
    tools: Tools::Client(&TOOLS),
    models: ModelNames::ClaudeAliases,
};

/// Claude Code's file tools that the built-in workspace server provides (SPEC §8.6): the
/// Claude name and the workspace tool's. `MultiEdit` (several replacements in one call) is
/// `edit` called once per replacement. Any other name is a Claude Code tool that does not
/// exist here.
pub(super) const TOOLS: Vocabulary = Vocabulary {
    client: "Claude Code's tools",
    names: &[
        ToolName::own("Read", &["read"]),
        ToolName::own("Grep", &["grep"]),
        ToolName::own("Glob", &["glob"]),
        ToolName::own("LS", &["list"]),
        ToolName::own("Edit", &["edit"]),
        ToolName::variant("MultiEdit", &["edit"]),
        ToolName::own("Write", &["write"]),
        // Claude Code's tool that asks the user (code.claude.com/docs/en/settings, "Tools
        // available to Claude"): here the question to the parent (SPEC §4.5).
        ToolName::asks("AskUserQuestion"),
    ],
    any_case: false,
    groups: false,
    own_servers_only: false,
};

const SPELLINGS: Spellings = Spellings {
    reasoning_effort: fields::CLAUDE_EFFORT,
    ..CANONICAL_SPELLINGS
};

fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    if doc.has("hooks") {
        return Err(HOOKS_REFUSED.to_owned());
    }
    let mut draft = Draft {
        name: doc.string(fields::NAME)?,
        description: doc.string(fields::DESCRIPTION)?,
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write the system prompt after the \
                            frontmatter",
        default_provider: Some(ProviderKind::Anthropic),
        model: model_choice(doc.string(fields::MODEL)?, ctx)?,
        ..Draft::default()
    };
    read_common(doc, &mut draft, &SPELLINGS, ctx)?;
    if let Some((field, mode)) = doc.str(fields::PERMISSION_MODE)? {
        match mode {
            "plan" => draft.sandbox = Sandbox::ReadOnly,
            "default" | "manual" | "acceptEdits" | "auto" | "dontAsk" | "bypassPermissions" => {}
            other => ctx.caveats.push(format!(
                "`{field}` {other:?} is unknown and ignored (this runtime never prompts)"
            )),
        }
    }
    for field in ["memory", "background", "initialPrompt"] {
        if doc.has(field) {
            ctx.caveats.push(format!(
                "`{field}` is ignored: this runtime has no equivalent"
            ));
        }
    }
    read_tools(doc, &mut draft, ctx)?;
    finalize(draft, source, ctx)
}

/// Why a file with `hooks` is refused (Claude Code's and VS Code Copilot's per-agent hooks).
pub(super) const HOOKS_REFUSED: &str = "`hooks` is not supported: hooks enforce policy that \
    this runtime does not run, so the agent would act without it";

/// `inherit` or no model: the parent's; an alias: resolved; anything else: a model id.
fn model_choice(model: Option<String>, ctx: &Ctx<'_>) -> Result<ModelChoice, String> {
    let Some(model) = model.map(|m| m.trim().to_owned()) else {
        return Ok(ModelChoice::Parent);
    };
    if model.is_empty() || model == "inherit" {
        return Ok(ModelChoice::Parent);
    }
    if let Some(resolved) = resolve_alias(&model, &ctx.options.env) {
        let resolved = resolved?;
        return Ok(ModelChoice::Named(Model {
            id: resolved.id,
            origin: ModelOrigin::ClaudeAlias {
                alias: resolved.alias.to_owned(),
                env: resolved.env.map(str::to_owned),
            },
        }));
    }
    if is_claude_code_mode(&model) {
        return Err(format!(
            "`model: {model}` is a Claude Code setting this runtime cannot reproduce; name a \
             model id or one of sonnet, opus, haiku, fable"
        ));
    }
    Ok(ModelChoice::Named(Model {
        id: model,
        origin: ModelOrigin::Explicit,
    }))
}

/// What one `tools` or `disallowedTools` entry names.
enum Entry {
    /// Child tools (`mcp__server__tool` and the qualified forms), or `*`. `mcp__*`, every
    /// MCP tool in Claude Code, is every tool of the file's own servers: Claude Code's file
    /// tools are not MCP tools there, so it does not reach the workspace server.
    Child(Vec<ToolPattern>),
    /// Workspace tools (`Read`).
    Workspace(&'static [&'static str]),
    /// Workspace tools limited to some paths (`Read(./src/**)`), which cannot be honoured
    /// as written.
    ScopedWorkspace(&'static [&'static str]),
    /// `AskUserQuestion`: the agent may ask its parent (SPEC §4.5).
    Ask,
    /// Anything else: a Claude Code tool that does not exist here (`Bash`, `Bash(git:*)`).
    Missing,
}

fn entry(text: &str, own_servers: &[String]) -> Entry {
    let (name, scoped) = match text.split_once('(') {
        Some((name, _)) => (name.trim(), true),
        None => (text.trim(), false),
    };
    match TOOLS.meaning(name) {
        Some(ToolMeaning::Workspace(tools)) if scoped => return Entry::ScopedWorkspace(tools),
        Some(ToolMeaning::Workspace(tools)) => return Entry::Workspace(tools),
        Some(ToolMeaning::AskParent) => return Entry::Ask,
        Some(ToolMeaning::RunsWithout) => return Entry::Missing,
        None => {}
    }
    if text.trim() == "mcp__*" {
        return Entry::Child(every_tool_of(own_servers));
    }
    match qualified_patterns(&[text.to_owned()]).0.pop() {
        Some(pattern) => Entry::Child(vec![pattern]),
        None => Entry::Missing,
    }
}

/// `tools` / `disallowedTools`: a comma string, a list, or (seen in the wild) a
/// `{Name: true|false}` map. Read, Grep, Glob, LS, Edit, MultiEdit and Write are the
/// workspace server's tools: the
/// agent gets the server when `tools` is absent (all tools, in Claude Code), is a map that
/// only switches tools off, or names one of them. `AskUserQuestion` listed lets the agent
/// ask its parent (SPEC §4.5); denied, it does not. Other Claude Code tools do not exist
/// here: asked for, they are listed in one warning; denied, they are honoured by their
/// absence.
pub(super) fn read_tools(doc: Doc<'_>, draft: &mut Draft, ctx: &mut Ctx<'_>) -> Result<(), String> {
    let own_servers: Vec<String> = draft.mcp_servers.keys().cloned().collect();
    let mut workspace = true;
    if let Some((field, value)) = doc.find(fields::TOOLS)? {
        let (allowed, switched_on, switched_off) = entries(field, value)?;
        if let Some(allowed) = allowed {
            workspace = false;
            let mut patterns = Vec::new();
            for text in allowed {
                match entry(&text, &own_servers) {
                    Entry::Child(child) => {
                        workspace |= child.iter().any(|p| p.glob() == "*");
                        patterns.extend(child);
                    }
                    Entry::Workspace(tools) => {
                        workspace = true;
                        patterns.extend(tools.iter().map(|tool| workspace_pattern(tool)));
                    }
                    Entry::ScopedWorkspace(_) => ctx.caveats.push(format!(
                        "`{field}` entry `{text}` gives nothing: this runtime cannot limit a \
                         tool to some paths; list `{}` to give it for the whole workspace",
                        text.split('(').next().unwrap_or(&text).trim()
                    )),
                    Entry::Ask => draft.ask.named(true),
                    Entry::Missing => draft.unknown_tools.push(text),
                }
            }
            add_allow_list(draft, patterns);
        }
        for text in switched_on {
            match entry(&text, &own_servers) {
                Entry::Missing => draft.unknown_tools.push(text),
                Entry::Ask => draft.ask.named(true),
                _ => {}
            }
        }
        for text in switched_off {
            deny(draft, field, entry(&text, &own_servers), &text, ctx);
        }
    }
    if let Some((field, value)) = doc.find(fields::DISALLOWED_TOOLS)? {
        for text in deny_entries(field, value)? {
            deny(draft, field, entry(&text, &own_servers), &text, ctx);
        }
    }
    if workspace {
        grant_workspace(draft);
    }
    Ok(())
}

/// Denies what `text` names. A path-limited workspace entry (`Read(./.env)`) denies the
/// whole tool: it cannot be limited to those paths, and denying less would give more than
/// the file allows.
fn deny(draft: &mut Draft, field: &str, entry: Entry, text: &str, ctx: &mut Ctx<'_>) {
    match entry {
        Entry::Child(patterns) => draft.tools.deny.extend(patterns),
        Entry::Workspace(tools) => draft
            .tools
            .deny
            .extend(tools.iter().map(|tool| workspace_pattern(tool))),
        Entry::ScopedWorkspace(tools) => {
            ctx.caveats.push(format!(
                "`{field}` entry `{text}` denies `{}` altogether: this runtime cannot \
                 limit a denial to some paths",
                tools.join("`, `")
            ));
            draft
                .tools
                .deny
                .extend(tools.iter().map(|tool| workspace_pattern(tool)));
        }
        Entry::Ask => draft.ask.named(false),
        Entry::Missing => {}
    }
}

/// The entries of a deny field. A list or comma string lists them; in a `{Name: true}` map
/// `true` means "disallowed", and `false` is refused: it reads both as "not disallowed" and,
/// copied from a `tools` map, as "switched off", and a deny list must not be guessed.
fn deny_entries(field: &str, value: &Value) -> Result<Vec<String>, String> {
    let Value::Object(map) = value else {
        return string_list(field, value, true);
    };
    let mut denied = Vec::new();
    for (name, flag) in map {
        match flag {
            Value::Bool(true) => denied.push(name.clone()),
            Value::Bool(false) => {
                return Err(format!(
                    "`{field}.{name}: false` is ambiguous in a deny list (denied, or not?); \
                     list the tools to deny, or set them to true"
                ));
            }
            _ => return Err(format!("`{field}.{name}` must be true or false")),
        }
    }
    Ok(denied)
}

/// The entries of a tools field: `(listed, switched on, switched off)`. A list or comma
/// string gives `listed`; a `{Name: true|false}` map gives the names set to true and false.
#[allow(clippy::type_complexity)]
fn entries(
    field: &str,
    value: &Value,
) -> Result<(Option<Vec<String>>, Vec<String>, Vec<String>), String> {
    match value {
        Value::Object(map) => {
            let (mut on, mut off) = (Vec::new(), Vec::new());
            for (name, flag) in map {
                match flag {
                    Value::Bool(true) => on.push(name.clone()),
                    Value::Bool(false) => off.push(name.clone()),
                    _ => return Err(format!("`{field}.{name}` must be true or false")),
                }
            }
            Ok((None, on, off))
        }
        other => Ok((
            Some(string_list(field, other, true)?),
            Vec::new(),
            Vec::new(),
        )),
    }
}
