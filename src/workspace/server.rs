//! The MCP face of the workspace tools: an `rmcp` server (2026-07-28 through
//! `server/discover`, and the older `initialize` for clients that still use it) with the
//! six tools, their input schemas (generated from the argument structs of `args`), output
//! schemas (from each tool's output type) and annotations. The four that read are
//! read-only, idempotent and closed-world; `edit` and `write` are destructive (so read-only
//! agents and deny lists keep them away), and change a file only when this run has read it
//! as it is now (`seen`, held in the server's `state`: the server is one process per run).
//!
//! [`TOOLS`] is the one table of the tools: what a client is told of each, and what a call
//! runs. The `rmcp` router is built from it, and so is [`WorkspaceTools::call_now`].
//!
//! The descriptions are written for the model that calls the tools: what the tool returns,
//! in which format, how to page through long results, what is left out and why. Each call
//! runs on a blocking thread and stops when the client cancels it.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input, schema_for_output};
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::schemars::JsonSchema;
use rmcp::{ServerHandler, tool_handler};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::args::{EditArgs, GlobArgs, GrepArgs, ListArgs, ReadArgs, WriteArgs};
use super::edit::{EditOutput, edit};
use super::glob::{GlobOutput, glob};
use super::grep::{GrepOutput, grep};
use super::list::{ListOutput, list};
use super::output::{Answer, cut_json, quote};
use super::read::{ReadOutput, read_noting};
use super::root::WorkspaceRoot;
use super::state::State;
use super::write::{WriteOutput, write};
use crate::limits::{
    WORKSPACE_CHANGE_BYTES, WORKSPACE_GLOB_RESULTS, WORKSPACE_GREP_RESULTS,
    WORKSPACE_GREP_RESULTS_MAX, WORKSPACE_LINE_CHARS, WORKSPACE_NOTES_BYTES, WORKSPACE_READ_LINES,
    WORKSPACE_READ_SCAN_BYTES, WORKSPACE_RUN_CREATED_FILES, WORKSPACE_RUN_WRITTEN_BYTES,
};

const MIB: u64 = 1024 * 1024;

fn read_description() -> String {
    format!(
        "Read a text file of the workspace. Returns its lines numbered from 1 in `cat -n` \
         format (the line number, a tab, the line), {WORKSPACE_READ_LINES} lines by default: \
         for a long file, read a part with `offset` (the first line number to show) and \
         `limit` (how many lines), and when more lines follow, the note at the end says so \
         and where to continue (the file is read no further than the lines shown, so no \
         total is given; a read scans at most the first {} MiB of a file). Lines longer than \
         {WORKSPACE_LINE_CHARS} characters are cut. Text that is not valid UTF-8 is shown \
         with U+FFFD in place of the invalid bytes; binary files are refused. Find the place \
         first with `grep`, then read around it.",
        WORKSPACE_READ_SCAN_BYTES / MIB
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

/// What `edit` and `write` never change, and what one run may write, for their
/// descriptions.
fn change_bounds() -> String {
    format!(
        "Files of at most {} MiB; one run writes at most {} MiB and creates at most \
         {WORKSPACE_RUN_CREATED_FILES} files. Nothing in a git directory (`.git/`) is \
         changed, nor agent definitions, skills or client configuration (`.claude/agents`, \
         `.mcp.json` and the like).",
        WORKSPACE_CHANGE_BYTES / MIB,
        WORKSPACE_RUN_WRITTEN_BYTES / MIB
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
         and keeps its permissions. {}",
        change_bounds()
    )
}

fn write_description() -> String {
    format!(
        "Create a file of the workspace with `content`, or replace all of an existing one's; \
         missing directories above it are created. To change part of a file prefer `edit`, \
         which sends only the change. An existing file must have been read (`read`) by this \
         run and be unchanged since, or it is not replaced; a new file needs no read. The file \
         is replaced in one step (a reader never sees half of it) and keeps its permissions. \
         {}",
        change_bounds()
    )
}

const INSTRUCTIONS: &str = "The files of one workspace: `read` a file's lines, `list` a \
directory, `glob` for files by name, `grep` their contents; `edit` and `write` change files \
this run has read. Paths are relative to the workspace root; nothing outside the workspace \
can be reached, and nothing in a git directory, nor any agent definition, skill or client \
configuration, is changed.";

/// One tool: what a client is told of it (name, description, schemas, annotations), and
/// what a call runs, on a blocking thread, with the call's arguments.
struct ToolRow {
    name: &'static str,
    describe: fn(&'static str) -> Tool,
    run: fn(&State, Value, &CancellationToken) -> Result<Answer, String>,
}

/// How a tool may affect the workspace, for its annotations.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads only: read-only, idempotent.
    Reads,
    /// Changes files (destructive); `idempotent` when the same call twice changes nothing
    /// more.
    Changes { idempotent: bool },
}

/// A tool as a client is told of it: its arguments' schema from `A`, its output's from `O`.
fn described<A: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: String,
    effect: Effect,
) -> Tool {
    let (read_only, idempotent) = match effect {
        Effect::Reads => (true, true),
        Effect::Changes { idempotent } => (false, idempotent),
    };
    // The argument structs are objects: their schemas always pass `rmcp`'s check.
    let input = schema_for_input::<A>().unwrap_or_else(|_| schema_for_empty_input());
    Tool::new_with_raw(name, Some(description.into()), input)
        .with_raw_output_schema(schema_for_output::<O>())
        .with_annotations(ToolAnnotations::from_raw(
            Some(title.to_owned()),
            Some(read_only),
            Some(!read_only),
            Some(idempotent),
            Some(false),
        ))
}

/// A call's arguments as the tool's argument struct, refused as `rmcp` refuses them.
fn parsed<T: DeserializeOwned>(arguments: Value) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|e| format!("failed to deserialize parameters: {e}"))
}

