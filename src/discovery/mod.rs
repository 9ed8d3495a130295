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
//! | `spec` | what a format is, as data (`FormatSpec`: folders, files, how a file names its agent, known fields, tool names, model names), and its parser's contract |
//! | `vocabulary` | a format's tool names and what each means here |
//! | `draft` | the draft every format fills, and the fields every format accepts |
//! | `tool_lists` | tool lists read into allow and deny lists, the workspace server granted |
//! | `model_provider` | the model and provider, checked against the wire's rules |
//! | `fallbacks` | the models a run falls back to, and the server's allow-list over them and the model |
//! | `tool_notes` | the caveats about what a definition's tool lists leave it |
//! | `build` | from the draft to the definition, the shared rules applied once |
//! | `canonical`, `claude`, `codex`, `opencode`, `copilot`, `cursor`, `gemini` | one module per format, each with its `SPEC`, listed once in `FORMATS` |
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
mod draft;
mod fallbacks;
mod field_names;
mod fields;
mod gemini;
mod model_provider;
mod model_table;
mod opencode;
mod options;
mod placeholders;
mod referenced;
mod secrets;
mod servers;
mod skills;
mod source;
mod spec;
mod tool_lists;
mod tool_notes;
mod unknown_fields;
mod vocabulary;
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
    AgentDefinition, Catalog, Effect, Format, SkillRegistry, SkillRoot, SourceFile, Warning,
};
use referenced::ReferencedFiles;
use spec::{AgentName, Ctx, FileSpec, FormatSpec, Parsed, Subfolders, Syntax};
use walk::{Candidate, Root, walk};

/// Every definition format, in precedence order (SPEC §3): a new format is its module, with
/// its `SPEC`, and one line here.
const FORMATS: &[&FormatSpec] = &[
    &canonical::SPEC,
    &claude::SPEC,
    &codex::SPEC,
    &opencode::SPEC,
    &copilot::SPEC,
    &cursor::SPEC,
    &gemini::SPEC,
];

/// The folders agent definitions are read from, in precedence order, for messages (an
/// empty catalog's "looked in …").
pub fn agent_roots() -> impl Iterator<Item = &'static str> {
    FORMATS.iter().flat_map(|spec| spec.folders.iter().copied())
}

/// Each format's own folder (its first), in precedence order: where a user puts agent
/// files, as the demo's closing hint names them.
pub fn format_folders() -> impl Iterator<Item = &'static str> {
    FORMATS
        .iter()
        .filter_map(|spec| spec.folders.first().copied())
}

/// A folder agent definitions are read from: one of a format's.
#[derive(Debug, Clone, Copy)]
struct AgentRoot {
    folder: &'static str,
    /// The format's place in [`FORMATS`].
    precedence: usize,
    spec: &'static FormatSpec,
}

impl AgentRoot {
    fn all() -> Vec<AgentRoot> {
        FORMATS
            .iter()
            .enumerate()
            .flat_map(|(precedence, spec)| {
                spec.folders.iter().map(move |folder| AgentRoot {
                    folder,
                    precedence,
                    spec,
                })
            })
            .collect()
    }
}

impl Root for AgentRoot {
    fn path(self) -> &'static str {
        self.folder
    }
    fn precedence(self) -> usize {
        self.precedence
    }
    fn subfolders_read_by_none(self) -> Option<&'static str> {
        match self.spec.subfolders {
            Subfolders::Searched => None,
            Subfolders::NotRead { by } => Some(by),
        }
    }
    fn skips_file(self, name: &str) -> bool {
        self.spec
            .skipped_prefix
            .is_some_and(|prefix| name.starts_with(prefix))
    }
}

/// The format a file of `format` is, and its kind of file.
fn file_spec(format: Format) -> Option<(&'static FormatSpec, &'static FileSpec)> {
    FORMATS.iter().find_map(|spec| {
        let file = spec.files.iter().find(|file| file.format == format)?;
        Some((*spec, file))
    })
}

