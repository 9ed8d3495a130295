//! Discovery: turning a workspace's definition files into the immutable `Catalog`
//! (SPEC §3 and §9, FORMATS.md).
//!
//! | file | job |
//! | --- | --- |
//! | `options` | the workspace and what loading takes besides it |
//! | `aliases` | Claude Code's model aliases |
//! | `walk` | the roots, depth limit, canonical-path confinement, precedence order |
//! | `source` | reading a file (size, UTF-8) and parsing YAML frontmatter or TOML |
//! | `field_names` | every field's spellings, named once for the parsers and the typo check |
//! | `fields` | typed field reads with aliases |
//! | `build` | the draft every format fills, shared fields, final validation |
//! | `canonical`, `claude`, `codex`, `opencode`, `copilot`, `cursor`, `gemini` | one module per format |
//! | `model_table` | model names as Copilot, Cursor and Gemini CLI files write them, translated to provider ids |
//! | `servers` | child MCP server configurations in every spelling |
//! | `placeholders` | other tools' placeholder spellings (`${{ secrets.X }}`, `$X`) read as `${X}` |
//! | `unknown_fields` | every format's known fields, and unknown ones that look like typos of them |
//! | `secrets` | refusing literal credentials |
//! | `referenced` | files definitions refer to: `.mcp.json`, `.codex/config.toml`, read once when needed |
//! | `skills` | the skills registry |
//!
//! Discovery reads definition files and nothing else: no process is started, no variable
//! named in a definition is read. Bad files become `Warning`s; loading never fails.

mod aliases;
mod build;
mod canonical;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod field_names;
mod fields;
mod gemini;
mod model_table;
mod opencode;
mod options;
mod placeholders;
mod referenced;
mod secrets;
mod servers;
mod skills;
mod source;
mod unknown_fields;
mod walk;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use aliases::CLAUDE_ALIASES;
pub use options::{DefaultModel, LoadOptions, Workspace};
pub use skills::parse_skill;
pub use source::{parse_frontmatter, parse_json_object, parse_toml, split_frontmatter};

use crate::definition::{
    AgentDefinition, AgentRoot, Catalog, Effect, Format, SkillRegistry, SkillRoot, SourceFile,
    Warning,
};
use build::{Ctx, Parsed};
use referenced::ReferencedFiles;
use walk::{Candidate, walk};

/// Loads the catalog of `workspace`. Never fails: every problem is a warning.
pub fn load_catalog(workspace: &Workspace, options: &LoadOptions) -> Catalog {
    let root = workspace.path();
    let mut warnings = Vec::new();
    let skills = load_skills(root, &mut warnings);
    let referenced = ReferencedFiles::new(root);

    let is_definition = |name: &OsStr| {
        let name = Path::new(name);
        matches!(
            name.extension().and_then(OsStr::to_str),
            Some("md" | "toml")
        )
    };
    let candidates = walk(root, &AgentRoot::ALL, &is_definition, &mut warnings);

    let parsed = parse_all(root, &candidates, options, &referenced, &skills);

    let mut agents: Vec<Arc<AgentDefinition>> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for FileResult {
        rel,
        outcome,
        caveats,
        declared,
    } in parsed
    {
        let warn = |reason: String, effect: Effect, agent: &str| {
            Warning::new(rel.clone(), reason, effect).about(Some(agent.to_owned()))
        };
        match outcome {
            Ok(Parsed::Agent(definition)) => {
                let name = definition.name.as_str();
                if let Some(&holder) = by_name.get(name) {
                    warnings.push(warn(
                        format!(
                            "defines the agent `{name}`, which {} already defines and which \
                             comes first; this file is ignored",
                            agents[holder].source.path.display()
                        ),
                        Effect::Shadowed,
                        name,
                    ));
                    continue;
                }
                warnings.extend(caveats.into_iter().map(|c| warn(c, Effect::Loaded, name)));
                by_name.insert(definition.name.clone(), agents.len());
                agents.push(Arc::from(definition));
            }
            Ok(Parsed::NotASubagent(why)) => {
                tracing::info!("{}: not loaded: {why}", rel.display());
            }
            Err(reason) => {
                warnings.push(Warning::new(rel.clone(), reason, Effect::Rejected).about(declared))
            }
        }
    }
    Catalog::new(root.to_owned(), agents, skills, warnings)
}

