//! The MCP face of the workspace tools: an `rmcp` server (2026-07-28 through
//! `server/discover`, and the older `initialize` for clients that still use it) with the
//! six tools, their input schemas (generated from the argument structs below), output
//! schemas (from each tool's output type) and annotations. The four that read are
//! read-only, idempotent and closed-world; `edit` and `write` are destructive (so read-only
//! agents and deny lists keep them away), and change a file only when this run has read it
//! as it is now (`seen`, held here: the server is one process per run).
//!
//! The descriptions are written for the model that calls the tools: what the tool returns,
//! in which format, how to page through long results, what is left out and why. Each call
//! runs on a blocking thread and stops when the client cancels it.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, InitializeResult, ServerCapabilities,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::edit::{EditOutput, EditRequest, edit};
use super::glob::{GlobOutput, glob};
use super::grep::{GrepOutput, GrepRequest, Mode, grep};
use super::list::{ListOutput, list};
use super::output::{Answer, cut_json};
use super::read::{ReadOutput, ReadRequest, read_noting};
use super::root::WorkspaceRoot;
use super::seen::Seen;
use super::write::{WriteOutput, write};
use crate::limits::{
    WORKSPACE_CHANGE_BYTES, WORKSPACE_GLOB_RESULTS, WORKSPACE_GREP_CONTEXT_MAX,
    WORKSPACE_GREP_RESULTS, WORKSPACE_GREP_RESULTS_MAX, WORKSPACE_LINE_CHARS,
    WORKSPACE_NOTES_BYTES, WORKSPACE_READ_LINES,
};

fn read_description() -> String {
    format!(
        "Read a text file of the workspace. Returns its lines numbered from 1 in `cat -n` \
         format (the line number, a tab, the line), {WORKSPACE_READ_LINES} lines by default: \
         for a long file, read a part with `offset` (the first line number to show) and \
         `limit` (how many lines), and when more lines follow, the note at the end says so \
         and where to continue (the file is read no further than the lines shown, so no \
         total is given). Lines longer than {WORKSPACE_LINE_CHARS} characters are cut. Text that is not valid UTF-8 \
         is shown with U+FFFD in place of the invalid bytes; binary files are refused. Find \
         the place first with `grep`, then read around it."
    )
}

const LIST: &str = "List the entries of one directory of the workspace, in name order: one \
line per entry with its kind (`file`, `dir`, `symlink`), a file's size in bytes, and its name \
(directories end with `/`, links show where they lead). Hidden and git-ignored entries are \
listed too. Not recursive: use `glob` to find files at any depth.";

fn glob_description() -> String {
    format!(
        "Find files of the workspace by name, newest first (the most recently modified at \
         the top). A pattern without `/` matches file names at any depth (`*.rs`, \
         `Cargo.toml`, `test_*.py`); a pattern with `/` matches the path below `path` \
         (`src/*.ts` only directly in src, `src/**/*.ts` at any depth). `*` and `?` stay \
         within one path segment, `**` crosses them, `{{a,b}}` gives alternatives, `[ab]` a \
         character class. Files that .gitignore or .ignore exclude, and hidden files and \
         directories (names starting with `.`), are left out unless `path` names them. At \
         most {WORKSPACE_GLOB_RESULTS} paths are returned, with a count of the rest."
    )
}

fn grep_description() -> String {
    format!(
        "Search the contents of the workspace's files for a regular expression (Rust regex \
         syntax, as in ripgrep: `fn\\s+\\w+`, `TODO|FIXME`; escape `(`, `{{`, `.` and other \
         special characters to match them as written, or set `literal`). Output modes: \
         `content` (the default) prints each matching line as `path:line:text`, with \
         `context` lines before and after it as `path-line-text` and `--` between separate \
         groups; `files_with_matches` prints the paths of files with a match; `count` prints \
         `path:count`. `path` narrows the search to a directory or one file (default: the \
         whole workspace); `glob` keeps only files whose name matches (`*.py`; with a `/`, \
         the path: `src/**/*.rs`). Files that .gitignore or .ignore exclude, hidden files \
         and binary files are skipped unless `path` names them. At most `limit` results \
         ({WORKSPACE_GREP_RESULTS} by default, at most {WORKSPACE_GREP_RESULTS_MAX}) are \
         shown, with a count of what was left out."
    )
}

