//! The built-in `workspace` server (SPEC §8.6): tools over one workspace, served over MCP
//! stdio by `mcp-agents workspace-tools DIR` and started like any other stdio child of a
//! run, so subagents written for Claude Code, Codex or OpenCode can read the code they work
//! on, and change it where their files allow: confined to the workspace, never in a git
//! directory or a place that configures agents, only files this run has read as they are
//! now, and within the run's totals.
//!
//! | file | job |
//! | --- | --- |
//! | `server` | the `rmcp` server: the one table of the tools, their descriptions and annotations |
//! | `args` | each tool's arguments, the source of its input schema |
//! | `stdio` | the transport: requests read with a bound, an oversized one answered at once |
//! | `state` | what the server holds from call to call (it is one process per run) |
//! | `root` | confinement: resolving paths inside the workspace, refusing every way out |
//! | `open` | opening a file: regular files only, never through a link, never blocking |
//! | `walk` | walking as ripgrep does (`ignore`), and the file-name globs (`globset`) |
//! | `rules` | the ignore files a walk honours, read only inside the workspace and bounded |
//! | `read` | `read`: numbered lines, offset and limit, binary refused, the scan bounded |
//! | `list` | `list`: a directory's entries with kinds and sizes |
//! | `glob` | `glob`: files by name, newest first |
//! | `grep` | `grep`: lines matching a regex (`grep-regex`, `grep-searcher`) |
//! | `seen` | what this run has read: each file's content hash, for the read-before-edit rule |
//! | `change` | changing one file: where it goes, the rule checked under a lock, the totals |
//! | `guard` | where a change never goes: git directories, the places that configure agents |
//! | `lock` | the lock that makes changes of one directory take turns |
//! | `private` | the server user's private directory, for the locks and the journal |
//! | `replace` | the atomic replacement, undone when the call was cancelled meanwhile |
//! | `leftovers` | temporary files: their names, the journal, what a killed server left |
//! | `totals` | what one run has written, bounded in bytes and in files created |
//! | `edit` | `edit`: one exact text replaced (or every occurrence), the changed lines shown |
//! | `write` | `write`: a file created or replaced whole |
//! | `output` | the answer within the 1 MiB cap (as JSON), notes, lossy and cut lines, quotes |
//!
//! Nothing here knows about agents or definitions: the server serves a directory. Which
//! agents get it, and under which tool names, is decided where definitions are read; the
//! places it never changes are named in `workspace_contract`, which discovery's roots are
//! held to.

mod args;
mod change;
mod edit;
mod glob;
mod grep;
mod guard;
mod leftovers;
mod list;
mod lock;
mod open;
mod output;
mod private;
mod read;
mod replace;
mod root;
mod rules;
mod seen;
mod server;
mod state;
mod stdio;
mod totals;
mod walk;
mod write;

use std::path::Path;

use rmcp::ServiceExt;

pub use grep::{GrepRequest, Mode as GrepMode, grep as grep_files};
pub use read::{ReadRequest, read as read_file};
pub use root::WorkspaceRoot;
pub use server::WorkspaceTools;

/// Serves the workspace tools of `dir` on stdin and stdout until the client goes away.
pub async fn serve_stdio(dir: &Path) -> Result<(), String> {
    let root = WorkspaceRoot::open(dir)?;
    let transport = stdio::Stdio::new(tokio::io::stdin(), tokio::io::stdout());
    let service = WorkspaceTools::new(root)
        .serve(transport)
        .await
        .map_err(|e| e.to_string())?;
    service.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}
