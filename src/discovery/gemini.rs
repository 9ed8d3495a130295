//! Gemini CLI subagents (docs/agents.md, "Gemini CLI files"): `.gemini/agents/*.md`, top
//! level only, files starting with `_` left out (both in `walk`). Local agents only: a
//! remote (Agent-to-Agent) agent is refused.

use super::build::finalize;
use super::claude::TOOLS as CLAUDE_TOOLS;
use super::draft::{CANONICAL_SPELLINGS, Draft, Spellings, budget_env_var, read_common};
use super::field_names as fields;
use super::fields::Doc;
use super::model_table::choose_model;
use super::servers::GEMINI;
use super::source::{parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::{MappedTool, every_tool_of, read_mapped_tools};
use super::vocabulary::{ToolMeaning, ToolName, Tools, Vocabulary};
use crate::definition::{Format, SourceFile, ToolNaming, ToolPattern};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".gemini/agents"],
    // The Gemini CLI reads only the files directly in its folder, and leaves out those
    // whose name starts with `_` (drafts, partials).
    subfolders: Subfolders::NotRead {
        by: "the Gemini CLI",
    },
    skipped_prefix: Some("_"),
    files: &[FileSpec {
        extension: "md",
        format: Format::Gemini,
        syntax: Syntax::Frontmatter,
        agent_name: AgentName::Field,
        fields: fields::GEMINI,
        parse,
    }],
    tools: Tools::Client(&TOOLS),
    models: ModelNames::Table,
};

/// The Gemini CLI's tool names, exactly as it spells them. Claude Code's names, as converters
/// write them into Gemini files, are read too; `ask_user` lets the agent ask its parent
/// (SPEC §4.5); any other name (`run_shell_command`,
/// `web_fetch`) does not exist here, unless it is `mcp_SERVER_TOOL` of a server the file
/// defines.
const TOOLS: Vocabulary = Vocabulary {
    client: "Gemini CLI's tools",
    names: &[
        ToolName::own("read_file", &["read"]),
        ToolName::own("read_many_files", &["read", "glob"]),
        ToolName::own("list_directory", &["list"]),
        ToolName::own("glob", &["glob"]),
        ToolName::own("grep_search", &["grep"]),
        ToolName::alias("search_file_content", &["grep"]),
        ToolName::own("replace", &["edit"]),
        ToolName::own("write_file", &["write"]),
        // The tool that asks the user (the Gemini CLI's `tools/tool-names.ts`, and its
        // plan-mode tools): here the question to the parent (SPEC §4.5).
        ToolName::asks("ask_user"),
    ],
    any_case: false,
    groups: false,
    own_servers_only: true,
};

const SPELLINGS: Spellings = Spellings {
    servers: &GEMINI,
    ..CANONICAL_SPELLINGS
};

const REMOTE: &str = "is an Agent-to-Agent (A2A) remote agent, which this runtime does not \
    support; only local agents (`kind: local`) run here";

fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = match parse_frontmatter(split.yaml) {
        Ok(frontmatter) => frontmatter,
        // A list of agents in one file is how the Gemini CLI defines several remote ones.
        Err(_) if is_list(split.yaml) => {
            return Err(format!("a frontmatter that is a list {REMOTE}"));
        }
        Err(e) => return Err(e),
    };
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    match doc.str(fields::KIND)? {
        None | Some((_, "local")) => {}
        Some((field, "remote")) => return Err(format!("`{field}: remote` {REMOTE}")),
        Some((field, other)) => {
            return Err(format!(
                "`{field}` is {other:?}; use local (remote agents are not supported)"
            ));
        }
    }
    let mut draft = Draft {
        name: doc.string(fields::NAME)?.map(|n| n.trim().to_owned()),
        description: doc.string(fields::DESCRIPTION)?,
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write the system prompt after the \
                            frontmatter",
        ..Draft::default()
    };
    read_common(doc, &mut draft, &SPELLINGS, ctx)?;
    let model = doc.str(fields::MODEL)?;
    draft.model = choose_model(
        model.map_or("model", |(field, _)| field),
        model.map(|(_, written)| written),
        &mut draft,
        ctx,
    )?;
    read_timeout(doc, &mut draft, ctx)?;
    read_mapped_tools(doc, &mut draft, entry)?;
    finalize(draft, source, ctx)
}

