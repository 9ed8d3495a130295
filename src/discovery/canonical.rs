//! The project's own format (FORMATS.md §1): `.agents/agents/**/*.md` (YAML frontmatter and
//! instructions in the body) and `.agents/agents/**/*.toml` (the same fields as top-level
//! keys, instructions in `instructions` or `developer_instructions`).

use super::build::finalize;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, read_common};
use super::field_names as fields;
use super::fields::Doc;
use super::source::{parse_frontmatter, parse_toml, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::read_qualified_tool_lists;
use super::vocabulary::Tools;
use crate::definition::{
    BuiltinServer, Format, Model, ModelOrigin, ProviderKind, SourceFile, ToolNaming, ToolPattern,
};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".agents/agents"],
    subfolders: Subfolders::Searched,
    skipped_prefix: None,
    files: &[
        FileSpec {
            extension: "md",
            format: Format::CanonicalMarkdown,
            syntax: Syntax::Frontmatter,
            agent_name: AgentName::Field,
            fields: &[],
            parse: parse_markdown,
        },
        FileSpec {
            extension: "toml",
            format: Format::CanonicalToml,
            syntax: Syntax::Toml,
            agent_name: AgentName::Field,
            fields: fields::CANONICAL_TOML,
            parse: parse_toml_file,
        },
    ],
    tools: Tools::Qualified,
    models: ModelNames::AsWritten,
};

const ALLOW: &[&str] = fields::TOOLS;
const DENY: &[&str] = fields::DISALLOWED_TOOLS;

fn parse_markdown(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);
    let mut draft = Draft {
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write them after the frontmatter",
        default_provider: None,
        ..Draft::default()
    };
    read_shared(doc, &mut draft, true, ctx)?;
    finalize(draft, source, ctx)
}

fn parse_toml_file(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let fields = parse_toml(text)?;
    let doc = Doc::new(&fields);
    let mut draft = Draft {
        instructions: doc.string(fields::INSTRUCTIONS)?,
        instructions_hint: "`instructions` (or `developer_instructions`) is required and must \
                            not be empty",
        default_provider: Some(ProviderKind::OpenAi),
        ..Draft::default()
    };
    read_shared(doc, &mut draft, false, ctx)?;
    finalize(draft, source, ctx)
}

/// What both kinds of file share; `comma_strings`: whether a tool list may be one string
/// of comma-separated entries (Markdown's frontmatter).
fn read_shared(
    doc: Doc<'_>,
    draft: &mut Draft,
    comma_strings: bool,
    ctx: &mut Ctx<'_>,
) -> Result<(), String> {
    draft.name = doc.string(fields::NAME)?;
    draft.description = doc.string(fields::DESCRIPTION)?;
    draft.model = match doc.string(fields::MODEL)? {
        Some(id) if !id.trim().is_empty() => ModelChoice::Named(Model {
            id: id.trim().to_owned(),
            origin: ModelOrigin::Explicit,
        }),
        Some(_) => return Err("`model` is empty".to_owned()),
        None => ModelChoice::Missing,
    };
    read_common(doc, draft, &CANONICAL_SPELLINGS, ctx)?;
    // A canonical agent gets the built-in workspace server only by naming it in
    // `mcp_servers` (SPEC §8.6), and of its tools that change files only those its `tools`
    // list names one by one: a definition written for the read tools never gains writing.
    read_qualified_tool_lists(doc, draft, ALLOW, DENY, comma_strings)?;
    let workspace = BuiltinServer::Workspace;
    for tool in workspace.tools() {
        let name = format!("{}__{tool}", workspace.name());
        let named = draft.tools.allow.iter().flatten().any(|p| p.glob() == name);
        if workspace.changes_files(tool) && !named {
            draft
                .tools
                .deny
                .push(ToolPattern::new(name, ToolNaming::Qualified));
        }
    }
    Ok(())
}
