//! What a definition format is, as data: the one [`FormatSpec`] each format module exports
//! and `mod.rs` lists, and the contract of its parser (it is handed a [`Ctx`] and returns
//! [`Parsed`]). Everything the shared code needs to know of a format — where its files are,
//! how a file names its agent, its known fields, its tool names, how it names models — is
//! read from here, so no shared code branches on the format.

use std::path::Path;

use super::field_names::Field;
use super::options::LoadOptions;
use super::referenced::ReferencedFiles;
use super::vocabulary::Tools;
use crate::definition::{AgentDefinition, Format, SkillRegistry, SourceFile};

/// One definition format.
#[derive(Debug)]
pub(super) struct FormatSpec {
    /// The folders its files are read from, relative to the workspace; several share one
    /// precedence (OpenCode reads `.opencode/agents` and `.opencode/agent`).
    pub folders: &'static [&'static str],
    /// Whether folders below them are searched (to the depth limit); the Gemini CLI reads
    /// only the files directly in its folder.
    pub subfolders: Subfolders,
    /// A file-name prefix its tool leaves out (the Gemini CLI's `_` for drafts).
    pub skipped_prefix: Option<&'static str>,
    /// Its kinds of file, one per extension.
    pub files: &'static [FileSpec],
    /// How its tool lists name tools.
    pub tools: Tools,
    /// How its files name models.
    pub models: ModelNames,
}

/// Whether a format's tool reads the folders below its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subfolders {
    /// Searched, to the depth limit.
    Searched,
    /// Not read by `by`, the tool (named as a note says it): definition files there are
    /// left out, with a note (a user who sorted agents into folders would not know why).
    NotRead { by: &'static str },
}

/// One kind of file of a format: the files with one extension in its folders.
#[derive(Debug)]
pub(super) struct FileSpec {
    /// Without the dot: `md`, `toml`.
    pub extension: &'static str,
    pub format: Format,
    pub syntax: Syntax,
    /// How a file names its agent.
    pub agent_name: AgentName,
    /// The fields it knows besides the common ones (`field_names`), for the typo check.
    pub fields: &'static [Field],
    pub parse: Parse,
}

/// A format's parser: the file's text and where it came from, to a definition.
pub(super) type Parse = fn(&str, SourceFile, &mut Ctx<'_>) -> Result<Parsed, String>;

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// YAML frontmatter, then the instructions.
    Frontmatter,
    /// TOML keys.
    Toml,
}

/// Where a file's agent name comes from.
#[derive(Debug, Clone, Copy)]
pub(super) enum AgentName {
    /// Its `name` field.
    Field,
    /// Its `name` field, else its path below the folder (OpenCode, Cursor).
    FieldElsePath(fn(&Path) -> String),
    /// Its path below the folder only; `name` is a display name (Copilot).
    Path(fn(&Path) -> String),
}

/// How a format's files name models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModelNames {
    /// Provider model ids, as written (canonical, Codex).
    AsWritten,
    /// Claude Code's aliases (`sonnet`) resolved, else model ids.
    ClaudeAliases,
    /// `provider/model-id` (OpenCode).
    ProviderPrefixed,
    /// The names Copilot, Cursor and the Gemini CLI write, translated through
    /// `model_table`.
    Table,
}

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
    /// The file's format, and its kind of file.
    pub spec: &'static FormatSpec,
    pub file: &'static FileSpec,
    /// Every format, for the fields any of them knows.
    pub formats: &'static [&'static FormatSpec],
    /// The file's absolute canonical path (a Codex role file is found by it in
    /// `.codex/config.toml`).
    pub canonical: &'a Path,
    /// The file's path below its folder (OpenCode, Copilot and Cursor name agents by it).
    pub rel_in_root: &'a Path,
    /// Notes on what was accepted with a caveat; each becomes one warning if the file loads.
    pub caveats: Vec<String>,
    /// Set when the file was rejected only because it uses its parent's model (or names
    /// none) and the server has no default model: the rejection a default model fixes.
    pub wants_default_model: bool,
}