/// What one definition's text turned out to be (see [`parse_definition`]).
#[derive(Debug)]
pub enum ParseOutcome {
    /// A valid definition, with the caveats loading would report as warnings.
    Agent(Box<AgentDefinition>, Vec<String>),
    /// Valid, but not a subagent (OpenCode `mode: primary` or `disable: true`).
    NotASubagent(String),
}

/// Parses one definition's `text` as `format`, exactly as loading does, without reading it
/// from disk. `rel_path` is where it would live (OpenCode derives names from it); shared
/// files (`.mcp.json`, `.codex/config.toml`) are looked up in `workspace` when referenced,
/// and `skills` answers skill lookups. For fuzzing and for tools built on the library.
pub fn parse_definition(
    text: &str,
    format: Format,
    rel_path: &Path,
    workspace: &Path,
    skills: &SkillRegistry,
    options: &LoadOptions,
) -> Result<ParseOutcome, String> {
    let referenced = ReferencedFiles::new(workspace);
    let mut ctx = Ctx {
        options,
        referenced: &referenced,
        skills,
        caveats: Vec::new(),
    };
    let source = SourceFile {
        path: rel_path.to_owned(),
        format,
    };
    let rel_in_root = rel_path.components().skip(2).collect::<PathBuf>();
    let canonical = workspace.join(rel_path);
    match parse_text(text, format, &canonical, &rel_in_root, source, &mut ctx)? {
        Parsed::Agent(definition) => Ok(ParseOutcome::Agent(definition, ctx.caveats)),
        Parsed::NotASubagent(why) => Ok(ParseOutcome::NotASubagent(why)),
    }
}

/// One candidate's parse, in discovery order.
struct FileResult {
    rel: PathBuf,
    outcome: Result<Parsed, String>,
    caveats: Vec<String>,
    /// For a rejected file, the agent name it declares, when one can be read.
    declared: Option<String>,
}

