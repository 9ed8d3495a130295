//! GitHub Copilot custom agents (docs/agents.md, "GitHub Copilot files"):
//! `.github/agents/**/*.md`, as `.agent.md` or `.md`, the agent profiles the Copilot CLI,
//! its cloud agent and VS Code read. The agent's name is its file name, as the CLI and the
//! cloud agent identify agents; `name` is a display name.

use std::path::Path;

use serde_json::Value;

use super::build::finalize;
use super::claude::HOOKS_REFUSED;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, Spellings, read_common};
use super::field_names as fields;
use super::fields::{Doc, wrong_type};
use super::model_table::{choose_model, translate};
use super::servers::COPILOT;
use super::source::{describe_type, parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Syntax};
use super::tool_lists::{MappedTool, read_mapped_tools};
use super::vocabulary::{ToolMeaning, ToolName, Tools, Vocabulary};
use crate::definition::{Format, ReasoningEffort, SourceFile, ToolNaming, ToolPattern, check_name};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".github/agents"],
    recursive: true,
    skipped_prefix: None,
    files: &[FileSpec {
        extension: "md",
        format: Format::Copilot,
        syntax: Syntax::Frontmatter,
        agent_name: AgentName::Path(name_from_file),
        fields: fields::COPILOT,
        parse,
    }],
    tools: Tools::Client(&TOOLS),
    models: ModelNames::Table,
};

/// Copilot's aliases and VS Code's tool names, compared without case: `read`; `search` and
/// its aliases `Grep`, `Glob` (`grep`, `glob` and `list`); `edit` and `Edit`, `MultiEdit`,
/// `Write` (`edit` and `write`); VS Code's single search and edit tools; VS Code's and the
/// Copilot CLI's tools that ask the user (`ask_parent` here). Any other name
/// (`execute`, `web`, `todo`, `agent`, VS Code's `codebase`, the cloud agent's `github/*`)
/// does not exist here, unless it is `server/tool` of a server the file defines.
const TOOLS: Vocabulary = Vocabulary {
    client: "Copilot's tools",
    names: &[
        ToolName::own("read", READ),
        ToolName::alias("notebookread", READ),
        ToolName::alias("view", READ),
        ToolName::alias("read/readfile", READ),
        ToolName::alias("readfile", READ),
        ToolName::own("search", SEARCH),
        ToolName::alias("grep", SEARCH),
        ToolName::alias("glob", SEARCH),
        ToolName::alias("search/textsearch", &["grep"]),
        ToolName::alias("textsearch", &["grep"]),
        ToolName::alias("search/filesearch", &["glob"]),
        ToolName::alias("filesearch", &["glob"]),
        ToolName::alias("search/listdirectory", &["list"]),
        ToolName::alias("listdirectory", &["list"]),
        // Copilot's `edit` alias covers Edit, MultiEdit and Write; VS Code's edit tools.
        ToolName::own("edit", EDIT),
        ToolName::alias("multiedit", EDIT),
        ToolName::alias("write", EDIT),
        ToolName::alias("edit/editfiles", EDIT),
        ToolName::alias("editfiles", EDIT),
        ToolName::alias("edit/createfile", &["write"]),
        ToolName::alias("createfile", &["write"]),
        // The tools that ask the user, here the question to the parent (SPEC §4.5): VS
        // Code's `vscode/askQuestions` (code.visualstudio.com/docs/agents/reference/
        // tools-reference, the `vscode` tool set) and the Copilot CLI's `ask_user`
        // (github/awesome-copilot, skills/cli-mastery). The cloud agent has none.
        ToolName::asks("vscode/askquestions"),
        ToolName::asks("askquestions"),
        ToolName::asks("ask_user"),
    ],
    any_case: true,
    groups: true,
    own_servers_only: true,
};

const READ: &[&str] = &["read"];
const SEARCH: &[&str] = &["grep", "glob", "list"];
const EDIT: &[&str] = &["edit", "write"];

const SPELLINGS: Spellings = Spellings {
    mcp_servers: fields::COPILOT_MCP_SERVERS,
    servers: &COPILOT,
    ..CANONICAL_SPELLINGS
};

fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let rel_in_root = ctx.rel_in_root;
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    if doc.find(fields::HOOKS)?.is_some() {
        return Err(HOOKS_REFUSED.to_owned());
    }
    let name = name_from_file(rel_in_root);
    check_name(&name).map_err(|e| {
        format!(
            "`name` (the file name `{}`, which names Copilot agents): {e}",
            file_name(rel_in_root)
        )
    })?;
    // `name` is only what Copilot shows (`Triage Agent`); it must still be text.
    doc.string(fields::NAME)?;
    let mut draft = Draft {
        name: Some(name),
        description: doc.string(fields::DESCRIPTION)?,
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write the agent's prompt after the \
                            frontmatter",
        ..Draft::default()
    };
    read_common(doc, &mut draft, &SPELLINGS, ctx)?;
    draft.model = read_model(doc, &mut draft, ctx)?;
    if let Some((field, policy)) = doc.str(fields::MODEL_POLICY)?
        && !matches!(policy, "preferred" | "required")
    {
        // Either value holds here: a model is never swapped for another.
        return Err(format!(
            "`{field}` is {policy:?}; use preferred or required"
        ));
    }
    draft.hand_only = hand_only(doc)?;
    if let Some(setting) = draft.hand_only {
        ctx.caveats.push(format!(
            "not offered to the parent model: `{setting}` says a model must not pick this \
             agent; a person can still run it with `mcp-agents run`"
        ));
    }
    if doc.bool(fields::INCLUDE_CUSTOM_INSTRUCTIONS)? == Some(true) {
        ctx.caveats.push(
            "`include-custom-instructions` is ignored: a subagent here gets only its own \
             instructions"
                .to_owned(),
        );
    }
    if doc.find(fields::SIDEKICK)?.is_some() {
        ctx.caveats
            .push("`sidekick` is ignored: the agent runs only when it is spawned".to_owned());
    }
    // `disallowed_tools` (the canonical extension) takes the same names.
    read_mapped_tools(doc, &mut draft, entry)?;
    finalize(draft, source, ctx)
}

/// The file name without `.agent.md` (or `.md`), lower-cased; folders add nothing.
fn name_from_file(rel_in_root: &Path) -> String {
    let file = file_name(rel_in_root);
    let stem = file
        .strip_suffix(".agent.md")
        .or_else(|| file.strip_suffix(".md"))
        .unwrap_or(&file);
    stem.to_lowercase()
}

fn file_name(rel_in_root: &Path) -> String {
    rel_in_root
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `disable-model-invocation: true`, or the older `infer: false` when the first is absent.
fn hand_only(doc: Doc<'_>) -> Result<Option<&'static str>, String> {
    let disabled = doc.bool(fields::DISABLE_MODEL_INVOCATION)?;
    let infer = doc.bool(fields::INFER)?;
    Ok(match (disabled, infer) {
        (Some(true), _) => Some("disable-model-invocation: true"),
        (None, Some(false)) => Some("infer: false"),
        _ => None,
    })
}

/// One entry of a model list: a name, or `{name, reasoning-effort, context-size}`.
struct ListedModel<'a> {
    name: &'a str,
    effort: Option<&'a str>,
    context_size: bool,
}

fn listed_model<'a>(field: &str, value: &'a Value) -> Result<ListedModel<'a>, String> {
    match value {
        Value::String(name) => Ok(ListedModel {
            name,
            effort: None,
            context_size: false,
        }),
        Value::Object(map) => {
            let entry = Doc::new(map);
            let name = entry
                .str(fields::MODEL_ENTRY_NAME)
                .map_err(|e| format!("`{field}`: {e}"))?
                .ok_or_else(|| format!("`{field}` has an entry without a `name`"))?
                .1;
            let effort = entry
                .str(fields::MODEL_ENTRY_EFFORT)
                .map_err(|e| format!("`{field}`: {e}"))?
                .map(|(_, e)| e);
            Ok(ListedModel {
                name,
                effort,
                context_size: entry.find(fields::MODEL_ENTRY_CONTEXT_SIZE)?.is_some(),
            })
        }
        other => Err(format!(
            "`{field}` entries must be model names or `{{name: …}}` mappings, not {}",
            describe_type(other)
        )),
    }
}

/// `models` (the CLI's, which wins) or `model`: a name, or a list in order of preference.
/// The first entry this runtime can run is used; as nothing here falls back to another
/// model at run time, the rest are named in a caveat.
fn read_model(doc: Doc<'_>, draft: &mut Draft, ctx: &mut Ctx<'_>) -> Result<ModelChoice, String> {
    let found = match doc.find(fields::COPILOT_MODELS)? {
        Some(found) => Some(found),
        None => doc.find(fields::MODEL)?,
    };
    let Some((field, value)) = found else {
        return Ok(ModelChoice::Parent);
    };
    let items = match value {
        Value::String(name) => return choose_model(field, Some(name), draft, ctx),
        Value::Array(items) => items,
        other => {
            return Err(wrong_type(field, "a model name or a list of them", other));
        }
    };
    let listed = items
        .iter()
        .map(|item| listed_model(field, item))
        .collect::<Result<Vec<_>, _>>()?;
    let runnable =
        |m: &ListedModel<'_>| draft.provider.is_some() || translate(field, m.name).is_ok();
    let Some(chosen) = listed.iter().position(runnable) else {
        let first = listed
            .first()
            .ok_or_else(|| format!("`{field}` lists no model"))?;
        let why = translate(field, first.name).err().unwrap_or_default();
        return Err(if listed.len() == 1 {
            why
        } else {
            format!(
                "`{field}` lists no model this runtime can run ({}); the first: {why}",
                names(&listed)
            )
        });
    };
    let entry = &listed[chosen];
    let choice = choose_model(field, Some(entry.name), draft, ctx)?;
    if let Some(effort) = entry.effort
        && draft.reasoning_effort.is_none()
    {
        draft.reasoning_effort = Some(ReasoningEffort::parse(effort).ok_or_else(|| {
            format!(
                "`{field}` entry `{}` has `reasoning-effort: {effort}`; use none, minimal, \
                 low, medium, high, xhigh or max",
                entry.name
            )
        })?);
    }
    if entry.context_size {
        ctx.caveats.push(format!(
            "`{field}` entry `{}`: `context-size` is ignored: this runtime asks for the \
             model's own context",
            entry.name
        ));
    }
    if listed.len() > 1 {
        ctx.caveats
            .push(list_note(field, &listed, chosen, &choice, draft));
    }
    Ok(choice)
}