/// Every tool, in the order they are listed.
const TOOLS: [ToolRow; 6] = [
    ToolRow {
        name: "read",
        describe: |name| {
            described::<ReadArgs, ReadOutput>(
                name,
                "Read a file",
                read_description(),
                Effect::Reads,
            )
        },
        run: |state, arguments, cancel| {
            let args: ReadArgs = parsed(arguments)?;
            read_noting(&state.root, &args.request(), cancel, Some(&state.seen))
        },
    },
    ToolRow {
        name: "list",
        describe: |name| {
            described::<ListArgs, ListOutput>(
                name,
                "List a directory",
                LIST.to_owned(),
                Effect::Reads,
            )
        },
        run: |state, arguments, cancel| {
            let args: ListArgs = parsed(arguments)?;
            list(&state.root, &args.path, cancel)
        },
    },
    ToolRow {
        name: "glob",
        describe: |name| {
            described::<GlobArgs, GlobOutput>(
                name,
                "Find files by name",
                glob_description(),
                Effect::Reads,
            )
        },
        run: |state, arguments, cancel| {
            let args: GlobArgs = parsed(arguments)?;
            glob(&state.root, &args.pattern, &args.path, cancel)
        },
    },
    ToolRow {
        name: "grep",
        describe: |name| {
            described::<GrepArgs, GrepOutput>(
                name,
                "Search file contents",
                grep_description(),
                Effect::Reads,
            )
        },
        run: |state, arguments, cancel| {
            let args: GrepArgs = parsed(arguments)?;
            grep(&state.root, &args.request(), cancel)
        },
    },
    ToolRow {
        name: "edit",
        describe: |name| {
            described::<EditArgs, EditOutput>(
                name,
                "Edit a file",
                edit_description(),
                Effect::Changes { idempotent: false },
            )
        },
        run: |state, arguments, cancel| {
            let args: EditArgs = parsed(arguments)?;
            edit(state, &args.request(), cancel)
        },
    },
    ToolRow {
        name: "write",
        describe: |name| {
            described::<WriteArgs, WriteOutput>(
                name,
                "Write a file",
                write_description(),
                Effect::Changes { idempotent: true },
            )
        },
        run: |state, arguments, cancel| {
            let args: WriteArgs = parsed(arguments)?;
            write(state, &args.path, &args.content, cancel)
        },
    },
];

/// The workspace tools of one workspace.
#[derive(Clone)]
pub struct WorkspaceTools {
    state: Arc<State>,
    tool_router: ToolRouter<Self>,
}

impl WorkspaceTools {
    /// The tools of `root`, as a server that starts now (the temporary files that servers
    /// of this workspace killed during a change left are removed first).
    pub fn new(root: WorkspaceRoot) -> Self {
        WorkspaceTools {
            state: Arc::new(State::starting(root)),
            tool_router: router(),
        }
    }

    /// One call of `tool` with `arguments` (a JSON object), run on this thread and answered
    /// as the server answers it: what the fuzz targets drive.
    pub fn call_now(&self, tool: &str, arguments: Value) -> CallToolResult {
        let cancel = CancellationToken::new();
        shape(match TOOLS.iter().find(|row| row.name == tool) {
            Some(row) => (row.run)(&self.state, arguments, &cancel),
            None => Err(format!("no tool is called `{}`", quote(tool))),
        })
    }
}

/// The `rmcp` router of [`TOOLS`]: each call runs its row on a blocking thread (file-system
/// walks must not hold up the runtime that reads the client's messages, cancellations
/// included), and stops when the client cancels it.
fn router() -> ToolRouter<WorkspaceTools> {
    TOOLS.iter().fold(ToolRouter::new(), |router, row| {
        let run = row.run;
        router.with_route(ToolRoute::new_dyn(
            (row.describe)(row.name),
            move |context: ToolCallContext<'_, WorkspaceTools>| {
                let arguments = Value::Object(context.arguments.unwrap_or_default());
                let cancel = context.request_context.ct.clone();
                let state = context.service.state.clone();
                Box::pin(async move {
                    let work = move || run(&state, arguments, &cancel);
                    let result = match tokio::task::spawn_blocking(work).await {
                        Ok(answer) => shape(answer),
                        Err(_) => CallToolResult::error(vec![ContentBlock::text(
                            "internal error: the workspace tool failed unexpectedly (a bug in \
                             mcp-agents)",
                        )]),
                    };
                    Ok(CallToolResponse::Complete(result))
                })
            },
        ))
    })
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
