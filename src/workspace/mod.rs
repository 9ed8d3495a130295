//! The built-in `workspace` server (SPEC §8.6): tools over one workspace, served over MCP
//! stdio by `mcp-agents workspace-tools DIR` and started like any other stdio child of a
//! run, so subagents written for Claude Code, Codex or OpenCode can read the code they work
//! on, and change it where their files allow: confined to the workspace, never under
//! `.git/`, and only files this run has read as they are now.
//!
//! | file | job |
//! | --- | --- |
//! | `server` | the `rmcp` server: tools, schemas, annotations, descriptions for the model |
//! | `root` | confinement: resolving paths inside the workspace, refusing every way out |
//! | `open` | opening a file: regular files only, never through a link, never blocking |
//! | `walk` | walking as ripgrep does (`ignore`), and the file-name globs (`globset`) |
//! | `rules` | the ignore files a walk honours, read only inside the workspace and bounded |
//! | `read` | `read`: numbered lines, offset and limit, binary refused |
//! | `list` | `list`: a directory's entries with kinds and sizes |
//! | `glob` | `glob`: files by name, newest first |
//! | `grep` | `grep`: lines matching a regex (`grep-regex`, `grep-searcher`) |
//! | `seen` | what this run has read: each file's content hash, for the read-before-edit rule |
//! | `change` | changing one file: where it goes, the rule checked under a lock, atomic replacement |
//! | `edit` | `edit`: one exact text replaced (or every occurrence), the changed lines shown |
//! | `write` | `write`: a file created or replaced whole |
//! | `output` | the answer within the 1 MiB cap (as JSON), notes, lossy and cut lines, quotes |
//!
//! Nothing here knows about agents or definitions: the server serves a directory. Which
//! agents get it, and under which tool names, is decided where definitions are read.

mod change;
mod edit;
mod glob;
mod grep;
mod list;
mod open;
mod output;
mod read;
mod root;
mod rules;
mod seen;
mod server;
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
    let service = WorkspaceTools::new(root)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| e.to_string())?;
    service.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}