fn edit_description() -> String {
    format!(
        "Replace text in a file of the workspace: `old_text` becomes `new_text`. `old_text` \
         must match the file exactly, indentation and line breaks included (copy it from \
         `read`'s output without the line number and tab before each line), and occur exactly \
         once: include enough surrounding lines to make it unique, or set `replace_all` to \
         replace every occurrence. `read` the file first: a file this run has not read, or \
         that has changed since it was read (another agent or a person edited it), is not \
         changed, and the error says to read it again; your own edits count as read. The \
         answer shows the changed lines with their numbers. The file is replaced in one step \
         and keeps its permissions. Files of at most {} MiB; nothing under `.git/`.",
        WORKSPACE_CHANGE_BYTES / (1024 * 1024)
    )
}

fn write_description() -> String {
    format!(
        "Create a file of the workspace with `content`, or replace all of an existing one's; \
         missing directories above it are created. To change part of a file prefer `edit`, \
         which sends only the change. An existing file must have been read (`read`) by this \
         run and be unchanged since, or it is not replaced; a new file needs no read. The file \
         is replaced in one step (a reader never sees half of it) and keeps its permissions. \
         At most {} MiB; nothing under `.git/`.",
        WORKSPACE_CHANGE_BYTES / (1024 * 1024)
    )
}

const INSTRUCTIONS: &str = "The files of one workspace: `read` a file's lines, `list` a \
directory, `glob` for files by name, `grep` their contents; `edit` and `write` change files \
this run has read. Paths are relative to the workspace root; nothing outside the workspace \
can be reached, and nothing under `.git/` is changed.";

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
    fn request(self) -> EditRequest {
        EditRequest {
            path: self.path,
            old_text: self.old_text,
            new_text: self.new_text,
            replace_all: self.replace_all,
        }
    }
}

impl ReadArgs {
    fn request(&self) -> ReadRequest {
        ReadRequest::new(&self.path, Some(self.offset), Some(self.limit))
    }
}

impl GrepArgs {
    fn request(self) -> GrepRequest {
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

/// The workspace tools of one workspace.
#[derive(Clone)]
pub struct WorkspaceTools {
    root: Arc<WorkspaceRoot>,
    /// What this run has read, for the read-before-edit rule.
    seen: Arc<Seen>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl WorkspaceTools {
    pub fn new(root: WorkspaceRoot) -> Self {
        WorkspaceTools {
            root: Arc::new(root),
            seen: Arc::new(Seen::default()),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = read_description(),
        annotations(
            title = "Read a file",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ReadOutput>()
    )]
    async fn read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        let request = args.request();
        self.blocking(cancel, move |root, seen, cancel| {
            read_noting(root, &request, cancel, Some(seen))
        })
        .await
    }

    #[tool(
        description = LIST,
        annotations(
            title = "List a directory",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ListOutput>()
    )]
    async fn list(
        &self,
        Parameters(args): Parameters<ListArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        self.blocking(cancel, move |root, _, cancel| {
            list(root, &args.path, cancel)
        })
        .await
    }

    #[tool(
        description = glob_description(),
        annotations(
            title = "Find files by name",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<GlobOutput>()
    )]
    async fn glob(
        &self,
        Parameters(args): Parameters<GlobArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        self.blocking(cancel, move |root, _, cancel| {
            glob(root, &args.pattern, &args.path, cancel)
        })
        .await
    }

    #[tool(
        description = grep_description(),
        annotations(
            title = "Search file contents",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<GrepOutput>()
    )]
    async fn grep(
        &self,
        Parameters(args): Parameters<GrepArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        let request = args.request();
        self.blocking(cancel, move |root, _, cancel| grep(root, &request, cancel))
            .await
    }

