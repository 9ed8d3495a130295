//! GitHub Copilot custom agents (docs/agents.md, "GitHub Copilot files"):
//! `.github/agents/**/*.md`, as `.agent.md` or `.md`, the agent profiles the Copilot CLI,
//! its cloud agent and VS Code read. The agent's name is its file name, as the CLI and the
//! cloud agent identify agents; `name` is a display name.

use std::path::Path;

use serde_json::Value;

use super::build::finalize;
use super::claude::HOOKS_REFUSED;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, Spellings, read_common};
use super::fallbacks::listed_fallback;
use super::field_names as fields;
use super::fields::{Doc, wrong_type};
use super::model_table::{choose_model, translate};
use super::servers::COPILOT;
use super::source::{describe_type, parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::{MappedTool, read_mapped_tools};
use super::vocabulary::{ToolMeaning, ToolName, Tools, Vocabulary};
use crate::definition::{Format, ReasoningEffort, SourceFile, ToolNaming, ToolPattern, check_name};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".github/agents"],
    subfolders: Subfolders::Searched,
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
/// Copilot CLI's tools that ask the user (`ask_parent` here); VS Code's
/// `codebase` (its semantic search, which gives the model the code it finds: the reading
/// tools here), `usages` (references to a symbol: `grep`) and `findTestFiles` (`glob`).
/// Every other tool of VS Code's and GitHub's tables (`execute` and the terminal tools,
/// `web`, `todo`, `agent`, `problems`, notebooks, the cloud agent's `github/*`) does not exist
/// here, unless it is `server/tool` of a server the file defines.
///
/// Sources, checked name by name in the tests below: VS Code's "Tools and context reference"
/// (<https://code.visualstudio.com/docs/agents/reference/tools-reference>, microsoft/vscode-docs
/// `docs/agents/reference/tools-reference.md` @4f4413d9), GitHub's "Custom agents
/// configuration" aliases (<https://docs.github.com/en/copilot/reference/custom-agents-configuration>),
/// and the older un-namespaced names common in github/awesome-copilot's agents
/// (@ab7544d0: `codebase`, `usages`, `findTestFiles`, `runCommands`, …).
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
        // VS Code's semantic search hands the model the code it finds: reading it here is
        // `read` with the search tools to find it.
        ToolName::alias("search/codebase", READING),
        ToolName::alias("codebase", READING),
        ToolName::alias("search/usages", &["grep"]),
        ToolName::alias("usages", &["grep"]),
        ToolName::alias("findtestfiles", &["glob"]),
        // Copilot's `edit` alias covers Edit, MultiEdit and Write; VS Code's edit tools.
        ToolName::own("edit", EDIT),
        ToolName::alias("multiedit", EDIT),
        ToolName::alias("write", EDIT),
        ToolName::alias("edit/editfiles", EDIT),
        ToolName::alias("editfiles", EDIT),
        ToolName::alias("edit/createfile", &["write"]),
        ToolName::alias("createfile", &["write"]),
        // No equivalent here: commands and the terminal, the web, the editor's own state
        // (problems, source control changes, selections), notebooks, delegation, to-dos.
        ToolName::missing("execute"),
        ToolName::missing("shell"),
        ToolName::missing("bash"),
        ToolName::missing("powershell"),
        ToolName::missing("execute/runinterminal"),
        ToolName::missing("runinterminal"),
        ToolName::missing("execute/getterminaloutput"),
        ToolName::missing("getterminaloutput"),
        ToolName::missing("execute/createandruntask"),
        ToolName::missing("execute/runnotebookcell"),
        ToolName::missing("execute/testfailure"),
        ToolName::missing("testfailure"),
        ToolName::missing("runcommands"),
        ToolName::missing("runtasks"),
        ToolName::missing("runtests"),
        ToolName::missing("runnotebooks"),
        ToolName::missing("read/terminallastcommand"),
        ToolName::missing("terminallastcommand"),
        ToolName::missing("read/terminalselection"),
        ToolName::missing("terminalselection"),
        ToolName::missing("read/problems"),
        ToolName::missing("problems"),
        ToolName::missing("read/getnotebooksummary"),
        ToolName::missing("read/readnotebookcelloutput"),
        ToolName::missing("readcelloutput"),
        ToolName::missing("edit/editnotebook"),
        ToolName::missing("edit/createdirectory"),
        ToolName::missing("search/changes"),
        ToolName::missing("changes"),
        ToolName::missing("searchresults"),
        ToolName::missing("web"),
        ToolName::missing("web/fetch"),
        ToolName::missing("fetch"),
        ToolName::missing("websearch"),
        ToolName::missing("webfetch"),
        ToolName::missing("githubrepo"),
        ToolName::missing("githubtextsearch"),
        ToolName::missing("browser"),
        ToolName::missing("opensimplebrowser"),
        ToolName::missing("agent"),
        ToolName::missing("agent/runsubagent"),
        ToolName::missing("runsubagent"),
        ToolName::missing("custom-agent"),
        ToolName::missing("task"),
        ToolName::missing("todo"),
        ToolName::missing("todos"),
        ToolName::missing("todowrite"),
        ToolName::missing("newworkspace"),
        ToolName::missing("new"),
        ToolName::missing("selection"),
        ToolName::missing("extensions"),
        ToolName::missing("vscodeapi"),
        ToolName::missing("vscode/extensions"),
        ToolName::missing("vscode/getprojectsetupinfo"),
        ToolName::missing("vscode/installextension"),
        ToolName::missing("vscode/runcommand"),
        ToolName::missing("vscode/vscodeapi"),
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
/// Every tool that reads the workspace.
const READING: &[&str] = &["read", "grep", "glob", "list"];
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
#[derive(Clone, Copy)]
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
    // The later entries are the models to fall back to (SPEC §5.1), before any the file's
    // `fallback_models` names.
    let (usable, unusable): (Vec<_>, Vec<_>) = listed[chosen + 1..]
        .iter()
        .map(|m| (m, listed_fallback(field, m.name, draft, ctx)))
        .partition(|(_, fallback)| fallback.is_some());
    let unusable: Vec<ListedModel<'_>> = unusable.into_iter().map(|(m, _)| *m).collect();
    draft.fallback_models.splice(
        0..0,
        usable.into_iter().filter_map(|(_, fallback)| fallback),
    );
    if listed.len() > 1 {
        let note = list_note(field, &listed, chosen, &choice, draft, &unusable);
        ctx.caveats.push(note);
    }
    Ok(choice)
}

