//! Cursor subagents (docs/agents.md, "Cursor files"): `.cursor/agents/**/*.md`. Cursor's
//! own fields are few (`name`, `description`, `model`, `readonly`, `is_background`); published
//! files often add a Claude Code `tools` line, which is read the way a Claude file's is.

use std::path::Path;

use super::build::finalize;
use super::claude::{TOOLS as CLAUDE_TOOLS, read_tools};
use super::draft::{CANONICAL_SPELLINGS, Draft, read_common};
use super::field_names as fields;
use super::fields::Doc;
use super::model_table::choose_model;
use super::source::{parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::vocabulary::{Tools, Vocabulary};
use crate::definition::{Format, Sandbox, SourceFile};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".cursor/agents"],
    subfolders: Subfolders::Searched,
    skipped_prefix: None,
    files: &[FileSpec {
        extension: "md",
        format: Format::Cursor,
        syntax: Syntax::Frontmatter,
        agent_name: AgentName::FieldElsePath(name_from_file),
        fields: fields::CURSOR,
        parse,
    }],
    tools: Tools::Client(&TOOLS),
    models: ModelNames::Table,
};

/// A Cursor file lists Claude Code's tool names. Cursor's docs name no tool a subagent file
/// could list to ask the user (its questions come from Plan mode, cursor.com/docs/agent/
/// modes), so only Claude's `AskUserQuestion` in a Claude-style list, or `ask_parent: true`,
/// lets a Cursor agent ask its parent (SPEC §4.5).
const TOOLS: Vocabulary = Vocabulary {
    client: "the Claude Code tool names a Cursor file can list",
    ..CLAUDE_TOOLS
};

fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    let mut draft = Draft {
        name: Some(match doc.string(fields::NAME)? {
            Some(name) => name.trim().to_owned(),
            None => name_from_file(ctx.rel_in_root),
        }),
        description: doc.string(fields::DESCRIPTION)?,
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write the subagent's prompt after the \
                            frontmatter",
        ..Draft::default()
    };
    read_common(doc, &mut draft, &CANONICAL_SPELLINGS, ctx)?;
    let model = doc.str(fields::MODEL)?;
    draft.model = choose_model(
        model.map_or("model", |(field, _)| field),
        model.map(|(_, written)| written),
        &mut draft,
        ctx,
    )?;
    if let Some(readonly) = doc.bool(fields::READONLY)? {
        let wanted = if readonly {
            Sandbox::ReadOnly
        } else {
            Sandbox::Default
        };
        if let Some((field, written)) = doc.str(fields::SANDBOX)?
            && draft.sandbox != wanted
        {
            return Err(format!(
                "`readonly: {readonly}` and `{field}: {written}` disagree; keep one of them"
            ));
        }
        draft.sandbox = wanted;
    }
    // Cursor documents no `tools` (a subagent inherits the parent's); a Claude-style list
    // can only narrow the six workspace tools and the file's own servers.
    read_tools(doc, &mut draft, ctx)?;
    finalize(draft, source, ctx)
}

/// Cursor's default name: the file name without `.md`, lower-cased.
fn name_from_file(rel_in_root: &Path) -> String {
    rel_in_root
        .file_stem()
        .map(|stem| stem.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}