/// Whether a frontmatter is a YAML list: its first line that is not the opening fence,
/// blank or a comment is an item.
fn is_list(yaml: &str) -> bool {
    yaml.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#') && *line != "---")
        .is_some_and(|line| line == "-" || line.starts_with("- "))
}

/// `timeout_mins`: Gemini's time limit, this runtime's `max_run_seconds` in minutes. Above
/// the server's limit it is lowered, with a caveat that names it as written.
fn read_timeout(doc: Doc<'_>, draft: &mut Draft, ctx: &mut Ctx<'_>) -> Result<(), String> {
    let Some(minutes) = doc.integer(fields::TIMEOUT_MINS, 1..=u32::MAX / 60)? else {
        return Ok(());
    };
    if let Some((field, _)) = doc.find(fields::MAX_RUN_SECONDS)? {
        return Err(format!(
            "both `{field}` and `timeout_mins` are set; they mean the same, keep one"
        ));
    }
    let mut seconds = minutes * 60;
    if let Some(bound) = ctx.options.budget.max_run_seconds
        && seconds > bound
    {
        ctx.caveats.push(format!(
            "`timeout_mins` is {minutes} ({seconds} s), above this server's limit of {bound} s \
             (set with --max-run-seconds or {}); {bound} s is used",
            budget_env_var("max_run_seconds")
        ));
        seconds = bound;
    }
    draft.budget.max_run_seconds = Some(seconds);
    Ok(())
}

/// What one `tools` entry names: workspace tools ([`TOOLS`], else Claude Code's names), every
/// tool of the file's own servers (`mcp_*`), one of their tools (`mcp_SERVER_TOOL`), or
/// anything else, which does not exist here.
fn entry(text: &str, own_servers: &[String]) -> MappedTool {
    let meaning = TOOLS.meaning(text).or_else(|| CLAUDE_TOOLS.meaning(text));
    match meaning {
        Some(ToolMeaning::Workspace(tools)) => return MappedTool::Workspace(tools.to_vec()),
        Some(ToolMeaning::AskParent) => return MappedTool::AskParent,
        Some(ToolMeaning::RunsWithout) => return MappedTool::Missing,
        None => {}
    }
    if text == "mcp_*" && !own_servers.is_empty() {
        return MappedTool::Child(every_tool_of(own_servers));
    }
    // `mcp_SERVER_TOOL`: the server is the text up to the first `_`, as Gemini reads it.
    match text.strip_prefix("mcp_").and_then(|r| r.split_once('_')) {
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

    fn workspace(text: &str) -> Vec<&'static str> {
        match entry(text, &[]) {
            MappedTool::Workspace(tools) => tools,
            _ => panic!("{text}"),
        }
    }

    #[test]
    fn gemini_read_tools_map_onto_the_workspace_tools() {
        assert_eq!(workspace("read_file"), ["read"]);
        assert_eq!(workspace("read_many_files"), ["read", "glob"]);
        assert_eq!(workspace("list_directory"), ["list"]);
        assert_eq!(workspace("glob"), ["glob"]);
        assert_eq!(workspace("grep_search"), ["grep"]);
        assert_eq!(workspace("search_file_content"), ["grep"]);
        assert_eq!(workspace("LS"), ["list"]);
        assert_eq!(workspace("replace"), ["edit"]);
        assert_eq!(workspace("write_file"), ["write"]);
        assert_eq!(workspace("Edit"), ["edit"]);
        for missing in [
            "run_shell_command",
            "web_fetch",
            "Bash(git diff)",
            "Read(./x)",
            "mcp_*",
        ] {
            assert!(
                matches!(entry(missing, &[]), MappedTool::Missing),
                "{missing}"
            );
        }
    }

    #[test]
    fn mcp_names_select_the_files_own_servers() {
        let own = vec!["docs".to_owned()];
        let globs = |text: &str| match entry(text, &own) {
            MappedTool::Child(p) => p.iter().map(|p| p.glob().to_owned()).collect::<Vec<_>>(),
            _ => vec![],
        };
        assert_eq!(globs("mcp_*"), ["docs__*"]);
        assert_eq!(globs("mcp_docs_*"), ["docs__*"]);
        assert_eq!(globs("mcp_docs_get_page"), ["docs__get_page"]);
        assert!(matches!(
            entry("mcp_mermaid-guide_get_style", &own),
            MappedTool::Missing
        ));
    }
}