/// The caveat on a list of models: which one runs (`chosen`), which were skipped, and that
/// nothing falls back to the later ones.
fn list_note(
    field: &str,
    listed: &[ListedModel<'_>],
    chosen: usize,
    choice: &ModelChoice,
    draft: &Draft,
) -> String {
    let runs = match choice {
        ModelChoice::Named(model) => {
            let provider = draft
                .provider
                .clone()
                .or(draft.default_provider.map(|p| p.as_str().to_owned()))
                .unwrap_or_default();
            format!("{provider} {}", model.id)
        }
        _ => "the server's default model".to_owned(),
    };
    let skipped = &listed[..chosen];
    let later = &listed[chosen + 1..];
    let mut note = format!(
        "`{field}` lists {} models; this runtime runs `{}` ({runs})",
        listed.len(),
        listed[chosen].name
    );
    if !skipped.is_empty() {
        note.push_str(&format!(
            ", skipping {} (no provider here serves them)",
            names(skipped)
        ));
    }
    if !later.is_empty() {
        note.push_str(&format!(
            " and never falls back to the others ({})",
            names(later)
        ));
    }
    note
}

fn names(listed: &[ListedModel<'_>]) -> String {
    listed.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// What one `tools` entry names: workspace tools ([`TOOLS`]), a tool of a server this file
/// defines (`server/tool`, `server/*`), or anything else, which does not exist here.
fn entry(text: &str, own_servers: &[String]) -> MappedTool {
    match TOOLS.meaning(text.trim()) {
        Some(ToolMeaning::Workspace(tools)) => return MappedTool::Workspace(tools.to_vec()),
        Some(ToolMeaning::AskParent) => return MappedTool::AskParent,
        Some(ToolMeaning::RunsWithout) => return MappedTool::Missing,
        None => {}
    }
    match text.trim().split_once('/') {
        Some((server, tool)) if own_servers.iter().any(|s| s == server) => {
            MappedTool::Child(vec![ToolPattern::new(
                format!("{server}__{tool}"),
                ToolNaming::Qualified,
            )])
        }
        _ => MappedTool::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_name_is_the_agent_name() {
        for (path, name) in [
            ("reviewer.agent.md", "reviewer"),
            ("go-sdk-tool-migrator.md", "go-sdk-tool-migrator"),
            ("team/Triage.agent.md", "triage"),
            ("x.agent.agent.md", "x.agent"),
        ] {
            assert_eq!(name_from_file(Path::new(path)), name, "{path}");
        }
    }

    #[test]
    fn tool_aliases_map_onto_the_workspace_tools() {
        let own = vec!["docs".to_owned()];
        for (text, tools) in [
            ("read", &["read"][..]),
            ("Read", &["read"]),
            ("NotebookRead", &["read"]),
            ("read/readFile", &["read"]),
            ("search", &["grep", "glob", "list"]),
            ("Grep", &["grep", "glob", "list"]),
            ("search/textSearch", &["grep"]),
            ("fileSearch", &["glob"]),
            ("search/listDirectory", &["list"]),
        ] {
            match entry(text, &own) {
                MappedTool::Workspace(got) => assert_eq!(got, tools, "{text}"),
                _ => panic!("{text}"),
            }
        }
        assert!(
            matches!(entry("docs/search", &own), MappedTool::Child(p) if p[0].glob() == "docs__search")
        );
        assert!(matches!(entry("docs/*", &own), MappedTool::Child(p) if p[0].glob() == "docs__*"));
        for (text, tools) in [
            ("edit", &["edit", "write"][..]),
            ("Write", &["edit", "write"]),
            ("edit/createFile", &["write"]),
        ] {
            match entry(text, &own) {
                MappedTool::Workspace(got) => assert_eq!(got, tools, "{text}"),
                _ => panic!("{text}"),
            }
        }
        for missing in [
            "execute",
            "runTerminalCommand",
            "github/*",
            "web/fetch",
            "todo",
            "agent",
            "usages",
        ] {
            assert!(
                matches!(entry(missing, &own), MappedTool::Missing),
                "{missing}"
            );
        }
    }
}