    #[tool(
        description = edit_description(),
        annotations(
            title = "Edit a file",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<EditOutput>()
    )]
    async fn edit(
        &self,
        Parameters(args): Parameters<EditArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        let request = args.request();
        self.blocking(cancel, move |root, seen, cancel| {
            edit(root, seen, &request, cancel)
        })
        .await
    }

    #[tool(
        description = write_description(),
        annotations(
            title = "Write a file",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<WriteOutput>()
    )]
    async fn write(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        self.blocking(cancel, move |root, seen, cancel| {
            write(root, seen, &args.path, &args.content, cancel)
        })
        .await
    }
}

impl WorkspaceTools {
    /// Runs `work` on a blocking thread (file-system walks must not hold up the runtime
    /// that reads the client's messages, cancellations included) and shapes its answer.
    async fn blocking<F>(&self, cancel: CancellationToken, work: F) -> CallToolResult
    where
        F: FnOnce(&WorkspaceRoot, &Seen, &CancellationToken) -> Result<Answer, String>
            + Send
            + 'static,
    {
        let root = self.root.clone();
        let seen = self.seen.clone();
        match tokio::task::spawn_blocking(move || work(&root, &seen, &cancel)).await {
            Ok(answer) => shape(answer),
            Err(_) => CallToolResult::error(vec![ContentBlock::text(
                "internal error: the workspace tool failed unexpectedly (a bug in mcp-agents)",
            )]),
        }
    }

    /// One call of `tool` with `arguments` (a JSON object), run on this thread and answered
    /// as the server answers it: what the fuzz targets drive.
    pub fn call_now(&self, tool: &str, arguments: serde_json::Value) -> CallToolResult {
        fn parsed<T: serde::de::DeserializeOwned>(
            arguments: serde_json::Value,
        ) -> Result<T, String> {
            serde_json::from_value(arguments).map_err(|e| e.to_string())
        }
        let (root, seen) = (&self.root, &self.seen);
        let cancel = CancellationToken::new();
        shape(match tool {
            "read" => parsed::<ReadArgs>(arguments)
                .and_then(|args| read_noting(root, &args.request(), &cancel, Some(seen))),
            "edit" => parsed::<EditArgs>(arguments)
                .and_then(|args| edit(root, seen, &args.request(), &cancel)),
            "write" => parsed::<WriteArgs>(arguments)
                .and_then(|args| write(root, seen, &args.path, &args.content, &cancel)),
            "list" => {
                parsed::<ListArgs>(arguments).and_then(|args| list(root, &args.path, &cancel))
            }
            "glob" => parsed::<GlobArgs>(arguments)
                .and_then(|args| glob(root, &args.pattern, &args.path, &cancel)),
            "grep" => {
                parsed::<GrepArgs>(arguments).and_then(|args| grep(root, &args.request(), &cancel))
            }
            _ => Err(format!(
                "no tool is called `{}`",
                super::output::quote(tool)
            )),
        })
    }
}

/// A tool's answer as a result: its text and structured content, or its error. Errors are
/// short sentences; one is still cut to the room kept for notes, whatever it quotes.
fn shape(answer: Result<Answer, String>) -> CallToolResult {
    match answer {
        Ok(answer) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(answer.text)]);
            result.structured_content = Some(answer.structured);
            result
        }
        Err(message) => CallToolResult::error(vec![ContentBlock::text(
            cut_json(&message, WORKSPACE_NOTES_BYTES).to_owned(),
        )]),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for WorkspaceTools {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "mcp-agents-workspace",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
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

    #[test]
    fn the_six_tools_are_listed_with_their_hints_and_both_schemas() {
        let tools = WorkspaceTools::new(WorkspaceRoot::open(std::path::Path::new(".")).unwrap())
            .tool_router
            .list_all();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names.len(), 6);
        for name in ["read", "list", "glob", "grep", "edit", "write"] {
            assert!(names.contains(&name), "{names:?}");
        }
        for tool in &tools {
            let hints = tool.annotations.as_ref().unwrap();
            let writes = matches!(tool.name.as_ref(), "edit" | "write");
            assert_eq!(hints.read_only_hint, Some(!writes), "{}", tool.name);
            assert_eq!(hints.destructive_hint, Some(writes), "{}", tool.name);

            assert!(tool.output_schema.is_some(), "{}", tool.name);
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
    }
}