/// Loads the catalog of `workspace`. Never fails: every problem is a warning.
pub fn load_catalog(workspace: &Workspace, options: &LoadOptions) -> Catalog {
    let root = workspace.path();
    let mut warnings = Vec::new();
    let skills = load_skills(root, &mut warnings);
    let referenced = ReferencedFiles::new(root);

    let is_definition = |name: &OsStr| {
        let extension = Path::new(name).extension().and_then(OsStr::to_str);
        FORMATS
            .iter()
            .flat_map(|spec| spec.files)
            .any(|file| extension == Some(file.extension))
    };
    let candidates = walk(root, &AgentRoot::all(), &is_definition, &mut warnings);

    let parsed = parse_all(root, &candidates, options, &referenced, &skills);

    let mut agents: Vec<Arc<AgentDefinition>> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for FileResult {
        rel,
        outcome,
        caveats,
        declared,
        wants_default_model,
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
            Err(reason) => warnings.push(
                Warning::new(rel.clone(), reason, Effect::Rejected)
                    .about(declared)
                    .wanting_default_model(wants_default_model),
            ),
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
    let (spec, file) =
        file_spec(format).ok_or_else(|| format!("no format reads {format} files"))?;
    let referenced = ReferencedFiles::new(workspace);
    let rel_in_root = rel_path.components().skip(2).collect::<PathBuf>();
    let canonical = workspace.join(rel_path);
    let mut ctx = Ctx {
        options,
        referenced: &referenced,
        skills,
        spec,
        file,
        formats: FORMATS,
        canonical: &canonical,
        rel_in_root: &rel_in_root,
        caveats: Vec::new(),
        wants_default_model: false,
    };
    let source = SourceFile {
        path: rel_path.to_owned(),
        format,
    };
    match (file.parse)(text, source, &mut ctx)? {
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
    /// A rejected file's one problem is the server's missing default model.
    wants_default_model: bool,
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
            .filter_map(|candidate| parse_candidate(root, candidate, options, referenced, skills))
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

/// Reads and parses one candidate; `None` for an extension its folder does not read
/// (`.toml` under `.claude/agents`).
fn parse_candidate(
    root: &Path,
    candidate: &Candidate<AgentRoot>,
    options: &LoadOptions,
    referenced: &ReferencedFiles,
    skills: &SkillRegistry,
) -> Option<FileResult> {
    let spec = candidate.root.spec;
    let extension = candidate.canonical.extension().and_then(OsStr::to_str)?;
    let file = spec.files.iter().find(|file| file.extension == extension)?;
    let rel = relative(root, &candidate.canonical);
    let mut ctx = Ctx {
        options,
        referenced,
        skills,
        spec,
        file,
        formats: FORMATS,
        canonical: &candidate.canonical,
        rel_in_root: &candidate.rel_in_root,
        caveats: Vec::new(),
        wants_default_model: false,
    };
    let text = source::read_text(&candidate.canonical);
    let source = SourceFile {
        path: rel.clone(),
        format: file.format,
    };
    let outcome = text
        .as_deref()
        .map_err(Clone::clone)
        .and_then(|text| (file.parse)(text, source, &mut ctx));
    let declared = match (&outcome, &text) {
        (Err(_), Ok(text)) => declared_name(text, file, &candidate.rel_in_root),
        _ => None,
    };
    Some(FileResult {
        rel,
        outcome,
        caveats: ctx.caveats,
        declared,
        wants_default_model: ctx.wants_default_model,
    })
}

/// The agent name a file that failed to parse declares, as far as it can be read: its
/// `name` field, or the name its path gives (OpenCode, Cursor); for Copilot always its file
/// name.
fn declared_name(text: &str, file: &FileSpec, rel_in_root: &Path) -> Option<String> {
    if let AgentName::Path(of_path) = file.agent_name {
        return Some(of_path(rel_in_root));
    }
    let fields = match file.syntax {
        Syntax::Toml => source::parse_toml(text).ok(),
        Syntax::Frontmatter => source::split_frontmatter(text)
            .and_then(|split| source::parse_frontmatter(split.yaml))
            .ok()
            .map(|frontmatter| frontmatter.fields),
    };
    let named = fields
        .as_ref()
        .and_then(|f| f.get("name"))
        .and_then(serde_json::Value::as_str)
        .map(|n| n.trim().to_owned());
    match (named, file.agent_name) {
        (Some(name), _) => Some(name),
        (None, AgentName::FieldElsePath(of_path)) => Some(of_path(rel_in_root)),
        (None, _) => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_read_from_one_kind_of_file() {
        let every = [
            Format::CanonicalMarkdown,
            Format::CanonicalToml,
            Format::Claude,
            Format::Codex,
            Format::OpenCode,
            Format::Copilot,
            Format::Cursor,
            Format::Gemini,
        ];
        for format in every {
            // A new format fails to compile here until it is in `every`.
            match format {
                Format::CanonicalMarkdown
                | Format::CanonicalToml
                | Format::Claude
                | Format::Codex
                | Format::OpenCode
                | Format::Copilot
                | Format::Cursor
                | Format::Gemini => {}
            }
            let kinds = FORMATS
                .iter()
                .flat_map(|spec| spec.files)
                .filter(|file| file.format == format)
                .count();
            assert_eq!(kinds, 1, "{format}");
        }
    }

    #[test]
    fn the_folders_keep_their_precedence() {
        assert_eq!(
            agent_roots().collect::<Vec<_>>(),
            [
                ".agents/agents",
                ".claude/agents",
                ".codex/agents",
                ".opencode/agents",
                ".opencode/agent",
                ".github/agents",
                ".cursor/agents",
                ".gemini/agents"
            ]
        );
        let ranks: Vec<usize> = AgentRoot::all().iter().map(|r| r.precedence()).collect();
        assert_eq!(ranks, [0, 1, 2, 3, 3, 4, 5, 6]);
        let gemini = AgentRoot::all()[7];
        assert!(gemini.subfolders_read_by_none().is_some() && gemini.skips_file("_draft.md"));
        assert!(
            AgentRoot::all()[..7]
                .iter()
                .all(|r| r.subfolders_read_by_none().is_none() && !r.skips_file("_x.md"))
        );
    }
}
