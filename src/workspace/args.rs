//! The arguments of the workspace tools: one struct per tool, read from the call's
//! `arguments` (unknown fields refused) and the source of its input schema, each field's
//! description and bounds written once, here, for both.

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use super::edit::EditRequest;
use super::grep::{GrepRequest, Mode};
use super::read::ReadRequest;
use crate::limits::{
    WORKSPACE_GREP_CONTEXT_MAX, WORKSPACE_GREP_RESULTS, WORKSPACE_GREP_RESULTS_MAX,
    WORKSPACE_READ_LINES,
};

fn default_offset() -> u64 {
    1
}

fn default_read_lines() -> u64 {
    WORKSPACE_READ_LINES
}

fn default_grep_results() -> u64 {
    WORKSPACE_GREP_RESULTS
}

/// `read`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ReadArgs {
    /// The file, relative to the workspace root (for example `src/main.rs`).
    pub path: String,
    /// The number of the first line to show, from 1.
    #[serde(default = "default_offset")]
    #[schemars(range(min = 1))]
    pub offset: u64,
    /// How many lines to show.
    #[serde(default = "default_read_lines")]
    #[schemars(range(min = 1))]
    pub limit: u64,
}

/// `list`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListArgs {
    /// The directory, relative to the workspace root; the root itself when left out.
    #[serde(default)]
    pub path: String,
}

/// `glob`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GlobArgs {
    /// The glob pattern, for example `**/*.rs` or `*.md`.
    pub pattern: String,
    /// The directory to search, relative to the workspace root; the whole workspace when
    /// left out.
    #[serde(default)]
    pub path: String,
}

/// What `grep` prints.
// Inlined in the schema: a plain `enum`, no `$ref`, is what every provider's tool schema
// takes.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub(super) enum OutputMode {
    #[default]
    Content,
    FilesWithMatches,
    Count,
}

/// `grep`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GrepArgs {
    /// The regular expression to search for.
    pub pattern: String,
    /// A directory or file to search, relative to the workspace root; the whole workspace
    /// when left out.
    #[serde(default)]
    pub path: String,
    /// Only search files matching this glob (`*.rs`, `src/**/*.ts`); all files when left
    /// out.
    #[serde(default)]
    pub glob: String,
    /// `content` (matching lines, the default), `files_with_matches` (paths only) or
    /// `count` (matching lines per file).
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Match without regard to case.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Search for the pattern as plain text, not as a regular expression.
    #[serde(default)]
    pub literal: bool,
    /// Lines to show before and after each match (`content` mode).
    #[serde(default)]
    #[schemars(range(max = WORKSPACE_GREP_CONTEXT_MAX))]
    pub context: u64,
    /// The most results to show: lines in `content` mode, files otherwise.
    #[serde(default = "default_grep_results")]
    #[schemars(range(min = 1, max = WORKSPACE_GREP_RESULTS_MAX))]
    pub limit: u64,
}

/// `edit`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EditArgs {
    /// The file, relative to the workspace root (for example `src/main.rs`).
    pub path: String,
    /// The exact text to replace, as it is in the file.
    pub old_text: String,
    /// The text to put in its place (empty to delete it).
    pub new_text: String,
    /// Replace every occurrence of `old_text`, not just one.
    #[serde(default)]
    pub replace_all: bool,
}

/// `write`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WriteArgs {
    /// The file, relative to the workspace root (for example `src/main.rs`).
    pub path: String,
    /// The file's whole new content.
    pub content: String,
}

impl EditArgs {
    pub(super) fn request(self) -> EditRequest {
        EditRequest {
            path: self.path,
            old_text: self.old_text,
            new_text: self.new_text,
            replace_all: self.replace_all,
        }
    }
}

impl ReadArgs {
    pub(super) fn request(&self) -> ReadRequest {
        ReadRequest::new(&self.path, Some(self.offset), Some(self.limit))
    }
}

impl GrepArgs {
    pub(super) fn request(self) -> GrepRequest {
        GrepRequest {
            pattern: self.pattern,
            path: self.path,
            glob: Some(self.glob).filter(|g| !g.is_empty()),
            mode: match self.output_mode {
                OutputMode::Content => Mode::Content,
                OutputMode::FilesWithMatches => Mode::FilesWithMatches,
                OutputMode::Count => Mode::Count,
            },
            case_insensitive: self.case_insensitive,
            literal: self.literal,
            context: self.context.min(WORKSPACE_GREP_CONTEXT_MAX),
            limit: self.limit.clamp(1, WORKSPACE_GREP_RESULTS_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_carry_the_limits_that_hold() {
        let schema = schemars::schema_for!(GrepArgs);
        let properties = &schema.as_value()["properties"];
        assert_eq!(properties["limit"]["maximum"], WORKSPACE_GREP_RESULTS_MAX);
        assert_eq!(properties["limit"]["default"], WORKSPACE_GREP_RESULTS);
        assert_eq!(properties["context"]["maximum"], WORKSPACE_GREP_CONTEXT_MAX);
        let schema = schemars::schema_for!(ReadArgs);
        assert_eq!(
            schema.as_value()["properties"]["limit"]["default"],
            WORKSPACE_READ_LINES
        );
        assert_eq!(schema.as_value()["required"], serde_json::json!(["path"]));
    }
}