/// Reads and parses every candidate, on up to four threads (files are independent; only
/// the name check that follows depends on order). Results keep the candidates' order.
fn parse_all(
    root: &Path,
    candidates: &[Candidate<AgentRoot>],
    options: &LoadOptions,
    referenced: &ReferencedFiles,
    skills: &SkillRegistry,
) -> Vec<FileResult> {
    let parse_chunk = |chunk: &[Candidate<AgentRoot>]| -> Vec<FileResult> {
        chunk
            .iter()
            .filter_map(|candidate| {
                // An extension that root does not read (`.toml` under .claude/agents).
                let format = format_of(candidate)?;
                let rel = relative(root, &candidate.canonical);
                let mut ctx = Ctx {
                    options,
                    referenced,
                    skills,
                    caveats: Vec::new(),
                };
                let text = source::read_text(&candidate.canonical);
                let source = SourceFile {
                    path: rel.clone(),
                    format,
                };
                let outcome = text.as_deref().map_err(Clone::clone).and_then(|text| {
                    parse_text(
                        text,
                        format,
                        &candidate.canonical,
                        &candidate.rel_in_root,
                        source,
                        &mut ctx,
                    )
                });
                let declared = match (&outcome, &text) {
                    (Err(_), Ok(text)) => declared_name(text, format, &candidate.rel_in_root),
                    _ => None,
                };
                Some(FileResult {
                    rel,
                    outcome,
                    caveats: ctx.caveats,
                    declared,
                })
            })
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if threads == 1 || candidates.len() < 64 {
        return parse_chunk(candidates);
    }
    let chunk_len = candidates.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = candidates
            .chunks(chunk_len)
            .map(|chunk| scope.spawn(move || parse_chunk(chunk)))
            .collect();
        handles
            .into_iter()
            // A parser panic is a bug; re-raise it on this thread rather than hide it.
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

fn format_of(candidate: &Candidate<AgentRoot>) -> Option<Format> {
    let ext = candidate.canonical.extension().and_then(OsStr::to_str)?;
    candidate.root.format_for(ext)
}

/// The agent name a file that failed to parse declares, as far as it can be read: its
/// `name` field, or the name its path gives (OpenCode, Cursor); for Copilot always its file
/// name.
fn declared_name(text: &str, format: Format, rel_in_root: &Path) -> Option<String> {
    if format == Format::Copilot {
        return Some(copilot::name_from_file(rel_in_root));
    }
    let fields = match format {
        Format::CanonicalToml | Format::Codex => source::parse_toml(text).ok(),
        _ => source::split_frontmatter(text)
            .and_then(|split| source::parse_frontmatter(split.yaml))
            .ok()
            .map(|frontmatter| frontmatter.fields),
    };
    let named = fields
        .as_ref()
        .and_then(|f| f.get("name"))
        .and_then(serde_json::Value::as_str)
        .map(|n| n.trim().to_owned());
    match (named, format) {
        (Some(name), _) => Some(name),
        (None, Format::OpenCode) => Some(opencode::name_from_path(rel_in_root)),
        (None, Format::Cursor) => Some(cursor::name_from_file(rel_in_root)),
        (None, _) => None,
    }
}

/// Dispatches to the format's parser.
fn parse_text(
    text: &str,
    format: Format,
    canonical_path: &Path,
    rel_in_root: &Path,
    source: SourceFile,
    ctx: &mut Ctx<'_>,
) -> Result<Parsed, String> {
    match format {
        Format::CanonicalMarkdown => canonical::parse_markdown(text, source, ctx),
        Format::CanonicalToml => canonical::parse_toml_file(text, source, ctx),
        Format::Claude => claude::parse(text, source, ctx),
        Format::Codex => codex::parse(text, canonical_path, source, ctx),
        Format::OpenCode => opencode::parse(text, rel_in_root, source, ctx),
        Format::Copilot => copilot::parse(text, rel_in_root, source, ctx),
        Format::Cursor => cursor::parse(text, rel_in_root, source, ctx),
        Format::Gemini => gemini::parse(text, source, ctx),
    }
}

fn load_skills(root: &Path, warnings: &mut Vec<Warning>) -> SkillRegistry {
    let is_skill = |name: &OsStr| name == "SKILL.md";
    let mut registry = SkillRegistry::default();
    for candidate in walk(root, &SkillRoot::ALL, &is_skill, warnings) {
        let rel = relative(root, &candidate.canonical);
        let folder = candidate
            .canonical
            .parent()
            .and_then(Path::file_name)
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut caveats = Vec::new();
        let parsed = source::read_text(&candidate.canonical)
            .and_then(|text| skills::parse_skill(&text, &folder, rel.clone(), &mut caveats));
        let warn = |reason: String, effect: Effect| Warning::new(rel.clone(), reason, effect);
        match parsed {
            Ok(skill) => {
                let name = skill.name.clone();
                match registry.insert(skill) {
                    Ok(()) => warnings.extend(caveats.into_iter().map(|c| warn(c, Effect::Loaded))),
                    Err(holder) => warnings.push(warn(
                        format!(
                            "defines the skill `{name}`, which {} already defines and which \
                             comes first; this file is ignored",
                            holder.display()
                        ),
                        Effect::Shadowed,
                    )),
                }
            }
            Err(reason) => warnings.push(warn(reason, Effect::Rejected)),
        }
    }
    registry
}

fn relative(root: &Path, canonical: &Path) -> PathBuf {
    canonical.strip_prefix(root).unwrap_or(canonical).to_owned()
}