/// The caveat on a list of models: which one runs (`chosen`), which were skipped, that the
/// later ones are fallbacks, and which of those name no model this runtime can send
/// (`unusable`).
fn list_note(
    field: &str,
    listed: &[ListedModel<'_>],
    chosen: usize,
    choice: &ModelChoice,
    draft: &Draft,
    unusable: &[ListedModel<'_>],
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
            " and takes the later ones ({}) as its fallback_models",
            names(later)
        ));
    }
    if !unusable.is_empty() {
        note.push_str(&format!(
            "; of those, {} name no model this runtime can send and are left out",
            names(unusable)
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
    // A tool the client has but this runtime does not may still be `server/tool` of a
    // server the file defines (`web/fetch` of its own `web` server).
    match TOOLS.meaning(text.trim()) {
        Some(ToolMeaning::Workspace(tools)) => return MappedTool::Workspace(tools.to_vec()),
        Some(ToolMeaning::AskParent) => return MappedTool::AskParent,
        Some(ToolMeaning::RunsWithout) | None => {}
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

    /// The documented names an agent runs without: VS Code's, GitHub's aliases and
    /// awesome-copilot's older names.
    const RUNS_WITHOUT: &[&str] = &[
        "read/problems",
        "read/getNotebookSummary",
        "read/readNotebookCellOutput",
        "read/terminalLastCommand",
        "read/terminalSelection",
        "search/changes",
        "edit/createDirectory",
        "edit/editNotebook",
        "execute",
        "execute/createAndRunTask",
        "execute/getTerminalOutput",
        "execute/runInTerminal",
        "execute/runNotebookCell",
        "execute/testFailure",
        "browser",
        "web",
        "web/fetch",
        "githubRepo",
        "githubTextSearch",
        "agent",
        "agent/runSubagent",
        "todos",
        "newWorkspace",
        "vscode/extensions",
        "vscode/getProjectSetupInfo",
        "vscode/installExtension",
        "vscode/runCommand",
        "vscode/VSCodeAPI",
        // GitHub's aliases.
        "shell",
        "Bash",
        "powershell",
        "custom-agent",
        "Task",
        "WebSearch",
        "WebFetch",
        "todo",
        "TodoWrite",
        // awesome-copilot's older names.
        "runCommands",
        "runTasks",
        "runTests",
        "runNotebooks",
        "runInTerminal",
        "getTerminalOutput",
        "terminalLastCommand",
        "terminalSelection",
        "testFailure",
        "problems",
        "changes",
        "searchResults",
        "fetch",
        "openSimpleBrowser",
        "new",
        "extensions",
        "vscodeAPI",
        "readCellOutput",
    ];

    /// Every tool and tool set of VS Code's "Tools and context reference" (the tables of
    /// microsoft/vscode-docs `docs/agents/reference/tools-reference.md` @4f4413d9), GitHub's
    /// aliases, and the older names of github/awesome-copilot's agents: each is read, either
    /// as workspace tools or as a tool the agent runs without; none is left to chance.
    #[test]
    fn every_documented_tool_name_has_a_meaning_here() {
        const READING_TOOLS: &[&str] = &["read", "grep", "glob", "list"];
        let workspace: &[(&str, &[&str])] = &[
            ("read", &["read"]),
            ("read/readFile", &["read"]),
            ("search", &["grep", "glob", "list"]),
            ("search/codebase", READING_TOOLS),
            ("search/fileSearch", &["glob"]),
            ("search/listDirectory", &["list"]),
            ("search/textSearch", &["grep"]),
            ("search/usages", &["grep"]),
            ("edit", &["edit", "write"]),
            ("edit/createFile", &["write"]),
            ("edit/editFiles", &["edit", "write"]),
            // awesome-copilot's older names.
            ("codebase", READING_TOOLS),
            ("usages", &["grep"]),
            ("findTestFiles", &["glob"]),
            ("editFiles", &["edit", "write"]),
            ("Read", &["read"]),
            ("Grep", &["grep", "glob", "list"]),
            ("MultiEdit", &["edit", "write"]),
        ];
        for (name, tools) in workspace {
            assert_eq!(
                TOOLS.meaning(name),
                Some(ToolMeaning::Workspace(tools)),
                "{name}"
            );
        }
        for name in RUNS_WITHOUT {
            assert_eq!(
                TOOLS.meaning(name),
                Some(ToolMeaning::RunsWithout),
                "{name}"
            );
        }
        // The tools that ask the user are the question to the parent (SPEC §4.5).
        for name in ["vscode/askQuestions", "askQuestions", "ask_user"] {
            assert_eq!(TOOLS.meaning(name), Some(ToolMeaning::AskParent), "{name}");
        }
        // Still one of the file's own servers' tools when the file defines that server.
        assert!(matches!(
            entry("web/fetch", &["web".to_owned()]),
            MappedTool::Child(_)
        ));
        assert!(matches!(entry("web/fetch", &[]), MappedTool::Missing));
    }

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
        ] {
            assert!(
                matches!(entry(missing, &own), MappedTool::Missing),
                "{missing}"
            );
        }
    }
}
